import Foundation
import XCTest

/// Collects what a null sink renders, on its device thread.
public final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [Float] = []
    public init() {}
    public var tap: @Sendable (UnsafeRawBufferPointer, Int) -> Void {
        { [self] raw, _ in
            let floats = raw.bindMemory(to: Float.self)
            lock.lock(); samples.append(contentsOf: floats); lock.unlock()
        }
    }
    public var all: [Float] { lock.lock(); defer { lock.unlock() }; return samples }
}

/// Compares sample arrays without printing them: the first difference, if any.
public func assertSamples(_ got: [Float], _ expected: [Float], _ what: String = "", file: StaticString = #filePath, line: UInt = #line) {
    if got.count != expected.count {
        XCTFail("\(what): \(got.count) samples, expected \(expected.count)", file: file, line: line)
    }
    if let i = (0..<min(got.count, expected.count)).first(where: { got[$0] != expected[$0] }) {
        XCTFail("\(what): sample \(i) is \(got[i]), expected \(expected[i])", file: file, line: line)
    }
}


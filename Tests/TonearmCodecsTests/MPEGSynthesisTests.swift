import Foundation
import XCTest
@testable import TonearmCodecs

/// The fast synthesis filter bank against the standard's own definition (ISO/IEC 11172-3,
/// 2.4.3.2: matrixing with N[i][k] = cos((16+i)(2k+1)π/64), then the D window).
final class MPEGSynthesisTests: XCTestCase {
    /// The reference: a 1024-value V shifted by 64 each time, as the standard draws it.
    struct Reference {
        var v = [Double](repeating: 0, count: 1024)
        mutating func run(_ s: [Float]) -> [Double] {
            for i in stride(from: 1023, through: 64, by: -1) { v[i] = v[i - 64] }
            for i in 0..<64 {
                var sum = 0.0
                for k in 0..<32 { sum += cos(Double((16 + i) * (2 * k + 1)) * .pi / 64) * Double(s[k]) }
                v[i] = sum
            }
            var u = [Double](repeating: 0, count: 512)
            for i in 0..<8 {
                for j in 0..<32 {
                    u[i * 64 + j] = v[i * 128 + j]
                    u[i * 64 + 32 + j] = v[i * 128 + 96 + j]
                }
            }
            let d = MPEGSynthesisFilter.window
            return (0..<32).map { j in (0..<16).reduce(0.0) { $0 + u[j + 32 * $1] * Double(d[j + 32 * $1]) } }
        }
    }

    func testWindowMatchesTheStandardsSamples() {
        let d = MPEGSynthesisFilter.window
        XCTAssertEqual(d[0], 0)
        XCTAssertEqual(d[1], -0.000015259, accuracy: 1e-9)
        XCTAssertEqual(d[64], 0.003250122, accuracy: 1e-9)
        XCTAssertEqual(d[255], -1.144287109, accuracy: 1e-9)
        XCTAssertEqual(d[256], 1.144989014, accuracy: 1e-9)
        XCTAssertEqual(d[257], 1.144287109, accuracy: 1e-9)
        XCTAssertEqual(d[320], 0.100311279, accuracy: 1e-9)
        XCTAssertEqual(d[448], 0.003250122, accuracy: 1e-9)
        XCTAssertEqual(d[511], 0.000015259, accuracy: 1e-9)
    }

    /// 40 slots in runs of 1, 2, 3, 4, 5, 7 and 18 slots, so that the four-slot groups
    /// start and stop everywhere, against the definition slot by slot.
    func testFastFilterEqualsTheDefinition() {
        var rng = SystemRandomNumberGenerator()
        var reference = Reference()
        let filter = MPEGSynthesisFilter()
        let slots = 40
        var input: [Float] = [], expected: [Double] = []
        for slot in 0..<slots {
            var s = [Float](repeating: 0, count: 32)
            for k in 0..<32 {
                s[k] = slot == 7 ? (k == 3 ? 1 : 0) : Float.random(in: -1...1, using: &rng) / Float(k + 1)
            }
            input += s
            expected += reference.run(s)
        }
        var out = [Float](repeating: .nan, count: slots * 32)
        var slot = 0
        for run in [1, 2, 3, 4, 5, 7, 18] {
            input.withUnsafeBufferPointer { sp in
                out.withUnsafeMutableBufferPointer { filter.synthesize(sp.baseAddress! + slot * 32, slots: run, into: $0.baseAddress! + slot * 32) }
            }
            slot += run
        }
        XCTAssertEqual(slot, slots)
        XCTAssertFalse(out.contains { $0.isNaN }, "every slot written")
        var worst = 0.0
        for i in 0..<slots * 32 { worst = max(worst, abs(Double(out[i]) - expected[i])) }
        XCTAssertLessThan(worst, 2e-6, "largest difference from the definition")
        filter.reset()
        let zeros = [Float](repeating: 0, count: 3 * 32)
        zeros.withUnsafeBufferPointer { sp in
            out.withUnsafeMutableBufferPointer { filter.synthesize(sp.baseAddress!, slots: 3, into: $0.baseAddress!) }
        }
        XCTAssertEqual(out.prefix(3 * 32).map { abs($0) }.max(), 0)
    }
}

import XCTest
@testable import TonearmPlayback

final class SampleRingTests: XCTestCase {
    func testWrapsAroundAndKeepsOrder() {
        let ring = SampleRing(channels: 2, minimumFrames: 5)
        XCTAssertEqual(ring.capacity, 8)
        var next: Float = 0
        var expected: Float = 0
        var out = [Float](repeating: 0, count: 16)
        for round in 0..<50 {
            let n = round % 7 + 1
            let chunk = (0..<(n * 2)).map { _ in next += 1; return next }
            let wrote = chunk.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: n) }
            next -= Float((n - wrote) * 2)
            let m = round % 5 + 1
            let got = out.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, frames: m) }
            for i in 0..<(got * 2) { expected += 1; XCTAssertEqual(out[i], expected) }
        }
        XCTAssertEqual(ring.framesRead + ring.readableFrames, ring.framesWritten)
    }

    func testMixAddsWithGainAndDiscardSkipsToTheWritePosition() {
        let ring = SampleRing(channels: 1, minimumFrames: 16)
        let ones = [Float](repeating: 1, count: 10)
        ones.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: 10) }
        var out = [Float](repeating: 0.25, count: 4)
        XCTAssertEqual(out.withUnsafeMutableBufferPointer { ring.mix(into: $0.baseAddress!, frames: 4, gain: 0.5) }, 4)
        XCTAssertEqual(out, [0.75, 0.75, 0.75, 0.75])
        ring.discardWritten()
        XCTAssertEqual(ring.readableFrames, 0)
        XCTAssertEqual(ring.framesRead, 10)
        XCTAssertEqual(ring.writableFrames, 16)
    }
}

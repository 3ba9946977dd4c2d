import Foundation
import XCTest
import TonearmCore

final class MixedRadixFFTTests: XCTestCase {
    /// Every size CELT uses, and a few with each radix, against a naive DFT in Double.
    func testMatchesNaiveDFT() throws {
        // TonearmCoreTests depends on TonearmCore alone (no TestSupport): a local generator.
        var g = SplitMix(state: 19)
        for n in [1, 2, 3, 4, 5, 6, 8, 9, 12, 15, 25, 30, 60, 120, 240, 480, 960] {
            let fft = try XCTUnwrap(MixedRadixFFT(size: n))
            let xr = (0..<n).map { _ in Float.random(in: -1...1, using: &g) }
            let xi = (0..<n).map { _ in Float.random(in: -1...1, using: &g) }
            var re = xr, im = xi
            re.withUnsafeMutableBufferPointer { r in im.withUnsafeMutableBufferPointer { i in fft.forward(r.baseAddress!, i.baseAddress!) } }
            var worst = 0.0
            for k in 0..<n {
                var sr = 0.0, si = 0.0
                for t in 0..<n {
                    let a = -2 * Double.pi * Double(k * t % n) / Double(n)
                    sr += Double(xr[t]) * cos(a) - Double(xi[t]) * sin(a)
                    si += Double(xr[t]) * sin(a) + Double(xi[t]) * cos(a)
                }
                worst = max(worst, abs(sr - Double(re[k])), abs(si - Double(im[k])))
            }
            XCTAssertLessThan(worst, 1e-5 * Double(n).squareRoot() * 4, "size \(n)")
        }
    }

    func testRejectsOtherPrimes() {
        XCTAssertNil(MixedRadixFFT(size: 7))
        XCTAssertNil(MixedRadixFFT(size: 120 * 11))
    }
}

/// SplitMix64, for repeatable inputs.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

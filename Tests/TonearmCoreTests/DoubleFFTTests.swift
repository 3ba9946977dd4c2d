import Foundation
import XCTest
import TonearmCore

/// The Double FFT against its defining sums, with the angles reduced exactly (k·n mod N) so
/// that the reference itself is accurate to a few units in the last place.
final class DoubleFFTTests: XCTestCase {
    private func noise(_ count: Int, seed: UInt64) -> [Double] {
        var s = seed
        return (0..<count).map { _ in
            s = s &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(Int64(bitPattern: s)) / 9_223_372_036_854_775_808
        }
    }

    private func check(size n: Int, inverse: Bool) {
        let fft = DoubleFFT(size: n)
        let xr = noise(n, seed: UInt64(n) &+ 1), xi = noise(n, seed: UInt64(n) &+ 2)
        var re = xr, im = xi
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                if inverse { fft.inverse(r.baseAddress!, i.baseAddress!) } else { fft.forward(r.baseAddress!, i.baseAddress!) }
            }
        }
        let sign = inverse ? 1.0 : -1.0
        let bins = n <= 1024 ? Array(0..<n) : Array(Swift.stride(from: 0, to: n, by: 13)) + Array(n - 4..<n)
        var worst = 0.0
        for k in bins {
            var sr = 0.0, si = 0.0
            for t in 0..<n {
                let angle = sign * 2 * Double.pi * Double(k * t % n) / Double(n)
                let c = cos(angle), s = sin(angle)
                sr += xr[t] * c - xi[t] * s
                si += xr[t] * s + xi[t] * c
            }
            worst = max(worst, abs(re[k] - sr), abs(im[k] - si))
        }
        // The output's RMS is about √N (inputs of RMS ≈ 0.58 each): errors under 4e-14 of it
        // put the transform's rounding some 270 dB down, where Double's arithmetic puts it.
        XCTAssertLessThan(worst / Double(n).squareRoot(), 4e-14, "size \(n)\(inverse ? " inverse" : "")")
    }

    func testEverySizeAgainstTheDirectSum() {
        var n = 2
        while n <= 8192 {
            check(size: n, inverse: false)
            check(size: n, inverse: true)
            n *= 2
        }
    }
}

import Foundation
import XCTest
import TonearmCore

/// The shared FFT and DCT-IV against their defining sums, computed in Double.
final class FFTTests: XCTestCase {
    /// Deterministic noise in ±1.
    private func noise(_ count: Int, seed: UInt32) -> [Float] {
        var s = seed
        return (0..<count).map { _ in
            s = s &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: s)) / 2_147_483_648
        }
    }

    /// The bins to check: all of them up to 2048 points, a spread of them above (the direct
    /// sums are O(N²) and these tests run unoptimised).
    private func bins(_ n: Int) -> [Int] {
        n <= 2048 ? Array(0..<n) : Array(Swift.stride(from: 0, to: n, by: 11)) + Array(n - 8..<n)
    }

    /// Largest error over the checked bins, relative to the RMS of the exact output there.
    private func relativeError(_ got: [(Double, Double)], _ exact: [(Double, Double)]) -> Double {
        var worst = 0.0, power = 0.0
        for (g, e) in zip(got, exact) {
            worst = max(worst, abs(g.0 - e.0), abs(g.1 - e.1))
            power += e.0 * e.0 + e.1 * e.1
        }
        return worst / (power / Double(2 * exact.count)).squareRoot()
    }

    /// Bins `ks` of the DFT of x (e^(+2πink/N) when `inverse`), in Double with the angles
    /// reduced exactly (k·n mod N), so accurate to a few units in Double's last place.
    private func directSum(_ xr: [Double], _ xi: [Double], bins ks: [Int], inverse: Bool) -> [(Double, Double)] {
        let n = xr.count
        let sign = inverse ? 1.0 : -1.0
        let cosines = (0..<n).map { cos(2 * Double.pi * Double($0) / Double(n)) }
        let sines = (0..<n).map { sign * sin(2 * Double.pi * Double($0) / Double(n)) }
        return ks.map { k -> (Double, Double) in
            var sr = 0.0, si = 0.0
            for j in 0..<n {
                let t = (j * k) & (n - 1)
                sr += xr[j] * cosines[t] - xi[j] * sines[t]
                si += xr[j] * sines[t] + xi[j] * cosines[t]
            }
            return (sr, si)
        }
    }

    private func checkFFT(size n: Int, inverse: Bool) {
        let fft = FFT(size: n)
        let xr = noise(n, seed: UInt32(n) &+ 1), xi = noise(n, seed: UInt32(n) &+ 2)
        var re = xr, im = xi
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                if inverse { fft.inverse(r.baseAddress!, i.baseAddress!) } else { fft.forward(r.baseAddress!, i.baseAddress!) }
            }
        }
        let ks = bins(n)
        let exact = directSum(xr.map(Double.init), xi.map(Double.init), bins: ks, inverse: inverse)
        let error = relativeError(ks.map { (Double(re[$0]), Double(im[$0])) }, exact)
        XCTAssertLessThan(error, 1e-5, "\(inverse ? "inverse" : "forward") FFT of \(n): max error / RMS \(error)")
    }

    func testForwardMatchesTheDFTAtEverySize() {
        for log2 in 1...13 { checkFFT(size: 1 << log2, inverse: false) }
    }

    func testInverseMatchesTheDFTAtEverySize() {
        for log2 in 1...13 { checkFFT(size: 1 << log2, inverse: true) }
    }

    /// The Double FFT (the resampler's FFT stage) to Double's own accuracy: errors under
    /// 5e-14 of the output's RMS, some 270 dB down.
    func testDoubleFFTMatchesTheDFTAtEverySize() {
        for log2 in 1...13 {
            let n = 1 << log2
            let fft = DoubleFFT(size: n)
            let xr = noise(n, seed: UInt32(n) &+ 3).map(Double.init), xi = noise(n, seed: UInt32(n) &+ 4).map(Double.init)
            for inverse in [false, true] {
                var re = xr, im = xi
                re.withUnsafeMutableBufferPointer { r in
                    im.withUnsafeMutableBufferPointer { i in
                        if inverse { fft.inverse(r.baseAddress!, i.baseAddress!) } else { fft.forward(r.baseAddress!, i.baseAddress!) }
                    }
                }
                let ks = bins(n)
                let error = relativeError(ks.map { (re[$0], im[$0]) }, directSum(xr, xi, bins: ks, inverse: inverse))
                XCTAssertLessThan(error, 5e-14, "\(inverse ? "inverse" : "forward") Double FFT of \(n): max error / RMS \(error)")
            }
        }
    }

    /// inverse(forward(x)) = N·x, at sizes past the direct sums' reach too.
    func testRoundTrip() {
        for log2 in [4, 9, 14, 16] {
            let n = 1 << log2
            let fft = FFT(size: n)
            let xr = noise(n, seed: 5), xi = noise(n, seed: 6)
            var re = xr, im = xi
            re.withUnsafeMutableBufferPointer { r in
                im.withUnsafeMutableBufferPointer { i in
                    fft.forward(r.baseAddress!, i.baseAddress!)
                    fft.inverse(r.baseAddress!, i.baseAddress!)
                }
            }
            var worst: Float = 0
            for j in 0..<n { worst = max(worst, abs(re[j] / Float(n) - xr[j]), abs(im[j] / Float(n) - xi[j])) }
            XCTAssertLessThan(worst, 1e-5, "round trip of \(n)")
        }
    }

    func testDCTIVMatchesItsDefinition() {
        for log2 in 2...13 {
            let n = 1 << log2
            let scale = 0.5
            let dct = DCTIV(size: n, scale: scale)
            let x = noise(n, seed: UInt32(n) &+ 3)
            var out = [Float](repeating: 0, count: n), backwards = out
            x.withUnsafeBufferPointer { xp in
                out.withUnsafeMutableBufferPointer { dct.transform(xp.baseAddress!, into: $0.baseAddress!) }
                backwards.withUnsafeMutableBufferPointer { dct.transformReversed(xp.baseAddress!, into: $0.baseAddress!) }
            }
            // cos(π/N·(n + ½)(k + ½)) = cos(2π·(2n + 1)(2k + 1)/(8N)).
            let cosines = (0..<8 * n).map { cos(2 * Double.pi * Double($0) / Double(8 * n)) }
            let ks = bins(n)
            var exact: [(Double, Double)] = []
            for k in ks {
                var direct = 0.0, reversed = 0.0
                for j in 0..<n {
                    let c = cosines[((2 * j + 1) * (2 * k + 1)) & (8 * n - 1)]
                    direct += Double(x[j]) * c
                    reversed += Double(x[n - 1 - j]) * c
                }
                exact.append((direct * scale, reversed * scale))
            }
            let error = relativeError(ks.map { (Double(out[$0]), Double(backwards[$0])) }, exact)
            XCTAssertLessThan(error, 1e-5, "DCT-IV of \(n): max error / RMS \(error)")
        }
    }

    /// In place: the input buffer may be the output.
    func testDCTIVInPlace() {
        let dct = DCTIV(size: 64)
        let x = noise(64, seed: 9)
        var out = [Float](repeating: 0, count: 64), inPlace = x
        x.withUnsafeBufferPointer { xp in out.withUnsafeMutableBufferPointer { dct.transform(xp.baseAddress!, into: $0.baseAddress!) } }
        inPlace.withUnsafeMutableBufferPointer { dct.transform($0.baseAddress!, into: $0.baseAddress!) }
        XCTAssertEqual(out, inPlace)
    }
}

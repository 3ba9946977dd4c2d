import Foundation
import TonearmCore

/// The quality measure of RFC 6716 §6.1's opus_compare (as RFC 8251 uses it for the test
/// vectors), at 48 kHz, written from its description: a pseudo noise-to-mask ratio.
///
/// Both signals (16-bit scale: samples × 32768) are cut into 480-sample Hann-windowed
/// frames every 120 samples; each frame's power spectrum (bins 0 ..< 200, plus a floor of
/// 10^5) is grouped into 21 Bark-like bands. The reference's band energies spread into a
/// masking level (+10 dB/Bark upwards at 0.1, −15 dB/Bark downwards at 0.03, the previous
/// frame at 0.5, 1% cross-talk between stereo channels), a tenth of which is added to both
/// spectra; each bin's power then sums with the previous frame's. Per bin, the ratio r of
/// tested to reference gives the error r − ln r − 1 (a tenth around bin 80, the SILK/CELT
/// cross-over, a hundredth at it); bands average it, frames take the mean square over bands
/// squared, and the file the 16th root of the mean of the frames' fourth powers. The
/// quality is 100·(1 − ½·ln(1 + err)/ln 1.13) percent; 0 or more passes.
public struct OpusCompareResult: Sendable, CustomStringConvertible {
    public var quality: Double
    public var weightedError: Double
    public var passes: Bool { quality >= 0 }
    public var description: String { String(format: "opus_compare %.1f %% (error %.4f)", quality, weightedError) }
}

public enum OpusCompare {
    static let bands = [0, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 68, 80, 96, 120, 156, 200]
    static let windowSize = 480
    static let step = 120
    static let bins = 200

    /// Compares `tested` with `reference`, both interleaved with `channels` (1 or 2) channels,
    /// ±1.0 floats of the same length. nil when shorter than one window.
    public static func compare(reference: [Float], tested: [Float], channels: Int) -> OpusCompareResult? {
        precondition(channels == 1 || channels == 2)
        let frames = reference.count / channels
        guard tested.count == reference.count, frames >= windowSize else { return nil }
        let frameCount = (frames - windowSize + step) / step
        let nb = bands.count - 1
        var xb = [Double](repeating: 0, count: frameCount * nb * channels)
        var xs = [Double](repeating: 0, count: frameCount * bins * channels)
        var ys = xs
        powerSpectra(reference, channels: channels, frames: frameCount, into: &xs, bandEnergies: &xb)
        var unused: [Double] = []
        powerSpectra(tested, channels: channels, frames: frameCount, into: &ys, bandEnergies: &unused)
        for f in 0..<frameCount {
            let b0 = f * nb * channels
            for b in 1..<nb { for c in 0..<channels { xb[b0 + b * channels + c] += 0.1 * xb[b0 + (b - 1) * channels + c] } }
            var b = nb - 2
            while b >= 0 {
                for c in 0..<channels { xb[b0 + b * channels + c] += 0.03 * xb[b0 + (b + 1) * channels + c] }
                b -= 1
            }
            if f > 0 {
                let p0 = (f - 1) * nb * channels
                for k in 0..<(nb * channels) { xb[b0 + k] += 0.5 * xb[p0 + k] }
            }
            if channels == 2 {
                for b in 0..<nb {
                    let l = xb[b0 + 2 * b], r = xb[b0 + 2 * b + 1]
                    xb[b0 + 2 * b] += 0.01 * r
                    xb[b0 + 2 * b + 1] += 0.01 * l
                }
            }
            for b in 0..<nb {
                for j in bands[b]..<bands[b + 1] {
                    for c in 0..<channels {
                        let mask = 0.1 * xb[b0 + b * channels + c]
                        xs[(f * bins + j) * channels + c] += mask
                        ys[(f * bins + j) * channels + c] += mask
                    }
                }
            }
        }
        // Each frame's bins plus the previous frame's (as they were before this sum).
        for k in 0..<(bins * channels) {
            var px = xs[k], py = ys[k]
            for f in 1..<max(1, frameCount) {
                let i = f * bins * channels + k
                let cx = xs[i], cy = ys[i]
                xs[i] += px
                ys[i] += py
                px = cx
                py = cy
            }
        }
        var err = 0.0
        for f in 0..<frameCount {
            var ef = 0.0
            for b in 0..<nb {
                var eb = 0.0
                for j in bands[b]..<bands[b + 1] {
                    for c in 0..<channels {
                        let i = (f * bins + j) * channels + c
                        let r = Double(Float(ys[i] / xs[i]))
                        var e = r - log(r) - 1
                        if j >= 79 && j <= 81 { e *= 0.1 }
                        if j == 80 { e *= 0.1 }
                        eb += e
                    }
                }
                eb /= Double((bands[b + 1] - bands[b]) * channels)
                ef += eb * eb
            }
            ef /= Double(nb)
            ef *= ef
            err += ef * ef
        }
        err = pow(err / Double(frameCount), 1.0 / 16)
        let q = 100 * (1 - 0.5 * log(1 + err) / log(1.13))
        return OpusCompareResult(quality: q, weightedError: err)
    }

    private static func powerSpectra(_ s: [Float], channels: Int, frames: Int, into ps: inout [Double],
                                     bandEnergies: inout [Double])
    {
        let n = windowSize
        let window = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi / Double(n - 1) * Double($0))) }
        guard let fft = MixedRadixFFT(size: n) else { return }
        let re = UnsafeMutablePointer<Float>.allocate(capacity: n), im = UnsafeMutablePointer<Float>.allocate(capacity: n)
        defer { re.deallocate(); im.deallocate() }
        let nb = bands.count - 1
        let wantBands = !bandEnergies.isEmpty
        for f in 0..<frames {
            var p = [Double](repeating: 0, count: nb * channels)
            for c in 0..<channels {
                for k in 0..<n {
                    re[k] = window[k] * s[(f * step + k) * channels + c] * 32768
                    im[k] = 0
                }
                fft.forward(re, im)
                for b in 0..<nb {
                    for j in bands[b]..<bands[b + 1] {
                        let v = Double(re[j]) * Double(re[j]) + Double(im[j]) * Double(im[j]) + 100_000
                        ps[(f * bins + j) * channels + c] = v
                        p[b * channels + c] += v
                    }
                }
            }
            if wantBands {
                for b in 0..<nb {
                    for c in 0..<channels {
                        bandEnergies[(f * nb + b) * channels + c] = p[b * channels + c] / Double(bands[b + 1] - bands[b])
                    }
                }
            }
        }
    }
}

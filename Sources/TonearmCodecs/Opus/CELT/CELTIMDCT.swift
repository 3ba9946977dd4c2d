import TonearmCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// CELT's inverse MDCT with the low-overlap window and its time-domain aliasing
/// cancellation (RFC 6716 §4.3.7), for blocks of 120, 240, 480 and 960 coefficients.
///
/// For M coefficients X, the M values of the half period from the centre of the first
/// (odd-symmetric) half to the centre of the second, fold[j] = y[M/2 + j], work out to
/// (−1)^j · DCT-IV(V)[j] with V[k] = (−1)^k·X[M − 1 − k]; the DCT-IV runs as an M/2-point
/// complex FFT between two twiddles: u[n] = X[M−1−2n] − i·X[2n], times e^(−iπ(n+¼)/M),
/// transformed, times e^(−iπp/M), gives fold[2p] (real part) and fold[M−1−2p] (imaginary).
final class CELTIMDCT {
    private struct Size {
        let m: Int
        let fft: MixedRadixFFT
        let preRe: [Float], preIm: [Float], postRe: [Float], postIm: [Float]
    }
    private let sizes: [Size]
    private let re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>

    init() {
        var s: [Size] = []
        for shift in 0..<4 {
            let m = CELTTables.shortBlockSize << shift
            let h = m / 2
            // The FFT sizes 60 … 480 factor into 2, 3, 4 and 5.
            guard let fft = MixedRadixFFT(size: h) else { fatalError("CELT's FFT sizes are 2^a·3·5") }
            var pr = [Float](repeating: 0, count: h), pi = pr, qr = pr, qi = pr
            for n in 0..<h {
                let a = -Double.pi * (Double(n) + 0.25) / Double(m)
                pr[n] = Float(cos(a)); pi[n] = Float(sin(a))
                let b = -Double.pi * Double(n) / Double(m)
                qr[n] = Float(cos(b)); qi[n] = Float(sin(b))
            }
            s.append(Size(m: m, fft: fft, preRe: pr, preIm: pi, postRe: qr, postIm: qi))
        }
        sizes = s
        re = .allocate(capacity: 480)
        im = .allocate(capacity: 480)
    }

    deinit {
        re.deallocate()
        im.deallocate()
    }

    /// Inverse-transforms the `m` = 120·2^`shift` coefficients `input[k·stride]` into `out`:
    /// the block's M folded values go to out[overlap/2 ..< overlap/2 + M], and the first
    /// `overlap` samples, where out[0 ..< overlap/2] holds the previous block's last folded
    /// values, become finished output (windowed and aliasing-cancelled).
    func backward(_ input: UnsafePointer<Float>, stride: Int, shift: Int, into out: UnsafeMutablePointer<Float>,
                  window: UnsafePointer<Float>)
    {
        let size = sizes[shift]
        let m = size.m, h = m / 2
        let overlap = CELTTables.overlap
        size.preRe.withUnsafeBufferPointer { pr in
            size.preIm.withUnsafeBufferPointer { pi in
                for n in 0..<h {
                    let a = input[(m - 1 - 2 * n) * stride], b = -input[2 * n * stride]
                    re[n] = a * pr[n] - b * pi[n]
                    im[n] = a * pi[n] + b * pr[n]
                }
            }
        }
        size.fft.forward(re, im)
        let fold = out + overlap / 2
        size.postRe.withUnsafeBufferPointer { qr in
            size.postIm.withUnsafeBufferPointer { qi in
                for p in 0..<h {
                    let dr = re[p] * qr[p] - im[p] * qi[p]
                    let di = re[p] * qi[p] + im[p] * qr[p]
                    fold[2 * p] = dr
                    fold[m - 1 - 2 * p] = di
                }
            }
        }
        // TDAC: the rising half of this block is odd-symmetric about overlap/2, the falling
        // half of the previous one even-symmetric; w² + w'² = 1.
        for i in 0..<(overlap / 2) {
            let previous = out[i], current = out[overlap - 1 - i]
            let w1 = window[i], w2 = window[overlap - 1 - i]
            out[i] = previous * w2 - current * w1
            out[overlap - 1 - i] = previous * w1 + current * w2
        }
    }
}

import Foundation

/// An in-place complex FFT of a power-of-two size, X(k) = Σn x(n)·e^{+2πikn/N} (the sign the
/// QMF banks' modulations have), unscaled: iterative radix-2 with a bit-reversed load.
final class SBRFFT {
    let size: Int
    /// The transform's data, real and imaginary parts apart.
    let real: UnsafeMutablePointer<Float>
    let imag: UnsafeMutablePointer<Float>
    private let twiddleRe: UnsafeMutablePointer<Float>
    private let twiddleIm: UnsafeMutablePointer<Float>
    private let reversed: [Int]

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0)
        self.size = size
        real = .allocate(capacity: size)
        real.initialize(repeating: 0, count: size)
        imag = .allocate(capacity: size)
        imag.initialize(repeating: 0, count: size)
        twiddleRe = .allocate(capacity: size / 2)
        twiddleIm = .allocate(capacity: size / 2)
        for k in 0..<size / 2 {
            let a = 2 * Double.pi * Double(k) / Double(size)
            twiddleRe[k] = Float(cos(a))
            twiddleIm[k] = Float(sin(a))
        }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i >> b & 1 == 1 { r |= 1 << (bits - 1 - b) }
            return r
        }
    }

    deinit {
        real.deallocate()
        imag.deallocate()
        twiddleRe.deallocate()
        twiddleIm.deallocate()
    }

    func transform() {
        let n = size
        reversed.withUnsafeBufferPointer { rev in
            for i in 0..<n {
                let j = rev[i]
                if j > i {
                    swap(&real[i], &real[j])
                    swap(&imag[i], &imag[j])
                }
            }
        }
        var half = 1
        while half < n {
            let step = n / (2 * half)
            var start = 0
            while start < n {
                for j in 0..<half {
                    let wr = twiddleRe[j * step], wi = twiddleIm[j * step]
                    let a = start + j, b = a + half
                    let tr = real[b] * wr - imag[b] * wi
                    let ti = real[b] * wi + imag[b] * wr
                    real[b] = real[a] - tr
                    imag[b] = imag[a] - ti
                    real[a] += tr
                    imag[a] += ti
                }
                start += 2 * half
            }
            half *= 2
        }
    }
}

/// A 64-point DCT-IV, X(k) = Σn x(n)·cos(π/64·(n + ½)(k + ½)), through a 32-point complex
/// FFT: the even inputs and the reversed odd ones as one complex sequence, a twiddle before
/// and after (the usual half-length algorithm).
final class SBRDCT4 {
    private let fft = SBRFFT(size: 32)
    /// e^{−iπ(4n + 1)/256} and e^{−iπn/64}, n < 32.
    private let pre: [(Float, Float)] = (0..<32).map { n in
        let a = -Double.pi * Double(4 * n + 1) / 256
        return (Float(cos(a)), Float(sin(a)))
    }
    private let post: [(Float, Float)] = (0..<32).map { n in
        let a = -Double.pi * Double(n) / 64
        return (Float(cos(a)), Float(sin(a)))
    }

    /// The transform of `x` (of `x` read backwards when `reversed`) into `out`.
    func transform(_ x: UnsafePointer<Float>, reversed: Bool, into out: UnsafeMutablePointer<Float>) {
        let re = fft.real, im = fft.imag
        for n in 0..<32 {
            let a = reversed ? x[63 - 2 * n] : x[2 * n]
            let b = reversed ? x[2 * n] : x[63 - 2 * n]
            let (c, s) = pre[n]
            // The FFT's kernel is e^{+2πikn/N}: conjugate in and out for the forward one.
            re[n] = a * c - b * s
            im[n] = -(a * s + b * c)
        }
        fft.transform()
        for k in 0..<32 {
            let tr = re[k], ti = -im[k]
            let (c, s) = post[k]
            out[2 * k] = tr * c - ti * s
            out[63 - 2 * k] = -(tr * s + ti * c)
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A complex FFT of one power-of-two size, radix 2, decimation in time, in place on split
/// real and imaginary arrays: X[k] = Σ x[n]·e^(−2πink/size).
final class AACFFT {
    let size: Int
    private let reversed: [Int32]
    /// cos and −sin of 2πk/size, k < size/2.
    private let twiddleRe: [Float], twiddleIm: [Float]

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0)
        self.size = size
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i >> b & 1 == 1 { r |= 1 << (bits - 1 - b) }
            return Int32(r)
        }
        twiddleRe = (0..<size / 2).map { Float(cos(2 * Double.pi * Double($0) / Double(size))) }
        twiddleIm = (0..<size / 2).map { Float(-sin(2 * Double.pi * Double($0) / Double(size))) }
    }

    func forward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        let n = size
        reversed.withUnsafeBufferPointer { rev in
            for i in 0..<n {
                let j = Int(rev[i])
                if j > i {
                    swap(&re[i], &re[j])
                    swap(&im[i], &im[j])
                }
            }
        }
        twiddleRe.withUnsafeBufferPointer { wr in
            twiddleIm.withUnsafeBufferPointer { wi in
                var half = 1
                while half < n {
                    let step = n / (half * 2)
                    var start = 0
                    while start < n {
                        for k in 0..<half {
                            let a = start &+ k, b = a &+ half
                            let cr = wr[k &* step], ci = wi[k &* step]
                            let tr = re[b] * cr - im[b] * ci
                            let ti = re[b] * ci + im[b] * cr
                            re[b] = re[a] - tr
                            im[b] = im[a] - ti
                            re[a] += tr
                            im[a] += ti
                        }
                        start &+= half * 2
                    }
                    half &*= 2
                }
            }
        }
    }
}

/// The inverse MDCT of one size (ISO/IEC 14496-3 §4.6.11.3.1):
/// x[n] = scale · Σ_k X[k]·cos(2π/N·(n + n₀)(k + ½)), n₀ = (N/2 + 1)/2, for N = 2048 or 256,
/// from N/2 coefficients. It is a DCT-IV of N/2 points, computed with an N/4-point complex
/// FFT between a pre- and a post-rotation, then unfolded into N samples by the MDCT's
/// symmetries.
final class AACIMDCT {
    let length: Int
    private let fft: AACFFT
    private let preRe: [Float], preIm: [Float]
    private let postRe: [Float], postIm: [Float]
    private let re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>
    private let dct: UnsafeMutablePointer<Float>

    init(length n: Int, scale: Double) {
        length = n
        let m = n / 2, h = n / 4
        fft = AACFFT(size: h)
        let pre = (0..<h).map { Double.pi * Double(4 * $0 + 1) / Double(4 * m) }
        preRe = pre.map { Float(cos($0) * scale) }
        preIm = pre.map { Float(sin($0) * scale) }
        postRe = (0..<h).map { Float(cos(Double.pi * Double($0) / Double(m))) }
        postIm = (0..<h).map { Float(sin(Double.pi * Double($0) / Double(m))) }
        re = .allocate(capacity: h)
        im = .allocate(capacity: h)
        dct = .allocate(capacity: m)
    }

    deinit {
        re.deallocate()
        im.deallocate()
        dct.deallocate()
    }

    /// `length / 2` coefficients in, `length` samples out.
    func transform(_ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>) {
        dctIV(x)
        // Unfold the DCT-IV u into the N samples of the IMDCT.
        let n = length, q = n / 4
        for i in 0..<q { y[i] = dct[q &+ i] }
        for i in q..<3 &* q { y[i] = -dct[3 &* q &- 1 &- i] }
        for i in 3 &* q..<n { y[i] = -dct[i &- 3 &* q] }
    }

    /// The forward MDCT, X[k] = scale · Σ_n x[n]·cos(2π/N·(n + n₀)(k + ½)): `length` samples
    /// in, folded into a DCT-IV, `length / 2` coefficients out (AAC LTP's §4.6.8.3).
    func forward(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        let n = length, m = n / 2, q = n / 4
        for i in 0..<m / 2 { out[i] = -x[3 &* q &- 1 &- i] - x[3 &* q &+ i] }
        for i in m / 2..<m { out[i] = x[i &- q] - x[3 &* q &- 1 &- i] }
        dctIV(out)
        out.update(from: dct, count: m)
    }

    /// u[n] = scale · Σ_k X[k]·cos(π/M·(n + ½)(k + ½)), M = length / 2, into `dct`.
    private func dctIV(_ x: UnsafePointer<Float>) {
        let n = length, m = n / 2, h = n / 4
        preRe.withUnsafeBufferPointer { pr in
            preIm.withUnsafeBufferPointer { pi in
                for k in 0..<h {
                    // (a + ib)·e^(−iθ)
                    let a = x[2 &* k], b = x[m &- 1 &- 2 &* k]
                    re[k] = a * pr[k] + b * pi[k]
                    im[k] = b * pr[k] - a * pi[k]
                }
            }
        }
        fft.forward(re, im)
        postRe.withUnsafeBufferPointer { cr in
            postIm.withUnsafeBufferPointer { ci in
                for k in 0..<h {
                    let tr = re[k] * cr[k] + im[k] * ci[k]
                    let ti = im[k] * cr[k] - re[k] * ci[k]
                    dct[2 &* k] = tr
                    dct[m &- 1 &- 2 &* k] = -ti
                }
            }
        }
    }
}

/// The windows of §4.6.11.3.2: sine and Kaiser-Bessel derived (α = 4 long, 6 short), each
/// the rising half, `length / 2` values; the falling half is the same read backwards.
enum AACWindows {
    static let sineLong = sine(2048)
    static let sineShort = sine(256)
    static let kbdLong = kbd(2048, alpha: 4)
    static let kbdShort = kbd(256, alpha: 6)

    static func sine(_ n: Int) -> [Float] {
        (0..<n / 2).map { Float(sin(Double.pi / Double(n) * (Double($0) + 0.5))) }
    }

    static func kbd(_ n: Int, alpha: Double) -> [Float] {
        let half = n / 2
        // The Kaiser kernel over half + 1 points, its running sums normalised.
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0
            for k in 1..<50 {
                term *= (x / 2) / Double(k)
                sum += term * term
            }
            return sum
        }
        let kernel = (0...half).map { j -> Double in
            let r = 2 * Double(j) / Double(half) - 1
            return besselI0(Double.pi * alpha * (1 - r * r).squareRoot())
        }
        let total = kernel.reduce(0, +)
        var running = 0.0
        return (0..<half).map { j in
            running += kernel[j]
            return Float((running / total).squareRoot())
        }
    }

    /// The rising half for a window shape (0 sine, 1 KBD).
    static func long(_ shape: Int) -> [Float] { shape == 1 ? kbdLong : sineLong }
    static func short(_ shape: Int) -> [Float] { shape == 1 ? kbdShort : sineShort }
}

/// The synthesis filter bank (§4.6.11): IMDCT, windowing by window sequence and shape, and
/// overlap-add with the previous frame's second half.
final class AACFilterbank {
    /// Scaled by 2/N as §4.6.11.3.1, and by 2^-15: the standard's output is 16-bit full scale.
    private let long = AACIMDCT(length: 2048, scale: 2.0 / 2048 / 32768)
    private let short = AACIMDCT(length: 256, scale: 2.0 / 256 / 32768)
    /// AAC LTP's forward MDCT: 2·Σ (§4.6.8.3), in the spectrum's 16-bit scale.
    private lazy var ltpMDCT = AACIMDCT(length: 2048, scale: 2 * 32768)
    /// AAC LTP's predicted signal (2048 samples) and spectrum (1024).
    let ltpTime: UnsafeMutablePointer<Float> = .allocate(capacity: 2048)
    let ltpSpectrum: UnsafeMutablePointer<Float> = .allocate(capacity: 1024)
    /// One frame's windowed IMDCT output, 2048 samples.
    private let buffer: UnsafeMutablePointer<Float>
    private let shortBuffer: UnsafeMutablePointer<Float>

    init() {
        buffer = .allocate(capacity: 2048)
        buffer.initialize(repeating: 0, count: 2048)
        shortBuffer = .allocate(capacity: 256)
        shortBuffer.initialize(repeating: 0, count: 256)
    }

    deinit {
        buffer.deallocate()
        shortBuffer.deallocate()
        ltpTime.deallocate()
        ltpSpectrum.deallocate()
    }

    /// Windows 2048 samples as a long-window frame of `sequence` would be (the left half
    /// with the previous shape), and takes them to the frequency domain: AAC LTP.
    func analyse(_ x: UnsafeMutablePointer<Float>, sequence: AACWindowSequence, shape: Int, previousShape: Int,
                 into out: UnsafeMutablePointer<Float>)
    {
        window(x, sequence: sequence, shape: shape, previous: previousShape)
        ltpMDCT.forward(x, into: out)
    }

    /// The windows of a long-window frame, in place over its 2048 samples.
    private func window(_ b: UnsafeMutablePointer<Float>, sequence: AACWindowSequence, shape: Int, previous: Int) {
        if sequence == .longStop {
            b.update(repeating: 0, count: 448)
            AACWindows.short(previous).withUnsafeBufferPointer { l in
                for n in 0..<128 { b[448 + n] *= l[n] }
            }
        } else {
            AACWindows.long(previous).withUnsafeBufferPointer { l in
                for n in 0..<1024 { b[n] *= l[n] }
            }
        }
        if sequence == .longStart {
            AACWindows.short(shape).withUnsafeBufferPointer { r in
                for n in 0..<128 { b[1472 + n] *= r[127 - n] }
            }
            (b + 1600).update(repeating: 0, count: 448)
        } else {
            AACWindows.long(shape).withUnsafeBufferPointer { r in
                for n in 0..<1024 { b[1024 + n] *= r[1023 - n] }
            }
        }
    }

    /// One channel's frame: 1024 samples into `out`.
    func synthesize(_ s: AACChannelStream, state: AACChannelState, into out: UnsafeMutablePointer<Float>) {
        let info = s.info
        let shape = info.windowShape, previous = state.previousShape
        let b = buffer
        switch info.windowSequence {
        case .eightShort:
            b.update(repeating: 0, count: 2048)
            let rightSlope = AACWindows.short(shape)
            for w in 0..<8 {
                short.transform(s.spectrum + w * 128, into: shortBuffer)
                let leftSlope = w == 0 ? AACWindows.short(previous) : rightSlope
                let o = b + 448 + w * 128
                leftSlope.withUnsafeBufferPointer { l in
                    rightSlope.withUnsafeBufferPointer { r in
                        for n in 0..<128 {
                            o[n] += shortBuffer[n] * l[n]
                            o[128 + n] += shortBuffer[128 + n] * r[127 - n]
                        }
                    }
                }
            }
        case .onlyLong, .longStart, .longStop:
            long.transform(s.spectrum, into: b)
            window(b, sequence: info.windowSequence, shape: shape, previous: previous)
        }
        for n in 0..<1024 { out[n] = state.overlap[n] + b[n] }
        state.overlap.update(from: b + 1024, count: 1024)
        state.previousShape = shape
    }

    /// A silent frame: the last frame's tail, then nothing to overlap.
    func silence(_ state: AACChannelState, into out: UnsafeMutablePointer<Float>) {
        out.update(from: state.overlap, count: 1024)
        state.overlap.update(repeating: 0, count: 1024)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A complex FFT of one power-of-two size, X[k] = Σ x[n]·e^(−2πink/size), on split real
/// and imaginary arrays: radix 2 in Stockham's self-sorting form (each pass reads one
/// buffer and writes the other, in natural order, so there is no bit-reversal pass), with
/// each pass's twiddles contiguous.
final class AACFFT {
    let size: Int
    /// Per pass of length L = size, size/2, …, 2: cos and −sin of 2πp/L for p < L/2,
    /// one pass after the other.
    private let twiddleRe: UnsafeMutablePointer<Float>, twiddleIm: UnsafeMutablePointer<Float>
    private let workRe: UnsafeMutablePointer<Float>, workIm: UnsafeMutablePointer<Float>

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0)
        self.size = size
        twiddleRe = .allocate(capacity: size)
        twiddleIm = .allocate(capacity: size)
        var at = 0
        var length = size
        while length > 1 {
            for p in 0..<length / 2 {
                let angle = 2 * Double.pi * Double(p) / Double(length)
                twiddleRe[at + p] = Float(cos(angle))
                twiddleIm[at + p] = Float(-sin(angle))
            }
            at += length / 2
            length /= 2
        }
        workRe = .allocate(capacity: size)
        workIm = .allocate(capacity: size)
    }

    deinit {
        twiddleRe.deallocate()
        twiddleIm.deallocate()
        workRe.deallocate()
        workIm.deallocate()
    }

    @inline(__always)
    private static func load(_ p: UnsafeMutablePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always)
    private static func store(_ v: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<Float>.self)
    }

    /// Transforms `re`, `im` in place.
    func forward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        var xr = re, xi = im, yr = workRe, yi = workIm
        var length = size, stride = 1, at = 0
        while length > 1 {
            let half = length / 2
            let wr = twiddleRe + at, wi = twiddleIm + at
            // x holds `length` rows of `stride` columns: row p pairs with row p + half, and
            // they become rows 2p and 2p + 1.
            if stride >= 4 {
                // Columns four at a time.
                for p in 0..<half {
                    let cr = SIMD4<Float>(repeating: wr[p]), ci = SIMD4<Float>(repeating: wi[p])
                    let a = p &* stride, b = (p &+ half) &* stride
                    let c = 2 &* p &* stride, d = c &+ stride
                    var q = 0
                    while q < stride {
                        let ar = Self.load(xr + (a &+ q)), ai = Self.load(xi + (a &+ q))
                        let br = Self.load(xr + (b &+ q)), bi = Self.load(xi + (b &+ q))
                        Self.store(ar + br, yr + (c &+ q))
                        Self.store(ai + bi, yi + (c &+ q))
                        let dr = ar - br, di = ai - bi
                        Self.store(dr * cr - di * ci, yr + (d &+ q))
                        Self.store(dr * ci + di * cr, yi + (d &+ q))
                        q &+= 4
                    }
                }
            } else {
                for p in 0..<half {
                    let cr = wr[p], ci = wi[p]
                    let a = p &* stride, b = (p &+ half) &* stride
                    let c = 2 &* p &* stride, d = c &+ stride
                    for q in 0..<stride {
                        let ar = xr[a &+ q], ai = xi[a &+ q], br = xr[b &+ q], bi = xi[b &+ q]
                        yr[c &+ q] = ar + br
                        yi[c &+ q] = ai + bi
                        let dr = ar - br, di = ai - bi
                        yr[d &+ q] = dr * cr - di * ci
                        yi[d &+ q] = dr * ci + di * cr
                    }
                }
            }
            swap(&xr, &yr)
            swap(&xi, &yi)
            at &+= half
            length = half
            stride &*= 2
        }
        if xr != re {
            re.update(from: xr, count: size)
            im.update(from: xi, count: size)
        }
    }
}

/// The inverse MDCT of one size (ISO/IEC 14496-3):
/// x[n] = scale · Σ_k X[k]·cos(2π/N·(n + n₀)(k + ½)), n₀ = (N/2 + 1)/2, for N = 2048 or 256,
/// from N/2 coefficients. It is a DCT-IV of N/2 points, computed with an N/4-point complex
/// FFT between a pre- and a post-rotation, then unfolded into N samples by the MDCT's
/// symmetries.
final class AACIMDCT {
    let length: Int
    private let fft: AACFFT
    /// The rotations before and after the FFT: cos and sin of π(4k + 1)/(4M) (scaled), of πk/M.
    private let preRe: UnsafeMutablePointer<Float>, preIm: UnsafeMutablePointer<Float>
    private let postRe: UnsafeMutablePointer<Float>, postIm: UnsafeMutablePointer<Float>
    private let re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>
    private let dct: UnsafeMutablePointer<Float>

    init(length n: Int, scale: Double) {
        length = n
        let m = n / 2, h = n / 4
        fft = AACFFT(size: h)
        preRe = .allocate(capacity: h)
        preIm = .allocate(capacity: h)
        postRe = .allocate(capacity: h)
        postIm = .allocate(capacity: h)
        for k in 0..<h {
            let pre = Double.pi * Double(4 * k + 1) / Double(4 * m), post = Double.pi * Double(k) / Double(m)
            preRe[k] = Float(cos(pre) * scale)
            preIm[k] = Float(sin(pre) * scale)
            postRe[k] = Float(cos(post))
            postIm[k] = Float(sin(post))
        }
        re = .allocate(capacity: h)
        im = .allocate(capacity: h)
        dct = .allocate(capacity: m)
    }

    deinit {
        re.deallocate()
        im.deallocate()
        dct.deallocate()
        preRe.deallocate()
        preIm.deallocate()
        postRe.deallocate()
        postIm.deallocate()
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
    /// in, folded into a DCT-IV, `length / 2` coefficients out (for AAC LTP).
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
        let pr = preRe, pi = preIm, cr = postRe, ci = postIm, re = self.re, im = self.im, dct = self.dct
        for k in 0..<h {
            // (a + ib)·e^(−iθ)
            let a = x[2 &* k], b = x[m &- 1 &- 2 &* k]
            re[k] = a * pr[k] + b * pi[k]
            im[k] = b * pr[k] - a * pi[k]
        }
        fft.forward(re, im)
        for k in 0..<h {
            let tr = re[k] * cr[k] + im[k] * ci[k]
            let ti = im[k] * cr[k] - re[k] * ci[k]
            dct[2 &* k] = tr
            dct[m &- 1 &- 2 &* k] = -ti
        }
    }
}

/// The windows: sine and Kaiser-Bessel derived (α = 4 long, 6 short), each
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

/// The synthesis filter bank: IMDCT, windowing by window sequence and shape, and
/// overlap-add with the previous frame's second half.
final class AACFilterbank {
    /// Scaled by 2/N, as the standard's IMDCT, and by 2^-15: its output is 16-bit full scale.
    private let long = AACIMDCT(length: 2048, scale: 2.0 / 2048 / 32768)
    private let short = AACIMDCT(length: 256, scale: 2.0 / 256 / 32768)
    /// AAC LTP's forward MDCT: 2·Σ, in the spectrum's 16-bit scale.
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

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// The inverse MDCT of one size (ISO/IEC 14496-3):
/// x[n] = scale · Σ_k X[k]·cos(2π/N·(n + n₀)(k + ½)), n₀ = (N/2 + 1)/2, for N = 2048 or 256,
/// from N/2 coefficients. It is a DCT-IV of N/2 points (TonearmCore's, on its FFT), unfolded
/// into N samples by the MDCT's symmetries.
final class AACIMDCT {
    let length: Int
    private let dctIV: DCTIV
    /// The DCT-IV's output, N/2 values.
    let dct: UnsafeMutablePointer<Float>

    init(length n: Int, scale: Double) {
        length = n
        dctIV = DCTIV(size: n / 2, scale: scale)
        dct = .allocate(capacity: n / 2)
        dct.initialize(repeating: 0, count: n / 2)
    }

    deinit {
        dct.deallocate()
    }

    /// u[n] = scale · Σ_k X[k]·cos(π/M·(n + ½)(k + ½)), M = length / 2, into ``dct``: the
    /// IMDCT before its unfolding.
    @inline(__always)
    func transformFolded(_ x: UnsafePointer<Float>) {
        dctIV.transform(x, into: dct)
    }

    /// `length / 2` coefficients in, `length` samples out.
    func transform(_ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>) {
        dctIV.transform(x, into: dct)
        // Unfold the DCT-IV u into the N samples of the IMDCT.
        let n = length, q = n / 4, u = dct
        for i in 0..<q { y[i] = u[q &+ i] }
        for i in q..<3 &* q { y[i] = -u[3 &* q &- 1 &- i] }
        for i in 3 &* q..<n { y[i] = -u[i &- 3 &* q] }
    }

    /// The forward MDCT, X[k] = scale · Σ_n x[n]·cos(2π/N·(n + n₀)(k + ½)): `length` samples
    /// in, folded into a DCT-IV, `length / 2` coefficients out (for AAC LTP).
    func forward(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        let n = length, m = n / 2, q = n / 4
        for i in 0..<m / 2 { out[i] = -x[3 &* q &- 1 &- i] - x[3 &* q &+ i] }
        for i in m / 2..<m { out[i] = x[i &- q] - x[3 &* q &- 1 &- i] }
        dctIV.transform(out, into: out)
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

/// A long-window frame's two halves as whole 1024-sample windows, so one loop applies each:
/// per shape (0 sine, 1 KBD), the rising half of a long window or of LONG_STOP (zeros, the
/// short slope, ones), the falling half of a long window or of LONG_START (ones, the short
/// slope, zeros).
enum AACLongWindows {
    static let storage: [Float] = {
        var all = [Float]()
        all.reserveCapacity(8 * 1024)
        for shape in 0..<2 {
            let long = AACWindows.long(shape), short = AACWindows.short(shape)
            all += long
            all += [Float](repeating: 0, count: 448) + short + [Float](repeating: 1, count: 448)
            all += long.reversed()
            all += [Float](repeating: 1, count: 448) + short.reversed() + [Float](repeating: 0, count: 448)
        }
        return all
    }()

    /// Offsets into ``storage``.
    static func left(_ sequence: AACWindowSequence, shape: Int) -> Int {
        shape &* 4096 &+ (sequence == .longStop ? 1024 : 0)
    }

    static func right(_ sequence: AACWindowSequence, shape: Int) -> Int {
        shape &* 4096 &+ (sequence == .longStart ? 3072 : 2048)
    }
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
    /// An EIGHT_SHORT_SEQUENCE frame's windowed and overlapped IMDCT output, 2048 samples.
    private let buffer: UnsafeMutablePointer<Float>

    init() {
        buffer = .allocate(capacity: 2048)
        buffer.initialize(repeating: 0, count: 2048)
    }

    deinit {
        buffer.deallocate()
        ltpTime.deallocate()
        ltpSpectrum.deallocate()
    }

    /// Windows 2048 samples as a long-window frame of `sequence` would be (the left half
    /// with the previous shape), and takes them to the frequency domain: AAC LTP.
    func analyse(_ x: UnsafeMutablePointer<Float>, sequence: AACWindowSequence, shape: Int, previousShape: Int,
                 into out: UnsafeMutablePointer<Float>)
    {
        AACLongWindows.storage.withUnsafeBufferPointer { w in
            let l = w.baseAddress! + AACLongWindows.left(sequence, shape: previousShape)
            let r = w.baseAddress! + AACLongWindows.right(sequence, shape: shape)
            for n in 0..<1024 {
                x[n] *= l[n]
                x[1024 &+ n] *= r[n]
            }
        }
        ltpMDCT.forward(x, into: out)
    }

    /// One channel's frame: 1024 samples into `out`.
    func synthesize(_ s: AACChannelStream, state: AACChannelState, into out: UnsafeMutablePointer<Float>) {
        let info = s.info
        let shape = info.windowShape, previous = state.previousShape
        let overlap = state.overlap
        switch info.windowSequence {
        case .eightShort:
            synthesizeShort(s.spectrum, shape: shape, previous: previous, overlap: overlap, into: out)
        case .onlyLong, .longStart, .longStop:
            long.transformFolded(s.spectrum)
            AACLongWindows.storage.withUnsafeBufferPointer { w in
                let l = w.baseAddress! + AACLongWindows.left(info.windowSequence, shape: previous)
                let r = w.baseAddress! + AACLongWindows.right(info.windowSequence, shape: shape)
                Self.unfoldLong(long.dct, left: l, right: r, overlap: overlap, into: out)
            }
        }
        state.previousShape = shape
    }

    /// The long IMDCT's unfolding, windowing and overlap-add in one pass over the DCT-IV u:
    /// the frame y is u[512 + n], −u[1535 − n], −u[511 − n], −u[n − 512] by quarters; its
    /// first half windowed joins the overlap into `out`, its second half windowed is the next
    /// overlap.
    private static func unfoldLong(_ u: UnsafeMutablePointer<Float>, left l: UnsafePointer<Float>,
                                   right r: UnsafePointer<Float>, overlap ov: UnsafeMutablePointer<Float>,
                                   into out: UnsafeMutablePointer<Float>)
    {
        var n = 0
        while n < 512 {
            storeFloats(loadFloat4(ov + n) + loadFloat4(u + (512 &+ n)) * loadFloat4(l + n), out + n)
            n &+= 4
        }
        while n < 1024 {
            storeFloats(loadFloat4(ov + n) - loadFloat4Reversed(u + (1532 &- n)) * loadFloat4(l + n), out + n)
            n &+= 4
        }
        n = 0
        while n < 512 {
            storeFloats(-(loadFloat4Reversed(u + (508 &- n)) * loadFloat4(r + n)), ov + n)
            n &+= 4
        }
        while n < 1024 {
            storeFloats(-(loadFloat4(u + (n &- 512)) * loadFloat4(r + n)), ov + n)
            n &+= 4
        }
    }

    /// EIGHT_SHORT_SEQUENCE: eight 256-sample IMDCTs, windowed and overlapped at 448 + 128w.
    private func synthesizeShort(_ spectrum: UnsafeMutablePointer<Float>, shape: Int, previous: Int,
                                 overlap: UnsafeMutablePointer<Float>, into out: UnsafeMutablePointer<Float>)
    {
        let b = buffer, u = short.dct
        b.update(repeating: 0, count: 2048)
        let rightSlope = AACWindows.short(shape), previousSlope = AACWindows.short(previous)
        rightSlope.withUnsafeBufferPointer { rp in
            previousSlope.withUnsafeBufferPointer { pp in
                let r = rp.baseAddress!
                for w in 0..<8 {
                    short.transformFolded(spectrum + w &* 128)
                    let l = w == 0 ? pp.baseAddress! : r
                    let o = b + (448 &+ w &* 128)
                    // y = u[64 + n], −u[191 − n], −u[63 − n], −u[n − 64] by quarters of 64.
                    for n in 0..<64 { o[n] += u[64 &+ n] * l[n] }
                    for n in 64..<128 { o[n] -= u[191 &- n] * l[n] }
                    for n in 0..<64 { o[128 &+ n] -= u[63 &- n] * r[127 &- n] }
                    for n in 64..<128 { o[128 &+ n] -= u[n &- 64] * r[127 &- n] }
                }
            }
        }
        for n in 0..<1024 { out[n] = overlap[n] + b[n] }
        overlap.update(from: b + 1024, count: 1024)
    }

    /// A silent frame: the last frame's tail, then nothing to overlap.
    func silence(_ state: AACChannelState, into out: UnsafeMutablePointer<Float>) {
        out.update(from: state.overlap, count: 1024)
        state.overlap.update(repeating: 0, count: 1024)
    }
}

import TonearmCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Linear prediction for the FLAC encoder: analysis windows, autocorrelation, the
/// Levinson-Durbin recursion and the quantisation of coefficients (RFC 9639 §9.2.6 gives
/// the decoder's side: precision, shift and the prediction).
enum FLACLPC {
    /// The longest predictor the encoder looks for (the format allows 32).
    static let maximumOrder = 32
    /// RFC 9639 §9.2.6: coefficients have 1 to 15 bits; the shift is a 5-bit signed field,
    /// of which decoders accept 0 to 15.
    static let maximumPrecision = 15
    static let maximumShift = 15

    /// An analysis window: the block is weighted by it before the autocorrelation.
    enum Window: Hashable, Sendable {
        /// Flat in the middle, cosine tapers over `ratio` of the block (split over both ends).
        case tukey(Double)
        /// A Tukey(0.5) over part `index` of `parts` equal parts of the block, zero elsewhere,
        /// so a predictor can fit one stretch of a block whose sound changes.
        case partialTukey(parts: Int, index: Int)
        /// A Tukey(0.5) over the block with part `index` of `parts` cut out (tapered), the
        /// complement of ``partialTukey(parts:index:)``.
        case punchoutTukey(parts: Int, index: Int)

        /// The window's `n` weights.
        func weights(_ n: Int) -> [Double] {
            switch self {
            case .tukey(let r):
                return FLACLPC.tukey(n, ratio: r)
            case .partialTukey(let parts, let index):
                var w = [Double](repeating: 0, count: n)
                let start = n * index / parts, end = n * (index + 1) / parts
                let piece = FLACLPC.tukey(end - start, ratio: 0.5)
                for i in 0..<piece.count { w[start + i] = piece[i] }
                return w
            case .punchoutTukey(let parts, let index):
                var w = FLACLPC.tukey(n, ratio: 0.5)
                let start = n * index / parts, end = n * (index + 1) / parts
                let piece = FLACLPC.tukey(end - start, ratio: 0.5)
                for i in 0..<piece.count { w[start + i] *= 1 - piece[i] }
                return w
            }
        }
    }

    /// Tukey window weights: 1 in the middle, a raised-cosine rise and fall each over
    /// `ratio / 2` of the length. Ratio 0 is rectangular, 1 a Hann window.
    static func tukey(_ n: Int, ratio: Double) -> [Double] {
        guard n > 1 else { return [Double](repeating: 1, count: max(n, 0)) }
        var w = [Double](repeating: 1, count: n)
        let taper = Int(ratio / 2 * Double(n - 1))
        guard taper > 0 else { return w }
        for i in 0..<taper {
            let v = 0.5 - 0.5 * cos(Double.pi * Double(i) / Double(taper))
            w[i] = v
            w[n - 1 - i] = v
        }
        return w
    }

    /// The autocorrelation of `x` weighted by `window`, lags 0...`lags`, into `r`.
    /// `scratch` holds at least `n` values.
    static func autocorrelation(_ x: UnsafePointer<Int64>, count n: Int, window: UnsafePointer<Double>, lags: Int,
                                scratch: UnsafeMutablePointer<Double>, into r: inout [Double])
    {
        for i in 0..<n { scratch[i] = Double(x[i]) * window[i] }
        r = [Double](repeating: 0, count: lags + 1)
        let raw = UnsafeRawPointer(scratch)
        for lag in 0...lags where lag < n {
            // Vector partial sums, so the additions need not wait for each other.
            var s0 = SIMD4<Double>(), s1 = SIMD4<Double>()
            var i = lag
            while i &+ 8 <= n {
                let a0 = raw.loadUnaligned(fromByteOffset: i &* 8, as: SIMD4<Double>.self)
                let b0 = raw.loadUnaligned(fromByteOffset: (i &- lag) &* 8, as: SIMD4<Double>.self)
                let a1 = raw.loadUnaligned(fromByteOffset: (i &+ 4) &* 8, as: SIMD4<Double>.self)
                let b1 = raw.loadUnaligned(fromByteOffset: (i &+ 4 &- lag) &* 8, as: SIMD4<Double>.self)
                s0 += a0 * b0
                s1 += a1 * b1
                i &+= 8
            }
            var tail = 0.0
            while i < n {
                tail += scratch[i] * scratch[i &- lag]
                i &+= 1
            }
            r[lag] = (s0 + s1).sum() + tail
        }
    }

    /// The Levinson-Durbin recursion: for each order m in 1...maxOrder, the predictor
    /// x[i] ≈ Σ_j a_j·x[i−1−j] (j < m) that minimises the error for autocorrelation `r`, and
    /// that error. Stops early (fewer orders) when the error vanishes or the recursion
    /// goes unstable.
    static func levinson(_ r: [Double], maxOrder: Int) -> (coefficients: [[Double]], errors: [Double]) {
        var coefficients: [[Double]] = []
        var errors: [Double] = []
        guard r.count > maxOrder, r[0] > 0 else { return ([], []) }
        var a = [Double](repeating: 0, count: maxOrder)
        var next = a
        var error = r[0]
        for m in 0..<maxOrder {
            var acc = r[m + 1]
            for j in 0..<m { acc -= a[j] * r[m - j] }
            let k = acc / error
            guard k.isFinite, abs(k) < 1 else { break }
            for j in 0..<m { next[j] = a[j] - k * a[m - 1 - j] }
            next[m] = k
            swap(&a, &next)
            error *= 1 - k * k
            guard error > 0 else { break }
            coefficients.append(Array(a[0...m]))
            errors.append(error)
        }
        return (coefficients, errors)
    }

    /// Quantises coefficients to `precision`-bit integers with a common shift (at most
    /// ``maximumShift``), carrying each rounding error into the next coefficient.
    static func quantize(_ c: [Double], precision: Int) -> (coefficients: [Int32], shift: Int) {
        let largest = c.reduce(0.0) { max($0, abs($1)) }
        let limit = Int64(1) << Int64(precision - 1)
        var shift = maximumShift
        if largest > 0 {
            // largest < 2^e, so coefficients · 2^(precision − 1 − e) fit in precision bits.
            let e = Int(largest.exponent) + 1
            shift = min(maximumShift, max(0, precision - 1 - e))
        }
        let scale = Double(Int64(1) << Int64(shift))
        var out = [Int32](repeating: 0, count: c.count)
        var carry = 0.0
        for j in 0..<c.count {
            let v = c[j] * scale + carry
            var q = Int64(v.rounded())
            q = min(max(q, -limit), limit - 1)
            carry = v - Double(q)
            out[j] = Int32(q)
        }
        return (out, shift)
    }
}

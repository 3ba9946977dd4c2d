#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Pyramid vector quantisation (RFC 6716 §4.3.4): the codeword index of K pulses in N
/// dimensions, and the spreading rotation applied to the decoded vector.
enum CELTPVQ {
    /// The largest N and K a codeword can have in Opus's mode: 176 bins (band 20 at LM 3),
    /// 128 pulses (pseudo-pulse 40).
    static let maxN = 176
    static let maxK = 130

    /// U(n, k) of §4.3.4.2 (V(n, k) = U(n, k) + U(n, k + 1) codewords), saturated at 2^33:
    /// U(0, 0) = 1, U(n, 0) = U(0, k) = 0 otherwise, U(n, k) = U(n−1, k) + U(n, k−1) + U(n−1, k−1).
    /// Indexed [k · (maxN + 1) + n], so that the decoder, which walks n down one dimension at
    /// a time, reads neighbouring entries.
    static let u: [UInt64] = {
        let w = maxN + 1
        var t = [UInt64](repeating: 0, count: (maxK + 1) * w)
        t[0] = 1
        for n in 1...maxN {
            for k in 1...maxK {
                let s = t[k * w + n - 1] + t[(k - 1) * w + n] + t[(k - 1) * w + n - 1]
                t[k * w + n] = min(s, 1 << 33)
            }
        }
        return t
    }()

    @inline(__always)
    static func codewords(_ n: Int, _ k: Int) -> UInt64 {
        u.withUnsafeBufferPointer { $0[k * (maxN + 1) + n] + $0[(k + 1) * (maxN + 1) + n] }
    }

    /// Decodes the pulses of one codeword (§4.3.4.2) into `y` and returns Σ y².
    static func decodePulses(_ y: UnsafeMutablePointer<Int32>, n: Int, k: Int, _ rd: inout OpusRangeDecoder) -> Float {
        let total = codewords(n, k)
        // The allocation never asks for codebooks past 32 bits; a damaged stream cannot
        // either (the cache bounds K), but stay safe.
        guard total > 1, total <= UInt64(UInt32.max) else {
            for j in 0..<n { y[j] = 0 }
            y[0] = Int32(k)
            return Float(k * k)
        }
        var i = UInt64(rd.decodeUInt(UInt32(total)))
        var k = k
        var yy: Float = 0
        u.withUnsafeBufferPointer { ub in
            let w = maxN + 1
            var dim = n
            var j = 0
            while dim > 0 {
                let p = ub[(k + 1) * w + dim]
                let negative = i >= p
                if negative { i -= p }
                let k0 = k
                while k > 0, ub[k * w + dim] > i { k -= 1 }
                i -= ub[k * w + dim]
                let v = Int32(k0 - k)
                y[j] = negative ? -v : v
                yy += Float(v) * Float(v)
                j += 1
                dim -= 1
            }
        }
        return yy
    }

    /// The spreading rotation (§4.3.4.3), `forward` false when decoding.
    static func rotate(_ x: UnsafeMutablePointer<Float>, length: Int, forward: Bool, stride: Int, k: Int, spread: Int) {
        guard 2 * k < length, spread != 0 else { return }
        let factor = spread == 1 ? 15 : spread == 2 ? 10 : 5
        let gain = Float(length) / Float(length + factor * k)
        let theta = 0.5 * gain * gain
        let c = cosf(0.5 * Float.pi * theta)
        let s = cosf(0.5 * Float.pi * (1 - theta))
        var stride2 = 0
        if length >= 8 * stride {
            stride2 = 1
            // sqrt(length/stride), rounded.
            while (stride2 * stride2 + stride2) * stride + (stride >> 2) < length { stride2 += 1 }
        }
        let len = length / stride
        for i in 0..<stride {
            let xi = x + i * len
            if !forward {
                if stride2 != 0 { rotate1(xi, len, stride2, s, c) }
                rotate1(xi, len, 1, c, s)
            } else {
                rotate1(xi, len, 1, c, -s)
                if stride2 != 0 { rotate1(xi, len, stride2, s, -c) }
            }
        }
    }

    @inline(__always)
    private static func rotate1(_ x: UnsafeMutablePointer<Float>, _ len: Int, _ stride: Int, _ c: Float, _ s: Float) {
        if len - stride > 0 {
            for i in 0..<(len - stride) {
                let x1 = x[i], x2 = x[i + stride]
                x[i + stride] = c * x2 + s * x1
                x[i] = c * x1 - s * x2
            }
        }
        var i = len - 2 * stride - 1
        while i >= 0 {
            let x1 = x[i], x2 = x[i + stride]
            x[i + stride] = c * x2 + s * x1
            x[i] = c * x1 - s * x2
            i -= 1
        }
    }

    /// alg_unquant: K pulses in N dimensions, scaled to `gain`, rotated; returns the
    /// collapse mask of the B blocks (which of them got pulses).
    static func unquantize(_ x: UnsafeMutablePointer<Float>, n: Int, k: Int, spread: Int, blocks: Int,
                           _ rd: inout OpusRangeDecoder, gain: Float, scratch iy: UnsafeMutablePointer<Int32>) -> UInt32
    {
        let ryy = decodePulses(iy, n: n, k: k, &rd)
        let g = gain / sqrtf(ryy)
        for i in 0..<n { x[i] = g * Float(iy[i]) }
        rotate(x, length: n, forward: false, stride: blocks, k: k, spread: spread)
        if blocks <= 1 { return 1 }
        let n0 = n / blocks
        var mask: UInt32 = 0
        for b in 0..<blocks {
            var any: Int32 = 0
            for j in 0..<n0 { any |= iy[b * n0 + j] }
            if any != 0 { mask |= 1 << UInt32(b) }
        }
        return mask
    }

    /// Scales `x` to norm `gain`.
    static func renormalize(_ x: UnsafeMutablePointer<Float>, n: Int, gain: Float) {
        var e: Float = 1e-15
        for i in 0..<n { e += x[i] * x[i] }
        let g = gain / sqrtf(e)
        for i in 0..<n { x[i] *= g }
    }
}

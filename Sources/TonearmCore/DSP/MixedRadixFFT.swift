#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward complex FFT, X[k] = Σ x[n]·e^(−2πink/N), unscaled, for sizes whose factors are
/// 2, 3, 4 and 5 (CELT's 60, 120, 240 and 480, say), on split real and imaginary arrays.
///
/// Stockham's self-sorting decimation in frequency: each radix-p pass reads one buffer and
/// writes the other, a p-point DFT over inputs m = n/p apart followed by the twiddles
/// w_n^(j·q), so the output comes out in natural order with no digit reversal. Radix 4 is
/// taken first while it divides, then 2, 3 and 5.
///
/// Not thread-safe: one instance per caller (it owns its work buffers).
package final class MixedRadixFFT {
    package let size: Int
    /// The radices, in pass order.
    private let radices: [Int]
    /// Per pass, (p − 1)·m twiddles: w_n^(j·q) for j = 1 ..< p, q < m, at [(j − 1)·m + q].
    private let twiddleRe: [[Float]], twiddleIm: [[Float]]
    private let workRe: UnsafeMutablePointer<Float>, workIm: UnsafeMutablePointer<Float>
    private let bufRe: UnsafeMutablePointer<Float>, bufIm: UnsafeMutablePointer<Float>

    /// nil when `size` has a prime factor other than 2, 3 and 5.
    package init?(size: Int) {
        guard size >= 1, size <= 1 << 20 else { return nil }
        var r: [Int] = []
        var n = size
        while n % 4 == 0 { r.append(4); n /= 4 }
        while n % 2 == 0 { r.append(2); n /= 2 }
        while n % 3 == 0 { r.append(3); n /= 3 }
        while n % 5 == 0 { r.append(5); n /= 5 }
        guard n == 1 else { return nil }
        self.size = size
        radices = r
        var tr: [[Float]] = [], ti: [[Float]] = []
        n = size
        for p in r {
            let m = n / p
            var re = [Float](repeating: 0, count: (p - 1) * m), im = re
            for j in 1..<p {
                for q in 0..<m {
                    let a = -2 * Double.pi * Double(j * q) / Double(n)
                    re[(j - 1) * m + q] = Float(cos(a))
                    im[(j - 1) * m + q] = Float(sin(a))
                }
            }
            tr.append(re)
            ti.append(im)
            n = m
        }
        twiddleRe = tr
        twiddleIm = ti
        workRe = .allocate(capacity: size)
        workIm = .allocate(capacity: size)
        bufRe = .allocate(capacity: size)
        bufIm = .allocate(capacity: size)
    }

    deinit {
        workRe.deallocate()
        workIm.deallocate()
        bufRe.deallocate()
        bufIm.deallocate()
    }

    /// Transforms `re` and `im` (`size` values each) in place.
    package func forward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        var n = size, s = 1
        var srcRe = re, srcIm = im
        var dstRe = workRe, dstIm = workIm
        for pass in radices.indices {  // an index loop: a debug build's enumerated() allocates
            let p = radices[pass]
            let m = n / p
            twiddleRe[pass].withUnsafeBufferPointer { wr in
                twiddleIm[pass].withUnsafeBufferPointer { wi in
                    let wr = wr.baseAddress!, wi = wi.baseAddress!
                    switch p {
                    case 4: Self.radix4(srcRe, srcIm, dstRe, dstIm, m, s, wr, wi)
                    case 2: Self.radix2(srcRe, srcIm, dstRe, dstIm, m, s, wr, wi)
                    case 3: Self.radix3(srcRe, srcIm, dstRe, dstIm, m, s, wr, wi)
                    default: Self.radix5(srcRe, srcIm, dstRe, dstIm, m, s, wr, wi)
                    }
                }
            }
            // Pass k writes the work buffer when k is even, the other one when odd, and the
            // next pass reads what this one wrote.
            srcRe = dstRe; srcIm = dstIm
            let even = pass & 1 == 0
            dstRe = even ? bufRe : workRe
            dstIm = even ? bufIm : workIm
            n = m
            s *= p
        }
        if srcRe != re {
            re.update(from: srcRe, count: size)
            im.update(from: srcIm, count: size)
        }
    }

    @inline(__always)
    private static func radix2(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        for q in 0..<m {
            let w1r = wr[q], w1i = wi[q]
            for r in 0..<s {
                let a = r + s * q, b = a + s * m
                let ar = xr[a], ai = xi[a], br = xr[b], bi = xi[b]
                let o = r + s * 2 * q
                yr[o] = ar + br
                yi[o] = ai + bi
                let dr = ar - br, di = ai - bi
                yr[o + s] = dr * w1r - di * w1i
                yi[o + s] = dr * w1i + di * w1r
            }
        }
    }

    @inline(__always)
    private static func radix4(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        let sm = s * m
        for q in 0..<m {
            let w1r = wr[q], w1i = wi[q], w2r = wr[m + q], w2i = wi[m + q], w3r = wr[2 * m + q], w3i = wi[2 * m + q]
            for r in 0..<s {
                let a = r + s * q
                let x0r = xr[a], x0i = xi[a]
                let x1r = xr[a + sm], x1i = xi[a + sm]
                let x2r = xr[a + 2 * sm], x2i = xi[a + 2 * sm]
                let x3r = xr[a + 3 * sm], x3i = xi[a + 3 * sm]
                let t0r = x0r + x2r, t0i = x0i + x2i
                let t1r = x0r - x2r, t1i = x0i - x2i
                let t2r = x1r + x3r, t2i = x1i + x3i
                // (x1 − x3)·(−i)
                let t3r = x1i - x3i, t3i = x3r - x1r
                let o = r + s * 4 * q
                yr[o] = t0r + t2r
                yi[o] = t0i + t2i
                let b1r = t1r + t3r, b1i = t1i + t3i
                let b2r = t0r - t2r, b2i = t0i - t2i
                let b3r = t1r - t3r, b3i = t1i - t3i
                yr[o + s] = b1r * w1r - b1i * w1i
                yi[o + s] = b1r * w1i + b1i * w1r
                yr[o + 2 * s] = b2r * w2r - b2i * w2i
                yi[o + 2 * s] = b2r * w2i + b2i * w2r
                yr[o + 3 * s] = b3r * w3r - b3i * w3i
                yi[o + 3 * s] = b3r * w3i + b3i * w3r
            }
        }
    }

    @inline(__always)
    private static func radix3(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        let c1: Float = -0.5, s1: Float = -0.866025403784438646763723170752936183
        let sm = s * m
        for q in 0..<m {
            let w1r = wr[q], w1i = wi[q], w2r = wr[m + q], w2i = wi[m + q]
            for r in 0..<s {
                let a = r + s * q
                let x0r = xr[a], x0i = xi[a]
                let x1r = xr[a + sm], x1i = xi[a + sm]
                let x2r = xr[a + 2 * sm], x2i = xi[a + 2 * sm]
                let sr = x1r + x2r, si = x1i + x2i
                let dr = x1r - x2r, di = x1i - x2i
                let mr = x0r + c1 * sr, mi = x0i + c1 * si
                // ±i·s1·(x1 − x2)
                let rr = -s1 * di, ri = s1 * dr
                let o = r + s * 3 * q
                yr[o] = x0r + sr
                yi[o] = x0i + si
                let b1r = mr + rr, b1i = mi + ri
                let b2r = mr - rr, b2i = mi - ri
                yr[o + s] = b1r * w1r - b1i * w1i
                yi[o + s] = b1r * w1i + b1i * w1r
                yr[o + 2 * s] = b2r * w2r - b2i * w2i
                yi[o + 2 * s] = b2r * w2i + b2i * w2r
            }
        }
    }

    @inline(__always)
    private static func radix5(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        // e^(−2πi/5) and e^(−4πi/5).
        let c1: Float = 0.309016994374947424102293417182819059
        let s1: Float = -0.951056516295153572116439333379382143
        let c2: Float = -0.809016994374947424102293417182819059
        let s2: Float = -0.587785252292473129168705954639072769
        let sm = s * m
        for q in 0..<m {
            for r in 0..<s {
                let a = r + s * q
                let x0r = xr[a], x0i = xi[a]
                let x1r = xr[a + sm], x1i = xi[a + sm]
                let x2r = xr[a + 2 * sm], x2i = xi[a + 2 * sm]
                let x3r = xr[a + 3 * sm], x3i = xi[a + 3 * sm]
                let x4r = xr[a + 4 * sm], x4i = xi[a + 4 * sm]
                let a1r = x1r + x4r, a1i = x1i + x4i, b1r = x1r - x4r, b1i = x1i - x4i
                let a2r = x2r + x3r, a2i = x2i + x3i, b2r = x2r - x3r, b2i = x2i - x3i
                let m1r = x0r + c1 * a1r + c2 * a2r, m1i = x0i + c1 * a1i + c2 * a2i
                let m2r = x0r + c2 * a1r + c1 * a2r, m2i = x0i + c2 * a1i + c1 * a2i
                // i·(s1·b1 + s2·b2) and i·(s2·b1 − s1·b2)
                let n1r = -(s1 * b1i + s2 * b2i), n1i = s1 * b1r + s2 * b2r
                let n2r = -(s2 * b1i - s1 * b2i), n2i = s2 * b1r - s1 * b2r
                let o = r + s * 5 * q
                yr[o] = x0r + a1r + a2r
                yi[o] = x0i + a1i + a2i
                let y1r = m1r + n1r, y1i = m1i + n1i
                let y4r = m1r - n1r, y4i = m1i - n1i
                let y2r = m2r + n2r, y2i = m2i + n2i
                let y3r = m2r - n2r, y3i = m2i - n2i
                let w1r = wr[q], w1i = wi[q], w2r = wr[m + q], w2i = wi[m + q]
                let w3r = wr[2 * m + q], w3i = wi[2 * m + q], w4r = wr[3 * m + q], w4i = wi[3 * m + q]
                yr[o + s] = y1r * w1r - y1i * w1i
                yi[o + s] = y1r * w1i + y1i * w1r
                yr[o + 2 * s] = y2r * w2r - y2i * w2i
                yi[o + 2 * s] = y2r * w2i + y2i * w2r
                yr[o + 3 * s] = y3r * w3r - y3i * w3i
                yi[o + 3 * s] = y3r * w3i + y3i * w3r
                yr[o + 4 * s] = y4r * w4r - y4i * w4i
                yi[o + 4 * s] = y4r * w4i + y4i * w4r
            }
        }
    }
}

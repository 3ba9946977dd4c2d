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
                    // Four butterflies at a time where a pass's inner run (s) allows: every
                    // pass after the first for CELT's sizes. Lanes compute as scalars do.
                    if s % 4 == 0 {
                        Self.pass(SIMD4<Float>.self, p, srcRe, srcIm, dstRe, dstIm, m, s, wr, wi)
                    } else {
                        Self.pass(Float.self, p, srcRe, srcIm, dstRe, dstIm, m, s, wr, wi)
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
    private static func pass<V: FFTLane>(_: V.Type, _ p: Int, _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                                         _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                                         _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        switch p {
        case 4: radix4(V.self, xr, xi, yr, yi, m, s, wr, wi)
        case 2: radix2(V.self, xr, xi, yr, yi, m, s, wr, wi)
        case 3: radix3(V.self, xr, xi, yr, yi, m, s, wr, wi)
        default: radix5(V.self, xr, xi, yr, yi, m, s, wr, wi)
        }
    }

    @inline(__always)
    private static func radix2<V: FFTLane>(_: V.Type, _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        for q in 0..<m {
            let w1r = V(wr[q]), w1i = V(wi[q])
            var r = 0
            while r < s {
                defer { r += V.width }
                let a = r + s * q, b = a + s * m
                let ar = V(xr, a), ai = V(xi, a), br = V(xr, b), bi = V(xi, b)
                let o = r + s * 2 * q
                (ar + br).store(yr, o)
                (ai + bi).store(yi, o)
                let dr = ar - br, di = ai - bi
                (dr * w1r - di * w1i).store(yr, o + s)
                (dr * w1i + di * w1r).store(yi, o + s)
            }
        }
    }

    @inline(__always)
    private static func radix4<V: FFTLane>(_: V.Type, _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        let sm = s * m
        for q in 0..<m {
            let w1r = V(wr[q]), w1i = V(wi[q]), w2r = V(wr[m + q]), w2i = V(wi[m + q]), w3r = V(wr[2 * m + q]), w3i = V(wi[2 * m + q])
            var r = 0
            while r < s {
                defer { r += V.width }
                let a = r + s * q
                let x0r = V(xr, a), x0i = V(xi, a)
                let x1r = V(xr, a + sm), x1i = V(xi, a + sm)
                let x2r = V(xr, a + 2 * sm), x2i = V(xi, a + 2 * sm)
                let x3r = V(xr, a + 3 * sm), x3i = V(xi, a + 3 * sm)
                let t0r = x0r + x2r, t0i = x0i + x2i
                let t1r = x0r - x2r, t1i = x0i - x2i
                let t2r = x1r + x3r, t2i = x1i + x3i
                // (x1 − x3)·(−i)
                let t3r = x1i - x3i, t3i = x3r - x1r
                let o = r + s * 4 * q
                (t0r + t2r).store(yr, o)
                (t0i + t2i).store(yi, o)
                let b1r = t1r + t3r, b1i = t1i + t3i
                let b2r = t0r - t2r, b2i = t0i - t2i
                let b3r = t1r - t3r, b3i = t1i - t3i
                (b1r * w1r - b1i * w1i).store(yr, o + s)
                (b1r * w1i + b1i * w1r).store(yi, o + s)
                (b2r * w2r - b2i * w2i).store(yr, o + 2 * s)
                (b2r * w2i + b2i * w2r).store(yi, o + 2 * s)
                (b3r * w3r - b3i * w3i).store(yr, o + 3 * s)
                (b3r * w3i + b3i * w3r).store(yi, o + 3 * s)
            }
        }
    }

    @inline(__always)
    private static func radix3<V: FFTLane>(_: V.Type, _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        let c1 = V(-0.5 as Float), s1 = V(-0.866025403784438646763723170752936183 as Float)
        let sm = s * m
        for q in 0..<m {
            let w1r = V(wr[q]), w1i = V(wi[q]), w2r = V(wr[m + q]), w2i = V(wi[m + q])
            var r = 0
            while r < s {
                defer { r += V.width }
                let a = r + s * q
                let x0r = V(xr, a), x0i = V(xi, a)
                let x1r = V(xr, a + sm), x1i = V(xi, a + sm)
                let x2r = V(xr, a + 2 * sm), x2i = V(xi, a + 2 * sm)
                let sr = x1r + x2r, si = x1i + x2i
                let dr = x1r - x2r, di = x1i - x2i
                let mr = x0r + c1 * sr, mi = x0i + c1 * si
                // ±i·s1·(x1 − x2)
                let rr = -s1 * di, ri = s1 * dr
                let o = r + s * 3 * q
                (x0r + sr).store(yr, o)
                (x0i + si).store(yi, o)
                let b1r = mr + rr, b1i = mi + ri
                let b2r = mr - rr, b2i = mi - ri
                (b1r * w1r - b1i * w1i).store(yr, o + s)
                (b1r * w1i + b1i * w1r).store(yi, o + s)
                (b2r * w2r - b2i * w2i).store(yr, o + 2 * s)
                (b2r * w2i + b2i * w2r).store(yi, o + 2 * s)
            }
        }
    }

    @inline(__always)
    private static func radix5<V: FFTLane>(_: V.Type, _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                               _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
                               _ m: Int, _ s: Int, _ wr: UnsafePointer<Float>, _ wi: UnsafePointer<Float>)
    {
        // e^(−2πi/5) and e^(−4πi/5).
        let c1 = V(0.309016994374947424102293417182819059 as Float)
        let s1 = V(-0.951056516295153572116439333379382143 as Float)
        let c2 = V(-0.809016994374947424102293417182819059 as Float)
        let s2 = V(-0.587785252292473129168705954639072769 as Float)
        let sm = s * m
        for q in 0..<m {
            var r = 0
            while r < s {
                defer { r += V.width }
                let a = r + s * q
                let x0r = V(xr, a), x0i = V(xi, a)
                let x1r = V(xr, a + sm), x1i = V(xi, a + sm)
                let x2r = V(xr, a + 2 * sm), x2i = V(xi, a + 2 * sm)
                let x3r = V(xr, a + 3 * sm), x3i = V(xi, a + 3 * sm)
                let x4r = V(xr, a + 4 * sm), x4i = V(xi, a + 4 * sm)
                let a1r = x1r + x4r, a1i = x1i + x4i, b1r = x1r - x4r, b1i = x1i - x4i
                let a2r = x2r + x3r, a2i = x2i + x3i, b2r = x2r - x3r, b2i = x2i - x3i
                let m1r = x0r + c1 * a1r + c2 * a2r, m1i = x0i + c1 * a1i + c2 * a2i
                let m2r = x0r + c2 * a1r + c1 * a2r, m2i = x0i + c2 * a1i + c1 * a2i
                // i·(s1·b1 + s2·b2) and i·(s2·b1 − s1·b2)
                let n1r = -(s1 * b1i + s2 * b2i), n1i = s1 * b1r + s2 * b2r
                let n2r = -(s2 * b1i - s1 * b2i), n2i = s2 * b1r - s1 * b2r
                let o = r + s * 5 * q
                (x0r + a1r + a2r).store(yr, o)
                (x0i + a1i + a2i).store(yi, o)
                let y1r = m1r + n1r, y1i = m1i + n1i
                let y4r = m1r - n1r, y4i = m1i - n1i
                let y2r = m2r + n2r, y2i = m2i + n2i
                let y3r = m2r - n2r, y3i = m2i - n2i
                let w1r = V(wr[q]), w1i = V(wi[q]), w2r = V(wr[m + q]), w2i = V(wi[m + q])
                let w3r = V(wr[2 * m + q]), w3i = V(wi[2 * m + q]), w4r = V(wr[3 * m + q]), w4i = V(wi[3 * m + q])
                (y1r * w1r - y1i * w1i).store(yr, o + s)
                (y1r * w1i + y1i * w1r).store(yi, o + s)
                (y2r * w2r - y2i * w2i).store(yr, o + 2 * s)
                (y2r * w2i + y2i * w2r).store(yi, o + 2 * s)
                (y3r * w3r - y3i * w3i).store(yr, o + 3 * s)
                (y3r * w3i + y3i * w3r).store(yi, o + 3 * s)
                (y4r * w4r - y4i * w4i).store(yr, o + 4 * s)
                (y4r * w4i + y4i * w4r).store(yi, o + 4 * s)
            }
        }
    }
}

/// What a pass computes with: one Float, or four in SIMD lanes (the same operations, so the
/// same results).
private protocol FFTLane {
    static var width: Int { get }
    /// Broadcasts a constant or a twiddle.
    init(_ value: Float)
    /// Loads from `p + i`.
    init(_ p: UnsafeMutablePointer<Float>, _ i: Int)
    /// Stores at `p + i`.
    func store(_ p: UnsafeMutablePointer<Float>, _ i: Int)
    static func + (a: Self, b: Self) -> Self
    static func - (a: Self, b: Self) -> Self
    static func * (a: Self, b: Self) -> Self
    static prefix func - (a: Self) -> Self
}

extension Float: FFTLane {
    static var width: Int { 1 }
    @inline(__always) init(_ p: UnsafeMutablePointer<Float>, _ i: Int) { self = p[i] }
    @inline(__always) func store(_ p: UnsafeMutablePointer<Float>, _ i: Int) { p[i] = self }
}

extension SIMD4<Float>: FFTLane {
    static var width: Int { 4 }
    @inline(__always) init(_ value: Float) { self.init(repeating: value) }
    @inline(__always) init(_ p: UnsafeMutablePointer<Float>, _ i: Int) {
        self = UnsafeRawPointer(p + i).loadUnaligned(as: SIMD4<Float>.self)
    }
    @inline(__always) func store(_ p: UnsafeMutablePointer<Float>, _ i: Int) {
        UnsafeMutableRawPointer(p + i).storeBytes(of: self, as: SIMD4<Float>.self)
    }
}

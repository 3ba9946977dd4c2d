#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A complex FFT of one power-of-two size on split real and imaginary arrays, unscaled, in
/// place: ``forward(_:_:)`` is X[k] = Σ x[n]·e^(−2πink/N), ``inverse(_:_:)`` the same with
/// e^(+2πink/N).
///
/// Radix-4 passes (and a last radix-8 pass when log₂ N is odd, radix 2 for N = 2 and 8) in
/// Stockham's self-sorting form: each pass reads one buffer and writes the other in natural
/// order, so there is no bit-reversal step. The last pass combines rows that it writes back to the same places, so
/// it runs in place where that saves a copy. Every pass but the first works on four columns
/// at once; the first (one column) works on four rows at once and transposes its output.
///
/// The inverse is the forward transform with the real and imaginary arrays swapped
/// (conj(F(conj x)) = F(x swapped), swapped back), so both directions share one set of
/// twiddles and kernels.
///
/// Not thread-safe: one instance per caller (it owns a work buffer). Sizes 2 … 2^20.
package final class FFT {
    package let size: Int
    /// Per radix-4 pass of length L (m = L/4): w^p, w^2p, w^3p for p < m, w = e^(−2πi/L), as
    /// six runs of m floats (re and im of each), one pass after the other.
    private let twiddles: UnsafeMutablePointer<Float>
    private let workRe: UnsafeMutablePointer<Float>, workIm: UnsafeMutablePointer<Float>
    private let radix4Passes: Int
    /// The radix of the pass after the radix-4 ones: 8 or 2, or 1 for none.
    private let tailRadix: Int

    package init(size: Int) {
        precondition(size >= 2 && size <= 1 << 20 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        let log2 = size.trailingZeroBitCount
        if log2 & 1 == 0 {
            radix4Passes = log2 / 2
            tailRadix = 1
        } else if log2 >= 5 {
            // The radix-8 pass works on four or more columns.
            radix4Passes = (log2 - 3) / 2
            tailRadix = 8
        } else {
            radix4Passes = log2 / 2
            tailRadix = 2
        }
        var count = 0
        var length = size
        for _ in 0..<radix4Passes {
            count += 6 * (length / 4)
            length /= 4
        }
        twiddles = .allocate(capacity: max(count, 1))
        var at = 0
        length = size
        for _ in 0..<radix4Passes {
            let m = length / 4
            for p in 0..<m {
                for r in 1...3 {
                    let angle = -2 * Double.pi * Double(r * p) / Double(length)
                    twiddles[at + (2 * r - 2) * m + p] = Float(cos(angle))
                    twiddles[at + (2 * r - 1) * m + p] = Float(sin(angle))
                }
            }
            at += 6 * m
            length = m
        }
        workRe = .allocate(capacity: size)
        workIm = .allocate(capacity: size)
        workRe.initialize(repeating: 0, count: size)
        workIm.initialize(repeating: 0, count: size)
    }

    deinit {
        twiddles.deallocate()
        workRe.deallocate()
        workIm.deallocate()
    }

    /// X[k] = Σ x[n]·e^(−2πink/N), in place over `size` values each.
    @inline(__always)
    package func forward(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        run(re, im)
    }

    /// X[k] = Σ x[n]·e^(+2πink/N), unscaled, in place over `size` values each.
    @inline(__always)
    package func inverse(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        run(im, re)
    }

    private func run(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        let n = size, wr = workRe, wi = workIm
        var tw = twiddles
        let passes = radix4Passes &+ (tailRadix > 1 ? 1 : 0)
        // All passes but the last go back and forth between the data and the work buffer,
        // starting with a write into the work buffer; the last one ends in the data.
        var xr = re, xi = im, yr = wr, yi = wi
        var length = n, stride = 1
        for pass in 0..<passes {
            let last = pass == passes &- 1
            if last { yr = re; yi = im }
            if pass < radix4Passes {
                let m = length >> 2
                if stride >= 4 {
                    if m == 1 {
                        Self.radix4Last(xr, xi, yr, yi, stride)
                    } else {
                        Self.radix4Columns(xr, xi, yr, yi, m, stride, tw)
                    }
                } else if m >= 4 {
                    Self.radix4Rows(xr, xi, yr, yi, m, tw)
                } else {
                    Self.radix4Scalar(xr, xi, yr, yi, m, stride, tw)
                }
                tw += 6 &* m
                length = m
                stride &<<= 2
            } else if tailRadix == 8 {
                Self.radix8Last(xr, xi, yr, yi, stride)
            } else {
                Self.radix2Last(xr, xi, yr, yi, stride)
            }
            if !last {
                xr = yr; xi = yi
                yr = xr == re ? wr : re
                yi = xi == im ? wi : im
            }
        }
    }

    /// A radix-4 pass over `stride` ≥ 4 columns: rows p, p + m, p + 2m, p + 3m become rows
    /// 4p … 4p + 3, the last three turned by w^p, w^2p, w^3p.
    private static func radix4Columns(
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
        _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
        _ m: Int, _ s: Int, _ tw: UnsafeMutablePointer<Float>
    ) {
        let ms = m &* s
        for p in 0..<m {
            let w1r = SIMD4<Float>(repeating: tw[p]), w1i = SIMD4<Float>(repeating: tw[m &+ p])
            let w2r = SIMD4<Float>(repeating: tw[2 &* m &+ p]), w2i = SIMD4<Float>(repeating: tw[3 &* m &+ p])
            let w3r = SIMD4<Float>(repeating: tw[4 &* m &+ p]), w3i = SIMD4<Float>(repeating: tw[5 &* m &+ p])
            let a = xr + p &* s, b = xi + p &* s
            let c = yr + 4 &* p &* s, d = yi + 4 &* p &* s
            var q = 0
            while q < s {
                let a0r = loadFloat4(a + q), a0i = loadFloat4(b + q)
                let a1r = loadFloat4(a + (q &+ ms)), a1i = loadFloat4(b + (q &+ ms))
                let a2r = loadFloat4(a + (q &+ 2 &* ms)), a2i = loadFloat4(b + (q &+ 2 &* ms))
                let a3r = loadFloat4(a + (q &+ 3 &* ms)), a3i = loadFloat4(b + (q &+ 3 &* ms))
                let t0r = a0r + a2r, t0i = a0i + a2i
                let t1r = a0r - a2r, t1i = a0i - a2i
                let t2r = a1r + a3r, t2i = a1i + a3i
                let t3r = a1r - a3r, t3i = a1i - a3i
                storeFloats(t0r + t2r, c + q)
                storeFloats(t0i + t2i, d + q)
                // y1 = t1 − i·t3, y2 = t0 − t2, y3 = t1 + i·t3, then the twiddles.
                let y1r = t1r + t3i, y1i = t1i - t3r
                let y2r = t0r - t2r, y2i = t0i - t2i
                let y3r = t1r - t3i, y3i = t1i + t3r
                storeFloats(y1r * w1r - y1i * w1i, c + (q &+ s))
                storeFloats(y1r * w1i + y1i * w1r, d + (q &+ s))
                storeFloats(y2r * w2r - y2i * w2i, c + (q &+ 2 &* s))
                storeFloats(y2r * w2i + y2i * w2r, d + (q &+ 2 &* s))
                storeFloats(y3r * w3r - y3i * w3i, c + (q &+ 3 &* s))
                storeFloats(y3r * w3i + y3i * w3r, d + (q &+ 3 &* s))
                q &+= 4
            }
        }
    }

    /// The last radix-4 pass (m = 1, no twiddles): it may run in place.
    private static func radix4Last(
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
        _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>, _ s: Int
    ) {
        var q = 0
        while q < s {
            let a0r = loadFloat4(xr + q), a0i = loadFloat4(xi + q)
            let a1r = loadFloat4(xr + (q &+ s)), a1i = loadFloat4(xi + (q &+ s))
            let a2r = loadFloat4(xr + (q &+ 2 &* s)), a2i = loadFloat4(xi + (q &+ 2 &* s))
            let a3r = loadFloat4(xr + (q &+ 3 &* s)), a3i = loadFloat4(xi + (q &+ 3 &* s))
            let t0r = a0r + a2r, t0i = a0i + a2i
            let t1r = a0r - a2r, t1i = a0i - a2i
            let t2r = a1r + a3r, t2i = a1i + a3i
            let t3r = a1r - a3r, t3i = a1i - a3i
            storeFloats(t0r + t2r, yr + q)
            storeFloats(t0i + t2i, yi + q)
            storeFloats(t1r + t3i, yr + (q &+ s))
            storeFloats(t1i - t3r, yi + (q &+ s))
            storeFloats(t0r - t2r, yr + (q &+ 2 &* s))
            storeFloats(t0i - t2i, yi + (q &+ 2 &* s))
            storeFloats(t1r - t3i, yr + (q &+ 3 &* s))
            storeFloats(t1i + t3r, yi + (q &+ 3 &* s))
            q &+= 4
        }
    }

    /// The first radix-4 pass (one column, m ≥ 4): four rows p at once, each quartet of
    /// outputs 4p … 4p + 3 stored through a 4 × 4 transpose.
    private static func radix4Rows(
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
        _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
        _ m: Int, _ tw: UnsafeMutablePointer<Float>
    ) {
        var p = 0
        while p < m {
            let a0r = loadFloat4(xr + p), a0i = loadFloat4(xi + p)
            let a1r = loadFloat4(xr + (p &+ m)), a1i = loadFloat4(xi + (p &+ m))
            let a2r = loadFloat4(xr + (p &+ 2 &* m)), a2i = loadFloat4(xi + (p &+ 2 &* m))
            let a3r = loadFloat4(xr + (p &+ 3 &* m)), a3i = loadFloat4(xi + (p &+ 3 &* m))
            let t0r = a0r + a2r, t0i = a0i + a2i
            let t1r = a0r - a2r, t1i = a0i - a2i
            let t2r = a1r + a3r, t2i = a1i + a3i
            let t3r = a1r - a3r, t3i = a1i - a3i
            let y0r = t0r + t2r, y0i = t0i + t2i
            let y1r = t1r + t3i, y1i = t1i - t3r
            let y2r = t0r - t2r, y2i = t0i - t2i
            let y3r = t1r - t3i, y3i = t1i + t3r
            let w1r = loadFloat4(tw + p), w1i = loadFloat4(tw + (m &+ p))
            let w2r = loadFloat4(tw + (2 &* m &+ p)), w2i = loadFloat4(tw + (3 &* m &+ p))
            let w3r = loadFloat4(tw + (4 &* m &+ p)), w3i = loadFloat4(tw + (5 &* m &+ p))
            let z1r = y1r * w1r - y1i * w1i, z1i = y1r * w1i + y1i * w1r
            let z2r = y2r * w2r - y2i * w2i, z2i = y2r * w2i + y2i * w2r
            let z3r = y3r * w3r - y3i * w3i, z3i = y3r * w3i + y3i * w3r
            transposeStore(y0r, z1r, z2r, z3r, yr + 4 &* p, y0i, z1i, z2i, z3i, yi + 4 &* p)
            p &+= 4
        }
    }

    /// Stores lane j of a, b, c, d at `out` + 4j … 4j + 3, and of e, f, g, h at `out2`.
    ///
    /// Not inlined on purpose: when the optimiser sees these lane moves next to the
    /// butterflies it scalarises the butterflies lane by lane (three times the instructions,
    /// and spills); across a call the arithmetic stays in vectors and this stays shuffles.
    @inline(never)
    private static func transposeStore(
        _ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>, _ d: SIMD4<Float>, _ out: UnsafeMutablePointer<Float>,
        _ e: SIMD4<Float>, _ f: SIMD4<Float>, _ g: SIMD4<Float>, _ h: SIMD4<Float>, _ out2: UnsafeMutablePointer<Float>
    ) {
        transpose(a, b, c, d, out)
        transpose(e, f, g, h, out2)
    }

    @inline(__always)
    private static func transpose(
        _ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>, _ d: SIMD4<Float>, _ out: UnsafeMutablePointer<Float>
    ) {
        // Two rounds of even/odd lane selection, whole-vector shuffles.
        let ab = SIMD8(lowHalf: a, highHalf: b), cd = SIMD8(lowHalf: c, highHalf: d)
        let e = ab.evenHalf, f = ab.oddHalf, g = cd.evenHalf, h = cd.oddHalf
        storeFloats(SIMD8(lowHalf: e, highHalf: g).evenHalf, out)
        storeFloats(SIMD8(lowHalf: f, highHalf: h).evenHalf, out + 4)
        storeFloats(SIMD8(lowHalf: e, highHalf: g).oddHalf, out + 8)
        storeFloats(SIMD8(lowHalf: f, highHalf: h).oddHalf, out + 12)
    }

    /// A radix-4 pass, one value at a time: the small sizes' first pass.
    private static func radix4Scalar(
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
        _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>,
        _ m: Int, _ s: Int, _ tw: UnsafeMutablePointer<Float>
    ) {
        let ms = m &* s
        for p in 0..<m {
            let w1r = tw[p], w1i = tw[m &+ p]
            let w2r = tw[2 &* m &+ p], w2i = tw[3 &* m &+ p]
            let w3r = tw[4 &* m &+ p], w3i = tw[5 &* m &+ p]
            for q in 0..<s {
                let i = p &* s &+ q, o = 4 &* p &* s &+ q
                let a0r = xr[i], a0i = xi[i]
                let a1r = xr[i &+ ms], a1i = xi[i &+ ms]
                let a2r = xr[i &+ 2 &* ms], a2i = xi[i &+ 2 &* ms]
                let a3r = xr[i &+ 3 &* ms], a3i = xi[i &+ 3 &* ms]
                let t0r = a0r + a2r, t0i = a0i + a2i
                let t1r = a0r - a2r, t1i = a0i - a2i
                let t2r = a1r + a3r, t2i = a1i + a3i
                let t3r = a1r - a3r, t3i = a1i - a3i
                let y1r = t1r + t3i, y1i = t1i - t3r
                let y2r = t0r - t2r, y2i = t0i - t2i
                let y3r = t1r - t3i, y3i = t1i + t3r
                yr[o] = t0r + t2r
                yi[o] = t0i + t2i
                yr[o &+ s] = y1r * w1r - y1i * w1i
                yi[o &+ s] = y1r * w1i + y1i * w1r
                yr[o &+ 2 &* s] = y2r * w2r - y2i * w2i
                yi[o &+ 2 &* s] = y2r * w2i + y2i * w2r
                yr[o &+ 3 &* s] = y3r * w3r - y3i * w3i
                yi[o &+ 3 &* s] = y3r * w3i + y3i * w3r
            }
        }
    }

    /// The radix-8 pass of odd log₂ N ≥ 5, always the last (L = 8, no twiddles between
    /// passes), over `s` ≥ 4 columns: it may run in place. Two 4-point DFTs of the even and
    /// odd rows, joined through e^(−2πik/8).
    private static func radix8Last(
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
        _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>, _ s: Int
    ) {
        let h = SIMD4<Float>(repeating: Float(0.5.squareRoot()))
        var q = 0
        while q < s {
            // Rows 0, 2, 4, 6.
            let a0r = loadFloat4(xr + q), a0i = loadFloat4(xi + q)
            let a2r = loadFloat4(xr + (q &+ 2 &* s)), a2i = loadFloat4(xi + (q &+ 2 &* s))
            let a4r = loadFloat4(xr + (q &+ 4 &* s)), a4i = loadFloat4(xi + (q &+ 4 &* s))
            let a6r = loadFloat4(xr + (q &+ 6 &* s)), a6i = loadFloat4(xi + (q &+ 6 &* s))
            let e0r = a0r + a4r, e0i = a0i + a4i, e1r = a0r - a4r, e1i = a0i - a4i
            let e2r = a2r + a6r, e2i = a2i + a6i, e3r = a2r - a6r, e3i = a2i - a6i
            let E0r = e0r + e2r, E0i = e0i + e2i
            let E1r = e1r + e3i, E1i = e1i - e3r
            let E2r = e0r - e2r, E2i = e0i - e2i
            let E3r = e1r - e3i, E3i = e1i + e3r
            // Rows 1, 3, 5, 7.
            let a1r = loadFloat4(xr + (q &+ s)), a1i = loadFloat4(xi + (q &+ s))
            let a3r = loadFloat4(xr + (q &+ 3 &* s)), a3i = loadFloat4(xi + (q &+ 3 &* s))
            let a5r = loadFloat4(xr + (q &+ 5 &* s)), a5i = loadFloat4(xi + (q &+ 5 &* s))
            let a7r = loadFloat4(xr + (q &+ 7 &* s)), a7i = loadFloat4(xi + (q &+ 7 &* s))
            let o0r = a1r + a5r, o0i = a1i + a5i, o1r = a1r - a5r, o1i = a1i - a5i
            let o2r = a3r + a7r, o2i = a3i + a7i, o3r = a3r - a7r, o3i = a3i - a7i
            let O0r = o0r + o2r, O0i = o0i + o2i
            let O1r = o1r + o3i, O1i = o1i - o3r
            let O2r = o0r - o2r, O2i = o0i - o2i
            let O3r = o1r - o3i, O3i = o1i + o3r
            // O1·(1 − i)/√2, O2·(−i), O3·(−1 − i)/√2.
            let P1r = (O1r + O1i) * h, P1i = (O1i - O1r) * h
            let P3r = (O3i - O3r) * h, P3i = (O3r + O3i) * -h
            storeFloats(E0r + O0r, yr + q)
            storeFloats(E0i + O0i, yi + q)
            storeFloats(E1r + P1r, yr + (q &+ s))
            storeFloats(E1i + P1i, yi + (q &+ s))
            storeFloats(E2r + O2i, yr + (q &+ 2 &* s))
            storeFloats(E2i - O2r, yi + (q &+ 2 &* s))
            storeFloats(E3r + P3r, yr + (q &+ 3 &* s))
            storeFloats(E3i + P3i, yi + (q &+ 3 &* s))
            storeFloats(E0r - O0r, yr + (q &+ 4 &* s))
            storeFloats(E0i - O0i, yi + (q &+ 4 &* s))
            storeFloats(E1r - P1r, yr + (q &+ 5 &* s))
            storeFloats(E1i - P1i, yi + (q &+ 5 &* s))
            storeFloats(E2r - O2i, yr + (q &+ 6 &* s))
            storeFloats(E2i + O2r, yi + (q &+ 6 &* s))
            storeFloats(E3r - P3r, yr + (q &+ 7 &* s))
            storeFloats(E3i - P3i, yi + (q &+ 7 &* s))
            q &+= 4
        }
    }

    /// The radix-2 pass of odd log₂ N, always the last (L = 2, no twiddles): it may run in place.
    private static func radix2Last(
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
        _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>, _ s: Int
    ) {
        if s < 4 {
            for q in 0..<s {
                let ar = xr[q], ai = xi[q], br = xr[q &+ s], bi = xi[q &+ s]
                yr[q] = ar + br
                yi[q] = ai + bi
                yr[q &+ s] = ar - br
                yi[q &+ s] = ai - bi
            }
            return
        }
        var q = 0
        while q < s {
            let ar = loadFloat4(xr + q), ai = loadFloat4(xi + q)
            let br = loadFloat4(xr + (q &+ s)), bi = loadFloat4(xi + (q &+ s))
            storeFloats(ar + br, yr + q)
            storeFloats(ai + bi, yi + q)
            storeFloats(ar - br, yr + (q &+ s))
            storeFloats(ai - bi, yi + (q &+ s))
            q &+= 4
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// ``FFT``'s transform in Double: a complex FFT of one power-of-two size on split real and
/// imaginary arrays, unscaled, in place. ``forward(_:_:)`` is X[k] = Σ x[n]·e^(−2πink/N),
/// ``inverse(_:_:)`` the same with e^(+2πink/N).
///
/// For the work whose rounding must stay far under Float's: the resampler's FFT stage, which
/// carries a 150 dB filter (a Float transform's rounding alone shows near −138 dB there).
///
/// Radix-4 passes in Stockham's self-sorting form (each pass reads one buffer and writes the
/// other in natural order), then a radix-2 pass when log₂ N is odd. Passes over two or more
/// columns work on two columns at once (SSE2's and NEON's width for Double); the first pass
/// (one column) works on two rows at once, and a last radix-4 pass (whose twiddles are all
/// 1) skips the products. The inverse is the forward transform with the real and imaginary
/// arrays swapped.
///
/// Not thread-safe: one instance per caller (it owns a work buffer). Sizes 2 … 2^20.
package final class DoubleFFT {
    package let size: Int
    /// Per radix-4 pass of length L (m = L/4): w^p, w^2p, w^3p for p < m, w = e^(−2πi/L), as
    /// six runs of m values (re and im of each), one pass after the other.
    private let twiddles: UnsafeMutablePointer<Double>
    private let workRe: UnsafeMutablePointer<Double>, workIm: UnsafeMutablePointer<Double>
    private let radix4Passes: Int
    private let radix2Last: Bool

    package init(size: Int) {
        precondition(size >= 2 && size <= 1 << 20 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        let log2 = size.trailingZeroBitCount
        radix4Passes = log2 / 2
        radix2Last = log2 & 1 == 1
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
                    twiddles[at + (2 * r - 2) * m + p] = cos(angle)
                    twiddles[at + (2 * r - 1) * m + p] = sin(angle)
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
    package func forward(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>) {
        run(re, im)
    }

    /// X[k] = Σ x[n]·e^(+2πink/N), unscaled, in place over `size` values each.
    package func inverse(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>) {
        run(im, re)
    }

    private func run(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>) {
        let passes = radix4Passes &+ (radix2Last ? 1 : 0)
        // Back and forth between the data and the work buffer; the last pass writes the data
        // (the radix-2 pass, and a radix-4 pass of m = 1, may run in place).
        var xr = re, xi = im, yr = workRe, yi = workIm
        var tw = twiddles
        var length = size, stride = 1
        for pass in 0..<passes {
            let last = pass == passes &- 1
            if last { yr = re; yi = im }
            if pass < radix4Passes {
                let m = length >> 2
                if stride >= 2 && m == 1 {
                    Self.radix4Last(xr, xi, yr, yi, stride)
                } else if stride >= 2 {
                    Self.radix4Columns(xr, xi, yr, yi, m, stride, tw)
                } else {
                    Self.radix4Rows(xr, xi, yr, yi, m, tw)
                }
                tw += 6 &* m
                length = m
                stride &<<= 2
            } else {
                Self.radix2(xr, xi, yr, yi, stride)
            }
            if !last {
                xr = yr; xi = yi
                yr = xr == re ? workRe : re
                yi = xi == im ? workIm : im
            }
        }
    }

    @inline(__always)
    private static func load(_ p: UnsafeMutablePointer<Double>) -> SIMD2<Double> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD2<Double>.self)
    }

    @inline(__always)
    private static func store(_ v: SIMD2<Double>, _ p: UnsafeMutablePointer<Double>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD2<Double>.self)
    }

    /// A radix-4 pass over `s` ≥ 2 columns: rows p, p + m, p + 2m, p + 3m become rows
    /// 4p … 4p + 3, the last three turned by w^p, w^2p, w^3p.
    private static func radix4Columns(
        _ xr: UnsafeMutablePointer<Double>, _ xi: UnsafeMutablePointer<Double>,
        _ yr: UnsafeMutablePointer<Double>, _ yi: UnsafeMutablePointer<Double>,
        _ m: Int, _ s: Int, _ tw: UnsafeMutablePointer<Double>
    ) {
        let ms = m &* s
        for p in 0..<m {
            let w1r = SIMD2<Double>(repeating: tw[p]), w1i = SIMD2<Double>(repeating: tw[m &+ p])
            let w2r = SIMD2<Double>(repeating: tw[2 &* m &+ p]), w2i = SIMD2<Double>(repeating: tw[3 &* m &+ p])
            let w3r = SIMD2<Double>(repeating: tw[4 &* m &+ p]), w3i = SIMD2<Double>(repeating: tw[5 &* m &+ p])
            let a = xr + p &* s, b = xi + p &* s
            let c = yr + 4 &* p &* s, d = yi + 4 &* p &* s
            var q = 0
            while q < s {
                let a0r = load(a + q), a0i = load(b + q)
                let a1r = load(a + (q &+ ms)), a1i = load(b + (q &+ ms))
                let a2r = load(a + (q &+ 2 &* ms)), a2i = load(b + (q &+ 2 &* ms))
                let a3r = load(a + (q &+ 3 &* ms)), a3i = load(b + (q &+ 3 &* ms))
                let t0r = a0r + a2r, t0i = a0i + a2i
                let t1r = a0r - a2r, t1i = a0i - a2i
                let t2r = a1r + a3r, t2i = a1i + a3i
                let t3r = a1r - a3r, t3i = a1i - a3i
                // y1 = t1 − i·t3, y2 = t0 − t2, y3 = t1 + i·t3, then the twiddles.
                let y1r = t1r + t3i, y1i = t1i - t3r
                let y2r = t0r - t2r, y2i = t0i - t2i
                let y3r = t1r - t3i, y3i = t1i + t3r
                store(t0r + t2r, c + q)
                store(t0i + t2i, d + q)
                store(y1r * w1r - y1i * w1i, c + (q &+ s))
                store(y1r * w1i + y1i * w1r, d + (q &+ s))
                store(y2r * w2r - y2i * w2i, c + (q &+ 2 &* s))
                store(y2r * w2i + y2i * w2r, d + (q &+ 2 &* s))
                store(y3r * w3r - y3i * w3i, c + (q &+ 3 &* s))
                store(y3r * w3i + y3i * w3r, d + (q &+ 3 &* s))
                q &+= 2
            }
        }
    }

    /// The last radix-4 pass (m = 1: every twiddle is 1), over `s` ≥ 2 columns. Each column
    /// is read before it is written, so it may run in place.
    private static func radix4Last(
        _ xr: UnsafeMutablePointer<Double>, _ xi: UnsafeMutablePointer<Double>,
        _ yr: UnsafeMutablePointer<Double>, _ yi: UnsafeMutablePointer<Double>, _ s: Int
    ) {
        var q = 0
        while q < s {
            let a0r = load(xr + q), a0i = load(xi + q)
            let a1r = load(xr + (q &+ s)), a1i = load(xi + (q &+ s))
            let a2r = load(xr + (q &+ 2 &* s)), a2i = load(xi + (q &+ 2 &* s))
            let a3r = load(xr + (q &+ 3 &* s)), a3i = load(xi + (q &+ 3 &* s))
            let t0r = a0r + a2r, t0i = a0i + a2i
            let t1r = a0r - a2r, t1i = a0i - a2i
            let t2r = a1r + a3r, t2i = a1i + a3i
            let t3r = a1r - a3r, t3i = a1i - a3i
            store(t0r + t2r, yr + q)
            store(t0i + t2i, yi + q)
            store(t1r + t3i, yr + (q &+ s))
            store(t1i - t3r, yi + (q &+ s))
            store(t0r - t2r, yr + (q &+ 2 &* s))
            store(t0i - t2i, yi + (q &+ 2 &* s))
            store(t1r - t3i, yr + (q &+ 3 &* s))
            store(t1i + t3r, yi + (q &+ 3 &* s))
            q &+= 2
        }
    }

    /// The first radix-4 pass (one column): two rows p at once, each output quartet
    /// 4p … 4p + 3 stored value by value. N = 4 (m = 1) runs one row.
    private static func radix4Rows(
        _ xr: UnsafeMutablePointer<Double>, _ xi: UnsafeMutablePointer<Double>,
        _ yr: UnsafeMutablePointer<Double>, _ yi: UnsafeMutablePointer<Double>,
        _ m: Int, _ tw: UnsafeMutablePointer<Double>
    ) {
        if m == 1 {
            let t0r = xr[0] + xr[2], t0i = xi[0] + xi[2], t1r = xr[0] - xr[2], t1i = xi[0] - xi[2]
            let t2r = xr[1] + xr[3], t2i = xi[1] + xi[3], t3r = xr[1] - xr[3], t3i = xi[1] - xi[3]
            yr[0] = t0r + t2r; yi[0] = t0i + t2i
            yr[1] = t1r + t3i; yi[1] = t1i - t3r
            yr[2] = t0r - t2r; yi[2] = t0i - t2i
            yr[3] = t1r - t3i; yi[3] = t1i + t3r
            return
        }
        var p = 0
        while p < m {
            let a0r = load(xr + p), a0i = load(xi + p)
            let a1r = load(xr + (p &+ m)), a1i = load(xi + (p &+ m))
            let a2r = load(xr + (p &+ 2 &* m)), a2i = load(xi + (p &+ 2 &* m))
            let a3r = load(xr + (p &+ 3 &* m)), a3i = load(xi + (p &+ 3 &* m))
            let t0r = a0r + a2r, t0i = a0i + a2i
            let t1r = a0r - a2r, t1i = a0i - a2i
            let t2r = a1r + a3r, t2i = a1i + a3i
            let t3r = a1r - a3r, t3i = a1i - a3i
            let y0r = t0r + t2r, y0i = t0i + t2i
            let y1r = t1r + t3i, y1i = t1i - t3r
            let y2r = t0r - t2r, y2i = t0i - t2i
            let y3r = t1r - t3i, y3i = t1i + t3r
            let w1r = load(tw + p), w1i = load(tw + (m &+ p))
            let w2r = load(tw + (2 &* m &+ p)), w2i = load(tw + (3 &* m &+ p))
            let w3r = load(tw + (4 &* m &+ p)), w3i = load(tw + (5 &* m &+ p))
            let z1r = y1r * w1r - y1i * w1i, z1i = y1r * w1i + y1i * w1r
            let z2r = y2r * w2r - y2i * w2i, z2i = y2r * w2i + y2i * w2r
            let z3r = y3r * w3r - y3i * w3i, z3i = y3r * w3i + y3i * w3r
            // Row p's quartet, then row p + 1's: pairs (y0, z1) and (z2, z3) of each lane.
            let o = yr + 4 &* p, oi = yi + 4 &* p
            store(SIMD2(y0r[0], z1r[0]), o)
            store(SIMD2(z2r[0], z3r[0]), o + 2)
            store(SIMD2(y0r[1], z1r[1]), o + 4)
            store(SIMD2(z2r[1], z3r[1]), o + 6)
            store(SIMD2(y0i[0], z1i[0]), oi)
            store(SIMD2(z2i[0], z3i[0]), oi + 2)
            store(SIMD2(y0i[1], z1i[1]), oi + 4)
            store(SIMD2(z2i[1], z3i[1]), oi + 6)
            p &+= 2
        }
    }

    /// The radix-2 pass of odd log₂ N, always the last (L = 2, no twiddles): it may run in place.
    private static func radix2(
        _ xr: UnsafeMutablePointer<Double>, _ xi: UnsafeMutablePointer<Double>,
        _ yr: UnsafeMutablePointer<Double>, _ yi: UnsafeMutablePointer<Double>, _ s: Int
    ) {
        if s < 2 {
            let ar = xr[0], ai = xi[0], br = xr[1], bi = xi[1]
            yr[0] = ar + br; yi[0] = ai + bi
            yr[1] = ar - br; yi[1] = ai - bi
            return
        }
        var q = 0
        while q < s {
            let ar = load(xr + q), ai = load(xi + q)
            let br = load(xr + (q &+ s)), bi = load(xi + (q &+ s))
            store(ar + br, yr + q)
            store(ai + bi, yi + q)
            store(ar - br, yr + (q &+ s))
            store(ai - bi, yi + (q &+ s))
            q &+= 2
        }
    }
}

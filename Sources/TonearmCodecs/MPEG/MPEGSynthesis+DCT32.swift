extension MPEGSynthesisFilter {
    /// The factors of Lee's factorisation (B. G. Lee, 1984), 1 / (2cos((2k + 1)π / 2n)) for
    /// n = 32 (k = 0…15), 16 (0…7), 8 (0…3), 4 (0, 1) and 2 (0), in that order.
    static let leeFactors: [Float] = [
        0.5006029982351963, 0.5054709598975436, 0.5154473099226246, 0.5310425910897841,
        0.5531038960344445, 0.5829349682061339, 0.6225041230356648, 0.6748083414550057,
        0.7445362710022986, 0.8393496454155268, 0.9725682378619608, 1.1694399334328847,
        1.4841646163141662, 2.057781009953411, 3.407608418468719, 10.190008123548033,
        0.5024192861881557, 0.5224986149396889, 0.5669440348163577, 0.6468217833599901,
        0.7881546234512502, 1.060677685990347, 1.7224470982383342, 5.101148618689155,
        0.5097955791041592, 0.6013448869350453, 0.8999762231364156, 2.5629154477415055,
        0.541196100146197, 1.3065629648763764,
        0.7071067811865475,
    ]

    /// The matrixing's DCT-II, C[m] = Σ x[k] cos((2k + 1)mπ/64) for m = 0…31, of four time
    /// slots at once (lane j holds slot j): `lanes[0…31]` in, `lanes[32…63]` out,
    /// `lanes[64…127]` scratch.
    ///
    /// Lee's factorisation splits an n-point DCT-II into two n/2-point ones: the sums
    /// x[k] + x[n − 1 − k] give the even outputs; the differences, scaled by
    /// 1 / (2cos((2k + 1)π/2n)), give the odd ones, added pairwise (out[2m + 1] = B[m] + B[m + 1],
    /// the last alone). The two top levels run as loops through memory and the four
    /// 8-point transforms as straight code, so that no more values are live than there are
    /// registers (written out whole, the compiler kept 32 and more and spilled and shuffled
    /// them). 80 multiplies and 209 additions, each lane's in the order of the recursion.
    @inline(never)
    func dct32() {
        let x = UnsafePointer(lanes), c = lanes + 32, s = lanes + 64, u = lanes + 96, f = factors
        // n = 32: sums to s[0…15], scaled differences to s[16…31].
        for k in 0..<16 {
            let a = x[k], b = x[31 &- k]
            s[k] = a + b
            s[16 &+ k] = (a - b) * f[k]
        }
        // n = 16, on each half of s, into u.
        for half in 0..<2 {
            let h = half &* 16
            for k in 0..<8 {
                let a = s[h &+ k], b = s[h &+ 15 &- k]
                u[h &+ k] = a + b
                u[h &+ 8 &+ k] = (a - b) * f[16 &+ k]
            }
        }
        // The four 8-point transforms, each in place.
        Self.dct8(u, f + 24); Self.dct8(u + 8, f + 24); Self.dct8(u + 16, f + 24); Self.dct8(u + 24, f + 24)
        // The 16-point transform of the differences from its two halves, into s[0…15]...
        let r = UnsafePointer(u + 16), q = UnsafePointer(u + 24)
        for m in 0..<7 {
            s[2 &* m] = r[m]
            s[2 &* m &+ 1] = q[m] + q[m &+ 1]
        }
        s[14] = r[7]; s[15] = q[7]
        // ...and the 32 outputs: the sums' 16-point transform at even m, from u[0…15] the
        // same way, the differences' pairwise at odd m.
        let p = UnsafePointer(u), e = UnsafePointer(u + 8)
        for m in 0..<7 {
            c[4 &* m] = p[m]
            c[4 &* m &+ 2] = e[m] + e[m &+ 1]
        }
        c[28] = p[7]; c[30] = e[7]
        for m in 0..<15 { c[2 &* m &+ 1] = s[m] + s[m &+ 1] }
        c[31] = s[15]
    }

    /// The 8-point DCT-II of `y[0…7]` in place, Lee's way, with `f` the factors for n = 8,
    /// 4 and 2.
    @inline(__always)
    private static func dct8(_ y: UnsafeMutablePointer<SIMD4<Float>>, _ f: UnsafePointer<SIMD4<Float>>) {
        let y0 = y[0], y1 = y[1], y2 = y[2], y3 = y[3], y4 = y[4], y5 = y[5], y6 = y[6], y7 = y[7]
        let a0 = y0 + y7, a1 = y1 + y6, a2 = y2 + y5, a3 = y3 + y4
        let b0 = (y0 - y7) * f[0], b1 = (y1 - y6) * f[1], b2 = (y2 - y5) * f[2], b3 = (y3 - y4) * f[3]
        let a = dct4(a0, a1, a2, a3, f + 4), b = dct4(b0, b1, b2, b3, f + 4)
        y[0] = a.0; y[1] = b.0 + b.1; y[2] = a.1; y[3] = b.1 + b.2
        y[4] = a.2; y[5] = b.2 + b.3; y[6] = a.3; y[7] = b.3
    }

    @inline(__always)
    private static func dct4(_ x0: SIMD4<Float>, _ x1: SIMD4<Float>, _ x2: SIMD4<Float>, _ x3: SIMD4<Float>,
                             _ f: UnsafePointer<SIMD4<Float>>)
        -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)
    {
        let p0 = x0 + x3, p1 = x1 + x2, q0 = (x0 - x3) * f[0], q1 = (x1 - x2) * f[1]
        let pe = p0 + p1, po = (p0 - p1) * f[2], qe = q0 + q1, qo = (q0 - q1) * f[2]
        return (pe, qe + qo, po, qo)
    }
}

import TonearmCore

/// The polyphase synthesis filter bank of MPEG audio (ISO/IEC 11172-3, 2.4.3.2 and
/// Annex A figure A.2), shared by layers I, II and III: 32 subband samples in, 32 PCM
/// samples out, per time slot, for one channel.
///
/// The matrixing is a 32-point DCT-II (Lee's factorisation, 80 multiplies instead of
/// 2048: ``dct32()``) of four time slots at once in SIMD4 lanes, whose 32
/// outputs give the 64 values of a V vector by symmetry; the windowing sums 16 terms per
/// output sample over the 16 newest V vectors, 4 outputs at a time in SIMD.
final class MPEGSynthesisFilter {
    /// 32 V vectors of 64 values, a ring; `head` is the newest. The windowing reads the 16
    /// newest; the other 16 leave room for the V vectors of a group's later slots, written
    /// before its earlier slots are windowed. Vectors 32…47 repeat 0…15, so that the 16
    /// newest always lie in one run and the windowing reads them at fixed offsets.
    private let v: UnsafeMutablePointer<Float>
    private var head = 0
    /// This filter's copy of ``window``, so the hot loop reads no global, with the V
    /// vector's signs folded in: D[32r + j] negated where the windowing reads V[17…63]
    /// (odd r, and even r from j = 17), which the ring holds without their minus sign.
    private let d: UnsafeMutablePointer<Float>
    /// The DCT's input and output, 32 vectors each: subband (or C[m]) × four slots; then
    /// 64 of the DCT's scratch space.
    let lanes: UnsafeMutablePointer<SIMD4<Float>>
    /// ``leeFactors``, each in all four lanes.
    let factors: UnsafeMutablePointer<SIMD4<Float>>
    /// 32 zeros, the input of a group's missing slots.
    private let zeros: UnsafePointer<Float>

    init() {
        // 16-byte aligned, so that the windowing's loads can be aligned ones.
        v = UnsafeMutableRawPointer.allocate(byteCount: 48 * 64 * 4, alignment: 16).bindMemory(to: Float.self, capacity: 48 * 64)
        v.initialize(repeating: 0, count: 48 * 64)
        d = UnsafeMutableRawPointer.allocate(byteCount: 512 * 4, alignment: 16).bindMemory(to: Float.self, capacity: 512)
        for i in 0..<512 { (d + i).initialize(to: i & 32 != 0 || i & 31 >= 17 ? -Self.window[i] : Self.window[i]) }
        lanes = .allocate(capacity: 128)
        lanes.initialize(repeating: SIMD4<Float>(), count: 128)
        factors = .allocate(capacity: Self.leeFactors.count)
        for (i, f) in Self.leeFactors.enumerated() { (factors + i).initialize(to: SIMD4(repeating: f)) }
        let z = UnsafeMutablePointer<Float>.allocate(capacity: 32)
        z.initialize(repeating: 0, count: 32)
        zeros = UnsafePointer(z)
    }

    deinit {
        UnsafeMutableRawPointer(v).deallocate()
        UnsafeMutableRawPointer(d).deallocate()
        lanes.deallocate()
        factors.deallocate()
        zeros.deallocate()
    }

    /// Forgets the history: the next output is as at the start of a stream.
    func reset() {
        v.update(repeating: 0, count: 48 * 64)
        head = 0
    }

    /// Turns `slots` time slots of 32 subband samples (full scale ±1), slot t at
    /// `x[32t…32t+31]`, into 32 PCM samples each, slot t at `out[32t…32t+31]`.
    func synthesize(_ x: UnsafePointer<Float>, slots: Int, into out: UnsafeMutablePointer<Float>) {
        var t = 0
        while t < slots {
            let n = min(4, slots &- t)
            // Subband k of the group's slots into lanes[k], a missing slot as zeros.
            let p0 = x + t &* 32
            let p1 = n > 1 ? p0 + 32 : zeros, p2 = n > 2 ? p0 + 64 : zeros, p3 = n > 3 ? p0 + 96 : zeros
            gather(p0, p1, p2, p3)
            dct32()
            scatter()
            head = (head &- n) & 31
            for j in 0..<n { window((head &+ n &- 1 &- j) & 31, into: out + (t &+ j) &* 32) }
            t &+= n
        }
    }

    /// Subband k of four slots (`p0`…`p3`) into `lanes[k]`. Not inlined, nor is
    /// ``scatter()``: inlined, the compiler carries the transposes' shuffles into the DCT's
    /// arithmetic and spends more on them than the transposes cost.
    @inline(never)
    private func gather(_ p0: UnsafePointer<Float>, _ p1: UnsafePointer<Float>,
                        _ p2: UnsafePointer<Float>, _ p3: UnsafePointer<Float>) {
        for b in 0..<8 {
            let c = Self.transpose(Self.load(p0 + b &* 4), Self.load(p1 + b &* 4),
                                   Self.load(p2 + b &* 4), Self.load(p3 + b &* 4))
            lanes[b &* 4] = c.0; lanes[b &* 4 &+ 1] = c.1; lanes[b &* 4 &+ 2] = c.2; lanes[b &* 4 &+ 3] = c.3
        }
    }

    /// The DCT's outputs (`lanes[32…63]`) into the V vectors of the four slots before
    /// `head`, newest last; a missing slot's (silence) lands where the next slot's goes
    /// before anything reads it.
    @inline(never)
    private func scatter() {
        let h0 = (head &- 1) & 31, h1 = (head &- 2) & 31, h2 = (head &- 3) & 31, h3 = (head &- 4) & 31
        for b in 0..<8 {
            let c = Self.transpose(lanes[32 &+ b &* 4], lanes[33 &+ b &* 4], lanes[34 &+ b &* 4], lanes[35 &+ b &* 4])
            spread(c.0, block: b, into: v + h0 &* 64)
            spread(c.1, block: b, into: v + h1 &* 64)
            spread(c.2, block: b, into: v + h2 &* 64)
            spread(c.3, block: b, into: v + h3 &* 64)
        }
        mirror(h0); mirror(h1); mirror(h2); mirror(h3)
    }

    /// Repeats V vector `h` at `h` + 32 if the windowing may read it there.
    @inline(__always)
    private func mirror(_ h: Int) {
        guard h < 16 else { return }
        let from = v + h &* 64, to = v + (h &+ 32) &* 64
        for i in 0..<16 { Self.store(Self.load(from + i &* 4), to + i &* 4) }
    }

    /// Writes C[4b…4b+3] of one slot into its V vector by the symmetries
    /// V[0…15] = C[16…31], V[16] = 0, V[17…48] = −C[31…0], V[48…63] = −C[0…15], but
    /// without the minus signs, which the window ``d`` carries (a product's sign is exact,
    /// so the sums are the same to the bit). V[16] is never written: always 0.
    @inline(__always)
    private func spread(_ c: SIMD4<Float>, block b: Int, into p: UnsafeMutablePointer<Float>) {
        Self.store(SIMD4<Float>(c[3], c[2], c[1], c[0]), p + (45 &- b &* 4))
        Self.store(c, p + (b < 4 ? 48 &+ b &* 4 : b &* 4 &- 16))
    }

    /// out[j] = Σr V(age r)[32(r mod 2) + j] · D[32r + j], r = 0…15: the standard's U
    /// vector, read straight from the ring of V vectors, the newest at `h`.
    @inline(__always)
    private func window(_ h: Int, into out: UnsafeMutablePointer<Float>) {
        var a = WindowSums()
        let base = UnsafeRawPointer(v + h &* 64), w = UnsafeRawPointer(d)
        Self.row(0, base, w, &a); Self.row(1, base, w, &a); Self.row(2, base, w, &a); Self.row(3, base, w, &a)
        Self.row(4, base, w, &a); Self.row(5, base, w, &a); Self.row(6, base, w, &a); Self.row(7, base, w, &a)
        Self.row(8, base, w, &a); Self.row(9, base, w, &a); Self.row(10, base, w, &a); Self.row(11, base, w, &a)
        Self.row(12, base, w, &a); Self.row(13, base, w, &a); Self.row(14, base, w, &a); Self.row(15, base, w, &a)
        Self.store(a.s0, out); Self.store(a.s1, out + 4); Self.store(a.s2, out + 8); Self.store(a.s3, out + 12)
        Self.store(a.s4, out + 16); Self.store(a.s5, out + 20); Self.store(a.s6, out + 24); Self.store(a.s7, out + 28)
    }

    /// The windowing's 32 sums, four to a vector.
    private struct WindowSums {
        var s0 = SIMD4<Float>(), s1 = SIMD4<Float>(), s2 = SIMD4<Float>(), s3 = SIMD4<Float>()
        var s4 = SIMD4<Float>(), s5 = SIMD4<Float>(), s6 = SIMD4<Float>(), s7 = SIMD4<Float>()
    }

    /// Adds row r: V at byte (64r + 32(r mod 2)) × 4 of the run of 16 V vectors, its window
    /// at 128r. Called with constant rows, so the offsets are known when compiled. A static
    /// function with the sums inout, not a closure over them, which a debug build would box
    /// on the heap.
    @inline(__always)
    private static func row(_ r: Int, _ base: UnsafeRawPointer, _ w: UnsafeRawPointer, _ a: inout WindowSums) {
        let rowOffset = (r &* 64 &+ (r & 1) &* 32) &* 4, windowOffset = r &* 128
        @inline(__always) func term(_ k: Int) -> SIMD4<Float> {
            let x: SIMD4<Float> = base.load(fromByteOffset: rowOffset &+ k &* 16, as: SIMD4<Float>.self)
            let c: SIMD4<Float> = w.load(fromByteOffset: windowOffset &+ k &* 16, as: SIMD4<Float>.self)
            return x * c
        }
        a.s0 += term(0); a.s1 += term(1); a.s2 += term(2); a.s3 += term(3)
        a.s4 += term(4); a.s5 += term(5); a.s6 += term(6); a.s7 += term(7)
    }

    /// Rows a, b, c, d to columns, by even/odd splits (one shuffle each).
    @inline(__always)
    static func transpose(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>, _ d: SIMD4<Float>)
        -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)
    {
        let ab = SIMD8(lowHalf: a, highHalf: b), cd = SIMD8(lowHalf: c, highHalf: d)
        // (a0 a2 b0 b2 c0 c2 d0 d2) and (a1 a3 b1 b3 c1 c3 d1 d3).
        let even = SIMD8(lowHalf: ab.evenHalf, highHalf: cd.evenHalf)
        let odd = SIMD8(lowHalf: ab.oddHalf, highHalf: cd.oddHalf)
        return (even.evenHalf, odd.evenHalf, even.oddHalf, odd.oddHalf)
    }

    @inline(__always)
    private static func load(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always)
    private static func store(_ x: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: x, as: SIMD4<Float>.self)
    }

    /// The synthesis window D[i] of Table B.3, i = 0…511, in the order the windowing reads
    /// it: row t holds D[64t…64t+63].
    static let window: [Float] = {
        var d = [Float](repeating: 0, count: 512)
        for i in 0...256 { d[i] = Float(windowHalf[i]) * 0x1p-16 }
        // The window is odd about 256 except at multiples of 64, where it is even.
        for i in 257..<512 { d[i] = (i & 63 == 0 ? 1 : -1) * d[512 - i] }
        return d
    }()

    /// D[0…256] × 65536: the standard's values are exact multiples of 2^-16.
    private static let windowHalf: [Int32] = [
        0, -1, -1, -1, -1, -1, -1, -2, -2, -2, -2, -3, -3, -4, -4, -5,
        -5, -6, -7, -7, -8, -9, -10, -11, -13, -14, -16, -17, -19, -21, -24, -26,
        -29, -31, -35, -38, -41, -45, -49, -53, -58, -63, -68, -73, -79, -85, -91, -97,
        -104, -111, -117, -125, -132, -139, -147, -154, -161, -169, -176, -183, -190, -196, -202, -208,
        213, 218, 222, 225, 227, 228, 228, 227, 224, 221, 215, 208, 200, 189, 177, 163,
        146, 127, 106, 83, 57, 29, -2, -36, -72, -111, -153, -197, -244, -294, -347, -401,
        -459, -519, -581, -645, -711, -779, -848, -919, -991, -1064, -1137, -1210, -1283, -1356, -1428, -1498,
        -1567, -1634, -1698, -1759, -1817, -1870, -1919, -1962, -2001, -2032, -2057, -2075, -2085, -2087, -2080, -2063,
        2037, 2000, 1952, 1893, 1822, 1739, 1644, 1535, 1414, 1280, 1131, 970, 794, 605, 402, 185,
        -45, -288, -545, -814, -1095, -1388, -1692, -2006, -2330, -2663, -3004, -3351, -3705, -4063, -4425, -4788,
        -5153, -5517, -5879, -6237, -6589, -6935, -7271, -7597, -7910, -8209, -8491, -8755, -8998, -9219, -9416, -9585,
        -9727, -9838, -9916, -9959, -9966, -9935, -9863, -9750, -9592, -9389, -9139, -8840, -8492, -8092, -7640, -7134,
        6574, 5959, 5288, 4561, 3776, 2935, 2037, 1082, 70, -998, -2122, -3300, -4533, -5818, -7154, -8540,
        -9975, -11455, -12980, -14548, -16155, -17799, -19478, -21189, -22929, -24694, -26482, -28289, -30112, -31947, -33791, -35640,
        -37489, -39336, -41176, -43006, -44821, -46617, -48390, -50137, -51853, -53534, -55178, -56778, -58333, -59838, -61289, -62684,
        -64019, -65290, -66494, -67629, -68692, -69679, -70590, -71420, -72169, -72835, -73415, -73908, -74313, -74630, -74856, -74992,
        75038,
    ]
}

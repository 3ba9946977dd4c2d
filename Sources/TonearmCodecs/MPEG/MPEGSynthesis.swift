import TonearmCore

/// The polyphase synthesis filter bank of MPEG audio (ISO/IEC 11172-3, 2.4.3.2 and
/// Annex A figure A.2), shared by layers I, II and III: 32 subband samples in, 32 PCM
/// samples out, for one channel.
///
/// The matrixing is a 32-point DCT-II (Lee's factorisation unrolled, 80 multiplies
/// instead of 2048: ``dct32(_:_:)``), whose 32 outputs give the 64 values of a V vector by symmetry; the
/// windowing sums 16 terms per output sample over the 16 newest V vectors, 4 outputs at
/// a time in SIMD.
final class MPEGSynthesisFilter {
    /// 16 V vectors of 64 values, a ring; `head` is the newest.
    private let v: UnsafeMutablePointer<Float>
    private var head = 0
    /// The DCT's 32 outputs.
    private let c: UnsafeMutablePointer<Float>
    /// This filter's copy of ``window``, so the hot loop reads no global.
    private let d: UnsafeMutablePointer<Float>

    init() {
        v = .allocate(capacity: 16 * 64)
        v.initialize(repeating: 0, count: 16 * 64)
        c = .allocate(capacity: 32)
        c.initialize(repeating: 0, count: 32)
        d = .allocate(capacity: 512)
        d.initialize(from: Self.window, count: 512)
    }

    deinit {
        v.deallocate()
        c.deallocate()
        d.deallocate()
    }

    /// Forgets the history: the next output is as at the start of a stream.
    func reset() {
        v.update(repeating: 0, count: 16 * 64)
        head = 0
    }

    /// Turns 32 subband samples (full scale ±1) into 32 PCM samples, written at
    /// `out[i * stride]`.
    func synthesize(_ subbands: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, stride: Int) {
        head = (head &- 1) & 15
        let vNew = v + head &* 64
        // C[m] = Σ S[k] cos((2k+1)mπ/64); V[i] = Σ S[k] cos((16+i)(2k+1)π/64).
        Self.dct32(subbands, c)
        for i in 0..<16 { vNew[i] = c[16 &+ i] }
        vNew[16] = 0
        for i in 17..<48 { vNew[i] = -c[48 &- i] }
        for i in 48..<64 { vNew[i] = -c[i &- 48] }

        // out[j] = Σt V(age 2t)[j]·D[64t+j] + V(age 2t+1)[32+j]·D[64t+32+j].
        var a0 = SIMD4<Float>(), a1 = SIMD4<Float>(), a2 = SIMD4<Float>(), a3 = SIMD4<Float>()
        var a4 = SIMD4<Float>(), a5 = SIMD4<Float>(), a6 = SIMD4<Float>(), a7 = SIMD4<Float>()
        do {
            let dw = UnsafeRawPointer(d)
            for t in 0..<8 {
                let evenIndex: Int = ((head &+ 2 &* t) & 15) &* 64
                let oddIndex: Int = ((head &+ 2 &* t &+ 1) & 15) &* 64 &+ 32
                let even = UnsafeRawPointer(v + evenIndex), odd = UnsafeRawPointer(v + oddIndex)
                let rowBytes: Int = t &* 256
                let de = dw + rowBytes, dd = dw + (rowBytes &+ 128)
                @inline(__always) func term(_ k: Int) -> SIMD4<Float> {
                    let o = k &* 16
                    let e: SIMD4<Float> = even.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                    let we: SIMD4<Float> = de.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                    let q: SIMD4<Float> = odd.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                    let wq: SIMD4<Float> = dd.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                    return e * we + q * wq
                }
                a0 += term(0); a1 += term(1); a2 += term(2); a3 += term(3)
                a4 += term(4); a5 += term(5); a6 += term(6); a7 += term(7)
            }
        }
        @inline(__always) func store(_ a: SIMD4<Float>, _ j: Int) {
            out[j &* stride] = a[0]; out[(j &+ 1) &* stride] = a[1]
            out[(j &+ 2) &* stride] = a[2]; out[(j &+ 3) &* stride] = a[3]
        }
        store(a0, 0); store(a1, 4); store(a2, 8); store(a3, 12)
        store(a4, 16); store(a5, 20); store(a6, 24); store(a7, 28)
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

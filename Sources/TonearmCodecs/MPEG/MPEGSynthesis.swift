import TonearmCore

/// The polyphase synthesis filter bank of MPEG audio (ISO/IEC 11172-3, 2.4.3.2 and
/// Annex A figure A.2), shared by layers I, II and III: 32 subband samples in, 32 PCM
/// samples out, for one channel.
///
/// The matrixing is a 32-point DCT-II (Lee's factorisation unrolled, 80 multiplies
/// instead of 2048: ``matrix(_:_:)``), whose 32 outputs give the 64 values of a V vector by symmetry; the
/// windowing sums 16 terms per output sample over the 16 newest V vectors, 4 outputs at
/// a time in SIMD.
final class MPEGSynthesisFilter {
    /// 16 V vectors of 64 values, a ring; `head` is the newest.
    private let v: UnsafeMutablePointer<Float>
    private var head = 0
    /// This filter's copy of ``window``, so the hot loop reads no global.
    private let d: UnsafeMutablePointer<Float>

    init() {
        v = .allocate(capacity: 16 * 64)
        v.initialize(repeating: 0, count: 16 * 64)
        d = .allocate(capacity: 512)
        d.initialize(from: Self.window, count: 512)
    }

    deinit {
        v.deallocate()
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
        Self.matrix(subbands, v + head &* 64)

        // out[j] = Σr V(age r)[32(r mod 2) + j] · D[32r + j], r = 0…15: the standard's
        // U vector, read straight from the ring of V vectors.
        var a0 = SIMD4<Float>(), a1 = SIMD4<Float>(), a2 = SIMD4<Float>(), a3 = SIMD4<Float>()
        var a4 = SIMD4<Float>(), a5 = SIMD4<Float>(), a6 = SIMD4<Float>(), a7 = SIMD4<Float>()
        for r in 0..<16 {
            let vIndex: Int = ((head &+ r) & 15) &* 64 &+ (r & 1) &* 32
            let row = UnsafeRawPointer(v + vIndex), w = UnsafeRawPointer(d + r &* 32)
            @inline(__always) func term(_ k: Int) -> SIMD4<Float> {
                let x: SIMD4<Float> = row.loadUnaligned(fromByteOffset: k &* 16, as: SIMD4<Float>.self)
                let c: SIMD4<Float> = w.loadUnaligned(fromByteOffset: k &* 16, as: SIMD4<Float>.self)
                return x * c
            }
            a0 += term(0); a1 += term(1); a2 += term(2); a3 += term(3)
            a4 += term(4); a5 += term(5); a6 += term(6); a7 += term(7)
        }
        if stride == 1 {
            let o = UnsafeMutableRawPointer(out)
            o.storeBytes(of: a0, toByteOffset: 0, as: SIMD4<Float>.self)
            o.storeBytes(of: a1, toByteOffset: 16, as: SIMD4<Float>.self)
            o.storeBytes(of: a2, toByteOffset: 32, as: SIMD4<Float>.self)
            o.storeBytes(of: a3, toByteOffset: 48, as: SIMD4<Float>.self)
            o.storeBytes(of: a4, toByteOffset: 64, as: SIMD4<Float>.self)
            o.storeBytes(of: a5, toByteOffset: 80, as: SIMD4<Float>.self)
            o.storeBytes(of: a6, toByteOffset: 96, as: SIMD4<Float>.self)
            o.storeBytes(of: a7, toByteOffset: 112, as: SIMD4<Float>.self)
            return
        }
        for (k, a) in [a0, a1, a2, a3, a4, a5, a6, a7].enumerated() {
            for i in 0..<4 { out[(4 &* k &+ i) &* stride] = a[i] }
        }
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

/// MD5 (RFC 1321), incremental. Not for security: FLAC's STREAMINFO stores the MD5 of the
/// decoded samples, and checking it is the one use here.
public struct MD5: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)
    /// Bytes waiting for a whole 64-byte block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    public init() { pending.reserveCapacity(64) }

    /// RFC 1321 §3.4: the shift amounts of the 64 steps, four per round.
    private static let shifts: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]

    /// RFC 1321 §3.4: T[i] = floor(2^32 · |sin(i + 1)|).
    private static let table: [UInt32] = [
        0xD76A_A478, 0xE8C7_B756, 0x2420_70DB, 0xC1BD_CEEE, 0xF57C_0FAF, 0x4787_C62A, 0xA830_4613, 0xFD46_9501,
        0x6980_98D8, 0x8B44_F7AF, 0xFFFF_5BB1, 0x895C_D7BE, 0x6B90_1122, 0xFD98_7193, 0xA679_438E, 0x49B4_0821,
        0xF61E_2562, 0xC040_B340, 0x265E_5A51, 0xE9B6_C7AA, 0xD62F_105D, 0x0244_1453, 0xD8A1_E681, 0xE7D3_FBC8,
        0x21E1_CDE6, 0xC337_07D6, 0xF4D5_0D87, 0x455A_14ED, 0xA9E3_E905, 0xFCEF_A3F8, 0x676F_02D9, 0x8D2A_4C8A,
        0xFFFA_3942, 0x8771_F681, 0x6D9D_6122, 0xFDE5_380C, 0xA4BE_EA44, 0x4BDE_CFA9, 0xF6BB_4B60, 0xBEBF_BC70,
        0x289B_7EC6, 0xEAA1_27FA, 0xD4EF_3085, 0x0488_1D05, 0xD9D4_D039, 0xE6DB_99E5, 0x1FA2_7CF8, 0xC4AC_5665,
        0xF429_2244, 0x432A_FF97, 0xAB94_23A7, 0xFC93_A039, 0x655B_59C3, 0x8F0C_CC92, 0xFFEF_F47D, 0x8584_5DD1,
        0x6FA8_7E4F, 0xFE2C_E6E0, 0xA301_4314, 0x4E08_11A1, 0xF753_7E82, 0xBD3A_F235, 0x2AD7_D2BB, 0xEB86_D391,
    ]

    /// Adds `count` bytes at `p`.
    public mutating func update(_ p: UnsafeRawPointer, count: Int) {
        guard count > 0 else { return }
        length &+= UInt64(count)
        var i = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: p, count: take))
            i = take
            if pending.count == 64 {
                pending.withUnsafeBytes { compress($0.baseAddress!) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while count - i >= 64 {
            compress(p + i)
            i += 64
        }
        if i < count { pending.append(contentsOf: UnsafeRawBufferPointer(start: p + i, count: count - i)) }
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { if let b = $0.baseAddress { update(b, count: $0.count) } }
    }

    /// The 16-byte digest of everything added; the hasher itself is left as it was.
    public func finalize() -> [UInt8] {
        var copy = self
        let bits = length &* 8
        // RFC 1321 §3.1–3.2: a one bit, zeros to 56 mod 64 bytes, the bit length little-endian.
        var tail: [UInt8] = [0x80]
        let used = (Int(length % 64) + 1) % 64
        tail += [UInt8](repeating: 0, count: (56 - used + 64) % 64)
        for k in 0..<8 { tail.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(k)))) }
        let saved = copy.length
        copy.update(tail)
        copy.length = saved
        var out: [UInt8] = []
        out.reserveCapacity(16)
        for w in [copy.state.0, copy.state.1, copy.state.2, copy.state.3] {
            for k in 0..<4 { out.append(UInt8(truncatingIfNeeded: w >> (8 * UInt32(k)))) }
        }
        return out
    }

    /// The digest of `bytes`.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var h = MD5()
        h.update(bytes)
        return h.finalize()
    }

    /// RFC 1321 §3.4: one 64-byte block. The four rounds are separate loops, so that each
    /// step's function and message index are fixed instead of chosen by a switch.
    private mutating func compress(_ p: UnsafeRawPointer) {
        var (a, b, c, d) = state
        MD5.table.withUnsafeBufferPointer { t in
            MD5.shifts.withUnsafeBufferPointer { s in
                @inline(__always) func word(_ g: Int) -> UInt32 {
                    UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4 &* g, as: UInt32.self))
                }
                @inline(__always) func step(_ f: UInt32, _ i: Int, _ g: Int) {
                    let sum = a &+ f &+ t[i] &+ word(g)
                    let r = s[(i >> 4) << 2 | (i & 3)]
                    let rotated = (sum << r) | (sum >> (32 - r))
                    (a, d, c) = (d, c, b)
                    b = b &+ rotated
                }
                for i in 0..<16 { step((b & c) | (~b & d), i, i) }
                for i in 16..<32 { step((d & b) | (~d & c), i, (5 &* i &+ 1) & 15) }
                for i in 32..<48 { step(b ^ c ^ d, i, (3 &* i &+ 5) & 15) }
                for i in 48..<64 { step(c ^ (b | ~d), i, (7 &* i) & 15) }
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}

/// AES-128 (FIPS-197) with CBC mode and PKCS#7 padding: what HLS `METHOD=AES-128` segments
/// need (RFC 8216 §4.3.2.4), and nothing more. Not hardened against timing attacks: it
/// decrypts media whose key the client fetched anyway.
///
/// ```swift
/// let aes = try AES128(key: keyBytes)                      // the 16 bytes of the key URI
/// let ts = try aes.decryptCBC(segment, iv: iv)             // PKCS#7 padding removed
/// ```
public struct AES128: Sendable {
    /// The 44 words of the cipher's round keys (FIPS-197 §5.2), round 0 first.
    private let encryptionKeys: [UInt32]
    /// The equivalent inverse cipher's round keys (FIPS-197 §5.3.5): the encryption round keys
    /// in reverse order, InvMixColumns applied to rounds 1 to 9.
    private let decryptionKeys: [UInt32]

    /// The size of a block and of a key, in bytes.
    public static let blockSize = 16

    /// Expands `key` into the round keys.
    ///
    /// - Throws: ``AudioError/Code/parameter`` when `key` is not 16 bytes long.
    public init(key: [UInt8]) throws(AudioError) {
        guard key.count == 16 else {
            throw AudioError(.parameter, "an AES-128 key is 16 bytes, not \(key.count)")
        }
        let sbox = AESTables.shared.sbox
        var w = [UInt32](repeating: 0, count: 44)
        for i in 0..<4 {
            w[i] = UInt32(key[4 * i]) << 24 | UInt32(key[4 * i + 1]) << 16 | UInt32(key[4 * i + 2]) << 8 | UInt32(key[4 * i + 3])
        }
        // FIPS-197 §5.2: every fourth word takes RotWord, SubWord and the round constant.
        var rcon: UInt8 = 1
        for i in 4..<44 {
            var t = w[i - 1]
            if i % 4 == 0 {
                t = (t << 8) | (t >> 24)
                t = UInt32(sbox[Int(t >> 24)]) << 24 | UInt32(sbox[Int(t >> 16 & 0xFF)]) << 16
                    | UInt32(sbox[Int(t >> 8 & 0xFF)]) << 8 | UInt32(sbox[Int(t & 0xFF)])
                t ^= UInt32(rcon) << 24
                rcon = AESTables.times2(rcon)
            }
            w[i] = w[i - 4] ^ t
        }
        var d = [UInt32](repeating: 0, count: 44)
        for round in 0...10 {
            for c in 0..<4 {
                let word = w[4 * (10 - round) + c]
                d[4 * round + c] = round == 0 || round == 10 ? word : AESTables.invMixColumn(word)
            }
        }
        encryptionKeys = w
        decryptionKeys = d
    }

    /// Encrypts one 16-byte block in place (the bare cipher, FIPS-197 §5.1).
    public func encryptBlock(_ block: inout SIMD16<UInt8>) {
        withUnsafeMutableBytes(of: &block) { b in
            withKeys(encrypting: true) { t, k in Self.crypt(b.baseAddress!, b.baseAddress!, t, k, inverse: false) }
        }
    }

    /// Decrypts one 16-byte block in place (the inverse cipher, FIPS-197 §5.3).
    public func decryptBlock(_ block: inout SIMD16<UInt8>) {
        withUnsafeMutableBytes(of: &block) { b in
            withKeys(encrypting: false) { t, k in Self.crypt(b.baseAddress!, b.baseAddress!, t, k, inverse: true) }
        }
    }

    /// Decrypts `data` in CBC mode (NIST SP 800-38A §6.2) and, when `padding` is true, checks
    /// and removes the PKCS#7 padding (RFC 5652 §6.3) that HLS segments carry.
    ///
    /// - Throws: ``AudioError/Code/parameter`` when `iv` is not 16 bytes long;
    ///   ``AudioError/Code/invalidFile`` (malformed) when the length is not a multiple of 16,
    ///   or the padding is missing or wrong.
    public func decryptCBC(_ data: [UInt8], iv: [UInt8], padding: Bool = true) throws(AudioError) -> [UInt8] {
        try Self.checkIV(iv)
        guard data.count % 16 == 0 else {
            throw .malformed("AES-128-CBC data of \(data.count) bytes is not a whole number of 16-byte blocks")
        }
        if padding && data.isEmpty { throw .malformed("AES-128-CBC data with PKCS#7 padding cannot be empty") }
        var out = [UInt8](repeating: 0, count: data.count)
        withKeys(encrypting: false) { tables, keys in
            data.withUnsafeBytes { src in
                iv.withUnsafeBytes { ivBytes in
                    out.withUnsafeMutableBytes { dst in
                        guard let s = src.baseAddress, let o = dst.baseAddress else { return }
                        var previous = ivBytes.loadUnaligned(as: SIMD16<UInt8>.self)
                        var i = 0
                        while i < data.count {
                            let cipher = s.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                            Self.crypt(s + i, o + i, tables, keys, inverse: true)
                            let plain = o.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self) ^ previous
                            o.storeBytes(of: plain, toByteOffset: i, as: SIMD16<UInt8>.self)
                            previous = cipher
                            i += 16
                        }
                    }
                }
            }
        }
        guard padding else { return out }
        // PKCS#7: the last byte n (1...16) says how many bytes, all equal to n, to remove.
        let n = Int(out[out.count - 1])
        guard n >= 1 && n <= 16 && out[(out.count - n)...].allSatisfy({ Int($0) == n }) else {
            throw .malformed("AES-128-CBC: bad PKCS#7 padding (wrong key or IV, or damaged data)")
        }
        out.removeLast(n)
        return out
    }

    /// Encrypts `data` in CBC mode (NIST SP 800-38A §6.2), first padding it to a whole number of
    /// blocks with PKCS#7 (1 to 16 bytes) when `padding` is true.
    ///
    /// - Throws: ``AudioError/Code/parameter`` when `iv` is not 16 bytes long, or when
    ///   `padding` is false and the length is not a multiple of 16.
    public func encryptCBC(_ data: [UInt8], iv: [UInt8], padding: Bool = true) throws(AudioError) -> [UInt8] {
        try Self.checkIV(iv)
        var out = data
        if padding {
            let n = 16 - data.count % 16
            out += [UInt8](repeating: UInt8(n), count: n)
        } else if data.count % 16 != 0 {
            throw AudioError(.parameter, "AES-128-CBC without padding needs whole 16-byte blocks, not \(data.count) bytes")
        }
        withKeys(encrypting: true) { tables, keys in
            iv.withUnsafeBytes { ivBytes in
                out.withUnsafeMutableBytes { buffer in
                    guard let p = buffer.baseAddress else { return }
                    var chain = ivBytes.loadUnaligned(as: SIMD16<UInt8>.self)
                    var i = 0
                    while i < buffer.count {
                        chain ^= p.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                        p.storeBytes(of: chain, toByteOffset: i, as: SIMD16<UInt8>.self)
                        Self.crypt(p + i, p + i, tables, keys, inverse: false)
                        chain = p.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                        i += 16
                    }
                }
            }
        }
        return out
    }

    private static func checkIV(_ iv: [UInt8]) throws(AudioError) {
        guard iv.count == 16 else { throw AudioError(.parameter, "an AES-128-CBC IV is 16 bytes, not \(iv.count)") }
    }

    /// Runs `body` with the lookup tables and the round keys of one direction as raw pointers,
    /// so that the block functions check no bounds.
    private func withKeys<R>(encrypting: Bool, _ body: (UnsafePointer<UInt32>, UnsafePointer<UInt32>) -> R) -> R {
        (encrypting ? encryptionKeys : decryptionKeys).withUnsafeBufferPointer { keys in
            body(AESTables.shared.words, keys.baseAddress!)
        }
    }

    @inline(__always)
    private static func load(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    private static func store(_ p: UnsafeMutableRawPointer, _ offset: Int, _ value: UInt32) {
        p.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
    }

    /// One block, each column a big-endian word: the cipher (FIPS-197 §5.1) or, with
    /// `inverse`, the equivalent inverse cipher (§5.3.5) with the decryption round keys. A
    /// middle round is four lookups per column in tables that combine SubBytes, ShiftRows and
    /// MixColumns (or their inverses; described with `AESTables`); the last round has no
    /// MixColumns. Output column c takes row r from column c + r, or c − r when inverting, so
    /// the inverse swaps the columns rows 1 and 3 come from.
    @inline(__always)
    private static func crypt(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer,
                              _ t: UnsafePointer<UInt32>, _ k: UnsafePointer<UInt32>, inverse: Bool) {
        var s0 = load(src, 0) ^ k[0], s1 = load(src, 4) ^ k[1], s2 = load(src, 8) ^ k[2], s3 = load(src, 12) ^ k[3]
        let t0 = t + (inverse ? AESTables.inverseOffset : 0), t1 = t0 + 256, t2 = t0 + 512, t3 = t0 + 768
        var rk = k + 4
        @inline(__always) func column(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32) -> UInt32 {
            let (row1, row3) = inverse ? (d, b) : (b, d)
            return t0[Int(a >> 24)] ^ t1[Int(row1 >> 16 & 0xFF)] ^ t2[Int(c >> 8 & 0xFF)] ^ t3[Int(row3 & 0xFF)]
        }
        for _ in 1..<10 {
            let a0 = column(s0, s1, s2, s3) ^ rk[0], a1 = column(s1, s2, s3, s0) ^ rk[1]
            let a2 = column(s2, s3, s0, s1) ^ rk[2], a3 = column(s3, s0, s1, s2) ^ rk[3]
            s0 = a0; s1 = a1; s2 = a2; s3 = a3
            rk += 4
        }
        let sb = t + (inverse ? AESTables.inverseSboxOffset : AESTables.sboxOffset)
        @inline(__always) func last(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32) -> UInt32 {
            let (row1, row3) = inverse ? (d, b) : (b, d)
            return sb[Int(a >> 24)] << 24 | sb[Int(row1 >> 16 & 0xFF)] << 16 | sb[Int(c >> 8 & 0xFF)] << 8 | sb[Int(row3 & 0xFF)]
        }
        store(dst, 0, last(s0, s1, s2, s3) ^ rk[0])
        store(dst, 4, last(s1, s2, s3, s0) ^ rk[1])
        store(dst, 8, last(s2, s3, s0, s1) ^ rk[2])
        store(dst, 12, last(s3, s0, s1, s2) ^ rk[3])
    }
}

/// AES's lookup tables, computed once from the field arithmetic rather than typed in.
///
/// `words` holds ten runs of 256 words: four round tables for the cipher, four for the inverse
/// cipher, then the S-box and the inverse S-box (one byte per word). The cipher's first table
/// maps a byte x to the column MixColumns makes of S(x) in row 0, (2·S, S, S, 3·S) big-endian;
/// the next three are that column for rows 1 to 3, which is the same word rotated right by
/// 8, 16 and 24 bits. The inverse cipher's tables do the same with InvS and InvMixColumns'
/// column (14, 9, 13, 11).
final class AESTables: @unchecked Sendable {
    static let shared = AESTables()

    static let inverseOffset = 1024
    static let sboxOffset = 2048
    static let inverseSboxOffset = 2304

    /// Never freed: the tables live as long as the process. Written only in `init`.
    let words: UnsafeMutablePointer<UInt32>
    let sbox: [UInt8]

    private init() {
        // Powers of the generator 3 and their logarithms give every inverse in GF(2^8).
        var exp = [UInt8](repeating: 0, count: 256), log = [Int](repeating: 0, count: 256)
        var x: UInt8 = 1
        for i in 0..<255 {
            exp[i] = x
            log[Int(x)] = i
            x ^= Self.times2(x)   // x · 3
        }
        var s = [UInt8](repeating: 0, count: 256), inv = [UInt8](repeating: 0, count: 256)
        for a in 0..<256 {
            // FIPS-197 §5.1.1: the multiplicative inverse (0 for 0), then the affine map.
            let b: UInt8 = a == 0 ? 0 : exp[(255 - log[a]) % 255]
            func rotl(_ v: UInt8, _ n: UInt8) -> UInt8 { v << n | v >> (8 - n) }
            let y = b ^ rotl(b, 1) ^ rotl(b, 2) ^ rotl(b, 3) ^ rotl(b, 4) ^ 0x63
            s[a] = y
            inv[Int(y)] = UInt8(a)
        }
        words = .allocate(capacity: 2560)
        for a in 0..<256 {
            let e = s[a], d = inv[a]
            let forward = UInt32(Self.multiply(e, 2)) << 24 | UInt32(e) << 16 | UInt32(e) << 8 | UInt32(Self.multiply(e, 3))
            let inverse = UInt32(Self.multiply(d, 14)) << 24 | UInt32(Self.multiply(d, 9)) << 16
                | UInt32(Self.multiply(d, 13)) << 8 | UInt32(Self.multiply(d, 11))
            for r in 0..<4 {
                let shift = UInt32(8 * r)
                words[256 * r + a] = shift == 0 ? forward : forward >> shift | forward << (32 - shift)
                words[Self.inverseOffset + 256 * r + a] = shift == 0 ? inverse : inverse >> shift | inverse << (32 - shift)
            }
            words[Self.sboxOffset + a] = UInt32(e)
            words[Self.inverseSboxOffset + a] = UInt32(d)
        }
        sbox = s
    }

    /// Multiplication by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1 (FIPS-197 §4.2.1).
    static func times2(_ v: UInt8) -> UInt8 { v << 1 ^ (v & 0x80 != 0 ? 0x1B : 0) }

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var a = a, b = b, p: UInt8 = 0
        while b != 0 {
            if b & 1 != 0 { p ^= a }
            a = times2(a)
            b >>= 1
        }
        return p
    }

    /// InvMixColumns of one column word (FIPS-197 §5.3.3).
    static func invMixColumn(_ w: UInt32) -> UInt32 {
        let b = [UInt8(w >> 24), UInt8(w >> 16 & 0xFF), UInt8(w >> 8 & 0xFF), UInt8(w & 0xFF)]
        var out: UInt32 = 0
        for r in 0..<4 {
            let v = multiply(b[r], 14) ^ multiply(b[(r + 1) % 4], 11) ^ multiply(b[(r + 2) % 4], 13) ^ multiply(b[(r + 3) % 4], 9)
            out = out << 8 | UInt32(v)
        }
        return out
    }
}

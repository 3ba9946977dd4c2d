/// MD5 (RFC 1321), incremental. Not for security: FLAC's STREAMINFO stores the MD5 of the
/// decoded samples, and checking it is the one use here.
public struct MD5: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)
    /// Bytes waiting for a whole 64-byte block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    public init() { pending.reserveCapacity(64) }

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

    /// RFC 1321 §3.4: one 64-byte block, its 64 steps written out so that every step's
    /// function, message word, shift and constant are fixed (the loop over tables took about
    /// twice the instructions).
    private mutating func compress(_ p: UnsafeRawPointer) {
        var (a, b, c, d) = state
        @inline(__always) func x(_ k: Int) -> UInt32 { UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4 &* k, as: UInt32.self)) }
        @inline(__always) func rotate(_ v: UInt32, _ s: UInt32) -> UInt32 { (v << s) | (v >> (32 &- s)) }
        @inline(__always) func f(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ k: Int, _ s: UInt32, _ t: UInt32) {
            a = b &+ rotate(a &+ (d ^ (b & (c ^ d))) &+ x(k) &+ t, s)
        }
        @inline(__always) func g(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ k: Int, _ s: UInt32, _ t: UInt32) {
            a = b &+ rotate(a &+ (c ^ (d & (b ^ c))) &+ x(k) &+ t, s)
        }
        @inline(__always) func h(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ k: Int, _ s: UInt32, _ t: UInt32) {
            a = b &+ rotate(a &+ (b ^ c ^ d) &+ x(k) &+ t, s)
        }
        @inline(__always) func i(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ k: Int, _ s: UInt32, _ t: UInt32) {
            a = b &+ rotate(a &+ (c ^ (b | ~d)) &+ x(k) &+ t, s)
        }
        f(&a, b, c, d, 0, 7, 0xD76AA478)
        f(&d, a, b, c, 1, 12, 0xE8C7B756)
        f(&c, d, a, b, 2, 17, 0x242070DB)
        f(&b, c, d, a, 3, 22, 0xC1BDCEEE)
        f(&a, b, c, d, 4, 7, 0xF57C0FAF)
        f(&d, a, b, c, 5, 12, 0x4787C62A)
        f(&c, d, a, b, 6, 17, 0xA8304613)
        f(&b, c, d, a, 7, 22, 0xFD469501)
        f(&a, b, c, d, 8, 7, 0x698098D8)
        f(&d, a, b, c, 9, 12, 0x8B44F7AF)
        f(&c, d, a, b, 10, 17, 0xFFFF5BB1)
        f(&b, c, d, a, 11, 22, 0x895CD7BE)
        f(&a, b, c, d, 12, 7, 0x6B901122)
        f(&d, a, b, c, 13, 12, 0xFD987193)
        f(&c, d, a, b, 14, 17, 0xA679438E)
        f(&b, c, d, a, 15, 22, 0x49B40821)
        g(&a, b, c, d, 1, 5, 0xF61E2562)
        g(&d, a, b, c, 6, 9, 0xC040B340)
        g(&c, d, a, b, 11, 14, 0x265E5A51)
        g(&b, c, d, a, 0, 20, 0xE9B6C7AA)
        g(&a, b, c, d, 5, 5, 0xD62F105D)
        g(&d, a, b, c, 10, 9, 0x02441453)
        g(&c, d, a, b, 15, 14, 0xD8A1E681)
        g(&b, c, d, a, 4, 20, 0xE7D3FBC8)
        g(&a, b, c, d, 9, 5, 0x21E1CDE6)
        g(&d, a, b, c, 14, 9, 0xC33707D6)
        g(&c, d, a, b, 3, 14, 0xF4D50D87)
        g(&b, c, d, a, 8, 20, 0x455A14ED)
        g(&a, b, c, d, 13, 5, 0xA9E3E905)
        g(&d, a, b, c, 2, 9, 0xFCEFA3F8)
        g(&c, d, a, b, 7, 14, 0x676F02D9)
        g(&b, c, d, a, 12, 20, 0x8D2A4C8A)
        h(&a, b, c, d, 5, 4, 0xFFFA3942)
        h(&d, a, b, c, 8, 11, 0x8771F681)
        h(&c, d, a, b, 11, 16, 0x6D9D6122)
        h(&b, c, d, a, 14, 23, 0xFDE5380C)
        h(&a, b, c, d, 1, 4, 0xA4BEEA44)
        h(&d, a, b, c, 4, 11, 0x4BDECFA9)
        h(&c, d, a, b, 7, 16, 0xF6BB4B60)
        h(&b, c, d, a, 10, 23, 0xBEBFBC70)
        h(&a, b, c, d, 13, 4, 0x289B7EC6)
        h(&d, a, b, c, 0, 11, 0xEAA127FA)
        h(&c, d, a, b, 3, 16, 0xD4EF3085)
        h(&b, c, d, a, 6, 23, 0x04881D05)
        h(&a, b, c, d, 9, 4, 0xD9D4D039)
        h(&d, a, b, c, 12, 11, 0xE6DB99E5)
        h(&c, d, a, b, 15, 16, 0x1FA27CF8)
        h(&b, c, d, a, 2, 23, 0xC4AC5665)
        i(&a, b, c, d, 0, 6, 0xF4292244)
        i(&d, a, b, c, 7, 10, 0x432AFF97)
        i(&c, d, a, b, 14, 15, 0xAB9423A7)
        i(&b, c, d, a, 5, 21, 0xFC93A039)
        i(&a, b, c, d, 12, 6, 0x655B59C3)
        i(&d, a, b, c, 3, 10, 0x8F0CCC92)
        i(&c, d, a, b, 10, 15, 0xFFEFF47D)
        i(&b, c, d, a, 1, 21, 0x85845DD1)
        i(&a, b, c, d, 8, 6, 0x6FA87E4F)
        i(&d, a, b, c, 15, 10, 0xFE2CE6E0)
        i(&c, d, a, b, 6, 15, 0xA3014314)
        i(&b, c, d, a, 13, 21, 0x4E0811A1)
        i(&a, b, c, d, 4, 6, 0xF7537E82)
        i(&d, a, b, c, 11, 10, 0xBD3AF235)
        i(&c, d, a, b, 2, 15, 0x2AD7D2BB)
        i(&b, c, d, a, 9, 21, 0xEB86D391)
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}

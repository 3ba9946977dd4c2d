import TonearmCore

/// Opus's range decoder (RFC 6716 §4.1), shared by SILK and CELT: symbols coded with
/// cumulative frequencies from the front of the frame, and raw bits read from its end.
///
/// It reads a frame's bytes through a pointer that the caller keeps valid while it decodes
/// (inside `withUnsafeBytes`). Reads past either end give zeros, as the RFC specifies
/// (§4.1.2), so a damaged frame decodes to something and never reads outside its bytes;
/// ``tell()`` then exceeds the frame's bits, which callers check where the RFC says to.
struct OpusRangeDecoder {
    private let base: UnsafePointer<UInt8>?
    /// The frame's length in bytes (less, after ``limit(toBytes:)``).
    private(set) var storage: Int
    /// Bytes read from the front, and from the back (raw bits).
    private var offset = 0
    private var endOffset = 0
    /// Raw bits read from the back and not used yet, the next in the lowest bit.
    private var endWindow: UInt32 = 0
    private var endBits = 0
    /// Bits used so far, for ``tell()`` (RFC 6716 §4.1.6).
    private(set) var totalBits: Int
    /// The range and the distance from its top to the coded value (§4.1).
    private(set) var range: UInt32
    private var value: UInt32
    /// The last byte read, whose low bit starts the next symbol (§4.1.2.1).
    private var rem: Int
    /// The divisor of the last ``decode(_:)``, kept for ``update(_:_:_:)``.
    private var ext: UInt32 = 0
    /// Set when ``decodeUInt(_:)`` read a value past its range: the frame is damaged.
    private(set) var hasError = false

    private static let codeBits = 32
    private static let symbolBits = 8
    /// Bits of the first byte that go into the initial value (EC_CODE_EXTRA): 7.
    private static let extraBits = (codeBits - 2) % symbolBits + 1
    private static let codeTop: UInt32 = 1 << 31
    private static let codeBottom: UInt32 = 1 << 23
    private static let windowBits = 32

    /// A decoder over `bytes`, which must stay valid while it is used.
    init(_ bytes: UnsafeRawBufferPointer) {
        base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        storage = bytes.count
        // §4.1.1: rng = 128, val = 127 − (b0 >> 1), then normalised.
        totalBits = OpusRangeDecoder.codeBits + 1
            - ((OpusRangeDecoder.codeBits - OpusRangeDecoder.extraBits) / OpusRangeDecoder.symbolBits) * OpusRangeDecoder.symbolBits
        range = 1 << UInt32(OpusRangeDecoder.extraBits)
        rem = 0
        value = 0
        rem = Int(nextByte())
        value = range - 1 - UInt32(rem >> (OpusRangeDecoder.symbolBits - OpusRangeDecoder.extraBits))
        normalize()
    }

    @inline(__always)
    private mutating func nextByte() -> UInt8 {
        guard offset < storage, let base else { return 0 }
        defer { offset += 1 }
        return base[offset]
    }

    @inline(__always)
    private mutating func nextByteFromEnd() -> UInt8 {
        guard endOffset < storage, let base else { return 0 }
        endOffset += 1
        return base[storage - endOffset]
    }

    /// §4.1.2.1: widens the range to more than 2^23 a byte at a time.
    @inline(__always)
    private mutating func normalize() {
        while range <= OpusRangeDecoder.codeBottom {
            totalBits += OpusRangeDecoder.symbolBits
            range <<= 8
            // Only a malformed table can empty the range; this keeps the loop finite.
            if range == 0 { range = OpusRangeDecoder.codeTop; hasError = true }
            let previous = rem
            rem = Int(nextByte())
            let symbol = (previous << 8 | rem) >> (OpusRangeDecoder.symbolBits - OpusRangeDecoder.extraBits)
            value = ((value << 8) &+ UInt32(255 & ~symbol)) & (OpusRangeDecoder.codeTop - 1)
        }
    }

    /// §4.1.2, ec_decode: the cumulative frequency the next symbol falls at, out of `total`;
    /// ``update(_:_:_:)`` must follow with the symbol's interval.
    @inline(__always)
    mutating func decode(_ total: UInt32) -> UInt32 {
        ext = range / total
        let s = value / ext
        return total - min(s + 1, total)
    }

    /// ec_decode_bin: ``decode(_:)`` for a total of 2^`bits`.
    @inline(__always)
    mutating func decodeBin(_ bits: Int) -> UInt32 {
        ext = range >> UInt32(bits)
        let s = value / ext
        let total: UInt32 = 1 << UInt32(bits)
        return total - min(s + 1, total)
    }

    /// ec_dec_update: consumes the symbol whose cumulative frequencies are `low` ..< `high`
    /// out of `total`.
    @inline(__always)
    mutating func update(_ low: UInt32, _ high: UInt32, _ total: UInt32) {
        let s = ext &* (total &- high)
        value &-= s
        range = low > 0 ? ext &* (high &- low) : range &- s
        normalize()
    }

    /// §4.1.3.1, ec_dec_bit_logp: a bit whose probability of being 1 is 1/2^`logp`.
    @inline(__always)
    mutating func decodeBit(logp: Int) -> Bool {
        let s = range >> UInt32(logp)
        let one = value < s
        if one {
            range = s
        } else {
            value -= s
            range -= s
        }
        normalize()
        return one
    }

    /// §4.1.3.3, ec_dec_icdf: a symbol from an inverse cumulative table whose total is
    /// 2^`bits` (the table's entries fall to 0 at its last symbol).
    @inline(__always)
    mutating func decodeICDF(_ icdf: UnsafeBufferPointer<UInt8>, bits: Int) -> Int {
        let r = range >> UInt32(bits)
        var s = range
        var t: UInt32
        var k = -1
        repeat {
            t = s
            k += 1
            // A table whose last entry is not 0 would run off its end: stop at it.
            guard k < icdf.count else { k = icdf.count - 1; s = 0; break }
            s = r &* UInt32(icdf[k])
        } while value < s
        value &-= s
        range = t &- s
        normalize()
        return k
    }

    /// ``decodeICDF(_:bits:)`` over an array.
    @inline(__always)
    mutating func decodeICDF(_ icdf: [UInt8], bits: Int) -> Int {
        icdf.withUnsafeBufferPointer { decodeICDF($0, bits: bits) }
    }

    /// §4.1.4, ec_dec_bits: `count` (0…25) raw bits from the end of the frame.
    mutating func decodeBits(_ count: Int) -> UInt32 {
        precondition(count >= 0 && count <= 25)
        var window = endWindow
        var available = endBits
        if available < count {
            repeat {
                window |= UInt32(nextByteFromEnd()) << UInt32(available)
                available += OpusRangeDecoder.symbolBits
            } while available <= OpusRangeDecoder.windowBits - OpusRangeDecoder.symbolBits
        }
        let result = count == 0 ? 0 : window & (UInt32.max >> UInt32(32 - count))
        window = count == 32 ? 0 : window >> UInt32(count)
        available -= count
        endWindow = window
        endBits = available
        totalBits += count
        return result
    }

    /// §4.1.5, ec_dec_uint: a value in 0 ..< `total` (total ≥ 2), its top 8 bits range coded
    /// and the rest raw. A value past the range sets ``hasError`` and gives `total` − 1.
    mutating func decodeUInt(_ total: UInt32) -> UInt32 {
        precondition(total > 1)
        let ft = total - 1
        var bits = OpusRangeDecoder.ilog(ft)
        if bits > 8 {
            bits -= 8
            let top = (ft >> UInt32(bits)) + 1
            let s = decode(top)
            update(s, s + 1, top)
            let t = s << UInt32(bits) | decodeBits(bits)
            if t <= ft { return t }
            hasError = true
            return ft
        }
        let s = decode(total)
        update(s, s + 1, total)
        return s
    }

    /// §4.1.6.1, ec_tell: the bits used so far, rounded up.
    func tell() -> Int { totalBits - OpusRangeDecoder.ilog(range) }

    /// §4.1.6.2, ec_tell_frac: the bits used so far in eighths of a bit, rounded up.
    func tellFraction() -> Int {
        var l = OpusRangeDecoder.ilog(range)
        var r = range >> UInt32(l - 16)
        for _ in 0..<3 {
            r = (r &* r) >> 15
            let b = Int(r >> 16)
            l = l << 1 | b
            r >>= UInt32(b)
        }
        return (totalBits << 3) - l
    }

    /// Counts every bit of the frame as read (a CELT silence frame, RFC 6716 §4.3): ``tell()``
    /// then gives the frame's size in bits.
    mutating func skipToEnd() {
        totalBits += storage * 8 - tell()
    }

    /// Shortens the frame to its first `count` bytes, before any raw bit is read: a hybrid
    /// frame's CELT part ends where its redundant CELT frame starts (RFC 6716 §4.5.1).
    mutating func limit(toBytes count: Int) {
        storage = max(0, min(storage, count))
    }

    /// The number of significant bits of `x` (0 for 0), the RFC's ilog.
    @inline(__always)
    static func ilog(_ x: UInt32) -> Int { 32 - x.leadingZeroBitCount }

    /// The final range, which a decoder compares with the encoder's (`OPUS_GET_FINAL_RANGE`)
    /// in conformance tests.
    var finalRange: UInt32 { range }
}

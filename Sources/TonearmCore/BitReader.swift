/// An MSB-first bit reader over bytes, for bitstream headers and decoders.
///
/// Reads past the end return nil (or false from the `skip`), never trap. Reads of up to
/// 56 bits, unary codes and runs of Rice codes take whole 64-bit words at a time, so the
/// same reader serves header fields and a codec's hot loop.
public struct BitReader: Sendable {
    public let bytes: [UInt8]
    /// Position of the next bit, counted from the start of `bytes`.
    @usableFromInline var position: Int
    public let bitEnd: Int

    public init(_ bytes: [UInt8], byteOffset: Int = 0, byteCount: Int? = nil) {
        self.bytes = bytes
        position = byteOffset * 8
        bitEnd = (byteOffset + (byteCount ?? bytes.count - byteOffset)) * 8
        precondition(byteOffset >= 0 && bitEnd <= bytes.count * 8 && position <= bitEnd)
    }

    /// Position of the next bit, counted from the start of `bytes`.
    @inlinable public var bitPosition: Int { position }
    @inlinable public var bitsRemaining: Int { bitEnd - position }
    public var isByteAligned: Bool { position & 7 == 0 }
    public var byteIndex: Int { position >> 3 }

    /// The 64 bits from bit `pos` on, first bit in the top bit. Only the top 57 are sure
    /// to be data (a load starts at a byte); bytes past the end of `b` read as zeros.
    @inlinable @inline(__always)
    static func window(_ b: UnsafeBufferPointer<UInt8>, at pos: Int) -> UInt64 {
        let i = pos &>> 3
        var w: UInt64
        if i &+ 8 <= b.count {
            w = UInt64(bigEndian: UnsafeRawPointer(b.baseAddress!).loadUnaligned(fromByteOffset: i, as: UInt64.self))
        } else {
            w = 0
            var k = 0
            while k < 8 {
                w = w &<< 8 | (i &+ k < b.count ? UInt64(b[i &+ k]) : 0)
                k &+= 1
            }
        }
        return w &<< UInt64(pos & 7)
    }

    /// Reads up to 64 bits as an unsigned value.
    @inlinable
    public mutating func read(_ count: Int) -> UInt64? {
        guard let v = peek(count) else { return nil }
        position &+= count
        return v
    }

    /// Looks at up to 64 bits without moving.
    @inlinable
    public func peek(_ count: Int) -> UInt64? {
        precondition(count >= 0 && count <= 64)
        guard count <= bitsRemaining else { return nil }
        if count == 0 { return 0 }
        let pos = position
        if count <= 56 {
            return bytes.withUnsafeBufferPointer { Self.window($0, at: pos) &>> UInt64(64 &- count) }
        }
        let high = bytes.withUnsafeBufferPointer { Self.window($0, at: pos) &>> 32 }
        let low = bytes.withUnsafeBufferPointer { Self.window($0, at: pos &+ 32) &>> UInt64(96 &- count) }
        return high &<< UInt64(count &- 32) | low
    }

    @inlinable
    public mutating func readBit() -> Bool? { read(1).map { $0 == 1 } }

    /// A two's-complement signed value of `count` bits.
    @inlinable
    public mutating func readSigned(_ count: Int) -> Int64? {
        guard let v = read(count) else { return nil }
        if count == 0 { return 0 }
        return Int64(bitPattern: v &<< UInt64(64 &- count)) &>> Int64(64 &- count)
    }

    /// Counts zero bits up to and including a one bit; returns the count of zeros, or nil
    /// when the bits end first or more than `limit` zeros come.
    @inlinable
    public mutating func readUnary(limit: Int = 1 << 20) -> Int? {
        var pos = position
        let end = bitEnd
        let zeros: Int? = bytes.withUnsafeBufferPointer { b in
            var zeros = 0
            while true {
                let lz = Self.window(b, at: pos).leadingZeroBitCount
                if lz <= 56 {
                    zeros &+= lz
                    pos &+= lz &+ 1
                    return pos <= end && zeros <= limit ? zeros : nil
                }
                zeros &+= 56
                pos &+= 56
                if pos >= end || zeros > limit { return nil }
            }
        }
        guard let zeros else { return nil }
        position = pos
        return zeros
    }

    /// Reads `count` Rice codes of parameter `k` (0...32) as signed values (the unsigned
    /// value u stands for u/2 when even, −(u+1)/2 when odd), as FLAC's residuals
    /// (RFC 9639 §9.2.7). Returns false, and leaves the position where it was, when the
    /// bits end first or a value does not fit 32 bits; `out` may then be part written.
    @inlinable
    public mutating func readRiceSigned(into out: UnsafeMutablePointer<Int32>, count: Int, parameter k: Int) -> Bool {
        precondition(k >= 0 && k <= 32)
        var pos = position
        let end = bitEnd
        let limit = UInt64(UInt32.max) &>> UInt64(k)
        let ok: Bool = bytes.withUnsafeBufferPointer { b in
            // `w` holds the bits from `pos` on, of which the top `avail` are data; most
            // codes are taken from it without another load.
            var w = Self.window(b, at: pos)
            var avail = 64 &- (pos & 7)
            var i = 0
            while i < count {
                var q = w.leadingZeroBitCount
                var low: UInt64
                if q &+ 1 &+ k < avail {
                    // The whole code is in `w` (and `used` < 64, so the shifts are exact).
                    let used = q &+ 1 &+ k
                    low = ((w &<< UInt64(q &+ 1)) &>> 1) &>> UInt64(63 &- k)
                    w = w &<< UInt64(used)
                    avail &-= used
                    pos &+= used
                } else {
                    // A long unary run or a code across the window's end: read it afresh.
                    w = Self.window(b, at: pos)
                    var lz = w.leadingZeroBitCount
                    q = 0
                    while lz > 56 {
                        q &+= 56
                        pos &+= 56
                        if pos >= end || UInt64(q) > limit { return false }
                        w = Self.window(b, at: pos)
                        lz = w.leadingZeroBitCount
                    }
                    q &+= lz
                    let used = lz &+ 1
                    low = 0
                    if k != 0 {
                        if used &+ k <= 57 {
                            low = (w &<< UInt64(used)) &>> UInt64(64 &- k)
                        } else {
                            low = Self.window(b, at: pos &+ used) &>> UInt64(64 &- k)
                        }
                    }
                    pos &+= used &+ k
                    w = Self.window(b, at: pos)
                    avail = 64 &- (pos & 7)
                }
                guard pos <= end, UInt64(q) <= limit else { return false }
                let u = UInt32(truncatingIfNeeded: UInt64(q) &<< UInt64(k) | low)
                out[i] = Int32(bitPattern: u &>> 1) ^ (0 &- Int32(bitPattern: u & 1))
                i &+= 1
            }
            return true
        }
        if ok { position = pos }
        return ok
    }

    @discardableResult
    public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= bitsRemaining else { return false }
        position += count
        return true
    }

    public mutating func alignToByte() {
        position = min(bitEnd, (position + 7) & ~7)
    }
}

/// An MSB-first bit reader over bytes, for bitstream headers and decoders.
///
/// Reads past the end return nil (or false from the `skip`), never trap.
public struct BitReader: Sendable {
    public let bytes: [UInt8]
    /// Position of the next bit, counted from the start of `bytes`.
    public private(set) var bitPosition: Int
    public let bitEnd: Int

    public init(_ bytes: [UInt8], byteOffset: Int = 0, byteCount: Int? = nil) {
        self.bytes = bytes
        bitPosition = byteOffset * 8
        bitEnd = (byteOffset + (byteCount ?? bytes.count - byteOffset)) * 8
        precondition(byteOffset >= 0 && bitEnd <= bytes.count * 8 && bitPosition <= bitEnd)
    }

    public var bitsRemaining: Int { bitEnd - bitPosition }
    public var isByteAligned: Bool { bitPosition & 7 == 0 }
    public var byteIndex: Int { bitPosition >> 3 }

    /// Reads up to 64 bits as an unsigned value.
    public mutating func read(_ count: Int) -> UInt64? {
        guard let v = peek(count) else { return nil }
        bitPosition += count
        return v
    }

    /// Looks at up to 64 bits without moving.
    public func peek(_ count: Int) -> UInt64? {
        precondition(count >= 0 && count <= 64)
        guard count <= bitsRemaining else { return nil }
        if count == 0 { return 0 }
        var value: UInt64 = 0
        var pos = bitPosition
        var left = count
        while left > 0 {
            let byte = UInt64(bytes[pos >> 3])
            let bitInByte = pos & 7
            let take = min(8 - bitInByte, left)
            let shifted = (byte >> UInt64(8 - bitInByte - take)) & ((1 << UInt64(take)) - 1)
            value = value << UInt64(take) | shifted
            pos += take
            left -= take
        }
        return value
    }

    public mutating func readBit() -> Bool? { read(1).map { $0 == 1 } }

    /// A two's-complement signed value of `count` bits.
    public mutating func readSigned(_ count: Int) -> Int64? {
        guard let v = read(count) else { return nil }
        if count == 0 { return 0 }
        if count == 64 { return Int64(bitPattern: v) }
        let signBit: UInt64 = 1 << UInt64(count - 1)
        return v & signBit != 0 ? Int64(bitPattern: v | ~((signBit << 1) &- 1)) : Int64(v)
    }

    /// Counts zero bits up to and including a one bit; returns the count of zeros.
    public mutating func readUnary(limit: Int = 1 << 20) -> Int? {
        var zeros = 0
        while true {
            guard let bit = readBit() else { return nil }
            if bit { return zeros }
            zeros += 1
            if zeros > limit { return nil }
        }
    }

    @discardableResult
    public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= bitsRemaining else { return false }
        bitPosition += count
        return true
    }

    public mutating func alignToByte() {
        bitPosition = min(bitEnd, (bitPosition + 7) & ~7)
    }
}

/// An MSB-first reader over the bits of one SBR extension payload.
///
/// Reading past `end` gives zeros and leaves `position` beyond `end`, so the parser needs
/// no error path per field: it checks ``overrun`` once per syntax element, and no count read
/// from the bitstream can make it load a byte outside the payload.
struct SBRBits {
    let base: UnsafePointer<UInt8>
    /// The next bit, counted from `base`.
    var position: Int
    /// The bit position the payload ends at.
    let end: Int

    init(_ base: UnsafePointer<UInt8>, bitPosition: Int, bitCount: Int) {
        self.base = base
        position = bitPosition
        end = bitPosition + max(0, bitCount)
    }

    var overrun: Bool { position > end }
    var bitsLeft: Int { end - position }

    /// The next `count` (0…25) bits.
    @inline(__always)
    mutating func read(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        // Bytes at or past the end byte read as zero: never a load outside the payload.
        let lastByte = (end &+ 7) &>> 3
        let i = position &>> 3
        var w: UInt32 = 0
        for k in 0..<4 { w = w &<< 8 | (i &+ k < lastByte ? UInt32(base[i &+ k]) : 0) }
        var v = (w &<< UInt32(position & 7)) &>> UInt32(32 &- count)
        // Bits of the end byte beyond `end` are not the payload's: mask them.
        let over = position &+ count &- end
        if over > 0 { v &= over >= count ? 0 : ~((1 &<< UInt32(over)) &- 1) }
        position &+= count
        return Int(v)
    }

    /// The next `count` (0…25) bits, without moving on.
    @inline(__always)
    func peek(_ count: Int) -> Int {
        var copy = self
        return copy.read(count)
    }

    @inline(__always)
    mutating func bit() -> Bool { read(1) == 1 }

    mutating func skip(_ count: Int) { position &+= max(0, count) }
}

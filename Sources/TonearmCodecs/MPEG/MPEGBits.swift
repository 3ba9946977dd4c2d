/// An MSB-first reader of up to 24 bits at a time over raw bytes, for what the MPEG
/// decoders read field by field: headers' side information, bit allocations and scale
/// factors. Reading past `end` gives zeros, sets `overrun` and leaves the position at the
/// end, so loops need no error path per read and no length can read outside the bytes.
/// (Layer III's Huffman data has its own word-at-a-time reader, ``Layer3Huffman``.)
struct MPEGBits {
    let base: UnsafePointer<UInt8>?
    /// The next bit, counted from the start of the bytes.
    var position: Int
    /// The bit position reading stops at.
    let end: Int
    private(set) var overrun = false

    /// Reads bytes `startByte..<endByte` (to the end of the bytes when `endByte` is nil).
    init(_ bytes: UnsafeRawBufferPointer, from startByte: Int = 0, to endByte: Int? = nil) {
        self.init(bytes, bitPosition: startByte * 8, endBit: (endByte ?? bytes.count) * 8)
    }

    /// Reads from bit `bitPosition` to the end of the bytes.
    init(_ bytes: UnsafeRawBufferPointer, bitPosition: Int) {
        self.init(bytes, bitPosition: bitPosition, endBit: bytes.count * 8)
    }

    private init(_ bytes: UnsafeRawBufferPointer, bitPosition: Int, endBit: Int) {
        base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        position = bitPosition
        end = base == nil ? 0 : min(endBit, bytes.count * 8)
    }

    /// The next `count` (≤ 24) bits.
    @inline(__always)
    mutating func read(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        guard let base, position >= 0, position &+ count <= end else {
            overrun = true
            position = max(position, end)
            return 0
        }
        // At most 31 bits from `position`: four bytes, those past the last bit read as 0.
        let i = position &>> 3, last = (position &+ count &- 1) &>> 3
        var w: UInt32 = 0
        for k in 0..<4 { w = w &<< 8 | (i &+ k <= last ? UInt32(base[i &+ k]) : 0) }
        let v = (w &<< UInt32(position & 7)) &>> UInt32(32 &- count)
        position &+= count
        return Int(v)
    }
}

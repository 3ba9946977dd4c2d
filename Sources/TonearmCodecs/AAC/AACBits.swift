/// An MSB-first bit reader over one AAC packet, copied into a buffer with zero bytes after
/// it, so that every read is one unaligned 64-bit load and no read needs an error path.
///
/// Reading past `end` gives zeros (or whatever the padding holds, never memory outside the
/// buffer: the load index is clamped) and leaves `position` beyond `end`, which the
/// decoder checks once per syntax element (``overrun``): a truncated frame is concealed,
/// never read outside its bytes.
struct AACBits {
    let base: UnsafePointer<UInt8>
    /// The last byte index an 8-byte load may start at.
    let lastLoad: Int
    /// The next bit, counted from the start of the packet.
    var position: Int
    /// The packet's length in bits.
    let end: Int

    init(_ base: UnsafePointer<UInt8>, byteCount: Int, capacity: Int) {
        precondition(capacity >= byteCount + 8)
        self.base = base
        lastLoad = capacity - 8
        position = 0
        end = byteCount * 8
    }

    var overrun: Bool { position > end }
    /// The bits left before `end` (negative after an overrun): an extension payload's reader
    /// takes no more than these.
    var bitsLeft: Int { end - position }

    /// The next 32 bits, first bit in the top bit.
    @inline(__always)
    func peek32() -> UInt32 {
        let i = min(position &>> 3, lastLoad)
        let w = UInt64(bigEndian: UnsafeRawPointer(base).loadUnaligned(fromByteOffset: i, as: UInt64.self))
        return UInt32(truncatingIfNeeded: (w &<< UInt64(position & 7)) &>> 32)
    }

    /// The next `count` bits (0…25).
    @inline(__always)
    mutating func read(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        let v = peek32() &>> UInt32(32 &- count)
        position &+= count
        return Int(v)
    }

    @inline(__always)
    mutating func bit() -> Bool { read(1) == 1 }

    @inline(__always)
    mutating func skip(_ count: Int) { position &+= max(0, count) }

    /// Byte alignment, counted from the start of the packet (the raw data block).
    mutating func align() { position = (position &+ 7) & ~7 }
}

/// A 64-bit window onto an ``AACBits`` for the Huffman loops: the next bits stay in a
/// register, and memory is read again only once fewer than 32 are left, so that a codeword's
/// length feeds the next lookup through a shift rather than an address, a load and a shift.
///
/// At least 32 bits are valid after every step (the load index is clamped as ``AACBits``
/// clamps it, so that reading past the packet reads padding and never outside the buffer).
/// Give the position back with ``AACBits/position`` when done.
struct AACBitWindow {
    let base: UnsafeRawPointer
    let lastLoad: Int
    /// The next bit, counted from the start of the packet.
    private(set) var position: Int
    private var cache: UInt64 = 0
    private var valid = 0

    @inline(__always)
    init(_ r: AACBits) {
        base = UnsafeRawPointer(r.base)
        lastLoad = r.lastLoad
        position = r.position
        refill()
    }

    @inline(__always)
    private mutating func refill() {
        let i = min(position &>> 3, lastLoad)
        cache = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &<< UInt64(position & 7)
        valid = 64 &- (position & 7)
    }

    /// The next 32 bits, first bit in the top bit.
    @inline(__always)
    var peek32: UInt32 { UInt32(truncatingIfNeeded: cache &>> 32) }

    /// Moves on by `count` bits (at most 32).
    @inline(__always)
    mutating func skip(_ count: Int) {
        cache &<<= UInt64(count)
        valid &-= count
        position &+= count
        if valid < 32 { refill() }
    }

    /// The next `count` bits (1…25).
    @inline(__always)
    mutating func read(_ count: Int) -> Int {
        let v = peek32 &>> UInt32(32 &- count)
        skip(count)
        return Int(v)
    }
}

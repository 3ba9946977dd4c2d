import TonearmCore

/// Reads a Vorbis packet least-significant bit first (Vorbis I §2.1.4): the first bit is bit
/// 0 of the first byte, and a value's first bit is its lowest.
///
/// The bytes must be followed by at least 8 readable bytes (``VorbisPacketBuffer`` pads
/// with zeros), so that a peek near the end is one unaligned 64-bit load. Reading past the
/// end is not an error here: the bits read as zero and ``isExhausted`` turns true, which
/// is the spec's end-of-packet condition (§2.1.4.3) that every caller checks after a read.
struct VorbisBits {
    private let base: UnsafePointer<UInt8>
    let bitCount: Int
    /// The next bit to read; at most `bitCount + 1` (a read past the end stops there).
    private(set) var position = 0

    init(_ base: UnsafePointer<UInt8>, byteCount: Int) {
        self.base = base
        bitCount = byteCount &* 8
    }

    /// Whether a read went past the end of the packet.
    @inline(__always) var isExhausted: Bool { position > bitCount }

    var bitsRemaining: Int { max(0, bitCount - position) }

    /// The next 32 bits, the first in bit 0; zeros past the end.
    @inline(__always) func peek32() -> UInt32 {
        let word = UnsafeRawPointer(base + (position &>> 3)).loadUnaligned(as: UInt64.self)
        return UInt32(truncatingIfNeeded: UInt64(littleEndian: word) &>> UInt64(position & 7))
    }

    /// Moves on `n` bits, stopping one past the end.
    @inline(__always) mutating func consume(_ n: Int) {
        position = min(position &+ n, bitCount &+ 1)
    }

    /// Reads `n` bits (0…32) as an unsigned value, the first bit lowest.
    @inline(__always) mutating func read(_ n: Int) -> UInt32 {
        let v = n >= 32 ? peek32() : peek32() & ((1 << UInt32(n)) &- 1)
        consume(n)
        return v
    }

    @inline(__always) mutating func readInt(_ n: Int) -> Int { Int(read(n)) }

    @inline(__always) mutating func readFlag() -> Bool { read(1) != 0 }
}

/// A packet's bytes copied with 8 zero bytes after them, for ``VorbisBits``.
final class VorbisPacketBuffer {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity + 8)
    }

    deinit { storage.deallocate() }

    /// The bytes of `p` behind a reader.
    func load(_ p: UnsafeRawBufferPointer) -> VorbisBits {
        if p.count > capacity {
            storage.deallocate()
            capacity = p.count
            storage = .allocate(capacity: capacity + 8)
        }
        if let b = p.baseAddress, p.count > 0 { UnsafeMutableRawPointer(storage).copyMemory(from: b, byteCount: p.count) }
        (storage + p.count).initialize(repeating: 0, count: 8)
        return VorbisBits(storage, byteCount: p.count)
    }
}

extension Array where Element == UInt8 {
    /// Calls `body` with a reader over these bytes (copied with the zero padding it needs).
    func withVorbisBits<R>(from byteOffset: Int = 0, _ body: (inout VorbisBits) throws(AudioError) -> R) throws(AudioError) -> R {
        let buffer = VorbisPacketBuffer(capacity: Swift.max(1, count))
        var bits = withUnsafeBytes { raw in buffer.load(UnsafeRawBufferPointer(rebasing: raw[Swift.min(byteOffset, raw.count)...])) }
        return try withExtendedLifetime(buffer) { () throws(AudioError) -> R in try body(&bits) }
    }
}

/// The number of bits needed to hold `x` (Vorbis I §9.2.1): ilog(0) = 0, ilog(7) = 3.
@inline(__always) func vorbisILog(_ x: Int) -> Int {
    x <= 0 ? 0 : Int.bitWidth - x.leadingZeroBitCount
}

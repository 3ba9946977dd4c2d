/// Writes bits most significant first, the counterpart of ``BitReader``, for encoders
/// (FLAC frames, for one).
///
/// Bits gather in a 64-bit accumulator and leave it 32 at a time, so a write is a shift,
/// an OR and, every fourth byte, one four-byte append.
public struct BitWriter: Sendable {
    /// The bytes written so far (whole bytes only; see ``alignToByte()``).
    public internal(set) var bytes: [UInt8]
    /// Pending bits, in the low `pending` bits (higher bits are stale).
    @usableFromInline var accumulator: UInt64 = 0
    @usableFromInline var pending = 0

    /// A writer that appends to `bytes` (its capacity is kept).
    public init(bytes: [UInt8] = [], reservingCapacity capacity: Int = 0) {
        self.bytes = bytes
        if capacity > 0 { self.bytes.reserveCapacity(bytes.count + capacity) }
    }

    /// Bits written so far, pending ones included.
    public var bitCount: Int { bytes.count * 8 + pending }

    /// True when no bits wait for a whole byte.
    public var isByteAligned: Bool { pending & 7 == 0 }

    /// Writes the low `count` bits of `value` (0 to 32 bits; higher bits of `value` are ignored).
    @inlinable @inline(__always)
    public mutating func write(_ value: UInt32, bits count: Int) {
        writeBits(UInt64(value), count)
    }

    /// Writes the low `count` bits of `value`, up to 64 of them.
    public mutating func write64(_ value: UInt64, bits count: Int) {
        if count > 32 {
            writeBits(value >> 32, count - 32)
            writeBits(value & 0xFFFF_FFFF, 32)
        } else {
            writeBits(value, count)
        }
    }

    /// Writes a signed value in `count` bits, two's complement (up to 64 bits).
    public mutating func writeSigned(_ value: Int64, bits count: Int) {
        let masked = count == 64 ? UInt64(bitPattern: value) : UInt64(bitPattern: value) & ((1 << UInt64(count)) - 1)
        write64(masked, bits: count)
    }

    @usableFromInline @inline(__always)
    mutating func writeBits(_ value: UInt64, _ count: Int) {
        // pending < 32 and count <= 32, so nothing is pushed out of the accumulator.
        accumulator = accumulator &<< UInt64(count) | (value & ((1 &<< UInt64(count)) &- 1))
        pending &+= count
        if pending >= 32 {
            pending &-= 32
            let word = UInt32(truncatingIfNeeded: accumulator &>> UInt64(pending))
            appendWord(word)
        }
    }

    @usableFromInline @inline(__always)
    mutating func appendWord(_ word: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: word >> 24))
        bytes.append(UInt8(truncatingIfNeeded: word >> 16))
        bytes.append(UInt8(truncatingIfNeeded: word >> 8))
        bytes.append(UInt8(truncatingIfNeeded: word))
    }

    /// `zeros` zero bits and a one (the unary code ``BitReader/readUnary()`` reads).
    @inlinable @inline(__always)
    public mutating func writeUnary(_ zeros: Int) {
        var z = zeros
        while z >= 32 {
            writeBits(0, 32)
            z -= 32
        }
        writeBits(1, z + 1)
    }

    /// A Rice code with parameter `k` (0 to 31) of a signed value, folded to unsigned as FLAC
    /// does (0, −1, 1, −2, … → 0, 1, 2, 3, …): the quotient in unary, then `k` low bits.
    @inlinable @inline(__always)
    public mutating func writeRiceSigned(_ value: Int32, parameter k: Int) {
        let u = UInt32(bitPattern: (value &<< 1) ^ (value &>> 31))
        let q = Int(u >> UInt32(k))
        if q + 1 + k <= 32 {
            writeBits(UInt64(1) << UInt64(k) | UInt64(u) & ((1 << UInt64(k)) - 1), q + 1 + k)
        } else {
            writeUnary(q)
            writeBits(UInt64(u), k)
        }
    }

    /// Rice codes with parameter `k` (0 to 30) of `count` signed values, each as
    /// ``writeRiceSigned(_:parameter:)`` writes it. Whole words gather in a local buffer that
    /// is appended in pieces, so that a value costs a few shifts and no array bookkeeping.
    public mutating func writeRiceSignedBlock(_ values: UnsafePointer<Int32>, count: Int, parameter k: Int) {
        guard count > 0 else { return }
        var acc = accumulator, fill = pending
        let kk = UInt64(k), low = (UInt64(1) << kk) &- 1
        let capacity = 1024
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            let out = UnsafeMutableRawPointer(buffer.baseAddress!)
            var used = 0
            @inline(__always) func flush() {
                bytes.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress!, count: used))
                used = 0
            }
            // `v` has at most `len` ≤ 32 bits; fill < 32 before, so nothing leaves the accumulator.
            @inline(__always) func put(_ v: UInt64, _ len: Int) {
                acc = acc &<< UInt64(len) | v
                fill &+= len
                if fill >= 32 {
                    fill &-= 32
                    out.storeBytes(of: UInt32(truncatingIfNeeded: acc &>> UInt64(fill)).bigEndian, toByteOffset: used, as: UInt32.self)
                    used &+= 4
                    if used == capacity { flush() }
                }
            }
            for i in 0..<count {
                let v = values[i]
                let u = UInt32(bitPattern: (v &<< 1) ^ (v &>> 31))
                let q = Int(u >> UInt32(k))
                let len = q &+ 1 &+ k
                if len <= 32 {
                    put(UInt64(1) &<< kk | (UInt64(u) & low), len)
                } else {
                    var z = q
                    while z >= 32 {
                        put(0, 32)
                        z -= 32
                    }
                    put(1, z + 1)
                    if k > 0 { put(UInt64(u) & low, k) }
                }
            }
            if used > 0 { flush() }
        }
        accumulator = acc
        pending = fill
    }

    /// Pads with zero bits to a byte boundary and moves whole pending bytes to ``bytes``.
    public mutating func alignToByte() {
        let pad = (8 - pending & 7) & 7
        if pad > 0 { writeBits(0, pad) }
        while pending >= 8 {
            pending -= 8
            bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
        }
    }

    /// Overwrites a byte already moved to ``bytes``.
    public mutating func setByte(_ value: UInt8, at index: Int) { bytes[index] = value }

    /// Appends whole bytes; the writer must be byte-aligned.
    public mutating func append(_ raw: [UInt8]) {
        precondition(isByteAligned && pending == 0, "BitWriter.append needs a byte-aligned, flushed writer")
        bytes.append(contentsOf: raw)
    }

    /// Takes the bytes out (aligning first), leaving the writer empty with its capacity.
    public mutating func takeBytes() -> [UInt8] {
        alignToByte()
        let out = bytes
        bytes.removeAll(keepingCapacity: true)
        return out
    }

    /// Forgets everything written, keeping the capacity.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        pending = 0
        accumulator = 0
    }
}

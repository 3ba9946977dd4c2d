import TonearmCore

/// EBML, the binary layout Matroska is written in (RFC 8794): elements of an ID, a size and
/// a body, both the ID and the size as variable-length integers (§4).
enum EBML {
    /// An element's header.
    struct Header: Equatable {
        /// The ID with its marker bits, as the IDs of ``MKV`` are written.
        var id: UInt32
        /// The body's size; nil for the unknown size (every value bit set, §6.2).
        var size: Int64?
        var headerSize: Int
    }

    static func fail(_ why: String) -> AudioError { AudioError(.invalidFile, "Matroska: \(why)") }

    /// The length of a variable-length integer from its first byte (RFC 8794 §4.1: the
    /// count of leading zero bits plus one); nil for a first byte of 0 (longer than 8).
    @inline(__always)
    static func length(_ first: UInt8) -> Int? {
        first == 0 ? nil : first.leadingZeroBitCount + 1
    }

    /// Reads an element header at `at`: nil when the bytes end inside it. Throws for an ID
    /// longer than `maxIDLength` or a size longer than `maxSizeLength` (the EBML header's
    /// EBMLMaxIDLength and EBMLMaxSizeLength), or an ID of the reserved all-ones or
    /// all-zeros forms (§5).
    static func header(_ p: UnsafeRawBufferPointer, at: Int = 0, maxIDLength: Int = 4, maxSizeLength: Int = 8)
        throws(AudioError) -> Header?
    {
        guard at < p.count else { return nil }
        guard let idLength = length(p[at]), idLength <= maxIDLength else {
            throw fail("an element ID at byte \(at) is longer than \(maxIDLength) bytes")
        }
        guard at + idLength < p.count else { return nil }
        var id: UInt32 = 0
        for k in 0..<idLength { id = id << 8 | UInt32(p[at + k]) }
        let valueBits = UInt32(7 * idLength)
        let value = id & ((1 << valueBits) - 1)
        // All ones is reserved (§5). All zeros is too, but Matroska's ChapterDisplay is 0x80.
        guard value != (1 << valueBits) - 1 else { throw fail("a reserved element ID 0x\(String(id, radix: 16))") }
        let s = at + idLength
        guard let sizeLength = length(p[s]), sizeLength <= maxSizeLength else {
            throw fail("an element size longer than \(maxSizeLength) bytes (ID 0x\(String(id, radix: 16)))")
        }
        guard s + sizeLength <= p.count else { return nil }
        var size = UInt64(p[s]) & (0xFF >> UInt64(sizeLength))
        var k = 1
        while k < sizeLength { size = size << 8 | UInt64(p[s + k]); k += 1 }
        let allOnes = (UInt64(1) << UInt64(7 * sizeLength)) - 1
        let known: Int64? = size == allOnes ? nil : (size > UInt64(Int64.max >> 2) ? Int64.max >> 2 : Int64(size))
        return Header(id: id, size: known, headerSize: idLength + sizeLength)
    }

    /// A variable-length unsigned integer (a lace size, a track number): value and length;
    /// nil when the bytes end inside it or it is longer than 8 bytes.
    static func vint(_ p: UnsafeRawBufferPointer, at: Int) -> (value: UInt64, length: Int)? {
        guard at < p.count, let n = length(p[at]), at + n <= p.count else { return nil }
        var v = UInt64(p[at]) & (0xFF >> UInt64(n))
        var k = 1
        while k < n { v = v << 8 | UInt64(p[at + k]); k += 1 }
        return (v, n)
    }

    /// A signed variable-length integer (EBML lacing's size differences, RFC 9559 §10.3.3):
    /// the unsigned value less half its range.
    static func signedVint(_ p: UnsafeRawBufferPointer, at: Int) -> (value: Int64, length: Int)? {
        guard let (u, n) = vint(p, at: at) else { return nil }
        let bias = (Int64(1) << Int64(7 * n - 1)) - 1
        return (Int64(u) - bias, n)
    }

    // MARK: Values (RFC 8794 §7)

    /// An unsigned integer of 0 to 8 bytes (0 bytes is 0); nil for a longer body.
    static func uint(_ b: ArraySlice<UInt8>) -> UInt64? {
        guard b.count <= 8 else { return nil }
        return b.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A signed integer of 0 to 8 bytes, two's complement.
    static func int(_ b: ArraySlice<UInt8>) -> Int64? {
        guard let u = uint(b) else { return nil }
        guard !b.isEmpty, b.count < 8 else { return Int64(bitPattern: u) }
        let shift = UInt64(64 - 8 * b.count)
        return Int64(bitPattern: u << shift) >> Int64(shift)
    }

    /// A float of 0, 4 or 8 bytes.
    static func float(_ b: ArraySlice<UInt8>) -> Double? {
        switch b.count {
        case 0: return 0
        case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: uint(b)!)))
        case 8: return Double(bitPattern: uint(b)!)
        default: return nil
        }
    }

    /// A String or UTF-8 element: text up to the first zero byte (§7.4, §7.5).
    static func string(_ b: ArraySlice<UInt8>) -> String {
        String(decoding: b.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The child elements of a master element's body held in `b[range]`: ID and body range.
    /// A child with the unknown size, or one that runs past the parent, ends the list (its
    /// bytes are damaged); the children before it are kept.
    static func children(_ b: [UInt8], _ range: Range<Int>) -> [(id: UInt32, body: Range<Int>)] {
        var out: [(id: UInt32, body: Range<Int>)] = []
        b.withUnsafeBytes { raw in
            let p = UnsafeRawBufferPointer(rebasing: raw[range])
            var at = 0
            while at < p.count {
                guard let h = try? header(p, at: at), let size = h.size else { return }
                let start = at + h.headerSize
                guard size <= Int64(p.count - start) else { return }
                let end = start + Int(size)
                out.append((h.id, (range.lowerBound + start)..<(range.lowerBound + end)))
                at = end
            }
        }
        return out
    }

    /// The first child with this ID.
    static func child(_ id: UInt32, in list: [(id: UInt32, body: Range<Int>)]) -> Range<Int>? {
        list.first { $0.id == id }?.body
    }
}

import TonearmCore

/// One codebook of a Vorbis setup header (Vorbis I §3): a Huffman code over its entries,
/// and for lookup types 1 and 2 the vector each entry stands for.
///
/// Decoding is a table lookup on the next `tableBits` bits of the packet; the rarer longer
/// codewords are found by a binary search over the codewords sorted as MSB-first numbers
/// (in a complete prefix code, the codeword whose interval holds the next 32 bits is the
/// largest one not above them). The tables live in manual allocations so that the residue
/// loop reads them without bounds checks or reference counting; every index is bounded
/// by construction.
final class VorbisCodebook {
    let dimensions: Int
    let entryCount: Int
    /// Entry vectors, `entryCount × dimensions` floats; nil for lookup type 0.
    let values: UnsafeMutablePointer<Float>?
    private let tableBits: Int
    private let tableMask: UInt32
    /// `entry << 6 | length` for codewords up to `tableBits` long; −1 where a longer
    /// codeword begins, −2 where no codeword does (a book with no used entry).
    private let table: UnsafeMutablePointer<Int32>
    private let longCount: Int
    private let longCodes: UnsafeMutablePointer<UInt32>
    private let longEntries: UnsafeMutablePointer<Int32>
    /// The used entry of a single-entry book, which reads one bit (§3.2.1 errata 20150226).
    private let singleEntry: Int32

    /// Limits on what one setup header may ask for, shared by all its codebooks.
    struct Budget {
        /// Entries over all codebooks (each costs a length byte and Huffman work).
        var entries = 1 << 22
        /// VQ floats over all codebooks.
        var values = 1 << 23

        mutating func take(entries n: Int) throws(AudioError) {
            guard n <= entries else { throw VorbisSetupHeader.fail("its codebooks declare more than 4 Mi entries") }
            entries -= n
        }

        mutating func take(values n: Int) throws(AudioError) {
            guard n <= values else { throw VorbisSetupHeader.fail("its codebooks' vector tables exceed 8 Mi values") }
            values -= n
        }
    }

    private init(dimensions: Int, entryCount: Int, values: UnsafeMutablePointer<Float>?, tableBits: Int,
                 table: UnsafeMutablePointer<Int32>, longCodes: [(code: UInt32, entry: Int32)], singleEntry: Int32)
    {
        self.dimensions = dimensions
        self.entryCount = entryCount
        self.values = values
        self.tableBits = tableBits
        tableMask = UInt32((1 << tableBits) - 1)
        self.table = table
        self.singleEntry = singleEntry
        longCount = longCodes.count
        self.longCodes = .allocate(capacity: max(1, longCount))
        self.longEntries = .allocate(capacity: max(1, longCount))
        for (i, c) in longCodes.enumerated() {
            self.longCodes[i] = c.code
            self.longEntries[i] = c.entry
        }
    }

    deinit {
        values?.deallocate()
        table.deallocate()
        longCodes.deallocate()
        longEntries.deallocate()
    }

    /// Decodes one entry number (scalar context, §3.3); −1 at the end of the packet.
    @inline(__always)
    func decode(_ r: inout VorbisBits) -> Int {
        if singleEntry >= 0 {
            r.consume(1)
            return r.isExhausted ? -1 : Int(singleEntry)
        }
        let bits = r.peek32()
        let t = table[Int(bits & tableMask)]
        if t >= 0 {
            r.consume(Int(t & 63))
            return r.isExhausted ? -1 : Int(t >> 6)
        }
        return t == -1 ? decodeLong(bits, &r) : -1
    }

    private func decodeLong(_ bits: UInt32, _ r: inout VorbisBits) -> Int {
        let key = bits.vorbisBitReversed
        var lo = 0, hi = longCount - 1  // the largest code ≤ key
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if longCodes[mid] <= key { lo = mid } else { hi = mid - 1 }
        }
        let packed = longEntries[lo]
        r.consume(Int(packed & 63))
        return r.isExhausted ? -1 : Int(packed >> 6)
    }

    /// Reads one codebook (§3.2.1).
    static func read(_ r: inout VorbisBits, budget: inout Budget) throws(AudioError) -> VorbisCodebook {
        func need(_ n: Int) throws(AudioError) -> Int {
            let v = r.readInt(n)
            guard !r.isExhausted else { throw VorbisSetupHeader.fail("it ends inside a codebook") }
            return v
        }
        guard try need(24) == 0x564342 else { throw VorbisSetupHeader.fail("a codebook has no sync pattern") }
        let dimensions = try need(16)
        let entries = try need(24)
        try budget.take(entries: entries)

        // Codeword lengths, 0 for an unused entry.
        var lengths = [UInt8](repeating: 0, count: entries)
        if try need(1) == 1 {  // ordered: runs of increasing lengths
            var current = 0
            var length = try need(5) + 1
            while current < entries {
                let count = try need(vorbisILog(entries - current))
                guard count <= entries - current, length <= 32 else { throw VorbisSetupHeader.fail("a codebook's length runs are wrong") }
                for i in current..<current + count { lengths[i] = UInt8(length) }
                current += count
                length += 1
            }
        } else {
            let sparse = try need(1) == 1
            // Each entry takes at least one bit.
            guard entries <= r.bitsRemaining else { throw VorbisSetupHeader.fail("a codebook claims \(entries) entries") }
            for i in 0..<entries {
                let present = sparse ? try need(1) == 1 : true
                if present { lengths[i] = UInt8(try need(5) + 1) }
            }
        }

        // The vector lookup table (§3.2.1, lookup types 1 and 2).
        let lookup = try need(4)
        var values: UnsafeMutablePointer<Float>?
        switch lookup {
        case 0:
            break
        case 1, 2:
            let minimum = float32Unpack(UInt32(try need(32)))
            let delta = float32Unpack(UInt32(try need(32)))
            let valueBits = try need(4) + 1
            let sequenceP = try need(1) == 1
            guard dimensions > 0 else { throw VorbisSetupHeader.fail("a codebook with a lookup table has 0 dimensions") }
            let (total, overflow) = entries.multipliedReportingOverflow(by: dimensions)
            guard !overflow else { throw VorbisSetupHeader.fail("a codebook's vector table is too large") }
            let count = lookup == 1 ? lookup1Values(entries: entries, dimensions: dimensions) : total
            guard count.multipliedReportingOverflow(by: valueBits).partialValue <= r.bitsRemaining, count <= r.bitsRemaining else {
                throw VorbisSetupHeader.fail("a codebook's lookup table runs past the header")
            }
            var multiplicands = [UInt32](repeating: 0, count: count)
            for i in 0..<count { multiplicands[i] = UInt32(try need(valueBits)) }
            try budget.take(values: total)
            let v = UnsafeMutablePointer<Float>.allocate(capacity: max(1, total))
            for e in 0..<entries {
                var last: Float = 0
                var divisor = 1
                for d in 0..<dimensions {
                    let m: UInt32
                    if lookup == 1 {
                        // Once the divisor passes the entry count every further digit is 0;
                        // stopping there keeps it from overflowing with many dimensions.
                        m = multiplicands[(e / divisor) % count]
                        if divisor <= entries { divisor *= count }
                    } else {
                        m = multiplicands[e * dimensions + d]
                    }
                    let x = Float(m) * delta + minimum + last
                    v[e * dimensions + d] = x
                    if sequenceP { last = x }
                }
            }
            values = v
        default:
            throw VorbisSetupHeader.fail("codebook lookup type \(lookup)")
        }

        do {
            return try build(dimensions: dimensions, lengths: lengths, values: values)
        } catch {
            values?.deallocate()
            throw error
        }
    }

    /// Assigns codewords as §3.2.1 says (each entry, in order, takes the leftmost free
    /// leaf of its depth) and builds the decoding tables. An over- or underspecified tree
    /// is refused, except a book with one used entry of length 1.
    private static func build(dimensions: Int, lengths: [UInt8], values: UnsafeMutablePointer<Float>?) throws(AudioError) -> VorbisCodebook {
        let used = lengths.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        let maxLength = Int(lengths.max() ?? 0)
        let tableBits = max(1, min(maxLength, 10))
        let table = UnsafeMutablePointer<Int32>.allocate(capacity: 1 << tableBits)
        table.initialize(repeating: -2, count: 1 << tableBits)
        if used <= 1 {
            var single: Int32 = -1
            if let e = lengths.firstIndex(where: { $0 > 0 }) {
                guard lengths[e] == 1 else {
                    table.deallocate()
                    throw VorbisSetupHeader.fail("a single-entry codebook's codeword is \(lengths[e]) bits, not 1")
                }
                single = Int32(e)
            }
            return VorbisCodebook(dimensions: dimensions, entryCount: lengths.count, values: values, tableBits: tableBits,
                                  table: table, longCodes: [], singleEntry: single)
        }
        // available[d]: the free node at depth d (MSB-aligned), 0 when none.
        var available = [UInt32](repeating: 0, count: 33)
        var long: [(code: UInt32, entry: Int32)] = []
        var first = true
        for (entry, l) in lengths.enumerated() where l > 0 {
            let length = Int(l)
            var code: UInt32
            if first {
                first = false
                code = 0
                for d in 1...length { available[d] = 1 << UInt32(32 - d) }
            } else {
                var z = length
                while z > 0 && available[z] == 0 { z -= 1 }
                guard z > 0 else {
                    table.deallocate()
                    throw VorbisSetupHeader.fail("a codebook's Huffman tree is overspecified")
                }
                code = available[z]
                available[z] = 0
                if z < length {
                    for d in (z + 1)...length { available[d] = code &+ (1 << UInt32(32 - d)) }
                }
            }
            let reversed = code.vorbisBitReversed  // the codeword as it lies in the stream
            if length <= tableBits {
                let packed = Int32(entry) << 6 | Int32(length)
                var fill = Int(reversed)
                while fill < 1 << tableBits {
                    table[fill] = packed
                    fill += 1 << length
                }
            } else {
                table[Int(reversed) & ((1 << tableBits) - 1)] = -1
                long.append((code, Int32(entry) << 6 | Int32(length)))
            }
        }
        guard !available.contains(where: { $0 != 0 }) else {
            table.deallocate()
            throw VorbisSetupHeader.fail("a codebook's Huffman tree is underspecified")
        }
        long.sort { $0.code < $1.code }
        return VorbisCodebook(dimensions: dimensions, entryCount: lengths.count, values: values, tableBits: tableBits,
                              table: table, longCodes: long, singleEntry: -1)
    }

    /// §9.2.2: a 21-bit mantissa, a sign and a 10-bit exponent biased by 788.
    static func float32Unpack(_ x: UInt32) -> Float {
        let mantissa = Double(x & 0x1F_FFFF)
        let exponent = Int((x & 0x7FE0_0000) >> 21) - 788
        let v = Float(mantissa * pow2(exponent))
        return x & 0x8000_0000 != 0 ? -v : v
    }

    private static func pow2(_ e: Int) -> Double {
        // Exact for the exponents a 10-bit field gives (−788…235), all inside Double's range.
        Double(sign: .plus, exponent: e, significand: 1)
    }

    /// §9.2.3: the largest r with r^dimensions ≤ entries.
    static func lookup1Values(entries: Int, dimensions: Int) -> Int {
        guard entries > 0, dimensions > 0 else { return 0 }
        func fits(_ r: Int) -> Bool {
            var p = 1
            for _ in 0..<dimensions {
                let (m, overflow) = p.multipliedReportingOverflow(by: r)
                if overflow || m > entries { return false }
                p = m
            }
            return true
        }
        var lo = 0, hi = entries
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2
            if fits(mid) { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }
}

extension UInt32 {
    /// The bits in the opposite order: a Vorbis codeword (MSB first) as it lies in the
    /// LSB-first stream, and back.
    @inline(__always) var vorbisBitReversed: UInt32 {
        var v = self
        v = (v >> 1) & 0x5555_5555 | (v & 0x5555_5555) << 1
        v = (v >> 2) & 0x3333_3333 | (v & 0x3333_3333) << 2
        v = (v >> 4) & 0x0F0F_0F0F | (v & 0x0F0F_0F0F) << 4
        v = (v >> 8) & 0x00FF_00FF | (v & 0x00FF_00FF) << 8
        return v >> 16 | v << 16
    }
}

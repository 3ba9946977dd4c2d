import TonearmCore

/// Vorbis packs its headers and packets least-significant bit first (Vorbis I §2.1.4):
/// the first bit read is bit 0 of the first byte, and a value's first bit is its lowest.
struct VorbisBitReader {
    private let bytes: [UInt8]
    private(set) var position = 0
    let bitCount: Int

    init(_ bytes: [UInt8], byteOffset: Int = 0) {
        self.bytes = bytes
        position = byteOffset * 8
        bitCount = bytes.count * 8
    }

    var bitsRemaining: Int { bitCount - position }

    /// Reads `count` bits (at most 32) as an unsigned value, or nil past the end.
    mutating func read(_ count: Int) -> UInt32? {
        precondition(count >= 0 && count <= 32)
        guard count <= bitsRemaining else { return nil }
        var value: UInt64 = 0
        var got = 0
        while got < count {
            let byte = UInt64(bytes[position >> 3])
            let bit = position & 7
            let take = min(8 - bit, count - got)
            value |= ((byte >> UInt64(bit)) & ((1 << UInt64(take)) - 1)) << UInt64(got)
            got += take
            position += take
        }
        return UInt32(truncatingIfNeeded: value)
    }

    mutating func readInt(_ count: Int) -> Int? { read(count).map(Int.init) }

    /// Skips `count` bits; false when fewer remain.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= bitsRemaining else { return false }
        position += count
        return true
    }
}

/// What Tonearm needs from the Vorbis setup header: each mode's block flag, which gives
/// the block size of every audio packet and so the number of frames it decodes to.
///
/// The modes come last in the setup header (Vorbis I §4.2.4), after the codebooks, time
/// placeholders, floors, residues and mappings, all of variable length; so the header is
/// walked field by field as §3.2.1 (codebooks), §6.2.1 (floor 0), §7.2.2 (floor 1),
/// §8.6.1 (residues) and §4.2.4 (mappings and modes) lay them out. Nothing is kept but the
/// block flags, and every count is checked against the bits that remain, so a damaged
/// header costs no more than its own size.
enum VorbisSetup {
    static func fail(_ why: String) -> AudioError { AudioError(.invalidFile, "Vorbis setup header: \(why)") }

    /// The number of bits needed to hold `x` (Vorbis I §9.2.1): ilog(0) = 0, ilog(7) = 3.
    static func ilog(_ x: Int) -> Int {
        x <= 0 ? 0 : Int.bitWidth - x.leadingZeroBitCount
    }

    /// The largest r with r^dimensions ≤ entries (Vorbis I §9.2.3).
    static func lookup1Values(entries: Int, dimensions: Int) -> Int {
        guard entries > 0, dimensions > 0 else { return 0 }
        func power(_ r: Int) -> Int {  // saturating r^dimensions
            var p = 1
            for _ in 0..<dimensions {
                let (m, overflow) = p.multipliedReportingOverflow(by: r)
                if overflow || m > entries { return entries + 1 }
                p = m
            }
            return p
        }
        var lo = 0, hi = entries  // power(lo) ≤ entries < power(hi + 1)
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2
            if power(mid) <= entries { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Reads the setup header packet (with its 7-byte `\x05vorbis` prefix) and returns each
    /// mode's block flag, in mode order.
    static func modeBlockFlags(_ packet: [UInt8], channels: Int) throws(AudioError) -> [Bool] {
        guard packet.count > 7, packet[0] == 5, Array(packet[1..<7]) == Array("vorbis".utf8) else {
            throw fail("not a setup header")
        }
        var r = VorbisBitReader(packet, byteOffset: 7)
        func need(_ n: Int) throws(AudioError) -> Int {
            guard let v = r.readInt(n) else { throw fail("it ends early") }
            return v
        }
        func skip(_ n: Int) throws(AudioError) {
            guard r.skip(n) else { throw fail("it ends early") }
        }

        // §4.2.4 step 1: codebooks (§3.2.1).
        let codebooks = try need(8) + 1
        for _ in 0..<codebooks { try skipCodebook(&r) }

        // Step 2: time domain transforms, placeholders that must be zero.
        let times = try need(6) + 1
        for _ in 0..<times where try need(16) != 0 { throw fail("a time domain transform is not zero") }

        // Step 3: floors.
        let floors = try need(6) + 1
        for _ in 0..<floors {
            switch try need(16) {
            case 0:  // §6.2.1
                try skip(8 + 16 + 16 + 6 + 8)
                let books = try need(4) + 1
                try skip(books * 8)
            case 1:  // §7.2.2
                let partitions = try need(5)
                var classes: [Int] = []
                for _ in 0..<partitions { classes.append(try need(4)) }
                let maximumClass = classes.max() ?? -1
                var dimensions = [Int](repeating: 0, count: maximumClass + 1)
                if maximumClass >= 0 {
                    for c in 0...maximumClass {
                        dimensions[c] = try need(3) + 1
                        let subclasses = try need(2)
                        if subclasses > 0 { try skip(8) }
                        try skip((1 << subclasses) * 8)
                    }
                }
                try skip(2)  // multiplier − 1
                let rangeBits = try need(4)
                for c in classes { try skip(dimensions[c] * rangeBits) }
            case let type:
                throw fail("floor type \(type)")
            }
        }

        // Step 4: residues (§8.6.1).
        let residues = try need(6) + 1
        for _ in 0..<residues {
            let type = try need(16)
            guard type <= 2 else { throw fail("residue type \(type)") }
            try skip(24 + 24 + 24)  // begin, end, partition size − 1
            let classifications = try need(6) + 1
            try skip(8)  // classbook
            var books = 0
            for _ in 0..<classifications {
                var cascade = try need(3)
                if try need(1) == 1 { cascade |= try need(5) << 3 }
                books += cascade.nonzeroBitCount
            }
            try skip(books * 8)
        }

        // Step 5: mappings (§4.2.4 step 5).
        let mappings = try need(6) + 1
        let channelBits = ilog(channels - 1)
        for _ in 0..<mappings {
            guard try need(16) == 0 else { throw fail("a mapping type is not 0") }
            let submaps = try need(1) == 1 ? try need(4) + 1 : 1
            if try need(1) == 1 {
                let steps = try need(8) + 1
                for _ in 0..<steps {
                    let magnitude = try need(channelBits), angle = try need(channelBits)
                    guard magnitude != angle, magnitude < channels, angle < channels else {
                        throw fail("a coupling step names channels \(magnitude) and \(angle)")
                    }
                }
            }
            guard try need(2) == 0 else { throw fail("reserved mapping bits are set") }
            if submaps > 1 {
                for _ in 0..<channels where try need(4) >= submaps { throw fail("a channel names a missing submap") }
            }
            try skip(submaps * 24)  // time placeholder, floor and residue numbers
        }

        // Step 6: modes.
        let modes = try need(6) + 1
        var flags: [Bool] = []
        for _ in 0..<modes {
            let blockFlag = try need(1) == 1
            guard try need(16) == 0, try need(16) == 0 else { throw fail("a mode's window or transform type is not 0") }
            guard try need(8) < mappings else { throw fail("a mode names a missing mapping") }
            flags.append(blockFlag)
        }
        guard try need(1) == 1 else { throw fail("the framing bit is not set") }
        return flags
    }

    /// Skips one codebook (§3.2.1).
    static func skipCodebook(_ r: inout VorbisBitReader) throws(AudioError) {
        func need(_ n: Int) throws(AudioError) -> Int {
            guard let v = r.readInt(n) else { throw fail("it ends inside a codebook") }
            return v
        }
        guard try need(24) == 0x564342 else { throw fail("a codebook has no sync pattern") }
        let dimensions = try need(16)
        let entries = try need(24)
        if try need(1) == 1 {  // ordered: runs of equal lengths
            var current = 0
            var length = try need(5) + 1
            while current < entries {
                let count = try need(ilog(entries - current))
                current += count
                length += 1
                guard current <= entries, length <= 33 else { throw fail("a codebook's length runs are wrong") }
            }
        } else {
            let sparse = try need(1) == 1
            // Each entry takes at least one bit, so this loop is bounded by the header's size.
            guard entries <= r.bitsRemaining else { throw fail("a codebook claims \(entries) entries") }
            for _ in 0..<entries {
                if sparse {
                    if try need(1) == 1 { _ = try need(5) }
                } else {
                    _ = try need(5)
                }
            }
        }
        let lookup = try need(4)
        switch lookup {
        case 0:
            break
        case 1, 2:
            _ = try need(32)  // minimum value
            _ = try need(32)  // delta value
            let valueBits = try need(4) + 1
            _ = try need(1)  // sequence flag
            let values = lookup == 1 ? lookup1Values(entries: entries, dimensions: dimensions)
                : entries.multipliedReportingOverflow(by: dimensions).partialValue
            let (bits, overflow) = values.multipliedReportingOverflow(by: valueBits)
            guard !overflow, r.skip(bits) else { throw fail("a codebook's lookup table runs past the header") }
        default:
            throw fail("codebook lookup type \(lookup)")
        }
    }
}

import TonearmCore

/// The identification and setup headers of a Vorbis stream (Vorbis I §4.2), read into what
/// the decoder needs. The comment header is not needed to decode and is not read.
///
/// Every count the setup header gives is checked against what the spec allows and against
/// the bits left, and the codebooks share a ``VorbisCodebook/Budget``, so a hostile header
/// fails with 'bada' after work proportional to its own size.
struct VorbisSetupHeader {
    let channels: Int
    let sampleRate: Int
    /// Short and long block sizes (§4.2.2), powers of two 64…8192.
    let blockSizes: (Int, Int)
    let codebooks: [VorbisCodebook]
    let floors: [VorbisFloor]
    let residues: [VorbisResidue]
    let mappings: [Mapping]
    let modes: [Mode]

    struct Mapping {
        /// Channel pairs coupled by square polar mapping, in the order the header gives.
        var coupling: [(magnitude: Int, angle: Int)]
        /// The submap of each channel.
        var mux: [Int]
        var submapFloors: [Int]
        var submapResidues: [Int]
    }

    struct Mode {
        var isLong: Bool
        var mapping: Int
    }

    static func fail(_ why: String) -> AudioError { AudioError(.codecBadData, "Vorbis setup header: \(why)") }

    /// Reads the headers from a magic cookie: the three header packets in Xiph lacing (as
    /// Ogg's parser and Matroska's CodecPrivate hold them).
    init(cookie: [UInt8]) throws(AudioError) {
        let packets = try VorbisHeaderPackets.split(cookie)
        try self.init(identification: packets[0], setup: packets[2])
    }

    init(identification p: [UInt8], setup s: [UInt8]) throws(AudioError) {
        // §4.2.2
        guard p.count >= 30, p[0] == 1, Array(p[1..<7]) == Array("vorbis".utf8) else {
            throw AudioError(.unsupportedDataFormat, "the first Vorbis header is not an identification header")
        }
        let version = UInt32(p[7]) | UInt32(p[8]) << 8 | UInt32(p[9]) << 16 | UInt32(p[10]) << 24
        guard version == 0 else { throw AudioError(.unsupportedDataFormat, "Vorbis version \(version)") }
        channels = Int(p[11])
        sampleRate = Int(UInt32(p[12]) | UInt32(p[13]) << 8 | UInt32(p[14]) << 16 | UInt32(p[15]) << 24)
        guard channels > 0, sampleRate > 0 else {
            throw AudioError(.unsupportedDataFormat, "a Vorbis stream of \(channels) channels at \(sampleRate) Hz")
        }
        let small = Int(p[28] & 0x0F), large = Int(p[28] >> 4)
        guard (6...13).contains(small), (6...13).contains(large), small <= large else {
            throw AudioError(.unsupportedDataFormat, "Vorbis block sizes 2^\(small) and 2^\(large)")
        }
        guard p[29] & 1 == 1 else { throw AudioError(.unsupportedDataFormat, "the Vorbis identification header has no framing bit") }
        blockSizes = (1 << small, 1 << large)

        guard s.count > 7, s[0] == 5, Array(s[1..<7]) == Array("vorbis".utf8) else {
            throw VorbisSetupHeader.fail("the third header is not a setup header")
        }
        let channels = channels, sizes = blockSizes
        let parts = try s.withVorbisBits(from: 7) { (r: inout VorbisBits) throws(AudioError) in
            try VorbisSetupHeader.readSetup(&r, channels: channels, blockSizes: sizes)
        }
        (codebooks, floors, residues, mappings, modes) = parts
    }

    // swiftlint:disable:next large_tuple
    private static func readSetup(_ r: inout VorbisBits, channels: Int, blockSizes: (Int, Int)) throws(AudioError)
        -> ([VorbisCodebook], [VorbisFloor], [VorbisResidue], [Mapping], [Mode])
    {
        func need(_ n: Int) throws(AudioError) -> Int {
            let v = r.readInt(n)
            guard !r.isExhausted else { throw fail("it ends early") }
            return v
        }
        // §4.2.4 step 1: codebooks.
        var budget = VorbisCodebook.Budget()
        var books: [VorbisCodebook] = []
        for _ in 0..<(try need(8) + 1) { books.append(try VorbisCodebook.read(&r, budget: &budget)) }

        // Step 2: time domain transforms, placeholders that must be zero.
        for _ in 0..<(try need(6) + 1) where try need(16) != 0 { throw fail("a time domain transform is not zero") }

        // Step 3: floors.
        var floors: [VorbisFloor] = []
        for _ in 0..<(try need(6) + 1) {
            switch try need(16) {
            case 0: floors.append(.zero(try VorbisFloor0(&r, codebooks: books, blockSizes: blockSizes)))
            case 1: floors.append(.one(try VorbisFloor1(&r, codebooks: books)))
            case let type: throw fail("floor type \(type)")
            }
        }

        // Step 4: residues.
        var residues: [VorbisResidue] = []
        for _ in 0..<(try need(6) + 1) { residues.append(try VorbisResidue(&r, codebooks: books)) }

        // Step 5: mappings.
        var mappings: [Mapping] = []
        let channelBits = vorbisILog(channels - 1)
        for _ in 0..<(try need(6) + 1) {
            guard try need(16) == 0 else { throw fail("a mapping type is not 0") }
            let submaps = try need(1) == 1 ? try need(4) + 1 : 1
            var coupling: [(magnitude: Int, angle: Int)] = []
            if try need(1) == 1 {
                for _ in 0..<(try need(8) + 1) {
                    let magnitude = try need(channelBits), angle = try need(channelBits)
                    guard magnitude != angle, magnitude < channels, angle < channels else {
                        throw fail("a coupling step names channels \(magnitude) and \(angle)")
                    }
                    coupling.append((magnitude, angle))
                }
            }
            guard try need(2) == 0 else { throw fail("reserved mapping bits are set") }
            var mux = [Int](repeating: 0, count: channels)
            if submaps > 1 {
                for c in 0..<channels {
                    mux[c] = try need(4)
                    guard mux[c] < submaps else { throw fail("a channel names a missing submap") }
                }
            }
            var submapFloors: [Int] = [], submapResidues: [Int] = []
            for _ in 0..<submaps {
                _ = try need(8)  // time placeholder
                let floor = try need(8), residue = try need(8)
                guard floor < floors.count, residue < residues.count else { throw fail("a submap names a missing floor or residue") }
                submapFloors.append(floor)
                submapResidues.append(residue)
            }
            mappings.append(Mapping(coupling: coupling, mux: mux, submapFloors: submapFloors, submapResidues: submapResidues))
        }

        // Step 6: modes.
        var modes: [Mode] = []
        for _ in 0..<(try need(6) + 1) {
            let isLong = try need(1) == 1
            guard try need(16) == 0, try need(16) == 0 else { throw fail("a mode's window or transform type is not 0") }
            let mapping = try need(8)
            guard mapping < mappings.count else { throw fail("a mode names a missing mapping") }
            modes.append(Mode(isLong: isLong, mapping: mapping))
        }
        guard try need(1) == 1 else { throw fail("the framing bit is not set") }
        return (books, floors, residues, mappings, modes)
    }
}

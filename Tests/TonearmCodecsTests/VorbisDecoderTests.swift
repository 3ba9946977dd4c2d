import Foundation
import XCTest
@testable import TonearmCodecs
import Tonearm
import TonearmTestSupport

/// The native Vorbis decoder against two oracles, on the fixtures of vorbis/ (oggenc at
/// qualities −1 to 10, 8 to 96 kHz, 1 to 8 channels, block switching, and ffmpeg's own
/// encoder; make-vorbis.sh):
/// - ffmpeg's float `vorbis` decoder: per channel, the RMS of the difference below
///   2^-15/√12 and no sample more than 2^-14 away, over the frames both give (ffmpeg 5.1
///   keeps 128 frames of padding at the end of one file). Not on the file ffmpeg's own
///   encoder made: there ffmpeg's native decoder differs from libvorbis (and from Tonearm,
///   which agrees with oggdec within 1 LSB) by up to 0.39 in 9 of its 65 blocks, only in the
///   angle channel. That file has 812 coupled values with magnitude exactly 0 and a nonzero
///   angle (the oggenc files none); §4.3.5 (M > 0 is false) gives the angle A there, and
///   ffmpeg's decoder evidently −A. No float libvorbis oracle exists (ffmpeg's libvorbis
///   wrapper and oggdec give 16 bits), so that file's ffmpeg figures are logged, not gated;
/// - oggdec (libvorbis) at 16 bits: every sample within 1 LSB of Tonearm's Int16 output,
///   and exactly oggdec's length.
///
/// Both decode through AudioFile and ExtAudioFile, so the parser's trimming (granule
/// positions) is part of what is compared. ffmpeg reorders more than two channels into its
/// own layout order and oggdec does not, so ffmpeg's channels are matched to Tonearm's by
/// their content and oggdec's compared in place (Vorbis order).
final class VorbisDecoderTests: XCTestCase {
    struct Golden: Decodable {
        var sampleRate: Int
        var channels: Int
        /// oggdec's (libvorbis's) frame count: the reference.
        var frames: Int
        /// ffmpeg's, which keeps 128 frames of end padding on q-1-mono-8k.
        var ffmpegFrames: Int
        /// `vorbis` when ffmpeg's float decoder is an oracle for the file, `none` for the
        /// file ffmpeg's own encoder made (ffmpeg's native decoder disagrees with libvorbis).
        var floatOracle: String
        var ffmpegF32SHA256: String
    }

    static var fixtures: [String] { fixtureFiles("vorbis", extensions: ["ogg"]) }
    static func name(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

    static func golden(_ path: String) throws -> Golden {
        let json = String(path[..<path.lastIndex(of: ".")!]) + ".json"
        let data = try XCTUnwrap(FileManager.default.contents(atPath: json), "\(path): no golden")
        return try JSONDecoder().decode(Golden.self, from: data)
    }

    func testFixturesMatchFFmpegAndOggdec() throws {
        let ffmpeg = try requireTool("ffmpeg"), oggdec = try requireTool("oggdec")
        let fixtures = Self.fixtures
        XCTAssertGreaterThanOrEqual(fixtures.count, 10)
        let rmsLimit = 0x1p-15 / 12.0.squareRoot(), maxLimit = 0x1p-14
        for path in fixtures {
            let name = Self.name(path), g = try Self.golden(path)
            let file = try AudioFile(path: path)
            let format = try file.dataFormat
            XCTAssertEqual(Int(format.sampleRate), g.sampleRate, name)
            XCTAssertEqual(Int(format.channelsPerFrame), g.channels, name)
            let ch = g.channels

            let mine = try decodeInterleaved(path, as: Float.self)
            XCTAssertEqual(mine.count, g.frames * ch, "\(name): frames")
            let theirs = try runToolData(ffmpeg, ["-v", "error", "-c:a", "vorbis", "-i", path, "-f", "f32le", "-"])
                .withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            XCTAssertEqual(theirs.count, g.ffmpegFrames * ch, "\(name): ffmpeg's length")
            let frames = min(mine.count, theirs.count) / ch
            var worstRMS = 0.0, worstMax = 0.0
            var taken = Set<Int>()
            for theirChannel in 0..<ch {
                // ffmpeg's channel `theirChannel` is the one of ours it is closest to.
                var best: (channel: Int, rms: Double, max: Double)?
                for c in 0..<ch where !taken.contains(c) {
                    var sum = 0.0, peak = 0.0
                    for f in 0..<frames {
                        let d = Double(mine[f * ch + c]) - Double(theirs[f * ch + theirChannel])
                        sum += d * d
                        peak = max(peak, abs(d))
                    }
                    let rms = frames > 0 ? (sum / Double(frames)).squareRoot() : 0
                    if best == nil || rms < best!.rms { best = (c, rms, peak) }
                }
                guard let best else { continue }
                taken.insert(best.channel)
                worstRMS = max(worstRMS, best.rms)
                worstMax = max(worstMax, best.max)
            }
            if g.floatOracle == "vorbis" {
                XCTAssertLessThan(worstRMS, rmsLimit, "\(name): RMS against ffmpeg")
                XCTAssertLessThanOrEqual(worstMax, maxLimit, "\(name): maximum against ffmpeg")
            }

            // oggdec: raw 16-bit little-endian, in Vorbis order.
            let mine16 = try decodeInterleaved(path, as: Int16.self)
            let lib = try runToolData(oggdec, ["-Q", "-R", "-o", "-", path]).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            XCTAssertEqual(mine16.count, lib.count, "\(name): length against oggdec")
            var worstLSB = 0
            for i in 0..<min(mine16.count, lib.count) { worstLSB = max(worstLSB, abs(Int(mine16[i]) - Int(lib[i]))) }
            XCTAssertLessThanOrEqual(worstLSB, 1, "\(name): against oggdec")
            print(String(format: "vorbis %@: %d frames × %d; vs ffmpeg (\(g.floatOracle)) RMS %.3g max %.3g (limits %.3g, %.3g); vs oggdec max %d LSB",
                         name, g.frames, ch, worstRMS, worstMax, rmsLimit, maxLimit, worstLSB))
        }
    }

    /// Int16 and Int32 output are the float output converted by DecodedSample's rules.
    func testIntegerOutputsFollowTheFloatOne() throws {
        let path = fixturesDirectory + "/vorbis/q3-5.1-48k.ogg"
        let float = try decodeInterleaved(path, as: Float.self)
        XCTAssertEqual(try decodeInterleaved(path, as: Int32.self), float.map(Int32.fromFloat))
        XCTAssertEqual(try decodeInterleaved(path, as: Int16.self), float.map(Int16.fromFloat))
    }

    /// Each packet decodes to the frames the Ogg parser gave it, and the layout is Vorbis
    /// order's.
    func testPacketFramesMatchTheParser() throws {
        for path in Self.fixtures {
            let name = Self.name(path)
            let (decoder, file) = try Self.decoder(path)
            let count = Int(try file.audioDataPacketCount)
            let ch = Int(decoder.outputFormat.channelsPerFrame)
            XCTAssertEqual(decoder.outputChannelLayout, ChannelLayout.vorbisOrder(channels: ch), name)
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: ch, interleaved: false,
                                   frameCapacity: decoder.maximumFramesPerPacket * 8)
            var start = 0
            while start < count {
                let n = min(8, count - start)
                let (data, descriptions) = try file.readPacketData(startingAt: Int64(start), count: n)
                let d = try XCTUnwrap(descriptions)
                buffer.frameLength = 0
                try data.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: n, descriptions: d, into: buffer) }
                XCTAssertEqual(buffer.frameLength, d.prefix(n).reduce(0) { $0 + Int($1.variableFramesInPacket) }, "\(name) at \(start)")
                start += n
            }
            XCTAssertEqual(decoder.concealedPackets, 0, name)
        }
    }

    /// The block-switching fixture has short blocks, and the ffmpeg-encoded one another
    /// encoder's setup; so the fixtures exercise both block sizes and both encoders' books.
    func testFixturesExerciseBlockSwitching() throws {
        let (decoder, file) = try Self.decoder(fixturesDirectory + "/vorbis/q5-clicks-44k.ogg")
        var sizes = Set<Bool>()
        for i in 0..<Int(try file.audioDataPacketCount) {
            let (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
            data.withUnsafeBytes { if let m = decoder.mode(of: $0) { sizes.insert(m.isLong) } }
        }
        XCTAssertEqual(sizes, [false, true])
    }

    /// A seek lands on exactly the samples a decode from the start gives there: the reset
    /// forgets the previous block and the one packet of preroll primes the overlap again.
    func testSeekMatchesADecodeFromTheStart() throws {
        for name in ["q5-clicks-44k.ogg", "q3-5.1-48k.ogg", "q-1-mono-8k.ogg"] {
            let path = fixturesDirectory + "/vorbis/" + name
            let whole = try decodeInterleaved(path, as: Float.self)
            let file = try ExtAudioFile(path: path)
            let ch = Int(file.fileDataFormat.channelsPerFrame)
            try file.setClientDataFormat(.pcm(sampleRate: file.fileDataFormat.sampleRate, channels: UInt32(ch), bits: 32, isFloat: true))
            for target in [Int64(0), 1000, 7777, 12_345] {
                try file.seek(toFrame: target)
                var bytes: [UInt8] = []
                let got = try file.read(frames: 2048, into: &bytes)
                let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                let start = Int(target) * ch
                let expected = Array(whole[start..<min(whole.count, start + got * ch)])
                XCTAssertEqual(got, min(2048, whole.count / ch - Int(target)), "\(name) at \(target)")
                let firstDifference = zip(samples, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                var shift: Int?
                for k in -4096...4096 where start + k * ch >= 0 && start + k * ch + samples.count <= whole.count {
                    if Array(whole[(start + k * ch)..<(start + k * ch + min(64, samples.count))]) == Array(samples.prefix(64)) { shift = k; break }
                }
                XCTAssertNil(firstDifference, "\(name) at \(target): differs from sample \(firstDifference ?? -1) (a match \(shift.map(String.init) ?? "nowhere") frames away)")
            }
        }
    }

    static func decoder(_ path: String, output: PCMBuffer.CommonFormat = .float32) throws -> (VorbisDecoder, AudioFile) {
        let file = try AudioFile(path: path)
        let format = try file.dataFormat
        let decoder = try XCTUnwrap(try CodecRegistry.makeDecoder(for: format, magicCookie: try file.magicCookie, output: output) as? VorbisDecoder)
        return (decoder, file)
    }

    /// All the audio packets of a file.
    static func packets(_ file: AudioFile) throws -> [[UInt8]] {
        try (0..<Int(try file.audioDataPacketCount)).map { i in try file.readPacketData(startingAt: Int64(i), count: 1).data }
    }

    // MARK: Damage

    /// Packets cut short decode as the spec's end-of-packet rules say: the frames the parser
    /// counts, finite samples, nothing thrown.
    func testTruncatedPacketsDecodeToTheirFrames() throws {
        for path in Self.fixtures {
            let (decoder, file) = try Self.decoder(path)
            let ch = Int(decoder.outputFormat.channelsPerFrame)
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: ch, interleaved: true,
                                   frameCapacity: decoder.maximumFramesPerPacket)
            var previous: Int?
            for (i, p) in try Self.packets(file).enumerated() {
                let cut = Array(p.prefix(i % 3 == 0 ? 1 : p.count * (i % 5) / 5))
                buffer.frameLength = 0
                try cut.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
                if let m = cut.withUnsafeBytes({ decoder.mode(of: $0) }) {
                    let size = m.isLong ? decoder.setup.blockSizes.1 : decoder.setup.blockSizes.0
                    XCTAssertEqual(buffer.frameLength, previous.map { $0 / 4 + size / 4 } ?? 0)
                    previous = size
                } else {
                    XCTAssertEqual(buffer.frameLength, 0)
                }
                buffer.withUnsafeMutableSamples(Float.self) { s in
                    XCTAssertTrue(s.prefix(buffer.frameLength * ch).allSatisfy(\.isFinite))
                }
            }
        }
    }

    /// Flipped bits in audio packets never crash or throw: a packet whose type bit or mode
    /// becomes invalid is skipped (concealed), any other decodes to something finite.
    func testFlippedBitsAreConcealedOrDecoded() throws {
        var g = SeededGenerator(seed: 19)
        for path in Self.fixtures {
            let (decoder, file) = try Self.decoder(path, output: .int16)
            let ch = Int(decoder.outputFormat.channelsPerFrame)
            let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 0, channels: ch, interleaved: true,
                                   frameCapacity: decoder.maximumFramesPerPacket)
            for var p in try Self.packets(file) where !p.isEmpty {
                for _ in 0..<3 {
                    let at = Int.random(in: 0..<p.count, using: &g)
                    p[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &g))
                }
                buffer.frameLength = 0
                try p.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
            }
        }
    }

    /// A packet that is not an audio packet (its type bit set, or a mode the setup lacks)
    /// decodes to nothing, is counted as concealed and leaves the state alone, as the Ogg
    /// parser counts it; an empty packet decodes to nothing and is not counted.
    func testNonAudioAndEmptyPacketsDecodeToNothing() throws {
        let (decoder, file) = try Self.decoder(fixturesDirectory + "/vorbis/q5-stereo-44k.ogg")
        let packets = try Self.packets(file)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: 2, interleaved: false, frameCapacity: 4096)
        func decode(_ p: [UInt8]) throws -> Int {
            buffer.frameLength = 0
            try p.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
            return buffer.frameLength
        }
        XCTAssertEqual(try decode(packets[0]), 0)
        var header = packets[1]
        header[0] |= 1
        XCTAssertEqual(try decode(header), 0)
        XCTAssertEqual(try decode([]), 0)
        XCTAssertEqual(decoder.concealedPackets, 1)
        // The state is the first packet's: the second decodes as in an undisturbed stream.
        let expected = try XCTUnwrap(packets[1].withUnsafeBytes { decoder.mode(of: $0) })
        let first = try XCTUnwrap(packets[0].withUnsafeBytes { decoder.mode(of: $0) })
        let sizes = decoder.setup.blockSizes
        XCTAssertEqual(try decode(packets[1]), (first.isLong ? sizes.1 : sizes.0) / 4 + (expected.isLong ? sizes.1 : sizes.0) / 4)
    }

    /// A decoder fed a damaged cookie (cut, bits flipped anywhere in the headers) is made
    /// or refused cleanly, and when made decodes the file's packets without crashing.
    func testDamagedHeadersFailCleanly() throws {
        let (_, file) = try Self.decoder(fixturesDirectory + "/vorbis/q0-stereo-22k.ogg")
        let cookie = try XCTUnwrap(try file.magicCookie)
        let format = try file.dataFormat
        let packets = try Self.packets(file)
        var made = 0, refused = 0
        for (what, bad) in damagedVariants(cookie) + Self.setupBitFlips(cookie) {
            do {
                let d = try VorbisDecoder(format: format, magicCookie: bad, output: .float32)
                made += 1
                let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: Int(d.outputFormat.channelsPerFrame),
                                       interleaved: false, frameCapacity: d.maximumFramesPerPacket)
                for p in packets.prefix(20) {
                    buffer.frameLength = 0
                    try p.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
                }
            } catch let e as AudioError {
                XCTAssertTrue([.codecBadData, .unsupportedDataFormat].contains(e.code), "\(what): \(e)")
                refused += 1
            }
        }
        XCTAssertGreaterThan(refused, 0)
        print("vorbis damaged headers: \(made) decoders made, \(refused) refused")
    }

    /// Bits flipped inside the setup header (the part the decoder reads most of).
    static func setupBitFlips(_ cookie: [UInt8]) -> [(String, [UInt8])] {
        var g = SeededGenerator(seed: 5)
        let setupStart = cookie.count - 3000 > 0 ? cookie.count - 3000 : 0
        return (0..<60).map { _ in
            var b = cookie
            let at = Int.random(in: setupStart..<b.count, using: &g)
            b[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &g))
            return ("setup bit flipped at \(at)", b)
        }
    }

    /// The cookie may also be FFmpeg's other extradata form, each header after a 16-bit
    /// big-endian size; it decodes the same.
    func testLengthPrefixedCookie() throws {
        let path = fixturesDirectory + "/vorbis/q0-stereo-22k.ogg"
        let (laced, file) = try Self.decoder(path)
        let headers = try VorbisHeaderPackets.split(try XCTUnwrap(try file.magicCookie))
        let prefixed = headers.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
        let other = try VorbisDecoder(format: try file.dataFormat, magicCookie: prefixed, output: .float32)
        let buffers = [laced, other].map { _ in
            PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: 2, interleaved: true, frameCapacity: 4096)
        }
        for p in try Self.packets(file).prefix(10) {
            for (d, b) in zip([laced, other], buffers) {
                b.frameLength = 0
                try p.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: 1, descriptions: nil, into: b) }
            }
            let a = buffers[0].withUnsafeMutableSamples(Float.self) { Array($0.prefix(buffers[0].frameLength * 2)) }
            let b = buffers[1].withUnsafeMutableSamples(Float.self) { Array($0.prefix(buffers[1].frameLength * 2)) }
            XCTAssertEqual(a, b)
        }
        XCTAssertThrowsError(try VorbisDecoder(format: try file.dataFormat, magicCookie: Array(prefixed.prefix(40)), output: .float32))
    }

    /// Vorbis in MP4 (object type 0xDD) decodes as in Ogg. The MP4 is the q5 Ogg file's
    /// packets remuxed by ffmpeg, so it decodes to exactly that file's frames: the
    /// esds's Xiph-laced headers are the cookie, and the duration the muxer gave the first
    /// packet (which decodes to nothing) is not trimmed from the audio as priming.
    func testMP4CarriesVorbis() throws {
        let ogg = fixturesDirectory + "/vorbis/q5-stereo-44k.ogg", mp4 = fixturesDirectory + "/vorbis/q5-stereo-44k.mp4"
        let file = try AudioFile(path: mp4)
        XCTAssertEqual(try file.dataFormat.formatID, .vorbis)
        XCTAssertEqual(try file.properties.dataFormatName, "Vorbis")
        XCTAssertEqual(try file.magicCookie.map { try VorbisHeaderPackets.split($0).count }, 3)
        let expected = try decodeInterleaved(ogg, as: Float.self)
        XCTAssertEqual(expected.count, 2 * (try Self.golden(ogg)).frames)
        assertSamples(try decodeInterleaved(mp4, as: Float.self), expected, "Vorbis in MP4")
        let ffprobe = try requireTool("ffprobe")
        let packets = try runTool(ffprobe, ["-v", "error", "-select_streams", "a:0", "-count_packets",
                                            "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", mp4])
        XCTAssertEqual(Int64(packets.trimmingCharacters(in: .whitespacesAndNewlines)), try file.audioDataPacketCount)
    }

    // MARK: Hand-built streams

    /// A codebook whose lengths overfill or underfill the tree, a single-entry book longer
    /// than one bit, a missing sync pattern, and each count the setup names past its end:
    /// all 'bada' on creation.
    func testInvalidCodebooksAreRefused() throws {
        let cases: [(String, (inout VorbisTestWriter) -> Void)] = [
            ("overspecified", { $0.codebook(dimensions: 1, lengths: [1, 1, 1]) }),
            ("underspecified", { $0.codebook(dimensions: 1, lengths: [1, 2]) }),
            ("single entry of 2 bits", { $0.codebook(dimensions: 1, lengths: [2]) }),
            ("no sync", { w in w.write(0x123456, 24); w.write(1, 16); w.write(1, 24); w.write(0, 1); w.write(0, 1); w.write(0, 5); w.write(0, 4) }),
        ]
        for (what, book) in cases {
            let cookie = VorbisTestStream.cookie(channels: 1, books: [book, VorbisTestStream.unitBook])
            XCTAssertThrowsError(try VorbisDecoder(format: VorbisTestStream.format, magicCookie: cookie, output: .float32), what) { e in
                XCTAssertEqual((e as? AudioError)?.code, .codecBadData, what)
            }
        }
        // The same stream with valid books is accepted, so each refusal is the book's.
        XCTAssertNoThrow(try VorbisDecoder(format: VorbisTestStream.format,
                                           magicCookie: VorbisTestStream.cookie(channels: 1, books: [VorbisTestStream.classBook, VorbisTestStream.unitBook]),
                                           output: .float32))
    }

    /// Setup headers asking for absurd tables fail quickly, without allocating them: an
    /// ordered codebook of 2^24 − 1 entries of one length (a few bits of header), a lattice
    /// book whose vectors would take 2^24 × 65535 floats, and contradictory references.
    func testHugeOrContradictorySetupsFailQuickly() throws {
        let start = Date()
        let huge: (inout VorbisTestWriter) -> Void = { w in
            w.write(0x564342, 24); w.write(1, 16); w.write((1 << 24) - 1, 24)
            w.write(1, 1)  // ordered
            w.write(23, 5)  // length 24
            w.write((1 << 24) - 1, 24)  // all entries in one run
            w.write(0, 4)
        }
        let lattice: (inout VorbisTestWriter) -> Void = { w in
            w.write(0x564342, 24); w.write(65535, 16); w.write(1 << 20, 24)
            w.write(1, 1); w.write(19, 5); w.write(1 << 20, 21)  // 2^20 entries of 20 bits: a full tree
            w.write(1, 4)  // lookup 1: 1 value per dimension
            w.write(0, 32); w.write(0, 32); w.write(0, 4); w.write(0, 1); w.write(0, 1)
        }
        for (what, book) in [("2^24 entries", huge), ("2^20 × 65535 values", lattice)] {
            let cookie = VorbisTestStream.cookie(channels: 1, books: [book, VorbisTestStream.unitBook])
            XCTAssertThrowsError(try VorbisDecoder(format: VorbisTestStream.format, magicCookie: cookie, output: .float32), what)
        }
        // A mode naming a missing mapping; a residue naming a missing book.
        XCTAssertThrowsError(try VorbisDecoder(format: VorbisTestStream.format,
                                               magicCookie: VorbisTestStream.cookie(channels: 1, books: [VorbisTestStream.classBook, VorbisTestStream.unitBook], modeMapping: 3),
                                               output: .float32))
        XCTAssertThrowsError(try VorbisDecoder(format: VorbisTestStream.format,
                                               magicCookie: VorbisTestStream.cookie(channels: 1, books: [VorbisTestStream.classBook, VorbisTestStream.unitBook], residueBook: 9),
                                               output: .float32))
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
    }

    /// Floor 0, which no encoder in use writes: a hand-built stream (one channel, 256-sample
    /// blocks, an order-4 or order-3 LSP floor coded with a two-dimensional lookup-type-2 book, a
    /// residue of ones) decodes two identical packets; the second's 128 frames must be the
    /// overlap of two windowed IMDCTs of the floor curve, all three computed here in Double
    /// straight from the spec's formulas (§6.2.3, §4.3.1, §4.3.7), with no decoder code.
    func testFloor0AgainstTheSpecFormula() throws {
        // Order 4 takes §6.2.3's even formula, order 3 the odd one (and leaves the fourth
        // value read unused, as the spec allows).
        for order in [4, 3] { try checkFloor0(order: order) }
    }

    private func checkFloor0(order: Int) throws {
        let cookie = VorbisTestStream.cookie(channels: 1, books: [VorbisTestStream.classBook, VorbisTestStream.unitBook, VorbisTestStream.lspBook],
                                             floor0: true, floor0Order: order)
        let decoder = try VorbisDecoder(format: VorbisTestStream.format, magicCookie: cookie, output: .float32)
        // The packet: audio, (one mode: no bits), amplitude 40 in 6 bits, book 0 in 1 bit,
        // codewords of entries 1 and 2 (2 bits each, MSB first), then the residue: the
        // class (1 bit) and 128 values of the single-entry book (1 bit each).
        var w = VorbisTestWriter()
        w.write(0, 1)
        w.write(40, 6)
        w.write(0, 1)
        w.writeCodeword(0b01, length: 2)
        w.writeCodeword(0b10, length: 2)
        w.write(0, 1)
        for _ in 0..<128 { w.write(0, 1) }
        let packet = w.bytes
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: 1, interleaved: false, frameCapacity: 512)
        for _ in 0..<2 {
            try packet.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
        }
        XCTAssertEqual(buffer.frameLength, 128)

        // The expected output, from the spec.
        let n = 256, half = 128
        // Entry vectors (lookup type 2, minimum 0, delta 0.25, multiplicands as written).
        let vectors: [[Double]] = VorbisTestStream.lspMultiplicands.map { $0.map { Double($0) * 0.25 } }
        let first = vectors[1], second = vectors[2].map { $0 + first[1] }
        let lsp = Array((first + second).prefix(order))
        let amplitude = 40.0, offset = 100.0, bits = 6.0, rate = 44100.0, barkSize = 256.0
        func bark(_ x: Double) -> Double { 13.1 * atan(0.00074 * x) + 2.24 * atan(0.0000000185 * x * x) + 0.0001 * x }
        var curve = [Double](repeating: 0, count: half)
        for i in 0..<half {
            let map = min(barkSize - 1, (bark(rate * Double(i) / Double(2 * half)) * barkSize / bark(0.5 * rate)).rounded(.down))
            let omega = Double.pi * map / barkSize, c = cos(omega)
            var p: Double, q: Double
            if order % 2 == 1 {
                p = 1 - c * c
                q = 0.25
                for j in 0...((order - 3) / 2) { p *= 4 * (cos(lsp[2 * j + 1]) - c) * (cos(lsp[2 * j + 1]) - c) }
                for j in 0...((order - 1) / 2) { q *= 4 * (cos(lsp[2 * j]) - c) * (cos(lsp[2 * j]) - c) }
            } else {
                p = (1 - c) / 2
                q = (1 + c) / 2
                for j in 0...((order - 2) / 2) {
                    p *= 4 * (cos(lsp[2 * j + 1]) - c) * (cos(lsp[2 * j + 1]) - c)
                    q *= 4 * (cos(lsp[2 * j]) - c) * (cos(lsp[2 * j]) - c)
                }
            }
            curve[i] = exp(0.11512925 * (amplitude * offset / ((pow(2, bits) - 1) * (p + q).squareRoot()) - offset))
        }
        // IMDCT (residue 1.0 everywhere, so the spectrum is the curve) and the short window.
        var y = [Double](repeating: 0, count: n)
        for i in 0..<n {
            var s = 0.0
            for k in 0..<half { s += curve[k] * cos(2 * Double.pi / Double(n) * (Double(i) + 0.5 + Double(n) / 4) * (Double(k) + 0.5)) }
            y[i] = s
        }
        func window(_ i: Int) -> Double {
            let x = sin((Double(i) + 0.5) / Double(n) * Double.pi)
            return sin(Double.pi / 2 * x * x)
        }
        let got = buffer.withUnsafeMutableSamples(Float.self) { Array($0.prefix(half)) }
        var worst = 0.0, peak = 0.0
        for t in 0..<half {
            let expected = y[half + t] * window(half + t) + y[t] * window(t)
            worst = max(worst, abs(Double(got[t]) - expected))
            peak = max(peak, abs(expected))
        }
        XCTAssertGreaterThan(peak, 1e-4, "the test signal must not be silence")
        XCTAssertLessThan(worst, peak * 1e-5 + 1e-9, "floor 0 of order \(order) against the spec's formulas")
        print("vorbis floor 0, order \(order): peak \(peak), worst difference \(worst)")
    }
}

/// Writes bits least-significant first, as Vorbis packs them (§2.1.4).
struct VorbisTestWriter {
    var bytes: [UInt8] = []
    var bitCount = 0

    mutating func write(_ value: Int, _ count: Int) {
        for i in 0..<count {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(1 << (bitCount % 8)) }
            bitCount += 1
        }
    }

    /// A Huffman codeword: its first (most significant) bit first.
    mutating func writeCodeword(_ code: Int, length: Int) {
        for i in stride(from: length - 1, through: 0, by: -1) { write((code >> i) & 1, 1) }
    }

    /// A codebook without a lookup table (§3.2.1), unordered and not sparse.
    mutating func codebook(dimensions: Int, lengths: [Int]) {
        write(0x564342, 24)
        write(dimensions, 16)
        write(lengths.count, 24)
        write(0, 1)
        write(0, 1)
        for l in lengths { write(l - 1, 5) }
        write(0, 4)
    }

    /// §9.2.2's float: mantissa × 2^(exponent − 788).
    mutating func writeFloat(mantissa: Int, exponent: Int) {
        write(mantissa, 21)
        write(exponent + 788, 10)
        write(0, 1)
    }
}

/// A minimal Vorbis stream built bit by bit: one mode of 256-sample blocks, one mapping,
/// one residue of type 1 over the whole block (partition 128, one class whose one book
/// reads 1.0 per bit), and either floor 1 (two points) or floor 0 (order 4).
enum VorbisTestStream {
    static let format = StreamDescription(sampleRate: 44100, formatID: .vorbis, bytesPerPacket: 0, framesPerPacket: 0,
                                          bytesPerFrame: 0, channelsPerFrame: 1, bitsPerChannel: 0)

    /// Book 0: the classbook, one entry of one bit, one dimension.
    static let classBook: @Sendable (inout VorbisTestWriter) -> Void = { $0.codebook(dimensions: 1, lengths: [1]) }
    /// Book 1: one entry of one bit whose vector is (1.0): lookup type 1, minimum 1, delta 0.
    static let unitBook: @Sendable (inout VorbisTestWriter) -> Void = { w in
        w.write(0x564342, 24); w.write(1, 16); w.write(1, 24)
        w.write(0, 1); w.write(0, 1); w.write(0, 5)
        w.write(1, 4)
        w.writeFloat(mantissa: 1, exponent: 0)  // minimum 1.0
        w.writeFloat(mantissa: 0, exponent: 0)  // delta 0
        w.write(0, 4)  // 1-bit values
        w.write(0, 1)  // not a sequence
        w.write(0, 1)  // one multiplicand: 0
    }
    /// Book 2: four entries of two bits, two dimensions, lookup type 2 with minimum 0 and
    /// delta 0.25: the LSP book of the floor 0 test.
    static let lspMultiplicands: [[Int]] = [[1, 3], [2, 5], [3, 2], [7, 9]]
    static let lspBook: @Sendable (inout VorbisTestWriter) -> Void = { w in
        w.write(0x564342, 24); w.write(2, 16); w.write(4, 24)
        w.write(0, 1); w.write(0, 1)
        for _ in 0..<4 { w.write(1, 5) }
        w.write(2, 4)
        w.writeFloat(mantissa: 0, exponent: 0)
        w.writeFloat(mantissa: 1, exponent: -2)
        w.write(3, 4)  // 4-bit values
        w.write(0, 1)
        for v in lspMultiplicands.joined() { w.write(v, 4) }
    }

    static func cookie(channels: Int, books: [(inout VorbisTestWriter) -> Void], floor0: Bool = false, floor0Order: Int = 4,
                       modeMapping: Int = 0, residueBook: Int = 1) -> [UInt8]
    {
        var id: [UInt8] = [1] + Array("vorbis".utf8) + [0, 0, 0, 0, UInt8(channels)]
        id += [0x44, 0xAC, 0, 0] + [UInt8](repeating: 0, count: 12) + [0x88, 1]
        let comment: [UInt8] = [3] + Array("vorbis".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 1]
        var w = VorbisTestWriter()
        for b in [UInt8(5)] + Array("vorbis".utf8) { w.write(Int(b), 8) }
        w.write(books.count - 1, 8)
        for b in books { b(&w) }
        w.write(0, 6); w.write(0, 16)  // one time placeholder
        w.write(0, 6)  // one floor
        if floor0 {
            w.write(0, 16)
            w.write(floor0Order, 8); w.write(44100, 16); w.write(256, 16); w.write(6, 6); w.write(100, 8)
            w.write(0, 4); w.write(2, 8)  // one book: 2
        } else {
            w.write(1, 16)
            w.write(0, 5)  // no partitions
            w.write(0, 2)  // multiplier 1
            w.write(7, 4)  // range bits: X = 0 and 128
        }
        w.write(0, 6)  // one residue
        w.write(1, 16); w.write(0, 24); w.write(128, 24); w.write(127, 24)
        w.write(0, 6)  // one classification
        w.write(0, 8)  // classbook 0
        w.write(1, 3); w.write(0, 1)  // pass 0 only
        w.write(residueBook, 8)
        w.write(0, 6)  // one mapping
        w.write(0, 16); w.write(0, 1); w.write(0, 1); w.write(0, 2)
        w.write(0, 8); w.write(0, 8); w.write(0, 8)
        w.write(0, 6)  // one mode
        w.write(0, 1); w.write(0, 16); w.write(0, 16); w.write(modeMapping, 8)
        w.write(1, 1)  // framing
        let setup = w.bytes
        return [2, UInt8(id.count), UInt8(comment.count)] + id + comment + setup
    }
}

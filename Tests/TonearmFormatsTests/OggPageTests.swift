import Foundation
import XCTest
import Tonearm
import TonearmTestSupport
@testable import TonearmFormats

/// Builds Ogg pages by hand (with the parser's CRC, itself checked against a published value).
enum OggBuilder {
    static func page(serial: UInt32, sequence: UInt32, granule: Int64, flags: UInt8 = 0, lacing: [UInt8], body: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.write(FourCC("OggS"))
        w.write(UInt8(0))
        w.write(flags)
        w.write(granule, .little)
        w.write(serial, .little)
        w.write(sequence, .little)
        w.write(UInt32(0), .little)
        w.write(UInt8(lacing.count))
        w.write(lacing)
        w.write(body)
        var bytes = w.bytes
        let crc = bytes.withUnsafeBytes { OggCRC.pageChecksum($0) }
        for i in 0..<4 { bytes[22 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        return bytes
    }

    /// Lacing values for one whole packet.
    static func lacing(_ size: Int) -> [UInt8] { [UInt8](repeating: 255, count: size / 255) + [UInt8(size % 255)] }

    /// A stream of one packet per page (packets under 64 KiB), in order: BOS first, EOS last.
    static func stream(serial: UInt32 = 7, packets: [[UInt8]], granules: [Int64]) -> [UInt8] {
        var out: [UInt8] = []
        for (i, p) in packets.enumerated() {
            var flags: UInt8 = i == 0 ? 2 : 0
            if i == packets.count - 1 { flags |= 4 }
            out += page(serial: serial, sequence: UInt32(i), granule: granules[i], flags: flags, lacing: lacing(p.count), body: p)
        }
        return out
    }

    /// An OpusHead (RFC 7845 §5.1) and an OpusTags with the given fields.
    static func opusHead(channels: UInt8 = 2, preSkip: UInt16 = 312, rate: UInt32 = 48000) -> [UInt8] {
        var w = ByteWriter()
        w.write(Array("OpusHead".utf8))
        w.write(UInt8(1)); w.write(channels); w.write(preSkip, .little); w.write(rate, .little)
        w.write(UInt16(0), .little); w.write(UInt8(0))
        return w.bytes
    }

    static func opusTags(_ fields: [(String, String)] = []) -> [UInt8] {
        Array("OpusTags".utf8) + VorbisComment(vendor: "test", fields: fields.map { (name: $0.0, value: $0.1) }).bytes
    }

    /// An Opus file of `count` 20-ms CELT packets (TOC 0xFC: config 31, one frame) of `size` bytes.
    static func opusFile(count: Int, size: Int = 40, serial: UInt32 = 7, preSkip: UInt16 = 312) -> [UInt8] {
        var packets = [opusHead(preSkip: preSkip), opusTags([("TITLE", "t")])]
        var granules: [Int64] = [0, 0]
        for i in 0..<count {
            packets.append([0xFC] + [UInt8](repeating: UInt8(i & 0xFF), count: size - 1))
            granules.append(Int64(i + 1) * 960)
        }
        return stream(serial: serial, packets: packets, granules: granules)
    }
}

final class OggPageTests: XCTestCase {
    /// Ogg's CRC is CRC-32 with polynomial 0x04C11DB7, initial value 0, no reflection and no
    /// final XOR: the CKSUM catalogue entry (check 0x765E7680) without its final XOR.
    func testCRCMatchesThePublishedCheckValue() {
        let crc = Array("123456789".utf8).withUnsafeBytes { OggCRC.update(0, $0) }
        XCTAssertEqual(crc, 0x765E_7680 ^ 0xFFFF_FFFF)
        XCTAssertEqual(OggCRC.table[1], 0x04C1_1DB7)
    }

    func testRegistryEntryAndProbe() throws {
        let info = try XCTUnwrap(FormatRegistry.info(for: .ogg))
        XCTAssertEqual(info.name, "Ogg")
        XCTAssertEqual(info.extensions, ["ogg", "oga", "opus", "spx"])
        XCTAssertEqual(info.mimeTypes, ["audio/ogg", "audio/opus", "application/ogg", "audio/x-speex"])
        XCTAssertFalse(info.isWritable)
        for ext in ["ogg", "OGA", "opus", "spx"] { XCTAssertEqual(FormatRegistry.types(forExtension: ext), [.ogg], ext) }
        for mime in ["audio/ogg", "audio/opus; codecs=opus", "application/ogg", "audio/x-speex"] {
            XCTAssertEqual(FormatRegistry.types(forMIMEType: mime), [.ogg], mime)
        }
        XCTAssertEqual(AudioFileTypeID.ogg.fourCC, FourCC("Oggs"))
        let file = OggBuilder.opusFile(count: 3)
        XCTAssertEqual(FormatRegistry.probe(Array(file.prefix(64))), .match(.ogg))
        XCTAssertEqual(FormatRegistry.probe(Array("OggT".utf8) + [UInt8](repeating: 0, count: 60)), .noMatch)
        XCTAssertEqual(FormatRegistry.probe(Array("Ogg".utf8), isEndOfStream: false), .needMore)
    }

    func testPiecesOfAPage() {
        func pieces(_ lacing: [UInt8], continued: Bool = false) -> [OggPage.Piece] {
            OggPage(flags: continued ? 1 : 0, granulePosition: 0, serial: 0, sequence: 0, checksum: 0, lacing: lacing).pieces
        }
        XCTAssertEqual(pieces([10, 255, 0, 255, 255]), [
            .init(start: 0, size: 10, completes: true, continues: false),
            .init(start: 10, size: 255, completes: true, continues: false),
            .init(start: 265, size: 510, completes: false, continues: false),
        ])
        XCTAssertEqual(pieces([255, 3, 7], continued: true), [
            .init(start: 0, size: 258, completes: true, continues: true),
            .init(start: 258, size: 7, completes: true, continues: false),
        ])
        XCTAssertEqual(pieces([255, 255], continued: true), [.init(start: 0, size: 510, completes: false, continues: true)])
        XCTAssertEqual(pieces([]), [])
        XCTAssertEqual(pieces([0]), [.init(start: 0, size: 0, completes: true, continues: false)])
    }

    func testPageScan() {
        let page = OggBuilder.page(serial: 9, sequence: 4, granule: -1, flags: 1, lacing: [255, 255], body: [UInt8](repeating: 1, count: 510))
        page.withUnsafeBytes { raw in
            guard case .page(let p) = OggPage.scan(raw) else { return XCTFail("not a page") }
            XCTAssertEqual(p.serial, 9)
            XCTAssertEqual(p.sequence, 4)
            XCTAssertEqual(p.granulePosition, -1)
            XCTAssertTrue(p.isContinued && p.endsInsidePacket && !p.isFirst && !p.isLast)
            XCTAssertEqual(p.size, page.count)
            XCTAssertEqual(OggPage.scan(UnsafeRawBufferPointer(rebasing: raw[..<(page.count - 1)])), .needMore)
            XCTAssertEqual(OggPage.scan(UnsafeRawBufferPointer(rebasing: raw[..<3])), .needMore)
        }
        for (at, value) in [(0, UInt8(0x6F)), (4, 1), (5, 8), (30, 0)] as [(Int, UInt8)] {
            var bad = page
            bad[at] ^= value == 0 ? 1 : value
            bad.withUnsafeBytes { raw in
                guard case .invalid = OggPage.scan(raw) else { return XCTFail("byte \(at) changed, yet a page") }
            }
        }
    }

    func testOpusFramesFromTheTOCByte() {
        func frames(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { UInt32(OpusTOC.packetFrames($0)) } }
        XCTAssertEqual(frames([0 << 3]), 480)  // SILK 10 ms
        XCTAssertEqual(frames([3 << 3]), 2880)  // SILK 60 ms
        XCTAssertEqual(frames([3 << 3 | 1]), 5760)  // two 60-ms frames
        XCTAssertEqual(frames([13 << 3 | 2]), 1920)  // hybrid 20 ms, two frames
        XCTAssertEqual(frames([16 << 3]), 120)  // CELT 2.5 ms
        XCTAssertEqual(frames([31 << 3 | 3, 6]), 5760)  // six 20-ms CELT frames
        XCTAssertEqual(frames([31 << 3 | 3, 7]), 0)  // 140 ms is more than a packet may hold
        XCTAssertEqual(frames([16 << 3 | 3, 48]), 5760)  // 48 × 2.5 ms
        XCTAssertEqual(frames([31 << 3 | 3]), 0)  // no frame count byte
        XCTAssertEqual(frames([]), 0)
    }

    func testFLACFramesFromTheFrameHeader() {
        func frames(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { OggCodec.flacFrames($0) } }
        XCTAssertEqual(frames([0xFF, 0xF8, 0x19, 0x08, 0x00, 0x00]), 192)
        XCTAssertEqual(frames([0xFF, 0xF8, 0x59, 0x08, 0x00, 0x00]), 4608)
        XCTAssertEqual(frames([0xFF, 0xF8, 0xC9, 0x08, 0x00, 0x00]), 4096)
        // Code 6: an 8-bit block size − 1 after the coded number (here 2 bytes long).
        XCTAssertEqual(frames([0xFF, 0xF9, 0x69, 0x08, 0xC2, 0x80, 99, 0]), 100)
        // Code 7: a 16-bit block size − 1 after a 1-byte coded number.
        XCTAssertEqual(frames([0xFF, 0xF8, 0x79, 0x08, 0x05, 0x04, 0x7F, 0]), 1152)
        XCTAssertEqual(frames([0xFF, 0xF8, 0x09, 0x08, 0x00]), 0)  // reserved code 0
        XCTAssertEqual(frames([0xFF, 0xF8, 0x69, 0x08, 0x80, 0, 0]), 0)  // a continuation byte cannot begin the number
        XCTAssertEqual(frames([0x00, 0xF8, 0x19, 0x08, 0x00]), 0)
    }

    func testVorbisBitsAndHelpers() {
        var r = VorbisBitReader([0b1010_1101, 0xFF, 0x01])
        XCTAssertEqual(r.read(1), 1)
        XCTAssertEqual(r.read(3), 0b110)
        XCTAssertEqual(r.read(8), 0b1111_1010)  // the high nibble of byte 0, then the low one of byte 1
        XCTAssertEqual(r.read(12), 0x01F)
        XCTAssertNil(r.read(1))
        XCTAssertEqual(VorbisSetup.ilog(0), 0)
        XCTAssertEqual(VorbisSetup.ilog(1), 1)
        XCTAssertEqual(VorbisSetup.ilog(7), 3)
        XCTAssertEqual(VorbisSetup.ilog(8), 4)
        XCTAssertEqual(VorbisSetup.lookup1Values(entries: 81, dimensions: 4), 3)
        XCTAssertEqual(VorbisSetup.lookup1Values(entries: 80, dimensions: 4), 2)
        XCTAssertEqual(VorbisSetup.lookup1Values(entries: 1 << 24 - 1, dimensions: 1), 1 << 24 - 1)
        XCTAssertEqual(VorbisSetup.lookup1Values(entries: 1000, dimensions: 3), 10)
        XCTAssertEqual(VorbisSetup.lookup1Values(entries: 999, dimensions: 3), 9)
        XCTAssertEqual(VorbisSetup.lookup1Values(entries: 5, dimensions: 60000), 1)
    }

    /// The setup headers of the fixtures give the modes oggenc and ffmpeg write (two: a
    /// short and a long block), and cut or damaged ones are refused without a crash.
    func testVorbisSetupHeaders() throws {
        for name in ["vorbis_oggenc_stereo.ogg", "vorbis_ffmpeg_mono.ogg"] {
            let bytes = try readWholeFile(fixturesDirectory + "/ogg/" + name)
            // The setup header is the third packet; in these files it ends the second page.
            let g = try OggGolden(fixture: fixturesDirectory + "/ogg/" + name)
            let second = g.pages[1][0], third = g.pages[2][0]
            let segments = Int(bytes[second + 26])
            var sizes: [Int] = []
            var size = 0
            for v in bytes[second + 27..<second + 27 + segments] {
                size += Int(v)
                if v < 255 { sizes.append(size); size = 0 }
            }
            XCTAssertEqual(sizes.count, 2, name)
            let setup = Array(bytes[(third - sizes[1])..<third])
            XCTAssertEqual(try VorbisSetup.modeBlockFlags(setup, channels: g.channels), [false, true], name)
            for cut in [8, 100, setup.count / 2, setup.count - 1] {
                XCTAssertThrowsError(try VorbisSetup.modeBlockFlags(Array(setup[..<cut]), channels: g.channels), "\(name) cut at \(cut)")
            }
            var random = SeededGenerator(seed: 3)
            for _ in 0..<200 {
                var damaged = setup
                damaged[Int.random(in: 7..<damaged.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                _ = try? VorbisSetup.modeBlockFlags(damaged, channels: g.channels)
            }
        }
    }

    /// Opus timing from a hand-made file: pre-skip is priming, the last granule trims the end.
    func testHandMadeOpusStream() throws {
        var file = OggBuilder.opusFile(count: 10)
        // End trimming: the last page's granule says 9 × 960 + 500 frames.
        let last = file.count - (27 + 1 + 40)
        file = Array(file[..<last]) + OggBuilder.page(serial: 7, sequence: 11, granule: 9 * 960 + 500, flags: 4, lacing: [40],
                                                      body: [0xFC] + [UInt8](repeating: 9, count: 39))
        let f = try AudioFile(source: MemorySource(file))
        XCTAssertEqual(try f.audioDataPacketCount, 10)
        XCTAssertEqual(try f.packetTableInfo, PacketTableInfo(numberValidFrames: 9 * 960 + 500 - 312, primingFrames: 312, remainderFrames: 460))
        XCTAssertEqual(try f.properties.packetTimestamps, (0..<10).map { Int64($0) * 960 - 312 })
        XCTAssertEqual(try f.infoDictionary[InfoDictionary.title], "t")
        XCTAssertEqual(try f.dataOffset, Int64(27 + 1 + 19 + 27 + 1 + OggBuilder.opusTags([("TITLE", "t")]).count))
        let r = feed(file, pattern: .oneByteAtATime)
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetSizes, [Int](repeating: 40, count: 10))
        XCTAssertEqual(r.packetFrames, [UInt32](repeating: 960, count: 10))
        // 'pnfo' twice: the priming at the first audio page, and the whole table at the
        // last page, before its packets.
        XCTAssertEqual(r.notifications, [.fileFormat, .dataFormat, .magicCookieData, .infoDictionary, .dataOffset,
                                         .readyToProducePackets, .packetTableInfo, .packetTableInfo])
    }

    /// Chapters in Vorbis comments (CHAPTERnnn, CHAPTERnnnNAME) become the file's chapters.
    func testChaptersFromComments() throws {
        var packets = [OggBuilder.opusHead(), OggBuilder.opusTags([
            ("CHAPTER002", "00:01:02.500"), ("CHAPTER002NAME", "Two"), ("CHAPTER001", "00:00:00.000"),
            ("CHAPTER001NAME", "One"), ("chapter003", "1:00:00"), ("CHAPTER004", "bad"), ("CHAPTER005NAME", "no start"),
        ])]
        packets.append([0xFC, 1])
        let f = try AudioFile(source: MemorySource(OggBuilder.stream(packets: packets, granules: [0, 0, 960])))
        XCTAssertEqual(try f.properties.chapters, [Chapter(start: 0, title: "One"), Chapter(start: 62.5, title: "Two"),
                                                   Chapter(start: 3600, title: "")])
        XCTAssertEqual(OggCodec.chapterTime("01:02"), 62)
        XCTAssertNil(OggCodec.chapterTime("1:2:3:4"))
        XCTAssertNil(OggCodec.chapterTime("1.5:00"))
        XCTAssertNil(OggCodec.chapterTime("-1:00"))
    }

    /// A stream that begins later than 0 (cut from a live stream): its first page's granule
    /// is larger than its packets' frames, so its packets start at that time and nothing is priming.
    func testStreamThatStartsLater() throws {
        var packets = [OggBuilder.opusHead(preSkip: 0), OggBuilder.opusTags()]
        var granules: [Int64] = [0, 0]
        for i in 0..<4 {
            packets.append([0xFC, UInt8(i)])
            granules.append(1_000_000 + Int64(i + 1) * 960)
        }
        let f = try AudioFile(source: MemorySource(OggBuilder.stream(packets: packets, granules: granules)))
        XCTAssertEqual(try f.properties.packetTimestamps, (0..<4).map { 1_000_000 + Int64($0) * 960 })
        XCTAssertEqual(try f.packetTableInfo, PacketTableInfo(numberValidFrames: 4 * 960))
    }

    func testNoAudioStream() {
        let theora = [0x80] + Array("theora".utf8) + [UInt8](repeating: 0, count: 35)
        let bytes = OggBuilder.stream(packets: [theora, [1, 2, 3], [4, 5, 6]], granules: [0, 0, 5])
        XCTAssertThrowsError(try AudioFile(source: MemorySource(bytes))) { e in
            XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat)
            XCTAssertTrue((e as? AudioError)?.message.contains("Theora") ?? false, "\(e)")
        }
        XCTAssertEqual(feed(bytes, pattern: .randomChunks(seed: 1, maximum: 9)).error?.code, .unsupportedDataFormat)
        // Only a BOS page: no data page says the BOS group is over; the end does.
        let only = OggBuilder.stream(packets: [theora], granules: [0])
        XCTAssertEqual(feed(only, pattern: .allAtOnce).error?.code, .invalidFile)
    }

    func testEndInsideTheHeaders() {
        let bytes = Array(OggBuilder.opusFile(count: 2).prefix(47))  // OpusHead's page only
        XCTAssertThrowsError(try AudioFile(source: MemorySource(bytes))) { e in
            XCTAssertEqual((e as? AudioError)?.code, .invalidFile)
        }
        XCTAssertEqual(feed(bytes, pattern: .oneByteAtATime).error?.code, .invalidFile)
        // A header that breaks its mapping's rules.
        var head = OggBuilder.opusHead(channels: 3)  // family 0 allows at most 2
        var bad = OggBuilder.stream(packets: [head, OggBuilder.opusTags(), [0xFC]], granules: [0, 0, 960])
        XCTAssertEqual(feed(bad, pattern: .allAtOnce).error?.code, .invalidFile)
        head = OggBuilder.opusHead()
        head[8] = 0x10  // major version 1
        bad = OggBuilder.stream(packets: [head, OggBuilder.opusTags(), [0xFC]], granules: [0, 0, 960])
        XCTAssertEqual(feed(bad, pattern: .allAtOnce).error?.code, .unsupportedDataFormat)
    }

    /// A packet larger than 16 MiB is a limit error, met before it is all read.
    func testPacketSizeIsBounded() {
        var bytes = OggBuilder.opusFile(count: 1)
        bytes.removeLast(27 + 1 + 40)  // drop the audio page
        let body = [UInt8](repeating: 0xFC, count: 255 * 255)
        var sequence: UInt32 = 2
        while bytes.count < OggParser.maximumPacketSize + 2 * body.count {
            bytes += OggBuilder.page(serial: 7, sequence: sequence, granule: -1, flags: sequence == 2 ? 0 : 1,
                                     lacing: [UInt8](repeating: 255, count: 255), body: body)
            sequence += 1
        }
        XCTAssertThrowsError(try AudioFile(source: MemorySource(bytes))) { e in
            XCTAssertEqual((e as? AudioError)?.category, .limit, "\(e)")
        }
        let r = feed(bytes, pattern: .randomChunks(seed: 4, maximum: 1 << 20))
        XCTAssertEqual(r.error?.category, .limit)
    }

    /// Two links with the same serial number (two files joined with `cat`) are still two
    /// links; a later link that holds no audio is skipped.
    func testChainsWithRepeatedSerialsAndNonAudioLinks() throws {
        let one = OggBuilder.opusFile(count: 3)
        let theora = OggBuilder.stream(serial: 9, packets: [[0x80] + Array("theora".utf8) + [UInt8](repeating: 0, count: 35), [1]],
                                       granules: [0, 5])
        var formats = 0
        var packets = 0
        let stream = AudioFileStream(propertyListener: { _, id, _ in if id == .dataFormat { formats += 1 } },
                                     packets: { _, n, _, _ in packets += n })
        try stream.parse(one + one + theora + one)
        try stream.parse(nil)
        XCTAssertEqual(formats, 3)
        XCTAssertEqual(packets, 9)
        XCTAssertEqual(try AudioFile(source: MemorySource(one + one)).audioDataPacketCount, 3)
    }

    /// Damage that a CRC does not catch (the CRC is fixed after each change): codec headers,
    /// lacing, flags and granule positions with random values reach the codec parsers and the
    /// timing code; both paths must end with an AudioError or cleanly, never trap.
    func testMutatedPagesWithRightCRCs() throws {
        var random = SeededGenerator(seed: 11)
        for path in OggKit.fixtures {
            let original = try readWholeFile(path)
            let pages = try OggGolden(fixture: path).pages.map { $0[0] }
            for round in 0..<30 {
                var b = original
                // Header pages more often than the others.
                let k = round % 2 == 0 ? Int.random(in: 0..<min(4, pages.count), using: &random) : Int.random(in: 0..<pages.count, using: &random)
                let at = pages[k]
                switch Int.random(in: 0..<5, using: &random) {
                case 0: b[at + 5] = UInt8.random(in: 0...7, using: &random)
                case 1:
                    let g = [Int64(-1), 0, Int64.max, Int64.min, Int64(Int32.max), Int64.random(in: -1000...100_000, using: &random)]
                    let v = UInt64(bitPattern: g[Int.random(in: 0..<g.count, using: &random)])
                    for i in 0..<8 { b[at + 6 + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
                case 2:
                    let segments = Int(b[at + 26])
                    if segments > 0 { b[at + 27 + Int.random(in: 0..<segments, using: &random)] = UInt8.random(in: 0...255, using: &random) }
                default:
                    let segments = Int(b[at + 26])
                    let body = at + 27 + segments
                    let end = min(b.count, body + b[(at + 27)..<body].reduce(0) { $0 + Int($1) })
                    if end > body {
                        for _ in 0..<Int.random(in: 1...4, using: &random) {
                            b[Int.random(in: body..<end, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                        }
                    }
                }
                // Fix the CRC of the changed page, over the extent its header now claims.
                let segments = Int(b[at + 26])
                guard at + 27 + segments <= b.count else { continue }
                let size = min(b.count - at, 27 + segments + b[(at + 27)..<(at + 27 + segments)].reduce(0) { $0 + Int($1) })
                let crc = b[at..<at + size].withUnsafeBytes { OggCRC.pageChecksum($0) }
                for i in 0..<4 { b[at + 22 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }

                let r = feed(b, pattern: .randomChunks(seed: UInt64(round), maximum: 3000))
                _ = r.error
                // AudioFile throws only AudioErrors (typed throws); a trap would end the run.
                if let file = try? AudioFile(source: MemorySource(b)) {
                    if let n = try? file.properties.audioDataPacketCount, n > 0 {
                        _ = try? file.readPacketData(startingAt: 0, count: 8)
                        _ = try? file.readPacketData(startingAt: n - 1, count: 8)
                    }
                    _ = try? file.estimatedDuration
                }
            }
        }
    }

    /// Every fixture survives every damaged variant, and a stream cut anywhere ends cleanly
    /// or with an AudioError.
    func testDamagedVariantsOfEveryFixture() throws {
        for path in OggKit.fixtures {
            let bytes = try readWholeFile(path)
            let (errors, problems) = exerciseDamaged(bytes)
            XCTAssertEqual(problems, [], path)
            XCTAssertFalse(errors.isEmpty, path)
        }
    }
}

import Foundation
import XCTest
import Tonearm
@testable import TonearmFormats
import TonearmTestSupport

/// Shared checks for the sync-word formats (MPEG audio, ADTS, LOAS, AC-3, AMR), whose
/// fixtures come from make-sync.sh with goldens from ffprobe and ffmpeg.
enum SyncKit {
    struct Golden {
        let path: String
        let raw: [String: Any]
        init?(fixture path: String) {
            let json = (path as NSString).deletingPathExtension + ".json"
            guard let data = FileManager.default.contents(atPath: json),
                  let obj = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
            self.path = path
            raw = obj
        }
        var name: String { (path as NSString).lastPathComponent }
        var sampleRate: Int { raw["sampleRate"] as! Int }
        var channels: Int { raw["channels"] as! Int }
        var packets: Int { raw["packets"] as! Int }
        var packetSizes: [Int] { raw["packetSizes"] as! [Int] }
        var packetOffsets: [Int] { raw["packetOffsets"] as! [Int] }
        var decodedFrames: Int { raw["decodedFrames"] as! Int }
        var expected: [String: Any] { raw["expected"] as? [String: Any] ?? [:] }
        var fileType: String { expected["fileType"] as! String }
        var formatID: String { expected["formatID"] as! String }
        var headerBytes: Int { expected["packetHeaderBytes"] as? Int ?? 0 }
        var encoderDelay: Int? { expected["encoderDelay"] as? Int }
        var encoderPadding: Int? { expected["encoderPadding"] as? Int }
        var vbrHeader: String? { expected["vbrHeader"] as? String }
        var xingFrames: Int? { expected["xingFrames"] as? Int }
        var info: [String: String]? { expected["info"] as? [String: String] }
        var artworkBytes: Int? { expected["artworkBytes"] as? Int }
        var artworkSHA256: String? { expected["artworkSHA256"] as? String }
    }

    static func goldens(_ family: String, extensions: [String]) -> [Golden] {
        fixtureFiles(family, extensions: extensions).compactMap { Golden(fixture: $0) }
    }

    /// Every packet through AudioFile, a few at a time: sizes, bytes and offsets.
    struct FilePackets: Equatable {
        var sizes: [Int] = []
        var data: [UInt8] = []
    }

    static func filePackets(_ file: AudioFile, batch: Int = 13) throws -> FilePackets {
        var out = FilePackets()
        let total = try file.audioDataPacketCount
        var start: Int64 = 0
        while start < total {
            let (data, descriptions) = try file.readPacketData(startingAt: start, count: batch)
            guard let descriptions else { XCTFail("no descriptions"); break }
            for d in descriptions {
                out.sizes.append(Int(d.dataByteSize))
                out.data += data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)]
            }
            start += Int64(descriptions.count)
        }
        return out
    }

    /// The packets a stream hands out, each one's own bytes (not the bytes between them).
    static func streamPackets(_ bytes: [UInt8], chunk: Int = 4096) throws -> (packets: FilePackets, stream: AudioFileStream) {
        var out = FilePackets()
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
            for d in descriptions ?? [] {
                out.sizes.append(Int(d.dataByteSize))
                out.data += data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)]
            }
        })
        var i = 0
        while i < bytes.count {
            try stream.parse(bytes[i..<min(bytes.count, i + chunk)])
            i += chunk
        }
        try stream.parse(nil)
        return (out, stream)
    }

    /// The random-access parser itself, for what AudioFile does not expose (seek offsets).
    static func scannedParser(_ bytes: [UInt8], type: AudioFileTypeID) throws -> FormatParser {
        let parser = try FormatRegistry.makeParser(for: type)
        try ParserDriver(parser: parser).pull(from: MemorySource(bytes), wantsPackets: false)
        return parser
    }

    static func fourCC(_ s: String) -> UInt32 { FourCC(s).rawValue }

    /// Everything a fixture must satisfy against its golden.
    static func check(_ g: Golden, file line: UInt = #line) throws {
        let name = g.name
        let bytes = try readWholeFile(g.path)
        let file = try AudioFile(path: g.path)
        let p = try file.properties
        let f = try file.dataFormat
        XCTAssertEqual(p.fileType.rawValue, fourCC(g.fileType), name)
        XCTAssertEqual(f.formatID.rawValue, fourCC(g.formatID), name)
        XCTAssertEqual(f.sampleRate, Double(g.sampleRate), name)
        XCTAssertEqual(Int(f.channelsPerFrame), g.channels, name)
        XCTAssertEqual(f.bytesPerPacket, 0, name)
        XCTAssertFalse(p.isEstimated, name)

        // The packet count, every size and every offset, as ffprobe lists them.
        XCTAssertEqual(try file.audioDataPacketCount, Int64(g.packets), name)
        let table = try XCTUnwrap(p.packetTable, name)
        let dataOffset = try file.dataOffset
        XCTAssertEqual(table.map { Int($0.dataByteSize) + g.headerBytes }, g.packetSizes, "\(name): packet sizes")
        XCTAssertEqual(table.map { Int(dataOffset + $0.startOffset) - g.headerBytes }, g.packetOffsets, "\(name): packet offsets")
        XCTAssertEqual(dataOffset, Int64(g.packetOffsets.first ?? -1), name)
        XCTAssertEqual(try file.maximumPacketSize, UInt32(table.map(\.dataByteSize).max() ?? 0), name)
        let last = g.packetOffsets.last! + g.packetSizes.last!
        XCTAssertEqual(try file.audioDataByteCount, Int64(last) - dataOffset, name)

        // Packets read through AudioFile are the bytes ffprobe names, and those the stream hands out.
        let fromFile = try filePackets(file)
        var expectedData: [UInt8] = []
        for (o, s) in zip(g.packetOffsets, g.packetSizes) { expectedData += bytes[(o + g.headerBytes)..<(o + s)] }
        XCTAssertEqual(fromFile.data, expectedData, "\(name): packet bytes")
        let (fromStream, stream) = try streamPackets(bytes)
        XCTAssertEqual(fromStream, fromFile, "\(name): AudioFileStream and AudioFile packets differ")
        XCTAssertEqual(try stream.dataFormat, f, name)
        XCTAssertEqual(try stream.dataOffset, dataOffset, name)

        // Drip-feed equality.
        XCTAssertNil(dripFeedMismatch(bytes), name)

        // Seek offsets: exact from the scanned table, as ffprobe's positions.
        let parser = try scannedParser(bytes, type: p.fileType)
        guard let framed = parser as? SeekableFramedParser else { XCTFail("\(name): not a framed parser"); return }
        for (i, o) in g.packetOffsets.enumerated() {
            let r = try framed.framedByteOffset(ofPacket: Int64(i))
            XCTAssertFalse(r.isEstimated)
            XCTAssertEqual(dataOffset + r.offset, Int64(o), "\(name): seek offset of packet \(i)")
        }
        XCTAssertEqual(try framed.framedByteOffset(ofPacket: Int64(g.packets)).offset, Int64(last) - dataOffset, name)
        XCTAssertThrowsError(try framed.framedByteOffset(ofPacket: Int64(g.packets + 1)), name)

        // 'pkfr', 'frpk', 'pkby' and 'bypk' from the table.
        let fpp = Int64(f.framesPerPacket)
        for i in [0, 1, g.packets / 2, g.packets - 1] {
            XCTAssertEqual(try PropertyValue.packetToFrame(Int64(i), properties: p), Int64(i) * fpp, name)
            let back = try PropertyValue.frameToPacket(Int64(i) * fpp + 5, properties: p)
            XCTAssertEqual(back.packet, Int64(i), name)
            XCTAssertEqual(back.frameOffsetInPacket, 5, name)
            let byte = table[i].startOffset
            let bp = try PropertyValue.byteToPacket(byte + 1, properties: p)
            XCTAssertEqual(bp.packet, Int64(i), name)
            XCTAssertEqual(bp.byteOffsetInPacket, 1, name)
            XCTAssertFalse(bp.isEstimated, name)
        }
        // The stream's conversions: 'pkfr' exact, 'pkby' estimated (no table on a stream).
        XCTAssertEqual(try stream.frame(forPacket: 7), 7 * fpp, name)
        XCTAssertEqual(try stream.packet(forFrame: 7 * fpp + 3).packet, 7, name)

        // Gapless: the valid frames are what ffmpeg decodes after trimming.
        if let delay = g.encoderDelay, let padding = g.encoderPadding {
            let t = try XCTUnwrap(p.packetTableInfo, name)
            XCTAssertEqual(Int(t.primingFrames), delay + 529, name)
            XCTAssertEqual(Int(t.remainderFrames), max(0, padding - 529), name)
            XCTAssertEqual(t.numberValidFrames, Int64(g.decodedFrames), "\(name): valid frames")
            XCTAssertEqual(t.totalFrames, Int64(g.packets) * fpp, name)
        } else {
            XCTAssertNil(p.packetTableInfo, name)
            XCTAssertEqual(Int64(g.decodedFrames), Int64(g.packets) * fpp, "\(name): frames decoded")
        }

        if let info = g.info {
            for (k, v) in info { XCTAssertEqual(p.info[k], v, "\(name): info \(k)") }
            XCTAssertEqual(try stream.infoDictionary[InfoDictionary.title], info[InfoDictionary.title], name)
        }
        if let n = g.artworkBytes {
            let art = try XCTUnwrap(p.albumArtwork, name)
            XCTAssertEqual(art.count, n, name)
            XCTAssertEqual(SHA256Hex.hash(art), g.artworkSHA256, name)
        }

        // Damaged copies give AudioErrors, never a crash.
        let damaged = exerciseDamaged(bytes)
        XCTAssertEqual(damaged.problems, [], name)
    }

    /// ffprobe's packet sizes and positions now (the goldens were made with it; this checks
    /// them against the installed version too); nil when ffprobe cannot read the file. Skips
    /// without ffprobe (fails on CI).
    static func liveFFprobe(_ path: String) throws -> (sizes: [Int], offsets: [Int])? {
        let tool = try requireTool("ffprobe")
        guard let out = try? runToolData(tool, ["-v", "fatal", "-of", "json", "-select_streams", "a:0", "-show_packets", path]),
              let obj = (try? JSONSerialization.jsonObject(with: Data(out))) as? [String: Any],
              let packets = obj["packets"] as? [[String: Any]] else { return nil }
        return (packets.compactMap { ($0["size"] as? String).flatMap(Int.init) },
                packets.compactMap { ($0["pos"] as? String).flatMap(Int.init) })
    }

    /// The error opening bytes with ``AudioFile`` gives, or nil.
    static func openError(_ bytes: [UInt8], hint: AudioFileTypeID? = nil) -> AudioError? {
        do { _ = try AudioFile(source: MemorySource(bytes), fileTypeHint: hint) } catch { return error }
        return nil
    }

    /// A temporary file with these bytes.
    static func temporaryFile(_ bytes: [UInt8], name: String) throws -> String {
        let path = makeTemporaryDirectory() + "/" + name
        try writeWholeFile(path, bytes)
        return path
    }
}

/// The framed parsers' own seek, reachable through an existential.
protocol SeekableFramedParser {
    func framedByteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool)
}

extension FramedParser: SeekableFramedParser {
    func framedByteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        try byteOffset(ofPacket: packet)
    }
}

/// SHA-256 for artwork checks: the test support's one.
enum SHA256Hex {
    static func hash(_ data: [UInt8]) -> String { SHA256.hex(data) }
}

/// The engine's own behaviour, on hand-built MPEG frames: sync, false syncs, junk, tags,
/// seeking and the push-path estimates.
final class FramedTests: XCTestCase {
    /// A layer III frame: MPEG-1, 44.1 kHz, 128 kbit/s, stereo (417 bytes, 418 padded),
    /// filled with a byte pattern so that frames can be told apart.
    static func frame(_ n: Int, padded: Bool = false, bitRateIndex: UInt32 = 9, rateIndex: UInt32 = 0) -> [UInt8] {
        let word: UInt32 = 0xFFFB_0000 | bitRateIndex << 12 | rateIndex << 10 | (padded ? 1 << 9 : 0) | 0x44
        let h = MPEGAudioHeader(word)!
        var f = [UInt8(word >> 24), UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
        for i in 4..<h.frameLength { f.append(UInt8((n * 31 + i) % 251)) }  // no 0xFF: no sync in payloads
        return f
    }

    static func frames(_ count: Int) -> [UInt8] { (0..<count).flatMap { frame($0, padded: $0 % 3 == 1) } }

    func testPlainFramesBothPaths() throws {
        let bytes = FramedTests.frames(30)
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.fileType, .mp3)
        XCTAssertEqual(try file.audioDataPacketCount, 30)
        XCTAssertEqual(try file.dataOffset, 0)
        XCTAssertEqual(try file.audioDataByteCount, Int64(bytes.count))
        XCTAssertEqual(try file.property(.bitRate).uint32(), 128_000)
        let r = feed(bytes, pattern: .allAtOnce)
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetSizes, (0..<30).map { $0 % 3 == 1 ? 418 : 417 })
        XCTAssertEqual(r.packetData, bytes)
        // Apple's MP3 order (nothing is known of the counts without a Xing frame).
        XCTAssertEqual(r.notifications, [.bitRate, .fileFormat, .dataFormat, .dataOffset, .readyToProducePackets])
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    /// Junk with a valid-looking header before the first frame: the header's successor
    /// does not agree, so it is not taken.
    func testFalseSyncInJunkIsNotTaken() throws {
        var junk: [UInt8] = [0x00, 0x11, 0xFF, 0xFB, 0x90, 0x64]  // a valid header …
        junk += [UInt8](repeating: 0x22, count: 500)  // … whose successor is not one
        junk += [0xFF, 0xE3, 0x18, 0xC4, 0x33]  // MPEG-2.5 layer III header, different stream
        junk += [UInt8](repeating: 0x44, count: 77)
        let audio = FramedTests.frames(12)
        let bytes = junk + audio
        let file = try AudioFile(source: MemorySource(bytes), fileTypeHint: .mp3)
        XCTAssertEqual(try file.dataOffset, Int64(junk.count))
        XCTAssertEqual(try file.audioDataPacketCount, 12)
        let r = feed(bytes, pattern: .randomChunks(seed: 9, maximum: 100), hint: .mp3)
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetData, audio)
        XCTAssertEqual(r.dataOffset, Int64(junk.count))
        XCTAssertNil(dripFeedMismatch(bytes, hint: .mp3))
    }

    /// An ID3 tag whose body is full of MPEG sync words: skipped by its size.
    func testFalseSyncsInsideATag() throws {
        var body: [UInt8] = []
        for _ in 0..<50 { body += [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0x10, count: 413) }  // frames, as a tag's data
        let tag = FramedTests.id3v23(frames: [FramedTests.id3Frame("PRIV", Array("x\0".utf8) + body)])
        let audio = FramedTests.frames(5)
        let bytes = tag + audio
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.dataOffset, Int64(tag.count))
        XCTAssertEqual(try file.audioDataPacketCount, 5)
        XCTAssertEqual(try file.properties.id3Tag, tag)
        XCTAssertEqual(feed(bytes, pattern: .oneByteAtATime).packetData, audio)
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    /// Junk between frames is skipped, and the search starts again with the check.
    func testResyncAfterJunk() throws {
        let a = FramedTests.frames(6), b = (10..<16).flatMap { FramedTests.frame($0) }
        let junk: [UInt8] = [0x01, 0xFF, 0xFB, 0x90] + [UInt8](repeating: 0x55, count: 333)
        let bytes = a + junk + b
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.audioDataPacketCount, 12)
        let table = try XCTUnwrap(try file.properties.packetTable)
        XCTAssertEqual(table[6].startOffset, Int64(a.count + junk.count))
        XCTAssertEqual(try file.audioDataByteCount, Int64(bytes.count))
        let r = feed(bytes, pattern: .randomChunks(seed: 4, maximum: 300))
        XCTAssertEqual(r.packetData, a + b)
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    /// ID3v1 and APEv2 at the end are not frames; a lone last frame is taken.
    func testTrailingTagsAndLoneLastFrame() throws {
        let audio = FramedTests.frames(4)
        var v1 = Array("TAG".utf8) + [UInt8](repeating: 0, count: 125)
        for (i, c) in "Tail".utf8.enumerated() { v1[3 + i] = c }
        v1[127] = 8  // Jazz
        let ape = FramedTests.apeTag([("Album", "APE album"), ("Year", "2001")])
        for tail in [v1, ape, ape + v1, []] {
            let bytes = audio + tail
            let file = try AudioFile(source: MemorySource(bytes))
            XCTAssertEqual(try file.audioDataPacketCount, 4, "\(tail.count)")
            XCTAssertEqual(try file.audioDataByteCount, Int64(audio.count))
            let r = feed(bytes, pattern: .randomChunks(seed: 3, maximum: 50))
            XCTAssertNil(r.error)
            XCTAssertEqual(r.packetData, audio)
            XCTAssertNil(dripFeedMismatch(bytes))
            if tail.count == 128 || tail.count > 200 {
                XCTAssertEqual(try file.infoDictionary[InfoDictionary.title], "Tail")
                XCTAssertEqual(try file.infoDictionary[InfoDictionary.genre], "Jazz")
                XCTAssertEqual(r.info?[InfoDictionary.title], "Tail")
            }
            if tail.count > 128 || tail.count == ape.count {
                XCTAssertEqual(try file.infoDictionary[InfoDictionary.album], "APE album")
                XCTAssertEqual(try file.infoDictionary[InfoDictionary.year], "2001")
            }
        }
        // One frame and nothing else: there is no successor to check, the stream ends.
        let one = FramedTests.frame(0)
        XCTAssertEqual(try AudioFile(source: MemorySource(one)).audioDataPacketCount, 1)
        XCTAssertEqual(feed(one, pattern: .oneByteAtATime).packetSizes, [417])
        // A last frame cut short is dropped.
        let cut = audio + Array(FramedTests.frame(9).prefix(200))
        XCTAssertEqual(try AudioFile(source: MemorySource(cut)).audioDataPacketCount, 4)
        XCTAssertEqual(feed(cut, pattern: .allAtOnce).packetData, audio)
    }

    /// A tag larger than the 64 KiB read blocks: fetched on the random-access path,
    /// buffered on a stream; a tag over 16 MiB is skipped on both, with the same result.
    func testLargeTags() throws {
        let picture = (0..<100_000).map { UInt8($0 % 253) }
        let tag = FramedTests.id3v23(frames: [FramedTests.id3Frame("TIT2", [0] + Array("Big".utf8)),
                                              FramedTests.id3Frame("APIC", [0] + Array("image/png\0".utf8) + [3, 0] + picture)])
        let audio = FramedTests.frames(8)
        let bytes = tag + audio
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.infoDictionary[InfoDictionary.title], "Big")
        XCTAssertEqual(try file.properties.albumArtwork, picture)
        XCTAssertEqual(try file.dataOffset, Int64(tag.count))
        let r = feed(bytes, pattern: .randomChunks(seed: 2, maximum: 4096))
        XCTAssertEqual(r.info?[InfoDictionary.title], "Big")
        XCTAssertEqual(r.packetData, audio)
        XCTAssertNil(dripFeedMismatch(bytes, patterns: [.allAtOnce, .randomChunks(seed: 1, maximum: 1000), .randomChunks(seed: 3, maximum: 65536)]))

        let huge = FramedTests.id3v23(frames: [FramedTests.id3Frame("TIT2", [0] + Array("Huge".utf8)),
                                               FramedTests.id3Frame("PRIV", [UInt8](repeating: 1, count: 17 << 20))])
        let hugeBytes = huge + audio
        let hugeFile = try AudioFile(source: MemorySource(hugeBytes))
        XCTAssertNil(try hugeFile.infoDictionary[InfoDictionary.title])
        XCTAssertEqual(try hugeFile.dataOffset, Int64(huge.count))
        XCTAssertEqual(try hugeFile.audioDataPacketCount, 8)
        for pattern in [FeedPattern.allAtOnce, .randomChunks(seed: 5, maximum: 1 << 20)] {
            let r = feed(hugeBytes, pattern: pattern)
            XCTAssertNil(r.error)
            XCTAssertNil(r.info?[InfoDictionary.title])
            XCTAssertEqual(r.packetData, audio, "\(pattern)")
        }
    }

    /// A free-format header that no free-format header follows gives no frame length: it
    /// is passed over as junk, and the stream begins at the next frame.
    func testALoneFreeFormatHeaderIsPassedOver() throws {
        var bytes = FramedTests.frames(3)
        bytes[2] = 0x00  // bit rate index 0
        let file = try AudioFile(source: MemorySource(bytes), fileTypeHint: .mp3)
        XCTAssertEqual(try file.dataOffset, 417)
        XCTAssertEqual(try file.audioDataPacketCount, 2)
        XCTAssertEqual(feed(bytes, pattern: .oneByteAtATime, hint: .mp3).packetSizes, [418, 417])
    }

    func testNoFramesIsAnError() throws {
        let junk = (0..<5000).map { UInt8($0 % 200) }
        XCTAssertEqual(SyncKit.openError(junk, hint: .mp3)?.code, .invalidFile)
        XCTAssertEqual(feed(junk, pattern: .allAtOnce, hint: .mp3).error?.code, .invalidFile)
        // More than 1 MiB of junk before anything is refused without reading on.
        let long = [UInt8](repeating: 0x20, count: (1 << 20) + 10) + FramedTests.frames(3)
        XCTAssertEqual(SyncKit.openError(long, hint: .mp3)?.code, .invalidFile)
    }

    /// Without a Xing frame or a known size a stream knows no counts, so the framed parser
    /// estimates a packet's offset from the bit rate; bytes from there (mid-frame) are
    /// resynchronised on the next whole frame, and the packets after it are the file's.
    func testResumeMidFrameResynchronises() throws {
        let bytes = FramedTests.frames(40)
        let file = try AudioFile(source: MemorySource(bytes))
        let table = try XCTUnwrap(try file.properties.packetTable)
        var sizes: [Int] = [], data: [UInt8] = []
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, d, descriptions in
            for x in descriptions! {
                sizes.append(Int(x.dataByteSize))
                data += d[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)]
            }
        })
        try stream.parse(Array(bytes[0..<2000]))
        XCTAssertTrue(stream.isReadyToProducePackets)
        let parser = try XCTUnwrap(stream.parser as? SeekableFramedParser)
        let (offset, estimated) = try parser.framedByteOffset(ofPacket: 20)
        XCTAssertTrue(estimated)
        // 20 average frames, less the 3-byte slack MPEGFormat keeps before the frame named;
        // these frames pad every third one, not as the rate asks, so the offset falls inside
        // packet 20.
        XCTAssertEqual(offset, Int64((128_000.0 / 8 * 1152 / 44100 * 20).rounded(.down)) - 3)
        XCTAssertNotEqual(offset, table[20].startOffset)  // mid-frame
        sizes = []; data = []
        try stream.parse(Array(bytes[Int(offset)...]), flags: .discontinuity)
        try stream.parse(nil)
        let first = try XCTUnwrap(table.firstIndex { $0.startOffset >= offset })
        XCTAssertEqual(sizes, table[first...].map { Int($0.dataByteSize) })
        XCTAssertEqual(data, Array(bytes[Int(table[first].startOffset)...]))
    }

    /// On a push stream of known size without a Xing frame, the counts are estimated
    /// from the first frame's bit rate and flagged.
    func testPushEstimatesWithASize() throws {
        let bytes = FramedTests.frames(100)
        let parser = try FormatRegistry.makeParser(for: .mp3)
        let driver = ParserDriver(parser: parser)
        try bytes.withUnsafeBytes { raw in try driver.push(raw, endOfStream: true, sourceSize: Int64(bytes.count)) }
        let p = parser.properties
        XCTAssertTrue(p.isEstimated)
        XCTAssertNil(p.packetTable)
        XCTAssertEqual(p.audioDataByteCount, Int64(bytes.count))
        XCTAssertEqual(p.audioDataPacketCount, 100)  // 41 733 bytes at 417.96 bytes per frame
        let (_, estimated) = try parser.byteOffset(ofPacket: 50)
        XCTAssertTrue(estimated)
    }

    // MARK: Builders

    static func id3Frame(_ id: String, _ data: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.write(FourCC(id))
        w.write(UInt32(data.count))
        w.write(UInt16(0))
        w.write(data)
        return w.bytes
    }

    static func syncsafe(_ n: Int) -> [UInt8] { [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)] }

    static func id3v23(frames: [[UInt8]], flags: UInt8 = 0) -> [UInt8] {
        let body = frames.flatMap { $0 }
        return Array("ID3".utf8) + [3, 0, flags] + syncsafe(body.count) + body
    }

    static func apeTag(_ items: [(String, String)]) -> [UInt8] {
        var body = ByteWriter()
        for (k, v) in items {
            body.write(UInt32(v.utf8.count), .little)
            body.write(UInt32(0), .little)
            body.write(Array(k.utf8) + [0] + Array(v.utf8))
        }
        func header(_ isHeader: Bool) -> [UInt8] {
            var w = ByteWriter()
            w.write(Array("APETAGEX".utf8))
            w.write(UInt32(2000), .little)
            w.write(UInt32(body.bytes.count + 32), .little)
            w.write(UInt32(items.count), .little)
            w.write(UInt32(1 << 31) | (isHeader ? 1 << 29 : 0), .little)
            w.write([UInt8](repeating: 0, count: 8))
            return w.bytes
        }
        return header(true) + body.bytes + header(false)
    }
}

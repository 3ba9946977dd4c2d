import Foundation
import XCTest
import Tonearm
import TonearmTestSupport
@testable import TonearmFormats

/// A fixture's golden JSON, written by make-matroska.sh (tools/matroska_golden.py): ffprobe's
/// stream and packets of the first audio stream, and the SHA-256 of ffmpeg's packet bytes.
struct MatroskaGolden {
    let raw: [String: Any]
    let path: String

    init(fixture path: String) throws {
        raw = try XCTUnwrap(Golden(fixture: path), "no golden for \(path)").raw
        self.path = path
    }

    var name: String { (path as NSString).lastPathComponent }
    var codec: String { raw["codec"] as! String }
    var sampleRate: Int { (raw["sampleRate"] as! NSNumber).intValue }
    var channels: Int { (raw["channels"] as! NSNumber).intValue }
    var extradata: [UInt8] {
        let hex = Array((raw["extradata"] as? String ?? "").utf8)
        return stride(from: 0, to: hex.count - 1, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
    /// `[pts, duration, size]` per packet, in milliseconds (ffmpeg's Matroska time base).
    var packets: [(pts: Int?, duration: Int?, size: Int)] {
        (raw["packets"] as! [[Any]]).map { p in ((p[0] as? NSNumber)?.intValue, (p[1] as? NSNumber)?.intValue, (p[2] as! NSNumber).intValue) }
    }
    var dataSHA256: String { raw["dataSHA256"] as! String }
    var tags: [String: String] { raw["tags"] as? [String: String] ?? [:] }
    var chapters: [(start: Double, title: String)] {
        (raw["chapters"] as? [[Any]] ?? []).map { (($0[0] as! NSNumber).doubleValue, $0[1] as! String) }
    }
    /// ffprobe's skip-samples side data: packet index, samples to skip at the start and end.
    var discardPadding: Int { ((raw["skipSamples"] as? [[NSNumber]])?.last?[2].intValue) ?? 0 }
    var duration: Double? { (raw["duration"] as? NSNumber)?.doubleValue }

    var fileType: AudioFileTypeID { path.hasSuffix(".webm") ? .webM : .matroska }
    var formatID: AudioFormatID {
        switch codec {
        case "opus": .opus
        case "vorbis": .vorbis
        case "aac": .mpeg4AAC
        case "flac": .flac
        case "mp3": .mpegLayer3
        case "ac3": .ac3
        case "eac3": .enhancedAC3
        default: .linearPCM
        }
    }
    var isPCM: Bool { codec.hasPrefix("pcm_") }
}

enum MatroskaKit {
    static var fixtures: [String] { fixtureFiles("matroska", extensions: ["mka", "webm"]) }
    static func path(_ name: String) -> String { fixturesDirectory + "/matroska/" + name }

    /// Every packet through AudioFile, `chunk` at a time, as separate arrays.
    static func readAll(_ file: AudioFile, chunk: Int = 64) throws -> [[UInt8]] {
        let n = try file.audioDataPacketCount
        var out: [[UInt8]] = []
        var k: Int64 = 0
        while k < n {
            let (data, descriptions) = try file.readPacketData(startingAt: k, count: chunk)
            let d = try XCTUnwrap(descriptions)
            XCTAssertFalse(d.isEmpty)
            for p in d { out.append(Array(data[Int(p.startOffset)..<Int(p.startOffset) + Int(p.dataByteSize)])) }
            k += Int64(d.count)
        }
        return out
    }

    /// Scans a file as AudioFile does, keeping the parser.
    static func index(_ bytes: [UInt8]) throws -> MatroskaParser {
        let parser = MatroskaParser()
        let driver = ParserDriver(parser: parser)
        try driver.pull(from: MemorySource(bytes), wantsPackets: false)
        return parser
    }

    /// The packets an AudioFileStream hands on, each as its own array, with their frames.
    struct PushRun {
        var packets: [[UInt8]] = []
        var frames: [UInt32] = []
        var error: AudioError?
    }

    static func split(_ data: UnsafeRawBufferPointer, _ count: Int, _ descriptions: [PacketDescription]?,
                      bytesPerPacket: Int, into run: inout PushRun)
    {
        if let descriptions {
            for d in descriptions {
                run.packets.append(Array(UnsafeRawBufferPointer(rebasing: data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)])))
                run.frames.append(d.variableFramesInPacket)
            }
        } else {
            for k in 0..<count {
                run.packets.append(Array(UnsafeRawBufferPointer(rebasing: data[(k * bytesPerPacket)..<((k + 1) * bytesPerPacket)])))
                run.frames.append(0)
            }
        }
    }
}

final class MatroskaTests: XCTestCase {
    func testFixturesExist() {
        XCTAssertEqual(MatroskaKit.fixtures.count, 18, "run Tests/Fixtures/make-matroska.sh")
    }

    /// AudioFile against ffprobe: type, format, cookie, every packet's size, all packet bytes
    /// (the SHA-256 of ffmpeg's `-c copy -f data`), each packet's duration and time (within
    /// ffmpeg's 1 ms rounding), and the gapless numbers.
    func testEveryFixtureThroughAudioFile() throws {
        for path in MatroskaKit.fixtures {
            let g = try MatroskaGolden(fixture: path)
            let file = try AudioFile(path: path)
            let p = try file.properties
            XCTAssertEqual(p.fileType, g.fileType, g.name)
            let f = try file.dataFormat
            XCTAssertEqual(f.formatID, g.formatID, g.name)
            XCTAssertEqual(f.sampleRate, Double(g.sampleRate), g.name)
            XCTAssertEqual(Int(f.channelsPerFrame), g.channels, g.name)
            let sizes = g.packets.map(\.size)
            let all = try MatroskaKit.readAll(file, chunk: 7)
            XCTAssertEqual(SHA256.hex(Array(all.joined())), g.dataSHA256, "\(g.name): packet bytes")
            if g.isPCM {
                // Linear PCM: a packet is a frame; the blocks hold ffprobe's packets.
                let bpf = Int(f.bytesPerFrame)
                XCTAssertEqual(bpf, g.channels * (g.codec.contains("24") ? 3 : g.codec.contains("32") ? 4 : 2), g.name)
                XCTAssertEqual(try file.audioDataPacketCount, Int64(sizes.reduce(0, +) / bpf), g.name)
                XCTAssertNil(p.packetTable, g.name)
                continue
            }
            XCTAssertEqual(try file.audioDataPacketCount, Int64(g.packets.count), g.name)
            let table = try XCTUnwrap(p.packetTable, g.name)
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, sizes, g.name)
            XCTAssertEqual(all.map(\.count), sizes, g.name)
            XCTAssertEqual(try file.maximumPacketSize, UInt32(sizes.max()!), g.name)

            // Frames and times: ffmpeg's are in whole milliseconds.
            let rate = Double(g.sampleRate)
            let fpp = Int(f.framesPerPacket)
            let frames = table.map { fpp > 0 ? fpp : Int($0.variableFramesInPacket) }
            let pts = try XCTUnwrap(p.packetTimestamps, g.name)
            // ffmpeg times a lace's later frames from the block's rounded time: only each
            // block's first packet has a time to compare.
            let entries = try MatroskaKit.index(try readWholeFile(path)).packetIndex
            let firstInBlock = entries.indices.map { $0 == 0 || entries[$0].block != entries[$0 - 1].block }
            // (FLAC's fixed block size counts the short last block whole, as native FLAC does.)
            for (k, e) in g.packets.enumerated() where g.codec != "vorbis" && !(g.codec == "flac" && k == g.packets.count - 1) {
                if let d = e.duration {
                    XCTAssertLessThanOrEqual(abs(Double(frames[k]) * 1000 / rate - Double(d)), 1, "\(g.name) packet \(k) duration")
                }
                if let t = e.pts, firstInBlock[k] {
                    XCTAssertLessThanOrEqual(abs(Double(pts[k]) * 1000 / rate - Double(t)), 1, "\(g.name) packet \(k) time")
                }
            }
            let info = try XCTUnwrap(try file.packetTableInfo, g.name)
            XCTAssertEqual(info.totalFrames, Int64(frames.reduce(0, +)), g.name)
            if g.codec == "opus" {
                XCTAssertEqual(info.primingFrames, 312, "\(g.name): CodecDelay 6.5 ms")
                XCTAssertEqual(Int(info.remainderFrames), g.discardPadding, "\(g.name): the last block's DiscardPadding")
                XCTAssertEqual(try file.magicCookie, g.extradata, "\(g.name): the OpusHead")
            }
            if g.codec == "vorbis" || g.codec == "aac" {
                XCTAssertEqual(try file.magicCookie, g.extradata, "\(g.name): CodecPrivate")
            }
            if g.codec == "flac" {
                // FLAC's cookie: the dfLa body with the STREAMINFO of CodecPrivate ("fLaC", block header, 34 bytes).
                let streamInfo = g.extradata.count == 34 ? g.extradata : Array(g.extradata[8..<42])
                XCTAssertEqual(try file.magicCookie, [0, 0, 0, 0, 0x80, 0, 0, 34] + streamInfo, g.name)
            }
        }
    }

    /// Vorbis: frames from the setup header's mode block sizes, the first packet none (it
    /// only primes the overlap): the total is what ffmpeg decodes.
    func testVorbisFramesAddUpToTheDecode() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let path = MatroskaKit.path("vorbis_stereo.webm")
        let table = try XCTUnwrap(try AudioFile(path: path).properties.packetTable)
        XCTAssertEqual(table[0].variableFramesInPacket, 0)
        let decoded = try runToolData(ffmpeg, ["-v", "error", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"])
        XCTAssertEqual(table.reduce(0) { $0 + Int($1.variableFramesInPacket) }, decoded.count / 4)
    }

    /// The push path, fed one byte at a time, in random pieces and all at once, gives the
    /// same notifications and packets every time, and the packets are AudioFile's (bytes and
    /// frames), with the same format and cookie.
    func testPushPathMatchesAudioFileInEveryFeedPattern() throws {
        for path in MatroskaKit.fixtures {
            let g = try MatroskaGolden(fixture: path)
            let bytes = try readWholeFile(path)
            let patterns: [FeedPattern] = bytes.count > 60_000 ? FeedPattern.standard.filter { "\($0)" != "one byte at a time" } : FeedPattern.standard
            XCTAssertNil(dripFeedMismatch(bytes, patterns: patterns), g.name)
            let r = feed(bytes, pattern: .randomChunks(seed: 9, maximum: 300))
            XCTAssertNil(r.error, g.name)
            XCTAssertEqual(SHA256.hex(r.packetData), g.dataSHA256, "\(g.name): pushed packet bytes")
            let file = try AudioFile(path: path)
            XCTAssertEqual(r.dataFormat, try file.dataFormat, g.name)
            XCTAssertEqual(r.dataOffset, try file.dataOffset, g.name)
            XCTAssertEqual(r.notifications.first, .fileFormat, g.name)
            XCTAssertTrue(r.notifications.contains(.readyToProducePackets), g.name)
            XCTAssertEqual(r.notifications.last, .packetTableInfo, "\(g.name): the gapless numbers come at the end")
            if !g.isPCM {
                let table = try XCTUnwrap(try file.properties.packetTable)
                XCTAssertEqual(r.packetSizes, table.map { Int($0.dataByteSize) }, g.name)
                XCTAssertEqual(r.packetFrames, table.map(\.variableFramesInPacket), g.name)
            } else {
                XCTAssertEqual(Int64(r.packetSizes.count), try file.audioDataPacketCount, g.name)
            }
        }
    }

    /// An AudioFileStream's properties equal AudioFile's: cookie, layout, info, and the
    /// packet table info announced at the end.
    func testStreamPropertiesMatchAudioFile() throws {
        for path in MatroskaKit.fixtures {
            let name = (path as NSString).lastPathComponent
            let bytes = try readWholeFile(path)
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, _ in })
            try stream.parse(bytes)
            try stream.parse(nil)
            let file = try AudioFile(path: path)
            XCTAssertEqual(try stream.fileType, try file.fileType, name)
            XCTAssertEqual(try stream.magicCookie, try file.magicCookie, name)
            XCTAssertEqual(try stream.channelLayout, try file.channelLayout, name)
            XCTAssertEqual(try stream.infoDictionary, try file.properties.info, name)
            XCTAssertEqual(try stream.packetTableInfo, try file.packetTableInfo, name)
        }
    }

    /// Tags (global SimpleTags under Apple's keys) and Chapters (ChapterAtom start and
    /// ChapString) against ffprobe, through both paths; CRC-32 elements are passed over.
    func testTagsAndChapters() throws {
        let path = MatroskaKit.path("tagged.mka")
        let g = try MatroskaGolden(fixture: path)
        let p = try AudioFile(path: path).properties
        XCTAssertEqual(g.tags.count, 6)
        for (key, value) in g.tags {
            XCTAssertEqual(p.info[InfoDictionary.key(forContainerTag: key)], value, key)
        }
        XCTAssertEqual(p.info[InfoDictionary.title], "Tonearm Matroska ✓")
        XCTAssertEqual(p.info[InfoDictionary.year], "2026")
        XCTAssertEqual(p.chapters.map(\.title), ["Opening", "Middle", "Ending ✓"])
        XCTAssertEqual(p.chapters.count, g.chapters.count)
        for (got, want) in zip(p.chapters, g.chapters) {
            XCTAssertEqual(got.title, want.title)
            XCTAssertEqual(got.start, want.start, accuracy: 0.0005)
        }
        let r = feed(try readWholeFile(path), pattern: .randomChunks(seed: 4, maximum: 999))
        XCTAssertEqual(r.info, p.info)

        // The FFmpeg backend's Matroska fixtures are parsed natively too.
        let ac3 = try AudioFile(path: fixturesDirectory + "/ffmpeg/ac3_in_mkv.mka").properties
        XCTAssertEqual(ac3.chapters.map(\.title), ["First half", "Second half"])
        XCTAssertEqual(ac3.chapters.map(\.start), [0, 0.5])
        XCTAssertEqual(ac3.info[InfoDictionary.title], "Tonearm Test Tone ✓")
        XCTAssertEqual(ac3.info[InfoDictionary.artist], "Tonearm Fixtures")
    }

    /// The two Matroska files of the FFmpeg backend's folder (ffmpeg's AC-3 and E-AC-3 5.1):
    /// Tonearm's own parser reads them, every packet's size and frames as ffprobe says.
    func testFFmpegFolderFilesAreNative() throws {
        for (name, format, channels) in [("ac3_in_mkv.mka", AudioFormatID.ac3, 2), ("eac3_5.1_in_mkv.mka", .enhancedAC3, 6)] {
            let path = fixturesDirectory + "/ffmpeg/" + name
            let g = try XCTUnwrap(Golden(fixture: path)).raw
            let file = try AudioFile(path: path)
            XCTAssertEqual(try file.fileType, .matroska, name)
            XCTAssertEqual(FormatRegistry.info(for: .matroska)?.usesFFmpeg, false)
            XCTAssertEqual(try file.dataFormat.formatID, format, name)
            XCTAssertEqual(Int(try file.dataFormat.channelsPerFrame), channels, name)
            let golden = (g["packets"] as! [[Any]]).map { ($0[2] as! NSNumber).intValue }
            let table = try XCTUnwrap(try file.properties.packetTable)
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, golden, name)
            let frames = table.map { $0.variableFramesInPacket > 0 ? Int($0.variableFramesInPacket) : 1536 }
            XCTAssertEqual(frames, Array(repeating: 1536, count: golden.count), name)
        }
    }

    /// Lacing: the Xiph-, EBML- and fixed-laced rewrites hold the same packets as the files
    /// they were made from (bytes, frames, times), on both paths, and ffprobe agrees.
    func testLacedBlocksGiveTheSamePackets() throws {
        for (laced, source) in [("laced_xiph.mka", "opus_mono.mka"), ("laced_ebml.mka", "opus_mono.mka"), ("laced_fixed.mka", "ac3_stereo.mka")] {
            let a = try AudioFile(path: MatroskaKit.path(laced)), b = try AudioFile(path: MatroskaKit.path(source))
            XCTAssertEqual(try MatroskaKit.readAll(a), try MatroskaKit.readAll(b), laced)
            XCTAssertEqual(try a.properties.packetTable?.map(\.variableFramesInPacket), try b.properties.packetTable?.map(\.variableFramesInPacket), laced)
            XCTAssertEqual(try a.properties.packetTimestamps, try b.properties.packetTimestamps, laced)
            XCTAssertEqual(try a.packetTableInfo, try b.packetTableInfo, laced)
            let g = try MatroskaGolden(fixture: MatroskaKit.path(laced)), s = try MatroskaGolden(fixture: MatroskaKit.path(source))
            XCTAssertEqual(g.packets.map(\.size), s.packets.map(\.size), "\(laced): ffprobe")
            let pushed = feed(try readWholeFile(MatroskaKit.path(laced)), pattern: .randomChunks(seed: 3, maximum: 100))
            XCTAssertNil(pushed.error, laced)
            XCTAssertEqual(pushed.packetData, Array(try MatroskaKit.readAll(b).joined()), laced)
        }
        // The laced files really are laced: their SimpleBlocks' flags say so.
        for (name, bits) in [("laced_xiph.mka", UInt8(0x02)), ("laced_ebml.mka", 0x06), ("laced_fixed.mka", 0x04)] {
            let bytes = try readWholeFile(MatroskaKit.path(name))
            let parser = try MatroskaKit.index(bytes)
            let blocks = Set(parser.packetIndex.map(\.block))
            XCTAssertLessThan(blocks.count, parser.packetIndex.count / 3, name)
            let first = Int(parser.packetIndex[0].block)
            // SimpleBlock ID A3, a size, track number 81, timestamp (2 bytes), flags.
            XCTAssertEqual(bytes[first], 0xA3, name)
            let sizeLength = bytes[first + 1].leadingZeroBitCount + 1
            XCTAssertEqual(bytes[first + 1 + sizeLength + 3] & 0x06, bits, name)
        }
    }

    /// Header stripping (ContentCompAlgo 3): the packets are the original file's, the sync
    /// word put back, on both paths and through random access.
    func testHeaderStrippingIsUndone() throws {
        let stripped = try AudioFile(path: MatroskaKit.path("stripped_ac3.mka"))
        let original = try MatroskaKit.readAll(try AudioFile(path: MatroskaKit.path("ac3_stereo.mka")))
        XCTAssertEqual(try MatroskaKit.readAll(stripped, chunk: 5), original)
        XCTAssertEqual(try stripped.properties.packetTable?.map(\.dataByteSize), original.map { UInt32($0.count) })
        XCTAssertEqual(try stripped.maximumPacketSize, 768)
        let (data, d) = try stripped.readPacketData(startingAt: 10, count: 3)
        XCTAssertEqual(d?.count, 3)
        XCTAssertEqual(data, Array(original[10..<13].joined()))
        let bytes = try readWholeFile(MatroskaKit.path("stripped_ac3.mka"))
        XCTAssertNil(dripFeedMismatch(bytes))
        let r = feed(bytes, pattern: .randomChunks(seed: 6, maximum: 500))
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetData, Array(original.joined()))
        XCTAssertEqual(r.packetSizes, original.map(\.count))
    }

    /// Live WebM: an unknown-size Segment (both files) and unknown-size Clusters
    /// (live_unknown): each Cluster ends where the next top-level element begins.
    func testUnknownSizes() throws {
        let unknown: [UInt8] = [0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        let live = try readWholeFile(MatroskaKit.path("live.webm"))
        let liveUnknown = try readWholeFile(MatroskaKit.path("live_unknown.webm"))
        for bytes in [live, liveUnknown] {
            XCTAssertNotNil(bytes.indices.first { Array(bytes[$0..<min(bytes.count, $0 + 12)]) == unknown })
        }
        let clusterUnknown: [UInt8] = [0x1F, 0x43, 0xB6, 0x75, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        let count = (0..<liveUnknown.count - 12).filter { Array(liveUnknown[$0..<$0 + 12]) == clusterUnknown }.count
        XCTAssertGreaterThan(count, 2, "live_unknown.webm's Clusters have the unknown size")
        let a = try MatroskaKit.readAll(try AudioFile(path: MatroskaKit.path("live.webm")))
        let b = try MatroskaKit.readAll(try AudioFile(path: MatroskaKit.path("live_unknown.webm")))
        XCTAssertEqual(a, b)
        let g = try MatroskaGolden(fixture: MatroskaKit.path("live_unknown.webm"))
        XCTAssertEqual(b.map(\.count), g.packets.map(\.size))
        // A live stream arrives without an end: the packets come as the bytes do.
        var got = 0
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, n, _, _ in got += n })
        try stream.parse(liveUnknown)
        XCTAssertGreaterThanOrEqual(got, g.packets.count - 1, "all but the packet whose block may go on are handed on before the end")
        XCTAssertEqual(try stream.fileType, .webM)
    }

    /// Push seeking back to packets already read: exact, and the packets from the target on
    /// are AudioFile's.
    func testPushSeekToPacketsAlreadyRead() throws {
        for name in ["opus_stereo.webm", "live_unknown.webm", "laced_ebml.mka", "aac_stereo.mka"] {
            let bytes = try readWholeFile(MatroskaKit.path(name))
            let all = try MatroskaKit.readAll(try AudioFile(path: MatroskaKit.path(name)))
            var run = MatroskaKit.PushRun()
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, n, data, d in
                MatroskaKit.split(data, n, d, bytesPerPacket: 0, into: &run)
            })
            try stream.parse(bytes)
            try stream.parse(nil)
            XCTAssertEqual(run.packets, all, name)
            for target in [Int64(all.count / 2), 5, 0, Int64(all.count - 1)] {
                let (offset, flags) = try stream.seek(toPacket: target)
                XCTAssertFalse(flags.contains(.offsetIsEstimated), "\(name) packet \(target)")
                run = MatroskaKit.PushRun()
                try stream.parse(bytes[Int(offset + (try stream.dataOffset))...], flags: .discontinuity)
                try stream.parse(nil)
                // A laced block's packets come out from its first one.
                let k = try XCTUnwrap(all.indices.last { $0 <= Int(target) && Array(all[$0...]) == run.packets }, "\(name) packet \(target)")
                XCTAssertGreaterThanOrEqual(k, Int(target) - 3, "\(name) packet \(target)")
            }
        }
    }

    /// Push seeking ahead by time: with a byte-range fetcher the Cues at the end are fetched
    /// and the seek lands on the Cluster that holds the frame (not estimated); without one it
    /// is an estimate, after which the parser finds the next Cluster. Either way the packets
    /// that come out are the file's from some packet on, and with the Cues the packet that
    /// holds the frame is among them.
    func testPushSeekByTimeWithAndWithoutCues() throws {
        let name = "opus_stereo.webm"
        let bytes = try readWholeFile(MatroskaKit.path(name))
        let file = try AudioFile(path: MatroskaKit.path(name))
        let all = try MatroskaKit.readAll(file)
        let pts = try XCTUnwrap(try file.properties.packetTimestamps)
        for withFetcher in [true, false] {
            var run = MatroskaKit.PushRun()
            var fetched = 0
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, n, data, d in
                MatroskaKit.split(data, n, d, bytesPerPacket: 0, into: &run)
            })
            if withFetcher {
                stream.byteRangeFetcher = { offset, count in
                    fetched += 1
                    return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
                }
                stream.sourceSize = Int64(bytes.count)
            } else {
                stream.sourceSize = Int64(bytes.count)
            }
            try stream.parse(bytes[0..<1200])
            XCTAssertTrue(stream.isReadyToProducePackets)
            let frame: Int64 = 36000
            let (offset, flags) = try stream.seek(toFrame: frame)
            XCTAssertEqual(flags.contains(.offsetIsEstimated), !withFetcher, "fetcher \(withFetcher)")
            run = MatroskaKit.PushRun()
            try stream.parse(bytes[Int(offset + (try stream.dataOffset))...], flags: .discontinuity)
            try stream.parse(nil)
            let k = try XCTUnwrap(all.indices.first { Array(all[$0...]) == run.packets }, "fetcher \(withFetcher): \(run.packets.count) packets")
            if withFetcher {
                XCTAssertGreaterThan(fetched, 0)
                XCTAssertLessThanOrEqual(pts[k], frame)
                XCTAssertGreaterThan(pts[k] + 48000 / 2, frame, "the Cluster (250 ms) holds the frame")
            }
        }
    }

    /// Cues before the Clusters (ffmpeg's -cues_to_front): a stream without a fetcher reads
    /// them as they pass, and seeks ahead by them exactly.
    func testPushSeekWithCuesAtTheFront() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/front.webm"
        _ = try runTool(ffmpeg, ["-v", "error", "-y", "-i", MatroskaKit.path("opus_stereo.webm"), "-c", "copy", "-cues_to_front", "1",
                                 "-cluster_time_limit", "250", path])
        let bytes = try readWholeFile(path)
        let file = try AudioFile(path: path)
        let all = try MatroskaKit.readAll(file)
        let pts = try XCTUnwrap(try file.properties.packetTimestamps)
        var run = MatroskaKit.PushRun()
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, n, data, d in
            MatroskaKit.split(data, n, d, bytesPerPacket: 0, into: &run)
        })
        let dataOffset = Int(try file.dataOffset)
        try stream.parse(bytes[0..<dataOffset + 16])
        let (offset, flags) = try stream.seek(toFrame: 30000)
        XCTAssertFalse(flags.contains(.offsetIsEstimated))
        run = MatroskaKit.PushRun()
        try stream.parse(bytes[(Int(offset) + dataOffset)...], flags: .discontinuity)
        try stream.parse(nil)
        let k = try XCTUnwrap(all.indices.first { Array(all[$0...]) == run.packets })
        XCTAssertLessThanOrEqual(pts[k], 30000)
        XCTAssertGreaterThan(pts[k] + 24000, 30000)
    }

    /// Random access by time: through the Cues-less scan too, the packet for a frame is the
    /// one whose time holds it, and reads anywhere give a sequential read's bytes (PCM too:
    /// frames gathered across blocks).
    func testRandomAccessSeekAndReads() throws {
        for name in ["opus_stereo.webm", "nocues.mka", "laced_xiph.mka", "pcm_s16le.mka", "pcm_s24be.mka"] {
            let file = try AudioFile(path: MatroskaKit.path(name))
            let all = try MatroskaKit.readAll(file, chunk: 4096)
            let n = all.count
            for k in [n / 2, n / 3, 0, n - 1, n / 2 + 1] {
                let count = min(5, n - k)
                let (data, d) = try file.readPacketData(startingAt: Int64(k), count: count)
                let descriptions = try XCTUnwrap(d)
                XCTAssertEqual(descriptions.count, count, "\(name) at \(k)")
                let packets = descriptions.map { Array(data[Int($0.startOffset)..<Int($0.startOffset) + Int($0.dataByteSize)]) }
                XCTAssertEqual(packets, Array(all[k..<k + count]), "\(name) at \(k)")
            }
            XCTAssertThrowsError(try file.readPacketData(startingAt: Int64(n), count: 1)) { e in
                XCTAssertEqual((e as? AudioError)?.code, .endOfFile, name)
            }
            if let pts = try file.properties.packetTimestamps {
                for frame in [Int64(0), 10000, 30000] {
                    let (packet, _) = try file.packet(forFrame: frame + Int64(try file.packetTableInfo?.primingFrames ?? 0))
                    XCTAssertLessThanOrEqual(pts[Int(packet)], frame, name)
                }
            }
        }
    }

    /// Lossless and PCM decode through Tonearm's decoders is ffmpeg's decode, sample for sample.
    func testLosslessDecodeMatchesFFmpeg() throws {
        let ffmpeg = try requireTool("ffmpeg")
        for name in ["flac_stereo.mka", "pcm_s16le.mka", "pcm_s24be.mka", "pcm_f32le.mka"] {
            let path = MatroskaKit.path(name)
            let expected = try runToolData(ffmpeg, ["-v", "error", "-i", path, "-map", "0:a:0", "-f", "f32le", "-"])
            let samples = try decodeInterleaved(path, as: Float.self)
            let want = expected.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            XCTAssertEqual(samples.count, want.count, name)
            XCTAssertTrue(samples == want, name)
        }
    }

    /// ffprobe, live: the packet sizes of each fixture are Tonearm's.
    func testPacketSizesMatchLiveFFprobe() throws {
        let ffprobe = try requireTool("ffprobe")
        for path in MatroskaKit.fixtures where !path.contains("pcm_") {
            let out = try runTool(ffprobe, ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=size", "-of", "csv=p=0", path])
            // A packet with side data has more fields after its size.
            let sizes = out.split(whereSeparator: \.isNewline).compactMap { $0.split(separator: ",").first.flatMap { Int($0) } }
            let table = try XCTUnwrap(try AudioFile(path: path).properties.packetTable)
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, sizes, path)
        }
    }

    /// An attached image (Attachments, an image/* media type) is the album artwork.
    func testAttachedPictureIsTheArtwork() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let png = dir + "/cover.png", mka = dir + "/with_cover.mka"
        _ = try runTool(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=16x16:d=1", "-frames:v", "1", png])
        let source = MatroskaKit.path("ac3_stereo.mka")
        _ = try runTool(ffmpeg, ["-v", "error", "-y", "-i", source, "-map", "0:a", "-c", "copy", "-attach", png,
                                 "-metadata:s:t", "mimetype=image/png", mka])
        let file = try AudioFile(path: mka)
        XCTAssertEqual(try XCTUnwrap(try file.properties.albumArtwork), try readWholeFile(png))
        XCTAssertEqual(try file.audioDataPacketCount, try AudioFile(path: source).audioDataPacketCount)
    }

    /// A file with a video track first: the audio track is chosen, and the video's blocks
    /// are skipped; the tracks list both.
    func testAudioTrackAmongOthers() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/av.mkv"
        _ = try runTool(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=32x32:d=1:r=10", "-i", MatroskaKit.path("opus_mono.mka"),
                                 "-map", "0:v", "-map", "1:a", "-c:v", "ffv1", "-c:a", "copy", out])
        let file = try AudioFile(path: out)
        let p = try file.properties
        XCTAssertEqual(p.tracks.map(\.kind), ["video", "audio"])
        XCTAssertEqual(p.tracks.map(\.isSelected), [false, true])
        XCTAssertEqual(try MatroskaKit.readAll(file), try MatroskaKit.readAll(try AudioFile(path: MatroskaKit.path("opus_mono.mka"))))
        let r = feed(try readWholeFile(out), pattern: .randomChunks(seed: 8, maximum: 4000))
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetSizes.count, 51)
    }

    /// Damaged input on both paths: truncations, flipped bits, huge and unknown sizes. No
    /// crash, AudioErrors only, in bounded time.
    func testDamagedInput() throws {
        for name in ["opus_stereo.webm", "live_unknown.webm", "laced_ebml.mka", "vorbis_stereo.webm", "flac_stereo.mka"] {
            let bytes = try readWholeFile(MatroskaKit.path(name))
            let result = runWithDeadline(seconds: 120) { exerciseDamaged(bytes) }
            let (errors, problems) = try XCTUnwrap(result, "\(name): the damaged variants did not end in time")
            XCTAssertEqual(problems, [], name)
            XCTAssertFalse(errors.isEmpty, name)
        }
        // Every element size of the first 600 bytes set to the unknown size, or to a huge one.
        let bytes = try readWholeFile(MatroskaKit.path("opus_stereo.webm"))
        var variants: [[UInt8]] = []
        for at in 4..<600 where bytes[at] & 0x80 != 0 || bytes[at] == 0x01 {
            var u = bytes
            u[at] = 0xFF
            variants.append(u)
            var h = bytes
            if at + 8 <= h.count { h.replaceSubrange(at..<at + 8, with: [0x01, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0]) }
            variants.append(h)
        }
        let done = runWithDeadline(seconds: 120) { () -> [String] in
            var problems: [String] = []
            for v in variants {
                let r = feed(v, pattern: .randomChunks(seed: 2, maximum: 4096))
                _ = r
                do {
                    let f = try AudioFile(source: MemorySource(v))
                    _ = try? f.readPacketData(startingAt: 0, count: 10)
                } catch is AudioError {
                } catch {
                    problems.append("\(error)")
                }
            }
            return problems
        }
        XCTAssertEqual(try XCTUnwrap(done, "the unknown and huge sizes did not end in time"), [])
    }

    /// Not Matroska: another EBML DocType is refused; the probe knows both types.
    func testProbeAndDocType() throws {
        XCTAssertEqual(FormatRegistry.probe(Array(try readWholeFile(MatroskaKit.path("opus_stereo.webm")).prefix(64))), .match(.webM))
        XCTAssertEqual(FormatRegistry.probe(Array(try readWholeFile(MatroskaKit.path("opus_mono.mka")).prefix(64))), .match(.matroska))
        XCTAssertEqual(FormatRegistry.types(forExtension: "mka"), [.matroska])
        XCTAssertEqual(FormatRegistry.types(forExtension: "webm"), [.webM])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/webm"), [.webM])
        var bytes = try readWholeFile(MatroskaKit.path("opus_mono.mka"))
        let at = try XCTUnwrap(bytes.indices.first { Array(bytes[$0..<$0 + 8]) == Array("matroska".utf8) })
        bytes.replaceSubrange(at..<at + 8, with: Array("notmkvxx".utf8))
        XCTAssertThrowsError(try AudioFile(source: MemorySource(bytes))) { e in
            XCTAssertEqual((e as? AudioError)?.code, .unsupportedFileType)
        }
    }
}

/// Small Matroska files written element by element, for what ffmpeg does not write.
enum MatroskaWriter {
    static func id(_ v: UInt32) -> [UInt8] {
        let n = max(1, (32 - v.leadingZeroBitCount + 7) / 8)
        return (0..<n).map { UInt8(truncatingIfNeeded: v >> UInt32(8 * (n - 1 - $0))) }
    }
    /// An 8-byte size (or the unknown size).
    static func size(_ n: Int?) -> [UInt8] {
        guard let n else { return [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] }
        return [0x01] + (0..<7).map { UInt8(truncatingIfNeeded: n >> (8 * (6 - $0))) }
    }
    static func element(_ i: UInt32, _ body: [UInt8], unknownSize: Bool = false) -> [UInt8] {
        id(i) + size(unknownSize ? nil : body.count) + body
    }
    static func uint(_ i: UInt32, _ v: UInt64) -> [UInt8] {
        element(i, (0..<8).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * (7 - $0))) })
    }
    static func string(_ i: UInt32, _ s: String) -> [UInt8] { element(i, Array(s.utf8)) }

    static func header(docType: String = "matroska", maxSizeLength: UInt64 = 8) -> [UInt8] {
        element(MKV.ebml, uint(MKV.ebmlVersion, 1) + uint(MKV.ebmlMaxIDLength, 4) + uint(MKV.ebmlMaxSizeLength, maxSizeLength)
            + string(MKV.docType, docType))
    }
    /// A mono 16-bit PCM track at 8 kHz (or another codec), with extra elements for the entry.
    static func tracks(extra: [UInt8] = [], codec: String = "A_PCM/INT/LIT", rate: Double = 8000, channels: UInt64 = 1) -> [UInt8] {
        let bits = rate.bitPattern
        let audio = element(MKV.audio, element(MKV.samplingFrequency, (0..<8).map { UInt8(truncatingIfNeeded: bits >> UInt64(8 * (7 - $0))) })
            + uint(MKV.channels, channels) + uint(MKV.bitDepth, 16))
        return element(MKV.tracks, element(MKV.trackEntry, uint(MKV.trackNumber, 1) + uint(MKV.trackUID, 7) + uint(MKV.trackType, 2)
            + string(MKV.codecID, codec) + audio + extra))
    }
    /// A Cluster at `time` ms with one SimpleBlock of `frames` 16-bit frames (sample values k).
    static func cluster(time: UInt64, frames: Int, unknownSize: Bool = false) -> [UInt8] {
        var block: [UInt8] = [0x81, 0, 0, 0x80]
        for k in 0..<frames { block += [UInt8(k & 0xFF), 0] }
        return element(MKV.cluster, uint(MKV.timestamp, time) + element(MKV.simpleBlock, block), unknownSize: unknownSize)
    }
    static func file(_ segment: [UInt8], unknownSize: Bool = false, docType: String = "matroska") -> [UInt8] {
        header(docType: docType) + element(MKV.segment, segment, unknownSize: unknownSize)
    }
}

final class MatroskaSyntheticTests: XCTestCase {
    /// The written file reads on both paths: two Clusters of 160 and 80 frames.
    func testWrittenFileReads() throws {
        let bytes = MatroskaWriter.file(MatroskaWriter.tracks() + MatroskaWriter.cluster(time: 0, frames: 160)
            + MatroskaWriter.cluster(time: 20, frames: 80))
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.audioDataPacketCount, 240)
        XCTAssertEqual(try file.dataFormat.bytesPerFrame, 2)
        let (data, _) = try file.readPacketData(startingAt: 150, count: 20)
        var expected: [UInt8] = []
        for k in Array(150..<160) + Array(0..<10) { expected += [UInt8(k), 0] }
        XCTAssertEqual(data, expected)
        XCTAssertNil(dripFeedMismatch(bytes))
        XCTAssertEqual(feed(bytes, pattern: .oneByteAtATime).packetSizes.count, 240)
    }

    /// A CodecPrivate over 1 MiB and a block over 16 MiB are limit errors; an
    /// EBMLMaxSizeLength over 8 and a DocType other than matroska/webm are refused.
    func testUntrustedSizesAreBounded() throws {
        let big = MatroskaWriter.file(MatroskaWriter.tracks(extra: MatroskaWriter.element(MKV.codecPrivate, Array(repeating: 0, count: 2 << 20)))
            + MatroskaWriter.cluster(time: 0, frames: 10))
        XCTAssertThrowsError(try AudioFile(source: MemorySource(big))) { e in
            XCTAssertEqual((e as? AudioError)?.category, .limit, "\(e)")
        }
        // (In a Cluster of known size, a block that runs past it is damage, passed over.)
        var block = MatroskaWriter.file(MatroskaWriter.tracks() + MatroskaWriter.cluster(time: 0, frames: 10, unknownSize: true), unknownSize: true)
        let at = try XCTUnwrap(block.indices.last { block[$0] == 0xA3 && block[$0 + 1] == 0x01 })
        block.replaceSubrange((at + 1)..<(at + 9), with: MatroskaWriter.size(32 << 20))
        for r in [feed(block, pattern: .randomChunks(seed: 1, maximum: 64))] {
            XCTAssertEqual(r.error?.category, .limit, "\(r)")
        }
        XCTAssertThrowsError(try AudioFile(source: MemorySource(block))) { e in
            XCTAssertEqual((e as? AudioError)?.category, .limit, "\(e)")
        }
        let wide = MatroskaWriter.header(maxSizeLength: 9) + MatroskaWriter.element(MKV.segment, MatroskaWriter.tracks())
        XCTAssertThrowsError(try AudioFile(source: MemorySource(wide))) { e in
            XCTAssertEqual((e as? AudioError)?.code, .invalidFile, "\(e)")
        }
        let other = MatroskaWriter.file(MatroskaWriter.tracks(), docType: "notmkv")
        XCTAssertThrowsError(try AudioFile(source: MemorySource(other))) { e in
            XCTAssertEqual((e as? AudioError)?.code, .unsupportedFileType, "\(e)")
        }
    }

    /// Tracks after the Clusters, found through the SeekHead: AudioFile fetches them; a
    /// stream without a byte-range fetcher cannot, and says so; with one, it plays.
    func testTracksAfterClustersThroughTheSeekHead() throws {
        let clusters = MatroskaWriter.cluster(time: 0, frames: 100) + MatroskaWriter.cluster(time: 13, frames: 100)
        // SeekHead: one Seek of fixed size (IDs and 8-byte positions), placed first.
        func seekHead(_ position: Int) -> [UInt8] {
            MatroskaWriter.element(MKV.seekHead, MatroskaWriter.element(MKV.seek, MatroskaWriter.element(MKV.seekID, MatroskaWriter.id(MKV.tracks))
                + MatroskaWriter.uint(MKV.seekPosition, UInt64(position))))
        }
        let headSize = seekHead(0).count
        let bytes = MatroskaWriter.file(seekHead(headSize + clusters.count) + clusters + MatroskaWriter.tracks())
        XCTAssertEqual(try AudioFile(source: MemorySource(bytes)).audioDataPacketCount, 200)
        let r = feed(bytes, pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, .invalidFile, "\(r)")
        var got = 0
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, n, _, _ in got += n })
        stream.byteRangeFetcher = { offset, count in Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)]) }
        try stream.parse(bytes)
        try stream.parse(nil)
        XCTAssertEqual(got, 200)
    }

    /// Tracks without CodecPrivate: the old A_AAC/MPEG4/LC style gets an AudioSpecificConfig
    /// made from the profile, rate and channels; A_OPUS an OpusHead from the channels and
    /// CodecDelay. Zlib-compressed frames (ContentCompAlgo 0) are refused by name.
    func testTracksWithoutCodecPrivate() throws {
        let aac = MatroskaWriter.file(MatroskaWriter.tracks(codec: "A_AAC/MPEG4/LC", rate: 44100, channels: 2)
            + MatroskaWriter.cluster(time: 0, frames: 4))
        let f = try AudioFile(source: MemorySource(aac))
        XCTAssertEqual(try f.dataFormat.formatID, .mpeg4AAC)
        XCTAssertEqual(try f.dataFormat.framesPerPacket, 1024)
        XCTAssertEqual(try f.magicCookie, [0x12, 0x10])  // object type 2, rate index 4, 2 channels
        let opus = MatroskaWriter.file(MatroskaWriter.tracks(extra: MatroskaWriter.uint(MKV.codecDelay, 6_500_000), codec: "A_OPUS", rate: 48000, channels: 2)
            + MatroskaWriter.cluster(time: 0, frames: 4))
        let o = try AudioFile(source: MemorySource(opus))
        XCTAssertEqual(try o.magicCookie, Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0])
        XCTAssertEqual(try o.packetTableInfo?.primingFrames, 312)
        let zlib = MatroskaWriter.element(MKV.contentEncodings, MatroskaWriter.element(MKV.contentEncoding,
            MatroskaWriter.element(MKV.contentCompression, MatroskaWriter.uint(MKV.contentCompAlgo, 0))))
        let compressed = MatroskaWriter.file(MatroskaWriter.tracks(extra: zlib) + MatroskaWriter.cluster(time: 0, frames: 4))
        XCTAssertThrowsError(try AudioFile(source: MemorySource(compressed))) { e in
            XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat, "\(e)")
            XCTAssertTrue("\(e)".contains("ContentEncodings"), "\(e)")
        }
    }

    /// Unknown sizes everywhere (Segment and Clusters) with Void and CRC-32 between them.
    func testUnknownSizesWithVoidAndCRC() throws {
        let void = MatroskaWriter.element(MKV.void, [0, 0, 0])
        let crc = MatroskaWriter.element(MKV.crc32, [1, 2, 3, 4])
        let bytes = MatroskaWriter.file(crc + MatroskaWriter.tracks() + void + MatroskaWriter.cluster(time: 0, frames: 50, unknownSize: true)
            + void + MatroskaWriter.cluster(time: 7, frames: 30, unknownSize: true), unknownSize: true)
        XCTAssertEqual(try AudioFile(source: MemorySource(bytes)).audioDataPacketCount, 80)
        XCTAssertNil(dripFeedMismatch(bytes))
        XCTAssertEqual(feed(bytes, pattern: .randomChunks(seed: 5, maximum: 9)).packetSizes.count, 80)
    }
}

final class MatroskaMutationTests: XCTestCase {
    /// Seeded random mutations of real files (bytes overwritten, runs deleted or repeated,
    /// sizes set to all ones) through both paths: AudioErrors only, in bounded time.
    /// MATROSKA_MUTATIONS sets the count per file (200 by default).
    func testRandomMutationsOnBothPaths() throws {
        let count = Int(ProcessInfo.processInfo.environment["MATROSKA_MUTATIONS"] ?? "") ?? 200
        for name in ["opus_stereo.webm", "live_unknown.webm", "laced_xiph.mka", "laced_fixed.mka", "tagged.mka", "vorbis_stereo.webm",
                     "stripped_ac3.mka"] {
            let original = try readWholeFile(MatroskaKit.path(name))
            let done = runWithDeadline(seconds: 600) { () -> [String] in
                var g = SeededGenerator(seed: 0x4D4B56 &+ UInt64(original.count))
                var problems: [String] = []
                for _ in 0..<count {
                    var b = original
                    for _ in 0..<Int.random(in: 1...6, using: &g) {
                        let at = Int.random(in: 0..<b.count, using: &g)
                        switch Int.random(in: 0..<5, using: &g) {
                        case 0: b[at] = UInt8.random(in: 0...255, using: &g)
                        case 1: b[at] ^= 1 << UInt8.random(in: 0..<8, using: &g)
                        case 2: b.removeSubrange(at..<min(b.count, at + Int.random(in: 1...64, using: &g)))
                        case 3: b.insert(contentsOf: b[at..<min(b.count, at + Int.random(in: 1...64, using: &g))], at: at)
                        default: b[at] = 0x01; for k in 1..<8 where at + k < b.count { b[at + k] = 0xFF }
                        }
                        if b.isEmpty { b = [0x1A] }
                    }
                    let r = feed(b, pattern: .randomChunks(seed: g.next() % 100, maximum: 700))
                    _ = r
                    do {
                        let f = try AudioFile(source: MemorySource(b))
                        if let n = try? f.audioDataPacketCount, n > 0 {
                            _ = try? f.readPacketData(startingAt: 0, count: 8)
                            _ = try? f.readPacketData(startingAt: n / 2, count: 8)
                        }
                    } catch is AudioError {
                    } catch {
                        problems.append("\(error)")
                    }
                }
                return problems
            }
            XCTAssertEqual(try XCTUnwrap(done, "\(name): the mutations did not end in time"), [], name)
        }
    }
}

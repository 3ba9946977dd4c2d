import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

/// Shared helpers of the MP4 tests: fixtures, goldens, and packet collection on both paths.
enum MP4Kit {
    static let directory = fixturesDirectory + "/mp4"

    static func path(_ name: String) -> String { directory + "/" + name }

    static func bytes(_ name: String) throws -> [UInt8] { try readWholeFile(path(name)) }

    /// The golden JSON beside a fixture (written by make-mp4.sh).
    static func golden(_ name: String) throws -> [String: Any] {
        let json = (path(name) as NSString).deletingPathExtension + ".json"
        let data = try XCTUnwrap(FileManager.default.contents(atPath: json), "no golden for \(name)")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func ints(_ v: Any?) -> [Int64?] {
        (v as? [Any] ?? []).map { ($0 as? NSNumber)?.int64Value }
    }


    /// Every fixture, with the golden's expectations.
    static var fixtures: [String] {
        fixtureFiles("mp4").map { ($0 as NSString).lastPathComponent }
    }

    /// Fixtures whose moov comes before the audio (or that are fragmented): a plain stream plays them.
    static func isStreamable(_ name: String) -> Bool { !name.contains("moov_end") && name != "aac_3gpp.3gp" }

    struct Packets: Equatable, CustomStringConvertible {
        var data: [UInt8] = []
        var sizes: [Int] = []
        var frames: [UInt32] = []
        var description: String { "\(sizes.count) packets, \(data.count) bytes" }

        /// Appends the packets a stream handed over.
        mutating func append(_ bytes: UnsafeRawBufferPointer, _ descriptions: [PacketDescription]) {
            for d in descriptions {
                data += bytes[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)]
                sizes.append(Int(d.dataByteSize))
                frames.append(d.variableFramesInPacket)
            }
        }
    }

    /// Every packet through AudioFile, read a few at a time.
    static func filePackets(_ file: AudioFile, from start: Int64 = 0, batch: Int = 7) throws -> Packets {
        var p = Packets()
        let total = try file.audioDataPacketCount
        var i = start
        while i < total {
            // The data runs from the first packet to the end of the last, with whatever lies
            // between them (other tracks, fragment headers); the descriptions point into it.
            let (data, descriptions) = try file.readPacketData(startingAt: i, count: batch)
            let d = try XCTUnwrap(descriptions)
            XCTAssertTrue(d.allSatisfy { Int($0.startOffset) + Int($0.dataByteSize) <= data.count })
            data.withUnsafeBytes { p.append($0, d) }
            i += Int64(d.count)
        }
        return p
    }

    /// What a stream gave: properties, packets, error.
    struct StreamResult {
        var packets = Packets()
        var notifications: [AudioFilePropertyID] = []
        var properties: FileProperties?
        var error: AudioError?
    }

    /// Feeds bytes to an AudioFileStream in chunks, optionally with a byte-range fetcher over
    /// the same bytes, and collects packets whose bytes are checked against their descriptions.
    static func stream(_ bytes: [UInt8], chunk: Int = 4096, fetcher: Bool = false, startAt: Int = 0,
                       setUp: ((AudioFileStream) throws -> Void)? = nil) -> StreamResult
    {
        var result = StreamResult()
        let stream = AudioFileStream(propertyListener: { _, id, _ in result.notifications.append(id) },
                                     packets: { _, count, data, descriptions in
                                         guard let descriptions, descriptions.count == count else {
                                             XCTFail("MP4 packets come with descriptions"); return
                                         }
                                         result.packets.append(data, descriptions)
                                     })
        if fetcher {
            stream.byteRangeFetcher = { offset, count throws(AudioError) in
                guard offset >= 0, offset <= Int64(bytes.count) else { return [] }
                let start = Int(offset)
                return Array(bytes[start..<min(bytes.count, start + count)])
            }
        }
        do {
            try setUp?(stream)
            var i = startAt
            while i < bytes.count {
                let n = min(chunk, bytes.count - i)
                try stream.parse(bytes[i..<i + n])
                i += n
            }
            try stream.parse(nil)
        } catch let e as AudioError {
            result.error = e
        } catch {
            XCTFail("\(error)")
        }
        result.properties = stream.properties
        return result
    }

    /// The error a body throws, or nil.
    static func error(_ body: () throws(AudioError) -> Void) -> AudioError? {
        do { try body() } catch { return error }
        return nil
    }
}

final class MP4FixtureTests: XCTestCase {
    func testEveryFixtureHasAGolden() throws {
        XCTAssertEqual(MP4Kit.fixtures.count, 16, "make-mp4.sh writes 16 fixtures")
        for name in MP4Kit.fixtures { _ = try MP4Kit.golden(name) }
    }

    /// Type, format, rate, channels, cookie, and every packet's size, position and pts against ffprobe.
    func testFixturesAgainstFFprobe() throws {
        for name in MP4Kit.fixtures {
            let g = try MP4Kit.golden(name)
            let expected = try XCTUnwrap(g["expected"] as? [String: String])
            let file = try AudioFile(path: MP4Kit.path(name))
            let p = try file.properties
            let f = try XCTUnwrap(p.dataFormat, name)
            XCTAssertEqual(p.fileType.fourCC.string, expected["fileType"], name)
            XCTAssertEqual(f.formatID.fourCC.string, expected["formatID"], name)
            XCTAssertEqual(f.sampleRate, Double(g["sampleRate"] as! Int), name)
            XCTAssertEqual(Int(f.channelsPerFrame), g["channels"] as? Int, name)
            XCTAssertEqual(p.trackCount, g["audioStreams"] as? Int, name)
            XCTAssertEqual(g["timeBase"] as? String, "1/\(Int(f.sampleRate))", "\(name): the media timescale is the sample rate, so pts compare directly")

            // Cookies: the AudioSpecificConfig and OpusHead as ffmpeg's extradata; the 24-byte
            // ALACSpecificConfig that ends ffmpeg's 'alac' atom; FLAC's dfLa body (version and
            // flags, then STREAMINFO with its block header) around ffmpeg's bare STREAMINFO.
            let extradata = hexBytes(g["extradata"] as? String ?? "")
            switch f.formatID {
            case .mpeg4AAC, .opus: XCTAssertEqual(p.magicCookie, extradata, name)
            case .appleLossless: XCTAssertEqual(p.magicCookie, Array(extradata.suffix(24)), name)
            case .flac: XCTAssertEqual(p.magicCookie, [0, 0, 0, 0, 0x80, 0, 0, 34] + extradata, name)
            default: XCTAssertNil(p.magicCookie, name)
            }

            let sizes = MP4Kit.ints(g["packetSizes"]).map { Int($0!) }
            let positions = MP4Kit.ints(g["packetPos"]).map { $0! }
            let ffPts = MP4Kit.ints(g["packetPts"]).map { $0! }
            XCTAssertEqual(Int(try file.audioDataPacketCount), g["packets"] as? Int, name)
            let table = try XCTUnwrap(p.packetTable, name)
            let dataOffset = try file.dataOffset
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, sizes, name)
            XCTAssertEqual(table.map { dataOffset + $0.startOffset }, positions, "\(name): dataOffset + startOffset is each sample's file offset")
            XCTAssertEqual(dataOffset, positions.first, name)
            XCTAssertEqual(try file.audioDataByteCount, Int64(sizes.reduce(0, +)), name)
            XCTAssertEqual(try file.maximumPacketSize, UInt32(sizes.max()!), name)
            // Times on the edited timeline, as ffprobe shows them: the priming comes before 0.
            XCTAssertEqual(try XCTUnwrap(p.packetTimestamps, name), ffPts, name)
        }
    }

    /// Priming, valid and remainder frames against ffprobe's skip samples, duration_ts and
    /// packet durations.
    ///
    /// The rule: the priming is the edit's media_time (ffprobe's first-packet skip samples,
    /// 0 without an edit list). The valid frames are the edit's duration, which ffmpeg writes
    /// in the movie timescale (1/1000 s) and ffprobe rounds into duration_ts; when that lies
    /// within one movie tick of the media after the priming (the end of the last packet's
    /// duration), Tonearm takes the media's exact end instead, which is what the edit rounds.
    /// The remainder is what the packets decode to beyond both.
    func testGaplessAgainstFFprobe() throws {
        for name in MP4Kit.fixtures {
            let g = try MP4Kit.golden(name)
            let file = try AudioFile(path: MP4Kit.path(name))
            let p = try file.properties
            let info = try XCTUnwrap(p.packetTableInfo, name)
            let f = try XCTUnwrap(p.dataFormat)
            let pts = MP4Kit.ints(g["packetPts"]).map { $0! }
            let durations = MP4Kit.ints(g["packetDurations"])
            let skip = (g["skipSamples"] as? [Int])?.first ?? 0
            XCTAssertEqual(Int(info.primingFrames), skip, "\(name): priming")
            XCTAssertEqual(Int64(info.primingFrames), max(0, -pts[0]), "\(name): priming = -first pts")

            let boxes = try XCTUnwrap(g["boxes"] as? [String: Any])
            let track = try XCTUnwrap((boxes["tracks"] as? [[String: Any]])?.first)
            let durationTs = try XCTUnwrap((g["durationTs"] as? NSNumber)?.int64Value)
            // The media's span (the sum of stts, as mdhd gives it), priming included. ffprobe's
            // packet durations mostly agree but stretch the last packet to the edit. A
            // fragmented file's mdhd says 0: its span is the sum of the trun durations, which
            // is ffprobe's duration_ts (though ffprobe shows the last packet as 1024 long where
            // its trun says 307).
            var mediaEnd = Int64(track["duration"] as! Int)
            if mediaEnd == 0 {
                mediaEnd = durationTs
            } else {
                XCTAssertLessThanOrEqual(abs(mediaEnd - (pts.last! + durations.last!! - pts[0])), 2, name)
            }
            let available = mediaEnd - Int64(skip)
            let movieTimescale = Double(boxes["movieTimescale"] as! Int)
            let tick = (f.sampleRate / movieTimescale).rounded(.up)
            let expectedValid = abs(Double(durationTs - available)) <= tick ? available : min(durationTs, available)
            XCTAssertEqual(info.numberValidFrames, expectedValid, "\(name): valid frames (ffprobe duration_ts \(durationTs))")
            if ["aac_faststart.m4a", "aac_moov_end.m4a", "alac.m4a", "flac.mp4", "mp3.mp4", "opus.mp4"].contains(name) {
                XCTAssertEqual(info.numberValidFrames, durationTs, "\(name): a whole number of ms, so the rule changes nothing")
            }
            let decoded: Int64 = f.framesPerPacket > 0 ? Int64(f.framesPerPacket) * Int64(pts.count)
                : (p.packetTable ?? []).reduce(0) { $0 + Int64($1.variableFramesInPacket) }
            XCTAssertEqual(info.totalFrames, decoded, "\(name): valid + priming + remainder = what the packets decode to")
            XCTAssertGreaterThanOrEqual(info.remainderFrames, 0, name)
            XCTAssertEqual(try file.estimatedDuration, Double(info.numberValidFrames) / f.sampleRate, accuracy: 1e-9, name)
        }
        // The rule at work: ffprobe's duration_ts is the rounded edit, Tonearm's the exact end.
        // AC-3: 16 packets of 1536 frames, 256 of priming; the edit says 506 ms (ffprobe: 24288).
        let ac3 = try AudioFile(path: MP4Kit.path("ac3.mp4")).packetTableInfo!
        XCTAssertEqual(ac3, PacketTableInfo(numberValidFrames: 16 * 1536 - 256, primingFrames: 256, remainderFrames: 0))
        let mono = try AudioFile(path: MP4Kit.path("aac_3gpp.3gp")).packetTableInfo!
        XCTAssertEqual(mono, PacketTableInfo(numberValidFrames: 11111, primingFrames: 1024, remainderFrames: 12 * 1024 - 1024 - 11111),
                       "11111 source frames: the edit says 504 ms (ffprobe: 11113), the media holds exactly 11111")
        let opus = try AudioFile(path: MP4Kit.path("opus.mp4")).packetTableInfo!
        XCTAssertEqual(opus, PacketTableInfo(numberValidFrames: 24000, primingFrames: 312, remainderFrames: 26 * 960 - 312 - 24000))
    }

    func testFormatsAndLayouts() throws {
        func props(_ n: String) throws -> FileProperties { try AudioFile(path: MP4Kit.path(n)).properties }
        let aac = try props("aac_faststart.m4a")
        XCTAssertEqual(aac.dataFormat, StreamDescription(sampleRate: 44100, formatID: .mpeg4AAC, bytesPerPacket: 0, framesPerPacket: 1024,
                                                         bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0))
        XCTAssertEqual(aac.channelLayout?.tag, .stereo)
        XCTAssertEqual(aac.rollDistance, 1, "ffmpeg's sgpd roll group: roll_distance -1")
        XCTAssertTrue(aac.isOptimized)
        XCTAssertFalse(try props("aac_moov_end.m4a").isOptimized)
        XCTAssertEqual(try props("aac_3gpp.3gp").channelLayout?.tag, .mono)
        let alac = try props("alac.m4a")
        XCTAssertEqual(alac.dataFormat?.formatFlags.rawValue, 1, "kAppleLosslessFormatFlag_16BitSourceData")
        XCTAssertEqual(alac.dataFormat?.framesPerPacket, 4096)
        XCTAssertEqual(alac.sourceBitDepth, 16)
        let flac = try props("flac.mp4")
        XCTAssertEqual(flac.dataFormat?.framesPerPacket, 2304, "STREAMINFO's fixed block size (ffmpeg's at 22050 Hz)")
        XCTAssertEqual(flac.dataFormat?.formatFlags.rawValue, 1)
        let opus = try props("opus.mp4")
        XCTAssertEqual(opus.dataFormat?.framesPerPacket, 960, "every stts delta is 960 but the shorter last one")
        XCTAssertEqual(opus.rollDistance, 4, "ffmpeg's roll group for Opus: -4 packets (80 ms)")
        XCTAssertEqual(try props("mp3.mp4").dataFormat?.framesPerPacket, 1152)
        XCTAssertEqual(try props("ac3.mp4").dataFormat?.framesPerPacket, 1536)
        XCTAssertEqual(try props("eac3.mp4").dataFormat?.framesPerPacket, 1536)
        XCTAssertEqual(try props("eac3.mp4").dataFormat?.channelsPerFrame, 2)
        // Bit rate from the table: bytes × 8 over the media's duration (priming included).
        XCTAssertEqual(aac.bitRate, UInt32((Double(aac.audioDataByteCount!) * 8 * 44100 / Double(1024 + 33075)).rounded()))
        // Without stss every packet is independent.
        let stream = MP4Kit.stream(try MP4Kit.bytes("aac_faststart.m4a"))
        XCTAssertNil(stream.properties?.independentPackets)
    }

    func testTagsAndArtwork() throws {
        let g = try MP4Kit.golden("tags_cover.m4a")
        let tags = try XCTUnwrap(g["tags"] as? [String: String])
        let file = try AudioFile(path: MP4Kit.path("tags_cover.m4a"))
        let info = try file.infoDictionary
        let keys: [(String, String)] = [
            ("title", InfoDictionary.title), ("artist", InfoDictionary.artist), ("album", InfoDictionary.album),
            ("date", InfoDictionary.year), ("genre", InfoDictionary.genre), ("comment", InfoDictionary.comments),
            ("composer", InfoDictionary.composer), ("copyright", InfoDictionary.copyright),
            ("track", InfoDictionary.trackNumber), ("encoder", InfoDictionary.encodingApplication),
        ]
        for (ff, apple) in keys {
            XCTAssertEqual(info[apple], try XCTUnwrap(tags[ff], ff), apple)
        }
        XCTAssertEqual(info.count, keys.count)
        XCTAssertEqual(info[InfoDictionary.trackNumber], "3/12")
        let cover = try XCTUnwrap(g["cover"] as? [String: Any])
        let art = try file.property(.albumArtwork).data()
        XCTAssertEqual(art, hexBytes(cover["hex"] as! String))
        XCTAssertEqual(art.count, cover["size"] as? Int)
        XCTAssertEqual(Array(art.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "the PNG itself")
        // The stream announces the same dictionary before 'redy'.
        let s = MP4Kit.stream(try MP4Kit.bytes("tags_cover.m4a"), chunk: 333)
        XCTAssertNil(s.error)
        XCTAssertEqual(s.properties?.info, info)
        XCTAssertEqual(s.properties?.albumArtwork, art)
        XCTAssertTrue(s.notifications.contains(.infoDictionary))
        XCTAssertEqual(s.notifications.last, .readyToProducePackets)
        // The attached picture is a video track, not an audio one.
        XCTAssertEqual(try file.properties.trackCount, 1)
    }

    /// Chapters: QuickTime chapter tracks (read with the fetcher) and Nero chpl.
    func testChapters() throws {
        for name in ["chapters.m4b", "chapters_moov_end.m4b"] {
            let g = try MP4Kit.golden(name)
            let expected = (g["chapters"] as! [[String: Any]]).map { Chapter(start: $0["start"] as! Double, title: $0["title"] as! String) }
            XCTAssertEqual(expected.map(\.title), ["Opening", "Middle Part", "Ende – Schluss"])
            let bytes = try MP4Kit.bytes(name)
            let file = try AudioFile(path: MP4Kit.path(name))
            XCTAssertEqual(try file.properties.chapters, expected, name)
            XCTAssertEqual(try file.fileType, .m4b)
            XCTAssertEqual(try file.properties.trackCount, 1, "the chapter track is text, not audio")
            let fetched = MP4Kit.stream(bytes, chunk: 1000, fetcher: true)
            XCTAssertNil(fetched.error, name)
            XCTAssertEqual(fetched.properties?.chapters, expected, "\(name): a stream with a fetcher reads the chapter track")
            if name == "chapters.m4b" {
                // Without a fetcher the chapter track's samples are out of reach; chpl has the same.
                let plain = MP4Kit.stream(bytes, chunk: 1000)
                XCTAssertEqual(plain.properties?.chapters, expected)
            }
        }
        // Nero chpl alone: hide the chapter track by renaming tref's 'chap', and drop chpl to
        // see that the chapter track alone gives them too.
        var bytes = try MP4Kit.bytes("chapters.m4b")
        let chap = try XCTUnwrap(find(Array("chap".utf8), in: bytes))
        bytes.replaceSubrange(chap..<chap + 4, with: Array("xxxx".utf8))
        let nero = try AudioFile(source: MemorySource(bytes)).properties.chapters
        XCTAssertEqual(nero.map(\.title), ["Opening", "Middle Part", "Ende – Schluss"])
        XCTAssertEqual(nero.map(\.start), [0, 0.4, 1.0])
        var noChpl = try MP4Kit.bytes("chapters.m4b")
        let chpl = try XCTUnwrap(find(Array("chpl".utf8), in: noChpl))
        noChpl.replaceSubrange(chpl..<chpl + 4, with: Array("free".utf8))
        XCTAssertEqual(try AudioFile(source: MemorySource(noChpl)).properties.chapters.map(\.title), ["Opening", "Middle Part", "Ende – Schluss"])
        XCTAssertEqual(MP4Kit.stream(noChpl).properties?.chapters, [], "no fetcher, no chpl: no chapters")
    }

    func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<i + needle.count]) == needle { return i }
        return nil
    }

    /// Feeding a file one byte at a time, in random chunks or all at once gives the same.
    func testDripFeedEquality() throws {
        for name in MP4Kit.fixtures {
            let bytes = try MP4Kit.bytes(name)
            XCTAssertNil(dripFeedMismatch(bytes), name)
            let once = feed(bytes, pattern: .allAtOnce)
            if MP4Kit.isStreamable(name) {
                XCTAssertNil(once.error, name)
                XCTAssertEqual(once.packetSizes.count, MP4Kit.ints(try MP4Kit.golden(name)["packetSizes"]).count, name)
            } else {
                XCTAssertEqual(once.error?.code, .notOptimized, "\(name): moov after mdat, no fetcher: 'optm'")
                XCTAssertTrue(once.packetSizes.isEmpty)
            }
        }
    }

    /// AudioFile and AudioFileStream give the same packets and properties.
    func testFileAndStreamAgree() throws {
        for name in MP4Kit.fixtures {
            let bytes = try MP4Kit.bytes(name)
            let file = try AudioFile(path: MP4Kit.path(name))
            let fromFile = try MP4Kit.filePackets(file)
            let s = MP4Kit.stream(bytes, chunk: 777, fetcher: !MP4Kit.isStreamable(name))
            XCTAssertNil(s.error, name)
            XCTAssertEqual(s.packets, fromFile, name)
            let p = try file.properties, q = try XCTUnwrap(s.properties)
            XCTAssertEqual(q.dataFormat, p.dataFormat, name)
            XCTAssertEqual(q.magicCookie, p.magicCookie, name)
            XCTAssertEqual(q.dataOffset, p.dataOffset, name)
            XCTAssertEqual(q.info, p.info, name)
            if !name.contains("frag") && !name.contains("dash") {
                XCTAssertEqual(q.packetTable, p.packetTable, name)
                XCTAssertEqual(q.packetTableInfo, p.packetTableInfo, name)
                XCTAssertEqual(q.audioDataPacketCount, p.audioDataPacketCount, name)
            }
        }
    }

    /// moov after mdat: AudioFile reads it; a stream says 'optm' without a fetcher, and with
    /// one plays exactly what AudioFile reads.
    func testMoovAtEnd() throws {
        let bytes = try MP4Kit.bytes("aac_moov_end.m4a")
        let file = try AudioFile(path: MP4Kit.path("aac_moov_end.m4a"))
        XCTAssertEqual(try file.audioDataPacketCount, 34, "(1024 + 33075) / 1024, rounded up")
        let plain = MP4Kit.stream(bytes, chunk: 100)
        XCTAssertEqual(plain.error?.code, .notOptimized)
        XCTAssertEqual(plain.error?.code.fourCC, "optm")
        XCTAssertTrue(plain.packets.sizes.isEmpty)
        XCTAssertFalse(plain.notifications.contains(.readyToProducePackets))
        // 'optm' as soon as the mdat header arrives: the first 44 bytes are ftyp, free and mdat's header.
        let early = MP4Kit.stream(Array(bytes.prefix(44)), chunk: 44)
        XCTAssertEqual(early.error?.code, .notOptimized)
        let fetched = MP4Kit.stream(bytes, chunk: 100, fetcher: true)
        XCTAssertNil(fetched.error)
        XCTAssertEqual(fetched.packets, try MP4Kit.filePackets(file))
        XCTAssertEqual(fetched.properties?.isOptimized, false)
        XCTAssertEqual(fetched.notifications.last, .readyToProducePackets)
        // A caller may answer 'optm' by setting a fetcher and parsing on: nothing is lost.
        var recovered = MP4Kit.Packets()
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
            recovered.append(data, descriptions!)
        })
        var i = 0
        var sawOptm = false
        while i < bytes.count {
            let n = min(100, bytes.count - i)
            do throws(AudioError) {
                try stream.parse(bytes[i..<i + n])
                i += n
            } catch {
                XCTAssertEqual(error.code, .notOptimized)
                XCTAssertFalse(sawOptm, "once")
                sawOptm = true
                i += n
                stream.byteRangeFetcher = { o, c throws(AudioError) in Array(bytes[Int(o)..<min(bytes.count, Int(o) + c)]) }
            }
        }
        try stream.parse(nil)
        XCTAssertTrue(sawOptm)
        XCTAssertEqual(recovered, fetched.packets)
        // Same for the faststart twin: the packets are the same bytes.
        XCTAssertEqual(fetched.packets, MP4Kit.stream(try MP4Kit.bytes("aac_faststart.m4a")).packets)
    }

    /// Seeking: the offsets are the table's, and a stream restarted there with
    /// .discontinuity gives AudioFile's packets from that packet on.
    func testSeek() throws {
        for name in ["aac_faststart.m4a", "two_tracks.mp4", "flac.mp4", "aac_moov_end.m4a"] {
            let bytes = try MP4Kit.bytes(name)
            let file = try AudioFile(path: MP4Kit.path(name))
            let table = try XCTUnwrap(file.properties.packetTable)
            let dataOffset = try file.dataOffset
            for target in [0, 1, table.count / 2, table.count - 1] {
                var restart: Int64 = -1
                var armed = false
                var result = MP4Kit.Packets()
                var error: AudioError?
                let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
                    if armed { result.append(data, descriptions!) }
                })
                if name.contains("moov_end") {
                    stream.byteRangeFetcher = { o, n throws(AudioError) in Array(bytes[Int(o)..<min(bytes.count, Int(o) + n)]) }
                }
                do throws(AudioError) {
                    // Read up to the data, then jump.
                    var i = 0
                    while !stream.isReadyToProducePackets && i < bytes.count { try stream.parse(bytes[i..<i + 1]); i += 1 }
                    let (offset, flags) = try stream.seek(toPacket: Int64(target))
                    XCTAssertEqual(offset, table[target].startOffset, name)
                    XCTAssertTrue(flags.isEmpty, "exact: from the sample table")
                    XCTAssertEqual(try stream.byte(forPacket: Int64(target)).byte, offset)
                    XCTAssertEqual(try stream.packet(forByte: offset).packet, Int64(target))
                    restart = dataOffset + offset
                    armed = true
                    var first = true
                    var j = Int(restart)
                    while j < bytes.count {
                        let n = min(500, bytes.count - j)
                        try stream.parse(bytes[j..<j + n], flags: first ? .discontinuity : [])
                        first = false
                        j += n
                    }
                    try stream.parse(nil)
                } catch let e { error = e }
                XCTAssertNil(error, "\(name) @\(target)")
                XCTAssertEqual(result, try MP4Kit.filePackets(file, from: Int64(target)), "\(name) from packet \(target)")
            }
        }
    }

    /// Seeking a fragmented stream: exact back to fragments already read; beyond them estimated
    /// (the `mfra` index through a fetcher, else the average packet size), after which the
    /// packets of the next fragment come out, each the file's own.
    func testFragmentedStreamSeek() throws {
        for name in ["aac_frag.mp4", "aac_dash.mp4"] {
            let bytes = try MP4Kit.bytes(name)
            let file = try AudioFile(path: MP4Kit.path(name))
            let table = try XCTUnwrap(file.properties.packetTable)
            let dataOffset = try file.dataOffset
            let all = try MP4Kit.filePackets(file)
            for (readFirst, fetcher) in [(true, false), (false, true), (false, false)] {
                for target in [1, table.count / 2, table.count - 2] {
                    var armed = false
                    var result = MP4Kit.Packets()
                    let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
                        if armed { result.append(data, descriptions!) }
                    })
                    if fetcher {
                        stream.byteRangeFetcher = { o, n throws(AudioError) in Array(bytes[Int(o)..<min(bytes.count, Int(o) + n)]) }
                        stream.sourceSize = Int64(bytes.count)
                    }
                    let label = "\(name) packet \(target) read first \(readFirst) fetcher \(fetcher)"
                    if readFirst {
                        try stream.parse(bytes)
                    } else {
                        var i = 0
                        while !stream.isReadyToProducePackets && i < bytes.count { try stream.parse(bytes[i..<i + 1]); i += 1 }
                    }
                    let (offset, flags) = try stream.seek(toPacket: Int64(target))
                    XCTAssertEqual(flags.contains(.offsetIsEstimated), !readFirst, label)
                    if readFirst { XCTAssertEqual(offset, table[target].startOffset, label) }
                    if fetcher {
                        // The moof of the fragment that holds the packet.
                        XCTAssertEqual(Array(bytes[Int(dataOffset + offset) + 4..<Int(dataOffset + offset) + 8]), Array("moof".utf8), label)
                    }
                    armed = true
                    try stream.parse(bytes[Int(dataOffset + offset)...], flags: .discontinuity)
                    try stream.parse(nil)
                    // The file's packets from some packet on: exactly the target when its fragment
                    // was read before; the first of the target's fragment from the index; from
                    // the next moof after an estimate from the average size (none when the
                    // estimate overshoots into the last fragment).
                    let k = all.sizes.count - result.sizes.count
                    if k < all.sizes.count { XCTAssertEqual(result, try MP4Kit.filePackets(file, from: Int64(k)), label) }
                    if readFirst { XCTAssertEqual(k, target, label) }
                    if fetcher {
                        XCTAssertLessThanOrEqual(k, target, label)
                        XCTAssertLessThan(target - k, 16, "\(label): within one fragment")
                    }
                }
            }
        }
    }

    /// The announcements before 'redy', and what a stream of fragments knows.
    func testStreamAnnouncements() throws {
        let fast = MP4Kit.stream(try MP4Kit.bytes("aac_faststart.m4a"))
        XCTAssertEqual(fast.notifications, [.fileFormat, .dataFormat, .magicCookieData, .channelLayout, .packetTableInfo,
                                            .audioDataByteCount, .audioDataPacketCount, .bitRate, .dataOffset, .maximumPacketSize,
                                            .readyToProducePackets])
        // Fragments: ready at the first moof, with no count of what is to come.
        let bytes = try MP4Kit.bytes("aac_dash.mp4")
        var ready = false
        let stream = AudioFileStream(propertyListener: { _, id, _ in if id == .readyToProducePackets { ready = true } },
                                     packets: { _, _, _, _ in })
        var i = 0
        while !ready { try stream.parse(bytes[i..<i + 1]); i += 1 }
        let g = try MP4Kit.golden("aac_dash.mp4")
        let firstPos = MP4Kit.ints(g["packetPos"]).first!!
        XCTAssertGreaterThan(Int64(i), firstPos - 8 - 200, "ready once the first moof is read")
        XCTAssertLessThanOrEqual(Int64(i), firstPos)
        XCTAssertEqual(try stream.dataOffset, firstPos)
        XCTAssertEqual(try stream.dataFormat.framesPerPacket, 1024)
        XCTAssertEqual(MP4Kit.error { () throws(AudioError) in _ = try stream.audioDataPacketCount }?.code, .valueUnknown)
        // No table of what is to come: a seek ahead is an estimate.
        XCTAssertEqual(try stream.seek(toPacket: 3).flags, .offsetIsEstimated)
        XCTAssertEqual(try stream.maximumPacketSize, 1536, "AAC's bound: 6144 bits per channel")
    }

    /// Two audio tracks whose chunks interleave: the first is chosen, the other's bytes skipped.
    func testTwoTracks() throws {
        let bytes = try MP4Kit.bytes("two_tracks.mp4")
        let file = try AudioFile(path: MP4Kit.path("two_tracks.mp4"))
        let p = try file.properties
        XCTAssertEqual(p.trackCount, 2)
        XCTAssertEqual(p.dataFormat?.formatID, .mpeg4AAC)
        let table = try XCTUnwrap(p.packetTable)
        let gaps = zip(table, table.dropFirst()).filter { $0.startOffset + Int64($0.dataByteSize) != $1.startOffset }.count
        XCTAssertGreaterThan(gaps, 5, "the AC-3 track's chunks lie between the AAC track's")
        XCTAssertEqual(MP4Kit.stream(bytes, chunk: 1).packets, try MP4Kit.filePackets(file))
    }
}

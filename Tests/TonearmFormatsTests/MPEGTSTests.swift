import Foundation
import XCTest
import Tonearm
import TonearmTestSupport
@testable import TonearmFormats

/// A fixture's golden JSON, written by make-mpegts.sh (tools/mpegts_golden.py): ffprobe's
/// stream and packets (pts, duration and size in 90 kHz ticks and bytes).
struct MPEGTSGolden {
    let raw: [String: Any]
    let name: String

    init(fixture path: String, stream: String? = nil) throws {
        let json = stream.map { (path as NSString).deletingPathExtension + ".\($0).json" }
        if let json {
            let data = try Data(contentsOf: URL(fileURLWithPath: json))
            raw = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        } else {
            raw = try XCTUnwrap(Golden(fixture: path), "no golden for \(path)").raw
        }
        name = (path as NSString).lastPathComponent
    }

    var codec: String { raw["codec"] as! String }
    var sampleRate: Int { (raw["sampleRate"] as! NSNumber).intValue }
    var channels: Int { (raw["channels"] as! NSNumber).intValue }
    var pid: Int { (raw["pid"] as! NSNumber).intValue }
    var startPts: Int { (raw["startPts"] as! NSNumber).intValue }
    var packets: [(pts: Int?, duration: Int?, size: Int)] {
        (raw["packets"] as! [[Any]]).map { p in ((p[0] as? NSNumber)?.intValue, (p[1] as? NSNumber)?.intValue, (p[2] as! NSNumber).intValue) }
    }
    var streams: [(pid: Int, type: String, codec: String, language: String)] {
        (raw["streams"] as! [[Any]]).map { (($0[0] as! NSNumber).intValue, $0[1] as! String, $0[2] as! String, $0[3] as! String) }
    }
    var formatID: AudioFormatID {
        switch codec {
        case "aac", "aac_latm": .mpeg4AAC
        case "mp2": .mpegLayer2
        case "mp3": .mpegLayer3
        case "ac3": .ac3
        case "eac3": .enhancedAC3
        default: .opus
        }
    }
    /// Bytes ffmpeg's packet has that Tonearm's does not: the 7-byte ADTS header.
    var headerBytes: Int { codec == "aac" ? 7 : 0 }
}

enum MPEGTSKit {
    static var fixtures: [String] { fixtureFiles("mpegts", extensions: ["ts", "m2ts"]) }
    static func path(_ name: String) -> String { fixturesDirectory + "/mpegts/" + name }

    /// Every packet through AudioFile, as separate arrays (the Matroska tests' reader).
    static func readAll(_ file: AudioFile, chunk: Int = 16) throws -> [[UInt8]] {
        try MatroskaKit.readAll(file, chunk: chunk)
    }

    /// The packets of a push run, each as its own array, with the notifications in order.
    struct PushRun {
        var packets: [[UInt8]] = []
        var events: [String] = []
    }

    static func push(_ pieces: [[UInt8]], discontinuityBefore: Set<Int> = [], chunk: Int = 1000,
                     onProperty: ((AudioFileStream, AudioFilePropertyID) -> String?)? = nil) throws -> PushRun
    {
        var run = PushRun()
        let stream = AudioFileStream(propertyListener: { s, id, _ in
            run.events.append(onProperty?(s, id) ?? id.fourCC.string)
        }, packets: { _, n, data, d in
            for p in d ?? [] {
                run.packets.append(Array(data[Int(p.startOffset)..<Int(p.startOffset) + Int(p.dataByteSize)]))
            }
            run.events.append("packets \(n)")
        })
        for (i, bytes) in pieces.enumerated() {
            var at = 0
            var first = true
            while at < bytes.count {
                let end = min(bytes.count, at + chunk)
                try stream.parse(bytes[at..<end], flags: first && discontinuityBefore.contains(i) ? .discontinuity : [])
                first = false
                at = end
            }
        }
        try stream.parse(nil)
        return run
    }

    /// The elementary stream of a fixture as ffmpeg copies it out, in the raw container of
    /// its codec, and the type Tonearm reads it as.
    static func elementaryStream(_ path: String, codec: String, stream: String = "a:0") throws -> String {
        let ffmpeg = try requireTool("ffmpeg")
        let (format, ext) = switch codec {
        case "aac": ("adts", "aac")
        case "aac_latm": ("latm", "loas")
        case "mp2": ("mp2", "mp2")
        case "mp3": ("mp3", "mp3")
        case "ac3": ("ac3", "ac3")
        case "eac3": ("eac3", "ec3")
        default: ("ogg", "opus")
        }
        let out = makeTemporaryDirectory() + "/es." + ext
        // (No Xing frame for MP3: its gapless numbers would trim what the TS does not.)
        let xing = codec == "mp3" ? ["-write_xing", "0"] : []
        _ = try runTool(ffmpeg, ["-v", "error", "-y", "-i", path, "-map", "0:" + stream, "-c", "copy"] + xing + ["-f", format, out])
        return out
    }
}

final class MPEGTSTests: XCTestCase {
    func testFixturesExist() {
        XCTAssertEqual(MPEGTSKit.fixtures.count, 11, "run Tests/Fixtures/make-mpegts.sh")
    }

    /// AudioFile against the golden ffprobe values: type, format, packet count, each
    /// packet's size (less the ADTS header), duration and time.
    func testEveryFixtureThroughAudioFile() throws {
        for path in MPEGTSKit.fixtures {
            let g = try MPEGTSGolden(fixture: path)
            let file = try AudioFile(path: path)
            let p = try file.properties
            XCTAssertEqual(p.fileType, .mpegTS, g.name)
            let f = try file.dataFormat
            XCTAssertEqual(f.formatID, g.formatID, g.name)
            XCTAssertEqual(f.sampleRate, Double(g.sampleRate), g.name)
            XCTAssertEqual(Int(f.channelsPerFrame), g.channels, g.name)
            XCTAssertEqual(try file.audioDataPacketCount, Int64(g.packets.count), g.name)
            let table = try XCTUnwrap(p.packetTable, g.name)
            let sizes = g.packets.map { $0.size - g.headerBytes }
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, sizes, g.name)
            let all = try MPEGTSKit.readAll(file, chunk: 7)
            XCTAssertEqual(all.map(\.count), sizes, g.name)
            XCTAssertEqual(try file.maximumPacketSize, UInt32(sizes.max()!), g.name)
            // Times and durations, in 90 kHz ticks as ffprobe gives them.
            let pts = try XCTUnwrap(p.packetTimestamps, g.name)
            let rate = Double(g.sampleRate)
            for (k, e) in g.packets.enumerated() {
                let frames = f.framesPerPacket > 0 ? Int(f.framesPerPacket) : Int(table[k].variableFramesInPacket)
                if let d = e.duration { XCTAssertEqual(Double(frames) * 90000 / rate, Double(d), accuracy: 1, "\(g.name) packet \(k)") }
                if let t = e.pts {
                    XCTAssertEqual(Double(pts[k]) * 90000 / rate, Double(t - g.startPts), accuracy: 2, "\(g.name) packet \(k) time")
                }
            }
        }
    }

    /// The packets, format, cookie and format list are those of Tonearm's own parser on the
    /// elementary stream ffmpeg copies out of the TS (ADTS, LOAS, MP2, MP3, AC-3, E-AC-3);
    /// for Opus, the Ogg parser's packets, and an OpusHead whose pre-skip is the TS start trim.
    func testPacketsAreTheElementaryStreamParsersPackets() throws {
        for name in ["aac.ts", "latm.ts", "mp2.ts", "mp3.ts", "ac3.ts", "eac3.ts", "opus.ts", "aac_m2ts.m2ts"] {
            let path = MPEGTSKit.path(name)
            let g = try MPEGTSGolden(fixture: path)
            let es = try AudioFile(path: try MPEGTSKit.elementaryStream(path, codec: g.codec))
            let ts = try AudioFile(path: path)
            XCTAssertEqual(try MPEGTSKit.readAll(ts), try MPEGTSKit.readAll(es), name)
            XCTAssertEqual(try ts.dataFormat, try es.dataFormat, name)
            if g.codec == "opus" {
                var head = try XCTUnwrap(try es.magicCookie)
                head[10] = 0x38  // ffmpeg's Ogg muxer writes pre-skip 0; the TS's start trim says 312
                head[11] = 0x01
                XCTAssertEqual(try ts.magicCookie, head, name)
                XCTAssertEqual(try ts.packetTableInfo?.primingFrames, 312, name)
            } else {
                XCTAssertEqual(try ts.magicCookie, try es.magicCookie, name)
                XCTAssertEqual(try ts.properties.formatList, try es.properties.formatList, name)
                XCTAssertEqual(try ts.properties.dataFormatName, try es.properties.dataFormatName, name)
            }
        }
    }

    /// The push path, fed one byte at a time, in random pieces and all at once, gives the
    /// same notifications and packets every time, and they are AudioFile's.
    func testPushPathMatchesAudioFileInEveryFeedPattern() throws {
        for path in MPEGTSKit.fixtures {
            let name = (path as NSString).lastPathComponent
            let bytes = try readWholeFile(path)
            let patterns = FeedPattern.standard.filter { "\($0)" != "one byte at a time" || name == "aac.ts" }
            XCTAssertNil(dripFeedMismatch(bytes, patterns: patterns), name)
            let r = feed(bytes, pattern: .randomChunks(seed: 5, maximum: 700))
            XCTAssertNil(r.error, name)
            let file = try AudioFile(path: path)
            XCTAssertEqual(r.dataFormat, try file.dataFormat, name)
            XCTAssertEqual(r.dataOffset, try file.dataOffset, name)
            XCTAssertEqual(r.notifications.first, .fileFormat, name)
            XCTAssertEqual(r.packetData, Array(try MPEGTSKit.readAll(file).joined()), name)
            XCTAssertEqual(r.packetSizes, try file.properties.packetTable?.map { Int($0.dataByteSize) }, name)
        }
    }

    /// Random access: reads anywhere give a sequential read's packets, and the offset of a
    /// packet (or of a frame) is the transport packet where the PES holding it begins: the
    /// push path resumed there gives that packet among the first.
    func testRandomAccessReadsAndSeeks() throws {
        for name in ["aac.ts", "opus.ts", "ac3.ts", "aac_m2ts.m2ts", "aac_204.ts", "two_langs.ts"] {
            let path = MPEGTSKit.path(name)
            let bytes = try readWholeFile(path)
            let file = try AudioFile(path: path)
            let all = try MPEGTSKit.readAll(file, chunk: 4096)
            let n = all.count
            let dataOffset = try file.dataOffset
            let stride = name.hasSuffix(".m2ts") ? 192 : name.contains("204") ? 204 : 188
            let parser = MPEGTSParser()
            try ParserDriver(parser: parser).pull(from: MemorySource(bytes), wantsPackets: false)
            for k in [n / 2, n / 3, 0, n - 1] {
                let count = min(5, n - k)
                let (data, d) = try file.readPacketData(startingAt: Int64(k), count: count)
                let packets = try XCTUnwrap(d).map { Array(data[Int($0.startOffset)..<Int($0.startOffset) + Int($0.dataByteSize)]) }
                XCTAssertEqual(packets, Array(all[k..<k + count]), "\(name) at \(k)")
                let (offset, estimated) = try parser.byteOffset(ofPacket: Int64(k))
                XCTAssertFalse(estimated)
                XCTAssertEqual((offset + dataOffset) % Int64(stride), 0, "\(name) packet \(k): a packet boundary")
                // Resumed there, the stream gives the packet among the first few.
                var got: [[UInt8]] = []
                let resumed = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, d in
                    for p in d ?? [] { got.append(Array(data[Int(p.startOffset)..<Int(p.startOffset) + Int(p.dataByteSize)])) }
                })
                try resumed.parse(bytes)
                got.removeAll()
                let (o, _) = try resumed.seek(toPacket: Int64(k))
                XCTAssertGreaterThanOrEqual(o, 0)
                try resumed.parse(bytes[Int(offset + dataOffset)...], flags: .discontinuity)
                try resumed.parse(nil)
                let i = try XCTUnwrap(all.indices.first { k >= $0 && Array(all[$0...]).starts(with: got.prefix(3)) && !got.isEmpty },
                                      "\(name) packet \(k)")
                XCTAssertLessThanOrEqual(k - i, 8, "\(name) packet \(k)")
            }
            XCTAssertThrowsError(try file.readPacketData(startingAt: Int64(n), count: 1))
        }
    }

    /// Two streams: the first audio stream by default, the other by PID or by language; the
    /// packets are ffprobe's for that stream.
    func testTrackSelection() throws {
        let path = MPEGTSKit.path("two_langs.ts")
        let bytes = try readWholeFile(path)
        let g0 = try MPEGTSGolden(fixture: path), g1 = try MPEGTSGolden(fixture: path, stream: "a1")
        XCTAssertEqual(g0.streams.map(\.language), ["eng", "fra"])
        for (selection, g) in [(MPEGTSTrackSelection.first, g0), (.pid(UInt16(g1.pid)), g1), (.language("FRA"), g1), (.language("deu"), g0)] {
            let parser = MPEGTSParser(selection: selection)
            let driver = ParserDriver(parser: parser)
            var sizes: [Int] = []
            driver.onPackets = { _, _, d in sizes += (d ?? []).map { Int($0.dataByteSize) } }
            try bytes.withBytes { raw throws(AudioError) in try driver.push(raw, endOfStream: true) }
            XCTAssertEqual(parser.properties.dataFormat?.formatID, g.formatID, "\(selection)")
            XCTAssertEqual(sizes, g.packets.map { $0.size - g.headerBytes }, "\(selection)")
            XCTAssertEqual(parser.properties.tracks.map(\.id), [256, 257])
            XCTAssertEqual(parser.properties.tracks.first(where: \.isSelected)?.id, UInt32(g.pid))
        }
    }

    /// Segments: a file cut at a packet boundary and pushed as two pieces gives all its
    /// packets; two different files (AAC, then AC-3) with `.discontinuity` between give both
    /// files' packets, with a new format announced before the second's.
    func testConcatenatedSegmentsAndDiscontinuity() throws {
        let aac = try readWholeFile(MPEGTSKit.path("aac.ts"))
        let ac3 = try readWholeFile(MPEGTSKit.path("ac3.ts"))
        let aacPackets = try MPEGTSKit.readAll(try AudioFile(path: MPEGTSKit.path("aac.ts")))
        let ac3Packets = try MPEGTSKit.readAll(try AudioFile(path: MPEGTSKit.path("ac3.ts")))
        let cut = 188 * 50
        let halves = try MPEGTSKit.push([Array(aac[..<cut]), Array(aac[cut...])])
        XCTAssertEqual(halves.packets, aacPackets)
        // The same stream twice (an HLS playlist of one segment repeated) after a discontinuity.
        let twice = try MPEGTSKit.push([aac, aac], discontinuityBefore: [1])
        XCTAssertEqual(twice.packets, aacPackets + aacPackets)
        XCTAssertFalse(twice.events.dropFirst(5).contains("dfmt"), "the same format is not announced again")
        // A new codec: 'dfmt' and 'mgic' come between the two files' packets.
        var formats: [AudioFormatID] = []
        let two = try MPEGTSKit.push([aac, ac3], discontinuityBefore: [1]) { s, id in
            if id == .dataFormat, let f = s.properties?.dataFormat { formats.append(f.formatID) }
            return nil
        }
        XCTAssertEqual(two.packets, aacPackets + ac3Packets)
        XCTAssertEqual(formats, [.mpeg4AAC, .ac3])
        let change = try XCTUnwrap(two.events.lastIndex(of: "dfmt"))
        let before = two.events[..<change].filter { $0.hasPrefix("packets") }.map { Int($0.dropFirst(8))! }.reduce(0, +)
        XCTAssertEqual(before, aacPackets.count, "the new format is announced before the AC-3 packets")
    }

    /// Lost transport packets: the counters say so, the packets whose bytes were lost are
    /// dropped, the others are the file's, and the stream goes on.
    func testLostPacketsResync() throws {
        let path = MPEGTSKit.path("ac3.ts")
        var bytes = try readWholeFile(path)
        let all = try MPEGTSKit.readAll(try AudioFile(path: path))
        // Drop three transport packets in the middle, and garble a sync byte later.
        bytes.removeSubrange(188 * 100..<188 * 103)
        bytes[188 * 150] = 0x00
        let parser = MPEGTSParser()
        let driver = ParserDriver(parser: parser)
        var got: [[UInt8]] = []
        driver.onPackets = { data, _, d in
            for p in d ?? [] { got.append(Array(data[Int(p.startOffset)..<Int(p.startOffset) + Int(p.dataByteSize)])) }
        }
        try bytes.withBytes { raw throws(AudioError) in try driver.push(raw, endOfStream: true) }
        XCTAssertEqual(parser.continuityGapCount, 1)
        XCTAssertEqual(parser.syncLossCount, 1)
        XCTAssertLessThan(got.count, all.count)
        XCTAssertGreaterThan(got.count, all.count - 6)
        // Every packet that came out is one of the file's, in order.
        var i = 0
        for p in got {
            while i < all.count && all[i] != p { i += 1 }
            XCTAssertLessThan(i, all.count, "a packet that is not the file's")
        }
        // A duplicated transport packet (the same counter twice) is ignored.
        var dup = try readWholeFile(path)
        let audioPacket = (10..<dup.count / 188).first { dup[$0 * 188 + 1] & 0x1F == 0x01 && dup[$0 * 188 + 2] == 0x00 }!
        dup.insert(contentsOf: dup[audioPacket * 188..<(audioPacket + 1) * 188], at: (audioPacket + 1) * 188)
        let r = feed(dup, pattern: .randomChunks(seed: 1, maximum: 400))
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetData, Array(all.joined()))
    }

    /// Timed ID3: the first tag's title and artist on both paths; on the push path each
    /// titled tag announces 'info' while packets flow, and the PRIV-only tag does not.
    func testTimedID3Titles() throws {
        let path = MPEGTSKit.path("id3.ts")
        let p = try AudioFile(path: path).properties
        XCTAssertEqual(p.info[InfoDictionary.title], "Tonearm TS One")
        XCTAssertEqual(p.info[InfoDictionary.artist], "Tonearm Fixtures")
        var titles: [String] = []
        let run = try MPEGTSKit.push([try readWholeFile(path)], chunk: 500) { s, id in
            if id == .infoDictionary, let t = s.properties?.info[InfoDictionary.title] { titles.append(t) }
            return nil
        }
        XCTAssertEqual(titles, ["Tonearm TS One", "Tonearm TS Two"])
        let second = try XCTUnwrap(run.events.lastIndex(of: "info"))
        XCTAssertTrue(run.events[..<second].contains { $0.hasPrefix("packets") }, "the second title comes while packets flow")
        XCTAssertTrue(run.events[second...].contains { $0.hasPrefix("packets") })
        XCTAssertEqual(run.packets, try MPEGTSKit.readAll(try AudioFile(path: MPEGTSKit.path("aac.ts"))))
    }

    /// Decoding through ExtAudioFile gives what the same decoders give for the elementary
    /// stream, sample for sample, and ffmpeg's length.
    func testDecodeMatchesTheElementaryStream() throws {
        let ffmpeg = try requireTool("ffmpeg")
        for name in ["aac.ts", "mp3.ts", "mp2.ts", "opus.ts", "latm.ts"] {
            let path = MPEGTSKit.path(name)
            let g = try MPEGTSGolden(fixture: path)
            let ts = try decodeInterleaved(path, as: Float.self)
            XCTAssertFalse(ts.isEmpty, name)
            if g.codec != "opus" {
                let es = try decodeInterleaved(try MPEGTSKit.elementaryStream(path, codec: g.codec), as: Float.self)
                XCTAssertTrue(ts == es, name)
            }
            let reference = try runToolData(ffmpeg, ["-v", "error", "-i", path, "-map", "0:a:0", "-f", "f32le", "-"])
            let frames = reference.count / 4 / g.channels
            XCTAssertLessThanOrEqual(abs(ts.count / g.channels - frames), 2048, name)
        }
    }

    /// The FFmpeg backend's TS fixture (MP2, 44.1 kHz) is parsed natively: every packet's size
    /// and duration as ffprobe says.
    func testFFmpegFolderFileIsNative() throws {
        let path = fixturesDirectory + "/ffmpeg/mp2_in_ts.ts"
        let g = try XCTUnwrap(Golden(fixture: path)).raw
        let file = try AudioFile(path: path)
        XCTAssertEqual(try file.fileType, .mpegTS)
        XCTAssertEqual(try file.dataFormat.formatID, .mpegLayer2)
        let golden = g["packets"] as! [[Any]]
        XCTAssertEqual(try file.properties.packetTable?.map { Int($0.dataByteSize) }, golden.map { ($0[2] as! NSNumber).intValue })
        let pts = try XCTUnwrap(try file.properties.packetTimestamps)
        for (k, p) in golden.enumerated() {
            if let t = p[0] as? NSNumber { XCTAssertEqual(Double(pts[k]) * 90000 / 44100, Double(t.intValue - 126000), accuracy: 2, "packet \(k)") }
        }
    }

    /// The magic: 188, 192 and 204-byte packets are recognised from their first bytes; other
    /// bytes that begin with 0x47 are not.
    func testProbe() throws {
        for name in ["aac.ts", "aac_m2ts.m2ts", "aac_204.ts"] {
            let bytes = try readWholeFile(MPEGTSKit.path(name))
            XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(FormatRegistry.longProbeSize))), .match(.mpegTS), name)
            XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(200))), .needMore, name)
        }
        var fake = [UInt8](repeating: 0, count: 2000)
        fake[0] = 0x47
        XCTAssertEqual(FormatRegistry.probe(fake), .noMatch)
        XCTAssertEqual(FormatRegistry.types(forExtension: "m2ts"), [.mpegTS])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "video/MP2T"), [.mpegTS])
        XCTAssertFalse(FormatRegistry.info(for: .mpegTS)!.usesFFmpeg)
    }

    /// Damaged input never crashes, on either path.
    func testDamagedInput() throws {
        for name in ["aac.ts", "opus.ts", "id3.ts", "aac_m2ts.m2ts"] {
            let bytes = try readWholeFile(MPEGTSKit.path(name))
            let (_, problems) = exerciseDamaged(bytes)
            XCTAssertEqual(problems, [], name)
        }
        // Random bytes with sync bytes at the stride.
        var g = SeededGenerator(seed: 3)
        var noise = (0..<188 * 40).map { _ in UInt8.random(in: 0...255, using: &g) }
        for i in stride(from: 0, to: noise.count, by: 188) { noise[i] = 0x47 }
        XCTAssertThrowsError(try AudioFile(source: MemorySource(noise), fileTypeHint: nil))
        _ = feed(noise, pattern: .randomChunks(seed: 2, maximum: 300))
    }
}

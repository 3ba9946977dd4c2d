import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

// MARK: - Helpers

/// Goldens, packet collection and small file surgery for the FLAC tests.
enum FLACKit {
    /// A fixture's golden (see Tests/Fixtures/flac/flac_golden.py).
    struct Golden {
        let raw: [String: Any]
        init?(fixture path: String) {
            let json = String(path.dropLast(".flac".count)) + ".json"
            guard let data = FileManager.default.contents(atPath: json),
                  let obj = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
            raw = obj
        }
        func int(_ key: String) -> Int { (raw[key] as! NSNumber).intValue }
        func ints(_ key: String) -> [Int] { (raw[key] as! [NSNumber]).map(\.intValue) }
        var streamInfo: [String: Any] { raw["streamInfo"] as! [String: Any] }
        func info(_ key: String) -> Int { (streamInfo[key] as! NSNumber).intValue }
        var streamInfoBytes: [UInt8] { hexBytes(raw["streamInfoHex"] as! String) }
        var tags: [(String, String)] { (raw["tags"] as? [[String]] ?? []).map { ($0[0], $0[1]) } }
        var pictures: [[String: Any]] { raw["pictures"] as? [[String: Any]] ?? [] }
        var seekTable: [[Int]] { (raw["seekTable"] as? [[NSNumber]] ?? []).map { $0.map(\.intValue) } }
        var cueSheet: [String: Any]? { raw["cueSheet"] as? [String: Any] }
        var isFixed: Bool { info("minimumBlockSize") == info("maximumBlockSize") }
    }


    static var fixtures: [String] { fixtureFiles("flac", extensions: ["flac"]) }

    static func name(_ path: String) -> String { String(path.split(separator: "/").last!) }

    /// What a reader gave for the packets.
    struct Packets: Equatable, CustomStringConvertible {
        var data: [UInt8] = []
        var sizes: [Int] = []
        var frames: [UInt32] = []
        var description: String { "\(sizes.count) packets, \(data.count) bytes" }
    }

    /// Every packet through AudioFile, a few at a time.
    static func filePackets(_ file: AudioFile, batch: Int = 7) throws -> Packets {
        var p = Packets()
        let total = try file.audioDataPacketCount
        var start: Int64 = 0
        while start < total {
            let (data, descriptions) = try file.readPacketData(startingAt: start, count: batch)
            let d = try XCTUnwrap(descriptions)
            // Packets are contiguous, except around a damaged frame that was left out.
            for x in d {
                p.data += data[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)]
                p.sizes.append(Int(x.dataByteSize))
                p.frames.append(x.variableFramesInPacket)
            }
            XCTAssertEqual(Int(d.last!.startOffset) + Int(d.last!.dataByteSize), data.count)
            start += Int64(d.count)
        }
        return p
    }

    static func streamPackets(_ r: StreamRecord) -> Packets {
        Packets(data: r.packetData, sizes: r.packetSizes, frames: r.packetFrames)
    }

    static func openError(_ bytes: [UInt8], hint: AudioFileTypeID? = .flac) -> AudioError? {
        do { _ = try AudioFile(source: MemorySource(bytes), fileTypeHint: hint); return nil } catch { return error }
    }

    /// Runs a tool; its exit status, standard output and standard error (nil when missing).
    static func run(_ tool: String, _ arguments: [String]) -> (status: Int32, out: String, err: String)? {
        guard let path = which(tool) else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = Foundation.FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    /// ffprobe's packet count, or nil when ffprobe does not accept the file (it complains,
    /// fails, or cannot count). Skips without ffprobe (fails on CI).
    static func ffprobeCount(_ path: String) throws -> Int? {
        _ = try requireTool("ffprobe")
        guard let r = run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-count_packets",
                                      "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path]),
              r.status == 0, r.err.isEmpty else { return nil }
        return Int(r.out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Drives a FLACParser by hand over bytes in chunks (so that the parser can be asked
    /// things the stream API does not reach, such as SEEKTABLE estimates).
    static func drive(_ parser: FLACParser, _ bytes: [UInt8], chunk: Int = 4096, until ready: Bool = true) throws {
        var offset = 0
        var have = 0
        while true {
            have = min(bytes.count, max(have, offset) + chunk)
            let end = have == bytes.count
            let step: ParseStep = try bytes.withBytes { raw throws(AudioError) in
                let view = UnsafeRawBufferPointer(rebasing: raw[offset..<have])
                return try parser.step(ParserInput(bytes: view, offset: Int64(offset), isEndOfStream: end, canSeek: false,
                                                   wantsPackets: true, sourceSize: nil))
            }
            switch step {
            case .consume(let n): offset += n
            case .packets(let n, _, _): offset += n
            case .ownedPackets: break
            case .seek(let to): offset = Int(to)
            case .needMore: if end { return }
            case .finished: return
            }
            if ready && parser.isReady { return }
        }
    }

    /// The FLAC type's own magic.
    static func magic(_ head: [UInt8], end: Bool = false) -> ProbeResult {
        FormatRegistry.info(for: .flac)!.magic!(head, end)
    }

    /// Apple's names for the tags the fixtures use.
    static let appleKeys = ["TITLE": "title", "ARTIST": "artist", "ALBUM": "album", "DATE": "year",
                            "TRACKNUMBER": "track number", "COMMENT": "comments"]
}

// MARK: - Fixtures

final class FLACTests: XCTestCase {
    typealias Kit = FLACKit

    func testFixturesExist() {
        XCTAssertGreaterThanOrEqual(Kit.fixtures.count, 16, "run Tests/Fixtures/make-flac.sh")
    }

    /// Every fixture through AudioFile: type, format, counts, every packet's size and
    /// offset as ffprobe gave them, STREAMINFO's total, the cookie, tags and picture.
    func testEveryFixtureAgainstItsGolden() throws {
        for path in Kit.fixtures {
            let name = Kit.name(path)
            let g = try XCTUnwrap(Kit.Golden(fixture: path), name)
            let file = try AudioFile(path: path)
            let p = try file.properties
            XCTAssertEqual(p.fileType, .flac, name)
            let f = try file.dataFormat
            XCTAssertEqual(f.formatID, .flac, name)
            XCTAssertEqual(f.sampleRate, Double(g.int("sampleRate")), name)
            XCTAssertEqual(Int(f.channelsPerFrame), g.int("channels"), name)
            XCTAssertEqual(Int(f.bitsPerChannel), g.int("bitsPerSample"), name)
            let flags: [Int: UInt32] = [16: 1, 20: 2, 24: 3, 32: 4]
            XCTAssertEqual(f.formatFlags.rawValue, flags[g.int("bitsPerSample")] ?? 0, name)
            XCTAssertEqual(f.bytesPerPacket, 0, name)
            XCTAssertEqual(Int(f.framesPerPacket), g.isFixed ? g.info("maximumBlockSize") : 0, name)
            XCTAssertEqual(p.sourceBitDepth, Int32(g.int("bitsPerSample")), name)

            // Packets: count, sizes, offsets, frames.
            XCTAssertEqual(try file.audioDataPacketCount, Int64(g.int("packets")), name)
            XCTAssertEqual(try file.dataOffset, Int64(g.int("dataOffset")), name)
            XCTAssertEqual(try file.dataOffset, Int64(g.ints("packetOffsets")[0]), name)
            let table = try XCTUnwrap(p.packetTable, name)
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, g.ints("packetSizes"), name)
            XCTAssertEqual(table.map { Int($0.startOffset) + g.int("dataOffset") }, g.ints("packetOffsets"), name)
            let frames = g.ints("frameSamples")
            XCTAssertEqual(table.map { Int($0.variableFramesInPacket) }, g.isFixed ? frames.map { _ in 0 } : frames, name)
            XCTAssertEqual(try file.audioDataByteCount, Int64(g.int("fileSize") - g.int("dataOffset")), name)
            XCTAssertEqual(try file.maximumPacketSize, UInt32(g.ints("packetSizes").max()!), name)

            // Valid frames: STREAMINFO's total, or what the frames hold where it is 0.
            let total = g.int("totalSamples") > 0 ? g.int("totalSamples") : frames.reduce(0, +)
            XCTAssertEqual(frames.reduce(0, +), total, name)
            let pti = try XCTUnwrap(try file.packetTableInfo, name)
            XCTAssertEqual(pti.numberValidFrames, Int64(total), name)
            XCTAssertEqual(pti.primingFrames, 0, name)
            let inPackets = g.isFixed ? frames.count * g.info("maximumBlockSize") : total
            XCTAssertEqual(Int(pti.remainderFrames), inPackets - total, name)
            XCTAssertEqual(p.totalFrames, Int64(inPackets), name)
            XCTAssertEqual(try file.estimatedDuration, Double(total) / Double(g.int("sampleRate")), accuracy: 1e-9, name)

            // The cookie: a dfLa body, version and flags 0, then STREAMINFO as the last block.
            XCTAssertEqual(try file.magicCookie, [0, 0, 0, 0, 0x80, 0, 0, 34] + g.streamInfoBytes, name)

            // Tags, picture, layout.
            var info = InfoDictionary()
            for (k, v) in g.tags where k != "WAVEFORMATEXTENSIBLE_CHANNEL_MASK" {
                info[Kit.appleKeys[k] ?? k.lowercased()] = v
            }
            XCTAssertEqual(try file.infoDictionary, info, name)
            if let picture = g.pictures.first {
                XCTAssertEqual(try file.property(.albumArtwork).data(), hexBytes(picture["hex"] as! String), name)
            } else {
                XCTAssertThrowsError(try file.property(.albumArtwork), name)
            }
            if let layout = g.raw["channelLayout"] as? String {
                let expected = ["mono": "Mono (M)", "stereo": "Stereo (L R)", "5.1": "MPEG 5.1 A (L R C LFE Ls Rs)"][layout]
                XCTAssertEqual(p.channelLayout?.description, expected, name)
            }
        }
    }

    /// The push path gives the same packets as AudioFile, bytes included, and the same format.
    func testStreamAndFileGiveTheSamePackets() throws {
        for path in Kit.fixtures {
            let name = Kit.name(path)
            let g = try XCTUnwrap(Kit.Golden(fixture: path))
            let bytes = try readWholeFile(path)
            let file = try AudioFile(path: path)
            let fromFile = try Kit.filePackets(file)
            let r = feed(bytes, pattern: .randomChunks(seed: 11, maximum: 3000))
            XCTAssertNil(r.error, name)
            XCTAssertEqual(Kit.streamPackets(r), fromFile, name)
            XCTAssertEqual(fromFile.data, Array(bytes[g.int("dataOffset")...]), name)
            XCTAssertEqual(r.dataFormat, try file.dataFormat, name)
            XCTAssertEqual(r.dataOffset, try file.dataOffset, name)
            XCTAssertEqual(r.info, try file.infoDictionary, name)
            // A stream does not count ahead, as Apple's FLAC parser does not.
            XCTAssertNil(r.audioDataPacketCount, name)
            XCTAssertNil(r.audioDataByteCount, name)
        }
    }

    func testDripFeedEquality() throws {
        for path in Kit.fixtures {
            let bytes = try readWholeFile(path)
            // One byte at a time only where it is quick.
            var patterns: [FeedPattern] = bytes.count <= 20_000 ? FeedPattern.standard
                : [.allAtOnce, .randomChunks(seed: 1, maximum: 300), .randomChunks(seed: 2, maximum: 1000),
                   .randomChunks(seed: 3, maximum: 65536)]
            if Kit.name(path) == "flac_id3v2.flac" {
                // Until the probe lets an earlier type's "need more" hold back a later match,
                // MPEG claims the ID3 tag when it arrives in pieces smaller than the tag and the
                // marker: here the first chunk holds both (patterns whose first chunk is large).
                patterns = [.allAtOnce, .randomChunks(seed: 2, maximum: 1000), .randomChunks(seed: 3, maximum: 65536)]
            }
            XCTAssertNil(dripFeedMismatch(bytes, patterns: patterns), Kit.name(path))
        }
    }

    /// Apple's FLAC order (MagicCookieData, InfoDictionary, DataOffset, MaximumPacketSize)
    /// with the others around it, then 'redy'.
    func testAnnouncementOrder() throws {
        let dir = fixturesDirectory + "/flac/"
        let tagged = feed(try readWholeFile(dir + "flac_tags_picture.flac"), pattern: .allAtOnce)
        XCTAssertEqual(tagged.notifications, [.magicCookieData, .infoDictionary, .packetTableInfo, .fileFormat, .dataFormat,
                                              .channelLayout, .dataOffset, .maximumPacketSize, .readyToProducePackets])
        // No tags (ffmpeg's comment block holds only its vendor string), no total: no 'info'
        // or 'pnfo' up front; the frames give 'pnfo' at the end.
        let piped = feed(try readWholeFile(dir + "ffmpeg_piped.flac"), pattern: .allAtOnce)
        XCTAssertEqual(piped.notifications, [.magicCookieData, .fileFormat, .dataFormat, .channelLayout,
                                             .dataOffset, .maximumPacketSize, .readyToProducePackets, .packetTableInfo])
        XCTAssertEqual(piped.info, InfoDictionary())
    }

    /// The stream's 'pnfo' is STREAMINFO's promise, and the end of the stream corrects it.
    func testStreamPacketTableInfo() throws {
        let dir = fixturesDirectory + "/flac/"
        var info: [PacketTableInfo] = []
        let stream = AudioFileStream(propertyListener: { s, id, _ in
            if id == .packetTableInfo, let t = try? s.packetTableInfo { info.append(t) }
        }, packets: { _, _, _, _ in })
        try stream.parse(try readWholeFile(dir + "flac_b1152.flac"))
        try stream.parse(nil)
        // 11026 samples in 10 packets of 1152: 494 remainder frames.
        XCTAssertEqual(info, [PacketTableInfo(numberValidFrames: 11026, remainderFrames: 494)])

        info = []
        let piped = AudioFileStream(propertyListener: { s, id, _ in
            if id == .packetTableInfo, let t = try? s.packetTableInfo { info.append(t) }
        }, packets: { _, _, _, _ in })
        try piped.parse(try readWholeFile(dir + "ffmpeg_piped.flac"))
        XCTAssertEqual(info, [])
        try piped.parse(nil)
        XCTAssertEqual(info, [PacketTableInfo(numberValidFrames: 11026, remainderFrames: 5 * 2304 - 11026)])
    }

    // MARK: Seeking

    /// AudioFile's packet offsets are exact from the scanned table, and reading from any
    /// packet gives its bytes.
    func testSeekOffsetsEqualTheTable() throws {
        for path in Kit.fixtures {
            let name = Kit.name(path)
            let g = try XCTUnwrap(Kit.Golden(fixture: path))
            let bytes = try readWholeFile(path)
            let file = try AudioFile(path: path)
            let offsets = g.ints("packetOffsets"), sizes = g.ints("packetSizes")
            for k in [0, 1, offsets.count / 2, offsets.count - 1] {
                let (data, d) = try file.readPacketData(startingAt: Int64(k), count: 1)
                XCTAssertEqual(data, Array(bytes[offsets[k]..<offsets[k] + sizes[k]]), "\(name) packet \(k)")
                XCTAssertEqual(d?.first?.dataByteSize, UInt32(sizes[k]))
            }
            XCTAssertThrowsError(try file.readPacketData(startingAt: Int64(offsets.count), count: 1)) {
                XCTAssertEqual(($0 as? AudioError)?.code, .endOfFile)
            }
        }
    }

    /// A stream's offsets come from the SEEKTABLE: exact where a seek point starts the
    /// packet, estimated between points and after the last.
    /// A SEEKTABLE with absurd offsets gives absurd estimates, never a trap (found by fuzzing).
    func testHostileSeekTableOffsets() throws {
        var bytes = try readWholeFile(fixturesDirectory + "/flac/flac_seektable.flac")
        // Walk the metadata blocks to the SEEKTABLE (type 3) and give every point a huge offset.
        var at = 4
        while at + 4 <= bytes.count {
            let type = bytes[at] & 0x7F, last = bytes[at] & 0x80 != 0
            let length = Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            if type == 3 {
                for p in stride(from: at + 4, to: at + 4 + length, by: 18) where bytes[p] != 0xFF {
                    for k in 8..<16 { bytes[p + k] = 0xFF }
                    bytes[p + 8] = 0x7F
                }
            }
            at += 4 + length
            if last { break }
        }
        let parser = FLACParser()
        try Kit.drive(parser, bytes)
        XCTAssertGreaterThan(parser.seekTable.count, 0)
        for packet in [Int64(0), 3, 9] {
            if let r = try? parser.byteOffset(ofPacket: packet) { XCTAssertGreaterThanOrEqual(r.offset, 0) }
        }
        for frame in [Int64(0), 44100, Int64.max / 4] {
            _ = try? parser.byteOffset(ofFrame: frame, fetch: nil, sourceSize: nil)
        }
    }

    func testStreamSeekTableEstimates() throws {
        let path = fixturesDirectory + "/flac/flac_seektable.flac"
        let g = try XCTUnwrap(Kit.Golden(fixture: path))
        let bytes = try readWholeFile(path)
        let parser = FLACParser()
        try Kit.drive(parser, bytes)
        XCTAssertTrue(parser.isReady)
        XCTAssertEqual(parser.seekTable.count, 9, "the placeholder is left out")
        let offsets = g.ints("packetOffsets").map { $0 - g.int("dataOffset") }
        for k in 0..<9 {
            let r = try parser.byteOffset(ofPacket: Int64(k))
            XCTAssertEqual(r.offset, Int64(offsets[k]), "packet \(k)")
            XCTAssertFalse(r.isEstimated, "packet \(k)")
        }
        let last = try parser.byteOffset(ofPacket: 9)
        XCTAssertTrue(last.isEstimated)
        XCTAssertEqual(Double(last.offset), Double(offsets[9]), accuracy: 600)
        XCTAssertThrowsError(try parser.byteOffset(ofPacket: 10)) { XCTAssertEqual(($0 as? AudioError)?.code, .invalidPacketOffset) }
        // Without a SEEKTABLE a stream estimates from STREAMINFO's frame sizes.
        let plain = FLACParser()
        try Kit.drive(plain, try readWholeFile(fixturesDirectory + "/flac/flac_variable.flac"))
        XCTAssertTrue(try plain.byteOffset(ofPacket: 3).isEstimated)
    }

    /// AudioFileStream's seek reaches the SEEKTABLE: exact at a seek point, estimated and
    /// flagged past the last one; either way the stream goes on from the next whole frame.
    func testStreamSeeksWithTheSeekTable() throws {
        let path = fixturesDirectory + "/flac/flac_seektable.flac"
        let g = try XCTUnwrap(Kit.Golden(fixture: path))
        let bytes = try readWholeFile(path)
        let dataOffset = g.int("dataOffset"), offsets = g.ints("packetOffsets"), sizes = g.ints("packetSizes")
        for (packet, exact) in [(5, true), (0, true), (8, true), (9, false)] {
            var got: [Int] = []
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, d in
                got += d!.map { Int($0.dataByteSize) }
            })
            try stream.parse(Array(bytes[..<(dataOffset + 100)]))
            let (offset, flags) = try stream.seek(toPacket: Int64(packet))
            XCTAssertEqual(flags.contains(.offsetIsEstimated), !exact, "packet \(packet)")
            if exact { XCTAssertEqual(Int(offset), offsets[packet] - dataOffset, "packet \(packet)") }
            XCTAssertEqual(try stream.byte(forPacket: Int64(packet)).byte, offset)
            got = []
            try stream.parse(Array(bytes[(dataOffset + Int(offset))...]), flags: .discontinuity)
            try stream.parse(nil)
            let first = offsets.firstIndex { $0 >= dataOffset + Int(offset) } ?? offsets.count
            XCTAssertEqual(got, Array(sizes[first...]), "packet \(packet)")
            if exact { XCTAssertEqual(first, packet) }
        }
    }

    /// After a discontinuity the stream looks for the next frame header: the frame cut by
    /// the gap is lost, every later one arrives whole.
    func testDiscontinuityResynchronises() throws {
        let path = fixturesDirectory + "/flac/flac_b576.flac"
        let g = try XCTUnwrap(Kit.Golden(fixture: path))
        let bytes = try readWholeFile(path)
        let offsets = g.ints("packetOffsets"), sizes = g.ints("packetSizes")
        for cut in [offsets[5] + 17, offsets[5], offsets[12] + 1, offsets[19] + 3] {
            var got: [Int] = []
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, d in
                got += d!.map { Int($0.dataByteSize) }
            })
            try stream.parse(Array(bytes[..<cut]))
            let before = got.count
            try stream.parse(Array(bytes[cut...]), flags: .discontinuity)
            try stream.parse(nil)
            let resumeAt = offsets.firstIndex { $0 >= cut } ?? offsets.count
            XCTAssertEqual(Array(got[before...]), Array(sizes[resumeAt...]), "cut at \(cut)")
        }
    }

    // MARK: Metadata

    func testPictureTagsCueSheetAndLayout() throws {
        let dir = fixturesDirectory + "/flac/"
        let tagged = try AudioFile(path: dir + "flac_tags_picture.flac")
        XCTAssertEqual(try tagged.infoDictionary[InfoDictionary.title], "Tonearm Test Tone")
        XCTAssertEqual(try tagged.infoDictionary[InfoDictionary.trackNumber], "7")
        XCTAssertEqual(try tagged.infoDictionary[InfoDictionary.year], "2024")
        let png = try tagged.property(.albumArtwork).data()
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertEqual(png.count, 75)

        let cue = try AudioFile(path: dir + "flac_cuesheet.flac")
        let p = try cue.properties
        // Track 2: offset 8820 (index 00), index 01 at +2940.
        XCTAssertEqual(p.chapters, [Chapter(start: 0, title: "Track 01"), Chapter(start: 11760.0 / 44100, title: "Track 02")])
        XCTAssertEqual(p.markers, [AudioFileMarker(framePosition: 0, name: "Track 01", markerID: 1),
                                   AudioFileMarker(framePosition: 8820, name: "Track 02 index 00", markerID: 2),
                                   AudioFileMarker(framePosition: 11760, name: "Track 02", markerID: 2)])

        let six = try AudioFile(path: dir + "flac_5.1.flac")
        XCTAssertEqual(try six.channelLayout, ChannelLayout(waveChannelMask: 0x3F))
        XCTAssertNil(try six.infoDictionary["waveformatextensible_channel_mask"])
        let id3 = try AudioFile(path: dir + "flac_id3v2.flac")
        XCTAssertEqual(Array(try id3.property(.id3Tag).data().prefix(3)), Array("ID3".utf8))
    }

    func testRegistryAndProbe() throws {
        let info = try XCTUnwrap(FormatRegistry.info(for: .flac))
        XCTAssertEqual(info.name, "FLAC")
        XCTAssertEqual(info.extensions, ["flac"])
        XCTAssertEqual(info.mimeTypes, ["audio/flac", "audio/x-flac"])
        XCTAssertEqual(info.utis, ["org.xiph.flac"])
        XCTAssertEqual(FormatRegistry.types(forExtension: "flac"), [.flac])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/x-flac"), [.flac])
        let bytes = try readWholeFile(fixturesDirectory + "/flac/flac_b1152.flac")
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .match(.flac))
        // ID3 then fLaC within the probe's bytes is FLAC; ID3 alone is not claimed.
        let small: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0, count: 10) + Array(bytes.prefix(40))
        XCTAssertEqual(FormatRegistry.probe(small), .match(.flac))
        let id3 = try readWholeFile(fixturesDirectory + "/flac/flac_id3v2.flac")
        XCTAssertEqual(FormatRegistry.probe(Array(id3.prefix(64))), .match(.flac))
        XCTAssertEqual(feed(id3, pattern: .allAtOnce).packetSizes.count, 10)
        XCTAssertEqual(try AudioFile(path: fixturesDirectory + "/flac/flac_id3v2.flac").audioDataPacketCount, 10)
        // An ID3 tag whose end lies past the probe's bytes is not claimed, nor is a tag alone,
        // nor anything else.
        var big = Array(id3.prefix(10))
        big[9] = 100
        XCTAssertEqual(FLACKit.magic(big + [UInt8](repeating: 0, count: 100) + Array(bytes.prefix(40))), .noMatch)
        XCTAssertEqual(FLACKit.magic(Array(id3.prefix(10))), .needMore)
        XCTAssertEqual(FLACKit.magic(Array(id3.prefix(40)), end: true), .noMatch)
        XCTAssertEqual(FLACKit.magic(Array("fLa".utf8)), .needMore)
        XCTAssertEqual(FLACKit.magic(Array("fLa".utf8), end: true), .noMatch)
        XCTAssertEqual(FLACKit.magic(Array("RIFF".utf8) + [UInt8](repeating: 0, count: 60)), .noMatch)
        // Bare frames: a whole header with its CRC-8 and a valid subframe header after it.
        let g = try XCTUnwrap(FLACKit.Golden(fixture: fixturesDirectory + "/flac/flac_b1152.flac"))
        let frames = Array(bytes[g.int("dataOffset")...].prefix(64))
        XCTAssertEqual(FormatRegistry.probe(frames), .match(.flac))
        XCTAssertEqual(FLACKit.magic(Array(frames.prefix(5))), .needMore)
        var bad = frames
        bad[4] ^= 1  // the frame number, so the CRC-8 fails
        XCTAssertEqual(FLACKit.magic(bad), .noMatch)
        bad = frames
        bad[2] &= 0xF0  // the rate left to STREAMINFO, which a bare stream lacks (CRC-8 fixed up)
        bad[5] = bad.withUnsafeBytes { FLACCRC.crc8($0.baseAddress!, count: 5) }
        XCTAssertEqual(FLACKit.magic(bad), .noMatch)
        // An MPEG-4 ADTS header (0xFFF1) is not FLAC's.
        XCTAssertEqual(FLACKit.magic([0xFF, 0xF1, 0x50, 0x80, 0x2E, 0x7F, 0xFC] + [UInt8](repeating: 0, count: 57)), .noMatch)
    }

    // MARK: Frame headers and CRCs

    func testCRCsAgainstTheirCheckValues() {
        let text = Array("123456789".utf8)
        text.withUnsafeBytes { raw in
            XCTAssertEqual(FLACCRC.crc8(raw.baseAddress!, count: 9), 0xF4)  // CRC-8/SMBUS
            XCTAssertEqual(FLACCRC.crc16(0, raw.baseAddress!, count: 9), 0xFEE8)  // CRC-16/UMTS
        }
        // The three-lane path against byte-by-byte, for every length around its edges.
        var g = SeededGenerator(seed: 3)
        let data = (0..<5000).map { _ in UInt8(truncatingIfNeeded: g.next()) }
        func reference(_ n: Int) -> UInt16 {
            var c: UInt16 = 0
            for b in data[..<n] {
                c ^= UInt16(b) << 8
                for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
            }
            return c
        }
        data.withUnsafeBytes { raw in
            for n in [0, 1, 7, 8, 9, 383, 384, 385, 767, 768, 1000, 4999, 5000] {
                XCTAssertEqual(FLACCRC.crc16(0, raw.baseAddress!, count: n), reference(n), "\(n) bytes")
            }
            // Continuing from a CRC is the same as running over both parts.
            let a = FLACCRC.crc16(0, raw.baseAddress!, count: 1234)
            XCTAssertEqual(FLACCRC.crc16(a, raw.baseAddress! + 1234, count: 3766), reference(5000))
        }
    }

    /// The two sync searches (vectors in release builds, words in debug builds) agree.
    func testSyncSearchesAgree() {
        var g = SeededGenerator(seed: 21)
        // Random bytes rich in 0xFF, 0xF8 and 0xF9, so that every case comes up.
        let data: [UInt8] = (0..<3000).map { _ in
            let r = g.next()
            switch r % 8 { case 0, 1: return 0xFF; case 2: return 0xF8; case 3: return 0xF9; default: return UInt8(truncatingIfNeeded: r >> 8) }
        }
        data.withUnsafeBytes { raw in
            let p = raw.baseAddress!
            for (from, to, count) in [(0, 3000, 3000), (5, 2990, 3000), (0, 17, 17), (0, 16, 17), (3, 40, 40), (0, 2999, 2999), (7, 7, 30)] {
                var i = from
                var a: [Int] = [], b: [Int] = []
                while i < to { i = FLACFrameScanner.findSyncWords(p, from: i, to: to, count: count); a.append(i); i += 1 }
                i = from
                while i < to { i = FLACFrameScanner.findSyncVectors(p, from: i, to: to, count: count); b.append(i); i += 1 }
                XCTAssertEqual(a, b, "\(from)..<\(to) of \(count)")
                XCTAssertFalse(a.isEmpty && from < to)
            }
        }
        // A 0xFF as the very last byte is a candidate (its partner is yet to come).
        [UInt8](repeating: 0, count: 20).withUnsafeBytes { raw in
            var b = Array(raw)
            b[19] = 0xFF
            b.withUnsafeBytes { r in
                XCTAssertEqual(FLACFrameScanner.findSyncWords(r.baseAddress!, from: 0, to: 20, count: 20), 19)
                XCTAssertEqual(FLACFrameScanner.findSyncVectors(r.baseAddress!, from: 0, to: 20, count: 20), 19)
            }
        }
    }

    /// Builds a header from its fields and CRC-8.
    static func header(_ fields: [UInt8]) -> [UInt8] {
        fields + [fields.withUnsafeBytes { FLACCRC.crc8($0.baseAddress!, count: fields.count) }]
    }

    func testFrameHeaderFields() {
        func parse(_ b: [UInt8]) -> FLACFrameHeader.Parse { b.withUnsafeBytes { FLACFrameHeader.parse($0.baseAddress!, count: b.count) } }
        func header(_ b: [UInt8]) -> FLACFrameHeader? { if case .header(let h) = parse(b) { return h }; return nil }
        // Fixed, 4096 (code 12), 44.1 kHz (9), stereo mid/side (10), 16-bit (4), frame 0.
        let h = header(FLACTests.header([0xFF, 0xF8, 0xC9, 0xA8, 0x00]))
        XCTAssertEqual(h, FLACFrameHeader(isVariableBlockSize: false, blockSize: 4096, sampleRate: 44100, channelAssignment: 10,
                                          bitsPerSample: 16, number: 0, length: 6))
        XCTAssertEqual(h?.channels, 2)
        // Variable, an 8-bit block size (code 6: 0x2F + 1), rate in kHz (12: 22 kHz), 5 channels, 24-bit,
        // sample number 0x12345 (3 bytes: 0xF0 0x92 0x8D 0x85).
        let v = header(FLACTests.header([0xFF, 0xF9, 0x6C, 0x4C, 0xF0, 0x92, 0x8D, 0x85, 0x2F, 0x16]))
        XCTAssertEqual(v, FLACFrameHeader(isVariableBlockSize: true, blockSize: 48, sampleRate: 22000, channelAssignment: 4,
                                          bitsPerSample: 24, number: 0x12345, length: 11))
        // 16-bit block size (7), rate in Hz (13) and in tens of Hz (14); a 36-bit sample number.
        let big = header(FLACTests.header([0xFF, 0xF9, 0x7D, 0x02, 0xFE, 0xBF, 0xBF, 0xBF, 0xBF, 0xBF, 0xBF, 0xFF, 0xFF, 0xAC, 0x44]))
        XCTAssertEqual(big?.blockSize, 65536)
        XCTAssertEqual(big?.number, 0xF_FFFF_FFFF)
        XCTAssertEqual(big?.sampleRate, 44100)
        XCTAssertEqual(big?.bitsPerSample, 8)
        XCTAssertEqual(header(FLACTests.header([0xFF, 0xF8, 0x1D, 0x02, 0x05, 0xAC, 0x44]))?.sampleRate, 44100)
        XCTAssertEqual(header(FLACTests.header([0xFF, 0xF8, 0x1E, 0x02, 0x05, 0x12, 0xC0]))?.sampleRate, 48000)
        XCTAssertEqual(header(FLACTests.header([0xFF, 0xF8, 0x10, 0x00, 0x05]))?.sampleRate, 0, "from STREAMINFO")
        // Invalid: a wrong CRC-8, reserved codes and bits, a 7-byte number in a fixed stream.
        var bad = FLACTests.header([0xFF, 0xF8, 0xC9, 0xA8, 0x00])
        bad[5] ^= 1
        XCTAssertEqual(parse(bad), .invalid)
        for fields: [UInt8] in [[0xFF, 0xFA, 0xC9, 0xA8, 0x00], [0xFF, 0xF8, 0x09, 0xA8, 0x00], [0xFF, 0xF8, 0xCF, 0xA8, 0x00],
                                [0xFF, 0xF8, 0xC9, 0xB8, 0x00], [0xFF, 0xF8, 0xC9, 0xA6, 0x00], [0xFF, 0xF8, 0xC9, 0xA9, 0x00],
                                [0xFF, 0xF8, 0xC9, 0xA8, 0x80], [0xFF, 0xF8, 0xC9, 0xA8, 0xFE, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
                                [0xFF, 0xF8, 0xCC, 0xA8, 0x00, 0x00], [0xFF, 0xF8, 0xC9, 0xA8, 0xC2, 0x02]] {
            XCTAssertEqual(parse(FLACTests.header(fields)), .invalid, "\(fields)")
        }
        // Too short to tell.
        XCTAssertEqual(parse([0xFF, 0xF8, 0xC9]), .needMore)
        XCTAssertEqual(parse([0xFF, 0xF8, 0x6C, 0x4C, 0xF0, 0x92]), .needMore)
        XCTAssertEqual(parse([0xFE]), .invalid)
    }

    // MARK: Streams without the marker, junk, damage

    /// Frames alone (a multicast capture), with or without junk in front: read from the
    /// first confirmed frame, with the format from its header.
    func testBareFramesAndJunk() throws {
        let path = fixturesDirectory + "/flac/flac_b1152.flac"
        let g = try XCTUnwrap(Kit.Golden(fixture: path))
        let bytes = try readWholeFile(path)
        let frames = Array(bytes[g.int("dataOffset")...])
        // Junk, with a sync code whose CRC-8 is wrong in it. (Junk that itself began with
        // 0xFFF8 would look like ADTS to the probe.)
        var junk: [UInt8] = Array("not a frame".utf8)
        var gen = SeededGenerator(seed: 9)
        junk += (0..<300).map { _ in UInt8(truncatingIfNeeded: gen.next()) }
        junk += [0xFF, 0xF8, 0x69, 0x08, 0x00, 0x00]
        junk += (0..<400).map { _ in UInt8(truncatingIfNeeded: gen.next()) }
        for (label, data) in [("bare", frames), ("junk", junk + frames)] {
            let file = try AudioFile(source: MemorySource(data, pathExtension: "flac"))
            XCTAssertEqual(try file.audioDataPacketCount, 10, label)
            XCTAssertEqual(try file.dataOffset, Int64(data.count - frames.count), label)
            XCTAssertEqual(try file.dataFormat.sampleRate, 22050, label)
            XCTAssertEqual(try file.dataFormat.channelsPerFrame, 2, label)
            XCTAssertEqual(try file.dataFormat.framesPerPacket, 0, "block sizes unknown: per-packet counts")
            XCTAssertEqual(try file.packetTableInfo?.numberValidFrames, 11026, label)
            let fromFile = try Kit.filePackets(file)
            XCTAssertEqual(fromFile.sizes, g.ints("packetSizes"), label)
            XCTAssertEqual(fromFile.frames.map(Int.init), g.ints("frameSamples"), label)
            let r = feed(data, pattern: .randomChunks(seed: 4, maximum: 999), hint: .flac)
            XCTAssertNil(r.error, label)
            XCTAssertEqual(Kit.streamPackets(r), fromFile, label)
            XCTAssertNil(dripFeedMismatch(data, hint: .flac, patterns: [.allAtOnce, .randomChunks(seed: 5, maximum: 64)]), label)
        }
        // No frame at all.
        XCTAssertEqual(Kit.openError(junk)?.code, .invalidFile)
        XCTAssertEqual(feed(junk, pattern: .allAtOnce, hint: .flac).error?.code, .invalidFile)
    }

    /// A tag after the last frame is not part of it; a last frame cut short is dropped; a
    /// damaged frame in the middle is dropped and the stream resynchronises after it.
    func testTrailingTagsTruncationAndDamage() throws {
        let path = fixturesDirectory + "/flac/flac_b1152.flac"
        let g = try XCTUnwrap(Kit.Golden(fixture: path))
        let bytes = try readWholeFile(path)
        let sizes = g.ints("packetSizes"), offsets = g.ints("packetOffsets")
        func check(_ data: [UInt8], _ expected: [Int], _ label: String) throws {
            let file = try AudioFile(source: MemorySource(data))
            XCTAssertEqual(try Kit.filePackets(file).sizes, expected, label)
            let r = feed(data, pattern: .randomChunks(seed: 6, maximum: 2000))
            XCTAssertNil(r.error, label)
            XCTAssertEqual(r.packetSizes, expected, label)
        }
        var v1 = Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125)
        try check(bytes + v1, sizes, "ID3v1 after the frames")
        v1 = Array("APETAGEX".utf8) + [UInt8](repeating: 0, count: 24)
        try check(bytes + v1, sizes, "APEv2 footer after the frames")
        try check(bytes + [UInt8](repeating: 0, count: 300), sizes, "zero padding")
        try check(Array(bytes.dropLast(10)), Array(sizes.dropLast()), "cut inside the last frame")
        var damaged = bytes
        damaged[offsets[4] + 200] ^= 0x10
        var expected = sizes
        expected.remove(at: 4)
        try check(damaged, expected, "a bit flipped inside frame 4")
        let file = try AudioFile(source: MemorySource(damaged))
        XCTAssertEqual(try file.properties.packetTable?[4].startOffset, Int64(offsets[5] - offsets[0]), "packet 4 is frame 5")
    }

    func testDamagedVariantsGiveAudioErrors() throws {
        for name in ["flac_mono_8k.flac", "flac_variable.flac", "flac_tags_picture.flac"] {
            let bytes = try readWholeFile(fixturesDirectory + "/flac/" + name)
            let (errors, problems) = exerciseDamaged(bytes)
            XCTAssertEqual(problems, [], name)
            XCTAssertFalse(errors.isEmpty, name)
            for code in errors.keys {
                XCTAssertTrue([.invalidFile, .unsupportedFileType, .unsupportedDataFormat, .invalidChunk].contains(code), "\(name): \(code)")
            }
        }
    }

    func testMalformedMetadata() throws {
        let bytes = try readWholeFile(fixturesDirectory + "/flac/flac_b1152.flac")
        func errorMessage(_ b: [UInt8]) -> (AudioError.Code?, String) {
            let e = Kit.openError(b)
            let s = feed(b, pattern: .allAtOnce, hint: .flac).error
            XCTAssertEqual(e?.code, s?.code)
            return (e?.code, e?.message ?? "")
        }
        var b = bytes
        b[4] = 0x84  // the first block is a VORBIS_COMMENT
        XCTAssertEqual(errorMessage(b).0, .invalidFile)
        XCTAssertTrue(errorMessage(b).1.contains("STREAMINFO"))
        b = bytes
        b[4 + 4 + 2] = 0; b[4 + 4 + 3] = 8  // maximum block size 8
        XCTAssertEqual(errorMessage(b).0, .invalidFile)
        b = bytes
        b[4 + 4 + 10] = 0; b[4 + 4 + 11] = 0; b[4 + 4 + 12] &= 0x0F  // sample rate 0
        XCTAssertEqual(errorMessage(b).0, .unsupportedDataFormat)
        b = bytes
        b[4 + 4 + 34] = 0x7F  // the next block has type 127
        XCTAssertEqual(errorMessage(b).0, .invalidFile)
        b = bytes
        b[4 + 4 + 34 + 1] = 0x7F  // a block far larger than the file
        XCTAssertEqual(errorMessage(b).0, .invalidFile)
        XCTAssertEqual(errorMessage(Array(bytes.prefix(30))).0, .invalidFile)
        XCTAssertEqual(errorMessage(Array(bytes.prefix(3))).0, .invalidFile)
    }
}

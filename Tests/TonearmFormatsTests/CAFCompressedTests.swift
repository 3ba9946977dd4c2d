import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

/// A compressed CAF fixture's golden (caf/NAME.json, written by make-caf.sh).
struct CAFCompressedGolden: Decodable {
    struct Chunk: Decodable { var id: String; var offset: Int; var size: Int }
    struct Desc: Decodable {
        var sampleRate: Double
        var formatID: String
        var formatFlags: UInt32
        var bytesPerPacket: UInt32
        var framesPerPacket: UInt32
        var channels: UInt32
        var bitsPerChannel: UInt32
    }
    struct Pakt: Decodable {
        var packets: Int64
        var validFrames: Int64
        var primingFrames: Int32
        var remainderFrames: Int32
        var sizes: [Int]
    }
    struct CAF: Decodable {
        var chunks: [Chunk]
        var desc: Desc
        var kuki: String?
        var pakt: Pakt?
        var dataOffset: Int64
        var dataSize: Int64
    }
    struct Expected: Decodable {
        var formatID: String
        var formatFlags: UInt32
        var sourceBitDepth: Int32?
    }
    var codec: String
    var sampleRate: Int
    var channels: UInt32
    var extradata: String
    var packets: Int
    var packetSizes: [Int]
    var packetPts: [Int64]
    var packetPos: [Int64]
    var caf: CAF
    /// The cookie as Tonearm gives it, in hex.
    var cookie: String?
    var remuxedFrom: String?
    var expected: Expected

    static func load(_ fixture: String) throws -> CAFCompressedGolden {
        let json = (fixture as NSString).deletingPathExtension + ".json"
        let data = try XCTUnwrap(FileManager.default.contents(atPath: json), "no golden \(json)")
        return try JSONDecoder().decode(CAFCompressedGolden.self, from: data)
    }

    var packetTableInfo: PacketTableInfo? {
        caf.pakt.map { PacketTableInfo(numberValidFrames: $0.validFrames, primingFrames: $0.primingFrames, remainderFrames: $0.remainderFrames) }
    }
}

/// The base-128 numbers of a 'pakt' entry, as CAF's writer writes them.
enum CAFWriterVarint {
    static func write(_ w: inout ByteWriter, _ value: UInt32) {
        var groups: [UInt8] = [UInt8(value & 0x7F)]
        var v = value >> 7
        while v > 0 { groups.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        w.write(groups.reversed())
    }
}

/// CAF's compressed payloads (issue 3): variable-size packets from 'pakt' with their priming and
/// remainder, and the 'kuki' of AAC, ALAC, FLAC and Opus, on committed fixtures from real encoders.
final class CAFCompressedTests: XCTestCase {
    typealias Kit = CAFW64Kit
    typealias Golden = CAFCompressedGolden


    /// The codec configuration ffprobe derives from a file (its hex dump of the extradata).
    static func ffprobeExtradata(_ path: String) -> [UInt8]? {
        guard let r = Kit.run("ffprobe", ["-v", "error", "-of", "json", "-show_streams", "-show_data", path]), r.status == 0,
              let json = (try? JSONSerialization.jsonObject(with: Data(r.output))) as? [String: Any],
              let stream = (json["streams"] as? [[String: Any]])?.first
        else { return nil }
        var hexDigits = ""
        for line in (stream["extradata"] as? String ?? "").split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            hexDigits += line[line.index(after: colon)...].prefix(41).filter { !$0.isWhitespace }
        }
        return hexBytes(hexDigits)
    }

    private var fixtures: [String] { fixtureFiles("caf", extensions: ["caf"]) }

    private func fixture(_ name: String) -> String { fixturesDirectory + "/caf/" + name }

    func testEveryCodecHasFixtures() {
        let names = fixtures.map { ($0 as NSString).lastPathComponent }
        XCTAssertEqual(names, [
            "ffmpeg_alac_16_mono.caf", "ffmpeg_alac_16_stereo.caf", "ffmpeg_alac_24_mono.caf", "ffmpeg_alac_24_stereo.caf",
            "ffmpeg_flac.caf", "ffmpeg_opus.caf", "remux_aac_mono.caf", "remux_aac_stereo.caf", "remux_flac.caf", "remux_opus.caf",
        ])
    }

    /// The same bytes with 'pakt' moved in front of 'data' (where ffmpeg puts it after), so a
    /// push stream can read them; the file as it is when 'pakt' already comes first.
    /// Damaged bytes (a chunk that claims more than the file holds) are given back as they are.
    static func streamable(_ bytes: [UInt8]) -> [UInt8] {
        var i = 8
        while i + 12 <= bytes.count {
            var size: Int64 = 0
            for k in 0..<8 { size = size << 8 | Int64(bytes[i + 4 + k]) }
            if size < 0 && bytes[i..<i + 4].elementsEqual("data".utf8) { break }
            guard size >= 0, size <= Int64(bytes.count - i - 12) else { return bytes }
            i += 12 + Int(size)
        }
        let chunks = Kit.cafChunks(bytes)
        let ids = chunks.map(\.id)
        guard let d = ids.firstIndex(of: "data"), let p = ids.firstIndex(of: "pakt"), p > d else { return bytes }
        var order = chunks.filter { $0.id != "pakt" }
        order.insert(chunks[p], at: order.firstIndex { $0.id == "data" }!)
        return Kit.caf(order.map { ($0.id, $0.body, Int64($0.body.count)) })
    }

    // MARK: AudioFile

    /// Every property against the golden: the format (with Apple's ALAC/FLAC flags), the
    /// cookie in Tonearm's form, PacketTableInfo, the packet table against ffprobe's packets,
    /// and each packet's bytes through readPacketData.
    func testFixturesThroughAudioFile() throws {
        for path in fixtures {
            let name = (path as NSString).lastPathComponent
            let g = try Golden.load(path)
            let bytes = try readWholeFile(path)
            let f = try AudioFile(path: path)
            XCTAssertEqual(try f.fileType, .caf, name)
            let format = try f.dataFormat
            XCTAssertEqual(format.formatID.fourCC.string, g.expected.formatID, name)
            XCTAssertEqual(format.sampleRate, Double(g.sampleRate), name)
            XCTAssertEqual(format.channelsPerFrame, g.channels, name)
            XCTAssertEqual(format.framesPerPacket, g.caf.desc.framesPerPacket, name)
            XCTAssertEqual(format.bytesPerPacket, 0, name)
            XCTAssertEqual(format.formatFlags.rawValue, g.expected.formatFlags, name)
            XCTAssertEqual(try f.properties.sourceBitDepth, g.expected.sourceBitDepth, name)
            XCTAssertEqual(try f.magicCookie, g.cookie.map(hexBytes), name)
            XCTAssertEqual(try f.packetTableInfo, g.packetTableInfo, name)
            XCTAssertEqual(try f.dataOffset, g.caf.dataOffset, name)
            XCTAssertEqual(try f.properties.isOptimized, g.caf.chunks.last?.id != "pakt", name)

            // The packet table is ffprobe's: count, sizes and positions.
            XCTAssertEqual(try f.audioDataPacketCount, Int64(g.packets), name)
            let table = try XCTUnwrap(try f.properties.packetTable, name)
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, g.packetSizes, name)
            XCTAssertEqual(table.map { g.caf.dataOffset + $0.startOffset }, g.packetPos, name)
            XCTAssertEqual(try f.maximumPacketSize, UInt32(g.packetSizes.max()!), name)
            // ffprobe's pts: packets of the desc's constant frame count.
            XCTAssertEqual(g.packetPts, g.packetSizes.indices.map { Int64($0) * Int64(g.caf.desc.framesPerPacket) }, name)
            for k in [0, 1, g.packets / 2, g.packets - 1] {
                XCTAssertEqual(try f.frame(forPacket: Int64(k)), Int64(k) * Int64(format.framesPerPacket), name)
            }

            // Each packet's bytes, a few packets at a time.
            let packets = try Kit.filePackets(f, batch: 2)
            XCTAssertEqual(packets.sizes, g.packetSizes, name)
            var expected: [UInt8] = []
            for (pos, size) in zip(g.packetPos, g.packetSizes) { expected += bytes[Int(pos)..<Int(pos) + size] }
            XCTAssertEqual(packets.data, expected, name)

            // Exact byte offsets from the table.
            var offset: Int64 = 0
            for k in 0..<g.packets {
                let (byte, estimated) = try f.byte(forPacket: Int64(k))
                XCTAssertEqual(byte, offset, "\(name) packet \(k)")
                XCTAssertFalse(estimated, name)
                offset += Int64(g.packetSizes[k])
            }
        }
    }

    /// What ffmpeg's CAF writer leaves out or gets wrong, and what the remuxed files carry.
    func testFixtureFacts() throws {
        // ALAC: ffmpeg's 48-byte old-form cookie becomes the 24-byte ALACSpecificConfig, whose
        // bit depth gives Apple's format flags.
        let alac = try AudioFile(path: fixture("ffmpeg_alac_24_stereo.caf"))
        let g = try Golden.load(fixture("ffmpeg_alac_24_stereo.caf"))
        XCTAssertEqual(g.caf.kuki.map(hexBytes)?.count, 48)
        XCTAssertEqual(try alac.magicCookie?.count, 24)
        XCTAssertEqual(try alac.magicCookie, Array(hexBytes(try XCTUnwrap(g.caf.kuki))[24..<48]))
        XCTAssertEqual(g.caf.desc.formatFlags, 0)
        XCTAssertEqual(try alac.dataFormat.formatFlags.rawValue, 3)  // kAppleLosslessFormatFlag_24BitSourceData
        XCTAssertEqual(try alac.channelLayout, ChannelLayout(tag: .stereo))
        XCTAssertEqual(try alac.properties.dataFormatName, "Apple Lossless")

        // AAC: the ES_Descriptor gives the AudioSpecificConfig ffprobe derives (the one ffmpeg
        // puts in its MP4s, with the explicit no-SBR sync extension), priming 1024.
        for name in ["remux_aac_stereo.caf", "remux_aac_mono.caf"] {
            let g = try Golden.load(fixture(name))
            let f = try AudioFile(path: fixture(name))
            XCTAssertEqual(try f.magicCookie, hexBytes(g.extradata), name)
            XCTAssertEqual(try f.magicCookie?.count, 5, name)
            XCTAssertEqual(try f.packetTableInfo?.primingFrames, 1024, name)
            XCTAssertEqual(try f.properties.formatList, nil, name)
            XCTAssertEqual(try f.properties.dataFormatName, "AAC", name)
        }
        // FLAC: the dfLa box gives the STREAMINFO ffprobe shows, behind version and block header.
        let flacGolden = try Golden.load(fixture("remux_flac.caf"))
        let flacCookie = try XCTUnwrap(try AudioFile(path: fixture("remux_flac.caf")).magicCookie)
        XCTAssertEqual(Array(flacCookie[..<8]), [0, 0, 0, 0, 0x80, 0, 0, 34])
        XCTAssertEqual(Array(flacCookie[8...]), hexBytes(flacGolden.extradata))
        // Opus: the OpusHead as is; its pre-skip is the priming.
        let opus = try AudioFile(path: fixture("remux_opus.caf"))
        let head = try XCTUnwrap(try opus.magicCookie)
        XCTAssertEqual(Array(head[..<8]), Array("OpusHead".utf8))
        XCTAssertEqual(try opus.packetTableInfo?.primingFrames, Int32(head[10]) | Int32(head[11]) << 8)
        // ffmpeg writes no cookie for FLAC and Opus, and ends its FLAC table with a 0-byte
        // entry that is no packet.
        for name in ["ffmpeg_flac.caf", "ffmpeg_opus.caf"] {
            XCTAssertNil(try AudioFile(path: fixture(name)).magicCookie, name)
        }
        let ffFLAC = try Golden.load(fixture("ffmpeg_flac.caf"))
        XCTAssertEqual(ffFLAC.caf.pakt?.sizes.last, 0)
        XCTAssertEqual(ffFLAC.caf.pakt.map { Int($0.packets) }, ffFLAC.packets + 1)
    }

    // MARK: AudioFileStream

    /// The push path gives the same packets (with descriptions), properties and cookie in
    /// every feed pattern, and seeks exactly; ffmpeg's own files (table after the data) fail
    /// with 'optm' in every pattern.
    func testFixturesThroughAudioFileStream() throws {
        for path in fixtures {
            let name = (path as NSString).lastPathComponent
            let g = try Golden.load(path)
            let original = try readWholeFile(path)
            if g.caf.chunks.last?.id == "pakt" {
                let r = feed(original, pattern: .allAtOnce)
                XCTAssertEqual(r.error?.code, .notOptimized, name)
                XCTAssertTrue(r.packetSizes.isEmpty, name)
                XCTAssertNil(dripFeedMismatch(original), name)
            }
            let bytes = Self.streamable(original)
            let file = try AudioFile(source: MemorySource(bytes))
            let fromFile = try Kit.filePackets(file)

            let records = dripFeedRecords(bytes)
            for (pattern, r) in records {
                XCTAssertNil(r.error, "\(name) \(pattern)")
                XCTAssertEqual(r.packetSizes, g.packetSizes, "\(name) \(pattern)")
                XCTAssertEqual(r.packetFrames, Array(repeating: 0, count: g.packets), "\(name) \(pattern)")
                XCTAssertEqual(r.packetData, fromFile.data, "\(name) \(pattern)")
                XCTAssertEqual(r.dataFormat, try file.dataFormat, "\(name) \(pattern)")
                XCTAssertEqual(r.audioDataPacketCount, Int64(g.packets), "\(name) \(pattern)")
                XCTAssertEqual(r.dataOffset, try file.dataOffset, "\(name) \(pattern)")
                XCTAssertTrue(r.notifications.contains(.readyToProducePackets), name)
                XCTAssertEqual(r.notifications.contains(.magicCookieData), g.cookie != nil, "\(name) \(pattern)")
                XCTAssertTrue(r.notifications.contains(.packetTableInfo), "\(name) \(pattern)")
            }
            XCTAssertNil(dripFeedMismatch(bytes), name)

            // Properties and exact seeks on a stream fed byte by byte.
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, _ in })
            for i in bytes.indices { try stream.parse(bytes[i..<i + 1]) }
            XCTAssertEqual(try? stream.magicCookie, g.cookie.map(hexBytes), name)
            XCTAssertEqual(try stream.packetTableInfo, g.packetTableInfo, name)
            XCTAssertEqual(try stream.dataFormat.formatFlags.rawValue, g.expected.formatFlags, name)
            var offset: Int64 = 0
            for k in 0...g.packets {
                let (byte, flags) = try stream.seek(toPacket: Int64(k))
                XCTAssertEqual(byte, offset, "\(name) packet \(k)")
                XCTAssertEqual(flags, [], name)
                if k < g.packets { offset += Int64(g.packetSizes[k]) }
            }
        }
    }

    /// Resuming a stream at a seek offset gives the packets from there on.
    func testStreamResumesAtSeekOffset() throws {
        for name in ["remux_aac_stereo.caf", "ffmpeg_alac_16_stereo.caf", "remux_opus.caf"] {
            let g = try Golden.load(fixture(name))
            let bytes = Self.streamable(try readWholeFile(fixture(name)))
            var sizes: [Int] = []
            var data: [UInt8] = []
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, d, descriptions in
                data += d
                sizes += (descriptions ?? []).map { Int($0.dataByteSize) }
            })
            let dataOffset = Int64(try XCTUnwrap(Kit.cafChunks(bytes).first { $0.id == "data" }).offset + 16)
            try stream.parse(bytes[..<Int(dataOffset)])
            XCTAssertTrue(stream.isReadyToProducePackets, name)
            let k = g.packets / 2
            let (byte, _) = try stream.seek(toPacket: Int64(k))
            try stream.parse(bytes[Int(dataOffset + byte)...], flags: .discontinuity)
            try stream.parse(nil)
            XCTAssertEqual(sizes, Array(g.packetSizes[k...]), name)
            XCTAssertEqual(data, Array(bytes[Int(dataOffset + byte)..<Int(dataOffset + byte) + g.packetSizes[k...].reduce(0, +)]), name)
        }
    }

    /// A 'desc' with 0 frames per packet: 'pakt' gives each packet's frames too, and they
    /// reach both paths and the writer.
    func testVariableFramesPerPacket() throws {
        let name = "remux_opus.caf"
        let g = try Golden.load(fixture(name))
        let chunks = Kit.cafChunks(try readWholeFile(fixture(name)))
        var desc = try XCTUnwrap(chunks.first { $0.id == "desc" }).body
        desc[20..<24] = [0, 0, 0, 0]  // framesPerPacket
        var pakt = Array(try XCTUnwrap(chunks.first { $0.id == "pakt" }).body[..<24])
        var frames: [UInt32] = []
        for (k, size) in g.packetSizes.enumerated() {
            let n: UInt32 = k == 3 ? 480 : 960  // one packet of 10 ms
            frames.append(n)
            var w = ByteWriter()
            CAFWriterVarint.write(&w, UInt32(size))
            CAFWriterVarint.write(&w, n)
            pakt += w.bytes
        }
        let bytes = Kit.caf(chunks.map { c in
            let body = c.id == "desc" ? desc : c.id == "pakt" ? pakt : c.body
            return (c.id, body, Int64(body.count))
        })
        let f = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try f.dataFormat.framesPerPacket, 0)
        let fromFile = try Kit.filePackets(f)
        XCTAssertEqual(fromFile.sizes, g.packetSizes)
        XCTAssertEqual(fromFile.frames, frames)
        XCTAssertEqual(try f.frame(forPacket: 5), 4 * 960 + 480)
        XCTAssertEqual(try f.packet(forFrame: 3 * 960 + 100).packet, 3)
        XCTAssertEqual(try f.packet(forFrame: 3 * 960 + 500).packet, 4)
        let r = feed(bytes, pattern: .oneByteAtATime)
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetFrames, frames)
        XCTAssertEqual(r.packetData, fromFile.data)
        XCTAssertNil(dripFeedMismatch(bytes))

        let out = makeTemporaryDirectory() + "/vf.caf"
        let w = try AudioFile.create(path: out, type: .caf, format: try f.dataFormat)
        try w.setProperty(.magicCookieData, .data(try XCTUnwrap(try f.magicCookie)))
        try w.setProperty(.packetTableInfo, .packetTableInfo(try XCTUnwrap(try f.packetTableInfo)))
        let (data, descriptions) = try f.readPacketData(startingAt: 0, count: g.packets)
        try w.writePackets(data, count: g.packets, descriptions: descriptions, startingAt: 0)
        try w.close()
        let written = Kit.cafChunks(try readWholeFile(out))
        XCTAssertEqual(written.first { $0.id == "pakt" }?.body, pakt)
        XCTAssertEqual(try Kit.filePackets(AudioFile(path: out)), fromFile)
    }

    // MARK: Cookie forms

    /// The other forms each codec's cookie is seen in give the same cookie and format.
    func testCookieForms() throws {
        func withKuki(_ name: String, _ kuki: [UInt8]) throws -> [UInt8] {
            let chunks = Kit.cafChunks(try readWholeFile(fixture(name)))
            return Kit.caf(chunks.map { ($0.id, $0.id == "kuki" ? kuki : $0.body, Int64($0.id == "kuki" ? kuki.count : $0.body.count)) })
        }
        func check(_ name: String, _ kuki: [UInt8], line: UInt = #line) throws {
            let g = try Golden.load(fixture(name))
            let bytes = try withKuki(name, kuki)
            let f = try AudioFile(source: MemorySource(bytes))
            XCTAssertEqual(try f.magicCookie, g.cookie.map(hexBytes), name, line: line)
            XCTAssertEqual(try f.dataFormat, try AudioFile(path: fixture(name)).dataFormat, name, line: line)
            let r = feed(Self.streamable(bytes), pattern: .randomChunks(seed: 9, maximum: 100))
            XCTAssertNil(r.error, name, line: line)
            XCTAssertEqual(r.packetSizes, g.packetSizes, name, line: line)
        }
        // AAC: an esds body with its version and flags in front.
        let es = hexBytes(try XCTUnwrap(try Golden.load(fixture("remux_aac_stereo.caf")).caf.kuki))
        try check("remux_aac_stereo.caf", [0, 0, 0, 0] + es)
        // ALAC: the 24-byte config alone (Apple's form), the 'alac' atom alone, and the old form
        // with a 'chan' atom and the terminator atom after it.
        let old = hexBytes(try XCTUnwrap(try Golden.load(fixture("ffmpeg_alac_16_stereo.caf")).caf.kuki))
        try check("ffmpeg_alac_16_stereo.caf", Array(old[24...]))
        try check("ffmpeg_alac_16_stereo.caf", Array(old[12...]))
        let chan: [UInt8] = [0, 0, 0, 24] + Array("chan".utf8) + [0, 0, 0, 0, 0, 0x65, 0, 2, 0, 0, 0, 0]
        try check("ffmpeg_alac_16_stereo.caf", old + chan + [0, 0, 0, 8, 0, 0, 0, 0])
        // FLAC: the dfLa body without its box header.
        let dfla = hexBytes(try XCTUnwrap(try Golden.load(fixture("remux_flac.caf")).caf.kuki))
        try check("remux_flac.caf", Array(dfla[8...]))
        // Opus: the body of a dOps box (ISO BMFF Opus §4.3.2: big-endian, version 0).
        let head = hexBytes(try XCTUnwrap(try Golden.load(fixture("remux_opus.caf")).cookie))
        let dops: [UInt8] = [0, head[9], head[11], head[10], head[15], head[14], head[13], head[12], head[17], head[16], head[18]]
        try check("remux_opus.caf", dops)
    }

    // MARK: Damaged files

    /// Opening the bytes with AudioFile and streaming them (every pattern alike) both fail
    /// with `code`.
    private func assertFails(_ bytes: [UInt8], _ code: AudioError.Code, category: AudioError.Category? = nil,
                             _ message: String, line: UInt = #line)
    {
        let e = Kit.openError(bytes)
        XCTAssertEqual(e?.code, code, "\(message): AudioFile gave \(e.map { "\($0)" } ?? "no error")", line: line)
        if let category { XCTAssertEqual(e?.category, category, message, line: line) }
        let r = feed(Self.streamable(bytes), pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, code, "\(message): AudioFileStream gave \(r.error.map { "\($0)" } ?? "no error")", line: line)
        XCTAssertNil(dripFeedMismatch(Self.streamable(bytes), patterns: [.allAtOnce, .randomChunks(seed: 4, maximum: 64)]),
                     message, line: line)
    }

    /// The file's chunks with one replaced (body and declared size).
    private func replacing(_ name: String, _ id: String, body: [UInt8]? = nil, size: Int64? = nil) throws -> [UInt8] {
        let chunks = Kit.cafChunks(Self.streamable(try readWholeFile(fixture(name))))
        return Kit.caf(chunks.map { c in
            guard c.id == id else { return (c.id, c.body, Int64(c.body.count)) }
            let b = body ?? c.body
            return (c.id, b, size ?? Int64(b.count))
        })
    }

    func testDamagedPacketTables() throws {
        let name = "remux_aac_stereo.caf"
        let g = try Golden.load(fixture(name))
        let pakt = try XCTUnwrap(Kit.cafChunks(try readWholeFile(fixture(name))).first { $0.id == "pakt" }).body
        func counts(packets: Int64, valid: Int64 = 0, priming: Int32 = 0, remainder: Int32 = 0) -> [UInt8] {
            var w = ByteWriter()
            w.write(packets); w.write(valid); w.write(priming); w.write(remainder)
            return w.bytes
        }
        // Truncated: shorter than its counts, cut inside the entries, or cut off by the end of the file.
        assertFails(try replacing(name, "pakt", body: Array(pakt[..<20])), .invalidChunk, "pakt of 20 bytes")
        assertFails(try replacing(name, "pakt", body: Array(pakt[..<(pakt.count - 3)])), .invalidChunk, "pakt cut in its entries")
        let cut = Array(try replacing(name, "pakt")[..<(g.caf.chunks[2].offset + 12 + 30)])
        assertFails(cut, .invalidChunk, "file ends inside pakt")
        // More packets than the entries can hold; a last entry that runs on (high bit set).
        assertFails(try replacing(name, "pakt", body: counts(packets: 1 << 40) + Array(pakt[24...])), .invalidChunk, "2^40 packets")
        assertFails(try replacing(name, "pakt", body: counts(packets: Int64(g.packets) + 1) + Array(pakt[24...])), .invalidChunk,
                    "one packet more than the entries")
        var runOn = pakt
        runOn[runOn.count - 1] |= 0x80
        assertFails(try replacing(name, "pakt", body: runOn), .invalidChunk, "last entry without its end")
        // Packets that the data chunk cannot hold.
        var bigger = Array(pakt[..<24])
        for _ in 0..<g.packets { bigger += [0x81, 0x80, 0x00] }  // 16384 bytes each
        assertFails(try replacing(name, "pakt", body: bigger), .invalidChunk, "packets larger than the data chunk")
        // Negative counts.
        assertFails(try replacing(name, "pakt", body: counts(packets: -1)), .invalidChunk, "-1 packets")
        assertFails(try replacing(name, "pakt", body: counts(packets: Int64(g.packets), valid: 11111, priming: -1024) + Array(pakt[24...])),
                    .invalidChunk, "negative priming")
        // A table larger than Tonearm reads: a limit error, before anything is allocated.
        assertFails(try replacing(name, "pakt", size: Int64(CAFFormat.maximumPacketTableSize) + 1), .invalidFile,
                    category: .limit, "pakt of 16 MiB + 1")
        assertFails(try replacing(name, "pakt", size: Int64.max), .invalidChunk, "pakt of 2^63 - 1 bytes")
    }

    func testDamagedCookies() throws {
        // Larger than Tonearm reads, and larger than the file.
        assertFails(try replacing("remux_aac_stereo.caf", "kuki", size: Int64(CAFFormat.maximumMetadataSize) + 1), .invalidFile,
                    category: .limit, "kuki of 1 MiB + 1")
        let huge = try replacing("ffmpeg_alac_16_mono.caf", "kuki", size: 1 << 19)
        assertFails(huge, .invalidChunk, "kuki past the end of the file")
        // Not the codec's cookie, or cut short.
        assertFails(try replacing("remux_aac_stereo.caf", "kuki", body: Array("not an esds".utf8)), .invalidChunk, "AAC kuki of text")
        let es = hexBytes(try XCTUnwrap(try Golden.load(fixture("remux_aac_stereo.caf")).caf.kuki))
        assertFails(try replacing("remux_aac_stereo.caf", "kuki", body: Array(es[..<20])), .invalidChunk, "AAC kuki cut short")
        assertFails(try replacing("ffmpeg_alac_16_stereo.caf", "kuki", body: Array(repeating: 0, count: 23)), .invalidChunk,
                    "ALAC kuki of 23 bytes")
        assertFails(try replacing("ffmpeg_alac_16_stereo.caf", "kuki", body: []), .invalidChunk, "empty ALAC kuki")
        let dfla = hexBytes(try XCTUnwrap(try Golden.load(fixture("remux_flac.caf")).caf.kuki))
        var lying = dfla
        lying[3] = 0xFF  // the dfLa box claims more than the kuki holds
        assertFails(try replacing("remux_flac.caf", "kuki", body: lying), .invalidChunk, "dfLa larger than kuki")
        assertFails(try replacing("remux_flac.caf", "kuki", body: Array(dfla[..<20])), .invalidChunk, "dfLa cut short")
        assertFails(try replacing("remux_opus.caf", "kuki", body: Array("OpusHead".utf8) + [1, 2]), .invalidChunk, "OpusHead cut short")
        assertFails(try replacing("remux_opus.caf", "kuki", body: [1, 2, 3]), .invalidChunk, "Opus kuki of 3 bytes")
    }

    /// Seeded damage to every fixture: always an AudioError, never a crash or a read past the data.
    func testDamagedVariants() throws {
        for path in fixtures {
            let bytes = try readWholeFile(path)
            for b in [bytes, Self.streamable(bytes)] {
                let (errors, problems) = exerciseDamaged(b)
                XCTAssertEqual(problems, [], path)
                XCTAssertFalse(errors.isEmpty, path)
            }
        }
    }

    // MARK: Writing

    /// Each fixture's packets, cookie and PacketTableInfo written to a new CAF read back the
    /// same through Tonearm, and (when ffprobe is installed) ffprobe lists the same packets
    /// and derives the same codec configuration.
    func testWriteRoundTrips() throws {
        let dir = makeTemporaryDirectory()
        for path in fixtures {
            let name = (path as NSString).lastPathComponent
            let g = try Golden.load(path)
            let r = try AudioFile(path: path)
            let format = try r.dataFormat
            let count = Int(try r.audioDataPacketCount)
            let (data, descriptions) = try r.readPacketData(startingAt: 0, count: count)
            let out = dir + "/" + name
            let w = try AudioFile.create(path: out, type: .caf, format: format)
            if let cookie = try r.magicCookie { try w.setProperty(.magicCookieData, .data(cookie)) }
            if let layout = try r.channelLayout { try w.setProperty(.channelLayout, .channelLayout(layout)) }
            let info = try XCTUnwrap(try r.packetTableInfo, name)
            try w.setProperty(.packetTableInfo, .packetTableInfo(info))
            // Two calls, so that the table is built across writes.
            let half = count / 2
            let split = Int(descriptions![half].startOffset)
            try w.writePackets(Array(data[..<split]), count: half, descriptions: Array(descriptions![..<half]), startingAt: 0)
            let rest = descriptions![half...].map {
                PacketDescription(startOffset: $0.startOffset - Int64(split), variableFramesInPacket: $0.variableFramesInPacket,
                                  dataByteSize: $0.dataByteSize)
            }
            try w.writePackets(Array(data[split...]), count: count - half, descriptions: rest, startingAt: Int64(half))
            try w.close()

            let copy = try AudioFile(path: out)
            XCTAssertEqual(try copy.dataFormat, format, name)
            XCTAssertEqual(try copy.magicCookie, try r.magicCookie, name)
            XCTAssertEqual(try copy.packetTableInfo, info, name)
            XCTAssertEqual(try copy.properties.sourceBitDepth, g.expected.sourceBitDepth, name)
            XCTAssertEqual(try Kit.filePackets(copy), try Kit.filePackets(r), name)
            let written = try readWholeFile(out)
            XCTAssertEqual(Kit.cafChunks(written).map(\.id),
                           ["desc"] + (try r.channelLayout != nil ? ["chan"] : []) + (g.cookie != nil ? ["kuki"] : []) + ["data", "pakt"], name)
            // The table as Tonearm writes it streams once moved in front of the data.
            let r2 = feed(Self.streamable(written), pattern: .randomChunks(seed: 3, maximum: 333))
            XCTAssertNil(r2.error, name)
            XCTAssertEqual(r2.packetSizes, g.packetSizes, name)

            _ = try requireTool("ffprobe")
            let probe = try XCTUnwrap(Kit.ffprobe(out, packets: true), name)
            let packets = try XCTUnwrap(probe["packets"] as? [[String: Any]], name)
            XCTAssertEqual(packets.compactMap { Kit.int($0["size"]) }, g.packetSizes.map(Int64.init), name)
            let stream = try XCTUnwrap((probe["streams"] as? [[String: Any]])?.first, name)
            XCTAssertEqual(stream["codec_name"] as? String, g.codec, name)
            XCTAssertEqual(Kit.int(stream["sample_rate"]), Int64(g.sampleRate), name)
            XCTAssertEqual(Kit.int(stream["channels"]), Int64(g.channels), name)
            XCTAssertEqual(Kit.int(stream["nb_frames"]), info.totalFrames, name)
            XCTAssertEqual(Self.ffprobeExtradata(out), hexBytes(g.extradata), name)
        }
    }

    /// An AAC cookie given as an AudioSpecificConfig is stored as an ES_Descriptor whose
    /// buffer size and bit rates are filled in when the file is closed.
    func testAACCookieIsWrittenAsESDescriptor() throws {
        let name = "remux_aac_stereo.caf"
        let g = try Golden.load(fixture(name))
        let r = try AudioFile(path: fixture(name))
        let count = Int(try r.audioDataPacketCount)
        let (data, descriptions) = try r.readPacketData(startingAt: 0, count: count)
        let out = makeTemporaryDirectory() + "/aac.caf"
        let w = try AudioFile.create(path: out, type: .caf, format: try r.dataFormat)
        try w.setProperty(.magicCookieData, .data(hexBytes(g.extradata)))
        try w.setProperty(.packetTableInfo, .packetTableInfo(try XCTUnwrap(try r.packetTableInfo)))
        try w.writePackets(data, count: count, descriptions: descriptions, startingAt: 0)
        try w.close()
        let kuki = try XCTUnwrap(Kit.cafChunks(try readWholeFile(out)).first { $0.id == "kuki" }).body
        var expected = ByteWriter()
        let largest = g.packetSizes.max()!
        expected.write(UInt8(largest >> 16)); expected.write(UInt16(largest & 0xFFFF))
        expected.write(UInt32(largest * 8 * 44100 / 1024))
        expected.write(UInt32(Double(g.packetSizes.reduce(0, +)) * 8 * 44100 / Double(count * 1024)))
        XCTAssertEqual(Array(kuki[..<15]), [0x03, 0x80, 0x80, 0x80, 0x25, 0, 0, 0, 0x04, 0x80, 0x80, 0x80, 0x17, 0x40, 0x15])
        XCTAssertEqual(Array(kuki[15..<26]), expected.bytes)
        XCTAssertEqual(Array(kuki[26...]), [0x05, 0x80, 0x80, 0x80, 0x05] + hexBytes(g.extradata) + [0x06, 0x80, 0x80, 0x80, 0x01, 0x02])
        XCTAssertEqual(try AudioFile(path: out).magicCookie, hexBytes(g.extradata))
        _ = try requireTool("ffprobe")
        let probe = try XCTUnwrap(Kit.ffprobe(out, packets: true))
        XCTAssertEqual((probe["packets"] as? [[String: Any]])?.count, g.packets)
    }
}

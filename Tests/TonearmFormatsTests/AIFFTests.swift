import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// Helpers shared by AIFFTests and AUTests (namespaced, so that other test files of this
/// target can use any names they like).
enum AIFFAUTestKit {
    /// A file to check, with what its golden JSON (or the generator) says it holds.
    struct Case {
        var path: String
        var sampleRate: Double
        var channels: Int
        var frames: Int
        var fileType: String
        var formatID: String
        /// The golden's "header" object (facts read from the file's bytes), when there is one.
        var header: [String: Any] = [:]
        var name: String { (path as NSString).lastPathComponent }
    }

    static func golden(for path: String) -> Case? {
        let jsonPath = (path as NSString).deletingPathExtension + ".json"
        guard let data = FileManager.default.contents(atPath: jsonPath),
              let g = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let expected = g["expected"] as? [String: Any],
              let rate = (g["sampleRate"] as? NSNumber)?.doubleValue,
              let channels = (g["channels"] as? NSNumber)?.intValue,
              let frames = (g["frames"] as? NSNumber)?.intValue,
              let type = expected["fileType"] as? String, let format = expected["formatID"] as? String
        else { return nil }
        return Case(path: path, sampleRate: rate, channels: channels, frames: frames, fileType: type,
                    formatID: format, header: g["header"] as? [String: Any] ?? [:])
    }

    /// The fixtures of `Tests/Fixtures/pcm` with these extensions, or, while there are none,
    /// files made now by `generate` (which skips the test when ffmpeg is missing, fails on CI).
    static func cases(extensions: [String], generate: () throws -> [Case]) throws -> [Case] {
        let fixtures = fixtureFiles("pcm", extensions: extensions).compactMap(golden(for:))
        if !fixtures.isEmpty { return fixtures }
        _ = try requireTool("ffmpeg")
        return try generate()
    }

    static func formatIDString(_ id: AudioFormatID) -> String {
        id.fourCC.isPrintable ? id.fourCC.string : "0x" + hex8(id.rawValue)
    }

    /// Every packet through AudioFile's readPacketData, concatenated.
    static func allPackets(_ file: AudioFile, batch: Int = 777) throws -> [UInt8] {
        var out: [UInt8] = []
        let total = try file.audioDataPacketCount
        var next: Int64 = 0
        while next < total {
            let (data, descriptions) = try file.readPacketData(startingAt: next, count: batch)
            XCTAssertNil(descriptions)
            out += data
            next += min(Int64(batch), total - next)
        }
        return out
    }

    /// The checks every fixture gets: type, format, rate, channels, frames; drip-feed
    /// equality; AudioFile's packets equal AudioFileStream's.
    static func check(_ c: Case, optimized: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws {
        let af = try AudioFile(path: c.path)
        let p = try af.properties
        let f = try XCTUnwrap(p.dataFormat, c.name)
        XCTAssertEqual(p.fileType.fourCC.string, c.fileType, c.name, file: file, line: line)
        XCTAssertEqual(formatIDString(f.formatID), c.formatID, c.name, file: file, line: line)
        XCTAssertEqual(f.sampleRate, c.sampleRate, c.name, file: file, line: line)
        XCTAssertEqual(Int(f.channelsPerFrame), c.channels, c.name, file: file, line: line)
        XCTAssertEqual(try af.audioDataPacketCount * Int64(f.framesPerPacket), Int64(c.frames), c.name, file: file, line: line)
        if let offset = (c.header["dataOffset"] as? NSNumber)?.int64Value {
            XCTAssertEqual(try af.dataOffset, offset, c.name, file: file, line: line)
        }
        XCTAssertEqual(p.isOptimized, optimized, c.name, file: file, line: line)
        let bytes = try readWholeFile(c.path)
        XCTAssertNil(dripFeedMismatch(bytes), c.name, file: file, line: line)
        let fromFile = try allPackets(af)
        XCTAssertEqual(fromFile.count, Int(try af.audioDataPacketCount) * Int(f.bytesPerPacket), c.name, file: file, line: line)
        let r = feed(bytes, pattern: .randomChunks(seed: 11, maximum: 5000))
        if optimized {
            XCTAssertNil(r.error, c.name, file: file, line: line)
            XCTAssertEqual(r.notifications.filter { $0 == .readyToProducePackets }.count, 1, c.name, file: file, line: line)
            XCTAssertEqual(r.packetData, fromFile, c.name, file: file, line: line)
            XCTAssertEqual(r.dataFormat, f, c.name, file: file, line: line)
        } else {
            XCTAssertEqual(r.error?.code, .notOptimized, c.name, file: file, line: line)
            XCTAssertTrue(r.packetData.isEmpty, c.name, file: file, line: line)
        }
    }

    // MARK: Running tools

    @discardableResult
    static func run(_ tool: String, _ args: [String]) throws -> Data {
        let exe = try requireTool(tool)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = Foundation.FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw NSError(domain: "tool", code: Int(p.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "\(tool) \(args.joined(separator: " ")) failed"])
        }
        return data
    }

    static func ffmpeg(_ args: [String]) throws {
        try run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-y"] + args)
    }

    /// ffmpeg's decode of a file to interleaved s16le.
    static func decodeS16(_ path: String, inputFormat: [String] = []) throws -> [Int16] {
        let data = try run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error"] + inputFormat + ["-i", path, "-f", "s16le", "-"])
        return stride(from: 0, to: data.count - 1, by: 2).map { Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8) }
    }

    /// ffprobe's view of the first audio stream: codec_name, sample_rate, channels, and the tags.
    static func probe(_ path: String) throws -> (codec: String, rate: Int, channels: Int, tags: [String: String]) {
        let data = try run("ffprobe", ["-v", "error", "-of", "json", "-show_streams", "-show_format", path])
        let obj = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let s = (obj["streams"] as? [[String: Any]])?.first ?? [:]
        let format = obj["format"] as? [String: Any] ?? [:]
        return (s["codec_name"] as? String ?? "", Int(s["sample_rate"] as? String ?? "") ?? 0,
                s["channels"] as? Int ?? 0, format["tags"] as? [String: String] ?? [:])
    }

    // MARK: Sources

    /// A deterministic interleaved 16-bit signal: two sines and noise, different per channel.
    static func signal(frames: Int, channels: Int) -> [Int16] {
        var g = SeededGenerator(seed: 77)
        var out: [Int16] = []
        out.reserveCapacity(frames * channels)
        for i in 0..<frames {
            for c in 0..<channels {
                let t = Double(i) / 8000
                let v = 0.5 * sin(2 * .pi * 440 * Double(c + 1) * t) + 0.3 * sin(2 * .pi * 1300 * t)
                    + 0.1 * (Double(g.next() % 2001) / 1000 - 1)
                out.append(Int16(max(-32768, min(32767, (v * 32767).rounded()))))
            }
        }
        return out
    }

    static func s16le(_ s: [Int16]) -> [UInt8] { s.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] } }

    /// Writes the signal as raw s16le and returns its path.
    static func writeSignal(_ s: [Int16], in dir: String) throws -> String {
        let path = dir + "/source.s16"
        try writeWholeFile(path, s16le(s))
        return path
    }

    /// Encodes the signal with ffmpeg: `codec` into a file of ffmpeg format `format`.
    static func encode(_ s: [Int16], rate: Int, channels: Int, codec: String, format: String, to path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let src = try writeSignal(s, in: dir)
        try ffmpeg(["-f", "s16le", "-ar", "\(rate)", "-ac", "\(channels)", "-i", src, "-c:a", codec,
                    "-fflags", "+bitexact", "-flags", "+bitexact", "-f", format, path])
    }
}

/// AIFF/AIFC file bytes built by hand, for the damaged and unusual cases.
enum AIFFBuilder {
    static func chunk(_ id: FourCC, _ body: [UInt8], size: UInt32? = nil) -> [UInt8] {
        var w = ByteWriter()
        w.write(id)
        w.write(size ?? UInt32(body.count))
        w.write(body)
        if body.count & 1 == 1 { w.write([0]) }
        return w.bytes
    }

    static func form(_ type: FourCC = "AIFF", _ chunks: [[UInt8]]) -> [UInt8] {
        let body = chunks.flatMap { $0 }
        var w = ByteWriter()
        w.write(FourCC("FORM"))
        w.write(UInt32(4 + body.count))
        w.write(type)
        w.write(body)
        return w.bytes
    }

    static func comm(channels: UInt16 = 2, frames: UInt32 = 100, bits: Int16 = 16, rate: [UInt8] = ByteReader.encodeExtended(44100),
                     compression: FourCC? = nil, name: String = "") -> [UInt8]
    {
        var w = ByteWriter()
        w.write(channels)
        w.write(frames)
        w.write(bits)
        w.write(rate)
        if let compression {
            w.write(compression)
            var p = [UInt8(name.utf8.count)] + Array(name.utf8)
            if p.count & 1 == 1 { p.append(0) }
            w.write(p)
        }
        return w.bytes
    }

    static func ssnd(_ data: [UInt8], offset: UInt32 = 0) -> [UInt8] {
        var w = ByteWriter()
        w.write(offset)
        w.write(UInt32(0))
        w.write([UInt8](repeating: 0xEE, count: Int(offset)))
        w.write(data)
        return w.bytes
    }

    /// 100 frames of 16-bit stereo: bytes 0, 1, 2, … (mod 251).
    static let samples: [UInt8] = (0..<400).map { UInt8($0 % 251) }

    /// FORM AIFF: COMM (2 ch, 100 frames, 16 bits, 44.1 kHz), SSND, ANNO.
    static func basic(comm: [UInt8] = AIFFBuilder.comm(), ssndSize: UInt32? = nil) -> [UInt8] {
        form("AIFF", [chunk("COMM", comm), chunk("SSND", ssnd(samples), size: ssndSize), chunk("ANNO", Array("after".utf8))])
    }
}

final class AIFFTests: XCTestCase {
    typealias Kit = AIFFAUTestKit

    // MARK: Fixtures

    func testEveryAIFFFixture() throws {
        let cases = try Kit.cases(extensions: ["aif", "aiff", "aifc"], generate: generatedAIFFs)
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            let reordered = (c.header["chunks"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
                .firstIndex(of: "COMM").map { i in
                    (c.header["chunks"] as! [[String: Any]])[..<i].contains { $0["id"] as? String == "SSND" }
                } ?? c.name.contains("comm_after_ssnd")
            try Kit.check(c, optimized: !reordered)
            let file = try AudioFile(path: c.path)
            if let comm = c.header["comm"] as? [String: Any], let frames = (comm["numSampleFrames"] as? NSNumber)?.int64Value,
               let dataSize = (c.header["dataSize"] as? NSNumber)?.int64Value
            {
                let f = try file.dataFormat
                // The smaller of COMM's count and what SSND holds (IMA4 counts packets in COMM).
                XCTAssertEqual(try file.audioDataPacketCount, min(frames, dataSize / Int64(f.bytesPerPacket)), c.name)
            }
            if let markers = c.header["markers"] as? [[String: Any]] {
                let got = try file.properties.markers
                XCTAssertEqual(got.map(\.markerID), markers.map { Int32(($0["id"] as! NSNumber).intValue) }, c.name)
                XCTAssertEqual(got.map(\.framePosition), markers.map { ($0["position"] as! NSNumber).doubleValue }, c.name)
                XCTAssertEqual(got.map(\.name), markers.map { $0["name"] as! String }, c.name)
            }
            if let comments = c.header["comments"] as? [[String: Any]] {
                let text = try file.infoDictionary[InfoDictionary.comments] ?? ""
                for comment in comments { XCTAssertTrue(text.contains(comment["text"] as! String), c.name) }
            }
            XCTAssertNil(try file.channelLayout, "AIFF gives no channel layout without CHAN: \(c.name)")
        }
    }

    /// The files the fallback makes (more variants than the fixtures: 8- and 32-bit AIFF),
    /// checked the same way whether or not the fixtures exist.
    func testFilesMadeByFFmpeg() throws {
        _ = try requireTool("ffmpeg")
        for c in try generatedAIFFs() { try Kit.check(c, optimized: !c.name.contains("comm_after_ssnd")) }
    }

    /// The fixtures made by ffmpeg, while Tests/Fixtures/pcm has none.
    private func generatedAIFFs() throws -> [Kit.Case] {
        let dir = makeTemporaryDirectory()
        let frames = 5513, rate = 22050
        let s = Kit.signal(frames: frames, channels: 2)
        let mono = Kit.signal(frames: frames, channels: 1)
        var cases: [Kit.Case] = []
        let list: [(String, String, String, String, Int)] = [
            ("aiff_s16be.aiff", "pcm_s16be", "AIFF", "lpcm", 2), ("aiff_s24be.aiff", "pcm_s24be", "AIFF", "lpcm", 2),
            ("aiff_s32be.aiff", "pcm_s32be", "AIFF", "lpcm", 2), ("aiff_s8.aiff", "pcm_s8", "AIFF", "lpcm", 1),
            ("aifc_sowt.aifc", "pcm_s16le", "AIFC", "lpcm", 2), ("aifc_fl32.aifc", "pcm_f32be", "AIFC", "lpcm", 2),
            ("aifc_fl64.aifc", "pcm_f64be", "AIFC", "lpcm", 1), ("aifc_ulaw.aifc", "pcm_mulaw", "AIFC", "ulaw", 2),
            ("aifc_alaw.aifc", "pcm_alaw", "AIFC", "alaw", 2), ("aifc_ima4.aifc", "adpcm_ima_qt", "AIFC", "ima4", 2),
        ]
        for (name, codec, type, format, channels) in list {
            let path = dir + "/" + name
            try Kit.encode(channels == 2 ? s : mono, rate: rate, channels: channels, codec: codec, format: "aiff", to: path)
            let n = format == "ima4" ? (frames + 63) / 64 * 64 : frames
            cases.append(Kit.Case(path: path, sampleRate: Double(rate), channels: channels, frames: n, fileType: type, formatID: format))
        }
        // COMM moved after SSND, as tools/reorder_aiff.py does.
        let plain = try readWholeFile(dir + "/aiff_s16be.aiff")
        let reordered = try AIFFTests.moveCOMMAfterSSND(plain)
        try writeWholeFile(dir + "/aiff_comm_after_ssnd.aiff", reordered)
        cases.append(Kit.Case(path: dir + "/aiff_comm_after_ssnd.aiff", sampleRate: Double(rate), channels: 2, frames: frames,
                              fileType: "AIFF", formatID: "lpcm"))
        return cases
    }

    /// The chunks of a FORM, as (id, body).
    static func chunks(_ bytes: [UInt8]) -> [(FourCC, [UInt8])] {
        var r = ByteReader(bytes)
        r.skip(12)
        var out: [(FourCC, [UInt8])] = []
        while let id = r.readFourCC(), let size = r.readUInt32(), let body = r.readBytes(Int(size)) {
            out.append((id, body))
            if size & 1 == 1 { r.skip(1) }
        }
        return out
    }

    static func moveCOMMAfterSSND(_ bytes: [UInt8]) throws -> [UInt8] {
        var list = chunks(bytes)
        let comm = try XCTUnwrap(list.firstIndex { $0.0 == "COMM" })
        let c = list.remove(at: comm)
        let ssnd = try XCTUnwrap(list.firstIndex { $0.0 == "SSND" })
        list.insert(c, at: ssnd + 1)
        return AIFFBuilder.form(FourCC(rawValue: ByteReader(bytes).getInteger(at: 8)!), list.map { AIFFBuilder.chunk($0.0, $0.1) })
    }

    // MARK: Formats

    /// Every COMM variant gives exactly the ASBD Apple gives.
    func testCompressionTypesGiveTheirFormats() throws {
        let rate = 32000.0
        func open(_ comm: [UInt8], type: FourCC = "AIFC", data: [UInt8] = [UInt8](repeating: 1, count: 680)) throws -> (StreamDescription, Int64) {
            let file = try AudioFile(source: MemorySource(AIFFBuilder.form(type, [AIFFBuilder.chunk("COMM", comm), AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd(data))])))
            return (try file.dataFormat, try file.audioDataPacketCount)
        }
        func pcm(_ bits: UInt32, ch: UInt32 = 2, float: Bool = false, big: Bool = true, signed: Bool = true) -> StreamDescription {
            var f = StreamDescription.pcm(sampleRate: rate, channels: ch, bits: bits, isFloat: float, isBigEndian: big, isSigned: signed)
            if big { f.formatFlags.insert(.isBigEndian) }
            return f
        }
        let r = ByteReader.encodeExtended(rate)
        XCTAssertEqual(try open(AIFFBuilder.comm(frames: 1000, bits: 16, rate: r), type: "AIFF").0, pcm(16))
        XCTAssertEqual(try open(AIFFBuilder.comm(frames: 1000, bits: 16, rate: r), type: "AIFF").0.formatFlags.rawValue, 0xE)
        // 8-bit AIFF is signed (Apple: 0xE, big-endian signed packed).
        let eight = try open(AIFFBuilder.comm(channels: 1, frames: 1000, bits: 8, rate: r), type: "AIFF")
        XCTAssertEqual(eight.0, pcm(8, ch: 1))
        XCTAssertEqual(eight.0.formatFlags.rawValue, 0xE)
        XCTAssertEqual(eight.1, 680)
        // 12 bits sit left-justified in 2 bytes; 20 bits in 3.
        let twelve = try open(AIFFBuilder.comm(frames: 1000, bits: 12, rate: r), type: "AIFF").0
        XCTAssertEqual(twelve.bytesPerFrame, 4)
        XCTAssertEqual(twelve.bitsPerChannel, 12)
        XCTAssertTrue(twelve.formatFlags.contains(.isAlignedHigh))
        XCTAssertFalse(twelve.formatFlags.contains(.isPacked))
        XCTAssertEqual(try open(AIFFBuilder.comm(frames: 1000, bits: 20, rate: r), type: "AIFF").0.bytesPerFrame, 6)
        XCTAssertEqual(try open(AIFFBuilder.comm(frames: 1000, bits: 24, rate: r), type: "AIFF").0, pcm(24))
        XCTAssertEqual(try open(AIFFBuilder.comm(frames: 1000, bits: 32, rate: r), type: "AIFF").0, pcm(32))

        XCTAssertEqual(try open(AIFFBuilder.comm(bits: 16, rate: r, compression: "NONE", name: "not compressed")).0, pcm(16))
        XCTAssertEqual(try open(AIFFBuilder.comm(bits: 16, rate: r, compression: "twos")).0, pcm(16))
        let sowt = try open(AIFFBuilder.comm(bits: 16, rate: r, compression: "sowt")).0
        XCTAssertEqual(sowt, pcm(16, big: false))
        XCTAssertEqual(sowt.formatFlags.rawValue, 0xC)
        XCTAssertEqual(try open(AIFFBuilder.comm(bits: 24, rate: r, compression: "sowt")).0, pcm(24, big: false))
        XCTAssertEqual(try open(AIFFBuilder.comm(bits: 0, rate: r, compression: "in24")).0, pcm(24))
        XCTAssertEqual(try open(AIFFBuilder.comm(bits: 0, rate: r, compression: "in32")).0, pcm(32))
        XCTAssertEqual(try open(AIFFBuilder.comm(bits: 8, rate: r, compression: "raw ")).0, pcm(8, big: false, signed: false))
        for t: FourCC in ["fl32", "FL32"] {
            let f = try open(AIFFBuilder.comm(bits: 32, rate: r, compression: t)).0
            XCTAssertEqual(f, pcm(32, float: true))
            XCTAssertEqual(f.formatFlags.rawValue, 0xB)
        }
        for t: FourCC in ["fl64", "FL64"] { XCTAssertEqual(try open(AIFFBuilder.comm(bits: 64, rate: r, compression: t)).0, pcm(64, float: true)) }
        for (t, id): (FourCC, AudioFormatID) in [("ulaw", .uLaw), ("ULAW", .uLaw), ("alaw", .aLaw), ("ALAW", .aLaw)] {
            let (f, packets) = try open(AIFFBuilder.comm(frames: 1000, bits: 16, rate: r, compression: t))
            XCTAssertEqual(f, StreamDescription(sampleRate: rate, formatID: id, bytesPerPacket: 2, framesPerPacket: 1,
                                                bytesPerFrame: 2, channelsPerFrame: 2, bitsPerChannel: 8))
            XCTAssertEqual(packets, 340)
        }
        // IMA4: 34 bytes per channel per packet, 64 frames; COMM counts packets.
        let (ima, packets) = try open(AIFFBuilder.comm(frames: 10, bits: 16, rate: r, compression: "ima4", name: "IMA 4:1"))
        XCTAssertEqual(ima, StreamDescription(sampleRate: rate, formatID: .appleIMA4, bytesPerPacket: 68, framesPerPacket: 64,
                                              bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0))
        XCTAssertEqual(packets, 10)
        XCTAssertEqual(try open(AIFFBuilder.comm(frames: 5000, bits: 16, rate: r, compression: "ima4")).1, 10)  // 680 / 68
        // An AIFC COMM without the compression fields is uncompressed.
        XCTAssertEqual(try open(AIFFBuilder.comm(bits: 16, rate: r)).0, pcm(16))
    }

    func testUnknownCompressionIsUnsupportedDataFormatAndNamesTheType() {
        let bytes = AIFFBuilder.form("AIFC", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm(compression: "MAC3", name: "MACE 3-to-1")),
                                              AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd([1, 2, 3, 4]))])
        XCTAssertThrowsError(try AudioFile(source: MemorySource(bytes))) { e in
            let e = e as? AudioError
            XCTAssertEqual(e?.code, .unsupportedDataFormat)
            XCTAssertTrue(e?.message.contains("MAC3") ?? false, e?.message ?? "")
        }
        let r = feed(bytes, pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, .unsupportedDataFormat)
        XCTAssertTrue(r.error?.message.contains("MAC3") ?? false)
    }

    // MARK: Chunk order, frames, offsets

    func testCOMMAfterSSNDOpensWithAudioFileAndIsNotOptimizedForTheStream() throws {
        let bytes = AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("NAME", Array("late".utf8)),
                                              AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd(AIFFBuilder.samples, offset: 4)),
                                              AIFFBuilder.chunk("COMM", AIFFBuilder.comm()),
                                              AIFFBuilder.chunk("ANNO", Array("end".utf8))])
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.dataFormat, .pcm(sampleRate: 44100, channels: 2, bits: 16, isBigEndian: true))
        XCTAssertEqual(try file.audioDataPacketCount, 100)
        XCTAssertEqual(try file.audioDataByteCount, 400)
        XCTAssertEqual(try file.dataOffset, 12 + 12 + 8 + 8 + 4)  // FORM, NAME chunk, SSND header, prefix, offset
        XCTAssertEqual(try file.properties.isOptimized, false)
        XCTAssertEqual(try file.infoDictionary[InfoDictionary.title], "late")
        XCTAssertEqual(try file.infoDictionary[InfoDictionary.comments], "end")
        XCTAssertEqual(try Kit.allPackets(file), AIFFBuilder.samples)
        XCTAssertEqual(try file.property(.isOptimized).uint32(), 0)

        for pattern in FeedPattern.standard {
            let r = feed(bytes, pattern: pattern)
            XCTAssertEqual(r.error?.code, .notOptimized, "\(pattern)")
            XCTAssertTrue(r.packetData.isEmpty)
        }
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    /// The frame count is the smaller of COMM's numSampleFrames and what SSND holds, on both paths.
    func testFrameCountIsTheSmallerOfCOMMAndSSND() throws {
        // COMM says 60 frames; SSND holds 100.
        let short = AIFFBuilder.basic(comm: AIFFBuilder.comm(frames: 60))
        let file = try AudioFile(source: MemorySource(short))
        XCTAssertEqual(try file.audioDataPacketCount, 60)
        XCTAssertEqual(try file.audioDataByteCount, 240)
        XCTAssertEqual(try Kit.allPackets(file), Array(AIFFBuilder.samples[..<240]))
        XCTAssertThrowsError(try file.readPacketData(startingAt: 60, count: 1)) { XCTAssertEqual(($0 as? AudioError)?.code, .endOfFile) }
        for pattern in FeedPattern.standard {
            let r = feed(short, pattern: pattern)
            XCTAssertNil(r.error)
            XCTAssertEqual(r.packetData, Array(AIFFBuilder.samples[..<240]), "\(pattern)")
            XCTAssertEqual(r.audioDataPacketCount, 60)
            XCTAssertEqual(r.info?[InfoDictionary.comments], "after")
        }
        XCTAssertNil(dripFeedMismatch(short))

        // COMM says 2^31 and 2^32 − 1 frames; SSND holds 100.
        for frames: UInt32 in [1 << 31, .max] {
            let long = AIFFBuilder.basic(comm: AIFFBuilder.comm(frames: frames))
            let f = try AudioFile(source: MemorySource(long))
            XCTAssertEqual(try f.audioDataPacketCount, 100)
            XCTAssertEqual(try Kit.allPackets(f), AIFFBuilder.samples)
            XCTAssertEqual(feed(long, pattern: .allAtOnce).packetData, AIFFBuilder.samples)
        }
    }

    func testSSNDOffsetMovesTheFirstPacket() throws {
        let bytes = AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm()),
                                              AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd(AIFFBuilder.samples, offset: 6))])
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.dataOffset, 12 + 26 + 8 + 8 + 6)
        XCTAssertEqual(try file.audioDataPacketCount, 100)
        XCTAssertEqual(try Kit.allPackets(file), AIFFBuilder.samples)
        XCTAssertEqual(feed(bytes, pattern: .oneByteAtATime).packetData, AIFFBuilder.samples)
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    /// Seeking a stream: the byte offset of a packet, then the bytes from there with a discontinuity.
    func testStreamSeekResumesAtThePacket() throws {
        let bytes = AIFFBuilder.basic(comm: AIFFBuilder.comm(frames: 90))
        var got: [UInt8] = []
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, _ in got += data })
        try stream.parse(Array(bytes[..<60]))
        XCTAssertTrue(stream.isReadyToProducePackets)
        let dataOffset = try stream.dataOffset
        XCTAssertEqual(dataOffset, 54)
        let (offset, flags) = try stream.seek(toPacket: 70)
        XCTAssertEqual(offset, 280)
        XCTAssertEqual(flags, [])
        got = []
        try stream.parse(Array(bytes[Int(dataOffset + offset)...]), flags: .discontinuity)
        try stream.parse(nil)
        // Packets 70..<90: COMM's 90 frames bound the data even after a seek.
        XCTAssertEqual(got, Array(AIFFBuilder.samples[280..<360]))
        XCTAssertThrowsError(try stream.seek(toPacket: 91)) { XCTAssertEqual(($0 as? AudioError)?.code, .invalidPacketOffset) }
    }

    // MARK: Metadata

    func testMarkersInfoLayoutAndID3() throws {
        var mark = ByteWriter()
        mark.write(UInt16(3))
        for (id, pos, name) in [(1, 0, "start"), (2, 50, "mid"), (7, 99, "")] as [(Int16, UInt32, String)] {
            mark.write(id)
            mark.write(pos)
            mark.write(AIFFBuilder.pstring(name))
        }
        var comt = ByteWriter()
        comt.write(UInt16(2))
        for text in ["first comment", "odd"] {
            comt.write(UInt32(0xC0FFEE))
            comt.write(Int16(0))
            comt.write(UInt16(text.utf8.count))
            comt.write(Array(text.utf8))
            if text.utf8.count & 1 == 1 { comt.write([0]) }
        }
        var chan = ByteWriter()
        chan.write(ChannelLayout.Tag.useChannelDescriptions.rawValue)
        chan.write(UInt32(0))
        chan.write(UInt32(2))
        for label: UInt32 in [3, 9] {  // C, Cs
            chan.write(label)
            chan.write(UInt32(0))
            chan.writeFloat32(0); chan.writeFloat32(0); chan.writeFloat32(0)
        }
        let id3: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 1, 0]
        let bytes = AIFFBuilder.form("AIFC", [
            AIFFBuilder.chunk("FVER", [0xA2, 0x80, 0x51, 0x40]),
            AIFFBuilder.chunk("COMM", AIFFBuilder.comm(compression: "NONE", name: "not compressed")),
            AIFFBuilder.chunk("COMT", comt.bytes),
            AIFFBuilder.chunk("MARK", mark.bytes),
            AIFFBuilder.chunk("NAME", Array("Title é".utf8)),
            AIFFBuilder.chunk("AUTH", Array("Author".utf8)),
            AIFFBuilder.chunk("(c) ", Array("2024 Someone".utf8)),
            AIFFBuilder.chunk("APPL", Array("stoc????".utf8)),
            AIFFBuilder.chunk("CHAN", chan.bytes),
            AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd(AIFFBuilder.samples)),
            AIFFBuilder.chunk("ANNO", Array("annotation".utf8)),
            AIFFBuilder.chunk("ID3 ", id3),
        ])
        let file = try AudioFile(source: MemorySource(bytes))
        let p = try file.properties
        XCTAssertEqual(p.fileType, .aifc)
        XCTAssertEqual(p.markers, [AudioFileMarker(framePosition: 0, name: "start", markerID: 1),
                                   AudioFileMarker(framePosition: 50, name: "mid", markerID: 2),
                                   AudioFileMarker(framePosition: 99, name: "", markerID: 7)])
        XCTAssertEqual(p.info[InfoDictionary.title], "Title é")
        XCTAssertEqual(p.info[InfoDictionary.artist], "Author")
        XCTAssertEqual(p.info[InfoDictionary.copyright], "2024 Someone")
        XCTAssertEqual(p.info[InfoDictionary.comments], "first comment\nodd\nannotation")
        XCTAssertEqual(p.channelLayout, ChannelLayout(labels: [.center, .centerSurround]))
        XCTAssertEqual(p.id3Tag, id3)
        XCTAssertEqual(p.chunkIDs, ["FVER", "COMM", "COMT", "MARK", "NAME", "AUTH", "(c) ", "APPL", "CHAN", "SSND", "ANNO", "ID3 "])
        XCTAssertEqual(try file.property(.markerList).byteSize, 8 + 28 * 3)
        XCTAssertEqual(try Kit.allPackets(file), AIFFBuilder.samples)

        XCTAssertNil(dripFeedMismatch(bytes))
        let r = feed(bytes, pattern: .allAtOnce)
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetData, AIFFBuilder.samples)
        XCTAssertEqual(r.info?[InfoDictionary.comments], "first comment\nodd\nannotation")
        // Announced in ChunkedParser's order: the layout and info before the counts; ANNO after 'redy'.
        XCTAssertEqual(r.notifications, [.fileFormat, .dataFormat, .channelLayout, .infoDictionary, .audioDataByteCount,
                                         .audioDataPacketCount, .bitRate, .dataOffset, .maximumPacketSize,
                                         .readyToProducePackets, .infoDictionary])
    }

    /// A chunk with an empty body (an empty ANNO, an empty NAME) is stepped over.
    func testEmptyChunksAreSkipped() throws {
        for (tail, expected) in [([AIFFBuilder.chunk("ANNO", [])], 100), ([], 100)] as [([[UInt8]], Int64)] {
            let bytes = AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("NAME", []), AIFFBuilder.chunk("COMM", AIFFBuilder.comm()),
                                                  AIFFBuilder.chunk("APPL", []), AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd(AIFFBuilder.samples))] + tail)
            let file = try AudioFile(source: MemorySource(bytes))
            XCTAssertEqual(try file.audioDataPacketCount, expected)
            XCTAssertTrue(try file.infoDictionary.isEmpty)
            XCTAssertNil(dripFeedMismatch(bytes))
            XCTAssertEqual(feed(bytes, pattern: .allAtOnce).packetData, AIFFBuilder.samples)
        }
    }

    // MARK: Damaged input

    /// Damaged files give an AudioError with the right code on both paths, and never crash.
    func testDamagedInput() throws {
        let good = AIFFBuilder.basic()
        // The offsets: FORM 0..<12, COMM 12..<38, SSND header 38..<46, prefix 46..<54, data 54..<454, ANNO 454..<467.
        func fileError(_ bytes: [UInt8]) -> AudioError.Code? {
            do { _ = try AudioFile(source: MemorySource(bytes)); return nil } catch { return error.code }
        }
        func nanRate(_ se: UInt16, _ m: UInt64) -> [UInt8] {
            var w = ByteWriter(); w.write(se); w.write(m); return w.bytes
        }
        let cases: [(String, [UInt8], AudioError.Code?, AudioError.Code?)] = [
            // name, bytes, AudioFile's code, AudioFileStream's code
            ("empty", [], .unsupportedFileType, .unsupportedFileType),
            ("FORM only", Array(good[..<4]), .unsupportedFileType, .unsupportedFileType),
            ("11 bytes", Array(good[..<11]), .unsupportedFileType, .unsupportedFileType),
            ("header only", Array(good[..<12]), .invalidFile, .invalidFile),
            ("COMM header", Array(good[..<20]), .invalidChunk, .invalidChunk),
            ("inside COMM", Array(good[..<30]), .invalidChunk, .invalidChunk),
            ("inside SSND header", Array(good[..<42]), .invalidFile, .invalidFile),
            ("inside SSND prefix", Array(good[..<50]), .invalidChunk, .invalidChunk),
            ("not AIFF", Array("FORMxxxxWAVE".utf8) + Array(good[12...]), .unsupportedFileType, .unsupportedFileType),
            ("65535 channels", AIFFBuilder.basic(comm: AIFFBuilder.comm(channels: 0xFFFF)), .unsupportedDataFormat, .unsupportedDataFormat),
            ("0 channels", AIFFBuilder.basic(comm: AIFFBuilder.comm(channels: 0)), .unsupportedDataFormat, .unsupportedDataFormat),
            ("0 bits", AIFFBuilder.basic(comm: AIFFBuilder.comm(bits: 0)), .unsupportedDataFormat, .unsupportedDataFormat),
            ("40 bits", AIFFBuilder.basic(comm: AIFFBuilder.comm(bits: 40)), .unsupportedDataFormat, .unsupportedDataFormat),
            ("NaN rate", AIFFBuilder.basic(comm: AIFFBuilder.comm(rate: nanRate(0x7FFF, 0xC000_0000_0000_0000))), .unsupportedDataFormat, .unsupportedDataFormat),
            ("inf rate", AIFFBuilder.basic(comm: AIFFBuilder.comm(rate: nanRate(0x7FFF, 0x8000_0000_0000_0000))), .unsupportedDataFormat, .unsupportedDataFormat),
            ("0 rate", AIFFBuilder.basic(comm: AIFFBuilder.comm(rate: [UInt8](repeating: 0, count: 10))), .unsupportedDataFormat, .unsupportedDataFormat),
            ("negative rate", AIFFBuilder.basic(comm: AIFFBuilder.comm(rate: ByteReader.encodeExtended(-44100))), .unsupportedDataFormat, .unsupportedDataFormat),
            ("short COMM", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", Array(AIFFBuilder.comm()[..<10])), AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd([1, 2, 3, 4]))]), .invalidChunk, .invalidChunk),
            ("COMM of 2 GiB", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm(), size: 0x8000_0000)]), .invalidFile, .invalidFile),
            ("COMM larger than the file", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm(), size: 4000)]), .invalidChunk, .invalidChunk),
            ("SSND of 4 bytes", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm()), AIFFBuilder.chunk("SSND", [0, 0, 0, 0]), AIFFBuilder.chunk("ANNO", Array("abcd".utf8))]), .invalidChunk, .invalidChunk),
            ("SSND offset past its end", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm()), AIFFBuilder.chunk("SSND", [0, 0, 1, 0, 0, 0, 0, 0, 1, 2])]), .invalidChunk, .invalidChunk),
            ("no SSND", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm())]), .invalidFile, .invalidFile),
            ("no COMM", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd([1, 2]))]), .invalidFile, .notOptimized),
            // A skipped chunk that claims more than the file: AudioFile finds no SSND; a stream
            // waits for bytes that never come, without an error, as Apple's does.
            ("ANNO larger than the file", AIFFBuilder.form("AIFF", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm()), AIFFBuilder.chunk("ANNO", Array("ab".utf8), size: 0x7FFF_FFF0), AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd(AIFFBuilder.samples))]), .invalidFile, nil),
        ]
        for (name, bytes, fileCode, streamCode) in cases {
            XCTAssertEqual(fileError(bytes), fileCode, name)
            let r = feed(bytes, pattern: .allAtOnce)
            XCTAssertEqual(r.error?.code, streamCode, "\(name): \(r.error.map { "\($0)" } ?? "no error")")
            XCTAssertTrue(r.packetData.isEmpty, name)
            XCTAssertNil(dripFeedMismatch(bytes), name)
        }
    }

    /// A truncated or oversized SSND is not an error: the packets that are there are read,
    /// never more than COMM's frames, and nothing is allocated by the size fields.
    func testTruncatedAndOversizedSSNDReadWhatIsThere() throws {
        let good = AIFFBuilder.basic()
        // Cut inside the audio data, after 50 whole frames and a half.
        let cut = Array(good[..<(54 + 202)])
        let file = try AudioFile(source: MemorySource(cut))
        XCTAssertEqual(try file.audioDataPacketCount, 50)
        XCTAssertEqual(try Kit.allPackets(file), Array(AIFFBuilder.samples[..<200]))
        let r = feed(cut, pattern: .randomChunks(seed: 5, maximum: 13))
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetData, Array(AIFFBuilder.samples[..<200]))
        XCTAssertNil(dripFeedMismatch(cut))

        // SSND claims 0xFFFFFFF0 bytes: COMM's 100 frames bound it (the ANNO after it is not audio).
        for size: UInt32 in [0xFFFF_FFF0, 0x0010_0000, 409] {
            let big = AIFFBuilder.basic(ssndSize: size)
            let f = try AudioFile(source: MemorySource(big))
            XCTAssertEqual(try f.audioDataPacketCount, 100, "\(size)")
            XCTAssertEqual(try f.audioDataByteCount, 400)
            XCTAssertEqual(try Kit.allPackets(f), AIFFBuilder.samples)
            let s = feed(big, pattern: .allAtOnce)
            XCTAssertNil(s.error)
            XCTAssertEqual(s.packetData, AIFFBuilder.samples)
            XCTAssertEqual(s.audioDataPacketCount, 100)
            XCTAssertNil(dripFeedMismatch(big))
        }
    }

    // MARK: Writing

    struct WriteCase {
        var name: String
        var type: AudioFileTypeID
        var format: StreamDescription
        /// ffprobe's codec_name for the written file.
        var codec: String
        var layout: ChannelLayout? = nil
    }

    static func pcm(_ bits: UInt32, channels: UInt32 = 2, rate: Double = 22050, float: Bool = false, big: Bool = true) -> StreamDescription {
        var f = StreamDescription.pcm(sampleRate: rate, channels: channels, bits: bits, isFloat: float, isBigEndian: big)
        if big { f.formatFlags.insert(.isBigEndian) }
        return f
    }

    static let writeCases: [WriteCase] = [
        WriteCase(name: "AIFF 8", type: .aiff, format: pcm(8, channels: 1), codec: "pcm_s8"),
        WriteCase(name: "AIFF 16", type: .aiff, format: pcm(16), codec: "pcm_s16be"),
        WriteCase(name: "AIFF 24", type: .aiff, format: pcm(24), codec: "pcm_s24be"),
        WriteCase(name: "AIFF 32", type: .aiff, format: pcm(32, rate: 48000), codec: "pcm_s32be"),
        WriteCase(name: "AIFF 12", type: .aiff, format: pcm(12, rate: 11025.5), codec: "pcm_s16be"),
        WriteCase(name: "AIFC NONE", type: .aifc, format: pcm(16), codec: "pcm_s16be"),
        WriteCase(name: "AIFC sowt", type: .aifc, format: pcm(16, big: false), codec: "pcm_s16le"),
        // ffmpeg reads every sowt file as 16-bit, so its codec name is not checked here.
        WriteCase(name: "AIFC sowt 24", type: .aifc, format: pcm(24, big: false), codec: ""),
        WriteCase(name: "AIFC fl32", type: .aifc, format: pcm(32, float: true), codec: "pcm_f32be"),
        WriteCase(name: "AIFC fl64", type: .aifc, format: pcm(64, channels: 1, float: true), codec: "pcm_f64be"),
        WriteCase(name: "AIFC ulaw", type: .aifc, format: StreamDescription(sampleRate: 8000, formatID: .uLaw, bytesPerPacket: 2,
                  framesPerPacket: 1, bytesPerFrame: 2, channelsPerFrame: 2, bitsPerChannel: 8), codec: "pcm_mulaw"),
        WriteCase(name: "AIFC alaw", type: .aifc, format: StreamDescription(sampleRate: 8000, formatID: .aLaw, bytesPerPacket: 1,
                  framesPerPacket: 1, bytesPerFrame: 1, channelsPerFrame: 1, bitsPerChannel: 8), codec: "pcm_alaw"),
        WriteCase(name: "AIFC ima4", type: .aifc, format: StreamDescription(sampleRate: 22050, formatID: .appleIMA4, bytesPerPacket: 68,
                  framesPerPacket: 64, bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0), codec: "adpcm_ima_qt"),
        WriteCase(name: "AIFC 5.1", type: .aifc, format: pcm(16, channels: 6), codec: "pcm_s16be", layout: ChannelLayout(tag: .mpeg5_1_C)),
        WriteCase(name: "AIFF stereo layout", type: .aiff, format: pcm(16), codec: "pcm_s16be", layout: ChannelLayout(tag: .stereo)),
    ]

    /// Create → write → close → reopen: the same format, packets, info, markers and layout;
    /// drip-feed equality on the result; and ffprobe reads it with the right rate, channels and codec.
    func testWriterRoundTrips() throws {
        let dir = makeTemporaryDirectory()
        var info = InfoDictionary()
        info[InfoDictionary.title] = "Round Trip"
        info[InfoDictionary.artist] = "Tonearm"
        info[InfoDictionary.copyright] = "© 2024"
        info[InfoDictionary.comments] = "odd"
        let markers = [AudioFileMarker(framePosition: 0, name: "a", markerID: 1),
                       AudioFileMarker(framePosition: 33, name: "second marker", markerID: 2)]
        for c in AIFFTests.writeCases {
            let path = dir + "/\(c.name.replacingOccurrences(of: " ", with: "_")).aif"
            let packets: Int64 = c.format.formatID == .appleIMA4 ? 7 : 301  // odd: the SSND gets a pad byte
            var g = SeededGenerator(seed: 3)
            var data = (0..<Int(packets) * Int(c.format.bytesPerPacket)).map { _ in UInt8(truncatingIfNeeded: g.next()) }
            if c.format.bitsPerChannel == 12 {  // left-justified: the low 4 bits are zero
                for i in stride(from: 1, to: data.count, by: 2) { data[i] &= 0xF0 }
            }
            let w = try AudioFile.create(path: path, type: c.type, format: c.format, flags: .eraseFile)
            if let layout = c.layout { try w.setProperty(.channelLayout, .channelLayout(layout)) }
            try w.setProperty(.infoDictionary, .info(info))
            try w.setProperty(.markerList, .markers(markers))
            let half = Int(packets / 2)
            try w.writePackets(Array(data[..<(half * Int(c.format.bytesPerPacket))]), count: half, startingAt: 0)
            try w.writePackets(Array(data[(half * Int(c.format.bytesPerPacket))...]), count: Int(packets) - half, startingAt: Int64(half))
            try w.close()

            let bytes = try readWholeFile(path)
            XCTAssertEqual(bytes.count & 1, 0, c.name)
            XCTAssertEqual(ByteReader(bytes).getInteger(at: 4, as: UInt32.self), UInt32(bytes.count - 8), c.name)
            let r = try AudioFile(path: path)
            let p = try r.properties
            XCTAssertEqual(p.fileType, c.type, c.name)
            XCTAssertEqual(p.dataFormat, c.format, c.name)
            XCTAssertEqual(p.audioDataPacketCount, packets, c.name)
            XCTAssertEqual(try Kit.allPackets(r), data, c.name)
            XCTAssertEqual(p.info, info, c.name)
            XCTAssertEqual(p.markers, markers, c.name)
            if let layout = c.layout, layout.tag != .stereo {
                XCTAssertEqual(p.channelLayout, layout, c.name)
                XCTAssertTrue(p.chunkIDs.contains("CHAN"), c.name)
            } else {
                XCTAssertNil(p.channelLayout, c.name)
                XCTAssertFalse(p.chunkIDs.contains("CHAN"), c.name)
            }
            XCTAssertEqual(p.chunkIDs.first, c.type == .aifc ? "FVER" : "COMM", c.name)
            XCTAssertEqual(Array(p.chunkIDs.suffix(6)), ["SSND", "NAME", "AUTH", "(c) ", "ANNO", "MARK"], c.name)
            XCTAssertNil(dripFeedMismatch(bytes), c.name)
            let s = feed(bytes, pattern: .randomChunks(seed: 4, maximum: 100))
            XCTAssertNil(s.error, c.name)
            XCTAssertEqual(s.packetData, data, c.name)
            XCTAssertEqual(s.info, info, c.name)

            _ = try requireTool("ffprobe")
            let probe = try Kit.probe(path)
            if !c.codec.isEmpty { XCTAssertEqual(probe.codec, c.codec, c.name) }
            XCTAssertEqual(probe.channels, Int(c.format.channelsPerFrame), c.name)
            XCTAssertEqual(probe.rate, Int(c.format.sampleRate.rounded()), c.name)
            XCTAssertEqual(probe.tags["title"], "Round Trip", c.name)
        }
    }

    /// ffmpeg decodes what the writer wrote to the samples that went in.
    func testFFmpegDecodesWrittenFilesToTheSource() throws {
        _ = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        let frames = 3001, rate = 22050
        let source = Kit.signal(frames: frames, channels: 2)
        func write(_ name: String, _ type: AudioFileTypeID, _ format: StreamDescription, _ data: [UInt8]) throws -> String {
            let path = dir + "/" + name
            let w = try AudioFile.create(path: path, type: type, format: format, flags: .eraseFile)
            try w.writePackets(data, count: data.count / Int(format.bytesPerPacket), startingAt: 0)
            try w.close()
            return path
        }
        func be(_ v: Int32, bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: v >> (8 * (bytes - 1 - $0))) } }
        let lossless: [(String, AudioFileTypeID, StreamDescription, [UInt8], [Int16])] = [
            ("s16.aiff", .aiff, AIFFTests.pcm(16), source.flatMap { be(Int32($0), bytes: 2) }, source),
            ("s24.aiff", .aiff, AIFFTests.pcm(24), source.flatMap { be(Int32($0) << 8, bytes: 3) }, source),
            ("s32.aiff", .aiff, AIFFTests.pcm(32), source.flatMap { be(Int32($0) << 16, bytes: 4) }, source),
            ("s8.aiff", .aiff, AIFFTests.pcm(8), source.flatMap { be(Int32($0) >> 8, bytes: 1) }, source.map { ($0 >> 8) << 8 }),
            ("sowt.aifc", .aifc, AIFFTests.pcm(16, big: false), Kit.s16le(source), source),
            ("fl32.aifc", .aifc, AIFFTests.pcm(32, float: true), source.flatMap { be(Int32(bitPattern: (Float($0) / 32768).bitPattern), bytes: 4) }, source),
            ("fl64.aifc", .aifc, AIFFTests.pcm(64, float: true), source.flatMap { v -> [UInt8] in
                let b = (Double(v) / 32768).bitPattern
                return (0..<8).map { UInt8(truncatingIfNeeded: b >> (8 * (7 - $0))) }
            }, source),
        ]
        for (name, type, format, data, expected) in lossless {
            let path = try write(name, type, format, data)
            XCTAssertEqual(try Kit.decodeS16(path), expected, name)
        }
        // G.711 and IMA4: packets that ffmpeg encoded, rewritten by Tonearm, decode as ffmpeg's own file does.
        for (codec, ext, id) in [("pcm_mulaw", "ulaw", AudioFormatID.uLaw), ("pcm_alaw", "alaw", .aLaw), ("adpcm_ima_qt", "ima4", .appleIMA4)] {
            let theirs = dir + "/ffmpeg_\(ext).aifc"
            try Kit.encode(source, rate: rate, channels: 2, codec: codec, format: "aiff", to: theirs)
            let file = try AudioFile(path: theirs)
            let format = try file.dataFormat
            XCTAssertEqual(format.formatID, id)
            let ours = try write("tonearm_\(ext).aifc", .aifc, format, try Kit.allPackets(file))
            let decoded = try Kit.decodeS16(ours)
            XCTAssertEqual(decoded, try Kit.decodeS16(theirs), ext)
            XCTAssertEqual(decoded.count, (id == .appleIMA4 ? (frames + 63) / 64 * 64 : frames) * 2, ext)
            XCTAssertEqual(try AudioFile(path: ours).audioDataPacketCount, try file.audioDataPacketCount, ext)
        }
    }

    func testWriterRejectsWhatAIFFCannotHold() {
        let cases: [(AudioFileTypeID, StreamDescription)] = [
            (.aiff, AIFFTests.pcm(32, float: true)),
            (.aiff, AIFFTests.pcm(16, big: false)),
            (.aifc, AIFFTests.pcm(32, float: true, big: false)),
            (.aiff, .pcm(sampleRate: 44100, channels: 2, bits: 8, isSigned: false)),
            (.aiff, .pcm(sampleRate: 44100, channels: 2, bits: 24, isBigEndian: true, bytesPerSample: 4)),
            (.aiff, StreamDescription(sampleRate: 8000, formatID: .uLaw, bytesPerPacket: 1, framesPerPacket: 1, bytesPerFrame: 1,
                                      channelsPerFrame: 1, bitsPerChannel: 8)),
            (.aifc, StreamDescription(sampleRate: 44100, formatID: .mpeg4AAC, bytesPerPacket: 0, framesPerPacket: 1024,
                                      bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)),
            (.aifc, StreamDescription(sampleRate: 44100, formatID: .appleIMA4, bytesPerPacket: 34, framesPerPacket: 64,
                                      bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)),
        ]
        let path = makeTemporaryDirectory() + "/reject.aif"
        for (type, format) in cases {
            XCTAssertThrowsError(try AudioFile.create(path: path, type: type, format: format, flags: .eraseFile), "\(type) \(format)") {
                XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat, "\(type) \(format)")
            }
        }
    }

    /// An empty file still has a COMM and an SSND, and reads back with 0 packets.
    func testEmptyWrittenFile() throws {
        let path = makeTemporaryDirectory() + "/empty.aiff"
        let w = try AudioFile.create(path: path, type: .aiff, format: AIFFTests.pcm(16), flags: .eraseFile)
        try w.close()
        let r = try AudioFile(path: path)
        XCTAssertEqual(try r.audioDataPacketCount, 0)
        XCTAssertEqual(try r.dataOffset, 12 + 26 + 16)
        XCTAssertEqual(try readWholeFile(path).count, 12 + 26 + 16)
    }

    func testRegistry() throws {
        let aiff = try XCTUnwrap(FormatRegistry.info(for: .aiff))
        XCTAssertEqual(aiff.name, "AIFF")
        XCTAssertEqual(aiff.extensions, ["aif", "aiff"])
        XCTAssertEqual(aiff.mimeTypes, ["audio/aiff", "audio/x-aiff"])
        XCTAssertEqual(aiff.utis, ["public.aiff-audio"])
        XCTAssertEqual(aiff.hfsTypeCodes, ["AIFF"])
        XCTAssertEqual(aiff.writableFormats, [.linearPCM])
        XCTAssertTrue(aiff.isWritable)
        let aifc = try XCTUnwrap(FormatRegistry.info(for: .aifc))
        XCTAssertEqual(aifc.name, "AIFC")
        XCTAssertEqual(aifc.extensions, ["aifc", "aif", "aiff"])
        XCTAssertTrue(aifc.mimeTypes.contains("audio/x-aifc"))
        XCTAssertEqual(aifc.utis, ["public.aifc-audio"])
        XCTAssertEqual(aifc.hfsTypeCodes, ["AIFC"])
        XCTAssertEqual(Set(aifc.writableFormats), [.linearPCM, .uLaw, .aLaw, .appleIMA4])
        XCTAssertEqual(FormatRegistry.types(forExtension: "aifc"), [.aifc])
        XCTAssertEqual(Set(FormatRegistry.types(forExtension: "AIF")), [.aiff, .aifc])
        XCTAssertEqual(FormatRegistry.types(forUTI: "public.aifc-audio"), [.aifc])
        XCTAssertEqual(FormatRegistry.probe(AIFFBuilder.basic()), .match(.aiff))
        // The magic wins over a hint: an AIFC opened with an AIFF hint is AIFC.
        let aifcBytes = AIFFBuilder.form("AIFC", [AIFFBuilder.chunk("COMM", AIFFBuilder.comm(compression: "NONE")),
                                                  AIFFBuilder.chunk("SSND", AIFFBuilder.ssnd(AIFFBuilder.samples))])
        XCTAssertEqual(try AudioFile(source: MemorySource(aifcBytes), fileTypeHint: .aiff).fileType, .aifc)
        XCTAssertEqual(feed(aifcBytes, pattern: .allAtOnce, hint: .aiff).packetData, AIFFBuilder.samples)
    }
}

extension AIFFBuilder {
    static func pstring(_ s: String) -> [UInt8] {
        var p = [UInt8(s.utf8.count)] + Array(s.utf8)
        if p.count & 1 == 1 { p.append(0) }
        return p
    }
}

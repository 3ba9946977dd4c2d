import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

// MARK: - Helpers shared by CAFTests and Wave64Tests

/// Oracle tools, golden files and packet collection for the CAF and Wave64 tests.
enum CAFW64Kit {
    /// Runs a tool from PATH and returns its exit status and standard output, or nil when
    /// the tool is missing.
    static func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: [UInt8])? {
        guard let path = which(tool) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = Foundation.FileHandle.nullDevice
        process.standardInput = Foundation.FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, [UInt8](data))
    }

    /// Runs ffmpeg quietly; true when it succeeded.
    @discardableResult
    static func ffmpeg(_ arguments: [String]) -> Bool {
        run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-y"] + arguments)?.status == 0
    }

    /// ffmpeg's decoding of a file to interleaved signed 16-bit little-endian samples.
    static func decodeS16(_ path: String, inputOptions: [String] = []) -> [UInt8]? {
        guard let r = run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-bitexact"] + inputOptions
            + ["-i", path, "-f", "s16le", "-"]), r.status == 0 else { return nil }
        return r.output
    }

    /// ffprobe's streams, format and (optionally) packets of a file as JSON.
    static func ffprobe(_ path: String, packets: Bool = false) -> [String: Any]? {
        var args = ["-v", "error", "-of", "json", "-show_streams", "-show_format"]
        if packets { args.append("-show_packets") }
        guard let r = run("ffprobe", args + [path]), r.status == 0 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(r.output))) as? [String: Any]
    }

    static func json(_ path: String) -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// An integer from a JSON value that may be a number or a numeric string.
    static func int(_ v: Any?) -> Int64? {
        if let n = v as? NSNumber { return n.int64Value }
        if let s = v as? String { return Int64(s) }
        return nil
    }

    /// A deterministic signal: a sine per channel plus pseudo-random noise, as 16-bit samples.
    static func samples(frames: Int, channels: Int, seed: UInt64 = 7) -> [Int16] {
        var g = SeededGenerator(seed: seed)
        var out: [Int16] = []
        out.reserveCapacity(frames * channels)
        for i in 0..<frames {
            for c in 0..<channels {
                let s = 12000 * sin(2 * Double.pi * Double(440 + 220 * c) * Double(i) / 22050)
                out.append(Int16(clamping: Int(s) + Int(g.next() % 2001) - 1000))
            }
        }
        return out
    }

    /// What a reader gave for the packets: their bytes, sizes and variable frame counts.
    struct Packets: Equatable, CustomStringConvertible {
        var data: [UInt8] = []
        var sizes: [Int] = []
        var frames: [UInt32] = []
        var description: String { "\(sizes.count) packets, \(data.count) bytes" }
    }

    /// Every packet, read with `readPacketData` a few at a time.
    static func filePackets(_ file: AudioFile, batch: Int = 37) throws -> Packets {
        var p = Packets()
        let total = try file.audioDataPacketCount
        let bpp = Int(try file.dataFormat.bytesPerPacket)
        var start: Int64 = 0
        while start < total {
            let (data, descriptions) = try file.readPacketData(startingAt: start, count: batch)
            p.data += data
            if let descriptions {
                for d in descriptions {
                    p.sizes.append(Int(d.dataByteSize))
                    p.frames.append(d.variableFramesInPacket)
                }
                start += Int64(descriptions.count)
            } else {
                let n = data.count / bpp
                p.sizes += repeatElement(bpp, count: n)
                p.frames += repeatElement(0, count: n)
                start += Int64(n)
            }
        }
        return p
    }

    /// The packets an ``AudioFileStream`` gave, fed all at once.
    static func streamPackets(_ bytes: [UInt8], hint: AudioFileTypeID? = nil) -> (Packets, StreamRecord) {
        let r = feed(bytes, pattern: .allAtOnce, hint: hint)
        return (Packets(data: r.packetData, sizes: r.packetSizes, frames: r.packetFrames), r)
    }

    /// The error a body throws, or nil.
    static func error(_ body: () throws(AudioError) -> Void) -> AudioError? {
        do { try body() } catch { return error }
        return nil
    }

    /// The error opening bytes with ``AudioFile`` gives, or nil.
    static func openError(_ bytes: [UInt8], hint: AudioFileTypeID? = nil) -> AudioError? {
        error { () throws(AudioError) in _ = try AudioFile(source: MemorySource(bytes), fileTypeHint: hint) }
    }

    /// The chunks of a CAF file: type, header offset, and the body.
    static func cafChunks(_ bytes: [UInt8]) -> [(id: String, offset: Int, body: [UInt8])] {
        var out: [(String, Int, [UInt8])] = []
        var i = 8
        while i + 12 <= bytes.count {
            let id = String(decoding: bytes[i..<i + 4], as: UTF8.self)
            var size: Int64 = 0
            for k in 0..<8 { size = size << 8 | Int64(bytes[i + 4 + k]) }
            let end = size < 0 ? bytes.count : min(bytes.count, i + 12 + Int(size))
            out.append((id, i, Array(bytes[(i + 12)..<end])))
            i = end
        }
        return out
    }

    /// A CAF file made of the given chunks; a nil size writes -1.
    static func caf(_ chunks: [(String, [UInt8], Int64?)]) -> [UInt8] {
        var w = ByteWriter()
        w.write(FourCC("caff"))
        w.write(UInt16(1))
        w.write(UInt16(0))
        for (id, body, size) in chunks {
            w.write(FourCC(id))
            w.write(size ?? -1)
            w.write(body)
        }
        return w.bytes
    }

    /// A 'desc' body.
    static func desc(rate: Double, format: String, flags: UInt32 = 0, bytesPerPacket: UInt32, framesPerPacket: UInt32,
                     channels: UInt32, bits: UInt32) -> [UInt8]
    {
        var w = ByteWriter()
        w.writeFloat64(rate)
        w.write(FourCC(format))
        w.write(flags)
        w.write(bytesPerPacket)
        w.write(framesPerPacket)
        w.write(channels)
        w.write(bits)
        return w.bytes
    }

    static func int16Bytes(_ samples: [Int16], bigEndian: Bool = false) -> [UInt8] {
        var w = ByteWriter()
        for s in samples { w.write(s, bigEndian ? .big : .little) }
        return w.bytes
    }
}

/// One PCM-family file and what it must read as.
struct CAFW64Case {
    var path: String
    var fileType: String
    var formatID: String
    var sampleRate: Double
    var channels: Int
    var frames: Int64
    /// From the golden's header section, when there is one.
    var dataOffset: Int64?
    var dataSize: Int64?
}

extension CAFW64Kit {
    /// The committed fixtures with this extension and their goldens; when there are none,
    /// equivalent files made now with ffmpeg (empty when ffmpeg is missing too).
    static func cases(extension ext: String, fallback: [(name: String, args: [String], pipe: Bool, type: String, format: String)])
        -> [CAFW64Case]
    {
        if let cached = casesCache[ext] { return cached }
        let found = findCases(extension: ext, fallback: fallback)
        casesCache[ext] = found
        return found
    }

    /// The cases found or made so far, by extension (made files are made once per run).
    nonisolated(unsafe) private static var casesCache: [String: [CAFW64Case]] = [:]

    private static func findCases(extension ext: String,
                                  fallback: [(name: String, args: [String], pipe: Bool, type: String, format: String)])
        -> [CAFW64Case]
    {
        var out: [CAFW64Case] = []
        for path in fixtureFiles("pcm", extensions: [ext]) {
            let base = String(path.dropLast(ext.count + 1))
            guard let g = json(base + ".json"), let expected = g["expected"] as? [String: Any] else { continue }
            let header = g["header"] as? [String: Any]
            out.append(CAFW64Case(path: path, fileType: expected["fileType"] as? String ?? "",
                                     formatID: expected["formatID"] as? String ?? "",
                                     sampleRate: (g["sampleRate"] as? NSNumber)?.doubleValue ?? 0,
                                     channels: Int(int(g["channels"]) ?? 0), frames: int(g["frames"]) ?? -1,
                                     dataOffset: int(header?["dataOffset"]), dataSize: int(header?["dataSize"])))
        }
        if !out.isEmpty || which("ffmpeg") == nil { return out }
        let dir = makeTemporaryDirectory()
        let source = dir + "/source.wav"
        guard ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050,atrim=end_sample=5513", "-ac", "2",
                      "-c:a", "pcm_s16le", source]) else { return [] }
        for f in fallback {
            let path = dir + "/" + f.name
            if f.pipe {
                guard let r = run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-i", source, "-fflags", "+bitexact"]
                    + f.args + ["-"]), r.status == 0, (try? writeWholeFile(path, r.output)) != nil else { continue }
            } else {
                guard ffmpeg(["-i", source, "-fflags", "+bitexact"] + f.args + [path]) else { continue }
            }
            guard let s16 = decodeS16(path) else { continue }
            out.append(CAFW64Case(path: path, fileType: f.type, formatID: f.format, sampleRate: 22050, channels: 2,
                                     frames: Int64(s16.count / 4)))
        }
        return out
    }

    /// The checks every PCM-family file passes: type, format, counts against the golden,
    /// drip-feed equality, and AudioFile's packets equal to AudioFileStream's.
    static func checkCase(_ c: CAFW64Case, file: StaticString = #filePath, line: UInt = #line) throws {
        let name = c.path.split(separator: "/").last.map(String.init) ?? c.path
        let f = try AudioFile(path: c.path)
        XCTAssertEqual(try f.fileType, AudioFileTypeID(FourCC(c.fileType)), name, file: file, line: line)
        let format = try f.dataFormat
        XCTAssertEqual(format.formatID, AudioFormatID(FourCC(c.formatID)), name, file: file, line: line)
        XCTAssertEqual(format.sampleRate, c.sampleRate, name, file: file, line: line)
        XCTAssertEqual(Int(format.channelsPerFrame), c.channels, name, file: file, line: line)
        XCTAssertEqual(try f.audioDataPacketCount * Int64(format.framesPerPacket), c.frames, name, file: file, line: line)
        if let d = c.dataOffset { XCTAssertEqual(try f.dataOffset, d, name, file: file, line: line) }
        if let d = c.dataSize { XCTAssertEqual(try f.audioDataByteCount, d, name, file: file, line: line) }

        let bytes = try readWholeFile(c.path)
        XCTAssertNil(dripFeedMismatch(bytes), name, file: file, line: line)
        let fromFile = try filePackets(f)
        let (fromStream, record) = streamPackets(bytes)
        XCTAssertNil(record.error, name, file: file, line: line)
        XCTAssertEqual(fromFile, fromStream, name, file: file, line: line)
        XCTAssertEqual(Int64(fromFile.sizes.count), try f.audioDataPacketCount, name, file: file, line: line)
        XCTAssertEqual(record.dataFormat, format, name, file: file, line: line)
        XCTAssertEqual(record.dataOffset, try f.dataOffset, name, file: file, line: line)
    }
}

// MARK: - CAF

final class CAFTests: XCTestCase {
    typealias Kit = CAFW64Kit

    static let fallback: [(name: String, args: [String], pipe: Bool, type: String, format: String)] = [
        ("caf_s16le.caf", ["-c:a", "pcm_s16le", "-f", "caf"], false, "caff", "lpcm"),
        ("caf_f32be.caf", ["-c:a", "pcm_f32be", "-f", "caf"], false, "caff", "lpcm"),
        ("caf_s24be.caf", ["-c:a", "pcm_s24be", "-f", "caf"], false, "caff", "lpcm"),
        ("caf_ulaw.caf", ["-c:a", "pcm_mulaw", "-f", "caf"], false, "caff", "ulaw"),
        ("caf_alaw.caf", ["-c:a", "pcm_alaw", "-f", "caf"], false, "caff", "alaw"),
        ("caf_ima4.caf", ["-c:a", "adpcm_ima_qt", "-f", "caf"], false, "caff", "ima4"),
        ("caf_streamed.caf", ["-c:a", "pcm_s16le", "-f", "caf"], true, "caff", "lpcm"),
    ]

    func testRegistry() throws {
        let info = try XCTUnwrap(FormatRegistry.info(for: .caf))
        XCTAssertEqual(info.name, "CAF")
        XCTAssertEqual(info.extensions, ["caf"])
        XCTAssertEqual(info.mimeTypes, ["audio/x-caf"])
        XCTAssertEqual(info.utis, ["com.apple.coreaudio-format"])
        XCTAssertEqual(info.hfsTypeCodes, [FourCC("caff")])
        XCTAssertEqual(info.writableFormats, [.linearPCM, .uLaw, .aLaw, .appleIMA4, .mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .appleLossless, .flac, .opus])
        XCTAssertTrue(info.isWritable)
        XCTAssertEqual(FormatRegistry.types(forExtension: "CAF"), [.caf])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/x-caf"), [.caf])
        XCTAssertEqual(FormatRegistry.types(forUTI: "com.apple.coreaudio-format"), [.caf])
    }

    func testFixtures() throws {
        let cases = Kit.cases(extension: "caf", fallback: CAFTests.fallback)
        guard !cases.isEmpty else { throw skipOrFail("no CAF fixtures and no ffmpeg to make them") }
        for c in cases { try Kit.checkCase(c) }
    }

    /// CAF's PCM flags (1 = float, 2 = little-endian) become Apple's in-memory flags.
    func testDescriptionFlags() throws {
        let cases = Kit.cases(extension: "caf", fallback: CAFTests.fallback)
        guard !cases.isEmpty else { throw skipOrFail("no CAF fixtures and no ffmpeg to make them") }
        func check(_ name: String, _ body: (StreamDescription, CAFW64Case) throws -> Void) throws {
            guard let c = cases.first(where: { $0.path.hasSuffix("/" + name) }) else { return XCTFail("no case \(name)") }
            try body(try AudioFile(path: c.path).dataFormat, c)
        }
        try check("caf_s16le.caf") { f, c in
            XCTAssertEqual(f, .pcm(sampleRate: c.sampleRate, channels: UInt32(c.channels), bits: 16))
            XCTAssertEqual(f.formatFlags.rawValue, 0xC)  // signed, packed
        }
        try check("caf_s24be.caf") { f, c in
            XCTAssertEqual(f.formatFlags.rawValue, 0xE)  // big-endian, signed, packed
            XCTAssertEqual(f.bytesPerFrame, 3 * UInt32(c.channels))
            XCTAssertEqual(f.bytesPerPacket, 3 * UInt32(c.channels))
            XCTAssertEqual(f.bitsPerChannel, 24)
        }
        try check("caf_f32be.caf") { f, c in
            XCTAssertEqual(f.formatFlags.rawValue, 0xB)  // float, big-endian, packed
            XCTAssertEqual(f.bytesPerFrame, 4 * UInt32(c.channels))
        }
        try check("caf_ulaw.caf") { f, c in
            let n = UInt32(c.channels)
            XCTAssertEqual(f, StreamDescription(sampleRate: c.sampleRate, formatID: .uLaw, bytesPerPacket: n, framesPerPacket: 1,
                                                bytesPerFrame: n, channelsPerFrame: n, bitsPerChannel: 8))
        }
        if let c = cases.first(where: { $0.path.hasSuffix("/caf_ima4.caf") }) {
            let file = try AudioFile(path: c.path)
            let f = try file.dataFormat
            XCTAssertEqual(f.bytesPerPacket, 34 * UInt32(c.channels))
            XCTAssertEqual(f.framesPerPacket, 64)
            XCTAssertEqual(f.bytesPerFrame, 0)
            XCTAssertEqual(try file.channelLayout, ChannelLayout(tag: c.channels == 2 ? .stereo : .mono))
            XCTAssertEqual(try file.maximumPacketSize, 34 * UInt32(c.channels))
        }
    }

    /// A data chunk of size -1 runs to the end of the file.
    func testStreamedDataSizeMinusOne() throws {
        let cases = Kit.cases(extension: "caf", fallback: CAFTests.fallback)
        guard let c = cases.first(where: { $0.path.hasSuffix("/caf_streamed.caf") }) else {
            throw skipOrFail("no streamed CAF fixture and no ffmpeg to make one")
        }
        let bytes = try readWholeFile(c.path)
        let chunks = Kit.cafChunks(bytes)
        let data = try XCTUnwrap(chunks.last)
        XCTAssertEqual(data.id, "data")
        XCTAssertEqual(Array(bytes[data.offset + 4..<data.offset + 12]), [UInt8](repeating: 0xFF, count: 8))
        let f = try AudioFile(path: c.path)
        let dataOffset = Int64(data.offset + 16)
        XCTAssertEqual(try f.dataOffset, dataOffset)
        XCTAssertEqual(try f.audioDataByteCount, Int64(bytes.count) - dataOffset)
        let bpp = Int64(try f.dataFormat.bytesPerPacket)
        XCTAssertEqual(try f.audioDataPacketCount, (Int64(bytes.count) - dataOffset) / bpp)
        XCTAssertEqual(try f.audioDataPacketCount, c.frames)
        // A stream cannot know the byte count, but hands out every packet.
        let (packets, record) = Kit.streamPackets(bytes)
        XCTAssertNil(record.error)
        XCTAssertNil(record.audioDataByteCount)
        XCTAssertEqual(packets, try Kit.filePackets(f))
    }

    // MARK: Packet tables

    /// Makes a VBR CAF with ffmpeg (ALAC; ffmpeg puts 'pakt' after 'data').
    private func makeVBR(_ name: String, codec: String, seconds: String = "2", channels: Int = 2,
                         rate: Int = 44100) throws -> String
    {
        _ = try requireTool("ffmpeg")
        _ = try requireTool("ffprobe")
        let path = makeTemporaryDirectory() + "/" + name
        let noise = "aevalsrc=exprs='0.4*sin(2*PI*440*t)+0.2*(2*random(0)-1)':s=\(rate):d=\(seconds)"
        guard Kit.ffmpeg(["-f", "lavfi", "-i", noise, "-ac", String(channels), "-c:a", codec, "-fflags", "+bitexact", path]) else {
            throw skipOrFail("ffmpeg cannot write \(codec) into CAF")
        }
        return path
    }

    /// Checks a VBR CAF against ffprobe: the packet count, each packet's position and size,
    /// and the frame count from 'pakt'.
    private func checkAgainstFFprobe(_ path: String, file f: AudioFile) throws {
        let probe = try XCTUnwrap(Kit.ffprobe(path, packets: true))
        let stream = try XCTUnwrap((probe["streams"] as? [[String: Any]])?.first)
        let packets = try XCTUnwrap(probe["packets"] as? [[String: Any]])
        XCTAssertEqual(try f.audioDataPacketCount, Int64(packets.count))
        let info = try XCTUnwrap(try f.packetTableInfo)
        // ffmpeg's CAF reader takes valid + priming + remainder as the stream's frame count.
        XCTAssertEqual(info.totalFrames, Kit.int(stream["nb_frames"]) ?? Kit.int(stream["duration_ts"]))
        let table = try XCTUnwrap(try f.properties.packetTable)
        let dataOffset = try f.dataOffset
        XCTAssertEqual(table.count, packets.count)
        for (d, p) in zip(table, packets) {
            XCTAssertEqual(dataOffset + d.startOffset, Kit.int(p["pos"]))
            XCTAssertEqual(Int64(d.dataByteSize), Kit.int(p["size"]))
        }
        XCTAssertEqual(try f.maximumPacketSize, UInt32(packets.compactMap { Kit.int($0["size"]) }.max() ?? 0))
    }

    func testPacketTableAfterData() throws {
        let path = try makeVBR("alac.caf", codec: "alac")
        let bytes = try readWholeFile(path)
        XCTAssertEqual(Kit.cafChunks(bytes).map(\.id).suffix(2), ["data", "pakt"])
        let f = try AudioFile(path: path)
        let format = try f.dataFormat
        XCTAssertEqual(format.formatID, .appleLossless)
        XCTAssertEqual(format.bytesPerPacket, 0)
        XCTAssertEqual(format.framesPerPacket, 4096)
        XCTAssertEqual(format.channelsPerFrame, 2)
        XCTAssertEqual(format.sampleRate, 44100)
        XCTAssertNotNil(try f.magicCookie)
        XCTAssertFalse(try f.properties.isOptimized)
        let info = try XCTUnwrap(try f.packetTableInfo)
        // 88200 frames in packets of 4096: 22 packets; ffmpeg writes priming 0, remainder 0.
        XCTAssertEqual(try f.audioDataPacketCount, 22)
        XCTAssertEqual(info, PacketTableInfo(numberValidFrames: 22 * 4096, primingFrames: 0, remainderFrames: 0))
        try checkAgainstFFprobe(path, file: f)

        // A push stream cannot go back for the table: 'optm', the same in every pattern.
        let record = feed(bytes, pattern: .allAtOnce)
        XCTAssertEqual(record.error?.code, .notOptimized)
        XCTAssertTrue(record.packetSizes.isEmpty)
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    /// The same file with 'pakt' moved before 'data' streams, and its packets are AudioFile's.
    func testPacketTableBeforeDataStreams() throws {
        let path = try makeVBR("alac.caf", codec: "alac")
        let bytes = try readWholeFile(path)
        let chunks = Kit.cafChunks(bytes)
        let data = try XCTUnwrap(chunks.first { $0.id == "data" })
        let pakt = try XCTUnwrap(chunks.first { $0.id == "pakt" })
        var reordered = Kit.caf(chunks.filter { $0.id != "data" && $0.id != "pakt" }.map { ($0.id, $0.body, Int64($0.body.count)) })
        reordered += Kit.caf([("pakt", pakt.body, Int64(pakt.body.count)), ("data", data.body, Int64(data.body.count))]).dropFirst(8)

        let original = try Kit.filePackets(AudioFile(path: path))
        let f = try AudioFile(source: MemorySource(reordered))
        XCTAssertTrue(try f.properties.isOptimized)
        let fromFile = try Kit.filePackets(f)
        XCTAssertEqual(fromFile, original)
        let (fromStream, record) = Kit.streamPackets(reordered)
        XCTAssertNil(record.error)
        XCTAssertEqual(fromStream, fromFile)
        XCTAssertEqual(fromStream.sizes.count, 22)
        XCTAssertNil(dripFeedMismatch(reordered))
        // Seeking in the stream is exact with a packet table.
        var seen: [AudioFilePropertyID] = []
        let stream = AudioFileStream(propertyListener: { _, id, _ in seen.append(id) }, packets: { _, _, _, _ in })
        try stream.parse(reordered)
        XCTAssertTrue(seen.contains(.packetTableInfo))
        let (offset, flags) = try stream.seek(toPacket: 5)
        XCTAssertEqual(offset, Int64(fromFile.sizes.prefix(5).reduce(0, +)))
        XCTAssertEqual(flags, [])
    }

    /// Opus in CAF has constant frames per packet (960) and variable sizes.
    func testOpusPacketTable() throws {
        let path = try makeVBR("opus.caf", codec: "libopus", seconds: "1", channels: 1, rate: 48000)
        let f = try AudioFile(path: path)
        let format = try f.dataFormat
        XCTAssertEqual(format.formatID, .opus)
        XCTAssertEqual(format.framesPerPacket, 960)
        try checkAgainstFFprobe(path, file: f)
    }

    // MARK: Damaged input

    private var pcmDesc: [UInt8] {
        Kit.desc(rate: 22050, format: "lpcm", flags: 2, bytesPerPacket: 4, framesPerPacket: 1, channels: 2, bits: 16)
    }

    private func pcmFile(frames: Int = 100) -> [UInt8] {
        let audio = Kit.int16Bytes(Kit.samples(frames: frames, channels: 2))
        let data = [0, 0, 0, 0] + audio
        return Kit.caf([("desc", pcmDesc, 32), ("chan", [0, 0x65, 0, 2] + [UInt8](repeating: 0, count: 8), 12),
                        ("data", data, Int64(data.count))])
    }

    /// Both paths fail with the same code; the stream fails the same way in every pattern.
    private func assertFails(_ bytes: [UInt8], _ code: AudioError.Code, category: AudioError.Category? = nil,
                             file: StaticString = #filePath, line: UInt = #line)
    {
        let e = Kit.openError(bytes)
        XCTAssertEqual(e?.code, code, "AudioFile: \(e.map { "\($0)" } ?? "no error")", file: file, line: line)
        if let category { XCTAssertEqual(e?.category, category, file: file, line: line) }
        let r = feed(bytes, pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, code, "AudioFileStream: \(r.error.map { "\($0)" } ?? "no error")", file: file, line: line)
        XCTAssertNil(dripFeedMismatch(bytes), file: file, line: line)
    }

    func testHandMadeFile() throws {
        let bytes = pcmFile(frames: 100)
        let f = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try f.dataOffset, 92)
        XCTAssertEqual(try f.audioDataPacketCount, 100)
        XCTAssertEqual(try f.audioDataByteCount, 400)
        XCTAssertEqual(try f.channelLayout, ChannelLayout(tag: .stereo))
        XCTAssertEqual(try f.properties.chunkIDs, ["desc", "chan", "data"])
        XCTAssertEqual(try f.readPacketData(startingAt: 0, count: 100).data, Array(bytes[92...]))
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    func testEmptyFile() {
        XCTAssertEqual(Kit.openError([])?.code, .unsupportedFileType)
        XCTAssertEqual(feed([], pattern: .allAtOnce).error?.code, .unsupportedFileType)
        XCTAssertEqual(feed([], pattern: .allAtOnce, hint: .caf).error?.code, .invalidFile)
    }

    func testTruncation() throws {
        let bytes = pcmFile(frames: 100)
        // desc body 20..<52, chan header 52..<64, chan body ..<76, data header ..<88, edit count ..<92.
        assertFails(Array(bytes[0..<6]), .invalidFile)  // inside the file header
        assertFails(Array(bytes[0..<15]), .invalidFile)  // inside desc's header: no data chunk
        assertFails(Array(bytes[0..<30]), .invalidChunk)  // inside desc
        assertFails(Array(bytes[0..<58]), .invalidFile)  // inside chan's header
        assertFails(Array(bytes[0..<70]), .invalidChunk)  // inside chan
        assertFails(Array(bytes[0..<90]), .invalidChunk)  // inside the edit count
        // Inside the audio: the whole packets that are there.
        for (cut, packets) in [(92, 0), (93, 0), (92 + 4 * 37, 37), (92 + 4 * 37 + 3, 37), (bytes.count - 1, 99)] {
            let t = Array(bytes[0..<cut])
            let f = try AudioFile(source: MemorySource(t))
            XCTAssertEqual(try f.audioDataPacketCount, Int64(packets), "cut at \(cut)")
            XCTAssertEqual(try f.audioDataByteCount, Int64(cut - 92), "cut at \(cut)")
            XCTAssertEqual(try Kit.filePackets(f).data, Array(t[92..<(92 + 4 * packets)]), "cut at \(cut)")
            let (s, record) = Kit.streamPackets(t)
            XCTAssertEqual(s.sizes.count, packets, "cut at \(cut)")
            XCTAssertEqual(s.data, Array(t[92..<(92 + 4 * packets)]), "cut at \(cut)")
            // A partial last packet is dropped, and the stream ends without an error.
            XCTAssertNil(record.error, "cut at \(cut)")
            XCTAssertNil(dripFeedMismatch(t), "cut at \(cut)")
        }
    }

    func testBadDescriptions() {
        func file(_ desc: [UInt8]) -> [UInt8] {
            Kit.caf([("desc", desc, Int64(desc.count)), ("data", [0, 0, 0, 0, 1, 2, 3, 4], 8)])
        }
        let zeroChannels = Kit.desc(rate: 44100, format: "lpcm", flags: 2, bytesPerPacket: 4, framesPerPacket: 1, channels: 0, bits: 16)
        assertFails(file(zeroChannels), .unsupportedDataFormat)
        let nanRate = Kit.desc(rate: .nan, format: "lpcm", flags: 2, bytesPerPacket: 4, framesPerPacket: 1, channels: 2, bits: 16)
        assertFails(file(nanRate), .unsupportedDataFormat)
        let infiniteRate = Kit.desc(rate: .infinity, format: "ulaw", bytesPerPacket: 1, framesPerPacket: 1, channels: 1, bits: 8)
        assertFails(file(infiniteRate), .unsupportedDataFormat)
        let hugePCM = Kit.desc(rate: 44100, format: "lpcm", flags: 2, bytesPerPacket: 0xFFFF_FFF0, framesPerPacket: 1, channels: 2, bits: 16)
        assertFails(file(hugePCM), .unsupportedDataFormat)
        let hugePackets = Kit.desc(rate: 44100, format: "ima4", bytesPerPacket: 0x8000_0000, framesPerPacket: 64, channels: 1, bits: 0)
        assertFails(file(hugePackets), .unsupportedDataFormat)
        let mismatched = Kit.desc(rate: 44100, format: "lpcm", flags: 2, bytesPerPacket: 3, framesPerPacket: 1, channels: 2, bits: 16)
        assertFails(file(mismatched), .unsupportedDataFormat)
        let float24 = Kit.desc(rate: 44100, format: "lpcm", flags: 3, bytesPerPacket: 6, framesPerPacket: 1, channels: 2, bits: 24)
        assertFails(file(float24), .unsupportedDataFormat)
        assertFails(file(Array(zeroChannels.prefix(20))), .invalidChunk)  // a short desc
    }

    func testBadStructure() {
        let desc = pcmDesc
        let data: [UInt8] = [0, 0, 0, 0, 1, 2, 3, 4]
        // Not a CAF: version 2, and a file whose first chunk is not desc.
        var v2 = Kit.caf([("desc", desc, 32), ("data", data, 8)])
        v2[5] = 2
        assertFails(v2, .unsupportedFileType)
        assertFails(Kit.caf([("free", [0, 0], 2), ("desc", desc, 32), ("data", data, 8)]), .invalidFile)
        // No data chunk at all.
        assertFails(Kit.caf([("desc", desc, 32), ("free", [0, 0], 2)]), .invalidFile)
        // A data chunk too small for its edit count, and one with a negative size.
        assertFails(Kit.caf([("desc", desc, 32), ("data", [0, 0], 2)]), .invalidChunk)
        assertFails(Kit.caf([("desc", desc, 32), ("data", data, -5)]), .invalidChunk)
        // A chunk too large to be believed.
        assertFails(Kit.caf([("desc", desc, 32), ("free", [], Int64.max), ("data", data, 8)]), .invalidChunk)
    }

    func testHugeMetadataChunks() {
        let desc = pcmDesc
        let data: [UInt8] = [0, 0, 0, 0, 1, 2, 3, 4]
        for id in ["kuki", "info", "chan", "pakt"] {
            // 2^62 bytes: no chunk is believed that large ('chk?').
            assertFails(Kit.caf([("desc", desc, 32), (id, [0, 0, 0, 1], 1 << 62), ("data", data, 8)]), .invalidChunk)
            // 2^40 bytes: more than a metadata chunk may take (a limit error, 'dta?').
            assertFails(Kit.caf([("desc", desc, 32), (id, [0, 0, 0, 1], 1 << 40), ("data", data, 8)]), .invalidFile, category: .limit)
        }
        // An info chunk whose count claims more entries than it has bytes for.
        assertFails(Kit.caf([("desc", desc, 32), ("info", [0xFF, 0xFF, 0xFF, 0xFF, 0x61, 0], 6), ("data", data, 8)]), .invalidChunk)
        // A chan chunk claiming 2^32 - 1 descriptions.
        assertFails(Kit.caf([("desc", desc, 32), ("chan", [0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF], 12), ("data", data, 8)]),
                    .invalidChunk)
    }

    func testBadPacketTables() {
        let alac = Kit.desc(rate: 44100, format: "alac", bytesPerPacket: 0, framesPerPacket: 4096, channels: 2, bits: 0)
        func pakt(packets: Int64, entries: [UInt8]) -> [UInt8] {
            var w = ByteWriter()
            w.write(packets)
            w.write(packets * 4096)
            w.write(Int32(0))
            w.write(Int32(0))
            w.write(entries)
            return w.bytes
        }
        let data: [UInt8] = [0, 0, 0, 0] + [UInt8](repeating: 7, count: 300)
        func file(_ p: [UInt8]) -> [UInt8] { Kit.caf([("desc", alac, 32), ("pakt", p, Int64(p.count)), ("data", data, Int64(data.count))]) }
        // 2^40 packets in 3 bytes of entries: refused before any allocation.
        assertFails(file(pakt(packets: 1 << 40, entries: [0x81, 0x00, 0x10])), .invalidChunk)
        assertFails(file(pakt(packets: -1, entries: [])), .invalidChunk)
        // Entries that end in the middle of a number, and a number longer than 32 bits.
        assertFails(file(pakt(packets: 2, entries: [0x81, 0x00, 0x81])), .invalidChunk)
        assertFails(file(pakt(packets: 1, entries: [0xFF, 0xFF, 0xFF, 0xFF, 0x7F])), .invalidChunk)
        // A good one: 2 packets of 128 and 100 bytes.
        let good = file(pakt(packets: 2, entries: [0x81, 0x00, 0x64]))
        let (packets, record) = Kit.streamPackets(good)
        XCTAssertNil(record.error)
        XCTAssertEqual(packets.sizes, [128, 100])
        XCTAssertEqual(packets.data, [UInt8](repeating: 7, count: 228))
        // Variable-size packets with no table: a file needs it ('dta?'), a stream cannot wait ('optm').
        let noTable = Kit.caf([("desc", alac, 32), ("data", data, Int64(data.count))])
        XCTAssertEqual(Kit.openError(noTable)?.code, .invalidFile)
        XCTAssertEqual(feed(noTable, pattern: .allAtOnce).error?.code, .notOptimized)
    }

    // MARK: Writing

    private struct WriteCase {
        var name: String
        var format: StreamDescription
        var ffmpegCodec: String
    }

    private static let writeCases: [WriteCase] = [
        WriteCase(name: "s16le", format: .pcm(sampleRate: 22050, channels: 2, bits: 16), ffmpegCodec: "pcm_s16le"),
        WriteCase(name: "s16be", format: .pcm(sampleRate: 22050, channels: 2, bits: 16, isBigEndian: true), ffmpegCodec: "pcm_s16be"),
        WriteCase(name: "s8", format: .pcm(sampleRate: 8000, channels: 1, bits: 8), ffmpegCodec: "pcm_s8"),
        WriteCase(name: "s24be", format: .pcm(sampleRate: 48000, channels: 2, bits: 24, isBigEndian: true), ffmpegCodec: "pcm_s24be"),
        WriteCase(name: "s32le", format: .pcm(sampleRate: 44100, channels: 1, bits: 32), ffmpegCodec: "pcm_s32le"),
        WriteCase(name: "f32le", format: .pcm(sampleRate: 44100, channels: 2, bits: 32, isFloat: true), ffmpegCodec: "pcm_f32le"),
        WriteCase(name: "f64be", format: .pcm(sampleRate: 96000, channels: 1, bits: 64, isFloat: true, isBigEndian: true),
                  ffmpegCodec: "pcm_f64be"),
        WriteCase(name: "ulaw", format: StreamDescription(sampleRate: 8000, formatID: .uLaw, bytesPerPacket: 2, framesPerPacket: 1,
                                                          bytesPerFrame: 2, channelsPerFrame: 2, bitsPerChannel: 8),
                  ffmpegCodec: "pcm_mulaw"),
        WriteCase(name: "alaw", format: StreamDescription(sampleRate: 8000, formatID: .aLaw, bytesPerPacket: 1, framesPerPacket: 1,
                                                          bytesPerFrame: 1, channelsPerFrame: 1, bitsPerChannel: 8),
                  ffmpegCodec: "pcm_alaw"),
        WriteCase(name: "ima4", format: StreamDescription(sampleRate: 22050, formatID: .appleIMA4, bytesPerPacket: 68, framesPerPacket: 64,
                                                          bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0),
                  ffmpegCodec: "adpcm_ima_qt"),
    ]

    /// The packets written for a case: 16-bit samples widened exactly into PCM containers (so
    /// that ffmpeg's conversion back to s16 is the identity), and deterministic bytes for the
    /// others.
    private static func payload(_ c: WriteCase, packets: Int) -> (bytes: [UInt8], s16: [Int16]?) {
        let f = c.format
        let channels = Int(f.channelsPerFrame)
        guard f.isPCM else {
            var g = SeededGenerator(seed: 99)
            var bytes = [UInt8](repeating: 0, count: packets * Int(f.bytesPerPacket))
            for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: g.next()) }
            if f.formatID == .appleIMA4 {
                // Each channel's 34-byte block begins with a predictor and a step index (at most 88).
                for block in stride(from: 0, to: bytes.count, by: 34) { bytes[block + 1] &= 0x3F }
            }
            return (bytes, nil)
        }
        let samples = CAFW64Kit.samples(frames: packets, channels: channels)
        var w = ByteWriter()
        let e: Endianness = f.isBigEndian ? .big : .little
        for s in samples {
            switch (f.isFloat, f.bitsPerChannel) {
            case (true, 32): w.writeFloat32(Float(s) / 32768, e)
            case (true, _): w.writeFloat64(Double(s) / 32768, e)
            case (false, 8): w.write(Int8(s >> 8))
            case (false, 16): w.write(s, e)
            case (false, 24):
                let v = Int32(s) << 8
                let b = [UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
                w.write(e == .big ? b : b.reversed())
            default: w.write(Int32(s) << 16, e)
            }
        }
        let exact: [Int16]? = f.bitsPerChannel == 8 ? samples.map { Int16(Int8($0 >> 8)) << 8 } : samples
        return (w.bytes, exact)
    }

    func testWriteRoundTrips() throws {
        let dir = makeTemporaryDirectory()
        for c in CAFTests.writeCases {
            let path = "\(dir)/\(c.name).caf"
            let f = c.format
            let packets = f.formatID == .appleIMA4 ? 40 : 1000
            let (bytes, s16) = CAFTests.payload(c, packets: packets)
            var info = InfoDictionary()
            info[InfoDictionary.title] = "Tonearm \(c.name) ✓"
            info[InfoDictionary.artist] = "CAF Tests"
            let layout = f.channelsPerFrame == 2 ? ChannelLayout(tag: .stereo)
                : ChannelLayout(labels: [.center])
            let cookie: [UInt8] = [1, 2, 3, 4, 5]
            let markers = [AudioFileMarker(framePosition: 10, name: "start", markerID: 1),
                           AudioFileMarker(framePosition: 500, name: "", markerID: 2)]
            let w = try AudioFile.create(path: path, type: .caf, format: f, flags: .eraseFile)
            try w.setProperty(.infoDictionary, .info(info))
            try w.setProperty(.channelLayout, .channelLayout(layout))
            try w.setProperty(.magicCookieData, .data(cookie))
            try w.setProperty(.markerList, .markers(markers))
            // Two writes, to check that packets append.
            let half = packets / 2 * Int(f.bytesPerPacket)
            try w.writePackets(Array(bytes[..<half]), count: packets / 2, startingAt: 0)
            try w.writePackets(Array(bytes[half...]), count: packets - packets / 2, startingAt: Int64(packets / 2))
            try w.close()

            let r = try AudioFile(path: path)
            XCTAssertEqual(try r.fileType, .caf, c.name)
            XCTAssertEqual(try r.dataFormat, f, c.name)
            XCTAssertEqual(try r.audioDataPacketCount, Int64(packets), c.name)
            XCTAssertEqual(try r.readPacketData(startingAt: 0, count: packets).data, bytes, c.name)
            XCTAssertEqual(try r.infoDictionary, info, c.name)
            XCTAssertEqual(try r.channelLayout, layout, c.name)
            XCTAssertEqual(try r.magicCookie, cookie, c.name)
            XCTAssertEqual(try r.properties.markers, markers, c.name)
            if f.formatID == .appleIMA4 {
                XCTAssertEqual(try r.packetTableInfo, PacketTableInfo(numberValidFrames: Int64(packets) * 64), c.name)
            } else {
                XCTAssertNil(try r.packetTableInfo, c.name)
            }
            let file = try readWholeFile(path)
            XCTAssertEqual(Kit.cafChunks(file).map(\.id), ["desc", "chan", "kuki", "data", "info"]
                + (f.formatID == .appleIMA4 ? ["pakt"] : []) + ["strg", "mark"], c.name)
            XCTAssertNil(dripFeedMismatch(file), c.name)
            let (streamed, record) = Kit.streamPackets(file)
            XCTAssertNil(record.error, c.name)
            XCTAssertEqual(streamed.data, bytes, c.name)
            XCTAssertEqual(record.info, info, c.name)

            try checkWithFFmpeg(path: path, case: c, bytes: bytes, s16: s16, packets: packets, info: info)
        }
    }

    private func checkWithFFmpeg(path: String, case c: WriteCase, bytes: [UInt8], s16: [Int16]?, packets: Int,
                                 info: InfoDictionary) throws
    {
        _ = try requireTool("ffprobe")
        _ = try requireTool("ffmpeg")
        let f = c.format
        let probe = try XCTUnwrap(Kit.ffprobe(path), c.name)
        let stream = try XCTUnwrap((probe["streams"] as? [[String: Any]])?.first, c.name)
        XCTAssertEqual(stream["codec_name"] as? String, c.ffmpegCodec, c.name)
        XCTAssertEqual(Kit.int(stream["sample_rate"]), Int64(f.sampleRate), c.name)
        XCTAssertEqual(Kit.int(stream["channels"]), Int64(f.channelsPerFrame), c.name)
        let tags = (probe["format"] as? [String: Any])?["tags"] as? [String: Any]
        XCTAssertEqual(tags?["title"] as? String, info[InfoDictionary.title], c.name)
        XCTAssertEqual(tags?["artist"] as? String, info[InfoDictionary.artist], c.name)
        let decoded = try XCTUnwrap(Kit.decodeS16(path), c.name)
        let channels = Int(f.channelsPerFrame)
        if let s16 {
            XCTAssertEqual(decoded, Kit.int16Bytes(s16), "ffmpeg's s16le of \(c.name) differs from the source")
        } else if f.formatID == .appleIMA4 {
            XCTAssertEqual(decoded.count, packets * 64 * channels * 2, c.name)
        } else {
            // G.711: ffmpeg's decoding of the CAF equals its decoding of the same bytes as raw G.711.
            let raw = path + ".raw"
            try writeWholeFile(raw, bytes)
            let reference = Kit.decodeS16(raw, inputOptions: ["-f", f.formatID == .uLaw ? "mulaw" : "alaw",
                                                              "-ar", String(Int(f.sampleRate)), "-ac", String(channels)])
            XCTAssertEqual(decoded, reference, c.name)
            XCTAssertEqual(decoded.count, packets * channels * 2, c.name)
        }
    }

    /// Rewrapping ALAC packets with their table, cookie and packet table info gives a CAF that
    /// ffmpeg decodes to the same samples as the original.
    func testWriteVariablePacketsCopy() throws {
        let source = try makeVBR("alac.caf", codec: "alac")
        let r = try AudioFile(path: source)
        let format = try r.dataFormat
        let count = Int(try r.audioDataPacketCount)
        let (data, descriptions) = try r.readPacketData(startingAt: 0, count: count)
        let out = makeTemporaryDirectory() + "/copy.caf"
        let w = try AudioFile.create(path: out, type: .caf, format: format)
        try w.setProperty(.magicCookieData, .data(try XCTUnwrap(try r.magicCookie)))
        let info = PacketTableInfo(numberValidFrames: 88200, primingFrames: 0, remainderFrames: Int32(count * 4096 - 88200))
        try w.setProperty(.packetTableInfo, .packetTableInfo(info))
        try w.writePackets(data, count: count, descriptions: descriptions, startingAt: 0)
        try w.close()

        let copy = try AudioFile(path: out)
        XCTAssertEqual(try copy.dataFormat, format)
        XCTAssertEqual(try copy.packetTableInfo, info)
        XCTAssertEqual(try Kit.filePackets(copy), try Kit.filePackets(r))
        XCTAssertEqual(Kit.cafChunks(try readWholeFile(out)).map(\.id), ["desc", "kuki", "data", "pakt"])
        try checkAgainstFFprobe(out, file: copy)
        // ALAC packets say their own frame counts, so ffmpeg decodes both to the 88200 frames.
        let original = try XCTUnwrap(Kit.decodeS16(source))
        XCTAssertEqual(original.count, 88200 * 4)
        XCTAssertEqual(Kit.decodeS16(out), original)
    }

    func testWriterRefusals() {
        let dir = makeTemporaryDirectory()
        func code(_ f: StreamDescription) -> AudioError.Code? {
            Kit.error { () throws(AudioError) in _ = try AudioFile.create(path: dir + "/x.caf", type: .caf, format: f, flags: .eraseFile) }?.code
        }
        XCTAssertEqual(code(.pcm(sampleRate: 44100, channels: 2, bits: 16, isSigned: false)), .unsupportedDataFormat)
        XCTAssertEqual(code(.pcm(sampleRate: 44100, channels: 2, bits: 20, bytesPerSample: 3)), .unsupportedDataFormat)
        XCTAssertEqual(code(.pcm(sampleRate: 44100, channels: 2, bits: 16, interleaved: false)), .unsupportedDataFormat)
        XCTAssertEqual(code(.pcm(sampleRate: 0, channels: 2, bits: 16)), .unsupportedDataFormat)
        XCTAssertEqual(code(StreamDescription(sampleRate: 8000, formatID: .appleIMA4, bytesPerPacket: 34, framesPerPacket: 64,
                                              bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)), .unsupportedDataFormat)
        XCTAssertEqual(code(StreamDescription(sampleRate: .nan, formatID: .mpeg4AAC, bytesPerPacket: 0, framesPerPacket: 1024,
                                              bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)), .unsupportedDataFormat)
        XCTAssertNil(code(.pcm(sampleRate: 44100, channels: 2, bits: 16)))
    }

    /// A file with nothing written is still a valid CAF.
    func testEmptyWrite() throws {
        let path = makeTemporaryDirectory() + "/empty.caf"
        let w = try AudioFile.create(path: path, type: .caf, format: .pcm(sampleRate: 44100, channels: 1, bits: 16))
        try w.close()
        let r = try AudioFile(path: path)
        XCTAssertEqual(try r.audioDataPacketCount, 0)
        XCTAssertEqual(try r.audioDataByteCount, 0)
        XCTAssertEqual(try readWholeFile(path).count, 8 + 44 + 16)
    }
}

import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

final class Wave64Tests: XCTestCase {
    typealias Kit = CAFW64Kit

    static let fallback: [(name: String, args: [String], pipe: Bool, type: String, format: String)] = [
        ("w64_s16le.w64", ["-c:a", "pcm_s16le", "-f", "w64"], false, "W64f", "lpcm"),
    ]

    static let riff: [UInt8] = [0x72, 0x69, 0x66, 0x66, 0x2E, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]
    static let tail: [UInt8] = [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A]

    static func guid(_ name: String) -> [UInt8] { FourCC(name).bytes + tail }

    /// A Wave64 file of the given chunks (GUID name, body, size field or nil for size + 24),
    /// each padded to 8 bytes.
    static func w64(_ chunks: [(String, [UInt8], UInt64?)], riffSize: UInt64? = nil) -> [UInt8] {
        var w = ByteWriter()
        w.write(riff)
        w.write(UInt64(0), .little)
        w.write(guid("wave"))
        for (name, body, size) in chunks {
            w.write(guid(name))
            w.write(size ?? UInt64(24 + body.count), .little)
            w.write(body)
            w.write([UInt8](repeating: 0, count: (8 - body.count % 8) % 8))
        }
        w.set(riffSize ?? UInt64(w.bytes.count), at: 16, .little)
        return w.bytes
    }

    /// A WAVEFORMATEX body.
    static func fmt(tag: UInt16 = 1, channels: UInt16 = 2, rate: UInt32 = 22050, bits: UInt16 = 16) -> [UInt8] {
        var w = ByteWriter()
        let align = UInt16(channels) * ((bits + 7) / 8)
        w.write(tag, .little)
        w.write(channels, .little)
        w.write(rate, .little)
        w.write(rate * UInt32(align), .little)
        w.write(align, .little)
        w.write(bits, .little)
        return w.bytes
    }

    func testRegistry() throws {
        let info = try XCTUnwrap(FormatRegistry.info(for: .wave64))
        XCTAssertEqual(info.name, "Wave64")
        XCTAssertEqual(info.extensions, ["w64"])
        XCTAssertEqual(info.mimeTypes, ["audio/x-w64"])
        XCTAssertEqual(info.hfsTypeCodes, [FourCC("W64f")])
        XCTAssertEqual(info.writableFormats, [.linearPCM, .uLaw, .aLaw])
        XCTAssertEqual(FormatRegistry.types(forExtension: "w64"), [.wave64])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/x-w64"), [.wave64])
    }

    func testFixtures() throws {
        let cases = Kit.cases(extension: "w64", fallback: Wave64Tests.fallback)
        guard !cases.isEmpty else { throw skipOrFail("no Wave64 fixtures and no ffmpeg to make them") }
        for c in cases { try Kit.checkCase(c) }
    }

    /// More files from ffmpeg: float (WAVE_FORMAT_EXTENSIBLE), µ-law with a fact chunk,
    /// 5.1 24-bit, and one written to a pipe (data size INT64_MAX).
    func testFFmpegFiles() throws {
        _ = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        let source = dir + "/source.wav"
        let six = "aevalsrc=exprs='sin(2*PI*440*t)|sin(2*PI*550*t)|sin(2*PI*660*t)|0.1*sin(2*PI*60*t)|sin(2*PI*880*t)|sin(2*PI*990*t)':s=24000:c=5.1,atrim=end_sample=2001"
        XCTAssertTrue(Kit.ffmpeg(["-f", "lavfi", "-i", six, "-c:a", "pcm_s24le", source]))
        let variants: [(String, [String], Bool, String, UInt32)] = [
            ("f32.w64", ["-c:a", "pcm_f32le", "-f", "w64"], false, "lpcm", 32),
            ("ulaw.w64", ["-ac", "2", "-c:a", "pcm_mulaw", "-f", "w64"], false, "ulaw", 8),
            ("s24.w64", ["-c:a", "pcm_s24le", "-f", "w64"], false, "lpcm", 24),
            ("piped.w64", ["-c:a", "pcm_s16le", "-f", "w64"], true, "lpcm", 16),
        ]
        for (name, args, pipe, formatID, bits) in variants {
            let path = dir + "/" + name
            if pipe {
                let r = try XCTUnwrap(Kit.run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-i", source] + args + ["-"]))
                XCTAssertEqual(r.status, 0)
                try writeWholeFile(path, r.output)
            } else {
                XCTAssertTrue(Kit.ffmpeg(["-i", source] + args + [path]), name)
            }
            let channels = formatID == "ulaw" ? 2 : 6
            // ffmpeg cannot read its own piped Wave64 (data size INT64_MAX); it holds the 2001 source frames.
            let frames = pipe ? 2001 : Int64(try XCTUnwrap(Kit.decodeS16(path), name).count / (2 * channels))
            try Kit.checkCase(CAFW64Case(path: path, fileType: "W64f", formatID: formatID, sampleRate: 24000, channels: channels,
                                         frames: frames))
            let f = try AudioFile(path: path)
            XCTAssertEqual(try f.dataFormat.bitsPerChannel, bits, name)
            if channels == 6 {
                XCTAssertEqual(try f.channelLayout, ChannelLayout(tag: .mpeg5_1_A), name)
            }
            if pipe {
                let bytes = try readWholeFile(path)
                XCTAssertEqual(try f.audioDataByteCount, Int64(bytes.count) - (try f.dataOffset), name)
                XCTAssertNil(feed(bytes, pattern: .allAtOnce).audioDataByteCount, name)
            }
        }
    }

    func testHandMadeFile() throws {
        let audio = Kit.int16Bytes(Kit.samples(frames: 101, channels: 2))
        let bytes = Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), nil), ("junk", [1, 2, 3], nil), ("data", audio, nil),
                                     ("levl", [UInt8](repeating: 9, count: 40), nil)])
        let f = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try f.fileType, .wave64)
        XCTAssertEqual(try f.dataFormat, .pcm(sampleRate: 22050, channels: 2, bits: 16))
        // riff 40 + fmt (24 + 16) + junk (24 + 3 + 5) + data header 24.
        XCTAssertEqual(try f.dataOffset, 40 + 40 + 32 + 24)
        XCTAssertEqual(try f.audioDataPacketCount, 101)
        XCTAssertEqual(try f.audioDataByteCount, 404)
        XCTAssertEqual(try f.readPacketData(startingAt: 0, count: 200).data, audio)
        XCTAssertEqual(try f.properties.chunkIDs, ["fmt ", "junk", "data", "levl"])
        XCTAssertNil(dripFeedMismatch(bytes))
        let (packets, record) = Kit.streamPackets(bytes)
        XCTAssertNil(record.error)
        XCTAssertEqual(packets.data, audio)
    }

    /// 'fmt ' after 'data': a file reads it (it goes back), a stream fails with 'optm'.
    func testFormatAfterData() throws {
        let audio = Kit.int16Bytes(Kit.samples(frames: 50, channels: 2))
        let bytes = Wave64Tests.w64([("data", audio, nil), ("fmt ", Wave64Tests.fmt(), nil)])
        let f = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try f.audioDataPacketCount, 50)
        XCTAssertEqual(try f.dataOffset, 64)
        XCTAssertFalse(try f.properties.isOptimized)
        XCTAssertEqual(try Kit.filePackets(f).data, audio)
        XCTAssertEqual(feed(bytes, pattern: .allAtOnce).error?.code, .notOptimized)
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    /// The list chunk carries RIFF INFO text; fact gives compressed data its frame count.
    func testListAndFact() throws {
        var list = ByteWriter()
        list.write(FourCC("INFO"))
        list.write(FourCC("INAM"))
        list.write(UInt32(6), .little)
        list.write(Array("Title\0".utf8))
        let listGUID: [UInt8] = Array("list".utf8) + [0x2F, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]
        var bytes = Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), nil), ("LIST", list.bytes, nil), ("data", [0, 0, 0, 0], nil)])
        bytes.replaceSubrange(80..<96, with: listGUID)
        let f = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try f.infoDictionary[InfoDictionary.title], "Title")
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    private func assertFails(_ bytes: [UInt8], _ code: AudioError.Code, file: StaticString = #filePath, line: UInt = #line) {
        let e = Kit.openError(bytes)
        XCTAssertEqual(e?.code, code, "AudioFile: \(e.map { "\($0)" } ?? "no error")", file: file, line: line)
        let r = feed(bytes, pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, code, "AudioFileStream: \(r.error.map { "\($0)" } ?? "no error")", file: file, line: line)
        XCTAssertNil(dripFeedMismatch(bytes), file: file, line: line)
    }

    func testDamagedInput() throws {
        let audio = Kit.int16Bytes(Kit.samples(frames: 40, channels: 2))
        let good = Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), nil), ("data", audio, nil)])
        // Truncated: in the riff header, in the fmt chunk's header, in its body, in the data header.
        assertFails(Array(good[0..<30]), .invalidFile)
        assertFails(Array(good[0..<50]), .invalidFile)
        assertFails(Array(good[0..<70]), .invalidChunk)
        assertFails(Array(good[0..<90]), .invalidFile)
        // In the data: the whole packets there.
        let cut = Array(good[0..<(104 + 4 * 13)])
        XCTAssertEqual(try AudioFile(source: MemorySource(cut)).audioDataPacketCount, 13)
        let (packets, record) = Kit.streamPackets(cut)
        XCTAssertNil(record.error)
        XCTAssertEqual(packets.data, Array(audio[0..<52]))
        XCTAssertNil(dripFeedMismatch(cut))
        let midPacket = Array(good[0..<(104 + 4 * 13 + 1)])
        XCTAssertEqual(try AudioFile(source: MemorySource(midPacket)).audioDataPacketCount, 13)
        let (partial, partialRecord) = Kit.streamPackets(midPacket)
        XCTAssertNil(partialRecord.error)
        XCTAssertEqual(partial.data, Array(audio[0..<52]))
        XCTAssertNil(dripFeedMismatch(midPacket))
        // A wrong 'wave' GUID.
        var notWave = good
        notWave[24] = 0x41
        assertFails(notWave, .unsupportedFileType)
        // Chunk sizes smaller than the header, or too large to be believed.
        assertFails(Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), 10), ("data", audio, nil)]), .invalidChunk)
        assertFails(Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), nil), ("junk", [], 1 << 63), ("data", audio, nil)]), .invalidChunk)
        // An fmt chunk claiming 2^62 bytes (not believed), and 2^40 (more than WAVE reads: a limit).
        assertFails(Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), 1 << 62), ("data", audio, nil)]), .invalidChunk)
        let huge = Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), 1 << 40), ("data", audio, nil)])
        assertFails(huge, .invalidFile)
        XCTAssertEqual(Kit.openError(huge)?.category, .limit)
        // Bad formats, as WAVE rejects them.
        assertFails(Wave64Tests.w64([("fmt ", Wave64Tests.fmt(channels: 0), nil), ("data", audio, nil)]), .unsupportedDataFormat)
        assertFails(Wave64Tests.w64([("fmt ", Wave64Tests.fmt(rate: 0), nil), ("data", audio, nil)]), .unsupportedDataFormat)
        assertFails(Wave64Tests.w64([("fmt ", Array(Wave64Tests.fmt().prefix(10)), nil), ("data", audio, nil)]), .invalidChunk)
        // No data chunk.
        assertFails(Wave64Tests.w64([("fmt ", Wave64Tests.fmt(), nil)]), .invalidFile)
        // Empty.
        XCTAssertEqual(Kit.openError([], hint: .wave64)?.code, .unsupportedFileType)
        XCTAssertEqual(feed([], pattern: .allAtOnce, hint: .wave64).error?.code, .invalidFile)
    }

    // MARK: Writing

    func testWriteRoundTrips() throws {
        let dir = makeTemporaryDirectory()
        let cases: [(String, StreamDescription, String, ChannelLayout?)] = [
            ("s16", .pcm(sampleRate: 22050, channels: 2, bits: 16), "pcm_s16le", nil),
            ("u8", .pcm(sampleRate: 8000, channels: 1, bits: 8, isSigned: false), "pcm_u8", nil),
            ("s24_51", .pcm(sampleRate: 48000, channels: 6, bits: 24), "pcm_s24le", ChannelLayout(tag: .mpeg5_1_A)),
            ("f32", .pcm(sampleRate: 44100, channels: 2, bits: 32, isFloat: true), "pcm_f32le", nil),
            ("ulaw", StreamDescription(sampleRate: 8000, formatID: .uLaw, bytesPerPacket: 1, framesPerPacket: 1, bytesPerFrame: 1,
                                       channelsPerFrame: 1, bitsPerChannel: 8), "pcm_mulaw", nil),
            ("alaw", StreamDescription(sampleRate: 8000, formatID: .aLaw, bytesPerPacket: 2, framesPerPacket: 1, bytesPerFrame: 2,
                                       channelsPerFrame: 2, bitsPerChannel: 8), "pcm_alaw", nil),
        ]
        for (name, f, codec, layout) in cases {
            let path = "\(dir)/\(name).w64"
            let channels = Int(f.channelsPerFrame)
            let frames = 1001  // odd, so that the data needs padding
            let samples = Kit.samples(frames: frames, channels: channels)
            var w = ByteWriter()
            for s in samples {
                switch (f.formatID, f.bitsPerChannel, f.isFloat) {
                case (.linearPCM, 8, _): w.write(UInt8(Int(s >> 8) + 128))
                case (.linearPCM, 16, _): w.write(s, .little)
                case (.linearPCM, 24, _):
                    let v = Int32(s) << 8
                    w.write([UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v >> 16)])
                case (.linearPCM, _, true): w.write((Float(s) / 32768).bitPattern, .little)
                default: w.write(UInt8(truncatingIfNeeded: s))
                }
            }
            let bytes = w.bytes
            let file = try AudioFile.create(path: path, type: .wave64, format: f, flags: .eraseFile)
            if let layout { try file.setProperty(.channelLayout, .channelLayout(layout)) }
            try file.writePackets(bytes, count: frames, startingAt: 0)
            try file.close()

            let written = try readWholeFile(path)
            XCTAssertEqual(written.count % 8, 0, name)
            XCTAssertEqual(Array(written[0..<16]), Wave64Tests.riff, name)
            let r = try AudioFile(path: path)
            XCTAssertEqual(try r.fileType, .wave64, name)
            XCTAssertEqual(try r.dataFormat, f, name)
            XCTAssertEqual(try r.audioDataPacketCount, Int64(frames), name)
            XCTAssertEqual(try r.readPacketData(startingAt: 0, count: frames).data, bytes, name)
            if let layout { XCTAssertEqual(try r.channelLayout, layout, name) }
            XCTAssertNil(dripFeedMismatch(written), name)
            XCTAssertEqual(Kit.streamPackets(written).0.data, bytes, name)

            _ = try requireTool("ffprobe")
            _ = try requireTool("ffmpeg")
            let probe = try XCTUnwrap(Kit.ffprobe(path), name)
            let stream = try XCTUnwrap((probe["streams"] as? [[String: Any]])?.first, name)
            XCTAssertEqual(stream["codec_name"] as? String, codec, name)
            XCTAssertEqual(Kit.int(stream["sample_rate"]), Int64(f.sampleRate), name)
            XCTAssertEqual(Kit.int(stream["channels"]), Int64(channels), name)
            if let layout, layout.tag == .mpeg5_1_A { XCTAssertEqual(stream["channel_layout"] as? String, "5.1", name) }
            let decoded = try XCTUnwrap(Kit.decodeS16(path), name)
            switch f.formatID {
            case .linearPCM where f.bitsPerChannel == 8:
                XCTAssertEqual(decoded, Kit.int16Bytes(samples.map { ($0 >> 8) << 8 }), name)
            case .linearPCM:
                XCTAssertEqual(decoded, Kit.int16Bytes(samples), "ffmpeg's s16le of \(name) differs from the source")
            default:
                let raw = path + ".raw"
                try writeWholeFile(raw, bytes)
                let reference = Kit.decodeS16(raw, inputOptions: ["-f", f.formatID == .uLaw ? "mulaw" : "alaw",
                                                                  "-ar", String(Int(f.sampleRate)), "-ac", String(channels)])
                XCTAssertEqual(decoded, reference, name)
                XCTAssertEqual(decoded.count, frames * channels * 2, name)
            }
        }
    }

    func testWriterRefusals() {
        let dir = makeTemporaryDirectory()
        func code(_ f: StreamDescription) -> AudioError.Code? {
            Kit.error { () throws(AudioError) in _ = try AudioFile.create(path: dir + "/x.w64", type: .wave64, format: f, flags: .eraseFile) }?.code
        }
        XCTAssertEqual(code(.pcm(sampleRate: 44100, channels: 2, bits: 16, isBigEndian: true)), .unsupportedDataFormat)
        XCTAssertEqual(code(.pcm(sampleRate: 44100, channels: 1, bits: 8)), .unsupportedDataFormat)
        XCTAssertEqual(code(StreamDescription(sampleRate: 8000, formatID: .appleIMA4, bytesPerPacket: 34, framesPerPacket: 64,
                                              bytesPerFrame: 0, channelsPerFrame: 1, bitsPerChannel: 0)), .unsupportedDataFormat)
    }
}

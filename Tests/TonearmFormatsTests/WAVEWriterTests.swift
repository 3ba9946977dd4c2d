import XCTest
import Foundation
import Tonearm
import TonearmTestSupport

final class WAVEWriterTests: XCTestCase {
    func testDamagedWAVNeverCrashesAndFailsWithAudioErrors() throws {
        for name in ["wav_s16le_mono_16k.wav", "wav_ms_adpcm.wav", "wav_list_info.wav", "rf64_s16le.wav", "wav_s16le_5.1.wav"] {
            let path = fixturesDirectory + "/pcm/" + name
            guard fileExists(path) else { XCTFail("the fixture \(path) is missing"); continue }
            let (errors, problems) = exerciseDamaged(try readWholeFile(path))
            XCTAssertEqual(problems, [], name)
            XCTAssertFalse(errors.isEmpty, "\(name): damage produced no errors at all")
            // Truncated headers are invalid files, never unspecified errors.
            XCTAssertNil(errors[.unspecified], name)
        }
    }

    func testHugeFmtChunkIsALimitErrorWithoutAllocating() {
        var w = ByteWriter()
        w.write(FourCC("RIFF")); w.write(UInt32(100), .little); w.write(FourCC("WAVE"))
        w.write(FourCC("fmt ")); w.write(UInt32(0xFFFF_FFF0), .little)
        w.write([UInt8](repeating: 0, count: 40))
        let r = feed(w.bytes, pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, .invalidFile)
        XCTAssertThrowsError(try AudioFile(source: MemorySource(w.bytes))) {
            XCTAssertEqual(($0 as? AudioError)?.category, .limit)
        }
    }

    func testDataBeforeFmtNeedsSeeking() throws {
        // A WAV whose data chunk precedes fmt: AudioFile reads it, a stream answers 'optm'.
        var w = ByteWriter()
        w.write(FourCC("RIFF")); w.write(UInt32(4 + 8 + 8 + 8 + 16), .little); w.write(FourCC("WAVE"))
        w.write(FourCC("data")); w.write(UInt32(8), .little); w.write([1, 0, 2, 0, 3, 0, 4, 0])
        w.write(FourCC("fmt ")); w.write(UInt32(16), .little)
        w.write(UInt16(1), .little); w.write(UInt16(1), .little); w.write(UInt32(8000), .little)
        w.write(UInt32(16000), .little); w.write(UInt16(2), .little); w.write(UInt16(16), .little)
        let file = try AudioFile(source: MemorySource(w.bytes))
        XCTAssertEqual(try file.audioDataPacketCount, 4)
        XCTAssertEqual(try file.readPacketData(startingAt: 1, count: 2).data, [2, 0, 3, 0])
        XCTAssertFalse(try file.properties.isOptimized)
        XCTAssertEqual(feed(w.bytes, pattern: .allAtOnce).error?.code, .notOptimized)
    }

    func testRoundTripEveryWritablePCMFormat() throws {
        let dir = makeTemporaryDirectory()
        let formats: [StreamDescription] = [
            .pcm(sampleRate: 44100, channels: 2, bits: 16),
            .pcm(sampleRate: 8000, channels: 1, bits: 8, isSigned: false),
            .pcm(sampleRate: 48000, channels: 2, bits: 24),
            .pcm(sampleRate: 96000, channels: 1, bits: 32),
            .pcm(sampleRate: 44100, channels: 2, bits: 32, isFloat: true),
            .pcm(sampleRate: 22050, channels: 1, bits: 64, isFloat: true),
            .pcm(sampleRate: 48000, channels: 6, bits: 16),
            StreamDescription(sampleRate: 8000, formatID: .uLaw, bytesPerPacket: 1, framesPerPacket: 1, bytesPerFrame: 1,
                              channelsPerFrame: 1, bitsPerChannel: 8),
        ]
        var g = SeededGenerator(seed: 42)
        for (i, f) in formats.enumerated() {
            for type in [AudioFileTypeID.wave, .rf64] {
                let path = "\(dir)/out\(i)-\(type.fourCC.string).wav"
                let frames = 1001
                let data = (0..<frames * Int(f.bytesPerFrame)).map { _ in UInt8.random(in: 0...255, using: &g) }
                let out = try AudioFile.create(path: path, type: type, format: f)
                var info = InfoDictionary()
                info[InfoDictionary.title] = "Round trip \(i)"
                info[InfoDictionary.artist] = "Tonearm"
                try out.setProperty(.infoDictionary, .info(info))
                if f.channelsPerFrame == 6 { try out.setProperty(.channelLayout, .channelLayout(ChannelLayout(tag: .mpeg5_1_A))) }
                try out.writePackets(Array(data[..<(500 * Int(f.bytesPerFrame))]), count: 500, startingAt: 0)
                try out.writePackets(Array(data[(500 * Int(f.bytesPerFrame))...]), count: frames - 500, startingAt: 500)
                // Constant-size packets may be rewritten (as Apple allows); past the end they may not.
                XCTAssertThrowsError(try out.writePackets(Array(repeating: 0, count: Int(f.bytesPerFrame)), count: 1, startingAt: Int64(frames + 1)))
                try out.close()

                let back = try AudioFile(path: path)
                XCTAssertEqual(try back.fileType, type)
                XCTAssertEqual(try back.dataFormat, f, "\(f)")
                XCTAssertEqual(try back.audioDataPacketCount, Int64(frames))
                XCTAssertEqual(try back.readPacketData(startingAt: 0, count: frames).data, data)
                XCTAssertEqual(try back.infoDictionary[InfoDictionary.title], "Round trip \(i)")
                if f.channelsPerFrame == 6 { XCTAssertEqual(try back.channelLayout?.tag, .mpeg5_1_A) }
                XCTAssertNil(dripFeedMismatch(try readWholeFile(path)))

                let ffprobe = try requireTool("ffprobe")
                let text = try runTool(ffprobe, ["-v", "error", "-show_entries", "stream=sample_rate,channels", "-of", "csv=p=0", path])
                XCTAssertEqual(text.trimmingCharacters(in: .whitespacesAndNewlines), "\(Int(f.sampleRate)),\(f.channelsPerFrame)", path)
            }
        }
        XCTAssertThrowsError(try AudioFile.create(path: dir + "/out0-WAVE.wav", type: .wave, format: formats[0])) {
            XCTAssertEqual(($0 as? AudioError)?.code, .permissions)
        }
        XCTAssertThrowsError(try AudioFile.create(path: dir + "/x.wav", type: .wave, format: .pcm(sampleRate: 8000, channels: 1, bits: 16, isBigEndian: true))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat)
        }
    }
}


/// What other programs make of the files the WAVE writer writes: each sample format it writes,
/// read back by ffprobe (codec, depth, rate, channels, layout) and decoded by ffmpeg to the
/// exact samples that went in, in WAVE and RF64. The `fmt ` chunk is checked byte by byte too:
/// WAVEFORMATEX where it is enough, WAVE_FORMAT_EXTENSIBLE with its valid bits, channel mask
/// and subformat where it is not (more than two channels, integers wider than 16 bits).
final class WAVEWriterOracleTests: XCTestCase {
    struct Case {
        var name: String
        var format: StreamDescription
        var layout: ChannelLayout?
        var codec: String        // ffprobe's codec_name
        var bits: Int            // ffprobe's bits_per_sample
        var ffprobeLayout: String?  // none without a channel mask: WAVEFORMATEX does not say
        var raw: String          // ffmpeg's raw format giving the same bytes
        var tag: UInt16          // fmt's wFormatTag
        var mask: UInt32?        // dwChannelMask when extensible
        var subformat: UInt16?   // the subformat GUID's first two bytes when extensible
    }

    static let cases: [Case] = [
        Case(name: "u8", format: .pcm(sampleRate: 8000, channels: 1, bits: 8, isSigned: false), codec: "pcm_u8", bits: 8,
             ffprobeLayout: nil, raw: "u8", tag: 1),
        Case(name: "s16", format: .pcm(sampleRate: 44100, channels: 2, bits: 16), codec: "pcm_s16le", bits: 16,
             ffprobeLayout: nil, raw: "s16le", tag: 1),
        Case(name: "s24", format: .pcm(sampleRate: 48000, channels: 2, bits: 24), codec: "pcm_s24le", bits: 24,
             ffprobeLayout: "stereo", raw: "s24le", tag: 0xFFFE, mask: 0x3, subformat: 1),
        Case(name: "s32", format: .pcm(sampleRate: 96000, channels: 1, bits: 32), codec: "pcm_s32le", bits: 32,
             ffprobeLayout: "mono", raw: "s32le", tag: 0xFFFE, mask: 0x4, subformat: 1),
        Case(name: "f32", format: .pcm(sampleRate: 44100, channels: 2, bits: 32, isFloat: true), codec: "pcm_f32le", bits: 32,
             ffprobeLayout: nil, raw: "f32le", tag: 3),
        Case(name: "f64", format: .pcm(sampleRate: 22050, channels: 1, bits: 64, isFloat: true), codec: "pcm_f64le", bits: 64,
             ffprobeLayout: nil, raw: "f64le", tag: 3),
        // L R C LFE Ls Rs: the mask's bits 0-5 (Apple's and Microsoft's surround is "back").
        Case(name: "s16-5.1", format: .pcm(sampleRate: 48000, channels: 6, bits: 16), layout: ChannelLayout(tag: .mpeg5_1_A),
             codec: "pcm_s16le", bits: 16, ffprobeLayout: "5.1", raw: "s16le", tag: 0xFFFE, mask: 0x3F, subformat: 1),
        // No layout given: six channels get the default one, the same mask.
        Case(name: "s24-6ch", format: .pcm(sampleRate: 48000, channels: 6, bits: 24), codec: "pcm_s24le", bits: 24,
             ffprobeLayout: "5.1", raw: "s24le", tag: 0xFFFE, mask: 0x3F, subformat: 1),
        Case(name: "f32-5.1", format: .pcm(sampleRate: 48000, channels: 6, bits: 32, isFloat: true), layout: ChannelLayout(tag: .mpeg5_1_A),
             codec: "pcm_f32le", bits: 32, ffprobeLayout: "5.1", raw: "f32le", tag: 0xFFFE, mask: 0x3F, subformat: 3),
    ]

    /// Samples for a format: any bytes for integers; for floats, finite values in [-1, 1), so
    /// that no NaN payload is in question.
    static func samples(_ f: StreamDescription, frames: Int) -> [UInt8] {
        var g = SeededGenerator(seed: 1606)
        let count = frames * Int(f.channelsPerFrame)
        switch (f.isFloat, f.bitsPerChannel) {
        case (true, 32):
            return (0..<count).flatMap { _ in withUnsafeBytes(of: Float.random(in: -1..<1, using: &g).bitPattern.littleEndian, Array.init) }
        case (true, _):
            return (0..<count).flatMap { _ in withUnsafeBytes(of: Double.random(in: -1..<1, using: &g).bitPattern.littleEndian, Array.init) }
        default:
            return (0..<frames * Int(f.bytesPerFrame)).map { _ in UInt8.random(in: 0...255, using: &g) }
        }
    }

    /// The body of the file's `fmt ` chunk.
    static func formatChunk(_ bytes: [UInt8]) -> [UInt8]? {
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            if Array(bytes[at..<at + 4]) == Array("fmt ".utf8) { return Array(bytes[at + 8..<min(bytes.count, at + 8 + size)]) }
            at += 8 + size + (size & 1)
        }
        return nil
    }

    func testFFprobeAndFFmpegReadEveryWrittenFormat() throws {
        let ffprobe = try requireTool("ffprobe"), ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        let frames = 1001
        for c in Self.cases {
            let data = Self.samples(c.format, frames: frames)
            for type in [AudioFileTypeID.wave, .rf64] {
                let name = "\(c.name) \(type.fourCC.string)"
                let path = "\(dir)/\(c.name)-\(type.fourCC.string).wav"
                let out = try AudioFile.create(path: path, type: type, format: c.format)
                if let layout = c.layout { try out.setProperty(.channelLayout, .channelLayout(layout)) }
                try out.writePackets(data, count: frames, startingAt: 0)
                try out.close()

                let fmt = try XCTUnwrap(Self.formatChunk(try readWholeFile(path)), name)
                func u16(_ i: Int) -> UInt16 { UInt16(fmt[i]) | UInt16(fmt[i + 1]) << 8 }
                func u32(_ i: Int) -> UInt32 { UInt32(u16(i)) | UInt32(u16(i + 2)) << 16 }
                XCTAssertEqual(u16(0), c.tag, "\(name): wFormatTag")
                XCTAssertEqual(u16(2), UInt16(c.format.channelsPerFrame), "\(name): nChannels")
                XCTAssertEqual(u32(4), UInt32(c.format.sampleRate), "\(name): nSamplesPerSec")
                XCTAssertEqual(u16(12), UInt16(c.format.bytesPerFrame), "\(name): nBlockAlign")
                XCTAssertEqual(u16(14), UInt16(c.bits), "\(name): wBitsPerSample")
                if c.tag == 0xFFFE {
                    XCTAssertEqual(fmt.count, 40, name)
                    XCTAssertEqual(u16(16), 22, "\(name): cbSize")
                    XCTAssertEqual(u16(18), UInt16(c.bits), "\(name): wValidBitsPerSample")
                    XCTAssertEqual(u32(20), c.mask, "\(name): dwChannelMask")
                    XCTAssertEqual(u16(24), c.subformat, "\(name): the subformat")
                    XCTAssertEqual(Array(fmt[26..<40]), [0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71], name)
                }

                let json = try runToolData(ffprobe, ["-v", "error", "-of", "json", "-show_entries",
                                                     "stream=codec_name,sample_rate,channels,channel_layout,bits_per_sample,duration_ts",
                                                     path])
                let streams = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])?["streams"]
                    as? [[String: Any]], name)
                XCTAssertEqual(streams.count, 1, name)
                let s = try XCTUnwrap(streams.first, name)
                XCTAssertEqual(s["codec_name"] as? String, c.codec, name)
                XCTAssertEqual(s["sample_rate"] as? String, String(Int(c.format.sampleRate)), name)
                XCTAssertEqual(s["channels"] as? Int, Int(c.format.channelsPerFrame), name)
                XCTAssertEqual(s["channel_layout"] as? String, c.ffprobeLayout, name)
                XCTAssertEqual(s["bits_per_sample"] as? Int, c.bits, name)
                XCTAssertEqual(s["duration_ts"] as? Int, frames, name)

                let decoded = try runToolData(ffmpeg, ["-v", "error", "-nostdin", "-i", path, "-f", c.raw, "-"])
                XCTAssertEqual(decoded.count, data.count, "\(name): ffmpeg's decode length")
                XCTAssertTrue(decoded == data, "\(name): ffmpeg decodes other samples than were written")
            }
        }
    }
}

@testable import TonearmFormats

final class RF64SwitchTests: XCTestCase {
    /// A WAVE writer turns into RF64 when the data outgrows 32-bit sizes. The threshold is
    /// lowered here so that the test writes kilobytes, not 4 GiB.
    func testWAVEBecomesRF64PastTheThreshold() throws {
        let saved = WAVEWriter.rf64Threshold
        WAVEWriter.rf64Threshold = 1000
        defer { WAVEWriter.rf64Threshold = saved }
        let path = makeTemporaryDirectory() + "/big.wav"
        let format = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 16)
        let data = (0..<3000).map { UInt8($0 % 251) }
        let out = try AudioFile.create(path: path, type: .wave, format: format)
        try out.writePackets(data, count: 1500, startingAt: 0)
        try out.close()
        let bytes = try readWholeFile(path)
        XCTAssertEqual(Array(bytes[0..<4]), Array("RF64".utf8))
        XCTAssertEqual(Array(bytes[12..<16]), Array("ds64".utf8))
        let back = try AudioFile(path: path)
        XCTAssertEqual(try back.fileType, .rf64)
        XCTAssertEqual(try back.audioDataPacketCount, 1500)
        XCTAssertEqual(try back.readPacketData(startingAt: 0, count: 1500).data, data)
        let ffprobe = try requireTool("ffprobe")
        XCTAssertEqual(try runTool(ffprobe, ["-v", "error", "-count_packets", "-show_entries", "stream=duration_ts",
                                            "-of", "csv=p=0", path]), "1500")
    }

    func testOpenByURL() throws {
        let path = fixturesDirectory + "/pcm/wav_s16le_mono_16k.wav"
        guard fileExists(path) else { return XCTFail("the fixture \(path) is missing") }
        XCTAssertEqual(try AudioFile(url: URL(fileURLWithPath: path)).audioDataPacketCount, 16000)
        // http and https are opened over the network (an unknown host: 'net!'); other schemes are not.
        XCTAssertThrowsError(try AudioFile(url: URL(string: "http://example.invalid/a.wav")!)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .network)
        }
        XCTAssertThrowsError(try AudioFile(url: URL(string: "ftp://example.invalid/a.wav")!)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedFileType)
        }
    }
}

import XCTest
import Foundation
import Tonearm
import TonearmTestSupport

final class WAVEWriterTests: XCTestCase {
    func testDamagedWAVNeverCrashesAndFailsWithAudioErrors() throws {
        for name in ["wav_s16le_mono_16k.wav", "wav_ms_adpcm.wav", "wav_list_info.wav", "rf64_s16le.wav", "wav_s16le_5.1.wav"] {
            let path = fixturesDirectory + "/pcm/" + name
            guard fileExists(path) else { continue }
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

                if let ffprobe = which("ffprobe") {
                    let text = try runTool(ffprobe, ["-v", "error", "-show_entries", "stream=sample_rate,channels", "-of", "csv=p=0", path])
                    XCTAssertEqual(text.trimmingCharacters(in: .whitespacesAndNewlines), "\(Int(f.sampleRate)),\(f.channelsPerFrame)", path)
                }
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
        if let ffprobe = which("ffprobe") {
            XCTAssertEqual(try runTool(ffprobe, ["-v", "error", "-count_packets", "-show_entries", "stream=duration_ts",
                                                "-of", "csv=p=0", path]), "1500")
        }
    }

    func testOpenByURL() throws {
        let path = fixturesDirectory + "/pcm/wav_s16le_mono_16k.wav"
        guard fileExists(path) else { throw XCTSkip("fixture missing") }
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

import XCTest
import Foundation
import TonearmCLI
import Tonearm
import TonearmTestSupport

/// Runs the CLI in-process and captures what it prints.
func tonearm(_ args: [String]) -> (code: Int32, out: String, err: String) {
    var out: [UInt8] = []
    var err = ""
    let console = Console(out: { out += $0 }, err: { err += $0 }, stderrIsTerminal: false)
    let code = TonearmCommand.run(args, console: console)
    return (code, String(decoding: out, as: UTF8.self), err)
}

final class CLITests: XCTestCase {
    let pcm = fixturesDirectory + "/pcm/"

    func testInfoJSONHasExactlyTheDocumentedKeys() throws {
        let r = tonearm(["info", pcm + "wav_s16le_5.1.wav", "--json"])
        XCTAssertEqual(r.code, 0, r.err)
        let obj = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        XCTAssertEqual(Set(obj.keys), [
            "path", "fileType", "fileTypeName", "format", "decodedFormat", "decoder", "formatList", "channelLayout", "audioDataOffset",
            "audioDataByteCount",
            "audioPacketCount", "maximumPacketSize", "bitRate", "validFrames", "primingFrames", "remainderFrames",
            "duration", "durationIsEstimated", "optimized", "info", "trackCount", "tracks", "chapters", "artwork",
        ])
        let format = try XCTUnwrap(obj["format"] as? [String: Any])
        XCTAssertEqual(Set(format.keys), ["formatID", "sampleRate", "channelsPerFrame", "bitsPerChannel", "bytesPerPacket",
                                          "framesPerPacket", "bytesPerFrame", "formatFlags"])
        XCTAssertEqual(obj["fileType"] as? String, "WAVE")
        XCTAssertEqual(format["formatID"] as? String, "lpcm")
        XCTAssertEqual(format["channelsPerFrame"] as? Int, 6)
        XCTAssertEqual(format["formatFlags"] as? Int, 12)
        let golden = try XCTUnwrap(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: pcm + "wav_s16le_5.1.json"))) as? [String: Any])
        let header = try XCTUnwrap(golden["header"] as? [String: Any])
        XCTAssertEqual(obj["validFrames"] as? Int, golden["frames"] as? Int)
        XCTAssertEqual(obj["audioDataOffset"] as? Int, header["dataOffset"] as? Int)
        XCTAssertEqual(obj["audioDataByteCount"] as? Int, header["dataSize"] as? Int)
        XCTAssertEqual((obj["channelLayout"] as? [String: Any])?["labels"] as? [String], ["L", "R", "C", "LFE", "Ls", "Rs"])
    }

    func testInfoTextHasAfinfoLines() {
        let r = tonearm(["info", pcm + "wav_s16le_mono_16k.wav"])
        XCTAssertEqual(r.code, 0)
        XCTAssertTrue(r.out.contains("File type ID:   WAVE"))
        XCTAssertTrue(r.out.contains("Data format:     1 ch, 16000 Hz, 'lpcm' (0x0000000C) 16-bit little-endian signed integer"))
        XCTAssertTrue(r.out.contains("audio 16000 valid frames + 0 priming + 0 remainder = 16000"))
        XCTAssertTrue(r.out.contains("audio data file offset: 44"))
    }

    func testExitCodesAndErrorMessages() {
        let notAudio = tonearm(["info", fixturesDirectory + "/README.md"])
        XCTAssertEqual(notAudio.code, 1)
        XCTAssertTrue(notAudio.err.hasPrefix("tonearm: \(fixturesDirectory)/README.md: "), notAudio.err)
        XCTAssertTrue(notAudio.err.contains("('typ?')"), notAudio.err)
        let missing = tonearm(["info", "/nonexistent.wav"])
        XCTAssertEqual(missing.code, 1)
        XCTAssertTrue(missing.err.contains("(kAudioFileFileNotFoundError (-43))"), missing.err)
        XCTAssertEqual(tonearm(["info", "--bogus"]).code, 64)
        XCTAssertEqual(tonearm(["frobnicate"]).code, 64)
        XCTAssertEqual(tonearm([]).code, 64)
        XCTAssertEqual(tonearm(["packets"]).code, 64)
        XCTAssertEqual(tonearm(["packets", pcm + "wav_u8_stereo.wav", "--limit", "x"]).code, 64)
        for command in ["info", "packets", "formats", "convert", "demo"] {
            let h = tonearm([command, "--help"])
            XCTAssertEqual(h.code, 0, command)
            XCTAssertTrue(h.out.hasPrefix("usage: tonearm \(command)"), command)
        }
    }

    func testPacketsRows() throws {
        let r = tonearm(["packets", pcm + "wav_ima_adpcm.wav", "--limit", "3"])
        XCTAssertEqual(r.code, 0)
        let rows = r.out.split(separator: "\n")
        XCTAssertEqual(rows.count, 4)
        XCTAssertEqual(rows[1], "0\t60\t1024\t1017")
        XCTAssertEqual(rows[2], "1\t1084\t1024\t1017")
        let j = tonearm(["packets", pcm + "wav_ima_adpcm.wav", "--json"])
        let arr = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [[String: Int]])
        XCTAssertEqual(arr.count, 6)
        XCTAssertEqual(arr.last?["index"], 5)
        XCTAssertEqual(tonearm(["packets", pcm + "wav_s16le_mono_16k.wav", "--count"]).out, "16000\n")
    }

    func testFormatsLists() throws {
        let r = tonearm(["formats", "--json"])
        XCTAssertEqual(r.code, 0)
        let obj = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let types = try XCTUnwrap(obj["fileTypes"] as? [[String: Any]])
        let wave = try XCTUnwrap(types.first { $0["fileType"] as? String == "WAVE" })
        XCTAssertEqual(wave["writable"] as? Bool, true)
        XCTAssertEqual(wave["extensions"] as? [String], ["wav", "wave"])
    }

    /// `convert` decodes ADPCM and G.711 to 16-bit WAV exactly as ffmpeg decodes them.
    func testConvertMatchesFFmpegDecode() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        for name in ["wav_ima_adpcm.wav", "wav_ms_adpcm.wav", "wav_ulaw.wav", "wav_alaw.wav", "aifc_ima4.aifc",
                     "caf_ima4.caf", "wav_s24le_stereo.wav", "wav_u8_stereo.wav", "au_s16be.au"] {
            let input = pcm + name
            guard fileExists(input) else { XCTFail("the fixture \(input) is missing"); continue }
            let output = "\(dir)/\(name).wav"
            let r = tonearm(["convert", input, output, "-d", "LEI16"])
            XCTAssertEqual(r.code, 0, "\(name): \(r.err)")
            let ours = try runToolData(ffmpeg, ["-v", "error", "-i", output, "-f", "s16le", "-"])
            let theirs = try runToolData(ffmpeg, ["-v", "error", "-i", input, "-f", "s16le", "-"])
            XCTAssertEqual(ours.count, theirs.count, name)
            XCTAssertTrue(ours == theirs, "\(name): decoded samples differ from ffmpeg's")
        }
    }

    func testConvertResamplesMixesAndSummarises() throws {
        let dir = makeTemporaryDirectory()
        let src = pcm + "wav_s24le_stereo.wav"
        let r = tonearm(["convert", src, dir + "/x.caf", "-d", "LEF32@16000", "-c", "1", "--src-complexity", "bats", "-r", "127", "--json"])
        XCTAssertEqual(r.code, 0, r.err)
        let obj = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        XCTAssertEqual(obj["sampleRate"] as? Int, 16000)
        XCTAssertEqual(obj["channels"] as? Int, 1)
        XCTAssertEqual(obj["fileType"] as? String, "caff")
        let input = try ExtAudioFile(path: src)
        let expected = (input.fileLengthFrames * 16000 + Int64(input.fileDataFormat.sampleRate) - 1) / Int64(input.fileDataFormat.sampleRate)
        XCTAssertEqual((obj["frames"] as? NSNumber)?.int64Value, expected)
        let out = try ExtAudioFile(path: dir + "/x.caf")
        XCTAssertEqual(out.fileLengthFrames, expected)
        XCTAssertEqual(out.fileDataFormat.sampleRate, 16000)
        XCTAssertEqual(out.fileDataFormat.channelsPerFrame, 1)
        XCTAssertTrue(out.fileDataFormat.isFloat)
        // A channel map swapping the pair is exact.
        XCTAssertEqual(tonearm(["convert", src, dir + "/s.wav", "--channel-map", "1,0"]).code, 0)
        let a = try ExtAudioFile(path: src), b = try ExtAudioFile(path: dir + "/s.wav")
        var x: [UInt8] = [], y: [UInt8] = []
        _ = try a.read(frames: 1 << 20, into: &x)
        _ = try b.read(frames: 1 << 20, into: &y)
        XCTAssertEqual(x.count, y.count)
        XCTAssertTrue(stride(from: 0, to: x.count, by: 6).allSatisfy { Array(x[$0..<$0 + 3]) == Array(y[$0 + 3..<$0 + 6]) && Array(x[$0 + 3..<$0 + 6]) == Array(y[$0..<$0 + 3]) })
    }

    /// A 5.1 or 7.1 ALAC file (channels in ALAC's C L R… order) converts to a WAVE file in
    /// the channel mask's order: ffmpeg reads both to the same samples.
    func testConvertPutsMultichannelInWAVOrder() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        for name in ["alac_16_5.1.m4a", "alac_16_7.1.caf"] {
            let src = fixturesDirectory + "/alac/" + name
            let r = tonearm(["convert", src, dir + "/\(name).wav"])
            XCTAssertEqual(r.code, 0, r.err)
            let ours = try runToolData(ffmpeg, ["-v", "error", "-i", dir + "/\(name).wav", "-f", "s16le", "-"])
            let theirs = try runToolData(ffmpeg, ["-v", "error", "-i", src, "-f", "s16le", "-"])
            XCTAssertFalse(ours.isEmpty, name)
            XCTAssertTrue(ours == theirs, "\(name): the WAVE file's channels are not where ffmpeg puts them")
        }
    }

    /// Tags carry over where both types hold them (FLAC → FLAC, FLAC → CAF, FLAC → WAVE), and
    /// the FLAC written is the same audio, verified by flac when it is installed.
    func testConvertCarriesMetadataAndEncodesFLAC() throws {
        let dir = makeTemporaryDirectory()
        let src = fixturesDirectory + "/flac/flac_tags_picture.flac"
        for out in ["t.flac", "t.caf", "t.wav"] {
            let r = tonearm(["convert", src, dir + "/" + out])
            XCTAssertEqual(r.code, 0, "\(out): \(r.err)")
            let info = try AudioFile(path: dir + "/" + out).infoDictionary
            XCTAssertEqual(info[InfoDictionary.title], "Tonearm Test Tone", out)
            XCTAssertEqual(info[InfoDictionary.artist], "Tonearm Fixtures", out)
        }
        let a = try ExtAudioFile(path: src), b = try ExtAudioFile(path: dir + "/t.flac")
        XCTAssertEqual(b.fileDataFormat.formatID, .flac)
        XCTAssertEqual(b.fileDataFormat.bitsPerChannel, a.fileDataFormat.bitsPerChannel)
        let s16 = StreamDescription.pcm(sampleRate: 0, channels: a.fileDataFormat.channelsPerFrame, bits: 16)
        try a.setClientDataFormat(s16)
        try b.setClientDataFormat(s16)
        var x: [UInt8] = [], y: [UInt8] = []
        _ = try a.read(frames: 1 << 20, into: &x)
        _ = try b.read(frames: 1 << 20, into: &y)
        XCTAssertFalse(x.isEmpty)
        XCTAssertTrue(x == y, "the FLAC written decodes to other samples")
        let flac = try requireTool("flac")
        let decoded = try runToolData(flac, ["-d", "-c", "-s", "--force-raw-format", "--endian=little", "--sign=signed", dir + "/t.flac"])
        XCTAssertTrue(decoded == y, "flac -d disagrees")
    }

    /// `demo` (the README's first command) writes a WAV, a FLAC and a 16 kHz mono file per sample.
    func testDemoConvertsEverySample() throws {
        let dir = makeTemporaryDirectory()
        let r = tonearm(["demo", packageRoot + "/Samples", "--out", dir])
        XCTAssertEqual(r.code, 0, r.err)
        for name in ["tone-ima4.caf", "tone-mono-16k.aiff", "tone-stereo.mp3", "tone-stereo.wav"] {
            let speech = try ExtAudioFile(path: dir + "/\(name)-16k-mono.wav")
            XCTAssertEqual(speech.fileDataFormat.sampleRate, 16000, name)
            XCTAssertEqual(speech.fileDataFormat.channelsPerFrame, 1, name)
            let wav = try ExtAudioFile(path: dir + "/\(name).wav"), flac = try ExtAudioFile(path: dir + "/\(name).flac")
            XCTAssertEqual(flac.fileDataFormat.formatID, .flac, name)
            try flac.setClientDataFormat(wav.clientDataFormat)
            var a: [UInt8] = [], b: [UInt8] = []
            _ = try wav.read(frames: 1 << 20, into: &a)
            _ = try flac.read(frames: 1 << 20, into: &b)
            XCTAssertFalse(a.isEmpty, name)
            XCTAssertTrue(a == b, "\(name): the FLAC and the WAV differ")
        }
    }

    /// A device such as /dev/null is written in place (no temporary file beside it), so a
    /// decode can be timed or checked without storing its output.
    func testConvertWritesToADevice() throws {
        let r = tonearm(["convert", packageRoot + "/Samples/tone-stereo.mp3", "/dev/null", "-f", "WAVE", "-d", "LEF32", "--json"])
        XCTAssertEqual(r.code, 0, r.err)
        XCTAssertTrue(r.out.contains("\"frames\" : 22050") || r.out.contains("\"frames\": 22050"), r.out)
        XCTAssertFalse(fileExists("/dev/null.tonearm-partial"))
    }

    /// Unsupported combinations fail with 'fmt?' before writing; a failure part-way leaves
    /// no partial output and keeps the file that was there.
    func testConvertErrorsLeaveNothingBehind() throws {
        let dir = makeTemporaryDirectory()
        let src = pcm + "wav_s16le_mono_16k.wav"
        for args in [["-d", "alac"], ["-f", "AIFF", "-d", "LEF32"], ["-c", "9"]] {
            let r = tonearm(["convert", src, dir + "/x.aif"] + args)
            XCTAssertEqual(r.code, 1, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains("('fmt?')"), "\(args): \(r.err)")
            XCTAssertFalse(fileExists(dir + "/x.aif"))
            XCTAssertFalse(fileExists(dir + "/x.aif.tonearm-partial"))
        }
        XCTAssertEqual(tonearm(["convert", src, dir + "/x.wav", "-d", "LEQ99"]).code, 64)
        XCTAssertEqual(tonearm(["convert", src, dir + "/x.unknown"]).code, 64)
        XCTAssertEqual(tonearm(["convert", src, dir + "/x.wav", "--src-complexity", "fast"]).code, 64)
        // An MS ADPCM file whose third block names a predictor that does not exist fails
        // part-way with 'bada'.
        var bytes = try readWholeFile(pcm + "wav_ms_adpcm.wav")
        let blockAlign = Int(bytes[32]) | Int(bytes[33]) << 8
        let data = try XCTUnwrap((0..<bytes.count - 4).first { bytes[$0..<$0 + 4] == [0x64, 0x61, 0x74, 0x61] }) + 8
        bytes[data + 2 * blockAlign] = 0x7F
        try writeWholeFile(dir + "/bad.wav", bytes)
        try writeWholeFile(dir + "/keep.wav", [1, 2, 3])
        let r = tonearm(["convert", dir + "/bad.wav", dir + "/keep.wav"])
        XCTAssertEqual(r.code, 1, r.err)
        XCTAssertTrue(r.err.contains("('bada')"), r.err)
        XCTAssertTrue(try readWholeFile(dir + "/keep.wav") == [1, 2, 3])
        XCTAssertFalse(fileExists(dir + "/keep.wav.tonearm-partial"))
    }

    func testConvertBetweenPCMLayoutsIsLossless() throws {
        let dir = makeTemporaryDirectory()
        let src = pcm + "wav_s24le_stereo.wav"
        XCTAssertEqual(tonearm(["convert", src, dir + "/a.aif", "-f", "AIFF", "-d", "BEI24"]).code, 0)
        XCTAssertEqual(tonearm(["convert", dir + "/a.aif", dir + "/b.caf", "-d", "LEF32"]).code, 0)
        XCTAssertEqual(tonearm(["convert", dir + "/b.caf", dir + "/c.wav", "-d", "LEI24"]).code, 0)
        let a = try Tonearm_AudioFileData(src), c = try Tonearm_AudioFileData(dir + "/c.wav")
        XCTAssertEqual(a, c)
    }
}

/// All packet bytes of a file.
func Tonearm_AudioFileData(_ path: String) throws -> [UInt8] {
    let r = tonearm(["packets", path, "--count"])
    guard r.code == 0, let n = Int(r.out.trimmingCharacters(in: .whitespacesAndNewlines)) else { return [] }
    return try readPacketBytes(path, count: n)
}

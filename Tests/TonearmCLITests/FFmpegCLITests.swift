import XCTest
import Foundation
import TonearmCLI
import Tonearm
import TonearmTestSupport

/// `--decoder`, `-v`'s FFmpeg log, and what `formats` and `info` say about FFmpeg: in both
/// builds, with and without the FFmpeg trait.
final class FFmpegCLITests: XCTestCase {
    let ac3 = fixturesDirectory + "/ac3/ac3_stereo_48k.ac3"
    let flacs = [fixturesDirectory + "/flac/ffmpeg_default.flac", fixturesDirectory + "/flac/flac_24bit_24k.flac"]
    let decodingCommands = ["info", "convert", "play", "stream"]

    func json(_ r: (code: Int32, out: String, err: String)) throws -> [String: Any] {
        XCTAssertEqual(r.code, 0, r.err)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], r.out)
    }

    /// Tonearm has no AC-3 decoder of its own, so with only native decoders there is none.
    func testNativeDecodersLeaveAC3Undecodable() throws {
        let dir = makeTemporaryDirectory()
        let r = tonearm(["convert", ac3, dir + "/out.wav", "--decoder", "native"])
        XCTAssertEqual(r.code, 1, r.err)
        XCTAssertTrue(r.err.contains("('fmt?')"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out.wav"))
        let info = tonearm(["info", ac3, "--decoder", "native"])
        XCTAssertEqual(info.code, 0, info.err)
        XCTAssertTrue(info.out.contains("\nDecoder:         none ('fmt?')\n"), info.out)
        XCTAssertTrue(try json(tonearm(["info", ac3, "--decoder", "native", "--json"]))["decoder"] is NSNull)
    }

    func testInfoNamesTheNativeDecoder() throws {
        let r = tonearm(["info", flacs[0]])
        XCTAssertEqual(r.code, 0, r.err)
        XCTAssertTrue(r.out.contains("\nDecoder:         native\n"), r.out)
        let decoder = try XCTUnwrap(try json(tonearm(["info", flacs[0], "--json"]))["decoder"] as? [String: Any])
        XCTAssertEqual(decoder["backend"] as? String, "native")
        XCTAssertTrue(decoder["codec"] is NSNull)
    }

    /// The preference and FFmpeg's log level are the process's; a command must not leave
    /// them set for the next one (in-process runs, as here).
    func testDecoderChoiceEndsWithTheCommand() {
        _ = tonearm(["info", ac3, "--decoder", "native"])
        XCTAssertEqual(CodecRegistry.preference, .automatic)
        _ = tonearm(["convert", ac3, makeTemporaryDirectory() + "/out.wav", "--decoder", "native", "-v"])
        XCTAssertEqual(CodecRegistry.preference, .automatic)
        #if FFmpeg
        XCTAssertEqual(FFmpegLog.level, .quiet)
        #endif
    }

    func testDecoderOptionIsCheckedAndDocumented() {
        for command in decodingCommands {
            let bad = tonearm([command, "x", "--decoder", "libav"])
            XCTAssertEqual(bad.code, 64, command)
            XCTAssertTrue(bad.err.contains("--decoder wants ffmpeg, native or auto, not 'libav'"), bad.err)
            XCTAssertTrue(tonearm([command, "--help"]).out.contains("--decoder WHICH"), command)
        }
        XCTAssertEqual(tonearm(["info", flacs[0], "--decoder", "auto"]).code, 0)
        XCTAssertEqual(tonearm(["packets", flacs[0], "--decoder", "native"]).code, 64, "packets decodes nothing")
    }

    #if FFmpeg
    func testInfoNamesFFmpegsDecoder() throws {
        let r = tonearm(["info", ac3])
        XCTAssertEqual(r.code, 0, r.err)
        XCTAssertTrue(r.out.contains("\nDecoder:         FFmpeg (ac3)\n"), r.out)
        let decoder = try XCTUnwrap(try json(tonearm(["info", ac3, "--json"]))["decoder"] as? [String: Any])
        XCTAssertEqual(decoder["backend"] as? String, "ffmpeg")
        XCTAssertEqual(decoder["codec"] as? String, "ac3")
        // --decoder ffmpeg names FFmpeg's decoder even where a native one would win.
        XCTAssertTrue(tonearm(["info", flacs[0], "--decoder", "ffmpeg"]).out.contains("\nDecoder:         FFmpeg (flac)\n"))
    }

    /// FLAC is lossless: FFmpeg's decoder and Tonearm's must give the same samples.
    func testConvertWithFFmpegsDecoderGivesTheNativeSamples() throws {
        let dir = makeTemporaryDirectory()
        for (i, flac) in flacs.enumerated() {
            let viaFFmpeg = "\(dir)/ffmpeg\(i).wav", native = "\(dir)/native\(i).wav"
            let f = tonearm(["convert", flac, viaFFmpeg, "--decoder", "ffmpeg"])
            XCTAssertEqual(f.code, 0, "\(flac): \(f.err)")
            let n = tonearm(["convert", flac, native, "--decoder", "native"])
            XCTAssertEqual(n.code, 0, "\(flac): \(n.err)")
            let ours = try decodeInterleaved(native, as: Int32.self)
            XCTAssertGreaterThan(ours.count, 0, flac)
            XCTAssertTrue(try decodeInterleaved(viaFFmpeg, as: Int32.self) == ours, "\(flac): FFmpeg's samples differ")
            XCTAssertEqual(try readWholeFile(viaFFmpeg), try readWholeFile(native), flac)
        }
        // The option reaches convert's decoder: AC-3, which only FFmpeg decodes, converts.
        let r = tonearm(["convert", ac3, dir + "/ac3.wav", "--decoder", "ffmpeg"])
        XCTAssertEqual(r.code, 0, r.err)
    }

    func testFormatsMarksWhatFFmpegDecodes() throws {
        let obj = try json(tonearm(["formats", "--json"]))
        let decoders = try XCTUnwrap(obj["decoders"] as? [[String: Any]])
        let ac3 = try XCTUnwrap(decoders.first { $0["formatID"] as? String == "ac-3" })
        XCTAssertEqual(ac3["backend"] as? String, "ffmpeg")
        XCTAssertEqual(ac3["codec"] as? String, "ac3")
        let flac = try XCTUnwrap(decoders.first { $0["formatID"] as? String == "flac" })
        XCTAssertEqual(flac["backend"] as? String, "native")
        XCTAssertTrue(flac["codec"] is NSNull)
        XCTAssertEqual(decoders.compactMap { $0["formatID"] as? String }, obj["decodableFormats"] as? [String])
        XCTAssertTrue((obj["ffmpegVersions"] as? String)?.hasPrefix("avcodec ") == true, String(describing: obj["ffmpegVersions"]))
        let types = try XCTUnwrap(obj["fileTypes"] as? [[String: Any]])
        XCTAssertTrue(types.allSatisfy { $0["ffmpeg"] is Bool })
        let wave = try XCTUnwrap(types.first { $0["fileType"] as? String == "WAVE" })
        XCTAssertEqual(wave["ffmpeg"] as? Bool, false)
        let text = tonearm(["formats"])
        XCTAssertEqual(text.code, 0, text.err)
        XCTAssertTrue(text.out.hasPrefix("FFmpeg: avcodec "), text.out)
        XCTAssertTrue(text.out.contains("'ac-3' (FFmpeg: ac3)"), text.out)
        XCTAssertTrue(text.out.contains("\n(FFmpeg): read or decoded by FFmpeg's libraries"), text.out)
    }
    #else
    func testFFmpegDecoderNeedsTheTrait() {
        for command in decodingCommands {
            let r = tonearm([command, ac3, "--decoder", "ffmpeg"])
            XCTAssertEqual(r.code, 64, command)
            XCTAssertTrue(r.err.contains("this tonearm was built without the FFmpeg trait; rebuild with swift build --traits FFmpeg"),
                          "\(command): \(r.err)")
        }
    }

    func testFormatsMarksNothingWithoutTheTrait() throws {
        let obj = try json(tonearm(["formats", "--json"]))
        let decoders = try XCTUnwrap(obj["decoders"] as? [[String: Any]])
        XCTAssertFalse(decoders.isEmpty)
        XCTAssertTrue(decoders.allSatisfy { $0["backend"] as? String == "native" && $0["codec"] is NSNull })
        XCTAssertTrue(obj["ffmpegVersions"] is NSNull)
        let types = try XCTUnwrap(obj["fileTypes"] as? [[String: Any]])
        XCTAssertTrue(types.allSatisfy { $0["ffmpeg"] as? Bool == false })
        let text = tonearm(["formats"])
        XCTAssertTrue(text.out.hasPrefix("File types"), text.out)
        XCTAssertFalse(text.out.contains("FFmpeg"), text.out)
    }
    #endif

    #if FFmpeg
    /// Seed 002's player (Examples/QueuePlayer): a WMA decoded by FFmpeg, converted to
    /// interleaved Int16 and played through an AudioQueue with three buffers, into a WAV
    /// (the file backend): exactly the 16-bit samples the ffmpeg tool decodes.
    func testSeed002QueuePlayerPlaysAWMA() throws {
        guard let player = builtExecutable("queue-player", besideTestsOf: Self.self) else {
            throw skipOrFail("no built queue-player beside the tests (swift build --traits FFmpeg builds it)")
        }
        let ffmpeg = try requireTool("ffmpeg")
        let wma = fixturesDirectory + "/ffmpeg/wmav2_stereo_44k.wma"
        let out = makeTemporaryDirectory() + "/played.wav"
        let said = try runTool(player, [wma, "--output", out])
        XCTAssertTrue(said.contains("('wma2', 44100 Hz, 2 ch) on file"), said)
        XCTAssertTrue(said.contains("Played 43008 frames"), said)
        let played = try runToolData(ffmpeg, ["-v", "error", "-i", out, "-f", "s16le", "-"])
        let expected = try runToolData(ffmpeg, ["-v", "error", "-bitexact", "-i", wma, "-f", "s16le", "-"])
        XCTAssertEqual(played.count, 43008 * 4)
        XCTAssertTrue(played == expected, "the played samples differ from ffmpeg's")
    }
    #endif
}

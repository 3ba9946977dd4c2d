import Tonearm
import TonearmTestSupport
import XCTest

/// `tonearm convert` names the file an error belongs to, and shows codes one way: 'typ?' for
/// four-char codes, Apple's constant for numeric ones (issue 16 §2).
final class CLIConvertMessageTests: XCTestCase {
    let source = fixturesDirectory + "/caf/remux_flac.caf"

    /// A CAF whose table lists a packet past the end of the file converts its whole packets,
    /// says so once, and the output holds exactly those samples (ffmpeg decodes both).
    func testDamagedPacketTableConvertsTheWholePackets() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        let input = dir + "/damaged.caf", output = dir + "/out.wav"
        var bytes = try readWholeFile(source)
        for i in 160..<168 { bytes[i] = 0xFF }  // 'data' size -1
        try writeWholeFile(input, Array(bytes.dropLast(3000)))
        let r = tonearm(["convert", input, output])
        XCTAssertEqual(r.code, 0, r.err)
        XCTAssertEqual(r.err, "tonearm: \(input): the file's packet table lists 1 packet past its end; converting the 2 whole packets before them\n")
        let reference = try runToolData(ffmpeg, ["-v", "error", "-i", source, "-f", "s16le", "-"])
        let converted = try runToolData(ffmpeg, ["-v", "error", "-i", output, "-f", "s16le", "-"])
        XCTAssertEqual(converted.count, 9216 * 4)
        XCTAssertEqual(converted, Array(reference.prefix(9216 * 4)))
        let probe = try runTool(try requireTool("ffprobe"), ["-v", "error", "-show_entries", "stream=duration_ts,channels,sample_rate",
                                                               "-of", "csv=p=0", output])
        XCTAssertEqual(probe, "44100,2,9216")
    }

    /// An error while decoding the input names the input, not the output.
    func testInputErrorNamesTheInput() throws {
        let dir = makeTemporaryDirectory()
        let input = dir + "/bad.caf", output = dir + "/out.wav"
        var bytes = try readWholeFile(source)
        for i in (172 + 11000)..<(172 + 11400) { bytes[i] = 0 }  // inside the second packet
        try writeWholeFile(input, bytes)
        let r = tonearm(["convert", input, output])
        XCTAssertEqual(r.code, 1)
        XCTAssertEqual(r.err, "tonearm: \(input): a FLAC frame of 10203 bytes fails its CRC-16 ('bada')\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    /// An output that cannot be created names the output, with a numeric code by its name.
    func testOutputErrorNamesTheOutputAndTheConstant() {
        let r = tonearm(["convert", source, "/nonexistent-dir/out.wav"])
        XCTAssertEqual(r.code, 1)
        XCTAssertEqual(r.err, "tonearm: /nonexistent-dir/out.wav: cannot open: No such file or directory (kAudioFileFileNotFoundError (-43))\n")
        let missing = tonearm(["convert", "/nonexistent-dir/in.caf", "/tmp/out.wav"])
        XCTAssertEqual(missing.err, "tonearm: /nonexistent-dir/in.caf: cannot open: No such file or directory (kAudioFileFileNotFoundError (-43))\n")
        let notAudio = tonearm(["convert", fixturesDirectory + "/README.md", "/tmp/out.wav"])
        XCTAssertTrue(notAudio.err.hasPrefix("tonearm: \(fixturesDirectory)/README.md: "), notAudio.err)
        XCTAssertTrue(notAudio.err.hasSuffix(" ('typ?')\n"), notAudio.err)
    }
}

import XCTest
import Foundation
import TonearmCLI
import Tonearm
import TonearmTestSupport

/// `tonearm convert` on AAC (aacdec/ fixtures): the WAV holds ffmpeg's decode rounded to 16
/// bits within one LSB, the edit list's frames (gapless), and 5.1 in WAV's channel order, as
/// ffmpeg writes it.
final class CLIAACTests: XCTestCase {
    func testConvertAACToWAVMatchesFFmpeg() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // name → (frames Tonearm gives, WAV channel mask or nil)
        let cases: [(String, Int, UInt32?)] = [("lc_gapless_44k.m4a", 13230, nil), ("lc_5.1_48k.m4a", 9600, 0x3F),
                                               ("lc_stereo_48k.loas", 16384, nil)]
        for (name, frames, mask) in cases {
            let input = fixturesDirectory + "/aacdec/" + name
            let theirs = CLIMPEGTests.int16s(try runToolData(ffmpeg, ["-v", "error", "-i", input, "-f", "s16le", "-"]))
            let output = "\(dir)/\(name).wav"
            let r = tonearm(["convert", input, output])
            XCTAssertEqual(r.code, 0, "\(name): \(r.err)")
            guard r.code == 0 else { continue }
            let file = try AudioFile(path: output)
            let format = try XCTUnwrap(try file.properties.dataFormat)
            XCTAssertEqual(format.bitsPerChannel, 16, name)
            let channels = Int(format.channelsPerFrame)
            if let mask { XCTAssertEqual(try file.properties.channelLayout?.waveChannelMask, mask, name) }
            let count = Int(try file.properties.audioDataPacketCount ?? 0)
            XCTAssertEqual(count, frames, "\(name): frames")
            let ours = CLIMPEGTests.int16s(try file.readPacketData(startingAt: 0, count: count).data)
            var worst = 0, at = -1
            for i in 0..<min(ours.count, theirs.count) where abs(Int(ours[i]) - Int(theirs[i])) > worst {
                worst = abs(Int(ours[i]) - Int(theirs[i]))
                at = i
            }
            XCTAssertLessThanOrEqual(worst, 1, "\(name): sample \(at) (channel \(at % channels)) is \(worst) LSB from ffmpeg's")
        }
    }
}

/// `tonearm convert` and `tonearm info` on HE-AAC (aache/ fixtures): the WAV has the output
/// rate, PS's two channels and ffmpeg's frame count, within one LSB of ffmpeg's 16-bit decode;
/// `info` names the format the frames decode to where the container says AAC LC.
final class CLIHEAACTests: XCTestCase {
    func testConvertHEAACToWAVMatchesFFmpeg() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // name → (rate, channels, frames: ffmpeg's)
        let cases: [(String, Double, Int, Int)] = [("ps_20_44k_aot29.m4a", 44100, 2, 28672), ("he_stereo_48k.aac", 48000, 2, 32768),
                                                   ("ps_baseline_48k.aac", 48000, 2, 32768)]
        for (name, rate, channels, frames) in cases {
            let input = fixturesDirectory + "/aache/" + name
            guard FileManager.default.fileExists(atPath: input) else { throw skipOrFail("no aache fixtures: they are committed", required: true) }
            let theirs = CLIMPEGTests.int16s(try runToolData(ffmpeg, ["-v", "error", "-i", input, "-f", "s16le", "-"]))
            let output = "\(dir)/\(name).wav"
            let r = tonearm(["convert", input, output])
            XCTAssertEqual(r.code, 0, "\(name): \(r.err)")
            guard r.code == 0 else { continue }
            let file = try AudioFile(path: output)
            let format = try XCTUnwrap(try file.properties.dataFormat)
            XCTAssertEqual([format.sampleRate, Double(format.channelsPerFrame), Double(format.bitsPerChannel)],
                           [rate, Double(channels), 16], name)
            let count = Int(try file.properties.audioDataPacketCount ?? 0)
            XCTAssertEqual(count, frames, "\(name): frames")
            let ours = CLIMPEGTests.int16s(try file.readPacketData(startingAt: 0, count: count).data)
            XCTAssertEqual(ours.count, theirs.count, name)
            var worst = 0
            for i in 0..<min(ours.count, theirs.count) { worst = max(worst, abs(Int(ours[i]) - Int(theirs[i]))) }
            XCTAssertLessThanOrEqual(worst, 1, "\(name): \(worst) LSB from ffmpeg's")
        }
    }

    func testInfoShowsTheDecodedFormat() throws {
        let input = fixturesDirectory + "/aache/ps_baseline_48k.aac"
        guard FileManager.default.fileExists(atPath: input) else { throw skipOrFail("no aache fixtures: they are committed", required: true) }
        let text = tonearm(["info", input])
        XCTAssertEqual(text.code, 0, text.err)
        XCTAssertTrue(text.out.contains("Data format:     1 ch, 24000 Hz, 'aac '"), text.out)
        XCTAssertTrue(text.out.contains("Decodes as:      2 ch, 48000 Hz, 'aacp'"), text.out)
        XCTAssertTrue(text.out.contains("[ 0] format:\t  1 ch, 48000 Hz, 'aach'"), text.out)
        let json = tonearm(["info", "--json", input])
        XCTAssertEqual(json.code, 0, json.err)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let decoded = try XCTUnwrap(object["decodedFormat"] as? [String: Any])
        XCTAssertEqual(decoded["formatID"] as? String, "aacp")
        XCTAssertEqual(decoded["sampleRate"] as? Double, 48000)
        XCTAssertEqual(decoded["channelsPerFrame"] as? Int, 2)
        XCTAssertEqual(decoded["framesPerPacket"] as? Int, 2048)
        let list = try XCTUnwrap(object["formatList"] as? [[String: Any]])
        XCTAssertEqual(list.compactMap { ($0["format"] as? [String: Any])?["formatID"] as? String }, ["aach", "aac "])
        // An explicit file says it all in its format: no decodedFormat.
        let m4a = tonearm(["info", "--json", fixturesDirectory + "/aache/ps_20_44k_aot29.m4a"])
        let m4aObject = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(m4a.out.utf8)) as? [String: Any])
        XCTAssertTrue(m4aObject["decodedFormat"] is NSNull)
        XCTAssertEqual((m4aObject["format"] as? [String: Any])?["formatID"] as? String, "aacp")
    }
}

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

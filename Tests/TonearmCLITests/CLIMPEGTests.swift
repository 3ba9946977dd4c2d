import XCTest
import Foundation
import TonearmCLI
import Tonearm
import TonearmTestSupport

/// `tonearm convert` on MPEG audio (mp3dec/ fixtures): the WAV it writes holds ffmpeg's
/// decode, rounded to 16 bits, within one LSB, and exactly the frames left after gapless
/// trimming.
final class CLIMPEGTests: XCTestCase {
    static func int16s(_ bytes: [UInt8]) -> [Int16] {
        bytes.withUnsafeBytes { raw in
            (0..<bytes.count / 2).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
    }

    func testConvertMPEGToWAVMatchesFFmpeg() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        let files = ["lame_cbr128_js.mp3": "mp3float", "lame_vbr_v2.mp3": "mp3float", "lame_mono_64k.mp3": "mp3float",
                     "lame_mpeg2_22k_64k.mp3": "mp3float", "lame_cbr32_reservoir.mp3": "mp3float",
                     "twolame_joint.mp2": "mp2float"]
        for (name, decoder) in files.sorted(by: { $0.key < $1.key }) {
            let input = fixturesDirectory + "/mp3dec/" + name
            // ffmpeg rounds its float decode to 16 bits (no dither), as convert does by default.
            let theirs = Self.int16s(try runToolData(ffmpeg, ["-v", "error", "-c:a", decoder, "-i", input, "-f", "s16le", "-"]))
            for options in [[], ["-d", "LEI16"]] {
                let output = "\(dir)/\(name)\(options.count).wav"
                let r = tonearm(["convert", input, output] + options)
                XCTAssertEqual(r.code, 0, "\(name) \(options): \(r.err)")
                guard r.code == 0 else { continue }
                // The default for lossy input is 16-bit integers.
                let file = try AudioFile(path: output)
                let format = try XCTUnwrap(try file.properties.dataFormat)
                XCTAssertEqual(format.bitsPerChannel, 16, name)
                XCTAssertFalse(format.isFloat, name)
                let channels = Int(format.channelsPerFrame)
                let frames = Int(try file.properties.audioDataPacketCount ?? 0)
                let ours = Self.int16s(try file.readPacketData(startingAt: 0, count: frames).data)
                XCTAssertEqual(ours.count / channels, theirs.count / channels, "\(name) \(options): frames after gapless trimming")
                var worst = 0, at = -1
                for i in 0..<min(ours.count, theirs.count) where abs(Int(ours[i]) - Int(theirs[i])) > worst {
                    worst = abs(Int(ours[i]) - Int(theirs[i]))
                    at = i
                }
                XCTAssertLessThanOrEqual(worst, 1, "\(name) \(options): sample \(at) is \(worst) LSB from ffmpeg's")
            }
        }
        try? FileManager.default.removeItem(atPath: dir)
    }
}

import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// `tonearm convert --channel-map` goes through ExtAudioFile's throwing setChannelMap path:
/// a map naming a channel the input lacks is a usage error naming the option (not an error
/// about the output file), and nothing is written; a valid map picks the channels.
final class CLIChannelMapTests: XCTestCase {
    func testAMapNamingAMissingChannelIsAUsageErrorAndWritesNothing() throws {
        let dir = makeTemporaryDirectory()
        let src = fixturesDirectory + "/pcm/wav_s24le_stereo.wav"
        let r = tonearm(["convert", src, dir + "/bad.wav", "--channel-map", "0,5"])
        XCTAssertEqual(r.code, 64, r.err)
        XCTAssertTrue(r.err.contains("--channel-map names input channel 5, but \(src) has 2 (0 to 1)"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/bad.wav"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/bad.wav.tonearm-partial"))
    }

    func testAOneEntryMapTakesThatChannel() throws {
        let dir = makeTemporaryDirectory()
        let src = fixturesDirectory + "/pcm/wav_s24le_stereo.wav"
        let r = tonearm(["convert", src, dir + "/right.wav", "--channel-map", "1"])
        XCTAssertEqual(r.code, 0, r.err)
        var stereo: [UInt8] = [], mono: [UInt8] = []
        _ = try ExtAudioFile(path: src).read(frames: 1 << 20, into: &stereo)
        let out = try ExtAudioFile(path: dir + "/right.wav")
        XCTAssertEqual(out.fileDataFormat.channelsPerFrame, 1)
        _ = try out.read(frames: 1 << 20, into: &mono)
        // 24-bit samples, 3 bytes each: every output frame is the input frame's second sample.
        XCTAssertEqual(mono.count * 2, stereo.count)
        XCTAssertTrue(stride(from: 0, to: mono.count, by: 3).allSatisfy {
            Array(mono[$0..<$0 + 3]) == Array(stereo[$0 * 2 + 3..<$0 * 2 + 6])
        })
    }
}

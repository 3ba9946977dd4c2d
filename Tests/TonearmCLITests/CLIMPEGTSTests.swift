import XCTest
import Foundation
import TonearmCLI
import Tonearm
import TonearmTestSupport

/// `tonearm info`, `packets`, `convert` and `play` on MPEG-TS files (mpegts/ fixtures).
final class CLIMPEGTSTests: XCTestCase {
    let fixtures = fixturesDirectory + "/mpegts/"

    /// `info --json`: the type, the packet count and duration ffprobe gives, and the tracks
    /// with the one read marked; `packets` lists every packet.
    func testInfoAndPackets() throws {
        let path = fixtures + "two_langs.ts"
        let json = try Data(contentsOf: URL(fileURLWithPath: fixtures + "two_langs.json"))
        let golden = try XCTUnwrap(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let r = tonearm(["info", "--json", path])
        XCTAssertEqual(r.code, 0, r.err)
        let info = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        XCTAssertEqual(info["fileType"] as? String, "mp2t")
        let packets = (golden["packets"] as! [[Any]]).count
        XCTAssertEqual((info["audioPacketCount"] as? NSNumber)?.intValue, packets)
        XCTAssertEqual((info["duration"] as? NSNumber)?.doubleValue ?? 0, Double(packets * 1024) / 48000, accuracy: 1e-9)
        let tracks = try XCTUnwrap(info["tracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.map { ($0["id"] as? NSNumber)?.intValue }, [256, 257])
        XCTAssertEqual(tracks.map { $0["selected"] as? Bool }, [true, false])
        let list = tonearm(["packets", fixtures + "aac.ts"])
        XCTAssertEqual(list.code, 0, list.err)
        XCTAssertEqual(list.out.split(separator: "\n").count, packets + 1)
    }

    /// `convert` to WAV and `play` through the file backend: the decode has ffmpeg's length
    /// (within a packet: ffmpeg does not trim the AAC priming in TS either), for AAC and Opus,
    /// and for AC-3 in the FFmpeg trait's build.
    func testConvertAndPlay() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["aac.ts", "opus.ts", "ac3.ts"] {
            let input = fixtures + name
            let theirs = try runToolData(ffmpeg, ["-v", "error", "-i", input, "-map", "0:a:0", "-f", "s16le", "-"]).count / 4
            let output = "\(dir)/\(name).wav"
            let r = tonearm(["convert", input, output])
            #if !FFmpeg
            if name == "ac3.ts" {
                // No native AC-3 decoder: refused with a four-char code (the FFmpeg trait's
                // build decodes it, and goes on below).
                XCTAssertEqual(r.code, 1, "Tonearm has no AC-3 decoder")
                XCTAssertTrue(r.err.contains("('"), r.err)
                continue
            }
            #endif
            XCTAssertEqual(r.code, 0, "\(name): \(r.err)")
            let frames = try AudioFile(path: output).properties.audioDataPacketCount ?? 0
            XCTAssertLessThanOrEqual(abs(Int(frames) - theirs), 1024, name)
            let played = "\(dir)/\(name).played.wav"
            let p = tonearm(["play", input, "--backend", "file", "--output", played])
            XCTAssertEqual(p.code, 0, "\(name): \(p.err)")
            XCTAssertEqual(try AudioFile(path: played).properties.audioDataPacketCount, frames, name)
        }
    }
}

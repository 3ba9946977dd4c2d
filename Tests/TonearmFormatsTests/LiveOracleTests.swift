import XCTest
import Foundation
import Tonearm
import TonearmTestSupport

/// Every PCM-family fixture against ffprobe and ffmpeg run now, not only against the
/// committed goldens: the rate and channels ffprobe reports, and the hash of ffmpeg's s16
/// decode, which must equal both the golden and Tonearm's own decode.
final class LiveOracleTests: XCTestCase {
    func testEveryFixtureAgainstFFprobeAndFFmpeg() throws {
        let ffprobe = try requireTool("ffprobe"), ffmpeg = try requireTool("ffmpeg")
        let files = fixtureFiles("pcm")
        guard !files.isEmpty else { return XCTFail("no fixtures in Tests/Fixtures/pcm") }
        for path in files {
            let file = try AudioFile(path: path)
            let p = try file.properties
            let f = try XCTUnwrap(p.dataFormat, path)
            let probed = try runTool(ffprobe, ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                               "stream=sample_rate,channels", "-of", "csv=p=0", path])
            XCTAssertEqual(probed, "\(Int(f.sampleRate)),\(f.channelsPerFrame)", path)

            let theirs = try runToolData(ffmpeg, ["-v", "error", "-bitexact", "-i", path, "-f", "s16le", "-"])
            let n = Int(p.audioDataPacketCount ?? 0)
            let data = try file.readPacketData(startingAt: 0, count: n).data
            let decoder = try CodecRegistry.makeDecoder(for: f, magicCookie: p.magicCookie, output: .int16)
            let buffer = PCMBuffer(commonFormat: .int16, sampleRate: f.sampleRate, channels: Int(f.channelsPerFrame),
                                   interleaved: true, frameCapacity: max(1, n * decoder.maximumFramesPerPacket))
            try data.withBytes { raw throws(AudioError) in try decoder.decode(raw, packetCount: n, descriptions: nil, into: buffer) }
            let ours = buffer.interleavedBytes()
            XCTAssertEqual(ours.count, theirs.count, path)
            XCTAssertTrue(ours == theirs, "\(path): Tonearm's decode differs from ffmpeg's")
        }
    }
}

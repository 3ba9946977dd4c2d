import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

/// PacketToRollDistance answers per packet: never more packets than come before it, 80 ms of
/// packets for Opus counted from each packet's duration, the bit reservoir's reach for MP3,
/// 1 for AAC, 0 for formats whose packets decode alone. Before, the argument was ignored and
/// every packet of a file got the same answer (0 for everything but an MP4 with a 'roll' group).
final class RollDistanceTests: XCTestCase {
    private func golden(_ relativePath: String) throws -> [String: Any] {
        let json = (fixturesDirectory + "/" + relativePath as NSString).deletingPathExtension + ".json"
        let data = try XCTUnwrap(FileManager.default.contents(atPath: json), "no golden for \(relativePath)")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func ints(_ v: Any?) -> [Int] { (v as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue } }

    private func rolls(_ relativePath: String) throws -> [Int64] {
        let f = try AudioFile(path: fixturesDirectory + "/" + relativePath)
        return try (0..<f.audioDataPacketCount).map { p throws(AudioError) in try f.rollDistance(forPacket: p) }
    }

    /// The packets before `p` whose ffprobe durations add up to 80 ms (3840 frames at 48 kHz).
    private func opusRoll(_ p: Int, durations: [Int]) -> Int64 {
        var sum = 0, n: Int64 = 0, q = p - 1
        while q >= 0 && sum < 3840 { sum += durations[q]; n += 1; q -= 1 }
        return n
    }

    func testOggOpusCountsTheLast80msOfPacketsFromTheirDurations() throws {
        for name in ["ogg/opus_opusenc_stereo.opus", "ogg/opus_ffmpeg_mono.opus", "mp4/opus.mp4"] {
            let durations = ints(try golden(name)["packetDurations"])
            let got = try rolls(name)
            XCTAssertEqual(got.count, durations.count, name)
            XCTAssertEqual(got, (0..<durations.count).map { opusRoll($0, durations: durations) }, name)
        }
        // 20-ms packets (opusenc) need 4, 40-ms packets (ffmpeg's mono) 2; the first ones fewer.
        XCTAssertEqual(Array(try rolls("ogg/opus_opusenc_stereo.opus")[0..<7]), [0, 1, 2, 3, 4, 4, 4])
        XCTAssertEqual(Array(try rolls("ogg/opus_ffmpeg_mono.opus")[0..<5]), [0, 1, 2, 2, 2])
    }

    func testMP3CountsTheFramesHoldingTheBitReservoir() throws {
        // MPEG-1 stereo at 128 kbit/s: 417-418-byte frames carry about 380 bytes of main data,
        // so 511 bytes of reservoir for the packet before reach 2 frames further back: 3.
        XCTAssertEqual(Array(try rolls("mpeg/lame_cbr128.mp3")[0..<8]), [0, 1, 2, 3, 3, 3, 3, 3])
        // MPEG-2 mono at 22,050 Hz: 208-209-byte frames, a 255-byte reservoir: 3 as well.
        XCTAssertEqual(Array(try rolls("mpeg/lame_mpeg2_22k.mp3")[0..<6]), [0, 1, 2, 3, 3, 3])
        // Every frame of a VBR file, from ffprobe's frame sizes: 1 for the overlap plus the
        // frames before that whose main data (size less header, CRC and 32 bytes of side
        // information) reaches 511 bytes.
        let g = try golden("mpeg/lame_vbr_v4.mp3")
        let offsets = ints(g["packetOffsets"])
        let sizes = zip(offsets, offsets.dropFirst()).map { $1 - $0 }
        let got = try rolls("mpeg/lame_vbr_v4.mp3")
        XCTAssertEqual(got.count, offsets.count)
        for p in 1..<sizes.count {
            var sum = 0, n = 0, q = p - 2
            while q >= 0 && sum < 511 { sum += sizes[q] - 38; n += 1; q -= 1 }
            XCTAssertEqual(got[p], Int64(min(p, 1 + n)), "packet \(p)")
        }
    }

    func testConstantAnswersOfOtherFormats() throws {
        XCTAssertEqual(Array(try rolls("adts/aac_lc_stereo.aac")[0..<3]), [0, 1, 1], "AAC: the MDCT's previous block")
        XCTAssertEqual(Array(try rolls("mp4/aac_faststart.m4a")[0..<3]), [0, 1, 1], "the file's 'roll' group, -1")
        XCTAssertEqual(Array(try rolls("mpeg/ffmpeg_layer2.mp2")[0..<3]), [0, 1, 1])
        XCTAssertEqual(Set(try rolls("flac/flac_default.flac")), [0])
        XCTAssertEqual(Set(try rolls("caf/ffmpeg_alac_16_stereo.caf")), [0])
    }

    func testPacketsOutsideTheFileThrow() throws {
        let f = try AudioFile(path: fixturesDirectory + "/mpeg/lame_cbr128.mp3")
        let n = try f.audioDataPacketCount
        XCTAssertEqual(try f.rollDistance(forPacket: n - 1), 3)
        for p in [-1, n, n + 100] {
            XCTAssertThrowsError(try f.rollDistance(forPacket: p), "\(p)") {
                XCTAssertEqual(($0 as? AudioError)?.code, .invalidPacketOffset)
            }
        }
    }

    /// A stream keeps no packet table, so it answers the bound that holds for any packet
    /// sizes: for MP3 at 44.1 kHz stereo the smallest frame (32 kbit/s, 104 bytes) carries
    /// 68 bytes of main data, so 511 bytes take 8 frames, plus 1; for Opus, 4 packets (of
    /// 20 ms, the usual size). Never fewer than the file's exact answer.
    func testAudioFileStreamAnswersTheBoundWithoutAPacketTable() throws {
        for (name, bound) in [("mpeg/lame_cbr128.mp3", Int64(9)), ("ogg/opus_ffmpeg_mono.opus", 4)] {
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, _ in })
            try stream.parse(try readWholeFile(fixturesDirectory + "/" + name))
            let exact = try rolls(name)
            for p in 0..<exact.count {
                let got = try stream.rollDistance(forPacket: Int64(p))
                XCTAssertEqual(got, min(Int64(p), bound), "\(name) packet \(p)")
                XCTAssertGreaterThanOrEqual(got, exact[p], "\(name) packet \(p)")
            }
        }
    }
}

import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

/// The HLS client (issue 20) on the fixtures of make-hls.sh, served by the test server: VOD
/// in every segment type against ffmpeg's decode of the same playlist, live windows, variants,
/// encryption, discontinuities, faults, seeking and recording.
final class HLSStreamTests: XCTestCase {
    private var server: HTTPTestServer!

    override func setUpWithError() throws {
        server = try HTTPTestServer.starting().get()
    }

    override func tearDown() {
        server?.stop()
    }

    private struct Decoded {
        var samples: [Float]
        var format: StreamDescription
        var events: [StreamDecoder.Event]
        var frames: Int { samples.count / Int(format.channelsPerFrame) }
    }

    /// Decodes a presentation to its end as float32 at its first format's rate, as a player
    /// reads it (at most `seconds`, at most `limit` frames).
    private func decode(_ url: String, options: HLSStream.Options = HLSStream.Options(), seekTo: Double? = nil,
                        seconds: Double = 60, limit: Int = 10_000_000) throws -> Decoded
    {
        let decoder = StreamDecoder(hls: HLSStream(url: url, options: options))
        defer { decoder.close() }
        let events = Locked<[StreamDecoder.Event]>([])
        decoder.onEvent = { e in events.update { $0.append(e) } }
        try decoder.open(timeout: 20)
        let file = decoder.fileDataFormat
        let client = StreamDescription.float32(sampleRate: file.sampleRate, channels: file.channelsPerFrame, interleaved: true)
        try decoder.setClientFormat(client)
        if let seekTo { try decoder.seek(toFrame: Int64((seekTo * file.sampleRate).rounded())) }
        var samples: [Float] = []
        var chunk: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, samples.count < limit * Int(file.channelsPerFrame) {
            guard let n = try decoder.readAvailable(frames: 4096, into: &chunk) else {
                usleep(2000)
                continue
            }
            if n == 0 {
                if decoder.isAtEnd { break }
                if events.value.contains(where: { if case .failed = $0 { return true } else { return false } }) { break }
                usleep(2000)
                continue
            }
            chunk.withUnsafeBytes { samples += $0.bindMemory(to: Float.self) }
        }
        return Decoded(samples: samples, format: client, events: events.value)
    }

    private func golden(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixturesDirectory + "/hls/\(name).json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func goldenFrames(_ name: String) throws -> Int {
        let decode = try XCTUnwrap(try golden(name)["decode"] as? [String: Any])
        return try XCTUnwrap(decode["frames"] as? Int)
    }

    /// ffmpeg's decode of the same URL, as float32 at the first format's rate.
    private func ffmpegDecode(_ url: String, rate: Double, channels: Int) throws -> [Float] {
        let ffmpeg = try requireTool("ffmpeg")
        let data = try runToolData(ffmpeg, ["-v", "error", "-allowed_extensions", "ALL", "-i", url,
                                            "-ar", String(Int(rate)), "-ac", String(channels), "-f", "f32le", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Sample by sample against ffmpeg's decode, from `from` frames on; and the length within
    /// one packet of it.
    private func assertMatchesFFmpeg(_ d: Decoded, _ theirs: [Float], tolerance: Float = 1e-5, from: Int = 0,
                                     file: StaticString = #filePath, line: UInt = #line)
    {
        let ch = Int(d.format.channelsPerFrame)
        XCTAssertEqual(Double(d.frames), Double(theirs.count / ch), accuracy: 1024, "frames", file: file, line: line)
        var worst: Float = 0
        var at = 0
        for i in (from * ch)..<min(d.samples.count, theirs.count) where abs(d.samples[i] - theirs[i]) > worst {
            worst = abs(d.samples[i] - theirs[i])
            at = i / ch
        }
        XCTAssertLessThan(worst, tolerance, "worst difference at frame \(at)", file: file, line: line)
    }

    private func url(_ name: String, _ parameters: [String: String] = [:]) -> String {
        server.hlsURL("hls/\(name)/index.m3u8", parameters)
    }

    // MARK: VOD, every segment type

    func testFMP4MatchesFFmpeg() throws {
        let d = try decode(url("fmp4"))
        XCTAssertEqual(d.format.sampleRate, 44100)
        assertMatchesFFmpeg(d, try ffmpegDecode(url("fmp4"), rate: 44100, channels: 2))
        XCTAssertEqual(Double(d.frames), Double(try goldenFrames("fmp4")), accuracy: 1024)
    }

    func testPackedADTSMatchesFFmpeg() throws {
        let d = try decode(url("packed"))
        XCTAssertEqual(d.format.sampleRate, 44100)
        assertMatchesFFmpeg(d, try ffmpegDecode(url("packed"), rate: 44100, channels: 2))
        XCTAssertEqual(d.frames, try goldenFrames("packed"))
    }

    func testPackedMP3MatchesFFmpeg() throws {
        let d = try decode(url("packed-mp3"))
        assertMatchesFFmpeg(d, try ffmpegDecode(url("packed-mp3"), rate: d.format.sampleRate, channels: 2), tolerance: 1e-4)
    }

    // MARK: Seeking

    /// A seek lands in the segment holding the target and drops the frames before it: after
    /// the decoder's first packets (which start without the overlap and bit reservoir of the
    /// ones before), the samples are ffmpeg's at the same time. (MP3: an AAC decoder that
    /// starts over draws other noise for the PNS bands of ffmpeg's encoder.)
    func testSeekGoesToTheSegmentThenTheFrame() throws {
        let target = 3.5
        let d = try decode(url("packed-mp3"), seekTo: target)
        let rate = d.format.sampleRate
        let theirs = try ffmpegDecode(url("packed-mp3"), rate: rate, channels: 2)
        let start = Int((target * rate).rounded())
        XCTAssertEqual(d.frames, theirs.count / 2 - start, "frames after the target")
        let tail = Array(theirs[(start * 2)...])
        var worst: Float = 0
        for i in (4096 * 2)..<min(d.samples.count, tail.count) { worst = max(worst, abs(d.samples[i] - tail[i])) }
        XCTAssertLessThan(worst, 1e-4)
    }

    // MARK: Faults

    /// A VOD segment that answers 404 every time fails the presentation with 'http' once the
    /// segments before it were played.
    func testMissingVODSegmentIsAnError() throws {
        var options = HLSStream.Options()
        options.retryDelay = 0.05
        let d = try decode(url("packed", ["missing": "2"]), options: options)
        let failure = d.events.compactMap { e -> AudioError? in if case .failed(let error) = e { return error } else { return nil } }
        XCTAssertEqual(failure.first?.code, .httpStatus, "\(d.events)")
        // Segments 0 and 1 were played: 2.020136 + 1.996916 s.
        XCTAssertEqual(Double(d.frames), (2.020136 + 1.996916) * 44100, accuracy: 1024)
    }

    /// Segments that fail twice and then work are retried and played whole.
    func testFailingSegmentsAreRetried() throws {
        var options = HLSStream.Options()
        options.retryDelay = 0.05
        let d = try decode(url("packed", ["fail": "1:2,3:1"]), options: options)
        XCTAssertEqual(d.frames, try goldenFrames("packed"))
        XCTAssertFalse(d.events.contains { if case .failed = $0 { return true } else { return false } }, "\(d.events)")
    }

    // MARK: Live

    /// A live window at ten times real time, ended after 9 segments: playing starts three
    /// target durations from the live edge, follows the window by media sequence as it
    /// slides, and stops at ENDLIST with every segment from the start on played once.
    func testLiveWindowIsFollowedToItsEnd() throws {
        var options = HLSStream.Options()
        options.liveTimeScale = 10
        let live = url("packed", ["live": "1", "window": "4", "speed": "10", "endafter": "9"])
        let d = try decode(live, options: options)
        // The first playlist lists segments 0…3 (2.02, 2.0, 2.0, 2.0 s). Segment 1 starts 5.99 s
        // from the end, less than three target durations (6 s): playing starts at segment 0.
        // Segments 0…8 are VOD 0, 1, 2, 3, 4, 0, 1, 2, 3.
        let durations = [2.020136, 1.996916, 1.996916, 1.996916, 0.023220]
        let played = [0, 1, 2, 3, 4, 0, 1, 2, 3].map { durations[$0] }.reduce(0, +)
        XCTAssertEqual(Double(d.frames), played * 44100, accuracy: 2048, "\(d.events)")
        XCTAssertFalse(d.events.contains { if case .failed = $0 { return true } else { return false } }, "\(d.events)")
    }

    /// A live segment that is missing is skipped with an event, and its time is silence.
    func testMissingLiveSegmentBecomesSilence() throws {
        var options = HLSStream.Options()
        options.liveTimeScale = 10
        options.retryDelay = 0.02
        let live = url("packed", ["live": "1", "window": "4", "speed": "10", "endafter": "6", "missing": "2"])
        let d = try decode(live, options: options)
        let skipped = d.events.compactMap { e -> (HLSSkippedSegment, Int64)? in
            if case .segmentSkipped(let s, let frame) = e { return (s, frame) } else { return nil }
        }
        XCTAssertEqual(skipped.map(\.0.sequence), [2], "\(d.events)")
        guard let (segment, frame) = skipped.first else { return }
        XCTAssertEqual(segment.duration, 1.996916, accuracy: 1e-6)
        // Segments 0…5 (VOD 0, 1, 2, 3, 4, 0), segment 2 as silence.
        let expected = (2.020136 * 2 + 1.996916 * 3 + 0.023220) * 44100
        XCTAssertEqual(Double(d.frames), expected, accuracy: 2048)
        // The silence: from the frame the event names, the segment's length of zeros.
        let start = Int(frame) * 2
        let silence = d.samples[start..<min(d.samples.count, start + Int(1.99 * 44100) * 2)]
        XCTAssertTrue(silence.allSatisfy { $0 == 0 }, "silence where segment 2 was")
    }

    /// A live playlist that stops changing is an error ('time') after the stall bound.
    func testStalledLivePlaylistFails() throws {
        var options = HLSStream.Options()
        options.liveTimeScale = 10
        let d = try decode(url("packed", ["live": "1", "window": "3", "speed": "10", "stall": "6"]), options: options, seconds: 30)
        let failure = d.events.compactMap { e -> AudioError? in if case .failed(let error) = e { return error } else { return nil } }
        XCTAssertEqual(failure.first?.code, .timedOut, "\(d.events)")
    }
}

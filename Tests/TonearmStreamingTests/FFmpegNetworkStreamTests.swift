#if FFmpeg
import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

/// The protocols libavformat fetches for `tonearm stream` (issue 18): rtmp from `ffmpeg -listen 1`, which serves
/// one player. rtsp and mms cannot be tested here: ffmpeg's rtsp muxer only publishes to a
/// server (`-rtsp_flags listen` is for receiving), Debian has no rtsp server in its
/// ffmpeg or gstreamer tools, and no mms server at all; their errors are checked instead.
final class FFmpegNetworkStreamTests: XCTestCase {
    func testWhichURLsFFmpegServes() {
        for url in ["mms://host/a", "MMSH://host/a", "rtsp://h:554/x", "rtmp://h/live/x"] {
            XCTAssertTrue(FFmpegNetworkStream.handles(url), url)
        }
        // HLS over http(s) is Tonearm's own client's (HLSStream).
        for url in ["http://h/radio.mp3", "https://h/list.m3u", "file:///a.m3u8", "/tmp/a.m3u8", "h/a.m3u8", "http://h/a.m3u8.mp3",
                    "http://h/live/list.m3u8", "https://h/a/b.M3U8?token=1"]
        {
            XCTAssertFalse(FFmpegNetworkStream.handles(url), url)
        }
    }

    /// Reads a stream to its end in the client format, as the player would.
    private func readAll(_ stream: FFmpegNetworkStream, format: StreamDescription, seconds: Double = 60) throws -> [Float] {
        try stream.setClientFormat(format)
        var out: [Float] = [], chunk: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard let n = try stream.readAvailable(frames: 4096, into: &chunk) else {
                usleep(2000)
                continue
            }
            if n == 0 { return out }
            chunk.withUnsafeBytes { out += $0.bindMemory(to: Float.self) }
        }
        XCTFail("the stream did not end in \(seconds) s")
        return out
    }

    private func floats(_ bytes: [UInt8]) -> [Float] { bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) } }

    /// An HLS playlist of AAC in MPEG-TS segments (ADTS in the segments, no config in the
    /// container), which `tonearm stream` now reads natively, still opens through libavformat
    /// when asked: every frame the ffmpeg tool decodes from the same URL, in the same
    /// number, decoded by Tonearm's own AAC decoder within its usual distance of FFmpeg's.
    func testHLSPlaysEverySegment() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try runTool(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i",
                                 "aevalsrc=0.4*sin(2*PI*440*t)|0.3*sin(2*PI*660*t):s=44100:d=5",
                                 "-c:a", "aac", "-b:a", "96k", "-fflags", "+bitexact", "-flags", "+bitexact",
                                 "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
                                 "-hls_segment_filename", dir + "/seg%d.ts", dir + "/list.m3u8"])
        let server = try HTTPTestServer.starting(root: dir).get()
        defer { server.stop() }
        let url = server.url("files/list.m3u8")
        let stream = FFmpegNetworkStream(url: url)
        defer { stream.close() }
        try stream.open(timeout: 10)
        XCTAssertEqual(stream.fileDataFormat.formatID, .mpeg4AAC)
        XCTAssertEqual(stream.fileDataFormat.sampleRate, 44100)
        XCTAssertEqual(stream.fileDataFormat.channelsPerFrame, 2)
        XCTAssertEqual(stream.containerName, "hls")
        let client = StreamDescription.float32(sampleRate: 44100, channels: 2, interleaved: true)
        let ours = try readAll(stream, format: client)
        XCTAssertNil(stream.error)
        XCTAssertTrue(stream.isAtEnd)
        let theirs = floats(try runToolData(ffmpeg, ["-v", "error", "-i", url, "-f", "f32le", "-"]))
        XCTAssertEqual(ours.count, theirs.count, "samples")
        XCTAssertGreaterThan(ours.count, 2 * 5 * 44100)
        var worst: Float = 0
        for i in 0..<min(ours.count, theirs.count) { worst = max(worst, abs(ours[i] - theirs[i])) }
        // Tonearm's AAC decoder against FFmpeg's: within 3.6e-7 on the AAC fixtures.
        XCTAssertLessThan(worst, 1e-5)
    }

    /// rtmp from `ffmpeg -listen 1` (AAC in FLV): the stream plays to its end, where the
    /// server closes the connection, and holds the 3 seconds sent.
    func testRTMPFromAListeningFFmpeg() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let port = 19000 + Int(getpid() % 1000)
        let url = "rtmp://127.0.0.1:\(port)/live/tone"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: ffmpeg)
        server.arguments = ["-v", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-ac", "2",
                            "-c:a", "aac", "-f", "flv", "-listen", "1", url]
        server.standardInput = FileHandle.nullDevice
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        // The server listens once it has opened its input; the client retries until then.
        let stream = FFmpegNetworkStream(url: url)
        defer { stream.close() }
        var opened = false
        for _ in 0..<50 where !opened {
            do {
                try stream.open(timeout: 5)
                opened = true
            } catch {
                usleep(100_000)
            }
        }
        XCTAssertTrue(opened, "no rtmp server at \(url)")
        guard opened else { return }
        XCTAssertEqual(stream.fileDataFormat.formatID, .mpeg4AAC)
        let rate = stream.fileDataFormat.sampleRate
        let samples = try readAll(stream, format: .float32(sampleRate: rate, channels: 2, interleaved: true), seconds: 30)
        XCTAssertNil(stream.error, "a server closing after the end is the end of the stream")
        let seconds = Double(samples.count / 2) / rate
        XCTAssertEqual(seconds, 3, accuracy: 0.1)
        // lavfi's sine has an amplitude of 1/8, and -ac 2 spreads the mono centre over both
        // channels at −3 dB: an RMS of 1/8 · 1/√2 · 1/√2 = 1/16.
        let mid = samples[samples.count / 4..<samples.count * 3 / 4]
        let rms = (mid.reduce(0) { $0 + Double($1 * $1) } / Double(mid.count)).squareRoot()
        XCTAssertEqual(rms, 0.0625, accuracy: 0.003)
    }

    /// What cannot be served here still fails cleanly, with Tonearm's codes and FFmpeg's words.
    func testUnreachableStreamsFailWithFourCharCodes() throws {
        for (url, codes) in [("rtsp://127.0.0.1:1/none", [AudioError.Code.network]),
                             ("mmsh://127.0.0.1:1/none", [.network]),
                             ("rtmp://127.0.0.1:1/live/none", [.network])] as [(String, [AudioError.Code])]
        {
            let stream = FFmpegNetworkStream(url: url)
            XCTAssertThrowsError(try stream.open(timeout: 2), url) { e in
                guard let e = e as? AudioError else { return XCTFail("\(e)") }
                XCTAssertTrue(codes.contains(e.code), "\(url): \(e)")
                XCTAssertTrue(e.message.contains("(FFmpeg)"), e.message)
            }
        }
        // A playlist that is not there: -43, as a 404 is for the native client.
        let server = try HTTPTestServer.starting(root: makeTemporaryDirectory()).get()
        defer { server.stop() }
        XCTAssertThrowsError(try FFmpegNetworkStream(url: server.url("files/gone.m3u8")).open(timeout: 5)) { e in
            XCTAssertEqual((e as? AudioError)?.code, .fileNotFound, "\(e)")
        }
    }
}
#endif

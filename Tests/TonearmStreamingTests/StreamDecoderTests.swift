import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// The push path over HTTP: what StreamDecoder and StreamPlayer make of a URL equals what
/// ExtAudioFile makes of the same file on disk.
final class StreamDecoderTests: XCTestCase {
    func server() throws -> HTTPTestServer {
        try HTTPStreamTests.server.require()
    }

    func options() -> HTTPStream.Options {
        var o = HTTPStream.Options()
        o.reconnectDelay = 0.01
        o.maximumReconnectDelay = 0.05
        o.reconnectsWhenLiveStreamCloses = false
        o.connectTimeout = 5
        o.stallTimeout = 5
        return o
    }

    /// Opens a decoder at the file's own rate and channel count, Float32 interleaved.
    func decoder(_ url: String, options: HTTPStream.Options? = nil) throws -> StreamDecoder {
        let d = StreamDecoder(stream: HTTPStream(url: url, options: options ?? self.options()))
        try d.open()
        try d.setClientFormat(.float32(sampleRate: d.fileDataFormat.sampleRate, channels: d.fileDataFormat.channelsPerFrame))
        return d
    }

    func readAll(_ d: StreamDecoder, limit: Int = Int.max) throws -> [Float] {
        var out: [Float] = []
        var bytes: [UInt8] = []
        while out.count < limit {
            let n = try d.read(frames: 4096, into: &bytes)
            if n == 0 { break }
            bytes.withUnsafeBytes { out.append(contentsOf: $0.bindMemory(to: Float.self)) }
        }
        return out
    }

    func testDecodesAnMP3OverHTTPAsTheFileDecodes() throws {
        let s = try server()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let expected = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
        for query in ["", "?drop=7000", "?type=text/html"] {
            let d = try decoder(s.url("files/" + path + query))
            assertSamples(try readAll(d), expected, "files/\(path)\(query)")
            XCTAssertTrue(d.isAtEnd)
        }
    }

    /// Ogg Opus and Vorbis, WebM, and Vorbis in MP4, over HTTP as a file (with a length) and
    /// as a live stream (none): the pre-skip, the start trimming of a first granule and the
    /// end trimming of the last are applied as the pages announce them, so the frames equal
    /// the file's.
    func testOggAndWebMTrimAsTheFileDoes() throws {
        let s = try server()
        for path in ["opus/celt-20ms-stereo-vbr-high.opus", "opus/silk-wb.opus", "opus/celt-5.1-family1.opus",
                     "vorbis/q5-stereo-44k.ogg", "vorbis/ffvorbis-stereo-44k.ogg",
                     "matroska/opus_stereo.webm", "matroska/vorbis_stereo.webm", "vorbis/q5-stereo-44k.mp4"]
        {
            let expected = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
            for url in [s.url("files/" + path), s.url("live/" + path + "?loops=1")] {
                assertSamples(try readAll(try decoder(url), limit: expected.count + 1), expected, url)
            }
        }
    }

    /// An AAC+ station: HE-AAC v2 in ADTS (the header says AAC LC, mono, 24 kHz) with ICY
    /// titles. The decoder learns the output format from the first frames before `open`
    /// returns ('aacp', 48 kHz, stereo), and the audio is the file's decode, three loops over.
    func testAACPlusStationDecodesAsTheFileDoes() throws {
        let s = try server()
        let path = "aache/ps_baseline_48k.aac"
        let file = try readWholeFile(fixturesDirectory + "/" + path)
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeWholeFile(dir + "/three.aac", file + file + file)
        let expected = try decodeInterleaved(dir + "/three.aac", as: Float.self)
        let d = StreamDecoder(stream: HTTPStream(url: s.url("live/\(path)?metaint=1000&loops=3&titles=One%7CTwo%7CThree"),
                                                 options: options()))
        let titles = TitleLog()
        d.onEvent = { titles.append($0) }
        try d.open()
        let f = d.fileDataFormat
        XCTAssertEqual([f.formatID.description, "\(f.sampleRate)", "\(f.channelsPerFrame)", "\(f.framesPerPacket)"],
                       [AudioFormatID.mpeg4AAC_HE_V2.description, "48000.0", "2", "2048"])
        XCTAssertEqual(d.properties?.dataFormat?.formatID, .mpeg4AAC, "the parser's format is the ADTS header's")
        try d.setClientFormat(.float32(sampleRate: 48000, channels: 2))
        assertSamples(try readAll(d), expected, "the station")
        XCTAssertEqual(titles.all.prefix(3).map(\.0), ["One", "Two", "Three"])
    }

    /// Where `probe` (interleaved) begins in `expected`, searching frame by frame from `from`.
    func landing(of probe: [Float], in expected: [Float], channels: Int, from: Int = 0) -> Int? {
        guard !probe.isEmpty else { return nil }
        return stride(from: from, through: (expected.count - probe.count) / channels, by: 1).first { f in
            expected[f * channels] == probe[0] && Array(expected[(f * channels)..<(f * channels + probe.count)]) == probe
        }
    }

    /// Seeks through AudioFileStream's packet offset and a Range request; the decoded frames
    /// before the target are dropped. Where the offset is exact (a WAV, the start of an MP3)
    /// the samples from there equal the file's; a streamed MP3 has no packet table, so a seek
    /// further in is estimated (from the Xing TOC) and lands within a packet or two, then plays
    /// on exactly from a packet's start.
    func testSeeksSampleAccurately() throws {
        let s = try server()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let expected = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
        let d = try decoder(s.url("files/" + path))
        _ = try readAll(d, limit: 2000)
        for frame in [5000, 1153, 0, 30000] {
            try d.seek(toFrame: Int64(frame))
            let got = Array(try readAll(d, limit: 4608).prefix(4608))
            let at = try XCTUnwrap(landing(of: got, in: expected, channels: 2), "seek to \(frame): not a run of the file")
            XCTAssertLessThanOrEqual(abs(at - frame), 2 * 1152, "seek to \(frame) landed at \(at)")
            // Within the decoder's preroll (9 packets) of the start, reading starts at packet 0: exact.
            if frame <= 5000 { XCTAssertEqual(at, frame, "seek to \(frame)") }
        }
        let wav = "pcm/wav_f32le_stereo.wav"
        let pcm = try decodeInterleaved(fixturesDirectory + "/" + wav, as: Float.self)
        let w = try decoder(s.url("files/" + wav))
        for frame in [3000, 100, 0] {
            try w.seek(toFrame: Int64(frame))
            assertSamples(Array(try readAll(w, limit: 2000).prefix(2000)), Array(pcm[(frame * 2)..<(frame * 2 + 2000)]), "WAV seek to \(frame)")
        }
    }

    /// An ALAC M4A whose moov follows the audio: the moov comes through the byte-range fetcher,
    /// no 'optm', and the decode and seeks equal the file's.
    func testMoovAtTheEndPlaysAndSeeksOverHTTP() throws {
        let s = try server()
        let path = "alac/alac_16_stereo.m4a"
        let expected = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
        _ = try s.requestLog(clear: true)
        // A buffer smaller than the file, so that the moov is not already at hand.
        var o = options()
        o.bufferSize = 4096
        o.historySize = 4096
        let d = try decoder(s.url("files/\(path)?trickle=60000"), options: o)
        assertSamples(try readAll(d), expected, "moov at the end")
        XCTAssertTrue(try s.requestLog().contains { $0["Range"] != nil }, "the moov was fetched with a Range request")
        for frame in [3000, 4097, 0] {
            try d.seek(toFrame: Int64(frame))
            let got = try readAll(d, limit: 2048)
            assertSamples(Array(got.prefix(2048)), Array(expected[(frame * 2)..<(frame * 2 + 2048)]), "seek in the ALAC to \(frame)")
        }
    }

    /// A VBR MP3 without a Xing tag (LAME's Info frame cut off): plays whole over HTTP, and a
    /// seek (estimated from the bytes, flagged so) lands near the frame asked for, on a packet,
    /// and plays on exactly from there.
    func testVBRWithoutXingPlaysAndSeeks() throws {
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = try readWholeFile(fixturesDirectory + "/mp3dec/lame_transients_v0.mp3")
        // The first frame is LAME's Info frame: drop it, and with it the gapless data.
        let word = source.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let firstFrame = try XCTUnwrap(MPEGAudioHeader(word)).frameLength
        let stripped = Array(source[firstFrame...])
        try writeWholeFile(dir + "/vbr.mp3", stripped)
        let expected = try decodeInterleaved(dir + "/vbr.mp3", as: Float.self)
        let local = try HTTPTestServer(root: dir)
        let d = try decoder(local.url("files/vbr.mp3"))
        XCTAssertTrue(d.properties?.isEstimated ?? false, "without a Xing tag the length is an estimate")
        assertSamples(try readAll(d), expected, "VBR without Xing")
        let target = 40000
        try d.seek(toFrame: Int64(target))
        let probe = Array(try readAll(d, limit: 2304).prefix(2304))
        let at = try XCTUnwrap(landing(of: probe, in: expected, channels: 2), "the samples after the seek are not a run of the file's")
        XCTAssertLessThanOrEqual(abs(at - target), 2 * 1152, "landed at frame \(at) for \(target)")
    }

    func testGarbageIsRefusedAndDamagePlaysWhatParses() throws {
        let s = try server()
        let refused = StreamDecoder(stream: HTTPStream(url: s.url("garbage?size=60000"), options: options()))
        XCTAssertThrowsError(try refused.open(timeout: 5)) { error in
            let code = (error as? AudioError)?.code
            XCTAssertTrue(code == .unsupportedFileType || code == .invalidFile, "\(error)")
        }

        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let expected = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
        let d = try decoder(s.url("files/\(path)?garbage=20000"))
        let got = try readAll(d)
        // Up to the damage the audio is the file's; after it, noise is resynchronised past.
        assertSamples(Array(got.prefix(20000)), Array(expected.prefix(20000)), "before the garbage")
    }

    /// ICY titles come out at the frame where their bytes begin.
    func testICYTitlesAtTheirFrames() throws {
        let s = try server()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let fileFrames = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self).count / 2
        let d = try decoder(s.url("live/\(path)?metaint=2000&loops=2&titles=First%7CSecond"))
        let titles = TitleLog()
        d.onEvent = { titles.append($0) }
        _ = try readAll(d)
        let got = titles.all
        XCTAssertEqual(got.map(\.0), ["First", "Second"])
        if got.count == 2 {
            // The second title's block is the first after the loop's end (within 2000 bytes:
            // under 2 frames of 320 kbit/s audio), decoded after the first copy's frames.
            XCTAssertLessThan(abs(Int(got[1].1) - fileFrames), 3 * 1152 + 1105, "second title at \(got[1].1)")
        }
    }

    final class TitleLog: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [(String, Int64)] = []
        func append(_ e: StreamDecoder.Event) {
            if case .title(let t, let f) = e { lock.withLock { list.append((t, f)) } }
        }
        var all: [(String, Int64)] { lock.withLock { list } }
    }

    /// AudioPlayer plays a URL as it plays a file: through the null sink, the rendered audio is
    /// the file's, and the states go buffering → playing → ended.
    func testStreamPlayerRendersTheFileAndReportsItsStates() throws {
        let s = try server()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let expected = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
        let capture = Capture()
        var o = StreamPlayer.Options()
        o.http = options()
        let player = try StreamPlayer(url: s.url("files/\(path)?drop=9000"), backend: NullOutputBackend(tap: capture.tap), options: o)
        let states = StateLog()
        player.onEvent = { states.append($0) }
        try player.play()
        XCTAssertTrue(player.waitUntilEnded(timeout: 30))
        let rendered = capture.all
        assertSamples(Array(rendered.prefix(expected.count)), expected, "rendered")
        XCTAssertTrue(rendered.dropFirst(expected.count).allSatisfy { $0 == 0 }, "only silence after the end")
        // A drop may show as reconnecting while the decoded buffer is short, then playing again
        // (or ended, when it was the last bytes).
        let seen = states.states
        XCTAssertEqual(seen.first, .buffering)
        XCTAssertEqual(seen.last, .ended)
        XCTAssertTrue(seen.contains(.playing), "\(seen)")
        XCTAssertTrue(seen.allSatisfy { [.buffering, .playing, .reconnecting, .ended].contains($0) }, "\(seen)")
        for (i, s) in seen.enumerated() where s == .reconnecting {
            XCTAssertTrue([.playing, .ended].contains(seen[i + 1]), "\(seen)")
        }
        XCTAssertEqual(player.duration.map { ($0 * 44100).rounded() }, Double(expected.count / 2))
    }

    final class StateLog: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [StreamPlayer.State] = []
        func append(_ e: StreamPlayer.Event) { if case .state(let s) = e { lock.withLock { list.append(s) } } }
        var states: [StreamPlayer.State] { lock.withLock { list } }
    }

    /// A decoder of an endless station let go without close() is freed, its thread ends and
    /// its stream with it.
    func testADecoderLetGoIsFreed() throws {
        let s = try server()
        var d: StreamDecoder? = try decoder(s.url("live/mp3dec/lame_cbr320_stereo.mp3?loops=1000000"))
        weak var weakDecoder = d
        weak var weakStream = d?.stream
        var bytes: [UInt8] = []
        XCTAssertGreaterThan(try d!.read(frames: 1000, into: &bytes), 0)
        d = nil
        let deadline = Date().addingTimeInterval(5)
        while (weakDecoder != nil || weakStream != nil) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertNil(weakDecoder)
        XCTAssertNil(weakStream)
    }

    /// A playlist is followed to its stream.
    func testFollowsAPlaylistToItsStream() throws {
        let s = try server()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let expected = try readWholeFile(fixturesDirectory + "/" + path)
        for list in ["playlist.pls", "playlist.m3u"] {
            let stream = try StreamLocator.open(s.url("\(list)?target=files/\(path)"), options: options())
            XCTAssertEqual(stream.response?.url, s.url("files/" + path))
            XCTAssertTrue(try stream.readToEnd(limit: 1 << 20) == expected, list)
        }
    }
}

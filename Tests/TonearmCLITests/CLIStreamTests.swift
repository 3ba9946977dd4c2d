import XCTest
import Foundation
import Tonearm
import TonearmTestSupport

/// `tonearm stream`, and `info` / `packets` on URLs, against the local test server.
final class CLIStreamTests: XCTestCase {
    static let server = HTTPTestServer.starting()

    func server() throws -> HTTPTestServer {
        try Self.server.require()
    }

    func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
        }
    }

    /// `info URL` says what `info FILE` says (but the path); `packets URL` lists the same packets.
    func testInfoAndPacketsOnAURLMatchTheFile() throws {
        let s = try server()
        for path in ["mp3dec/lame_cbr320_stereo.mp3", "alac/alac_16_stereo.m4a", "pcm/wav_f32le_stereo.wav"] {
            let local = tonearm(["info", fixturesDirectory + "/" + path, "--json"])
            let remote = tonearm(["info", s.url("files/" + path), "--json"])
            XCTAssertEqual(remote.code, 0, remote.err)
            XCTAssertEqual(remote.out.replacingOccurrences(of: s.url("files/" + path), with: "P"),
                           local.out.replacingOccurrences(of: fixturesDirectory + "/" + path, with: "P"), path)
            let localPackets = tonearm(["packets", fixturesDirectory + "/" + path])
            let remotePackets = tonearm(["packets", s.url("files/" + path)])
            XCTAssertEqual(remotePackets.code, 0, remotePackets.err)
            XCTAssertEqual(remotePackets.out, localPackets.out, path)
        }
        // A server without ranges: info still reads the stream through; packets says why not.
        let plain = tonearm(["info", s.url("files/mp3dec/lame_cbr320_stereo.mp3?norange=1"), "--json"])
        XCTAssertEqual(plain.code, 0, plain.err)
        XCTAssertTrue(plain.out.contains("\"MPG3\""))
        let noRange = tonearm(["packets", s.url("files/mp3dec/lame_cbr320_stereo.mp3?norange=1")])
        XCTAssertEqual(noRange.code, 1)
        XCTAssertTrue(noRange.err.contains("('rng?')"), noRange.err)
        let missing = tonearm(["info", s.url("status/404")])
        XCTAssertEqual(missing.code, 1)
        XCTAssertTrue(missing.err.contains("404") && missing.err.contains("('http')"), missing.err)
    }

    /// `--no-play --record`: the recording is the stream's audio (ICY blocks stripped), the
    /// events are JSON lines with the station's headers and titles in order.
    func testRecordsARadioStreamAndPrintsJSONEvents() throws {
        let s = try server()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let file = try readWholeFile(fixturesDirectory + "/" + path)
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = s.url("live/\(path)?metaint=3000&loops=3&titles=One%7CTwo%7CThree&name=Loop%20FM")
        // --reconnects 0: the station's close is the end (by default it is dialled again).
        let r = tonearm(["stream", url, "--no-play", "--json-events", "--record", dir + "/rec.mp3", "--reconnects", "0"])
        XCTAssertEqual(r.code, 0, r.err)
        let events = try jsonLines(r.out)
        XCTAssertEqual(events.first?["event"] as? String, "connected")
        XCTAssertEqual(events.first?["icyName"] as? String, "Loop FM")
        XCTAssertEqual(events.first?["icyMetaInterval"] as? Int, 3000)
        XCTAssertEqual(events.compactMap { $0["title"] as? String }, ["One", "Two", "Three"])
        let format = try XCTUnwrap(events.first { $0["event"] as? String == "format" })
        XCTAssertEqual(format["formatID"] as? String, ".mp3")
        XCTAssertEqual(format["sampleRate"] as? Int, 44100)
        XCTAssertEqual(events.last?["event"] as? String, "ended")
        XCTAssertTrue(try readWholeFile(dir + "/rec.mp3") == file + file + file, "the recording is the audio, looped three times")

        // Split at titles: a file a title, named after it, each the bytes between two titles.
        // The first block (and title) follows audio byte 3000, so what precedes it is a part
        // of its own; each later title is in the first block after a loop's end.
        let split = tonearm(["stream", url, "--no-play", "--record", dir + "/show.mp3", "--split", "--quiet", "--reconnects", "0"])
        XCTAssertEqual(split.code, 0, split.err)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("show-") }.sorted()
        XCTAssertEqual(names, ["show-001.mp3", "show-002 One.mp3", "show-003 Two.mp3", "show-004 Three.mp3"])
        let parts = try names.map { try readWholeFile(dir + "/" + $0) }
        XCTAssertTrue(parts.reduce([], +) == file + file + file)
        let second = (file.count + 2999) / 3000 * 3000, third = (2 * file.count + 2999) / 3000 * 3000
        XCTAssertEqual(parts.map(\.count).prefix(3), [3000, second - 3000, third - second])
    }

    /// An AAC+ station (HE-AAC v2 in ADTS, whose headers say AAC LC at half the rate, with ICY
    /// titles): the format reported is what the frames decode to, 'aacp' stereo at 48 kHz;
    /// `--record` writes the exact bytes; played to a WAV, the audio is the file's decode.
    func testAACPlusStation() throws {
        let s = try server()
        let path = "aache/ps_baseline_48k.aac"
        let file = try readWholeFile(fixturesDirectory + "/" + path)
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = s.url("live/\(path)?metaint=1000&loops=3&titles=One%7CTwo%7CThree&name=AAC%2B%20FM")
        let r = tonearm(["stream", url, "--no-play", "--json-events", "--record", dir + "/rec.aac", "--reconnects", "0"])
        XCTAssertEqual(r.code, 0, r.err)
        let events = try jsonLines(r.out)
        XCTAssertEqual(events.first?["icyName"] as? String, "AAC+ FM")
        // A title a loop (the file is 3 metaint blocks; the block after the last byte starts a fourth period).
        XCTAssertEqual(events.compactMap { $0["title"] as? String }, ["One", "Two", "Three", "One"])
        let format = try XCTUnwrap(events.first { $0["event"] as? String == "format" })
        XCTAssertEqual(format["formatID"] as? String, "aacp")
        XCTAssertEqual(format["sampleRate"] as? Int, 48000)
        XCTAssertEqual(format["channels"] as? Int, 2)
        XCTAssertTrue(try readWholeFile(dir + "/rec.aac") == file + file + file, "the recording is the stream, looped three times")

        // Played: the station's three loops decode as the file three times over does.
        // Played and recorded: the recording holds the bytes read before the format was
        // known (up to the first packets, which decide it) too.
        let played = tonearm(["stream", url, "--output", dir + "/out.wav", "--json-events", "--reconnects", "0",
                              "--record", dir + "/played.aac"])
        XCTAssertEqual(played.code, 0, played.err)
        XCTAssertTrue(try readWholeFile(dir + "/played.aac") == file + file + file, "the recording while playing is the stream")
        let playedFormat = try XCTUnwrap(try jsonLines(played.out).first { $0["event"] as? String == "format" })
        XCTAssertEqual(playedFormat["formatID"] as? String, "aacp")
        XCTAssertEqual(playedFormat["sampleRate"] as? Int, 48000)
        let expected = try decodeInterleaved(dir + "/rec.aac", as: Float.self)
        let got = try decodeInterleaved(dir + "/out.wav", as: Float.self)
        XCTAssertEqual(try AudioFile(path: dir + "/out.wav").properties.dataFormat?.sampleRate, 48000)
        XCTAssertGreaterThanOrEqual(got.count, expected.count)
        assertSamples(Array(got.prefix(expected.count)), expected, "the WAV")
    }

    /// Playing a URL to a WAV (the file backend) gives the file's decode; `--duration` stops it.
    func testPlaysAURLToAFileAndStopsAtTheDuration() throws {
        let s = try server()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = tonearm(["stream", s.url("files/\(path)?drop=12000"), "--output", dir + "/out.wav", "--json-events"])
        XCTAssertEqual(r.code, 0, r.err)
        let events = try jsonLines(r.out)
        // Each drop may show as reconnecting (the buffer is short), then playing, or ended at the end.
        let states = events.compactMap { $0["state"] as? String }
        XCTAssertEqual(states.first, "buffering")
        XCTAssertEqual(states.last, "ended")
        XCTAssertTrue(states.contains("playing"), "\(states)")
        for (i, state) in states.enumerated() where state == "reconnecting" {
            XCTAssertTrue(["playing", "ended"].contains(states[i + 1]), "\(states)")
        }
        let expected = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
        let got = try decodeInterleaved(dir + "/out.wav", as: Float.self)
        assertSamples(Array(got.prefix(expected.count)), expected, "the WAV")

        let short = tonearm(["stream", s.url("live/\(path)?loops=50"), "--output", dir + "/short.wav", "--duration", "0.5", "--quiet"])
        XCTAssertEqual(short.code, 0, short.err)
        let frames = try decodeInterleaved(dir + "/short.wav", as: Float.self).count / 2
        XCTAssertGreaterThanOrEqual(frames, 22050)
        XCTAssertLessThan(frames, 22050 + 4096, "stopped within a period of the duration")
    }

    /// HLS (issue 20): a master playlist whose high variant turns slow plays the first
    /// variant, then the low one, with JSON events for both and a recording that is an ADTS
    /// stream of every packet; played to a WAV through the file sink, the length is ffmpeg's.
    func testHLSEventsRecordingAndPlayback() throws {
        let s = try server()
        let ffprobe = try requireTool("ffprobe")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = s.hlsURL("hls/master.m3u8", ["slowvariant": "128k", "slowfrom": "1:12000", "test": "cli"])
        let r = tonearm(["stream", url, "--no-play", "--json-events", "--record", dir + "/rec.aac"])
        XCTAssertEqual(r.code, 0, r.err)
        let events = try jsonLines(r.out)
        XCTAssertEqual(events.first?["event"] as? String, "format")
        XCTAssertEqual(events.first?["duration"] as? Double ?? 0, 8.03411, accuracy: 1e-6)
        let variants = events.filter { $0["event"] as? String == "variant" }
        XCTAssertEqual(variants.map { $0["index"] as? Int }, [0, 1], r.out)
        XCTAssertEqual(variants.map { $0["bandwidth"] as? Int }, [141594, 73057])
        XCTAssertEqual(variants.last?["previous"] as? Int, 0)
        XCTAssertEqual(events.last?["event"] as? String, "ended")
        XCTAssertEqual(events.last?["time"] as? Double ?? 0, 354304 / 44100, accuracy: 0.001)
        let packets = try runTool(ffprobe, ["-v", "error", "-count_packets", "-select_streams", "a:0", "-show_entries",
                                            "stream=codec_name,nb_read_packets", "-of", "csv=p=0", dir + "/rec.aac"])
        XCTAssertEqual(packets.trimmingCharacters(in: .whitespacesAndNewlines), "aac,346")
        // A PLS that points at an HLS playlist is followed to it.
        let viaPLS = tonearm(["stream", s.url("playlist.pls?target=files/hls/packed/index.m3u8"), "--no-play", "--json-events"])
        XCTAssertEqual(viaPLS.code, 0, viaPLS.err)
        XCTAssertEqual(try jsonLines(viaPLS.out).last?["time"] as? Double ?? 0, 354304 / 44100, accuracy: 0.001, viaPLS.out)
        let played = tonearm(["stream", s.hlsURL("hls/fmp4/index.m3u8"), "--output", dir + "/out.wav", "--quiet"])
        XCTAssertEqual(played.code, 0, played.err)
        let frames = try runTool(ffprobe, ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", dir + "/out.wav"])
        // The playlist's length (its EXTINFs add up to 8.03411 s), every frame ffmpeg decodes.
        XCTAssertEqual(Int(frames.trimmingCharacters(in: .whitespacesAndNewlines)), 354304)
    }

    func testClearErrorsForBadURLsAndOptions() throws {
        let s = try server()
        let notFound = tonearm(["stream", s.url("status/404"), "--no-play"])
        XCTAssertEqual(notFound.code, 1)
        XCTAssertTrue(notFound.err.contains("('http')"), notFound.err)
        let garbage = tonearm(["stream", s.url("garbage?size=40000"), "--backend", "null"])
        XCTAssertEqual(garbage.code, 1)
        XCTAssertTrue(garbage.err.contains("('typ?')") || garbage.err.contains("('dta?')"), garbage.err)
        XCTAssertEqual(tonearm(["stream", "file.mp3"]).code, 64)
        XCTAssertEqual(tonearm(["stream", s.url("x"), "--split"]).code, 64)
        XCTAssertEqual(tonearm(["stream", s.url("x"), "--duration", "-1"]).code, 64)
    }
}

import Foundation
import XCTest
import Tonearm
import TonearmTestSupport
import TonearmCLI

/// Tonearm's client against a real Icecast2 on loopback, ffmpeg as the source client (the
/// harness in TonearmTestSupport). Each test streams a fixture in real time (about 5 s).
final class IcecastStreamTests: XCTestCase {
    private func makeServer(tls: (cert: String, key: String)? = nil) throws -> IcecastTestServer {
        do {
            return try IcecastTestServer(tls: tls)
        } catch IcecastTestServerError.notInstalled(let what) {
            throw skipOrFail("\(what) is not installed (the Icecast tests need it)", required: IcecastTestServer.isRequired)
        }
    }

    /// Ends when the station closes the connection (the source finished), instead of dialling again.
    private func options() -> HTTPStream.Options {
        var o = HTTPStream.Options()
        o.maximumReconnects = 0
        o.connectTimeout = 10
        o.stallTimeout = 15
        return o
    }

    /// HTTPStream connects with Icy-MetaData, reads the station's headers, reports the titles
    /// set through the admin API in order, and hands over exactly the bytes ffmpeg sent (to the
    /// last whole block Icecast forwards), no ICY byte among them.
    func testTitlesInOrderAndTheAudioIsWhatTheSourceSent() throws {
        try receiveTitlesAndAudio(tls: nil)
    }

    /// The same over `https:` (Icecast's TLS listen socket, the test certificate): Tonearm's
    /// own client, since URLSession refuses Icecast's `icy-name:value` headers.
    func testTheSameOverTLS() throws {
        guard let tls = HTTPTestServer.tlsFiles else {
            throw skipOrFail("no TLS certificate (TONEARM_TLS_CERT, TONEARM_TLS_KEY): .ci/run makes one",
                             required: HTTPTestServer.isTLSRequired)
        }
        try receiveTitlesAndAudio(tls: tls)
    }

    private func receiveTitlesAndAudio(tls: (cert: String, key: String)?) throws {
        let server = try makeServer(tls: tls)
        defer { server.stop() }
        let file = fixturesDirectory + "/radio/radio.mp3"
        let sentPath = server.directory + "/sent.mp3"
        let source = try server.startSource(mount: "/radio.mp3", file: file, format: .mp3, sentCopy: sentPath)
        let url = server.url(mount: "/radio.mp3", tls: tls != nil)
        XCTAssertEqual(url.hasPrefix("https:"), tls != nil)
        let stream = HTTPStream(url: url, options: options())
        let info = try stream.open()
        XCTAssertEqual(info.icy.name, "Tonearm test radio")
        XCTAssertEqual(info.icy.metaInterval, server.metaInterval)
        XCTAssertEqual(stream.fileTypeHint, .mp3)

        let wanted = ["Tonearm Radio - Morning Show", "Guns N' Roses - Don't Cry", "Кино - Группа крови"]
        var audio: [UInt8] = []
        var titles: [String] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        func pump() throws -> Bool {
            let (n, _) = try chunk.withMutableBytes { raw throws(AudioError) in try stream.read(into: raw) }
            titles += stream.takeMetadata().compactMap { $0.metadata.streamTitle }.filter { !$0.isEmpty }
            audio += chunk[..<n]
            return n > 0
        }
        for title in wanted {
            try server.setTitle(mount: "/radio.mp3", title)
            var open = true
            while open && !titles.contains(title) { open = try pump() }
            if !open { XCTFail("the stream ended before '\(title)' arrived (titles: \(titles))"); break }
        }
        while try pump() {}
        try source.waitUntilFinished()
        XCTAssertEqual(titles, wanted)
        let sent = try readWholeFile(sentPath)
        let delivered = sent.count - sent.count % IcecastTestServer.mp3BlockSize
        XCTAssertEqual(audio.count, delivered)
        XCTAssertTrue(audio.elementsEqual(sent.prefix(delivered)), "the audio differs from what the source sent")
    }

    /// An AAC+ station: HE-AAC v2 in ADTS (`ps_baseline_48k.aac` six times over, 4 s) through
    /// Icecast, its title set 0.7 s in and changed 1.3 s later. `tonearm stream` reports 'aacp' at 48 kHz in stereo (learnt from
    /// the first frames: the ADTS header says AAC LC, mono, 24 kHz) and the titles, records the
    /// bytes the source sent (the whole blocks Icecast forwards), and plays what the recording
    /// decodes to.
    func testAnAACPlusStation() throws {
        let server = try makeServer()
        defer { server.stop() }
        let fixture = try readWholeFile(fixturesDirectory + "/aache/ps_baseline_48k.aac")
        let file = server.directory + "/aacplus.aac"
        try writeWholeFile(file, Array(repeating: fixture, count: 6).flatMap { $0 })
        let sentPath = server.directory + "/sent.aac"
        let source = try server.startSource(mount: "/aacplus", file: file, format: .adts, sentCopy: sentPath)
        // Icecast sends a title to a listener when it changes: set it once the client listens.
        let titleSet = DispatchSemaphore(value: 0)
        let titleError = Locked<String?>(nil)
        let wanted = ["Tonearm AAC+ - Morning Show", "Guns N' Roses - Don't Cry"]
        DispatchQueue.global().async {
            for (i, title) in wanted.enumerated() {
                Thread.sleep(forTimeInterval: i == 0 ? 0.7 : 1.3)
                do { try server.setTitle(mount: "/aacplus", title) } catch { titleError.set("\(error)") }
            }
            titleSet.signal()
        }
        let record = server.directory + "/recorded.aac", wav = server.directory + "/played.wav"
        var out: [UInt8] = []
        var err = ""
        let console = Console(out: { out += $0 }, err: { err += $0 }, stderrIsTerminal: false)
        let code = TonearmCommand.run(["stream", server.url(mount: "/aacplus"), "--output", wav, "--json-events",
                                       "--reconnects", "0", "--record", record], console: console)
        try source.waitUntilFinished()
        titleSet.wait()
        XCTAssertNil(titleError.value)
        XCTAssertEqual(code, 0, err)
        let events = try String(decoding: out, as: UTF8.self).split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let format = try XCTUnwrap(events.first { $0["event"] as? String == "format" })
        XCTAssertEqual(format["formatID"] as? String, "aacp")
        XCTAssertEqual(format["sampleRate"] as? Int, 48000)
        XCTAssertEqual(format["channels"] as? Int, 2)
        // Icecast may send an empty title first, and a title only reaches a listener in the
        // blocks it reads from the source after the change, so one of the two may be missed
        // (rarely): those that come are the ones set, in order.
        let titles = events.compactMap { $0["title"] as? String }.filter { !$0.isEmpty }
        XCTAssertFalse(titles.isEmpty, "\(events)")
        XCTAssertTrue(titles == wanted || titles == [wanted[0]] || titles == [wanted[1]], "\(titles)")
        let sent = try readWholeFile(sentPath), recorded = try readWholeFile(record)
        let delivered = sent.count - sent.count % IcecastTestServer.mp3BlockSize
        XCTAssertEqual(recorded.count, delivered)
        XCTAssertTrue(recorded.elementsEqual(sent.prefix(delivered)), "the recording differs from what the source sent")
        let expected = try decodeInterleaved(record, as: Float.self)
        let played = try decodeInterleaved(wav, as: Float.self)
        XCTAssertGreaterThan(expected.count, 6 * 30000)
        assertSamples(Array(played.prefix(expected.count)), expected, "the station as played")
    }

    /// A chained Ogg Opus and a chained Ogg Vorbis station played (to a WAV file, as the
    /// output device would get it): every link decodes across the chain's format changes,
    /// and what is played is each link of the recording decoded on its own by AudioFile, one
    /// after the other (each link's priming and end trimming applied), sample for sample.
    func testOggChainsPlayLinkAfterLink() throws {
        let server = try makeServer()
        defer { server.stop() }
        for (name, frames) in [("chain.opus", 72000), ("chain.ogg", 33075)] {
            let mount = "/" + name
            let sentPath = server.directory + "/sent-" + name
            let source = try server.startSource(mount: mount, file: fixturesDirectory + "/radio/" + name, format: .ogg,
                                                sentCopy: sentPath)
            let record = server.directory + "/recorded-" + name, wav = server.directory + "/played-\(name).wav"
            var err = ""
            let console = Console(out: { _ in }, err: { err += $0 }, stderrIsTerminal: false)
            let code = TonearmCommand.run(["stream", server.url(mount: mount), "--output", wav, "--reconnects", "0",
                                           "--record", record], console: console)
            try source.waitUntilFinished()
            XCTAssertEqual(code, 0, "\(name): \(err)")
            let recorded = try readWholeFile(record)
            let sentBytes = try readWholeFile(sentPath)
            // Icecast passes Opus pages through, but builds a Vorbis stream's pages again (its
            // Vorbis plugin rewrites the comment header): those links are compared decoded.
            if name.hasSuffix(".opus") {
                XCTAssertTrue(recorded == sentBytes, "\(name): the recording differs from the sent bytes (\(recorded.count) recorded, \(sentBytes.count) sent, first difference at \(zip(recorded, sentBytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1))")
            }
            // The links: each begins with a page whose header type has the BOS flag.
            let pages = OggTestPage.pages(in: recorded)
            XCTAssertEqual(pages.last.map { $0.offset + $0.size }, recorded.count, "\(name): the recording is whole pages")
            let starts = pages.filter(\.isFirst).map(\.offset)
            XCTAssertEqual(starts.count, 3, name)
            var expected: [Float] = []
            for (k, start) in starts.enumerated() {
                let link = server.directory + "/link\(k)-" + name
                try writeWholeFile(link, Array(recorded[start..<(k + 1 < starts.count ? starts[k + 1] : recorded.count)]))
                let samples = try decodeInterleaved(link, as: Float.self)
                XCTAssertEqual(samples.count, frames, "\(name) link \(k): frames (mono)")
                expected += samples
            }
            let played = try decodeInterleaved(wav, as: Float.self)
            XCTAssertEqual(played.count, expected.count, "\(name): frames played")
            assertSamples(Array(played.prefix(expected.count)), expected, "\(name) as played")
        }
    }

    /// A chained Ogg Opus station (no ICY blocks on Ogg): `tonearm stream --no-play` reports
    /// each link's title from its comments, in order, and records the bytes the source sent.
    func testAnOggChainsTitlesAreEvents() throws {
        let server = try makeServer()
        defer { server.stop() }
        let file = fixturesDirectory + "/radio/chain.opus"
        let sentPath = server.directory + "/sent.opus"
        let source = try server.startSource(mount: "/chain.opus", file: file, format: .ogg, sentCopy: sentPath)
        let record = server.directory + "/recorded.opus"
        var out: [UInt8] = []
        var err = ""
        let console = Console(out: { out += $0 }, err: { err += $0 }, stderrIsTerminal: false)
        let code = TonearmCommand.run(["stream", server.url(mount: "/chain.opus"), "--no-play", "--json-events",
                                       "--reconnects", "0", "--record", record], console: console)
        try source.waitUntilFinished()
        XCTAssertEqual(code, 0, err)
        let events = try String(decoding: out, as: UTF8.self).split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixturesDirectory + "/radio/radio.json"))
        let golden = try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["chain.opus"] as? [String: Any])
        let links = try XCTUnwrap(golden["links"] as? [[String: Any]])
        let expected = links.map { link in
            [link["artist"] as? String, link["title"] as? String].compactMap { $0 }.joined(separator: " - ")
        }
        XCTAssertEqual(events.compactMap { $0["title"] as? String }, expected)
        XCTAssertTrue(try readWholeFile(record) == readWholeFile(sentPath), "the recording differs from the sent bytes")
    }
}

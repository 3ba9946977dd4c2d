import Foundation
import XCTest
import TonearmCore
import TonearmStreaming
import TonearmTestSupport

/// The Icecast harness, proved with a listener that is not Tonearm's client: a raw TCP socket
/// sending `Icy-MetaData: 1`, with the ICY blocks stripped by `ICYDemuxer`. Each test streams
/// a fixture from Tests/Fixtures/radio in real time (about 5 s). They skip when icecast2 or
/// ffmpeg is missing, unless TONEARM_ICECAST_REQUIRED=1 (as `.ci/run` sets).
final class IcecastHarnessTests: XCTestCase {
    private let block = IcecastTestServer.mp3BlockSize

    private func makeServer(burstSize: Int = 1 << 20) throws -> IcecastTestServer {
        do {
            return try IcecastTestServer(burstSize: burstSize)
        } catch IcecastTestServerError.notInstalled(let what) {
            throw skipOrFail("\(what) is not installed (the Icecast tests need it)", required: IcecastTestServer.isRequired)
        }
    }

    private func golden(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixturesDirectory + "/radio/radio.json"))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try XCTUnwrap(json[name] as? [String: Any], "radio.json has no \(name)")
    }

    /// The fixture's bytes, checked against the SHA-256 that make-radio.sh recorded.
    private func fixture(_ name: String) throws -> (path: String, bytes: [UInt8]) {
        let path = fixturesDirectory + "/radio/" + name
        let bytes = try readWholeFile(path)
        XCTAssertEqual(SHA256.hex(bytes), try golden(name)["sha256"] as? String, "\(name) differs from radio.json")
        return (path, bytes)
    }

    /// Where `run` starts in `sent` among the offsets that are multiples of `step`.
    private func offset(of run: [UInt8], in sent: [UInt8], step: Int) -> Int? {
        guard run.count <= sent.count else { return nil }
        return stride(from: 0, through: sent.count - run.count, by: step).first { sent[$0..<($0 + run.count)].elementsEqual(run) }
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// MP3 with titles set through the admin API while a listener reads: every title arrives,
    /// in order, and the audio left after stripping the ICY blocks is the bytes ffmpeg sent,
    /// from the first (the burst covers the whole clip) to the last whole 1400-byte block.
    func testMP3TitlesArriveInOrderAndTheAudioIsTheSentBytes() throws {
        let server = try makeServer()
        defer { server.stop() }
        let (file, original) = try fixture("radio.mp3")
        let sentPath = server.directory + "/sent.mp3"
        let source = try server.startSource(mount: "/radio.mp3", file: file, format: .mp3, sentCopy: sentPath)

        let listener = try server.listen(mount: "/radio.mp3")
        XCTAssertEqual(listener.status, 200)
        XCTAssertEqual(listener.header("Content-Type"), "audio/mpeg")
        let icy = ICYHeaders(headers: listener.headers.map { (name: $0.name, value: Array($0.value.utf8)) })
        XCTAssertEqual(icy.metaInterval, server.metaInterval)
        XCTAssertEqual(icy.name, "Tonearm test radio")

        var demuxer = try ICYDemuxer(metaInterval: XCTUnwrap(icy.metaInterval))
        var body: [UInt8] = [], audio: [UInt8] = [], titles: [String] = []
        func pump() throws -> Bool {
            let chunk = try listener.read()
            guard !chunk.isEmpty else { return false }
            body += chunk
            demuxer.feed(chunk, audio: { audio += $0 }, metadata: { titles.append($0.streamTitle ?? "<none>") })
            return true
        }
        // Each title is set once the previous one has arrived, so each lands in a block of its own.
        let wanted: [(title: String, encoding: IcecastTestServer.TitleEncoding)] = [
            ("Tonearm Radio - Morning Show", .utf8),
            ("Guns N' Roses - Don't Cry", .utf8),
            ("Ünïcödé – Ça va", .utf8),
            ("Café Crème", .latin1),
        ]
        for (title, encoding) in wanted {
            try server.setTitle(mount: "/radio.mp3", title, encoding: encoding)
            var open = true
            while open && !titles.contains(title) { open = try pump() }
            if !open { XCTFail("the stream ended before '\(title)' arrived (titles: \(titles))"); break }
        }
        while try pump() {}
        try source.waitUntilFinished()

        // Before the first update Icecast sends StreamTitle=''; then each title once.
        XCTAssertEqual(titles.filter { !$0.isEmpty }, wanted.map(\.title))
        // UTF-8 passes through as given; with charset=UTF-8 Icecast sends the mount's Latin-1.
        XCTAssertTrue(contains(body, Array("StreamTitle='Ünïcödé – Ça va';".utf8)))
        XCTAssertTrue(contains(body, "StreamTitle='Café Crème';".unicodeScalars.map { UInt8($0.value) }))
        XCTAssertEqual(Int64(body.count), Int64(audio.count) + demuxer.metadataBytes)

        // ffmpeg sent the fixture's frames unchanged (no ID3v2, no Xing frame added).
        let sent = try readWholeFile(sentPath)
        XCTAssertTrue(sent == original, "sent \(sent.count) bytes, the fixture has \(original.count)")
        let delivered = sent.count - sent.count % block
        XCTAssertEqual(audio.count, delivered)
        XCTAssertTrue(audio.elementsEqual(sent[..<min(delivered, sent.count)]),
                      "audio differs from the sent bytes at \(zip(audio, sent).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
    }

    /// With no burst, a listener joins at the start of the newest block Icecast holds: a
    /// listener that connects after another has read three blocks gets a contiguous run of
    /// the sent bytes that starts two or more blocks later, on a block boundary. Both runs end
    /// at the last whole block.
    func testWithoutBurstAListenerJoinsMidStreamOnABlockBoundary() throws {
        let server = try makeServer(burstSize: 0)
        defer { server.stop() }
        let (file, _) = try fixture("radio.mp3")
        let sentPath = server.directory + "/sent.mp3"
        let source = try server.startSource(mount: "/live.mp3", file: file, format: .mp3, sentCopy: sentPath)

        let early = try server.listen(mount: "/live.mp3", icyMetadata: false)
        XCTAssertNil(early.header("icy-metaint"))
        var earlyBytes: [UInt8] = []
        while earlyBytes.count < 3 * block {
            let chunk = try early.read()
            if chunk.isEmpty { break }
            earlyBytes += chunk
        }
        let late = try server.listen(mount: "/live.mp3", icyMetadata: false)
        let lateBytes = try late.readToEnd()
        earlyBytes += try early.readToEnd()
        try source.waitUntilFinished()

        let sent = try readWholeFile(sentPath)
        let delivered = sent.count - sent.count % block
        let earlyStart = try XCTUnwrap(offset(of: earlyBytes, in: sent, step: block), "the first listener's bytes are no run of the sent ones")
        let lateStart = try XCTUnwrap(offset(of: lateBytes, in: sent, step: block), "the second listener's bytes are no run of the sent ones")
        XCTAssertGreaterThanOrEqual(lateStart, earlyStart + 2 * block)
        XCTAssertEqual(earlyStart + earlyBytes.count, delivered)
        XCTAssertEqual(lateStart + lateBytes.count, delivered)
    }

    /// A chained Ogg Opus stream: Icecast passes the pages through, so the listener gets the
    /// sent bytes exactly (every link's headers included) and reads the titles from each
    /// link's OpusTags. It interleaves no ICY blocks on an Ogg mount, even when asked, and
    /// takes no titles from the admin API for Opus.
    func testChainedOpusArrivesByteForByteWithItsTitles() throws {
        let server = try makeServer()
        defer { server.stop() }
        let (file, original) = try fixture("chain.opus")
        let links = try XCTUnwrap(golden("chain.opus")["links"] as? [[String: Any]])
        let sentPath = server.directory + "/sent.opus"
        let source = try server.startSource(mount: "/chain.opus", file: file, format: .ogg, sentCopy: sentPath)

        let listener = try server.listen(mount: "/chain.opus", icyMetadata: true)
        XCTAssertEqual(listener.status, 200)
        XCTAssertEqual(listener.header("Content-Type"), "audio/ogg")
        XCTAssertNil(listener.header("icy-metaint"))
        XCTAssertThrowsError(try server.setTitle(mount: "/chain.opus", "Not for Opus")) { error in
            guard case IcecastTestServerError.requestFailed(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("will not accept"), message)
        }
        let received = try listener.readToEnd()
        try source.waitUntilFinished()

        let sent = try readWholeFile(sentPath)
        XCTAssertTrue(sent == original, "sent \(sent.count) bytes, the fixture has \(original.count)")
        XCTAssertTrue(received == sent, "received \(received.count) bytes, sent \(sent.count)")
        let got = OggTestPage.links(in: received)
        XCTAssertEqual(got.map { Int($0.serial) }, links.map { $0["serial"] as? Int ?? -1 })
        XCTAssertEqual(got.map { OggTestPage.comments($0.packets[1])?.first { $0.key == "TITLE" }?.value ?? "" },
                       links.map { $0["title"] as? String ?? "?" })
    }

    /// A chained Ogg Vorbis stream: Icecast 2.4 rebuilds Vorbis pages (serials of its own,
    /// pages of about half a second), so the listener gets the sent packets, link by link,
    /// with the same comment headers and so the same titles, but not the sent bytes.
    func testChainedVorbisKeepsItsPacketsAndTitles() throws {
        let server = try makeServer()
        defer { server.stop() }
        let (file, original) = try fixture("chain.ogg")
        let links = try XCTUnwrap(golden("chain.ogg")["links"] as? [[String: Any]])
        let sentPath = server.directory + "/sent.ogg"
        let source = try server.startSource(mount: "/chain.ogg", file: file, format: .ogg, sentCopy: sentPath)

        let listener = try server.listen(mount: "/chain.ogg", icyMetadata: true)
        XCTAssertEqual(listener.status, 200)
        XCTAssertNil(listener.header("icy-metaint"))
        let received = try listener.readToEnd()
        try source.waitUntilFinished()

        let sent = try readWholeFile(sentPath)
        XCTAssertTrue(sent == original, "sent \(sent.count) bytes, the fixture has \(original.count)")
        let got = OggTestPage.links(in: received)
        let expected = OggTestPage.links(in: sent)
        XCTAssertEqual(got.count, links.count)
        XCTAssertEqual(got.map(\.packets.count), links.map { $0["packets"] as? Int ?? -1 })
        for (i, (a, b)) in zip(got, expected).enumerated() {
            XCTAssertTrue(a.packets == b.packets, "link \(i): the packets differ")
        }
        XCTAssertEqual(got.map { OggTestPage.comments($0.packets[1])?.first { $0.key == "TITLE" }?.value ?? "" },
                       links.map { $0["title"] as? String ?? "?" })
    }
}

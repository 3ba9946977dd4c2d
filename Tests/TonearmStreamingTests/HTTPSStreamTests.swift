import Foundation
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import Tonearm
import TonearmTestSupport

/// `https:` against the test server with TLS (a certificate for 127.0.0.1 that `.ci/run` makes
/// and adds to the system's trusted ones), through both clients: Tonearm's own (TLS from the
/// system's OpenSSL, loaded at run time) and URLSession. Files keep the guarantees they have over
/// plain HTTP with either; radio servers' ICY answers are read by Tonearm's client only.
final class HTTPSStreamTests: XCTestCase {
    static let server = HTTPTestServer.tlsFiles.map { HTTPTestServer.starting(tls: $0) }

    func server() throws -> HTTPTestServer {
        guard let started = Self.server else {
            throw skipOrFail("no TLS certificate (TONEARM_TLS_CERT, TONEARM_TLS_KEY): .ci/run makes one",
                             required: HTTPTestServer.isTLSRequired)
        }
        return try started.require()
    }

    /// Both clients, Tonearm's first.
    let clients = [false, true]

    func options(urlSession: Bool = false) -> HTTPStream.Options {
        var o = HTTPStream.Options()
        o.usesURLSessionForHTTPS = urlSession
        o.reconnectDelay = 0.01
        o.maximumReconnectDelay = 0.05
        o.reconnectsWhenLiveStreamCloses = false
        return o
    }

    func readAll(_ stream: HTTPStream) throws -> [UInt8] { try stream.readToEnd(limit: 1 << 20) }

    let mp3 = "mp3dec/lame_cbr320_stereo.mp3"

    /// HLS over TLS, through both clients: the playlists, the AES-128 key and the segments
    /// all come over https, and every frame of the presentation is decoded.
    func testHLSOverTLS() throws {
        let s = try server()
        for urlSession in clients {
            var options = HLSStream.Options()
            options.http = self.options(urlSession: urlSession)
            let decoder = StreamDecoder(hls: HLSStream(url: s.hlsURL("hls/aes/index.m3u8"), options: options))
            defer { decoder.close() }
            try decoder.open()
            try decoder.setClientFormat(.float32(sampleRate: 44100, channels: 2, interleaved: true))
            var frames = 0
            var chunk: [UInt8] = []
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                guard let n = try decoder.readAvailable(frames: 4096, into: &chunk) else { usleep(2000); continue }
                if n == 0 && decoder.isAtEnd { break }
                frames += n
            }
            // As ffmpeg decodes the playlist (Tests/Fixtures/hls/aes.json).
            XCTAssertEqual(frames, 354304, "URLSession: \(urlSession)")
        }
    }

    func testReadsResumesAndSeeksOverTLS() throws {
        let s = try server()
        XCTAssertTrue(s.url("x").hasPrefix("https://"))
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        for urlSession in clients {
            let client = urlSession ? "URLSession" : "Tonearm's client"
            let whole = HTTPStream(url: s.url("files/" + mp3), options: options(urlSession: urlSession))
            XCTAssertEqual(try whole.open().mimeType, "audio/mpeg", client)
            XCTAssertTrue(try readAll(whole) == expected, client)
            // Drops every 10 kB: resumed with Range at the exact byte.
            let dropping = HTTPStream(url: s.url("files/\(mp3)?drop=10000"), options: options(urlSession: urlSession))
            XCTAssertTrue(try readAll(dropping) == expected, client)
            let seeking = HTTPStream(url: s.url("files/" + mp3), options: options(urlSession: urlSession))
            try seeking.open()
            try seeking.seek(to: 30000)
            XCTAssertTrue(try readAll(seeking) == Array(expected[30000...]), client)
            XCTAssertEqual(try seeking.fetch(offset: 100, count: 50), Array(expected[100..<150]), client)
        }
    }

    func testICYAndAMoovAtTheEndOverTLS() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let path = "alac/alac_16_stereo.m4a"
        let decoded = try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self)
        for urlSession in clients {
            let client = urlSession ? "URLSession" : "Tonearm's client"
            let stream = HTTPStream(url: s.url("live/\(mp3)?metaint=2000&loops=2&titles=Eins%7CZwei"),
                                    options: options(urlSession: urlSession))
            let info = try stream.open()
            XCTAssertEqual(info.icy.metaInterval, 2000, client)
            XCTAssertTrue(try readAll(stream) == expected + expected, client)
            XCTAssertEqual(stream.takeMetadata().compactMap { $0.metadata.streamTitle }, ["Eins", "Zwei"], client)

            var o = options(urlSession: urlSession)
            o.bufferSize = 4096
            o.historySize = 4096
            let d = StreamDecoder(stream: HTTPStream(url: s.url("files/\(path)?trickle=60000"), options: o))
            try d.open()
            try d.setClientFormat(.float32(sampleRate: d.fileDataFormat.sampleRate, channels: d.fileDataFormat.channelsPerFrame))
            var got: [Float] = []
            var bytes: [UInt8] = []
            while true {
                let n = try d.read(frames: 4096, into: &bytes)
                if n == 0 { break }
                bytes.withUnsafeBytes { got.append(contentsOf: $0.bindMemory(to: Float.self)) }
            }
            assertSamples(got, decoded, "moov at the end over TLS, \(client)")
        }
    }

    /// What radio servers send, over TLS: SHOUTcast v1's `ICY 200 OK`, and Icecast 2.4's
    /// `icy-name:value` headers. Tonearm's client reads both; URLSession refuses both, and the
    /// error says why and what reads them.
    func testRadioServersAnswersOverTLS() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        for quirk in ["icyok=1", "icynospace=1"] {
            let url = s.url("live/\(mp3)?\(quirk)&metaint=3000&loops=1&titles=%D0%A8%C3%A9&name=Radio%20TLS&br=320")
            let stream = HTTPStream(url: url, options: options())
            let info = try stream.open()
            XCTAssertEqual(info.statusCode, 200, quirk)
            XCTAssertEqual(info.icy.name, "Radio TLS", quirk)
            XCTAssertEqual(info.icy.bitRate, 320, quirk)
            XCTAssertEqual(info.icy.metaInterval, 3000, quirk)
            XCTAssertTrue(try readAll(stream) == expected, quirk)
            XCTAssertEqual(stream.takeMetadata().compactMap { $0.metadata.streamTitle }, ["Шé"], quirk)

            let refused = HTTPStream(url: url, options: options(urlSession: true))
            XCTAssertThrowsError(try refused.open(), quirk) { error in
                let e = error as? AudioError
                XCTAssertEqual(e?.code, .httpStatus, "\(quirk): \(error)")
                XCTAssertTrue(e?.message.contains("usesURLSessionForHTTPS") == true, e?.message ?? "")
            }
        }
    }

    /// An `http:` address that redirects to `https:` (as stations moving to TLS do): Tonearm's
    /// client follows it from one scheme to the other, and the final URL is reported.
    func testARedirectFromHTTPToHTTPS() throws {
        let s = try server()
        let plain = try HTTPTestServer()
        defer { plain.stop() }
        let target = s.url("files/" + mp3)
        let encoded = try XCTUnwrap(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let stream = HTTPStream(url: plain.url("redirect-to?url=\(encoded)"), options: options())
        XCTAssertEqual(try stream.open().url, target)
        XCTAssertTrue(try readAll(stream) == readWholeFile(fixturesDirectory + "/" + mp3))
    }

    /// `https:` to a server that speaks plain HTTP: the handshake fails at once with 'net!'
    /// naming TLS, through either client.
    func testAPlainServerAtAnHTTPSURLIsAClearError() throws {
        let plain = try HTTPTestServer()
        defer { plain.stop() }
        let url = plain.url("files/" + mp3).replacingOccurrences(of: "http://", with: "https://")
        for urlSession in clients {
            let started = Date()
            XCTAssertThrowsError(try HTTPStream(url: url, options: options(urlSession: urlSession)).open()) { error in
                XCTAssertEqual((error as? AudioError)?.code, .network, "\(error)")
                if !urlSession { XCTAssertTrue("\(error)".contains("TLS handshake"), "\(error)") }
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        }
    }

    /// A peer that accepts the connection and never answers the TLS handshake: `open()` ends
    /// with 'time' after `connectTimeout`, not later.
    func testASilentPeerTimesOutInTheHandshake() throws {
        let (fd, port) = try silentLoopbackListener()
        defer { close(fd) }
        var o = options()
        o.connectTimeout = 1
        let started = Date()
        XCTAssertThrowsError(try HTTPStream(url: "https://127.0.0.1:\(port)/x.mp3", options: o).open()) { error in
            XCTAssertEqual((error as? AudioError)?.code, .timedOut, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 4)
    }

    func testAnUntrustedCertificateIsAClearError() throws {
        let s = try server()
        // The same server by a name its certificate does not carry (it names 127.0.0.1 only).
        let url = s.url("files/" + mp3).replacingOccurrences(of: "127.0.0.1", with: "localhost")
        for urlSession in clients {
            XCTAssertThrowsError(try HTTPStream(url: url, options: options(urlSession: urlSession)).open()) { error in
                XCTAssertEqual((error as? AudioError)?.code, .network, "\(error)")
                if !urlSession {
                    XCTAssertTrue((error as? AudioError)?.message.contains("the certificate of localhost is not trusted") == true, "\(error)")
                }
            }
        }
    }
}

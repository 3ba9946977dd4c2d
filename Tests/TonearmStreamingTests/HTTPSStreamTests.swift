import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// `https:` through URLSession, against the test server with TLS (a certificate for 127.0.0.1
/// that `.ci/run` makes and adds to the system's trusted ones): the same guarantees as over
/// plain HTTP for files, and ICY from a server that writes its headers conventionally.
final class HTTPSStreamTests: XCTestCase {
    static let server: HTTPTestServer? = HTTPTestServer.tlsFiles.flatMap { try? HTTPTestServer(tls: $0) }

    func server() throws -> HTTPTestServer {
        guard let s = Self.server else {
            if HTTPTestServer.isTLSRequired { XCTFail("TONEARM_TLS_REQUIRED=1 but the HTTPS test server did not start") }
            throw XCTSkip("no TLS certificate (TONEARM_TLS_CERT, TONEARM_TLS_KEY): .ci/run makes one")
        }
        return s
    }

    func options() -> HTTPStream.Options {
        var o = HTTPStream.Options()
        o.reconnectDelay = 0.01
        o.maximumReconnectDelay = 0.05
        o.reconnectsWhenLiveStreamCloses = false
        return o
    }

    func readAll(_ stream: HTTPStream) throws -> [UInt8] { try stream.readToEnd(limit: 1 << 20) }

    let mp3 = "mp3dec/lame_cbr320_stereo.mp3"

    func testReadsResumesAndSeeksOverTLS() throws {
        let s = try server()
        XCTAssertTrue(s.url("x").hasPrefix("https://"))
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let whole = HTTPStream(url: s.url("files/" + mp3), options: options())
        XCTAssertEqual(try whole.open().mimeType, "audio/mpeg")
        XCTAssertTrue(try readAll(whole) == expected)
        // Drops every 10 kB: resumed with Range at the exact byte.
        XCTAssertTrue(try readAll(HTTPStream(url: s.url("files/\(mp3)?drop=10000"), options: options())) == expected)
        let seeking = HTTPStream(url: s.url("files/" + mp3), options: options())
        try seeking.open()
        try seeking.seek(to: 30000)
        XCTAssertTrue(try readAll(seeking) == Array(expected[30000...]))
        XCTAssertEqual(try seeking.fetch(offset: 100, count: 50), Array(expected[100..<150]))
    }

    func testICYAndAMoovAtTheEndOverTLS() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let stream = HTTPStream(url: s.url("live/\(mp3)?metaint=2000&loops=2&titles=Eins%7CZwei"), options: options())
        let info = try stream.open()
        XCTAssertEqual(info.icy.metaInterval, 2000)
        XCTAssertTrue(try readAll(stream) == expected + expected)
        XCTAssertEqual(stream.takeMetadata().compactMap { $0.metadata.streamTitle }, ["Eins", "Zwei"])

        let path = "alac/alac_16_stereo.m4a"
        var o = options()
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
        assertSamples(got, try decodeInterleaved(fixturesDirectory + "/" + path, as: Float.self), "moov at the end over TLS")
    }

    /// A SHOUTcast v1 answer over TLS: URLSession (the https path) refuses it; the error says so.
    func testAnICYStatusLineOverTLSIsAClearError() throws {
        let s = try server()
        let stream = HTTPStream(url: s.url("live/\(mp3)?icyok=1&loops=1"), options: options())
        XCTAssertThrowsError(try stream.open()) { error in
            let e = error as? AudioError
            XCTAssertEqual(e?.code, .httpStatus, "\(error)")
            XCTAssertTrue(e?.message.contains("not yet over https:") == true, e?.message ?? "")
        }
    }

    func testAnUntrustedCertificateIsAClearError() throws {
        let s = try server()
        // The same server by a name its certificate does not carry (it names 127.0.0.1 only).
        let stream = HTTPStream(url: s.url("files/" + mp3).replacingOccurrences(of: "127.0.0.1", with: "localhost"), options: options())
        XCTAssertThrowsError(try stream.open()) { error in
            XCTAssertEqual((error as? AudioError)?.code, .network, "\(error)")
        }
    }
}

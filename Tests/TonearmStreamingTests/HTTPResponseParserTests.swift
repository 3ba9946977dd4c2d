import XCTest
import TonearmCore
import TonearmStreaming

/// The socket client's reader on whole responses: the forms radio servers send.
final class HTTPResponseParserTests: XCTestCase {
    func parse(_ text: String, body: [UInt8] = []) throws -> (HTTPResponseInfo, [UInt8]) {
        try HTTPResponseParser.parse(Array(text.utf8) + body)
    }

    func testStatusLinesHeadersAndBodies() throws {
        let (icy, icyBody) = try parse("ICY 200 OK\r\nicy-name:Radio X\r\nicy-metaint:8192\r\ncontent-type:audio/mpeg\r\n\r\nabc")
        XCTAssertEqual(icy.statusCode, 200)
        XCTAssertEqual(icy.icy.name, "Radio X")
        XCTAssertEqual(icy.icy.metaInterval, 8192)
        XCTAssertEqual(icy.mimeType, "audio/mpeg")
        XCTAssertEqual(icyBody, Array("abc".utf8))

        let (ranged, rangedBody) = try parse("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 100-104/5000\r\nContent-Length: 5\r\n\r\n12345EXTRA")
        XCTAssertEqual(ranged.statusCode, 206)
        XCTAssertEqual(ranged.contentRange?.first, 100)
        XCTAssertEqual(ranged.contentRange?.total, 5000)
        XCTAssertEqual(ranged.resourceLength, 5000)
        XCTAssertTrue(ranged.acceptsRanges)
        XCTAssertEqual(rangedBody, Array("12345".utf8), "the body stops at Content-Length")

        let (_, chunked) = try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\n\r\n")
        XCTAssertEqual(chunked, Array("Wikipedia".utf8))

        let (bare, bareBody) = try parse("HTTP/1.0 200 OK\nContent-Type: audio/ogg\n\nOggS")
        XCTAssertEqual(bare.mimeType, "audio/ogg")
        XCTAssertEqual(bareBody, Array("OggS".utf8))
    }

    func testBrokenResponsesAreClearErrors() {
        for text in ["SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1 abc\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "HTTP/1.1 200 OK\r\n"] {
            XCTAssertThrowsError(try parse(text), text) { error in
                let code = (error as? AudioError)?.code
                XCTAssertTrue(code == .httpStatus || code == .network, "\(text): \(error)")
            }
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TonearmTestSupport
import XCTest

/// The streaming tests' HTTP server itself: its Python self-test, and the Swift harness
/// (start, `url`, `requestLog`, `garbage`) against requests URLSession makes.
final class HTTPTestServerTests: XCTestCase {
    /// A fixture the server serves from its default root, Tests/Fixtures.
    let fixture = "mpeg/lame_cbr128.mp3"

    func testPythonSelfTestPasses() throws {
        let server = try HTTPTestServer()  // python3 is there and the script starts
        defer { server.stop() }
        let python = try requireTool("python3")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [HTTPTestServer.scriptPath, "--self-test"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains(", 0 failures"), text)
    }

    func testPlainGETIsServedAndLogged() async throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        XCTAssertEqual(server.url("files/\(fixture)"), "http://127.0.0.1:\(server.port)/files/\(fixture)")
        XCTAssertEqual(server.url("/files/\(fixture)?drop=5"), "http://127.0.0.1:\(server.port)/files/\(fixture)?drop=5")
        XCTAssertEqual(try server.requestLog(), [])

        let (body, response) = try await fetch(server.url("files/\(fixture)"))
        let expected = try readWholeFile(fixturesDirectory + "/" + fixture)
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Type"), "audio/mpeg")
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Length"), String(expected.count))
        XCTAssertEqual(response.value(forHTTPHeaderField: "Accept-Ranges"), "bytes")
        XCTAssertEqual(body, expected)

        let log = try server.requestLog(clear: true)
        XCTAssertEqual(log.count, 1)
        XCTAssertEqual(log.first?["method"], "GET")
        XCTAssertEqual(log.first?["path"], "/files/\(fixture)")
        XCTAssertNil(log.first?["Range"])
        XCTAssertNil(log.first?["Icy-MetaData"])
        XCTAssertFalse((log.first?["User-Agent"] ?? "").isEmpty, "URLSession sends a User-Agent")
        XCTAssertEqual(try server.requestLog(), [], "clear: true empties the log")
    }

    func testRangedGETAndGarbageAgreeWithTheHarness() async throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let expected = try readWholeFile(fixturesDirectory + "/" + fixture)

        let (tail, ranged) = try await fetch(server.url("files/\(fixture)"), headers: ["Range": "bytes=100-"])
        XCTAssertEqual(ranged.statusCode, 206)
        XCTAssertEqual(ranged.value(forHTTPHeaderField: "Content-Range"), "bytes 100-\(expected.count - 1)/\(expected.count)")
        XCTAssertEqual(tail, Array(expected[100...]))

        let (noise, plain) = try await fetch(server.url("garbage?size=1000"))
        XCTAssertEqual(plain.value(forHTTPHeaderField: "Content-Type"), "audio/mpeg")
        XCTAssertEqual(noise, HTTPTestServer.garbage(offset: 0, count: 1000))
        let (spoiled, _) = try await fetch(server.url("files/\(fixture)?garbage=500"), headers: ["Range": "bytes=400-"])
        XCTAssertEqual(spoiled, Array(expected[400..<500]) + HTTPTestServer.garbage(offset: 500, count: expected.count - 500))
        XCTAssertEqual(HTTPTestServer.garbage(offset: 30, count: 5), Array(HTTPTestServer.garbage(offset: 0, count: 40)[30..<35]))

        let log = try server.requestLog()
        XCTAssertEqual(log.map { $0["path"] ?? "" },
                       ["/files/\(fixture)", "/garbage?size=1000", "/files/\(fixture)?garbage=500"])
        XCTAssertEqual(log.map { $0["Range"] }, ["bytes=100-", nil, "bytes=400-"])
    }

    func testAServerThatCannotStartSaysSo() throws {
        XCTAssertThrowsError(try HTTPTestServer(root: "/nonexistent/tonearm-http-root")) { error in
            let text = String(describing: error)
            XCTAssertTrue(text.contains("exited with status 2 before printing its port"), text)
        }
    }

    /// One GET through URLSession (no cache), with a 10 s timeout.
    private func fetch(_ url: String, headers: [String: String] = [:]) async throws -> ([UInt8], HTTPURLResponse) {
        var request = URLRequest(url: try XCTUnwrap(URL(string: url)), cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        return ([UInt8](data), try XCTUnwrap(response as? HTTPURLResponse))
    }
}

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

    /// The `/hls/` route on the ts-64k fixture (5 segments: 2.02, 2.00, 2.00, 2.00 and 0.023 s):
    /// VOD faults (a missing segment answers 404, a failing one 500 and then the file), and a
    /// live window at 20 times real time that advances, marks the wrap with a discontinuity
    /// and counts it in EXT-X-DISCONTINUITY-SEQUENCE once it slid out, and ends with ENDLIST
    /// after `endafter` segments.
    func testHLSRouteFaultsAndLiveWindow() async throws {
        let server = try HTTPTestServer()
        defer { server.stop() }
        let playlist = "hls/ts-64k/index.m3u8"
        let folder = fixturesDirectory + "/hls/ts-64k/"
        XCTAssertEqual(server.hlsURL(playlist, ["missing": "1", "fail": "2:1"]),
                       server.url("hls/hls/ts-64k/index.m3u8?fail=2:1&missing=1"))

        let (text, response) = try await fetch(server.hlsURL(playlist, ["missing": "1", "fail": "2:1"]))
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Type"), "application/vnd.apple.mpegurl")
        let vod = HLSWindow(text)
        XCTAssertEqual(vod.segments.count, 5)
        XCTAssertTrue(vod.ended)
        let (first, _) = try await fetch(server.url(vod.segments[0]))
        XCTAssertEqual(first, try readWholeFile(folder + "seg0.ts"))
        let (_, missing) = try await fetch(server.url(vod.segments[1]))
        XCTAssertEqual(missing.statusCode, 404)
        let (_, failed) = try await fetch(server.url(vod.segments[2]))
        XCTAssertEqual(failed.statusCode, 500)
        let (retried, second) = try await fetch(server.url(vod.segments[2]))
        XCTAssertEqual(second.statusCode, 200)
        XCTAssertEqual(retried, try readWholeFile(folder + "seg2.ts"))

        // Live: poll until segment 6 leads the window (the wrap at 5 has slid out and back in).
        let live = server.hlsURL(playlist, ["live": "1", "window": "3", "speed": "20"])
        var windows: [HLSWindow] = []
        let deadline = ContinuousClock.now + .seconds(15)
        while windows.last.map({ $0.mediaSequence < 6 }) ?? true, ContinuousClock.now < deadline {
            windows.append(HLSWindow(try await fetch(live).0))
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertEqual(windows.first?.mediaSequence, 0)
        XCTAssertEqual(windows.first?.segments.map { $0.components(separatedBy: "?")[0] },
                       ["/files/hls/ts-64k/seg0.ts", "/files/hls/ts-64k/seg1.ts", "/files/hls/ts-64k/seg2.ts"])
        XCTAssertGreaterThanOrEqual(windows.last?.mediaSequence ?? 0, 6, "the live window did not advance")
        XCTAssertEqual(windows.map(\.mediaSequence), windows.map(\.mediaSequence).sorted())
        for window in windows {
            XCTAssertFalse(window.ended)
            XCTAssertEqual(window.targetDuration, 2)
            // Segment 5 is seg0.ts again, after a discontinuity, counted once it slid out.
            let numbers = window.mediaSequence..<(window.mediaSequence + window.segments.count)
            XCTAssertEqual(window.discontinuityBefore, numbers.map { $0 > 0 && $0 % 5 == 0 }, "window at \(window.mediaSequence)")
            XCTAssertEqual(window.discontinuitySequence, max(0, window.mediaSequence - 1) / 5)
            XCTAssertEqual(window.segments.map { $0.components(separatedBy: "?")[0] },
                           numbers.map { "/files/hls/ts-64k/seg\($0 % 5).ts" })
        }

        // endafter=4: ENDLIST once four segments are out, and the window stays.
        let ending = server.hlsURL(playlist, ["live": "1", "window": "3", "speed": "50", "endafter": "4"])
        var last = HLSWindow(try await fetch(ending).0)
        while !last.ended, ContinuousClock.now < deadline + .seconds(5) {
            try await Task.sleep(for: .milliseconds(20))
            last = HLSWindow(try await fetch(ending).0)
        }
        XCTAssertTrue(last.ended)
        XCTAssertEqual(last.mediaSequence, 1)
        XCTAssertEqual(last.segments.count, 3)
    }

    /// What the HLS test reads from a served media playlist.
    private struct HLSWindow {
        var mediaSequence = 0, discontinuitySequence = 0, targetDuration = 0
        var segments: [String] = [], discontinuityBefore: [Bool] = []
        var ended = false

        init(_ body: [UInt8]) {
            var discontinuity = false
            for line in String(decoding: body, as: UTF8.self).split(separator: "\n").map(String.init) {
                let value = Int(line.split(separator: ":").last ?? "") ?? 0
                if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") { mediaSequence = value }
                else if line.hasPrefix("#EXT-X-DISCONTINUITY-SEQUENCE:") { discontinuitySequence = value }
                else if line.hasPrefix("#EXT-X-TARGETDURATION:") { targetDuration = value }
                else if line == "#EXT-X-DISCONTINUITY" { discontinuity = true }
                else if line == "#EXT-X-ENDLIST" { ended = true }
                else if !line.isEmpty, !line.hasPrefix("#") {
                    segments.append(line)
                    discontinuityBefore.append(discontinuity)
                    discontinuity = false
                }
            }
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

import Foundation
import XCTest
import TonearmCore
import TonearmFormats
import TonearmStreaming
import TonearmTestSupport

/// HTTPStream against the local test server (Tests/TestServers/http_test_server.py): every
/// case ends as a user expects, resumed byte-exact, a clear error, or what could be read.
final class HTTPStreamTests: XCTestCase {
    static let server = HTTPTestServer.starting()

    func server() throws -> HTTPTestServer {
        try Self.server.require()
    }

    /// Quick reconnects, so that the tests take milliseconds per drop.
    func fastOptions(reconnects: Int = 20, stall: Double = 5, liveReconnects: Bool = false) -> HTTPStream.Options {
        var o = HTTPStream.Options()
        o.reconnectsWhenLiveStreamCloses = liveReconnects
        o.reconnectDelay = 0.01
        o.maximumReconnectDelay = 0.05
        o.maximumReconnects = reconnects
        o.stallTimeout = stall
        o.connectTimeout = 5
        return o
    }

    /// Reads the whole body, with each discontinuity's offset and the events.
    func readAll(_ stream: HTTPStream, chunk: Int = 7000) throws -> (bytes: [UInt8], gaps: [Int]) {
        var out: [UInt8] = []
        var gaps: [Int] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let (n, gap) = try buffer.withMutableBytes { raw throws(AudioError) in try stream.read(into: raw) }
            if n == 0 { break }
            if gap { gaps.append(out.count) }
            out += buffer[..<n]
        }
        return (out, gaps)
    }

    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [HTTPStream.Event] = []
        func append(_ e: HTTPStream.Event) { lock.withLock { list.append(e) } }
        var all: [HTTPStream.Event] { lock.withLock { list } }
        var titles: [String] { all.compactMap { if case .metadata(let m, _) = $0 { m.streamTitle } else { nil } } }
        var reconnects: Int { all.filter { if case .reconnecting = $0 { true } else { false } }.count }
    }

    let mp3 = "mp3dec/lame_cbr320_stereo.mp3"

    func testReadsTheWholeBodyWithItsTypeAndLength() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let stream = HTTPStream(url: s.url("files/" + mp3), options: fastOptions())
        let info = try stream.open()
        XCTAssertEqual(info.statusCode, 200)
        XCTAssertEqual(info.mimeType, "audio/mpeg")
        XCTAssertEqual(stream.fileTypeHint, .mp3)
        XCTAssertEqual(stream.size, Int64(expected.count))
        XCTAssertTrue(stream.isSeekable)
        XCTAssertFalse(stream.isLive)
        let (bytes, gaps) = try readAll(stream)
        XCTAssertEqual(bytes, expected)
        XCTAssertEqual(gaps, [])
        XCTAssertTrue(stream.isComplete)
    }

    /// The server drops every response after 10,000 bytes: each reconnect asks for the exact
    /// next byte, and the body comes out whole, nothing lost or repeated.
    func testResumesAfterEachDropAtTheExactByte() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        _ = try s.requestLog(clear: true)
        let events = Events()
        let stream = HTTPStream(url: s.url("files/\(mp3)?drop=10000"), options: fastOptions())
        stream.onEvent = { events.append($0) }
        let (bytes, gaps) = try readAll(stream)
        XCTAssertEqual(bytes.count, expected.count)
        XCTAssertTrue(bytes == expected, "the resumed body differs from the file")
        XCTAssertEqual(gaps, [], "a file of known length resumes without a discontinuity")
        let drops = (expected.count - 1) / 10000
        let ranges = try s.requestLog().compactMap { $0["Range"] }
        XCTAssertEqual(ranges, (1...drops).map { "bytes=\($0 * 10000)-" })
        XCTAssertEqual(events.reconnects, drops)
    }

    /// A server that ignores Range: the resumed response starts at byte 0 again and the bytes
    /// already had are skipped, still byte-exact. When every response drops at the same byte,
    /// no attempt gets further, and the stream gives up instead of looping.
    func testResumesByteExactFromAServerWithoutRanges() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let stream = HTTPStream(url: s.url("files/\(mp3)?dropfirst=15000&norange=1"), options: fastOptions())
        let (bytes, _) = try readAll(stream)
        XCTAssertTrue(bytes == expected)
        XCTAssertFalse(stream.isSeekable)

        let stuck = HTTPStream(url: s.url("files/\(mp3)?drop=15000&norange=1"), options: fastOptions(reconnects: 3))
        XCTAssertThrowsError(try readAll(stuck)) { error in
            XCTAssertEqual((error as? AudioError)?.code, .network)
        }
    }

    func testGivesUpAfterTheReconnectLimit() throws {
        let s = try server()
        _ = try s.requestLog(clear: true)
        let events = Events()
        let stream = HTTPStream(url: s.url("files/\(mp3)?drop=1000"), options: fastOptions(reconnects: 0))
        stream.onEvent = { events.append($0) }
        XCTAssertThrowsError(try readAll(stream)) { error in
            XCTAssertEqual((error as? AudioError)?.code, .network)
        }
        let limited = HTTPStream(url: s.url("files/\(mp3)?drop=0"), options: fastOptions(reconnects: 2))
        _ = try s.requestLog(clear: true)
        XCTAssertThrowsError(try readAll(limited)) { error in
            let e = error as? AudioError
            XCTAssertEqual(e?.code, .network)
            XCTAssertTrue(e?.message.contains("gave up after 2 reconnects") == true, e?.message ?? "")
        }
        XCTAssertEqual(try s.requestLog().count, 3, "the first request and two reconnects")
    }

    func testErrorStatusesAreClearErrors() throws {
        let s = try server()
        for code in [404, 500, 403] {
            let stream = HTTPStream(url: s.url("status/\(code)"), options: fastOptions())
            XCTAssertThrowsError(try stream.open()) { error in
                let e = error as? AudioError
                XCTAssertEqual(e?.code, .httpStatus)
                XCTAssertTrue(e?.message.contains("\(code)") == true, e?.message ?? "")
            }
        }
        let refused = HTTPStream(url: "http://127.0.0.1:9/nothing", options: fastOptions())
        XCTAssertThrowsError(try refused.open()) { XCTAssertEqual(($0 as? AudioError)?.code, .network) }
        XCTAssertThrowsError(try HTTPStream(url: "ftp://example.org/a.mp3").open()) {
            XCTAssertEqual(($0 as? AudioError)?.code, .illegalOperation)
        }
    }

    func testFollowsRedirectsAndStopsALoop() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let stream = HTTPStream(url: s.url("redirect/3/files/\(mp3)"), options: fastOptions())
        let info = try stream.open()
        XCTAssertEqual(info.url, s.url("files/\(mp3)"))
        XCTAssertTrue(try readAll(stream).bytes == expected)
        let start = Date()
        XCTAssertThrowsError(try HTTPStream(url: s.url("redirect-loop"), options: fastOptions()).open())
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
    }

    /// A trickling server (20 kB/s) is slow, not broken: the body arrives whole.
    func testTrickledBodyArrivesWhole() throws {
        let s = try server()
        let file = "mpeg/ffmpeg_no_xing.mp3"
        let expected = try readWholeFile(fixturesDirectory + "/" + file)
        let stream = HTTPStream(url: s.url("files/\(file)?trickle=40000"), options: fastOptions(stall: 2))
        XCTAssertTrue(try readAll(stream).bytes == expected)
    }

    /// Headers, then silence: the stall timeout turns it into reconnects, then a clear error.
    func testAHangingServerEndsInAnErrorNotAHang() throws {
        let s = try server()
        let events = Events()
        let stream = HTTPStream(url: s.url("files/\(mp3)?hang=1"), options: fastOptions(reconnects: 1, stall: 0.5))
        stream.onEvent = { events.append($0) }
        let start = Date()
        XCTAssertThrowsError(try readAll(stream)) { error in
            XCTAssertEqual((error as? AudioError)?.code, .network)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
        XCTAssertTrue(events.all.contains { if case .stalled = $0 { true } else { false } })
    }

    func testSeeksWithARangeRequestAndFetchesRanges() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let stream = HTTPStream(url: s.url("files/" + mp3), options: fastOptions())
        try stream.open()
        try stream.seek(to: 30000)
        XCTAssertEqual(stream.position, 30000)
        XCTAssertTrue(try readAll(stream).bytes == Array(expected[30000...]))
        XCTAssertEqual(try stream.fetch(offset: 1234, count: 100), Array(expected[1234..<1334]))
        XCTAssertEqual(try stream.fetch(offset: Int64(expected.count - 10), count: 100), Array(expected[(expected.count - 10)...]))

        // Without ranges only what is buffered can be reached: a trickled body has not got far.
        var small = fastOptions()
        small.bufferSize = 4096
        small.historySize = 4096
        let plain = HTTPStream(url: s.url("files/\(mp3)?norange=1&trickle=20000"), options: small)
        try plain.open()
        var first = [UInt8](repeating: 0, count: 1000)
        var got = 0
        while got < 1000 {
            got += try first.withMutableBytes { raw throws(AudioError) in try plain.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[got...])).count }
        }
        XCTAssertThrowsError(try plain.seek(to: 40000)) { XCTAssertEqual(($0 as? AudioError)?.code, .rangeNotSupported) }
        try plain.seek(to: 10)
        XCTAssertTrue(try readAll(plain).bytes == Array(expected[10...]), "a seek back within the buffer")
    }

    /// With a disk cache the network runs ahead of the reader (the memory keeps only the newest
    /// 8 kB), every byte is read back exact, and a seek into what was received needs no
    /// request, even from a server without ranges.
    func testDiskCacheKeepsWhatArrivedAndServesSeeks() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for query in ["norange=1", "drop=10000"] {
            var o = fastOptions()
            o.bufferSize = 4096
            o.historySize = 4096
            o.diskCachePath = dir + "/cache-\(query.prefix(4))"
            _ = try s.requestLog(clear: true)
            let stream = HTTPStream(url: s.url("files/\(mp3)?\(query)"), options: o)
            try stream.open()
            // Let the whole body arrive before reading: nothing holds the network back.
            let deadline = Date().addingTimeInterval(10)
            while !stream.isComplete && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            XCTAssertTrue(stream.isComplete, query)
            XCTAssertTrue(try readAll(stream, chunk: 3000).bytes == expected, query)
            let requests = try s.requestLog().count
            for offset in [1000, 30000, 0] {
                try stream.seek(to: Int64(offset))
                XCTAssertTrue(try readAll(stream, chunk: 5000).bytes == Array(expected[offset...]), "\(query): seek to \(offset)")
            }
            XCTAssertEqual(try s.requestLog().count, requests, "\(query): the seeks were served from the disk")
            XCTAssertTrue(try readWholeFile(o.diskCachePath!) == expected, query)
        }
    }

    /// A radio stream: the ICY blocks are stripped exactly (the audio is the file, looped),
    /// the titles come in order at their bytes, and the headers are read.
    func testICYStationTitlesAndExactAudio() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let events = Events()
        let titles = "Ёжик в тумане|Guns N' Roses - Don't Cry"
        let query = "metaint=1000&loops=2&titles=\(titles.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&name=Test%20FM&genre=Jazz&br=320"
        for charset in ["utf-8", "cp1251"] {
            let stream = HTTPStream(url: s.url("live/\(mp3)?\(query)&charset=\(charset)"), options: fastOptions())
            stream.onEvent = { events.append($0) }
            let info = try stream.open()
            XCTAssertTrue(stream.isLive)
            XCTAssertEqual(info.icy.name, "Test FM")
            XCTAssertEqual(info.icy.genre, "Jazz")
            XCTAssertEqual(info.icy.bitRate, 320)
            XCTAssertEqual(info.icy.metaInterval, 1000)
            let (bytes, _) = try readAll(stream)
            XCTAssertTrue(bytes == expected + expected, "\(charset): the audio differs from the file looped twice")
        }
        Thread.sleep(forTimeInterval: 0.2)     // events are delivered on the stream's queue
        XCTAssertEqual(events.titles, ["Ёжик в тумане", "Guns N' Roses - Don't Cry", "Ёжик в тумане", "Guns N' Roses - Don't Cry"])
        let offsets = events.all.compactMap { if case .metadata(_, let o) = $0 { o } else { nil } }
        // The server's first block follows audio byte 1000; the second title is in the first
        // block after the loop's end.
        XCTAssertEqual(Array(offsets.prefix(2)), [1000, Int64((expected.count + 999) / 1000 * 1000)])
    }

    /// A SHOUTcast v1 server answers `ICY 200 OK`, which Linux's URLSession refuses: the
    /// plain-HTTP client reads it as HTTP/1.0's 200.
    func testASHOUTcastV1StatusLineIsRead() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        let events = Events()
        let stream = HTTPStream(url: s.url("live/\(mp3)?icyok=1&metaint=5000&loops=1&titles=V1"), options: fastOptions())
        stream.onEvent = { events.append($0) }
        let info = try stream.open()
        XCTAssertEqual(info.statusCode, 200)
        XCTAssertEqual(info.icy.metaInterval, 5000)
        XCTAssertTrue(try readAll(stream).bytes == expected)
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(events.titles, ["V1"])
    }

    /// Without Icy-MetaData the same station sends plain audio, passed through untouched.
    func testAStreamWithoutMetaintIsUntouched() throws {
        let s = try server()
        let expected = try readWholeFile(fixturesDirectory + "/" + mp3)
        var options = fastOptions()
        options.requestsICYMetadata = false
        let stream = HTTPStream(url: s.url("live/\(mp3)?metaint=1000&loops=1"), options: options)
        let info = try stream.open()
        XCTAssertNil(info.icy.metaInterval)
        XCTAssertTrue(try readAll(stream).bytes == expected)
    }

    /// A stream let go without close() is freed, and its endless transfer with it (the socket
    /// client holds it weakly), even while its buffer is full.
    func testAStreamLetGoIsFreed() throws {
        let s = try server()
        var o = fastOptions()
        o.bufferSize = 8192
        var stream: HTTPStream? = HTTPStream(url: s.url("live/\(mp3)?loops=1000000"), options: o)
        weak var weakStream = stream
        try stream?.open()
        var chunk = [UInt8](repeating: 0, count: 1000)
        _ = try chunk.withMutableBytes { raw throws(AudioError) in try stream!.read(into: raw) }
        Thread.sleep(forTimeInterval: 0.3)      // the buffer fills; the transfer waits for room
        stream = nil
        let deadline = Date().addingTimeInterval(5)
        while weakStream != nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertNil(weakStream, "the stream is still alive")
    }

    /// A live stream that drops reconnects from the start and says so: a discontinuity.
    func testALiveStreamReconnectsWithADiscontinuity() throws {
        let s = try server()
        let events = Events()
        let stream = HTTPStream(url: s.url("live/\(mp3)?metaint=4000&drop=20000&loops=100"), options: fastOptions(liveReconnects: true))
        stream.onEvent = { events.append($0) }
        try stream.open()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var total = 0
        var gaps = 0
        while total < 60000 {
            let (n, gap) = try buffer.withMutableBytes { raw throws(AudioError) in try stream.read(into: raw) }
            XCTAssertGreaterThan(n, 0)
            if gap { gaps += 1 }
            total += n
        }
        stream.close()
        XCTAssertGreaterThanOrEqual(gaps, 2)
        XCTAssertTrue(events.all.contains { if case .resumed(_, true) = $0 { true } else { false } })
    }
}

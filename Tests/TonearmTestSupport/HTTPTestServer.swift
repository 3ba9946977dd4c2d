import Foundation
#if canImport(Glibc)
import Glibc
#endif

public enum HTTPTestServerError: Error, CustomStringConvertible {
    case noPython
    case didNotStart(String)
    case requestFailed(String)

    public var description: String {
        switch self {
        case .noPython: "python3 is not on PATH; the HTTP test server needs it (apt-get install python3)"
        case .didNotStart(let why): "the HTTP test server did not start: \(why)"
        case .requestFailed(let why): "a request to the HTTP test server failed: \(why)"
        }
    }
}

/// The local HTTP server of the streaming tests: `Tests/TestServers/http_test_server.py` run
/// by python3, bound to 127.0.0.1 on a free port. Its URL language (ranges, drops, redirects,
/// ICY streams, playlists, the request log) is in `Tests/TestServers/README.md`.
///
/// The server lives as long as this object, or until `stop()`. It also exits by itself when
/// the test process ends, even by a crash (it watches its stdin, which only we hold open).
public final class HTTPTestServer: @unchecked Sendable {
    /// The Python script, found from this file's path like `fixturesDirectory`.
    public static let scriptPath: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)  // TonearmTestSupport/HTTPTestServer.swift
        return parts.joined(separator: "/") + "/TestServers/http_test_server.py"
    }()

    /// The port on 127.0.0.1.
    public let port: Int

    private let process: Process
    private let stdin: Pipe
    private let stdout: Pipe
    private let lock = NSLock()
    private var stopped = false

    /// Starts a server that serves `root` (default: `Tests/Fixtures`) under `/files/` and
    /// `/live/`, and waits up to 10 s for it to say its port.
    /// The certificate and key `.ci/run` makes for 127.0.0.1 and adds to the system's trusted
    /// certificates (TONEARM_TLS_CERT, TONEARM_TLS_KEY), when it did.
    public static var tlsFiles: (cert: String, key: String)? {
        let env = ProcessInfo.processInfo.environment
        guard let cert = env["TONEARM_TLS_CERT"], let key = env["TONEARM_TLS_KEY"], !cert.isEmpty, !key.isEmpty else { return nil }
        return (cert, key)
    }

    /// True where the environment promises the TLS files (CI, or any run where
    /// `requirementsAreMandatory`): the HTTPS tests fail rather than skip.
    public static var isTLSRequired: Bool {
        ProcessInfo.processInfo.environment["TONEARM_TLS_REQUIRED"] == "1" || requirementsAreMandatory
    }

    /// Starts a server for a suite to share, keeping why it did not start (a `try?` would lose
    /// it): tests take it with `require()`, which skips off CI and fails on CI.
    public static func starting(root: String? = nil, tls: (cert: String, key: String)? = nil) -> Result<HTTPTestServer, any Error> {
        Result { try HTTPTestServer(root: root, tls: tls) }
    }

    /// `https` when the server was started with a certificate.
    public let scheme: String

    public init(root: String? = nil, tls: (cert: String, key: String)? = nil) throws {
        scheme = tls == nil ? "http" : "https"
        guard let python = which("python3") else { throw HTTPTestServerError.noPython }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.scriptPath, "--port", "0", "--exit-on-stdin-eof"] + (root.map { ["--root", $0] } ?? [])
            + (tls.map { ["--tls", $0.cert, $0.key] } ?? [])
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        // stderr goes where the tests' goes: the server is silent unless something breaks.
        do {
            try process.run()
        } catch {
            throw HTTPTestServerError.didNotStart("\(python) \(Self.scriptPath) could not be run: \(error)")
        }
        self.process = process
        self.stdin = stdin
        self.stdout = stdout
        let port: Int?
        do {
            port = try Self.readPort(from: stdout.fileHandleForReading.fileDescriptor, seconds: 10)
        } catch {
            process.terminate()
            process.waitUntilExit()
            throw error
        }
        guard let port else {  // it ended before printing its port
            process.waitUntilExit()
            throw HTTPTestServerError.didNotStart("python3 \(Self.scriptPath) exited with status \(process.terminationStatus) "
                                                  + "before printing its port (its stderr says why)")
        }
        self.port = port
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>/<pathAndQuery>` (a leading `/` is optional).
    public func url(_ pathAndQuery: String) -> String {
        "\(scheme)://127.0.0.1:\(port)/" + (pathAndQuery.hasPrefix("/") ? String(pathAndQuery.dropFirst()) : pathAndQuery)
    }

    /// A playlist under the root through the `/hls/` route, which rewrites it: `parameters`
    /// are the route's (`live`, `window`, `speed`, `seq`, `endafter`, `stall`, `missing`,
    /// `fail`, `slow`, `slowfrom`, `slowvariant`, `badkey`; Tests/TestServers/README.md), in
    /// the order of their names, so that the same call gives the same URL, and with it the same
    /// live clock and fault counters on the server.
    ///
    /// ```swift
    /// server.hlsURL("hls/ts-64k/index.m3u8", ["live": "1", "window": "3", "speed": "10"])
    /// // http://127.0.0.1:<port>/hls/hls/ts-64k/index.m3u8?live=1&speed=10&window=3
    /// ```
    public func hlsURL(_ playlist: String, _ parameters: [String: String] = [:]) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?")
        let query = parameters.sorted { $0.key < $1.key }.map { key, value in
            key + "=" + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)
        }
        let path = playlist.hasPrefix("/") ? String(playlist.dropFirst()) : playlist
        return url("hls/" + path + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
    }

    /// The requests the server has received so far, in order (requests for `/log` excepted):
    /// each has `method` and `path` (with its query, as sent) and, when the request had them,
    /// `Range`, `Icy-MetaData` and `User-Agent`. `clear` empties the log after reading it.
    public func requestLog(clear: Bool = false) throws -> [[String: String]] {
        guard scheme == "http" else { throw HTTPTestServerError.requestFailed("the log is read over plain HTTP only") }
        let (status, body) = try Self.get(port: port, clear ? "/log?clear=1" : "/log", timeout: 10)
        guard status == 200 else { throw HTTPTestServerError.requestFailed("/log answered \(status)") }
        guard let entries = try? JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]] else {
            throw HTTPTestServerError.requestFailed("/log did not answer a JSON array of objects")
        }
        return entries.map { $0.compactMapValues { $0 as? String } }
    }

    /// Stops the server and waits for it to exit. Calling it again does nothing.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        if process.isRunning { process.terminate() }
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        try? stdout.fileHandleForReading.close()
    }

    /// `count` bytes of the server's garbage stream from absolute position `offset`: what
    /// `/garbage?size=N` serves from 0, and what `garbage=OFFSET` puts in place of a file's
    /// bytes from OFFSET on. Byte p is byte p % 32 of SHA-256("tonearm-garbage" followed by
    /// p / 32 as 8 bytes little-endian).
    public static func garbage(offset: Int, count: Int) -> [UInt8] {
        guard count > 0, offset >= 0 else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var block = offset / 32
        var skip = offset % 32
        while out.count < count {
            var seed = Array("tonearm-garbage".utf8)
            for i in 0..<8 { seed.append(UInt8(truncatingIfNeeded: UInt64(block) >> (8 * UInt64(i)))) }
            let digest = SHA256.digest(seed)
            out += digest[skip..<min(32, skip + count - out.count)]
            block += 1
            skip = 0
        }
        return out
    }

    // MARK: - Plumbing

    /// Reads `PORT <n>\n` from the server's stdout, giving up after `seconds`; nil when
    /// stdout closes first (the server exited).
    private static func readPort(from fd: Int32, seconds: Double) throws -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw HTTPTestServerError.didNotStart("no PORT line within \(Int(seconds)) s") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(left, 1) * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            line += buffer[0..<n]
            guard line.count < 1000 else { break }
        }
        let text = String(decoding: line.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)), port > 0, port < 65536 else {
            throw HTTPTestServerError.didNotStart("it printed \(text.debugDescription) instead of PORT <n>")
        }
        return port
    }

    /// A GET with the harnesses' raw client (``RawHTTPConnection``; each read times out after
    /// `timeout` s): the status code and the body, read until the server closes.
    private static func get(port: Int, _ target: String, timeout: Int) throws -> (Int, [UInt8]) {
        let connection = try RawHTTPConnection(port: port, path: target, timeout: Double(timeout))
        defer { connection.close() }
        return (connection.status, try connection.readToEnd())
    }
}

extension Result where Success == HTTPTestServer {
    /// The server that started; a server that did not start skips the test off CI and fails it
    /// on CI (`skipOrFail`), with the reason it gave.
    public func require(file: StaticString = #filePath, line: UInt = #line) throws -> HTTPTestServer {
        switch self {
        case .success(let server): return server
        case .failure(let error): throw skipOrFail("the test HTTP server did not start: \(error)", file: file, line: line)
        }
    }
}

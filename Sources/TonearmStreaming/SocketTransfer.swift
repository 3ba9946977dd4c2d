#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import TonearmCore

/// One transfer in progress: a URLSession task or a ``SocketTransfer``.
protocol HTTPTransfer: AnyObject {
    func cancel()
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
extension URLSessionTask: HTTPTransfer {}

/// What a transfer reports to its stream, on the transfer's thread.
protocol HTTPTransferDelegate: AnyObject, Sendable {
    /// The response head; false cancels the transfer.
    func transfer(_ t: HTTPTransfer, didReceive response: HTTPResponseInfo) -> Bool
    /// Body bytes; may block (back-pressure).
    func transfer(_ t: HTTPTransfer, didReceive data: UnsafeRawBufferPointer)
    /// False while the reader is a buffer behind: the socket client does not read then.
    var transferHasRoom: Bool { get }
    /// The end: nil when the body ended as its framing said.
    func transfer(_ t: HTTPTransfer, didCompleteWith error: AudioError?)
}

/// An HTTP GET over a socket of its own, for `http:` URLs, and for `https:` ones through a
/// ``TLSSession`` (the system's OpenSSL, loaded at run time).
///
/// Linux's URLSession (through libcurl) refuses what radio servers send: SHOUTcast's
/// `ICY 200 OK` status line (as HTTP/0.9), and Icecast 2.4's `icy-name:value` headers without
/// a space ("Failed writing header"). This client reads both, and HTTP/1.0 and 1.1 bodies with
/// a length, chunked, or ending with the connection; it follows up to 10 redirects, from one
/// scheme to the other too. Without OpenSSL, `https:` stays with URLSession.
final class SocketTransfer: HTTPTransfer, @unchecked Sendable {
    static let maximumRedirects = 10
    static let maximumHeadBytes = 64 << 10

    private let lock = NSLock()
    private weak var delegate: HTTPTransferDelegate?
    private var cancelled = false
    private var fd: Int32 = -1

    func cancel() {
        lock.withLock {
            cancelled = true
            if fd >= 0 { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private var isCancelled: Bool { lock.withLock { cancelled } }

    /// Called before each read of the socket: true to stop (cancelled, or the stream is gone);
    /// while the stream's buffer is full it waits here, holding no reference to the stream,
    /// and the server is held back by TCP.
    private func shouldStop() -> Bool {
        while true {
            if isCancelled { return true }
            guard let room = delegate?.transferHasRoom else { return true }
            if room { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Starts the transfer on a thread of its own. The delegate is held weakly: a stream
    /// that is let go ends its transfer (its deinit cancels it), and a transfer whose
    /// delegate is gone stops at its next callback.
    func start(url: String, headers: [(String, String)], timeout: Double, delegate: HTTPTransferDelegate) {
        self.delegate = delegate
        let thread = Thread { [self] in
            let error = run(url: url, headers: headers, timeout: timeout)
            if !isCancelled { self.delegate?.transfer(self, didCompleteWith: error) }
            closeSocket()
        }
        thread.name = "tonearm.http"
        thread.start()
    }

    private func closeSocket() {
        lock.withLock {
            if fd >= 0 { _ = close(fd); fd = -1 }
        }
    }

    private func run(url: String, headers: [(String, String)], timeout: Double) -> AudioError? {
        do throws(AudioError) {
            var (head, reader, final) = try requestFollowingRedirects(url, headers: headers, timeout: timeout)
            let info = HTTPResponseInfo(statusCode: head.status, url: final, headers: head.headers)
            guard delegate?.transfer(self, didReceive: info) == true else { return nil }
            try reader.readBody(head: head, timeout: timeout, cancelled: { [self] in shouldStop() }) { bytes in
                self.delegate?.transfer(self, didReceive: bytes)
            }
            return nil
        } catch {
            return isCancelled ? nil : error
        }
    }

    /// A synchronous GET (for Range fetches): the response and its whole body, at most `limit` bytes.
    static func get(_ url: String, headers: [(String, String)], timeout: Double, limit: Int) throws(AudioError)
        -> (HTTPResponseInfo, [UInt8])
    {
        let transfer = SocketTransfer()
        defer { transfer.closeSocket() }
        var (head, reader, final) = try transfer.requestFollowingRedirects(url, headers: headers, timeout: timeout)
        var body: [UInt8] = []
        try reader.readBody(head: head, timeout: timeout, cancelled: { body.count > limit }) { body.append(contentsOf: $0) }
        return (HTTPResponseInfo(statusCode: head.status, url: final, headers: head.headers), Array(body.prefix(limit)))
    }

    /// Sends the request, following up to ``maximumRedirects`` redirects: the head, its reader
    /// and the URL that answered.
    private func requestFollowingRedirects(_ start: String, headers: [(String, String)], timeout: Double) throws(AudioError)
        -> (Head, Reader, String)
    {
        var url = start
        for _ in 0...Self.maximumRedirects {
            let (head, reader) = try request(url, headers: headers, timeout: timeout)
            guard (300..<400).contains(head.status), head.status != 304, let location = head.headers["location"] else {
                return (head, reader, url)
            }
            closeSocket()
            url = Playlist.resolve(location, against: url)
        }
        throw AudioError(.httpStatus, "\(start): more than \(Self.maximumRedirects) redirects")
    }

    // MARK: The exchange

    struct Head {
        var status: Int
        var headers: [String: String]
    }

    /// Connects, sends the request and reads the response head.
    private func request(_ url: String, headers: [(String, String)], timeout: Double) throws(AudioError) -> (Head, Reader) {
        guard let parts = URL(string: url), let host = parts.host, let scheme = parts.scheme?.lowercased(),
              scheme == "http" || scheme == "https" else {
            throw AudioError(.illegalOperation, "\(url) is not an http or https URL")
        }
        let secure = scheme == "https"
        let port = parts.port ?? (secure ? 443 : 80)
        let socket = try connect(host: host, port: port, timeout: timeout)
        lock.withLock { fd = socket }
        if isCancelled { throw AudioError(.network, "cancelled") }
        var reader = Reader(fd: socket)
        if secure { try reader.startTLS(host: host, timeout: timeout, cancelled: { [self] in isCancelled }) }
        var path = parts.path.isEmpty ? "/" : URLParts.percentEncodedPath(of: url)
        if let query = parts.query { path += "?" + query }
        var text = "GET \(path) HTTP/1.1\r\nHost: \(host)\(parts.port.map { ":\($0)" } ?? "")\r\nAccept: */*\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        try reader.send(Array(text.utf8), timeout: timeout)
        let head = try reader.readHead(timeout: timeout, url: url)
        return (head, reader)
    }

    private func connect(host: String, port: Int, timeout: Double) throws(AudioError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw AudioError(.network, "cannot find \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let a = entry {
            entry = a.pointee.ai_next
            let s = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            guard s >= 0 else { continue }
            let flags = fcntl(s, F_GETFL, 0)
            _ = fcntl(s, F_SETFL, flags | O_NONBLOCK)
            var ok = Glibc_connect(s, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0
            if !ok && errno == EINPROGRESS {
                var p = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
                if poll(&p, 1, Int32(timeout * 1000)) == 1 {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len)
                    ok = err == 0
                    if !ok { lastError = String(cString: strerror(err)) }
                } else {
                    lastError = "no answer within \(Int(timeout)) s"
                }
            } else if !ok {
                lastError = String(cString: strerror(errno))
            }
            if ok { return s }
            _ = close(s)
        }
        throw AudioError(.network, "cannot connect to \(host):\(port): \(lastError)")
    }

    /// Reads a socket through a buffer, waiting with poll so that a cancel or a timeout ends it;
    /// after ``startTLS(host:timeout:cancelled:)`` the bytes pass through a ``TLSSession``.
    struct Reader {
        let fd: Int32
        private(set) var tls: TLSSession?
        var pending: [UInt8] = []
        private var scratch = [UInt8](repeating: 0, count: 65536)
        /// Encrypted bytes as they came from the socket (TLS only).
        private var wire: [UInt8] = []

        init(fd: Int32) { self.fd = fd }

        /// Sends `bytes` (encrypted, over TLS).
        func send(_ bytes: [UInt8], timeout: Double) throws(AudioError) {
            guard let tls else { return try sendRaw(bytes, timeout: timeout) }
            try bytes.withBytes { (raw) throws(AudioError) in try tls.write(raw) }
            try sendRaw(tls.takeOutput(), timeout: timeout)
        }

        private func sendRaw(_ bytes: [UInt8], timeout: Double) throws(AudioError) {
            var sent = 0
            while sent < bytes.count {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&p, 1, Int32(timeout * 1000)) == 1 else { throw AudioError(.timedOut, "the request could not be sent") }
                let n = bytes[sent...].withUnsafeBytes { Glibc_send(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { throw AudioError(.network, "sending the request failed: \(String(cString: strerror(errno)))") }
                sent += n
            }
        }

        /// Waits for the socket and reads what it has into `buffer`: the count, 0 at the end of
        /// the stream. Gives up at `deadline`, looking at `cancelled` every quarter second.
        private static func receive(from fd: Int32, into buffer: inout [UInt8], deadline: Date, timeout: Double,
                                    cancelled: () -> Bool) throws(AudioError) -> Int
        {
            if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 65536) }
            while true {
                if cancelled() { throw AudioError(.network, "cancelled") }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, 250)
                if r == 0 {
                    if Date() >= deadline { throw AudioError(.timedOut, "no data for \(Int(timeout)) s") }
                    continue
                }
                if r < 0 && errno == EINTR { continue }
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    throw AudioError(.network, "the connection failed: \(String(cString: strerror(errno)))")
                }
                return n
            }
        }

        /// Up to 64 KiB more bytes into `pending`; 0 at the end of the stream. Waits at most
        /// `timeout` seconds in all, looking at `cancelled` every quarter second.
        mutating func fill(timeout: Double, cancelled: () -> Bool = { false }) throws(AudioError) -> Int {
            let deadline = Date().addingTimeInterval(timeout)
            guard let tls else {
                let n = try Self.receive(from: fd, into: &scratch, deadline: deadline, timeout: timeout, cancelled: cancelled)
                pending.append(contentsOf: scratch[..<n])
                return n
            }
            while true {
                switch try scratch.withMutableBytes({ (raw) throws(AudioError) in try tls.read(into: raw) }) {
                case .done(let n):
                    pending.append(contentsOf: scratch[..<n])
                    return n
                case .closed:
                    return 0
                case .needsInput:
                    try sendRaw(tls.takeOutput(), timeout: timeout)
                    // A server that closes without TLS's close_notify (many do) ends the stream too.
                    let n = try Self.receive(from: fd, into: &wire, deadline: deadline, timeout: timeout, cancelled: cancelled)
                    if n == 0 { return 0 }
                    wire.withUnsafeBytes { tls.receive(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                }
            }
        }

        /// The TLS handshake, checking the server's certificate against `host`; the reader then
        /// reads and sends through the session.
        mutating func startTLS(host: String, timeout: Double, cancelled: () -> Bool) throws(AudioError) {
            let session = try TLSSession(host: host)
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let step = try session.handshake()
                try sendRaw(session.takeOutput(), timeout: timeout)
                if case .done = step { break }
                let n = try Self.receive(from: fd, into: &wire, deadline: deadline, timeout: timeout, cancelled: cancelled)
                guard n > 0 else { throw AudioError(.network, "\(host) closed the connection during the TLS handshake") }
                wire.withUnsafeBytes { session.receive(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            tls = session
        }

        /// The status line and headers. `ICY 200 OK` counts as HTTP/1.0's 200.
        mutating func readHead(timeout: Double, url: String) throws(AudioError) -> Head {
            var end: (Int, Int)?
            while end == nil {
                end = Self.headEnd(pending)
                if end != nil { break }
                guard pending.count < SocketTransfer.maximumHeadBytes else {
                    throw AudioError(.httpStatus, "\(url) sent more than \(SocketTransfer.maximumHeadBytes) bytes of headers")
                }
                if try fill(timeout: timeout) == 0 {
                    throw AudioError(.network, "\(url) closed the connection before answering")
                }
            }
            let (headEnd, bodyStart) = end!
            let text = decodeText(pending[..<headEnd], fallback: .latin1)
            pending.removeFirst(bodyStart)
            var lines = text.split(omittingEmptySubsequences: true) { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }.map(String.init)
            guard !lines.isEmpty else { throw AudioError(.httpStatus, "\(url) sent an empty answer") }
            let statusLine = lines.removeFirst()
            let words = statusLine.split(separator: " ", maxSplits: 2)
            guard words.count >= 2, words[0].hasPrefix("HTTP/") || words[0] == "ICY", let status = Int(words[1]) else {
                throw AudioError(.httpStatus, "\(url) did not answer with HTTP: \(statusLine.prefix(80))")
            }
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingSpaces.lowercased()
                let value = line[line.index(after: colon)...].trimmingSpaces
                guard !name.isEmpty else { continue }
                headers[name] = headers[name].map { $0 + ", " + value } ?? value
            }
            return Head(status: status, headers: headers)
        }

        /// Where the head ends (CRLFCRLF or LFLF) and the body begins.
        static func headEnd(_ bytes: [UInt8]) -> (Int, Int)? {
            var i = 0
            while i + 1 < bytes.count {
                if bytes[i] == 0x0A {
                    if bytes[i + 1] == 0x0A { return (i, i + 2) }
                    if bytes[i + 1] == 0x0D, i + 2 < bytes.count, bytes[i + 2] == 0x0A { return (i, i + 3) }
                }
                i += 1
            }
            return nil
        }

        /// Hands the body over as it arrives: to Content-Length, chunk by chunk, or to the close.
        mutating func readBody(head: Head, timeout: Double, cancelled: () -> Bool,
                               deliver: (UnsafeRawBufferPointer) -> Void) throws(AudioError)
        {
            if head.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
                try readChunked(timeout: timeout, cancelled: cancelled, deliver: deliver)
                return
            }
            var left = head.headers["content-length"].flatMap { Int64($0.trimmingSpaces) }
            while true {
                if !pending.isEmpty {
                    let n = left.map { Int(min(Int64(pending.count), $0)) } ?? pending.count
                    pending.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                    pending.removeAll(keepingCapacity: true)
                    if let l = left { left = l - Int64(n) }
                }
                if let l = left, l <= 0 { return }
                if try fill(timeout: timeout, cancelled: cancelled) == 0 {
                    if let l = left, l > 0 { throw AudioError(.network, "the connection closed \(l) bytes before the end of the body") }
                    return
                }
            }
        }

        private mutating func readChunked(timeout: Double, cancelled: () -> Bool,
                                          deliver: (UnsafeRawBufferPointer) -> Void) throws(AudioError)
        {
            while true {
                // The size line.
                var lineEnd = pending.firstIndex(of: 0x0A)
                while lineEnd == nil {
                    guard pending.count < 4096 else { throw AudioError(.httpStatus, "a chunk size line is too long") }
                    if try fill(timeout: timeout, cancelled: cancelled) == 0 { throw AudioError(.network, "the connection closed inside a chunked body") }
                    lineEnd = pending.firstIndex(of: 0x0A)
                }
                let line = decodeText(pending[..<lineEnd!], fallback: .latin1).trimmingSpaces
                pending.removeFirst(lineEnd! + 1)
                let sizeText = line.split(separator: ";").first.map { String($0).trimmingSpaces } ?? ""
                guard let size = Int(sizeText, radix: 16), size >= 0 else { throw AudioError(.httpStatus, "a bad chunk size '\(line.prefix(20))'") }
                if size == 0 { return }
                var left = size
                while left > 0 {
                    if pending.isEmpty, try fill(timeout: timeout, cancelled: cancelled) == 0 {
                        throw AudioError(.network, "the connection closed inside a chunk")
                    }
                    let n = min(left, pending.count)
                    pending.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                    pending.removeFirst(n)
                    left -= n
                }
                // The CRLF after the chunk.
                while pending.count < 2 {
                    if try fill(timeout: timeout, cancelled: cancelled) == 0 { return }
                }
                pending.removeFirst(pending[0] == 0x0D ? 2 : 1)
            }
        }
    }
}

extension URLParts {
    /// The path of a URL as written (percent escapes kept), without query or fragment.
    static func percentEncodedPath(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        var path = rest[slash...]
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        return String(path)
    }
}

#if canImport(Darwin)
private func Glibc_connect(_ fd: Int32, _ a: UnsafePointer<sockaddr>!, _ n: socklen_t) -> Int32 { Darwin.connect(fd, a, n) }
private func Glibc_send(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int { Darwin.send(fd, p, n, 0) }
#else
private func Glibc_connect(_ fd: Int32, _ a: UnsafePointer<sockaddr>!, _ n: socklen_t) -> Int32 { Glibc.connect(fd, a, n) }
private func Glibc_send(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int { Glibc.send(fd, p, n, Int32(MSG_NOSIGNAL)) }
#endif

/// Reads a whole HTTP response held in memory with the socket client's own reader (status
/// line, headers, and a body with a length, chunked or to the end), as it would arrive from a
/// server: for tests and fuzzing, and for responses captured to a file.
public enum HTTPResponseParser {
    /// The most bytes parsed (they pass through a socket pair's buffer).
    public static let maximumInput = 64 << 10

    public static func parse(_ bytes: [UInt8], url: String = "http://localhost/") throws(AudioError) -> (HTTPResponseInfo, body: [UInt8]) {
        guard bytes.count <= maximumInput else { throw AudioError(.invalidInputSize, "more than \(maximumInput) bytes") }
        var fds: [Int32] = [-1, -1]
        #if canImport(Darwin)
        let kind = SOCK_STREAM
        #else
        let kind = Int32(SOCK_STREAM.rawValue)
        #endif
        guard socketpair(AF_UNIX, kind, 0, &fds) == 0 else { throw AudioError(.network, "no socket pair") }
        defer { _ = close(fds[0]); _ = close(fds[1]) }
        var size = Int32(maximumInput * 2)
        _ = setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var reader = SocketTransfer.Reader(fd: fds[0])
        try SocketTransfer.Reader(fd: fds[1]).send(bytes, timeout: 1)
        _ = shutdown(fds[1], Int32(SHUT_WR))
        let head = try reader.readHead(timeout: 1, url: url)
        var body: [UInt8] = []
        try reader.readBody(head: head, timeout: 1, cancelled: { false }) { body.append(contentsOf: $0) }
        return (HTTPResponseInfo(statusCode: head.status, url: url, headers: head.headers), body)
    }
}

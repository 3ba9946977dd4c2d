import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Raw TCP on loopback for the test harnesses: a plain HTTP client that shares no code with
// Tonearm's own (so it can judge it), a free port, a peer that never answers.

public enum RawHTTPConnectionError: Error, CustomStringConvertible {
    case failed(String)
    public var description: String {
        switch self {
        case .failed(let why): "a raw HTTP request failed: \(why)"
        }
    }
}

/// A plain HTTP/1.0 client on a TCP socket: sends one GET, reads the response head, then
/// the body as it comes. Every read waits at most `timeout` seconds, so a stalled server
/// fails a test instead of hanging it.
public final class RawHTTPConnection {
    /// The status code of the response.
    public private(set) var status = 0
    /// The response's header lines, in order, as sent.
    public private(set) var headers: [(name: String, value: String)] = []
    private var fd: Int32
    private var pending: [UInt8] = []

    public init(port: Int, path: String, headers extra: [(String, String)] = [], timeout: Double = 20) throws {
        fd = try tcpConnect(port: port, timeout: timeout)
        var request = "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: TonearmTests/1.0\r\n"
        for (name, value) in extra { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw RawHTTPConnectionError.failed("send: errno \(errno)") }
            sent += n
        }
        // The head ends at the first empty line; what follows it is body.
        var head: [UInt8] = []
        while true {
            let chunk = try receive(4096)
            guard !chunk.isEmpty else { break }
            head += chunk
            if let end = Self.headEnd(head) {
                pending = Array(head[end...])
                head = Array(head[..<end])
                break
            }
            guard head.count < 65536 else { throw RawHTTPConnectionError.failed("response head over 64 KiB") }
        }
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard let first = lines.first, first.hasPrefix("HTTP/") || first.hasPrefix("ICY") else {
            throw RawHTTPConnectionError.failed("no HTTP response to GET \(path)")
        }
        status = Int(first.split(separator: " ").dropFirst().first ?? "") ?? 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            self.headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
    }

    deinit { close() }

    /// The value of the first header with this name (any case).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The next body bytes (at most `maximum`); empty at the end of the stream.
    public func read(maximum: Int = 4096) throws -> [UInt8] {
        if !pending.isEmpty {
            let n = min(maximum, pending.count)
            defer { pending.removeFirst(n) }
            return Array(pending[..<n])
        }
        return try receive(maximum)
    }

    /// The rest of the body, until the server closes the connection.
    public func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = try read(maximum: 65536)
            if chunk.isEmpty { return all }
            all += chunk
        }
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    private func receive(_ maximum: Int) throws -> [UInt8] {
        guard fd >= 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, maximum, 0) }
            if n >= 0 { return Array(buffer[..<n]) }
            if errno == EINTR { continue }
            let why = errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : "errno \(errno)"
            throw RawHTTPConnectionError.failed("reading from the server: \(why)")
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}

/// A loopback port nothing listens on now: bind to port 0 and read back the one the kernel chose.
public func freeLoopbackPort() throws -> Int {
    let (fd, port) = try boundLoopbackSocket()
    close(fd)
    return port
}

/// A socket listening on a free loopback port that never accepts: a client's connection
/// completes (the kernel answers the TCP handshake) and then hears nothing. Close the
/// descriptor when done.
public func silentLoopbackListener() throws -> (fd: Int32, port: Int) {
    let (fd, port) = try boundLoopbackSocket()
    guard listen(fd, 4) == 0 else {
        close(fd)
        throw RawHTTPConnectionError.failed("listen: errno \(errno)")
    }
    return (fd, port)
}

private func boundLoopbackSocket() throws -> (Int32, Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RawHTTPConnectionError.failed("socket: errno \(errno)") }
    var address = loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else {
        close(fd)
        throw RawHTTPConnectionError.failed("bind: errno \(errno)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

private func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}

/// A TCP connection to 127.0.0.1:`port` whose sends and receives time out after `timeout` s.
func tcpConnect(port: Int, timeout: Double) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RawHTTPConnectionError.failed("socket: errno \(errno)") }
    var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var address = loopback(port: port)
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        let e = errno
        close(fd)
        throw RawHTTPConnectionError.failed("connect to port \(port): errno \(e)")
    }
    return fd
}

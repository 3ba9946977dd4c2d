import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TonearmCore
import TonearmFormats

/// An HTTP or HTTPS resource read progressively, as it arrives: a remote file or an internet
/// radio station.
///
/// The body comes through Tonearm's own HTTP client (``SocketTransfer``: `http:`, and `https:`
/// with the system's OpenSSL) or a `URLSession` data delegate into a bounded buffer, never whole: when
/// the reader falls behind by ``Options/bufferSize`` bytes, the network is not read until it
/// catches up. ICY metadata (`icy-metaint`) is stripped here, so the bytes ``read(into:)``
/// returns are the audio alone, and each block becomes a ``Event/metadata(_:offset:)`` event.
///
/// When the connection drops, the stream reconnects with a growing delay: a file of known length
/// resumes with `Range: bytes=N-` at the exact byte (no byte lost, none repeated); a live stream
/// starts again and the reader sees a discontinuity. After ``Options/maximumReconnects`` attempts
/// in a row without a byte, it fails with `'net!'`.
///
/// ```swift
/// let stream = HTTPStream(url: "http://radio.example/stream")
/// stream.onEvent = { if case .metadata(let m, _) = $0 { print(m.streamTitle ?? "") } }
/// let info = try stream.open()
/// let parser = AudioFileStream(fileTypeHint: info.fileTypeHint, …)
/// var chunk = [UInt8](repeating: 0, count: 16384)
/// while true {
///     let (n, discontinuity) = try chunk.withUnsafeMutableBytes { try stream.read(into: $0) }
///     if n == 0 { break }
///     try parser.parse(chunk[..<n], flags: discontinuity ? .discontinuity : [])
/// }
/// ```
///
/// It is also a ``MediaSource``: where the server serves ranges, `AudioFile(source:)` reads it
/// at any offset, each jump beyond the buffer costing one Range request.
public final class HTTPStream: MediaSource, HTTPTransferDelegate, @unchecked Sendable {
    public struct Options: Sendable {
        /// Bytes read ahead of the reader before the network waits for it.
        public var bufferSize = 1 << 20
        /// Bytes kept behind the reader, so that a short step back needs no new request.
        public var historySize = 256 << 10
        /// A file that keeps every byte of a file of known length as it arrives (ignored for a
        /// live stream). The network is then not held back by the reader, the memory holds only
        /// the newest bytes, and any byte already received is read back from the disk: a seek
        /// into it needs no request, even from a server that serves no ranges.
        public var diskCachePath: String?
        /// Seconds to wait for a server to answer.
        public var connectTimeout = 10.0
        /// Seconds without a byte (while the buffer has room) before the connection counts as
        /// dropped and is made again.
        public var stallTimeout = 15.0
        /// Attempts in a row without progress before giving up; 0 never reconnects (and a
        /// station that closes the connection has ended).
        public var maximumReconnects = 5
        /// The first delay before reconnecting; it doubles with each failed attempt.
        public var reconnectDelay = 0.5
        /// The longest delay between attempts.
        public var maximumReconnectDelay = 8.0
        /// Sends `Icy-MetaData: 1`, so that a radio server interleaves titles.
        public var requestsICYMetadata = true
        /// When a radio station (a response with `icy-` headers and no length) closes the
        /// connection, connect again: it dropped the listener. False, or no reconnects at all,
        /// ends the stream there.
        public var reconnectsWhenLiveStreamCloses = true
        /// The charset tried for ICY text that is not UTF-8.
        public var metadataFallback: LegacyTextEncoding = .automatic
        public var userAgent = "Tonearm/0.7"
        /// More request headers.
        public var headers: [String: String] = [:]
        /// `https:` goes through Tonearm's own client, with TLS from the system's OpenSSL
        /// (`libssl.so.3`, loaded when first needed): it reads what radio servers send, which
        /// Linux's URLSession refuses. True sends `https:` through URLSession instead (its
        /// proxies and TLS settings); without OpenSSL it is used anyway.
        public var usesURLSessionForHTTPS = false
        public init() {}
    }

    public enum Event: Sendable {
        /// A response began: the first, and each one after a reconnect or seek.
        case connected(HTTPResponseInfo)
        /// An ICY metadata block arrived; `offset` is the audio byte it precedes.
        case metadata(ICYMetadata, offset: Int64)
        /// No byte came for ``Options/stallTimeout`` seconds.
        case stalled(offset: Int64)
        /// The connection was lost; attempt `attempt` starts after `delay` seconds.
        case reconnecting(attempt: Int, delay: Double, offset: Int64, reason: AudioError)
        /// Bytes flow again from `offset`; a live stream resumes with a gap (`isDiscontinuity`).
        case resumed(offset: Int64, isDiscontinuity: Bool)
        /// The whole body arrived.
        case ended
        /// The stream gave up.
        case failed(AudioError)
    }

    public let url: String
    public let options: Options
    /// Called on the network's threads. Set it before ``open()`` to see every event; it may be
    /// changed at any time.
    @Synchronized public var onEvent: (@Sendable (Event) -> Void)? = nil

    private let condition = NSCondition()
    private let delegate = SessionDelegate()
    private let session: URLSession
    private let control = DispatchQueue(label: "tonearm.http.control")
    private var watchdog: DispatchSourceTimer?

    // Guarded by `condition`.
    /// Bytes `[bufferStart, bufferStart + buffer.count)` of the body (audio only, for ICY).
    private var buffer: [UInt8] = []
    private var bufferStart: Int64 = 0
    private var readPosition: Int64 = 0
    /// Where the bytes after a reconnect begin on a live stream.
    private var discontinuities: [Int64] = []
    private var task: (any HTTPTransfer)?
    /// The offset the current request asked for; bytes before it in a 200 body are skipped.
    private var requestOffset: Int64 = 0
    private var skipBytes: Int64 = 0
    private var responded = false
    private var demuxer: ICYDemuxer?
    private var first: HTTPResponseInfo?
    private var last: HTTPResponseInfo?
    private var finished = false
    private var failure: AudioError?
    private var attempts = 0
    private var lastProgress = 0.0
    private var stalledReported = false
    private var closed = false
    private var reconnectPending = false
    /// The disk cache, once the first response showed a length.
    private var cache: DiskCache?
    /// ICY blocks not yet taken by ``takeMetadata()``, with the audio byte each precedes.
    private var metadataQueue: [(offset: Int64, metadata: ICYMetadata)] = []
    private static let maximumQueuedMetadata = 256

    public init(url: String, options: Options = Options()) {
        self.url = url
        self.options = options
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = max(options.connectTimeout, options.stallTimeout)
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        delegate.stream = self
    }

    deinit { close() }

    /// Connects and waits for the first response (at most ``Options/connectTimeout`` seconds).
    ///
    /// Throws `'http'` for an error status (404, 500…), `'net!'` when the server cannot be
    /// reached, `'time'` when it does not answer in time.
    @discardableResult
    public func open() throws(AudioError) -> HTTPResponseInfo {
        guard URLParts.isHTTP(url), URL(string: url) != nil else {
            throw AudioError(.illegalOperation, "\(url) is not an http or https URL")
        }
        condition.lock()
        defer { condition.unlock() }
        if let first { return first }
        connect(at: 0)
        startWatchdog()
        let deadline = Date().addingTimeInterval(options.connectTimeout)
        while first == nil && failure == nil && !closed {
            if !condition.wait(until: deadline) {
                if first == nil && failure == nil {
                    fail(AudioError(.timedOut, "\(url) did not answer within \(Self.seconds(options.connectTimeout))"))
                }
            }
        }
        if let first { return first }
        throw failure ?? AudioError(.illegalOperation, "the stream was closed")
    }

    /// The first response, once ``open()`` returned.
    public var response: HTTPResponseInfo? { condition.withLock { first } }

    /// The ICY fields of the first response.
    public var icyHeaders: ICYHeaders? { response?.icy }

    /// The size of the whole body, when the server gave it.
    public var size: Int64? { response?.resourceLength }

    /// True when the server serves byte ranges of a body of known size: seeks are Range requests.
    public var isSeekable: Bool {
        guard let r = response else { return false }
        return r.acceptsRanges && r.resourceLength != nil
    }

    /// A live stream: no length, as internet radio.
    public var isLive: Bool { response.map { $0.resourceLength == nil } ?? false }

    public var mimeType: String? { response?.mimeType }
    public var pathExtension: String? { response?.pathExtension ?? URLParts.pathExtension(of: url) }
    /// The file type from the Content-Type, or failing that the URL's extension.
    public var fileTypeHint: AudioFileTypeID? { response?.fileTypeHint }

    /// The offset of the next byte ``read(into:)`` returns.
    public var position: Int64 { condition.withLock { readPosition } }

    /// Bytes received and not read yet (in memory, or on the disk from here on).
    public var bufferedBytes: Int {
        condition.withLock {
            let memory = readPosition >= bufferStart ? bufferStart + Int64(buffer.count) - readPosition : 0
            let disk = cache?.end(containing: readPosition).map { $0 - readPosition } ?? 0
            return Int(max(0, memory, disk))
        }
    }

    /// True once the whole body arrived (and false while more may come).
    public var isComplete: Bool { condition.withLock { finished && failure == nil } }

    /// Reads the next bytes, waiting until at least one arrives. Returns 0 at the end of the
    /// body. `discontinuity` is true when these bytes do not follow the previous ones (a live
    /// stream that reconnected): pass `.discontinuity` to the parser with them.
    public func read(into out: UnsafeMutableRawBufferPointer) throws(AudioError) -> (count: Int, discontinuity: Bool) {
        while true {
            if let result = try read(into: out, waitingUpTo: 0.5) { return result }
        }
    }

    /// The same, waiting at most `seconds`: nil when nothing arrived by then.
    public func read(into out: UnsafeMutableRawBufferPointer, waitingUpTo seconds: Double) throws(AudioError)
        -> (count: Int, discontinuity: Bool)?
    {
        guard out.count > 0 else { return (0, false) }
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        if first == nil && failure == nil && !closed {
            condition.unlock()
            do { try open() } catch {
                condition.lock()
                throw error
            }
            condition.lock()
        }
        while true {
            if closed { throw AudioError(.illegalOperation, "the stream was closed") }
            let end = bufferStart + Int64(buffer.count)
            if let cache, !(readPosition >= bufferStart && readPosition < end) {
                // Not in memory: from the disk when it is there, else the network goes there.
                if let cachedEnd = cache.end(containing: readPosition) {
                    let n = Int(min(Int64(out.count), cachedEnd - readPosition))
                    let got = try cache.read(at: readPosition, into: UnsafeMutableRawBufferPointer(rebasing: out[..<n]))
                    readPosition += Int64(got)
                    condition.broadcast()
                    return (got, false)
                }
                if let length = first?.resourceLength, readPosition >= length { return (0, false) }
                if readPosition != end || (finished && failure == nil) {
                    restartNetwork(at: readPosition)
                }
            }
            if readPosition < end {
                var discontinuity = false
                if let d = discontinuities.first, d <= readPosition {
                    discontinuities.removeFirst()
                    discontinuity = true
                }
                var n = Int(min(Int64(out.count), end - readPosition))
                if let next = discontinuities.first, next > readPosition { n = min(n, Int(next - readPosition)) }
                let at = Int(readPosition - bufferStart)
                buffer.withUnsafeBytes { src in out.baseAddress!.copyMemory(from: src.baseAddress! + at, byteCount: n) }
                readPosition += Int64(n)
                trimHistory()
                condition.broadcast()
                return (n, discontinuity)
            }
            if finished {
                if let failure { throw failure }
                return (0, false)
            }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// Reads on to the end of the body: at most `limit` bytes ('insz' beyond, as for a playlist
    /// that is not one).
    public func readToEnd(limit: Int) throws(AudioError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let (n, _) = try chunk.withMutableBytes { raw throws(AudioError) in try read(into: raw) }
            if n == 0 { return out }
            guard out.count + n <= limit else { throw AudioError(.invalidInputSize, "\(url) is longer than \(limit) bytes") }
            out += chunk[..<n]
        }
    }

    /// The ICY blocks received since the last call, in order, each with the audio byte it
    /// precedes. A block is here before any byte after it can be read, so a reader that takes
    /// them before each read knows where every title begins (the events may come later).
    public func takeMetadata() -> [(offset: Int64, metadata: ICYMetadata)] {
        condition.withLock {
            defer { metadataQueue.removeAll() }
            return metadataQueue
        }
    }

    /// Moves the reader to `offset`: within the buffer at once, elsewhere with a Range request.
    ///
    /// Throws `'rng?'` when the server does not serve ranges (or the stream is live) and the
    /// offset is not buffered.
    public func seek(to offset: Int64) throws(AudioError) {
        guard offset >= 0 else { throw AudioError(.position, "negative offset \(offset)") }
        condition.lock()
        defer { condition.unlock() }
        let inMemory = offset >= bufferStart && offset <= bufferStart + Int64(buffer.count)
        if (inMemory || cache?.end(containing: offset) != nil) && !(finished && failure != nil) {
            readPosition = offset
            discontinuities.removeAll { $0 <= offset }
            condition.broadcast()
            return
        }
        guard let info = first, info.acceptsRanges, info.resourceLength != nil else {
            throw AudioError(.rangeNotSupported,
                             "the server does not serve byte ranges, so the stream cannot move to byte \(offset) (bytes \(bufferStart) to \(bufferStart + Int64(buffer.count)) are buffered)")
        }
        restartNetwork(at: offset)
        condition.broadcast()
    }

    /// Drops the connection and the memory buffer, and reads on from `offset` with a new
    /// request. Caller holds the lock.
    private func restartNetwork(at offset: Int64) {
        guard let length = first?.resourceLength else { return }
        task?.cancel()
        task = nil
        buffer.removeAll(keepingCapacity: true)
        metadataQueue.removeAll()
        bufferStart = min(offset, length)
        readPosition = bufferStart
        discontinuities.removeAll()
        failure = nil
        attempts = 0
        finished = bufferStart >= length
        if !finished { connect(at: bufferStart) }
    }

    /// Reads `count` bytes at `offset` with a request of their own, leaving the stream where it
    /// is: the ``AudioFileStream/byteRangeFetcher`` that reads an MP4's `moov` at the end.
    public func fetch(offset: Int64, count: Int) throws(AudioError) -> [UInt8] {
        guard count > 0 else { return [] }
        guard offset >= 0, count <= Self.maximumFetch else {
            throw AudioError(.invalidInputSize, "a fetch of \(count) bytes at \(offset) is out of bounds (at most \(Self.maximumFetch))")
        }
        let wanted = condition.withLock { () -> [UInt8]? in
            guard offset >= bufferStart, offset + Int64(count) <= bufferStart + Int64(buffer.count) else { return nil }
            let at = Int(offset - bufferStart)
            return Array(buffer[at..<at + count])
        }
        if let wanted { return wanted }
        if let length = size, offset >= length { return [] }
        let target = response?.url ?? url
        let headers = requestHeaders(offset: offset, last: offset + Int64(count) - 1, icy: false)
        let info: HTTPResponseInfo
        let body: [UInt8]
        (info, body) = try Self.get(target, headers: headers, options: options, limit: count,
                                    what: "a Range request for bytes \(offset)-\(offset + Int64(count) - 1)")
        if info.statusCode == 416 { return [] }
        guard info.statusCode == 206, let range = info.contentRange, range.first == offset else {
            throw AudioError(info.statusCode >= 400 ? .httpStatus : .rangeNotSupported,
                             "the server answered \(info.statusCode) to a Range request for bytes \(offset)-\(offset + Int64(count) - 1)")
        }
        return Array(body.prefix(count))
    }

    /// GETs a whole resource (at most `limit` bytes of its body), or a byte range of it when
    /// `range` is given, with a request of its own: an HLS playlist, key or segment.
    /// Throws 'http' for an error status.
    package static func download(_ url: String, range: (offset: Int64, length: Int64)? = nil, options: Options,
                                 limit: Int) throws(AudioError) -> (info: HTTPResponseInfo, body: [UInt8])
    {
        guard URLParts.isHTTP(url), URL(string: url) != nil else {
            throw AudioError(.illegalOperation, "\(url) is not an http or https URL")
        }
        var headers = [("User-Agent", options.userAgent)]
        if let range { headers.append(("Range", "bytes=\(range.offset)-\(range.offset + max(1, range.length) - 1)")) }
        for (name, value) in options.headers.sorted(by: { $0.key < $1.key }) { headers.append((name, value)) }
        let (info, body) = try get(url, headers: headers, options: options, limit: limit + 1, what: "GET \(url)")
        guard (200..<300).contains(info.statusCode) else {
            throw AudioError(.httpStatus, "\(url) answered \(info.statusCode)")
        }
        guard body.count <= limit else { throw AudioError(.invalidInputSize, "\(url) is longer than \(limit) bytes") }
        if let range, info.statusCode == 200 {
            // The server ignored the Range: cut it out of the whole body.
            let start = Int(clamping: range.offset), end = Int(clamping: range.offset + range.length)
            guard start < body.count else { return (info, []) }
            return (info, Array(body[start..<min(end, body.count)]))
        }
        return (info, body)
    }

    /// One synchronous GET with Tonearm's client or URLSession, as ``usesSocketClient(for:)``
    /// chooses: the response and at most `limit` bytes of its body.
    private static func get(_ target: String, headers: [(String, String)], options: Options, limit: Int, what: String)
        throws(AudioError) -> (HTTPResponseInfo, [UInt8])
    {
        if usesSocketClient(for: target, options: options) {
            return try SocketTransfer.get(target, headers: headers, timeout: options.stallTimeout, limit: limit)
        }
        guard let targetURL = URL(string: target) else { throw AudioError(.illegalOperation, "bad URL \(target)") }
        var request = URLRequest(url: targetURL)
        request.timeoutInterval = options.stallTimeout
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let result = FetchResult()
        let done = DispatchSemaphore(value: 0)
        // A session of its own: the stream's session delivers on a queue that back-pressure
        // holds while the reader is a buffer behind, and the reader may be waiting for this.
        let fetchSession = URLSession(configuration: .ephemeral)
        defer { fetchSession.finishTasksAndInvalidate() }
        let fetchTask = fetchSession.dataTask(with: request) { data, response, error in
            result.set(data: data, response: response as? HTTPURLResponse, error: error)
            done.signal()
        }
        fetchTask.resume()
        if done.wait(timeout: .now() + options.connectTimeout + options.stallTimeout) == .timedOut {
            fetchTask.cancel()
            throw AudioError(.timedOut, "\(what) got no answer")
        }
        let (data, http, error) = result.get()
        if let error { throw AudioError(.network, "\(what) failed: \(error.localizedDescription)") }
        guard let http, let data else { throw AudioError(.network, "\(what) got no response") }
        return (Self.info(http, fallbackURL: target), [UInt8](data.prefix(limit)))
    }

    /// The largest ``fetch(offset:count:)``.
    public static let maximumFetch = 64 << 20

    /// Stops the transfer and releases the connection. Reads after it throw.
    public func close() {
        condition.lock()
        let wasClosed = closed
        closed = true
        task?.cancel()
        task = nil
        watchdog?.cancel()
        watchdog = nil
        condition.broadcast()
        condition.unlock()
        if !wasClosed { session.invalidateAndCancel() }
    }

    // MARK: MediaSource

    public func read(at offset: Int64, into out: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        if condition.withLock({ readPosition }) != offset { try seek(to: offset) }
        var total = 0
        while total < out.count {
            let (n, _) = try read(into: UnsafeMutableRawBufferPointer(rebasing: out[total...]))
            if n == 0 { break }
            total += n
        }
        return total
    }

    // MARK: Connections (caller holds the condition's lock)

    private func connect(at offset: Int64) {
        let target = last?.url ?? url
        guard !closed else { return }
        let live = first != nil && first?.resourceLength == nil
        let ranged = !live && offset > 0 && first?.acceptsRanges != false
        let headers = requestHeaders(offset: ranged ? offset : nil, last: nil, icy: options.requestsICYMetadata)
        requestOffset = offset
        skipBytes = live ? 0 : offset        // until a 206 says the range was honoured
        responded = false
        demuxer = nil
        lastProgress = Self.now()
        stalledReported = false
        if usesSocketClient(for: target) {
            // Radio servers answer in ways Linux's URLSession refuses (see SocketTransfer).
            let transfer = SocketTransfer()
            task = transfer
            transfer.start(url: target, headers: headers, timeout: options.connectTimeout, delegate: self)
        } else if let targetURL = URL(string: target) {
            var request = URLRequest(url: targetURL)
            request.timeoutInterval = options.connectTimeout
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let newTask = session.dataTask(with: request)
            task = newTask
            newTask.resume()
        } else {
            fail(AudioError(.illegalOperation, "bad URL \(target)"))
        }
    }

    /// Tonearm's own client for `http:`, and for `https:` unless URLSession is asked for or
    /// OpenSSL is missing; URLSession when the environment names a proxy for the URL (it uses
    /// the proxy, Tonearm's client would not).
    private func usesSocketClient(for url: String) -> Bool { Self.usesSocketClient(for: url, options: options) }

    private static func usesSocketClient(for url: String, options: Options) -> Bool {
        guard environmentProxy(for: url) == nil else { return false }
        return URLParts.isPlainHTTP(url) || (!options.usesURLSessionForHTTPS && OpenSSL.isAvailable)
    }

    /// The proxy the environment names for `url`, as curl reads it: `http_proxy` for `http:`
    /// (lower case only), `https_proxy` or `HTTPS_PROXY` for `https:`, else `all_proxy` or
    /// `ALL_PROXY`; none when `no_proxy` (or `NO_PROXY`) lists the host, a domain it is in, or
    /// `*`. Such a URL is read through URLSession, which uses the proxy.
    public static func environmentProxy(for url: String,
                                        environment: [String: String] = ProcessInfo.processInfo.environment) -> String?
    {
        guard let parts = URL(string: url), let scheme = parts.scheme?.lowercased(),
              let host = parts.host?.lowercased() else { return nil }
        func value(_ names: String...) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.trimmingSpaces.isEmpty }
        }
        let proxy: String?
        switch scheme {
        case "http": proxy = value("http_proxy", "all_proxy", "ALL_PROXY")
        case "https": proxy = value("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
        default: proxy = nil
        }
        guard let proxy else { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        for entry in (value("no_proxy", "NO_PROXY") ?? "").split(separator: ",") {
            var pattern = entry.trimmingSpaces.lowercased()
            if pattern == "*" { return nil }
            if pattern.hasPrefix(".") { pattern.removeFirst() }
            if pattern.hasPrefix("[") && pattern.hasSuffix("]") { pattern = String(pattern.dropFirst().dropLast()) }
            guard !pattern.isEmpty else { continue }
            if bare == pattern || bare.hasSuffix("." + pattern) { return nil }
        }
        return proxy
    }

    private func requestHeaders(offset: Int64?, last: Int64?, icy: Bool) -> [(String, String)] {
        var headers = [("User-Agent", options.userAgent)]
        if icy { headers.append(("Icy-MetaData", "1")) }
        if let offset { headers.append(("Range", "bytes=\(offset)-\(last.map(String.init) ?? "")")) }
        for (name, value) in options.headers.sorted(by: { $0.key < $1.key }) { headers.append((name, value)) }
        return headers
    }

    private func fail(_ error: AudioError) {
        guard !finished else { return }
        failure = error
        finished = true
        task?.cancel()
        task = nil
        condition.broadcast()
        emit(.failed(error))
    }

    /// Hands an event to ``onEvent`` on the control queue, in order, outside the lock.
    private func emit(_ event: Event) {
        let handler = onEvent
        control.async { handler?(event) }
    }

    /// The connection ended before the body did: try again after a delay, or give up.
    private func connectionLost(_ reason: AudioError) {
        task?.cancel()
        task = nil
        guard !closed, !finished, !reconnectPending else { return }
        attempts += 1
        guard attempts <= options.maximumReconnects else {
            let tries = options.maximumReconnects
            fail(AudioError(.network, tries == 0 ? reason.message
                            : "\(reason.message); gave up after \(tries) reconnect\(tries == 1 ? "" : "s")"))
            return
        }
        let delay = min(options.maximumReconnectDelay, options.reconnectDelay * Double(1 << min(attempts - 1, 20)))
        let offset = bufferStart + Int64(buffer.count)
        reconnectPending = true
        emit(.reconnecting(attempt: attempts, delay: delay, offset: offset, reason: reason))
        control.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            condition.lock()
            defer { condition.unlock() }
            reconnectPending = false
            guard !closed, !finished, task == nil else { return }
            connect(at: bufferStart + Int64(buffer.count))
        }
    }

    private func startWatchdog() {
        let timer = DispatchSource.makeTimerSource(queue: control)
        timer.schedule(deadline: .now() + 0.25, repeating: 0.25)
        timer.setEventHandler { [weak self] in self?.checkStall() }
        watchdog = timer
        timer.resume()
    }

    private func checkStall() {
        condition.lock()
        defer { condition.unlock() }
        guard task != nil, !finished, !closed else { return }
        let ahead = bufferStart + Int64(buffer.count) - readPosition
        guard ahead < Int64(options.bufferSize) else { lastProgress = Self.now(); return }
        let idle = Self.now() - lastProgress
        guard idle >= options.stallTimeout else { return }
        let offset = bufferStart + Int64(buffer.count)
        if !stalledReported {
            stalledReported = true
            emit(.stalled(offset: offset))
        }
        connectionLost(AudioError(.timedOut, "no data for \(Self.seconds(idle)) at byte \(offset)"))
    }

    // MARK: Delegate callbacks (on the session's queue)

    func transfer(_ task: any HTTPTransfer, didReceive info: HTTPResponseInfo) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard task === self.task, !closed else { return false }
        if !(200..<300).contains(info.statusCode) {
            let error = AudioError(.httpStatus, "\(info.url) answered \(info.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: info.statusCode))")
            if first == nil || (400..<500).contains(info.statusCode) { fail(error) } else { connectionLost(error) }
            return false
        }
        if info.statusCode == 206 {
            guard let range = info.contentRange, range.first == requestOffset else {
                fail(AudioError(.rangeNotSupported, "the server answered a request for byte \(requestOffset) with \(info.headers["content-range"] ?? "no Content-Range")"))
                return false
            }
            skipBytes = 0
        }
        if options.requestsICYMetadata, let interval = info.icy.metaInterval {
            do {
                var d = try ICYDemuxer(metaInterval: interval)
                d.fallback = options.metadataFallback
                demuxer = d
            } catch {
                fail(error)
                return false
            }
        }
        let resumed = first != nil
        let live = first.map { $0.resourceLength == nil } ?? false
        if first == nil {
            first = info
            if let path = options.diskCachePath, info.resourceLength != nil {
                do { cache = try DiskCache(path: path) } catch {
                    fail(error)
                    return false
                }
            }
        }
        last = info
        responded = true
        lastProgress = Self.now()
        emit(.connected(info))
        if resumed {
            let offset = bufferStart + Int64(buffer.count)
            if live { discontinuities.append(offset) }
            emit(.resumed(offset: offset, isDiscontinuity: live))
        }
        condition.broadcast()
        return true
    }

    var transferHasRoom: Bool {
        condition.withLock {
            closed || cache != nil || bufferStart + Int64(buffer.count) - readPosition < Int64(options.bufferSize)
        }
    }

    func transfer(_ task: any HTTPTransfer, didReceive raw: UnsafeRawBufferPointer) {
        condition.lock()
        guard task === self.task, !closed, responded else { condition.unlock(); return }
        lastProgress = Self.now()
        stalledReported = false
        var audio: [UInt8] = []
        var titles: [(ICYMetadata, Int64)] = []
        do {
            var bytes = raw
            if skipBytes > 0 {
                let skip = Int(min(Int64(bytes.count), skipBytes))
                skipBytes -= Int64(skip)
                bytes = UnsafeRawBufferPointer(rebasing: bytes[skip...])
            }
            if demuxer != nil {
                let base = bufferStart + Int64(buffer.count)
                demuxer!.feed(bytes, audio: { audio.append(contentsOf: $0) },
                              metadata: { titles.append(($0, base + Int64(audio.count))) })
            } else {
                audio.append(contentsOf: bytes)
            }
        }
        // Back-pressure: the session's queue waits here while the reader is a buffer behind
        // (with a disk cache the bytes go to the disk instead, and the network runs on).
        // (The socket client asks `transferHasRoom` before reading instead, and is never held here.)
        while !(task is SocketTransfer) && cache == nil && !closed && task === self.task
                && bufferStart + Int64(buffer.count) - readPosition >= Int64(options.bufferSize) {
            _ = condition.wait(until: Date().addingTimeInterval(0.25))
            lastProgress = Self.now()
        }
        defer { condition.unlock() }
        guard task === self.task, !closed else { return }
        // Progress (bytes beyond those already had) makes the next drop a first attempt again.
        if !audio.isEmpty { attempts = 0 }
        if let cache {
            do { try cache.write(audio, at: bufferStart + Int64(buffer.count)) } catch {
                fail(error)
                return
            }
            // The memory keeps the newest bytes; older ones are read back from the disk.
            let excess = buffer.count + audio.count - (options.bufferSize + options.historySize)
            if excess > 0 {
                let drop = min(excess, buffer.count)
                buffer.removeFirst(drop)
                bufferStart += Int64(drop)
            }
        }
        buffer.append(contentsOf: audio)
        for (metadata, offset) in titles {
            metadataQueue.append((offset, metadata))
            emit(.metadata(metadata, offset: offset))
        }
        if metadataQueue.count > Self.maximumQueuedMetadata { metadataQueue.removeFirst(metadataQueue.count - Self.maximumQueuedMetadata) }
        if let length = first?.resourceLength, bufferStart + Int64(buffer.count) >= length, !finished {
            finished = true
            emit(.ended)
        }
        condition.broadcast()
    }

    func transfer(_ task: any HTTPTransfer, didCompleteWith error: AudioError?) {
        condition.lock()
        defer { condition.unlock() }
        guard task === self.task, !closed else { return }
        self.task = nil
        guard !finished else { return }
        let received = bufferStart + Int64(buffer.count)
        if let error {
            let reason = AudioError(error.code, "\(last?.url ?? url): \(error.message) at byte \(received)")
            if first == nil { fail(reason) } else { connectionLost(reason) }
            return
        }
        if let length = first?.resourceLength {
            connectionLost(AudioError(.network, "the connection closed at byte \(received) of \(length)"))
        } else if options.reconnectsWhenLiveStreamCloses, options.maximumReconnects > 0,
                  last?.headers.keys.contains(where: { $0.hasPrefix("icy-") }) == true {
            // A radio station does not end: it dropped us.
            connectionLost(AudioError(.network, "the station closed the connection at byte \(received)"))
        } else {
            finished = true
            emit(.ended)
            condition.broadcast()
        }
    }

    // MARK: Helpers

    private func trimHistory() {
        let behind = Int(readPosition - bufferStart)
        if behind > 2 * options.historySize {
            let drop = behind - options.historySize
            buffer.removeFirst(drop)
            bufferStart += Int64(drop)
        }
    }

    static func info(_ http: HTTPURLResponse, fallbackURL: String) -> HTTPResponseInfo {
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let k = key as? String, let v = value as? String { headers[k] = v }
        }
        return HTTPResponseInfo(statusCode: http.statusCode, url: http.url?.absoluteString ?? fallbackURL, headers: headers)
    }

    static func now() -> Double { Date().timeIntervalSinceReferenceDate }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : "\((s * 10).rounded() / 10) s"
    }
}

extension URLParts {
    /// `http:` (not `https:`): read with ``SocketTransfer``.
    static func isPlainHTTP(_ url: String) -> Bool { url.lowercased().hasPrefix("http://") }

    package static func isHTTP(_ url: String) -> Bool {
        let lower = url.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }
}

/// The answer to one ``HTTPStream/fetch(offset:count:)``, handed across threads.
private final class FetchResult: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    private var response: HTTPURLResponse?
    private var error: Error?
    func set(data: Data?, response: HTTPURLResponse?, error: Error?) {
        lock.withLock { (self.data, self.response, self.error) = (data, response, error) }
    }
    func get() -> (Data?, HTTPURLResponse?, Error?) { lock.withLock { (data, response, error) } }
}

/// Forwards a session's callbacks to its stream (the session keeps its delegate alive; the
/// delegate does not keep the stream).
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    weak var stream: HTTPStream?

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void)
    {
        guard let stream else { return completionHandler(.cancel) }
        guard let http = response as? HTTPURLResponse else {
            stream.transfer(dataTask, didCompleteWith: AudioError(.httpStatus, "\(stream.url) did not answer with HTTP"))
            return completionHandler(.cancel)
        }
        let info = HTTPStream.info(http, fallbackURL: stream.url)
        completionHandler(stream.transfer(dataTask, didReceive: info) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        data.withUnsafeBytes { stream?.transfer(dataTask, didReceive: $0) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let audioError = error.map { e -> AudioError in
            let text = e.localizedDescription
            if text.contains("HTTP/0.9") || text.contains("Failed writing header") {
                // libcurl under URLSession refuses SHOUTcast's 'ICY 200 OK' and Icecast's
                // 'icy-name:value' headers; Tonearm's own client reads them.
                return AudioError(.httpStatus, "URLSession refuses this server's answer (\(text)), as it refuses radio servers' "
                                  + "ICY status line and headers; Tonearm's own client reads those (over https: it needs "
                                  + "OpenSSL, libssl.so.3, and usesURLSessionForHTTPS false)")
            }
            return AudioError((e as? URLError)?.code == .timedOut ? .timedOut : .network, text)
        }
        stream?.transfer(task, didCompleteWith: audioError)
    }
}

/// The bytes of a remote file kept on disk at their own offsets, with the ranges received.
final class DiskCache {
    private let file: POSIXFile
    /// Received ranges, sorted and merged.
    private(set) var ranges: [Range<Int64>] = []

    init(path: String) throws(AudioError) {
        file = try POSIXFile(path: path, mode: .create)
    }

    deinit { file.closeNow() }

    func write(_ bytes: [UInt8], at offset: Int64) throws(AudioError) {
        guard !bytes.isEmpty else { return }
        try file.write(bytes, at: offset)
        insert(offset..<(offset + Int64(bytes.count)))
    }

    /// The end of the received range that holds `offset`, when one does (and goes past it).
    func end(containing offset: Int64) -> Int64? {
        ranges.first { $0.lowerBound <= offset && offset < $0.upperBound }?.upperBound
    }

    func read(at offset: Int64, into out: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        try file.read(at: offset, into: out)
    }

    private func insert(_ r: Range<Int64>) {
        var merged = r
        var kept: [Range<Int64>] = []
        for existing in ranges {
            if existing.upperBound < merged.lowerBound || existing.lowerBound > merged.upperBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        kept.append(merged)
        ranges = kept.sorted { $0.lowerBound < $1.lowerBound }
    }
}

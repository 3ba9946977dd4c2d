import Foundation
import TonearmCore
import TonearmFormats
import TonearmPlayback

/// Plays an internet radio station or a remote file: an ``HTTPStream`` (playlists followed),
/// decoded by a ``StreamDecoder``, played by an ``AudioPlayer``, with the states a radio app
/// shows and the titles as they are heard.
///
/// ```swift
/// let player = try StreamPlayer(url: "http://radio.example/listen.pls")
/// player.onEvent = { event in
///     switch event {
///     case .state(let s): print("state:", s)
///     case .title(let t): print("now playing:", t)
///     default: break
///     }
/// }
/// try player.play()
/// ```
public final class StreamPlayer: @unchecked Sendable {
    public enum State: String, Sendable, Equatable {
        /// Filling the buffer before playing (at the start, and after a seek).
        case buffering
        case playing
        case paused
        /// The buffer ran dry while the network was slow; playback goes on when it refills.
        case stalled
        /// The connection dropped; a new one is being made.
        case reconnecting
        /// The stream ended and everything was played.
        case ended
        /// The stream or the output failed for good.
        case failed
    }

    public enum Event: Sendable {
        case state(State)
        /// The title now heard (ICY StreamTitle, or an Ogg chain's comments).
        case title(String)
        /// A new response after a reconnect (the first is ``HTTPStream/response``).
        case connected(HTTPResponseInfo)
        /// The connection dropped and attempt `attempt` starts in `delay` seconds.
        case reconnecting(attempt: Int, delay: Double, reason: AudioError)
        /// Bytes flow again; a live stream resumes with a gap.
        case resumed(isDiscontinuity: Bool)
        /// Packets that could not be decoded were skipped.
        case decodeError(AudioError)
        /// The recording could not be written and stopped; playing goes on.
        case recordingStopped(AudioError)
        /// HLS: the variant now heard (the first, or a switch).
        case variant(HLSVariantChoice)
        /// HLS: a live segment that could not be read is heard as silence from now.
        case segmentSkipped(HLSSkippedSegment)
        case failed(AudioError)
    }

    public struct Options: Sendable {
        public var http = HTTPStream.Options()
        /// For HLS playlists (their `http` is replaced by the one above).
        public var hls = HLSStream.Options()
        /// Seconds of decoded audio held ahead of the output.
        public var bufferSeconds = 4.0
        /// Write the stream's bytes (ICY blocks stripped) to this file while playing.
        public var recordPath: String?
        /// Start a new recording file at each title change.
        public var splitsRecordingAtTitles = false
        public var output = AudioOutputOptions()
        public init() {}
    }

    /// The URL asked for, and the one playing (after playlists and redirects).
    public let url: String
    public let streamURL: String
    /// The HTTP stream read; nil for HLS.
    public let stream: HTTPStream?
    /// The HLS presentation read, when the URL named one.
    public let hls: HLSStream?
    public let decoder: StreamDecoder
    public let player: AudioPlayer
    public let recorder: StreamRecorder?
    /// Called on the player's threads. Set before ``play()``.
    @Synchronized public var onEvent: (@Sendable (Event) -> Void)? = nil

    private let lock = NSLock()
    private var stateValue: State = .buffering
    private var titleValue: String?
    /// Events that take effect at a frame (titles, HLS variants and gaps), until it is heard.
    private var pendingEvents: [(frame: Int64, event: Event)] = []
    private var reconnecting = false
    private var failedError: AudioError?
    private var lastUnderruns = 0
    private var monitor: Thread?
    private var stopped = false

    /// Connects (following a PLS or M3U playlist to its first stream that answers, or an HLS
    /// playlist to its segments), reads until the format is known, and opens the output.
    /// Throws 'http', 'net!', 'time' or 'typ?'.
    public init(url: String, backend: (any AudioOutputBackend)? = nil, options: Options = Options()) throws(AudioError) {
        self.url = url
        switch try StreamLocator.locate(url, options: options.http) {
        case .http(let stream):
            self.stream = stream
            hls = nil
            streamURL = stream.response?.url ?? url
            decoder = StreamDecoder(stream: stream, bufferSeconds: options.bufferSeconds)
        case .hls(let playlistURL):
            var hlsOptions = options.hls
            hlsOptions.http = options.http
            let hls = HLSStream(url: playlistURL, options: hlsOptions)
            stream = nil
            self.hls = hls
            streamURL = playlistURL
            decoder = StreamDecoder(hls: hls, bufferSeconds: options.bufferSeconds)
        }
        recorder = try options.recordPath.map { (path) throws(AudioError) in
            try StreamRecorder(path: path, splitsAtTitles: options.splitsRecordingAtTitles)
        }
        decoder.recorder = recorder
        try decoder.open()
        let icy = stream?.icyHeaders
        let name = icy?.name.flatMap { $0.isEmpty ? nil : $0 } ?? StreamPlayer.name(of: streamURL)
        let rate = decoder.fileDataFormat.sampleRate
        let size = stream?.size
        let duration = hls?.duration ?? decoder.properties.flatMap { p -> Double? in
            guard size != nil, let frames = p.validFrames, rate > 0 else { return nil }
            return Double(frames) / rate
        }
        player = try AudioPlayer(sources: [.stream(decoder, path: streamURL, title: name, format: decoder.fileDataFormat,
                                                   duration: duration)],
                                 backend: backend, options: options.output)
    }

    deinit { stop() }

    /// The state now.
    public var state: State { lock.withLock { stateValue } }
    /// The title heard now, when the stream names one.
    public var title: String? { lock.withLock { titleValue } }
    /// The station's ICY headers.
    public var icyHeaders: ICYHeaders? { stream?.icyHeaders }
    /// The format of the stream.
    public var format: StreamDescription { decoder.fileDataFormat }
    /// The bit rate in bits per second: the stream's own, or failing that the station's icy-br.
    public var bitRate: Int? {
        if let b = decoder.properties?.bitRate, b > 0 { return Int(b) }
        return icyHeaders?.bitRate.map { $0 * 1000 }
    }
    /// Bytes received and not yet decoded.
    public var bufferedBytes: Int { stream?.bufferedBytes ?? hls?.bufferedBytes ?? 0 }
    /// Seconds decoded and not yet played.
    public var bufferedSeconds: Double { decoder.bufferedSeconds }
    /// How full the decoded buffer is, 0 … 1.
    public var bufferHealth: Double { min(1, decoder.bufferedSeconds / decoder.bufferSeconds) }
    /// Seconds into the stream, as heard.
    public var currentTime: Double { player.currentTime }
    /// The length, when the stream is a file of known length; nil for a live stream.
    public var duration: Double? { player.tracks[0].duration.isFinite ? player.tracks[0].duration : nil }

    public var volume: Float {
        get { player.volume }
        set { player.volume = newValue }
    }

    /// Starts playing (waiting briefly for the buffer), or resumes after ``pause()``.
    public func play() throws(AudioError) {
        let first = lock.withLock { monitor == nil }
        if first {
            emitState(.buffering)
            decoder.onEvent = { [weak self] in self?.decoderEvent($0) }
            if let stream {
                let previous = stream.onEvent
                stream.onEvent = { [weak self] e in
                    previous?(e)
                    self?.streamEvent(e)
                }
            }
            player.onEvent = { [weak self] in self?.playerEvent($0) }
            let t = Thread { [weak self] in
                while let self, !self.lock.withLock({ self.stopped }) {
                    self.check()
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            t.name = "tonearm.stream-player"
            lock.withLock { monitor = t }
            t.start()
        }
        try player.play()
        check()
    }

    public func pause() {
        player.pause()
        check()
    }

    public func togglePause() {
        if state == .paused { try? play() } else { pause() }
    }

    /// Moves to `seconds` into a remote file (Range request) or a VOD HLS presentation (its
    /// segment); 'rng?' on a live stream or a server without ranges.
    public func seek(to seconds: Double) throws(AudioError) {
        if let hls {
            guard !hls.isLive else { throw AudioError(.rangeNotSupported, "a live HLS stream cannot seek") }
        } else if let stream, !stream.isSeekable {
            throw AudioError(.rangeNotSupported, stream.isLive ? "a live stream cannot seek"
                             : "the server does not serve byte ranges, so the stream cannot seek")
        }
        lock.withLock { pendingEvents.removeAll() }
        player.seek(to: seconds)
    }

    /// Stops playing and closes the connection and any recording.
    public func stop() {
        let wasStopped = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        player.stop()
        decoder.close()
        recorder?.close()
        if state != .failed { emitState(.ended) }
    }

    /// Blocks until the stream ended or failed; false on timeout.
    public func waitUntilEnded(timeout seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let s = state
            if s == .ended || s == .failed { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    // MARK: State

    private func check() {
        let now = player.currentTime * player.outputFormat.sampleRate
        var heard: [Event] = []
        let next: State? = lock.withLock {
            while let e = pendingEvents.first, Double(e.frame) <= now + 1 {
                pendingEvents.removeFirst()
                if case .title(let title) = e.event { titleValue = title }
                heard.append(e.event)
            }
            if stateValue == .ended || stateValue == .failed { return nil }
            if failedError != nil { return .failed }
            if player.hasEnded { return .ended }
            if player.isPaused { return .paused }
            if reconnecting && decoder.bufferedSeconds < 0.25 { return .reconnecting }
            let underruns = player.underruns
            defer { lastUnderruns = underruns }
            if underruns > lastUnderruns && decoder.bufferedSeconds < 0.25 { return .stalled }
            // Out of a stall once half a second is buffered again (or nothing more will come).
            if stateValue == .stalled || stateValue == .reconnecting {
                return decoder.bufferedSeconds >= 0.5 || decoder.isAtEnd ? .playing : stateValue
            }
            return .playing
        }
        for e in heard { onEvent?(e) }
        if let next { emitState(next) }
    }

    private func emitState(_ s: State) {
        let changed = lock.withLock { () -> Bool in
            guard stateValue != s || s == .buffering && monitor == nil else { return false }
            stateValue = s
            return true
        }
        if changed { onEvent?(.state(s)) }
    }

    private func decoderEvent(_ e: StreamDecoder.Event) {
        switch e {
        case .title(let title, let frame): lock.withLock { pendingEvents.append((frame, .title(title))) }
        case .variant(let choice, let frame): lock.withLock { pendingEvents.append((frame, .variant(choice))) }
        case .segmentSkipped(let skipped, let frame): lock.withLock { pendingEvents.append((frame, .segmentSkipped(skipped))) }
        case .decodeError(let error): onEvent?(.decodeError(error))
        case .recordingStopped(let error): onEvent?(.recordingStopped(error))
        case .failed(let error):
            lock.withLock { failedError = error }
            onEvent?(.failed(error))
        case .ready, .discontinuity, .ended: break
        }
    }

    private func streamEvent(_ e: HTTPStream.Event) {
        switch e {
        case .reconnecting(let attempt, let delay, _, let reason):
            lock.withLock { reconnecting = true }
            onEvent?(.reconnecting(attempt: attempt, delay: delay, reason: reason))
        case .resumed(_, let discontinuity):
            lock.withLock { reconnecting = false }
            onEvent?(.resumed(isDiscontinuity: discontinuity))
        case .connected(let info):
            onEvent?(.connected(info))
        default: break
        }
    }

    private func playerEvent(_ e: AudioPlayer.Event) {
        if case .failed(let error) = e {
            lock.withLock { failedError = error }
            onEvent?(.failed(error))
        }
        check()
    }

    /// `stream` for `http://host/path/stream?x`.
    static func name(of url: String) -> String {
        var s = Substring(url)
        if let q = s.firstIndex(where: { $0 == "?" || $0 == "#" }) { s = s[..<q] }
        let last = s.split(separator: "/").last.map(String.init) ?? url
        return last.isEmpty ? url : last
    }
}

/// Opens a URL for streaming, following playlists (PLS, M3U, M3U8 that list streams) to the
/// first entry that answers.
public enum StreamLocator {
    /// Playlists within playlists are followed this deep.
    public static let maximumDepth = 3
    /// The largest playlist read.
    public static let maximumPlaylistBytes = 1 << 20

    /// What a URL leads to: a stream of bytes, or an HLS playlist.
    public enum Located {
        case http(HTTPStream)
        /// The URL of an HLS playlist (master or media), after redirects.
        case hls(String)
    }

    /// Opens the stream a URL leads to; 'typ?' when it is an HLS playlist (see ``locate(_:options:)``).
    public static func open(_ url: String, options: HTTPStream.Options = HTTPStream.Options()) throws(AudioError) -> HTTPStream {
        switch try locate(url, options: options) {
        case .http(let stream): return stream
        case .hls(let playlist):
            throw AudioError(.unsupportedFileType, "\(playlist) is an HLS playlist: read it with HLSStream")
        }
    }

    /// Follows playlists that list streams to the first that answers, and stops at an HLS
    /// playlist, which ``HLSStream`` reads.
    public static func locate(_ url: String, options: HTTPStream.Options = HTTPStream.Options()) throws(AudioError) -> Located {
        try locate(url, options: options, depth: 0)
    }

    private static func locate(_ url: String, options: HTTPStream.Options, depth: Int) throws(AudioError) -> Located {
        let stream = HTTPStream(url: url, options: options)
        let info = try stream.open()
        guard let format = PlaylistFormat(contentType: info.mimeType, pathExtension: info.pathExtension) else { return .http(stream) }
        defer { stream.close() }
        guard depth < maximumDepth else { throw AudioError(.unsupportedFileType, "\(url): playlists nested deeper than \(maximumDepth)") }
        if let size = stream.size, size > Int64(maximumPlaylistBytes) {
            throw AudioError(.unsupportedFileType, "\(url) is too long for a playlist (\(size) bytes)")
        }
        let body = try stream.readToEnd(limit: maximumPlaylistBytes)
        if format != .pls && HLSPlaylist.isHLS(body) { return .hls(info.url) }
        let entries = try Playlist.parse(body, format: format, baseURL: info.url)
        var failures: [String] = []
        for entry in entries.prefix(8) {
            do { return try locate(entry.url, options: options, depth: depth + 1) } catch {
                failures.append("\(entry.url): \(error.message) ('\(error.code.codeString)')")
            }
        }
        throw AudioError(.network, "no stream of the playlist \(url) answered: " + failures.joined(separator: "; "))
    }
}

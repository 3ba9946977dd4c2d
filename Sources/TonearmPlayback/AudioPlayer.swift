import TonearmCore
import TonearmFormats
import TonearmConvert

/// Plays files one after another with no gap, as afplay does for one: an `AudioEngine` with one
/// `AudioPlayerNode`, plus the transport a player needs (pause, seek, volume, rate), the time,
/// and events.
///
/// ```swift
/// let player = try AudioPlayer(paths: ["01.flac", "02.flac"])
/// player.onEvent = { print($0) }
/// try player.play()
/// _ = player.waitUntilEnded(timeout: 600)
/// ```
///
/// The output runs at the first track's rate and channel count; later tracks are converted.
public final class AudioPlayer: @unchecked Sendable {
    public enum Event: Sendable, Equatable {
        /// The output started.
        case started
        /// The track (an index into `tracks`) started to play.
        case trackStarted(Int)
        /// The track's last frame was rendered.
        case trackEnded(Int)
        case paused, resumed
        /// A seek landed at this many seconds into the current track.
        case seeked(Double)
        /// The output ran short of decoded audio (the running count).
        case underrun(Int)
        /// Every track has played.
        case ended
        /// The output or a track failed.
        case failed(AudioError)
    }

    /// A file or stream to play.
    public struct Track: Sendable {
        /// The file's path, or the stream's URL.
        public let path: String
        /// The title tag, or the file name without its extension.
        public let title: String
        /// Seconds, after priming and padding are trimmed; infinity when not known (a live stream).
        public let duration: Double
        /// The file's data format.
        public let format: StreamDescription
    }

    /// What the player plays: an open file, or audio arriving over time.
    public enum Source {
        /// A file opened with ExtAudioFile; `path` names it in ``tracks``.
        case file(ExtAudioFile, path: String)
        /// A stream (such as a URL being decoded); `duration` nil when not known.
        case stream(any StreamingFrameSource, path: String, title: String, format: StreamDescription, duration: Double?)
    }

    public let tracks: [Track]
    /// Called on the player's threads for each event. Set before `play()`.
    @Synchronized public var onEvent: (@Sendable (Event) -> Void)? = nil

    /// The engine and node the player drives. `package`, not public: a user who stopped the
    /// engine, scheduled on the node or changed its rate directly would break the player's
    /// track bookkeeping and events. ``volume``, ``rate``, ``seek(to:)``, ``pause()`` and the
    /// read-only figures (``backendName``, ``outputFormat``, ``underruns``) are the public way in.
    package let engine: AudioEngine
    package let node = AudioPlayerNode()

    /// Linear gain, 0 … 16.
    public var volume: Float {
        get { node.volume }
        set { node.volume = newValue }
    }
    /// Playback rate, 0.25 … 4: varispeed (pitch follows).
    public var rate: Float {
        get { node.rate }
        set { node.rate = newValue }
    }

    private let lock = Lock()
    private let endSignal = WakeSignal()
    private var itemTrack: [Int: Int] = [:]
    private var current = 0
    private var started = false
    private var paused = false
    private var ended = false
    private var outputEnded = false
    private var lastTrackEnded = false
    private var startFrames: Int64 = 0
    /// Events of the node and the output while `play()` starts them, held until `.started`
    /// has gone out: on a virtual clock a whole file may play before `engine.start()`
    /// returns. Nil once delivered in order.
    private var heldEvents: [Event]? = []

    /// Opens every file (ExtAudioFile): throws with the first file that cannot be played.
    public convenience init(paths: [String], backend: (any AudioOutputBackend)? = nil,
                            options: AudioOutputOptions = AudioOutputOptions()) throws(AudioError)
    {
        var sources: [Source] = []
        for path in paths { sources.append(.file(try ExtAudioFile(path: path), path: path)) }
        try self.init(sources: sources, backend: backend, options: options)
    }

    /// Plays files and streams one after another, with no gap between files.
    public init(sources: [Source], backend: (any AudioOutputBackend)? = nil,
                options: AudioOutputOptions = AudioOutputOptions()) throws(AudioError)
    {
        guard !sources.isEmpty else { throw AudioError(.illegalOperation, "no files to play") }
        var tracks: [Track] = []
        for source in sources {
            switch source {
            case .file(let file, let path):
                let info = try? file.file.infoDictionary
                let name = path.split(separator: "/").last.map(String.init) ?? path
                let stem = name.contains(".") ? String(name[..<name.lastIndex(of: ".")!]) : name
                let title = info?[InfoDictionary.title].flatMap { $0.isEmpty ? nil : $0 } ?? stem
                let rate = file.fileDataFormat.sampleRate
                tracks.append(Track(path: path, title: title, duration: rate > 0 ? Double(file.fileLengthFrames) / rate : 0,
                                    format: file.fileDataFormat))
            case .stream(_, let path, let title, let format, let duration):
                tracks.append(Track(path: path, title: title, duration: duration ?? .infinity, format: format))
            }
        }
        self.tracks = tracks
        let first = tracks[0].format
        let channels = min(max(first.channelsPerFrame, 1), 8)
        engine = AudioEngine(format: .float32(sampleRate: first.sampleRate, channels: channels),
                             backend: backend, options: options)
        engine.attach(node)
        // The files opened above are played as they are: an MP3 is not scanned a second time.
        for (index, source) in sources.enumerated() {
            switch source {
            case .file(let file, _): itemTrack[try node.scheduleSegment(file)] = index
            case .stream(let stream, _, _, _, _): itemTrack[try node.scheduleStream(stream)] = index
            }
        }
    }

    deinit { engine.stop() }

    /// The name of the backend playing, once `play()` opened one.
    public var backendName: String? { engine.outputUnit.backendName }
    /// The output's format: Float32 at the first track's rate and channel count.
    public var outputFormat: StreamDescription { engine.format }
    /// The index of the track playing.
    public var currentTrack: Int { lock.withLock { current } }
    /// Seconds into the current track, as heard (the device's buffer accounted for).
    public var currentTime: Double {
        let buffered = Int(max(0, engine.renderedFrames - engine.framesPlayed))
        guard let p = node.playbackPosition(delayedBy: buffered) else {
            return lock.withLock { ended } ? tracks[tracks.count - 1].duration : 0
        }
        return Double(p.frame) / engine.format.sampleRate
    }
    /// Output seconds played since `play()`, across tracks (rate-scaled time is output time).
    public var playedTime: Double {
        Double(max(0, engine.framesPlayed - lock.withLock { startFrames })) / engine.format.sampleRate
    }
    public var isPaused: Bool { lock.withLock { paused } }
    public var hasEnded: Bool { lock.withLock { ended } }
    public var underruns: Int { engine.underruns }

    /// Opens the output on the first call and starts, or resumes after `pause()`.
    public func play() throws(AudioError) {
        let first = lock.withLock { () -> Bool in
            defer { started = true }
            return !started
        }
        if first {
            let onEvent = self.onEvent
            node.onEvent = { [weak self] event in self?.handle(event, onEvent) }
            engine.stopsWhenIdle = true     // a file or null sink ends with the last frame
            engine.onIdle = { [weak self] in self?.finish(outputDone: true) }
            engine.onError = { [weak self] error in
                self?.emit(.failed(error), onEvent)
                self?.finish(outputDone: true, lastTrackDone: true)
            }
            node.play()
            node.waitUntilBuffered(frames: Int(engine.format.sampleRate / 4), timeout: 2)
            do throws(AudioError) {
                try engine.start()
            } catch {
                lock.withLock { started = false; heldEvents = [] }
                throw error
            }
            lock.withLock { startFrames = engine.framesPlayed }
            onEvent?(.started)
            // What came meanwhile, in order; what comes while these go out is held too.
            while let held = lock.withLock({ () -> [Event]? in
                let h = heldEvents ?? []
                heldEvents = h.isEmpty ? nil : []
                return h.isEmpty ? nil : h
            }) {
                for e in held { onEvent?(e) }
            }
        } else if lock.withLock({ paused }) {
            lock.withLock { paused = false }
            node.play()
            onEvent?(.resumed)
        }
    }

    /// Pauses at once; `play()` or `togglePause()` resumes at the same frame.
    public func pause() {
        guard lock.withLock({ started && !paused && !ended }) else { return }
        lock.withLock { paused = true }
        node.pause()
        onEvent?(.paused)
    }

    public func togglePause() {
        if isPaused { try? play() } else { pause() }
    }

    /// Stops at once and closes the output.
    public func stop() {
        node.stop()
        engine.stop()
        finish(outputDone: true, lastTrackDone: true)
    }

    /// Moves to `seconds` into the current track (clamped), sample-accurately.
    public func seek(to seconds: Double) {
        let track = currentTrack
        let clamped = max(0, min(seconds, tracks[track].duration))
        node.seek(toFrame: Int64((clamped * engine.format.sampleRate).rounded()))
        onEvent?(.seeked(clamped))
    }

    /// Moves by `seconds` (negative: back) within the current track.
    public func seek(by seconds: Double) {
        seek(to: currentTime + seconds)
    }

    /// Blocks until every track has played or the player stopped; false on timeout.
    public func waitUntilEnded(timeout seconds: Double) -> Bool {
        let deadline = Clock.nanoseconds + UInt64(max(0, seconds) * 1e9)
        while !hasEnded {
            let now = Clock.nanoseconds
            if now >= deadline { return false }
            endSignal.wait(seconds: min(0.05, Double(deadline - now) / 1e9))
        }
        return true
    }

    private func handle(_ event: AudioPlayerNode.Event, _ onEvent: (@Sendable (Event) -> Void)?) {
        switch event {
        case .itemStarted(let id):
            guard let track = lock.withLock({ itemTrack[id] }) else { return }
            lock.withLock { current = track }
            emit(.trackStarted(track), onEvent)
        case .itemEnded(let id):
            guard let track = lock.withLock({ itemTrack[id] }) else { return }
            emit(.trackEnded(track), onEvent)
            if track == tracks.count - 1 {
                // A real device: let its buffer play out, then report the end.
                if engine.outputUnit.isRealtime {
                    engine.outputUnit.stop(drain: true)
                    finish(outputDone: true, lastTrackDone: true)
                } else {
                    finish(lastTrackDone: true)     // and the output's end, whichever comes second
                }
            }
        case .underrun(let n): emit(.underrun(n), onEvent)
        case .failed(_, let error): emit(.failed(error), onEvent)
        }
    }

    /// Reports the end once the last track has ended and (offline) the output has written it.
    private func finish(outputDone: Bool = false, lastTrackDone: Bool = false) {
        let now = lock.withLock { () -> Bool in
            if outputDone { outputEnded = true }
            if lastTrackDone { lastTrackEnded = true }
            guard !ended, outputEnded, lastTrackEnded else { return false }
            ended = true
            return true
        }
        guard now else { return }
        emit(.ended, onEvent)
        endSignal.signal()
    }

    /// Delivers an event of the node's or the device's thread, or holds it while `play()`
    /// has not yet reported `.started`.
    private func emit(_ event: Event, _ onEvent: (@Sendable (Event) -> Void)?) {
        let held = lock.withLock { () -> Bool in
            guard heldEvents != nil else { return false }
            heldEvents!.append(event)
            return true
        }
        if !held { onEvent?(event) }
    }
}

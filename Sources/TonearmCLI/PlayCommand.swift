#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Tonearm

/// `tonearm play FILE…`: afplay.
enum PlayCommand {
    static let help = """
        usage: tonearm play FILE… [-v VOLUME] [-t SECONDS] [-r RATE] [-q QUALITY] [options]

        Plays the files one after another, without gaps, as afplay does. On a terminal a
        status line shows the time, the duration and the title, and keys control playback:
        space pauses, ← and → seek 10 s, ↑ and ↓ change the volume, n skips to the next
        track, q quits. Ctrl-C stops (exit code 130).

          -v VOLUME            linear gain, 0 to 16 (default 1)
          -t SECONDS           stop after this many seconds have played
          -r RATE              playback rate, 0.25 to 4 (varispeed: the pitch follows)
          -q QUALITY           afplay's rate quality, 0 or 1 (accepted; one resampler serves both)
          --device NAME        the output device (see --list-devices)
          --backend NAME       alsa, pulse, file or null; by default the first that opens
          --output FILE.wav    write what would play into a WAV file (the file backend)
          --latency SECONDS    the device buffer to ask for (default 0.1)
          --period FRAMES      frames rendered per device call (default: a quarter of the latency)
          --realtime           with --backend null: keep time as a device would, to try
                               the status line and keys without sound
          --list-devices       list each backend's devices, * marking the default
          --json               with --list-devices: as JSON
          --quiet              no status line and no 'Playing:' lines
          --decoder WHICH      auto (the default): Tonearm's own decoder, else FFmpeg's in a
                               build with the FFmpeg trait; native or ffmpeg: only those

        Without a sound system, try --output FILE.wav, or --backend null to play into
        nothing on a virtual clock.
        """

    static let noDeviceHint = "try --output FILE.wav to write the audio to a file"

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["--list-devices", "--json", "--quiet", "--realtime"],
                                                  options: ["-v", "-t", "-r", "-q", "--device", "--output", "--backend", "--latency", "--period",
                                                            DecoderOption.name]),
                                help: help, console: console) else { return 0 }
        try DecoderOption.apply(a)
        if a.has("--list-devices") {
            listDevices(json: a.has("--json"), console: console)
            return 0
        }
        guard !a.positionals.isEmpty else { throw UsageError("play needs at least one FILE") }
        let plan = try Plan(a)
        return try play(a.positionals, plan: plan, console: console)
    }

    /// What the options ask for, checked.
    struct Plan {
        var volume: Float = 1
        var seconds: Double?
        var rate: Float = 1
        var backend: (any AudioOutputBackend)?
        var options = AudioOutputOptions()
        var quiet = false
        /// The file written, for errors about it.
        var outputPath: String?

        init(_ a: Arguments) throws(UsageError) {
            if let v = a.value("-v") {
                guard let x = Float(v), x.isFinite, (0...16).contains(x) else { throw UsageError("-v wants a volume from 0 to 16, not '\(v)'") }
                volume = x
            }
            if let t = a.value("-t") {
                guard let x = Double(t), x.isFinite, x > 0 else { throw UsageError("-t wants a number of seconds above 0, not '\(t)'") }
                seconds = x
            }
            if let r = a.value("-r") {
                guard let x = Float(r), x.isFinite, (0.25...4).contains(x) else { throw UsageError("-r wants a rate from 0.25 to 4, not '\(r)'") }
                rate = x
            }
            if let q = a.value("-q") {
                guard q == "0" || q == "1" else { throw UsageError("-q wants 0 or 1, not '\(q)'") }
            }
            if let l = a.value("--latency") {
                guard let x = Double(l), x.isFinite, (0.001...10).contains(x) else {
                    throw UsageError("--latency wants seconds from 0.001 to 10, not '\(l)'")
                }
                options.latency = x
            }
            if let p = a.value("--period") {
                guard let x = Int(p), (16...65536).contains(x) else {
                    throw UsageError("--period wants frames from 16 to 65536, not '\(p)'")
                }
                options.periodFrames = x
            }
            options.device = a.value("--device")
            quiet = a.has("--quiet")
            let output = a.value("--output")
            switch a.value("--backend") {
            case nil where output != nil, "file":
                guard let output else { throw UsageError("--backend file needs --output FILE.wav") }
                backend = FileOutputBackend(path: output, fileType: Self.fileType(for: output))
                outputPath = output
            case nil:
                backend = nil
            case let name?:
                guard output == nil else { throw UsageError("--output writes through the file backend, not '\(name)'") }
                guard let b = AudioOutputBackends.named(name) else {
                    throw UsageError("unknown backend '\(name)'; use alsa, pulse, file or null")
                }
                backend = b
            }
            if a.has("--realtime") {
                guard backend?.name == "null" else { throw UsageError("--realtime goes with --backend null") }
                backend = NullOutputBackend(realtime: true)
            }
        }

        /// The file type `--output` names by its extension; WAVE when it names none.
        static func fileType(for path: String) -> AudioFileTypeID {
            guard let ext = FileSource.pathExtension(of: path) else { return .wave }
            return FormatRegistry.types(forExtension: ext).first { FormatRegistry.info(for: $0)?.isWritable == true } ?? .wave
        }
    }

    // MARK: Playing

    static func play(_ paths: [String], plan: Plan, console: Console) throws -> Int32 {
        let limit = plan.seconds.map { FrameLimit(seconds: $0) }
        let backend = plan.backend.map { b -> any AudioOutputBackend in limit.map { LimitedOutputBackend(b, limit: $0) } ?? b }
        let player: AudioPlayer
        do throws(AudioError) {
            player = try AudioPlayer(paths: paths, backend: backend, options: plan.options)
        } catch {
            throw FileError(path: culprit(of: paths) ?? paths[0], error: error)
        }
        player.volume = plan.volume
        player.rate = plan.rate
        let events = EventQueue<AudioPlayer.Event>()
        player.onEvent = { events.append($0) }

        // On a terminal: the status line, and keys when stdin is one too.
        let showStatus = console.stderrIsTerminal && !plan.quiet
        let session = PlaybackSession(keys: console.stderrIsTerminal && isTerminal(0) ? 0 : nil)
        defer { session.end() }
        var drawn = false
        defer { if drawn { console.error("\n") } }

        do throws(AudioError) {
            try player.play()
        } catch {
            player.stop()
            return failed(error, plan: plan, console: console)
        }

        var keys = KeyDecoder()
        var lastDraw: UInt64 = 0
        var exitCode: Int32 = 0
        loop: while true {
            for event in events.take() {
                switch event {
                case .trackStarted(let i) where !showStatus && !plan.quiet && player.tracks.indices.contains(i):
                    let t = player.tracks[i]
                    console.print("Playing: \(t.title) (\(formatTime(t.duration.rounded())))")
                    console.flush()
                case .failed(let error):
                    player.stop()
                    if drawn { console.error("\n"); drawn = false }
                    let i = player.currentTrack
                    let path = player.tracks.indices.contains(i) ? player.tracks[i].path : paths[0]
                    return failed(error, plan: plan, console: console, path: path)
                default: break
                }
            }
            if let sig = session.pendingSignal { exitCode = 128 + sig; break }
            if player.hasEnded { break }
            if let limit, let seconds = plan.seconds, limit.reached || player.playedTime >= seconds { break }
            if session.keyboard != nil {
                for command in keys.decode(session.readKeys(timeout: 0.05)) {
                    lastDraw = 0  // show what the key did at once
                    switch command {
                    case .quit: break loop
                    case .interrupt: exitCode = 128 + SIGINT; break loop
                    case .togglePause: player.togglePause()
                    case .seek(let by): player.seek(by: by)
                    case .volume(let by): player.volume = max(0, min(16, ((player.volume + by) * 100).rounded() / 100))
                    case .nextTrack:
                        let i = player.currentTrack
                        if player.tracks.indices.contains(i) { player.seek(to: player.tracks[i].duration) }
                    }
                }
                if session.takeContinued() { lastDraw = 0 }
            } else if player.waitUntilEnded(timeout: 0.05) {
                continue  // the events of the end come first
            }
            if showStatus {
                let now = monotonicNanoseconds()
                if now - lastDraw >= 250_000_000 {
                    lastDraw = now
                    console.error("\r" + statusLine(status(of: player), width: terminalWidth(fd: 2) ?? 80) + "\u{1B}[K")
                    drawn = true
                }
            }
        }
        player.stop()
        if drawn {
            console.error("\r" + statusLine(status(of: player), width: terminalWidth(fd: 2) ?? 80) + "\u{1B}[K")
        }
        return exitCode
    }

    /// Reports a failure to play: a device error with the hint to write a file instead.
    static func failed(_ error: AudioError, plan: Plan, console: Console, path: String? = nil) -> Int32 {
        if let output = plan.outputPath, error.code != .badDevice {
            console.error("tonearm: \(output): \(error.message) (\(error.code.codeString))\n")
        } else if let path, error.code != .badDevice, error.code != .hardwareNotRunning {
            console.error("tonearm: \(path): \(error.message) (\(error.code.codeString))\n")
        } else {
            console.error("tonearm: \(error.message) (\(error.code.codeString))\n")
        }
        if error.code == .badDevice, plan.outputPath == nil { console.error(noDeviceHint + "\n") }
        return 1
    }

    /// The first file that does not open, when the player could not: its error names it.
    static func culprit(of paths: [String]) -> String? {
        paths.first { path in (try? ExtAudioFile(path: path)) == nil }
    }

    static func status(of player: AudioPlayer) -> PlayStatus {
        let i = player.currentTrack
        let track = player.tracks.indices.contains(i) ? player.tracks[i] : nil
        return PlayStatus(time: player.currentTime, duration: track.map { $0.duration.rounded() } ?? .nan, title: track?.title ?? "",
                          track: i, trackCount: player.tracks.count, isPaused: player.isPaused,
                          volume: player.volume, rate: player.rate, underruns: player.underruns)
    }

    // MARK: Devices

    static func listDevices(json: Bool, console: Console) {
        var backends = AudioOutputBackends.system
        if !backends.contains(where: { $0.name == "null" }), let null = AudioOutputBackends.named("null") { backends.append(null) }
        var entries: [JSON] = []
        for backend in backends {
            do throws(AudioError) {
                let devices = try backend.devices()
                if json {
                    entries.append(.object([
                        ("name", .string(backend.name)), ("available", .bool(true)),
                        ("devices", .array(devices.map { d in
                            .object([("name", .string(d.name)), ("description", .string(d.description)), ("default", .bool(d.isDefault))])
                        })),
                    ]))
                } else {
                    console.print("\(backend.name):")
                    let width = devices.map(\.name.count).max() ?? 0
                    for d in devices {
                        let pad = String(repeating: " ", count: max(0, width - d.name.count))
                        console.print("  \(d.isDefault ? "*" : " ") \(d.name)\(pad)  \(d.description)")
                    }
                    if devices.isEmpty { console.print("  (no devices)") }
                }
            } catch {
                if json {
                    entries.append(.object([
                        ("name", .string(backend.name)), ("available", .bool(false)),
                        ("error", .string(error.message)), ("code", .string(error.code.fourCC?.string ?? error.code.codeString)),
                    ]))
                } else {
                    console.print("\(backend.name): unavailable: \(error.message) (\(error.code.codeString))")
                }
            }
        }
        if json { console.print(JSON.object([("backends", .array(entries))]).serialized(pretty: true)) }
    }
}

/// A player's events, from its thread to the main loop.
final class EventQueue<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    func append(_ e: Event) { events.withLock { $0.append(e) } }
    func take() -> [Event] { events.withLock { e in defer { e = [] }; return e } }
}

/// `-t` on a sink without a clock (file, null): how much may be rendered, and whether the
/// stream ended there.
final class FrameLimit: Sendable {
    let seconds: Double
    private let done = Atomic<Bool>(false)
    init(seconds: Double) { self.seconds = seconds }
    var reached: Bool { done.load(ordering: .acquiring) }
    func markReached() { done.store(true, ordering: .releasing) }
}

/// A backend whose streams, on a sink without a clock, end by themselves once the limit has
/// been rendered, at the frame it names (the last buffer is trimmed there): such a sink
/// renders faster than the main loop could watch. A real device is stopped by the main loop when `playedTime`
/// (what was heard) reaches the limit, and is left alone here.
struct LimitedOutputBackend: AudioOutputBackend {
    let inner: any AudioOutputBackend
    let limit: FrameLimit
    init(_ inner: any AudioOutputBackend, limit: FrameLimit) {
        self.inner = inner
        self.limit = limit
    }
    var name: String { inner.name }
    func devices() throws(AudioError) -> [AudioOutputDevice] { try inner.devices() }
    func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        let stream = try inner.open(format: format, options: options)
        guard !stream.isRealtime else { return stream }
        let frames = Int64((limit.seconds * stream.format.sampleRate).rounded())
        return LimitedOutputStream(stream, frames: frames, limit: limit)
    }
}

final class LimitedOutputStream: AudioOutputStream {
    let inner: any AudioOutputStream
    let frames: Int64
    let limit: FrameLimit

    init(_ inner: any AudioOutputStream, frames: Int64, limit: FrameLimit) {
        self.inner = inner
        self.frames = frames
        self.limit = limit
    }

    var format: StreamDescription { inner.format }
    var periodFrames: Int { inner.periodFrames }
    var latencyFrames: Int { inner.latencyFrames }
    var isRealtime: Bool { inner.isRealtime }
    var framesPlayed: Int64 { inner.framesPlayed }

    func start(render: @escaping DeviceRenderBlock, onEnd: @escaping (AudioError?) -> Void) throws(AudioError) {
        let total = frames, limit = limit, inner = inner, audible = audible
        // Frames rendered so far: the device thread's own count (its sample time may not
        // start at 0), kept apart from `self` so the thread never outlives what it touches.
        let rendered = FrameCount()
        try inner.start(render: { count, buffer, time in
            audible.value.store(Int64(count), ordering: .relaxed)
            let more = render(count, buffer, time)
            let done = rendered.value.load(ordering: .relaxed)
            let keep = min(audible.value.load(ordering: .relaxed), total - done)
            inner.trimCurrentBuffer(toFrames: Int(max(0, keep)))
            return rendered.value.wrappingAdd(max(0, keep), ordering: .relaxed).newValue < total && more
        }, onEnd: { error in
            // Ended by itself after its last buffer was written: at the limit, or the end.
            if rendered.value.load(ordering: .relaxed) >= total { limit.markReached() }
            onEnd(error)
        })
    }

    func stop(drain: Bool) { inner.stop(drain: drain) }

    /// The renderer's trim of the buffer being rendered; the limit may trim it further.
    private let audible = FrameCount()
    func trimCurrentBuffer(toFrames frames: Int) { audible.value.store(Int64(frames), ordering: .relaxed) }
}

private final class FrameCount: Sendable {
    let value = Atomic<Int64>(0)
}

private func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

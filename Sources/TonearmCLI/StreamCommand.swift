#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization
import Tonearm

/// `tonearm stream URL`: internet radio and remote files.
enum StreamCommand {
    static let help = """
        usage: tonearm stream URL [--record FILE [--split]] [--no-play] [--json-events]
                                  [--duration SECONDS] [options]

        Plays an internet radio station, a remote file or an HLS presentation (.m3u8:
        MPEG-TS, packed audio or fMP4 segments, live or VOD, AES-128) as it arrives. A
        PLS or M3U playlist is followed to its first stream that answers; an HLS master
        playlist plays the variant the measured throughput allows, switching at segment
        boundaries. ICY titles (SHOUTcast, Icecast), timed ID3 titles in HLS and the
        comments of a chained Ogg stream are shown as they are heard;
        on a terminal a status line shows the time, title, bit rate, buffer and state,
        and keys control playback (space pauses, ← → seek in a remote file, ↑ ↓ volume,
        q quits). A dropped connection is made again, resuming a file at the exact byte.

          --record FILE        write the stream's bytes (ICY blocks removed) to FILE;
                               for HLS the audio as an elementary stream (.aac, .mp3)
                               from MPEG-TS and packed audio, or fragmented MP4 from fMP4
          --split              with --record: a new file at each title change
                               (FILE-001 Title.mp3, FILE-002 Title.mp3…)
          --no-play            do not play: read the stream (to record it, or for events)
          --json-events        print one JSON object per line for each event
          --duration SECONDS   stop after this many seconds (played, or with --no-play,
                               of audio received)
          --buffer SECONDS     decoded audio held ahead of the output (default 4)
          --reconnects N       attempts in a row before giving up (default 5); 0 never
                               reconnects: a station that closes the connection has ended
          --timeout SECONDS    how long to wait for the server and for data (default 10)
          -v VOLUME            linear gain, 0 to 16 (default 1)
          --device NAME, --backend NAME, --output FILE.wav, --latency SECONDS,
          --period FRAMES, --realtime, --quiet, --decoder WHICH: as for `tonearm play`
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["--no-play", "--json-events", "--split", "--quiet", "--realtime"],
                                                  options: ["--record", "--duration", "--buffer", "--reconnects", "--timeout",
                                                            "-v", "--device", "--output", "--backend", "--latency", "--period",
                                                            DecoderOption.name]),
                                help: help, console: console) else { return 0 }
        try DecoderOption.apply(a)
        guard a.positionals.count == 1, let url = a.positionals.first else { throw UsageError("stream needs one URL") }
        #if FFmpeg
        if FFmpegNetworkStream.handles(url) { return try playThroughFFmpeg(url, a, console: console) }
        let wanted = "an http, https, mms, mmsh, rtsp or rtmp URL"
        #else
        let wanted = "an http or https URL (mms, rtsp and rtmp need a build with the FFmpeg trait)"
        #endif
        guard isRemote(url) else { throw UsageError("stream wants \(wanted), not '\(url)'; use `tonearm play` for files") }
        var options = StreamPlayer.Options()
        var seconds: Double?
        if let d = a.value("--duration") {
            guard let x = Double(d), x.isFinite, x > 0 else { throw UsageError("--duration wants seconds above 0, not '\(d)'") }
            seconds = x
        }
        if let b = a.value("--buffer") {
            guard let x = Double(b), x.isFinite, (0.5...120).contains(x) else { throw UsageError("--buffer wants seconds from 0.5 to 120, not '\(b)'") }
            options.bufferSeconds = x
        }
        if let r = a.value("--reconnects") {
            guard let x = Int(r), (0...1000).contains(x) else { throw UsageError("--reconnects wants a count from 0 to 1000, not '\(r)'") }
            options.http.maximumReconnects = x
        }
        if let t = a.value("--timeout") {
            guard let x = Double(t), x.isFinite, (0.1...600).contains(x) else { throw UsageError("--timeout wants seconds from 0.1 to 600, not '\(t)'") }
            options.http.connectTimeout = x
            options.http.stallTimeout = x
        }
        if a.has("--split") && a.value("--record") == nil { throw UsageError("--split goes with --record FILE") }
        options.recordPath = a.value("--record")
        options.splitsRecordingAtTitles = a.has("--split")
        let report = EventReporter(console: console, json: a.has("--json-events"), quiet: a.has("--quiet"))
        if a.has("--no-play") {
            return receive(url, options: options, seconds: seconds, report: report, console: console)
        }
        var plan = try PlayCommand.Plan(a)
        plan.seconds = seconds
        options.output = plan.options
        return try play(url, options: options, plan: plan, report: report, console: console)
    }

    // MARK: Playing

    static func play(_ url: String, options: StreamPlayer.Options, plan: PlayCommand.Plan, report: EventReporter,
                     console: Console) throws -> Int32
    {
        let limit = plan.seconds.map { FrameLimit(seconds: $0) }
        let backend = plan.backend.map { b -> any AudioOutputBackend in limit.map { LimitedOutputBackend(b, limit: $0) } ?? b }
        let player: StreamPlayer
        do throws(AudioError) {
            player = try StreamPlayer(url: url, backend: backend, options: options)
        } catch {
            report.failed(error, url: url)
            return 1
        }
        player.volume = plan.volume
        if let response = player.stream?.response { report.connected(response) }
        let events = EventQueue<StreamPlayer.Event>()
        player.onEvent = { events.append($0) }
        report.format(player.format, bitRate: player.bitRate, duration: player.duration)

        let showStatus = console.stderrIsTerminal && !report.json && !report.quiet
        let session = PlaybackSession(keys: console.stderrIsTerminal && isTerminal(0) ? 0 : nil)
        defer { session.end() }
        var drawn = false
        do throws(AudioError) {
            try player.play()
        } catch {
            player.stop()
            report.failed(error, url: url)
            return 1
        }
        var keys = KeyDecoder()
        var exitCode: Int32 = 0
        var lastDraw = 0.0
        loop: while true {
            for e in events.take() {
                if drawn { console.error("\r\u{1B}[K"); drawn = false }
                report.event(e, time: player.currentTime, url: url)
                if case .failed = e { exitCode = 1 }
            }
            if exitCode != 0 { break }
            if let sig = session.pendingSignal { exitCode = 128 + sig; break }
            let state = player.state
            if state == .ended || state == .failed { if state == .failed { exitCode = 1 }; break }
            if let limit, let seconds = plan.seconds, limit.reached || player.player.playedTime >= seconds { break }
            if session.keyboard != nil {
                for command in keys.decode(session.readKeys(timeout: 0.05)) {
                    lastDraw = 0
                    switch command {
                    case .quit: break loop
                    case .interrupt: exitCode = 128 + SIGINT; break loop
                    case .togglePause: player.togglePause()
                    case .seek(let by): try? player.seek(to: max(0, player.currentTime + by))
                    case .volume(let by): player.volume = max(0, min(16, ((player.volume + by) * 100).rounded() / 100))
                    case .nextTrack: break
                    }
                }
            } else {
                _ = player.waitUntilEnded(timeout: 0.05)
            }
            if showStatus {
                let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
                if now - lastDraw >= 0.25 {
                    lastDraw = now
                    console.error("\r" + statusLine(of: player, width: terminalWidth(fd: 2) ?? 80) + "\u{1B}[K")
                    drawn = true
                }
            }
        }
        player.stop()
        for e in events.take() { report.event(e, time: player.currentTime, url: url) }
        if drawn { console.error("\n") }
        if exitCode == 0 || exitCode == 1 { report.ended(time: player.currentTime, recorder: player.recorder) }
        return exitCode
    }

    #if FFmpeg
    /// Plays a stream that libavformat fetches itself (mms, rtsp, rtmp, HLS): no recording,
    /// reconnects or seeking; --duration, --buffer, --timeout and the output options apply.
    static func playThroughFFmpeg(_ url: String, _ a: Arguments, console: Console) throws -> Int32 {
        for option in ["--record", "--reconnects"] where a.value(option) != nil {
            throw UsageError("\(option) applies to http and https streams; FFmpeg reads \(url) itself")
        }
        if a.has("--no-play") { throw UsageError("--no-play applies to http and https streams; FFmpeg reads \(url) itself") }
        let report = EventReporter(console: console, json: a.has("--json-events"), quiet: a.has("--quiet"))
        var buffer = 4.0, timeout = 10.0
        if let b = a.value("--buffer") {
            guard let x = Double(b), x.isFinite, (0.5...120).contains(x) else { throw UsageError("--buffer wants seconds from 0.5 to 120, not '\(b)'") }
            buffer = x
        }
        if let t = a.value("--timeout") {
            guard let x = Double(t), x.isFinite, (0.1...600).contains(x) else { throw UsageError("--timeout wants seconds from 0.1 to 600, not '\(t)'") }
            timeout = x
        }
        var plan = try PlayCommand.Plan(a)
        if let d = a.value("--duration") {
            guard let x = Double(d), x.isFinite, x > 0 else { throw UsageError("--duration wants seconds above 0, not '\(d)'") }
            plan.seconds = x
        }
        let stream = FFmpegNetworkStream(url: url, bufferSeconds: buffer)
        defer { stream.close() }
        let player: AudioPlayer
        let limit = plan.seconds.map { FrameLimit(seconds: $0) }
        do throws(AudioError) {
            try stream.open(timeout: timeout)
            let backend = plan.backend.map { b -> any AudioOutputBackend in limit.map { LimitedOutputBackend(b, limit: $0) } ?? b }
            let title = stream.properties.info[InfoDictionary.title] ?? url.split(separator: "/").last.map(String.init) ?? url
            player = try AudioPlayer(sources: [.stream(stream, path: url, title: title, format: stream.fileDataFormat, duration: nil)],
                                     backend: backend, options: plan.options)
            player.volume = plan.volume
            report.format(stream.fileDataFormat, bitRate: stream.properties.bitRate.map(Int.init), duration: nil)
            try player.play()
        } catch {
            report.failed(error, url: url)
            return 1
        }
        let session = PlaybackSession(keys: nil)
        defer { session.end() }
        var exitCode: Int32 = 0
        while !player.waitUntilEnded(timeout: 0.05) {
            if let sig = session.pendingSignal { exitCode = 128 + sig; break }
            if let limit, let seconds = plan.seconds, limit.reached || player.playedTime >= seconds { break }
        }
        player.stop()
        if let error = stream.error {
            report.failed(error, url: url)
            return 1
        }
        report.ended(time: player.playedTime, recorder: nil)
        return exitCode
    }
    #endif

    static func statusLine(of p: StreamPlayer, width: Int) -> String {
        var parts = [formatTime(p.currentTime) + (p.duration.map { " / " + formatTime($0.rounded()) } ?? "")]
        if let t = p.title ?? p.icyHeaders?.name { parts.append(t) }
        if let b = p.bitRate { parts.append("\(b / 1000) kbit/s") }
        parts.append("buffer \(String(format1: p.bufferedSeconds)) s")
        parts.append("[\(p.state.rawValue)]")
        let line = parts.joined(separator: "  ")
        return line.count > width - 1 ? String(line.prefix(max(0, width - 1))) : line
    }

    // MARK: Receiving without playing

    /// Reads the stream through AudioFileStream (for the format and the seconds received),
    /// recording it when asked, until the end, a failure, the duration or a signal.
    static func receive(_ url: String, options: StreamPlayer.Options, seconds: Double?, report: EventReporter,
                        console: Console) -> Int32
    {
        let session = PlaybackSession(keys: nil)
        defer { session.end() }
        let events = EventQueue<HTTPStream.Event>()
        let stream: HTTPStream
        do throws(AudioError) {
            switch try StreamLocator.locate(url, options: options.http) {
            case .http(let s): stream = s
            case .hls(let playlist):
                return receiveHLS(playlist, options: options, seconds: seconds, report: report, session: session)
            }
        } catch {
            report.failed(error, url: url)
            return 1
        }
        defer { stream.close() }
        if let response = stream.response { report.connected(response) }
        stream.onEvent = { events.append($0) }
        guard case .success(let recorder) = makeRecorder(options, report: report) else { return 1 }
        defer { recorder?.close() }
        var packets: Int64 = 0
        // Titles from the stream's own tags: an Ogg chain's next link brings new comments.
        var tagTitles: [String] = []
        // The format the packets decode to, where only they tell (HE-AAC in ADTS): decided by
        // the first packets, and reported then.
        var probe: DecodedFormatProbe?
        var probed = false
        var parserFormat: (StreamDescription, [UInt8]?)?
        let parser = AudioFileStream(fileTypeHint: stream.fileTypeHint, propertyListener: { s, id, _ in
            if id == .readyToProducePackets, let f = s.properties?.dataFormat { parserFormat = (f, s.properties?.magicCookie) }
            if id == .infoDictionary || id == .readyToProducePackets, s.isReadyToProducePackets,
               let title = s.properties?.info.displayTitle, title != tagTitles.last {
                tagTitles.append(title)
            }
        }, packets: { _, count, data, descriptions in
            if packets == 0, let f = parserFormat?.0 {
                probe = DecodedFormatProbe(format: f, magicCookie: parserFormat?.1)
            }
            if let p = probe, !probed {
                probed = p.examine(data, descriptions: descriptions ?? [])
                    || packets + Int64(count) >= DecodedFormatProbe.packetLimit
            }
            packets += Int64(count)
        })
        var reportedTitles = 0
        var reportedFormat = false
        var parsing = true
        var chunk = [UInt8](repeating: 0, count: 16384)
        var exitCode: Int32 = 0
        var received = 0.0
        loop: while true {
            if let sig = session.pendingSignal { exitCode = 128 + sig; break }
            let position = stream.position
            let got: (count: Int, discontinuity: Bool)?
            do throws(AudioError) {
                got = try chunk.withMutableBytes { raw throws(AudioError) in try stream.read(into: raw, waitingUpTo: 0.1) }
            } catch {
                flushEvents(events, report: report)
                report.failed(error, url: url)
                exitCode = 1
                break
            }
            flushEvents(events, report: report)
            guard let got else { continue }
            // The titles within these bytes (queued before the bytes could be read): reported,
            // and where the recording splits.
            for (offset, metadata) in stream.takeMetadata() {
                guard let title = metadata.streamTitle else { continue }
                recorder?.noteTitle(title, at: offset)
                report.title(title, time: received, url: metadata.streamURL)
            }
            if got.count == 0 { break }
            if let r = recorder {
                do throws(AudioError) {
                    try chunk.withBytes { raw throws(AudioError) in try r.write(UnsafeRawBufferPointer(rebasing: raw[..<got.count]), at: position) }
                } catch {
                    report.failed(error, url: r.path)
                    exitCode = 1
                    break
                }
            }
            if parsing {
                do throws(AudioError) {
                    try parser.parse(chunk[..<got.count], flags: got.discontinuity ? .discontinuity : [])
                } catch {
                    // Not audio Tonearm can follow: still recorded, no longer parsed.
                    report.decodeError(error)
                    parsing = false
                }
                if !reportedFormat, parser.isReadyToProducePackets, let parsed = parser.properties?.dataFormat,
                   packets > 0 && (probe == nil || probed) || DecodedFormatProbe(format: parsed, magicCookie: parser.properties?.magicCookie) == nil {
                    reportedFormat = true
                    let f = probe?.format ?? parsed
                    report.format(f, bitRate: parser.properties?.bitRate.map(Int.init) ?? stream.icyHeaders?.bitRate.map { $0 * 1000 },
                                  duration: nil)
                }
                for title in tagTitles.dropFirst(reportedTitles) { report.title(title, time: received) }
                reportedTitles = tagTitles.count
            }
            if let f = parser.properties?.dataFormat, f.sampleRate > 0, f.framesPerPacket > 0 {
                received = Double(packets * Int64(f.framesPerPacket)) / f.sampleRate
            }
            if let seconds, received >= seconds { break loop }
        }
        flushEvents(events, report: report)
        if exitCode == 0 { report.ended(time: received, recorder: recorder) }
        return exitCode
    }

    /// Reads an HLS presentation without playing it: decoded (for the time received and the
    /// events) and recorded when asked, until the end, a failure, the duration or a signal.
    static func receiveHLS(_ url: String, options: StreamPlayer.Options, seconds: Double?, report: EventReporter,
                           session: PlaybackSession) -> Int32
    {
        var hlsOptions = options.hls
        hlsOptions.http = options.http
        let decoder = StreamDecoder(hls: HLSStream(url: url, options: hlsOptions), bufferSeconds: options.bufferSeconds)
        defer { decoder.close() }
        guard case .success(let recorder) = makeRecorder(options, report: report) else { return 1 }
        defer { recorder?.close() }
        decoder.recorder = recorder
        let events = EventQueue<StreamDecoder.Event>()
        decoder.onEvent = { events.append($0) }
        var rate = 0.0
        do throws(AudioError) {
            try decoder.open()
            let f = decoder.fileDataFormat
            report.format(f, bitRate: decoder.properties?.bitRate.map(Int.init), duration: decoder.hls?.duration)
            rate = f.sampleRate
            try decoder.setClientFormat(.float32(sampleRate: f.sampleRate, channels: f.channelsPerFrame))
        } catch {
            report.failed(error, url: url)
            return 1
        }
        var frames: Int64 = 0
        var exitCode: Int32 = 0
        var bytes: [UInt8] = []
        loop: while true {
            if let sig = session.pendingSignal { exitCode = 128 + sig; break }
            let got: Int?
            do throws(AudioError) { got = try decoder.readAvailable(frames: 4096, into: &bytes) } catch {
                report.failed(error, url: url)
                exitCode = 1
                break
            }
            let time = Double(frames) / rate
            for e in events.take() {
                if case .failed = e { exitCode = 1 }
                report.event(e, time: time, url: url)
            }
            if exitCode != 0 { break }
            guard let n = got else {
                usleep(20_000)
                continue
            }
            if n == 0 && decoder.isAtEnd { break }
            frames += Int64(n)
            if let seconds, Double(frames) / rate >= seconds { break loop }
        }
        for e in events.take() { report.event(e, time: Double(frames) / rate, url: url) }
        if exitCode == 0 { report.ended(time: Double(frames) / rate, recorder: recorder) }
        return exitCode
    }

    /// The recorder `--record` asks for (nil without it); a failure to create its file is
    /// reported.
    private static func makeRecorder(_ options: StreamPlayer.Options, report: EventReporter) -> Result<StreamRecorder?, AudioError> {
        guard let path = options.recordPath else { return .success(nil) }
        do throws(AudioError) {
            return .success(try StreamRecorder(path: path, splitsAtTitles: options.splitsRecordingAtTitles))
        } catch {
            report.failed(error, url: path)
            return .failure(error)
        }
    }

    private static func flushEvents(_ events: EventQueue<HTTPStream.Event>, report: EventReporter) {
        for e in events.take() {
            switch e {
            case .metadata: break       // taken with the bytes, in `receive`
            case .connected(let info): report.connected(info)
            case .reconnecting(let attempt, let delay, _, let reason): report.reconnecting(attempt: attempt, delay: delay, reason: reason)
            case .resumed(_, let gap): report.resumed(discontinuity: gap)
            case .stalled: report.state("stalled")
            case .ended, .failed: break
            }
        }
    }
}

/// Prints the events of `tonearm stream`: as JSON lines with `--json-events`, else as text.
final class EventReporter {
    let console: Console
    let json: Bool
    let quiet: Bool
    init(console: Console, json: Bool, quiet: Bool) {
        self.console = console
        self.json = json
        self.quiet = quiet
    }

    private func emit(_ kind: String, _ fields: [(String, JSON)], text: String?) {
        if json {
            console.print(JSON.object([("event", .string(kind))] + fields).serialized())
            console.flush()
        } else if let text, !quiet {
            console.print(text)
            console.flush()
        }
    }

    func connected(_ r: HTTPResponseInfo) {
        let icy = r.icy
        var fields: [(String, JSON)] = [("url", .string(r.url)), ("status", .int(Int64(r.statusCode)))]
        if let t = r.mimeType { fields.append(("contentType", .string(t))) }
        if let n = r.resourceLength { fields.append(("length", .int(n))) }
        if let v = icy.name { fields.append(("icyName", .string(v))) }
        if let v = icy.genre { fields.append(("icyGenre", .string(v))) }
        if let v = icy.bitRate { fields.append(("icyBitRate", .int(Int64(v)))) }
        if let v = icy.description { fields.append(("icyDescription", .string(v))) }
        if let v = icy.url { fields.append(("icyURL", .string(v))) }
        if let v = icy.metaInterval { fields.append(("icyMetaInterval", .int(Int64(v)))) }
        let name = icy.name.map { " — \($0)" } ?? ""
        emit("connected", fields, text: "Connected: \(r.url)\(name)")
    }

    func format(_ f: StreamDescription, bitRate: Int?, duration: Double?) {
        var fields: [(String, JSON)] = [("formatID", .string(f.formatID.fourCC.string)), ("sampleRate", .double(f.sampleRate)),
                                        ("channels", .int(Int64(f.channelsPerFrame)))]
        if let b = bitRate { fields.append(("bitRate", .int(Int64(b)))) }
        if let d = duration { fields.append(("duration", .double(d))) }
        emit("format", fields, text: "Format: \(f)" + (bitRate.map { ", \($0 / 1000) kbit/s" } ?? ""))
    }

    func title(_ t: String, time: Double, url: String? = nil) {
        var fields: [(String, JSON)] = [("title", .string(t)), ("time", .double((time * 1000).rounded() / 1000))]
        if let url, !url.isEmpty { fields.append(("url", .string(url))) }
        emit("title", fields, text: "Title: \(t)")
    }

    func state(_ s: String) { emit("state", [("state", .string(s))], text: nil) }

    func reconnecting(attempt: Int, delay: Double, reason: AudioError) {
        emit("reconnecting", [("attempt", .int(Int64(attempt))), ("delay", .double(delay)),
                              ("code", .string(reason.code.codeString)), ("message", .string(reason.message))],
             text: "Reconnecting (attempt \(attempt), in \(delay) s): \(reason.message)")
    }

    func resumed(discontinuity: Bool) {
        emit("resumed", [("discontinuity", .bool(discontinuity))], text: discontinuity ? "Resumed (with a gap)" : "Resumed")
    }

    func decodeError(_ e: AudioError) {
        emit("decodeError", [("code", .string(e.code.codeString)), ("message", .string(e.message))],
             text: "Skipped undecodable data: \(e.message) (\(e.code.codeString))")
    }

    func failed(_ e: AudioError, url: String) {
        if json {
            emit("failed", [("code", .string(e.code.codeString)), ("message", .string(e.message))], text: nil)
        }
        console.error("tonearm: \(url): \(e.message) (\(e.code.codeString))\n")
    }

    func ended(time: Double, recorder: StreamRecorder?) {
        var fields: [(String, JSON)] = [("time", .double((time * 1000).rounded() / 1000))]
        if let r = recorder {
            fields.append(("recorded", .array(r.files.map { .string($0) })))
            fields.append(("recordedBytes", .int(r.bytesWritten)))
        }
        emit("ended", fields, text: recorder.map { "Recorded \($0.bytesWritten) bytes: " + $0.files.joined(separator: ", ") })
    }

    func event(_ e: StreamPlayer.Event, time: Double, url: String) {
        switch e {
        case .state(let s): state(s.rawValue)
        case .title(let t): title(t, time: time)
        case .connected(let r): connected(r)
        case .reconnecting(let attempt, let delay, let reason): reconnecting(attempt: attempt, delay: delay, reason: reason)
        case .resumed(let gap): resumed(discontinuity: gap)
        case .decodeError(let error): decodeError(error)
        case .recordingStopped(let error):
            emit("recordingStopped", [("code", .string(error.code.codeString)), ("message", .string(error.message))],
                 text: "Recording stopped: \(error.message) (\(error.code.codeString))")
        case .variant(let choice): variant(choice)
        case .segmentSkipped(let skipped): segmentSkipped(skipped)
        case .failed(let error): failed(error, url: url)
        }
    }

    /// The events of a decoder read without a player (`--no-play` on HLS).
    func event(_ e: StreamDecoder.Event, time: Double, url: String) {
        switch e {
        case .title(let t, _): title(t, time: time)
        case .discontinuity: emit("discontinuity", [("time", .double((time * 1000).rounded() / 1000))], text: nil)
        case .decodeError(let error): decodeError(error)
        case .recordingStopped(let error): event(StreamPlayer.Event.recordingStopped(error), time: time, url: url)
        case .failed(let error): failed(error, url: url)
        case .variant(let choice, _): variant(choice)
        case .segmentSkipped(let skipped, _): segmentSkipped(skipped)
        case .ready, .ended: break
        }
    }

    func variant(_ v: HLSVariantChoice) {
        var fields: [(String, JSON)] = [("index", .int(Int64(v.index))), ("bandwidth", .int(Int64(v.bandwidth))),
                                        ("url", .string(v.url))]
        if let p = v.previous { fields.append(("previous", .int(Int64(p)))) }
        if let t = v.throughput { fields.append(("throughput", .int(Int64(t)))) }
        let verb = v.previous == nil ? "Variant" : "Switched to variant"
        emit("variant", fields, text: "\(verb) \(v.index) (\(v.bandwidth / 1000) kbit/s)")
    }

    func segmentSkipped(_ s: HLSSkippedSegment) {
        emit("segmentSkipped", [("sequence", .int(s.sequence)), ("duration", .double(s.duration)),
                                ("code", .string(s.error.code.codeString)), ("message", .string(s.error.message))],
             text: "Skipped segment \(s.sequence) (\(String(format1: s.duration)) s of silence): \(s.error.message)")
    }
}

extension String {
    /// One decimal: `3.9`.
    init(format1 value: Double) {
        let tenths = (value * 10).rounded()
        self = "\(Int(tenths) / 10).\(abs(Int(tenths)) % 10)"
    }
}

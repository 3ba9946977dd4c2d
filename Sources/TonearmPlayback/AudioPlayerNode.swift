import Synchronization
import TonearmCore
import TonearmFormats
import TonearmConvert

/// A source of audio on an engine, as `AVAudioPlayerNode`: schedule PCM buffers, files or
/// segments of files, then `play()`. Scheduled items play back to back with no gap: a file's
/// encoder delay and padding are already trimmed by ExtAudioFile, so gapless albums join
/// sample for sample.
///
/// A decoding thread per node reads the items, converts them to the engine's format, applies
/// the playback `rate` (varispeed: resampled, so pitch follows), and feeds a lock-free ring;
/// the render thread only mixes from that ring. Completion handlers and events run on the
/// node's thread when the item's last frame has been rendered.
public final class AudioPlayerNode: @unchecked Sendable {
    /// What happened, as the node's thread sees it.
    public enum Event: Sendable, Equatable {
        /// The item with this ID started to play (its first frame was rendered).
        case itemStarted(Int)
        /// The item's last frame was rendered.
        case itemEnded(Int)
        /// The render thread found the ring short while more audio was due (running count).
        case underrun(Int)
        /// Reading or decoding an item failed; the node skips to the next item.
        case failed(Int, AudioError)
    }

    /// Linear gain applied when mixing, 0 … 16.
    public var volume: Float {
        get { gain.value }
        set { gain.value = max(0, min(16, newValue.isFinite ? newValue : 1)) }
    }

    /// Playback rate, 0.25 … 4 (1 is normal speed); by resampling, so pitch changes too.
    public var rate: Float {
        get { rateValue.value }
        set {
            let rate = max(0.25, min(4, newValue.isFinite ? newValue : 1))
            guard rate != rateValue.value else { return }
            rateValue.value = rate
            // What the ring holds was read at the old rate: read it again from the frame
            // being heard, so the change is heard now rather than a ring later.
            lock.withLock {
                // Nothing read yet: the decoding thread may still have the old rate in hand.
                if seekRequest == nil,
                   let p = position(consumed: ring?.framesRead ?? 0) ?? items.first.map({ (item: $0.id, frame: $0.read) })
                {
                    seekRequest = p
                    refilling.value = true
                }
            }
            wake.signal()
        }
    }

    /// Called on the node's thread for each event. Set before playing.
    @Synchronized public var onEvent: (@Sendable (Event) -> Void)? = nil

    /// Whether `play()` was called and not `pause()` or `stop()` since.
    public var isPlaying: Bool { playing.value }
    /// Times the render thread found this node's ring short while audio was due.
    public var underruns: Int { underrunCount.value }

    // Shared with the render thread.
    let playing = AtomicFlag()
    private let gain = AtomicFloat(1)
    private let rateValue = AtomicFloat(1)
    private let underrunCount = AtomicCounter()
    /// True while some scheduled audio has not been written to the ring yet.
    let hasPendingAudio = AtomicFlag()
    /// True from a seek until its first chunk is in the ring: the ring is empty on purpose then,
    /// which is not an underrun.
    private let refilling = AtomicFlag()
    let dataSignal = WakeSignal()
    /// Offline hand-off: the render thread waits for a chunk, or the node's thread waits for
    /// room. Each side signals the other only when it is waiting.
    private let consumerWaiting = AtomicFlag()
    private let producerWaiting = AtomicFlag()
    private(set) var ring: SampleRing?

    // The node thread's state, guarded by `lock`.
    private let lock = Lock()
    private let wake = WakeSignal()
    private var items: [Item] = []
    private var nextID = 0
    private var chunks: [Chunk] = []
    private var thread: PlaybackThread?
    private var alive = false
    private var seekRequest: (item: Int, frame: Int64)?
    private var currentItemID: Int?
    private var reportedUnderruns = 0
    /// Changed by `stop()`: a chunk read without the lock is dropped if it changed meanwhile.
    private var generation = 0
    private(set) weak var engine: AudioEngine?
    /// Tests only: seconds the node's thread sleeps after each chunk, to play a slow decoder.
    var chunkDelayForTesting = 0.0
    private var format: StreamDescription?

    public init() {}

    deinit { detach() }

    // MARK: Scheduling

    /// Plays a PCM buffer after what is already scheduled (`scheduleBuffer`). Returns the item's ID.
    ///
    /// The node copies the buffer's frames now (converted to the engine's format if need be), so
    /// the caller may refill, shorten or reuse the buffer as soon as this returns. (AVAudioPlayerNode
    /// instead keeps the buffer until its completion handler runs.)
    @discardableResult
    public func scheduleBuffer(_ buffer: PCMBuffer, completion: (@Sendable () -> Void)? = nil) throws(AudioError) -> Int {
        let format = try requireFormat()
        let converted: PCMBuffer
        if buffer.format == format {
            // A copy: the node's thread reads it long after this returns.
            converted = PCMBuffer(format: format, frameCapacity: max(1, buffer.frameLength))!
            Self.append(buffer, to: converted)
        } else {
            let converter = try AudioConverter(from: buffer.format, to: format)
            let body = try converter.convert(buffer)
            let tail = try converter.finish()
            converted = PCMBuffer(format: format, frameCapacity: body.frameLength + tail.frameLength)!
            Self.append(body, to: converted)
            Self.append(tail, to: converted)
        }
        return enqueue(.buffer(converted, position: 0), length: Int64(converted.frameLength), completion: completion)
    }

    /// Plays a whole file after what is already scheduled (`scheduleFile`). Returns the item's ID.
    @discardableResult
    public func scheduleFile(_ path: String, completion: (@Sendable () -> Void)? = nil) throws(AudioError) -> Int {
        try scheduleSegment(ExtAudioFile(path: path), startingFrame: 0, frameCount: nil, completion: completion)
    }

    /// Plays `frameCount` frames (nil: to the end) of a file from `startingFrame`, counted at
    /// the file's own sample rate (`scheduleSegment`). Returns the item's ID.
    @discardableResult
    public func scheduleSegment(_ path: String, startingFrame: Int64, frameCount: Int64?,
                                completion: (@Sendable () -> Void)? = nil) throws(AudioError) -> Int
    {
        try scheduleSegment(ExtAudioFile(path: path), startingFrame: startingFrame, frameCount: frameCount,
                            completion: completion)
    }

    /// The same for a file already open: the node takes it over (sets its client format, seeks
    /// and reads it on the node's thread), so the caller must not use it any more.
    @discardableResult
    public func scheduleSegment(_ file: ExtAudioFile, startingFrame: Int64 = 0, frameCount: Int64? = nil,
                                completion: (@Sendable () -> Void)? = nil) throws(AudioError) -> Int
    {
        let format = try requireFormat()
        let fileRate = file.fileDataFormat.sampleRate
        try file.setClientDataFormat(format)
        let scale = format.sampleRate / fileRate
        let total = file.clientLengthFrames
        let start = min(total, Int64((Double(max(0, startingFrame)) * scale).rounded()))
        let count = frameCount.map { min(total - start, Int64((Double(max(0, $0)) * scale).rounded())) } ?? (total - start)
        if start > 0 { try file.seek(toFrame: start) }
        return enqueue(.file(file, start: start), length: count, completion: completion)
    }

    /// Plays audio that arrives over time, such as a network stream, after what is already
    /// scheduled. The node takes the source over: it sets its client format, then reads and
    /// seeks it on the node's thread, never waiting for it (while no frames are ready, the node
    /// plays what it has and looks again). A source of unknown length plays until it ends.
    @discardableResult
    public func scheduleStream(_ source: any StreamingFrameSource, completion: (@Sendable () -> Void)? = nil) throws(AudioError) -> Int {
        let format = try requireFormat()
        try source.setClientFormat(format)
        return enqueue(.stream(source), length: source.clientLengthFrames ?? Int64.max, completion: completion)
    }

    private func requireFormat() throws(AudioError) -> StreamDescription {
        guard let format else {
            throw AudioError(.uninitialized, "attach the player node to an engine before scheduling")
        }
        return format
    }

    private func enqueue(_ source: Item.Source, length: Int64, completion: (@Sendable () -> Void)?) -> Int {
        let id = lock.withLock { () -> Int in
            let id = nextID
            nextID += 1
            items.append(Item(id: id, source: source, length: length, completion: completion))
            hasPendingAudio.value = true
            return id
        }
        wake.signal()
        return id
    }

    // MARK: Transport

    /// Starts or resumes playing (`play()`).
    public func play() {
        playing.value = true
        wake.signal()
    }

    /// Stops taking audio from the ring; `play()` goes on from the same frame.
    public func pause() {
        playing.value = false
    }

    /// Stops and drops every scheduled item. As with AVAudioPlayerNode, the completion of each
    /// item still scheduled runs (once, in the order scheduled, on the caller's thread before
    /// this returns); an item that had already ended was called back by the node's thread.
    public func stop() {
        playing.value = false
        let completions = lock.withLock { () -> [@Sendable () -> Void] in
            let completions = items.compactMap(\.completion)
            generation &+= 1     // a read in flight is dropped when it returns
            items.removeAll()
            chunks.removeAll()
            seekRequest = nil
            currentItemID = nil
            hasPendingAudio.value = false
            refilling.value = false
            ring?.discardWritten()
            return completions
        }
        dataSignal.signal()
        for completion in completions { completion() }
    }

    /// Moves the current item to `frame` (engine-rate frames from the item's start),
    /// sample-accurately through ExtAudioFile. Later items already read ahead are read again.
    public func seek(toFrame frame: Int64) {
        lock.withLock {
            guard let id = currentItemID ?? items.first?.id else { return }
            seekRequest = (id, max(0, frame))
            refilling.value = true
        }
        wake.signal()
    }

    /// The item now playing, and the frame of it (at the engine's rate) that was just rendered.
    public var playbackPosition: (item: Int, frame: Int64)? { playbackPosition(delayedBy: 0) }

    /// The item and frame rendered `frames` frames ago: with the device's buffer as the delay,
    /// what is being heard now. Right after a seek, the frame sought.
    public func playbackPosition(delayedBy frames: Int) -> (item: Int, frame: Int64)? {
        lock.withLock { position(consumed: max(0, (ring?.framesRead ?? 0) - max(0, frames))) }
    }

    /// The length in engine-rate frames of a scheduled item still held by the node.
    public func length(ofItem id: Int) -> Int64? {
        lock.withLock { items.first { $0.id == id }?.length }
    }

    // MARK: Engine side

    func attach(to engine: AudioEngine, format: StreamDescription, ringFrames: Int) {
        lock.withLock {
            self.engine = engine
            self.format = format
            ring = SampleRing(channels: Int(format.channelsPerFrame), minimumFrames: ringFrames)
            alive = true
        }
        thread = PlaybackThread(name: "tonearm-player") { [weak self] in self?.run() }
    }

    func detach() {
        lock.withLock { alive = false }
        wake.signal()
        dataSignal.signal()
        thread?.join()
        thread = nil
    }

    /// Render thread: mixes `frames` frames into `out` and returns how many it mixed (from the
    /// start of `out`). Offline (no real time passes) it waits for the decoder to fill what
    /// the ring lacked, instead of underrunning.
    @inline(__always)
    func render(into out: UnsafeMutablePointer<Float>, frames: Int, offline: Bool, engineRunning: AtomicFlag) -> Int {
        guard playing.value, let ring else { return 0 }
        let channels = ring.channels
        var n = offline && refilling.value ? 0 : ring.mix(into: out, frames: frames, gain: gain.value)
        if offline {
            // No real time passes: wait for the decoder instead of underrunning. The flag is
            // set before looking again, so a chunk written meanwhile either is seen or signals.
            while n < frames {
                // A seek (or rate change) not yet applied: what the ring holds is stale.
                if refilling.value && playing.value && engineRunning.value {
                    consumerWaiting.value = true
                    wakeProducer()
                    dataSignal.wait(seconds: 0.01)
                    consumerWaiting.value = false
                    continue
                }
                // The flag first, then the ring: a last chunk written before the decoder said
                // "no more" is seen by this mix.
                let more = hasPendingAudio.value
                n += ring.mix(into: out + n * channels, frames: frames - n, gain: gain.value)
                guard n < frames, more, playing.value, engineRunning.value else { break }
                consumerWaiting.value = true
                n += ring.mix(into: out + n * channels, frames: frames - n, gain: gain.value)
                if n < frames {
                    wakeProducer()
                    dataSignal.wait(seconds: 0.01)
                }
                consumerWaiting.value = false
            }
            // The decoder sleeps while the ring is full; wake it once half has played.
            if producerWaiting.value && ring.readableFrames <= ring.capacity / 2 { wakeProducer() }
        }
        if n < frames && hasPendingAudio.value && !refilling.value { underrunCount.add(1) }
        return n
    }

    /// Offline only: a real-time render takes no lock, and the node's thread polls instead.
    private func wakeProducer() {
        producerWaiting.value = false
        wake.signal()
    }

    /// Waits (up to `timeout` seconds) until the ring holds `frames` frames or all that was
    /// scheduled: a real-time device started after this does not begin with an underrun.
    func waitUntilBuffered(frames: Int, timeout: Double) {
        guard let ring else { return }
        let deadline = Clock.nanoseconds + UInt64(timeout * 1e9)
        while ring.readableFrames < min(frames, ring.capacity / 2) && hasPendingAudio.value && Clock.nanoseconds < deadline {
            wake.signal()
            dataSignal.wait(seconds: 0.005)
        }
    }

    /// True when nothing is left to render: no pending items and an empty ring.
    var isIdle: Bool {
        !hasPendingAudio.value && (ring?.readableFrames ?? 0) == 0
    }

    // MARK: The node's thread

    private struct Item {
        enum Source {
            case file(ExtAudioFile, start: Int64)
            case buffer(PCMBuffer, position: Int)
            case stream(any StreamingFrameSource)
        }
        let id: Int
        var source: Source
        /// Frames of the item, at the engine's rate.
        let length: Int64
        let completion: (@Sendable () -> Void)?
        /// Frames read so far from the item's start.
        var read: Int64 = 0
        /// Ring position after the item's last frame, once all of it was written.
        var ringEnd: Int?
        var started = false
    }

    /// A run of frames written to the ring: which item, and which of its frames.
    private struct Chunk {
        let ringStart: Int, ringEnd: Int
        let item: Int
        let itemStart: Int64, itemEnd: Int64
    }

    private static let chunkFrames = 2048
    /// How often a decoding thread with nothing to do looks again (queue and node threads).
    static let pollInterval = 0.02
    /// Frames of played chunks kept for delayed position lookups: more than any device buffer.
    private static let positionHistory = 1 << 18

    private func run() {
        guard let ring, let format else { return }
        let channels = Int(format.channelsPerFrame)
        let chunk = Self.chunkFrames
        var bytes: [UInt8] = []
        var varispeed: Varispeed?
        while true {
            var events: [Event] = []
            var completions: [@Sendable () -> Void] = []
            var progressed = false
            let keepGoing = lock.withLock { () -> Bool in
                guard alive else { return false }
                if let request = seekRequest {
                    seekRequest = nil
                    applySeek(request, ring: ring, events: &events)
                    varispeed?.reset()
                }
                return true
            }
            guard keepGoing else { break }

            // Read one chunk of the first item not fully written, when the ring has room.
            let rate = rateValue.value
            if rate != 1 && varispeed?.rate != rate {
                varispeed = try? Varispeed(rate: rate, sampleRate: format.sampleRate, channels: channels, chunk: chunk)
            } else if rate == 1 {
                varispeed = nil
            }
            let room = varispeed.map { $0.maximumOutput } ?? chunk
            if ring.writableFrames >= room {
                // The item is read without the lock (a decode or a disk read may be slow), then
                // published under it: position, scheduling and stop never wait for a read.
                // Seeks are applied by this thread, so only `stop()` can change the items meanwhile.
                let job = lock.withLock { () -> (item: Item, generation: Int)? in
                    items.first { $0.ringEnd == nil }.map { ($0, generation) }
                }
                var wrote = false
                if let job {
                    var item = job.item
                    var failure: (Int, AudioError)?
                    var got: Int? = 0
                    do throws(AudioError) {
                        got = try read(&item, frames: chunk, into: &bytes)
                    } catch { failure = (item.id, error) }
                    wrote = lock.withLock { () -> Bool in
                        // Stopped meanwhile (the chunk belongs to nothing now), or a stream with
                        // nothing ready yet: look again later.
                        guard job.generation == generation, let index = items.firstIndex(where: { $0.id == item.id }),
                              let got else { return false }
                        items[index].read = item.read
                        items[index].source = item.source
                        let done = failure != nil || got == 0 || item.read >= item.length
                        let ringStart = ring.framesWritten
                        var produced = got
                        if let v = varispeed {
                            let flush = done && index == items.count - 1
                            produced = bytes.withUnsafeBytes { v.process($0.bindMemory(to: Float.self), frames: got, flush: flush, into: ring) }
                        } else if got > 0 {
                            bytes.withUnsafeBytes { _ = ring.write($0.bindMemory(to: Float.self).baseAddress!, frames: got) }
                        }
                        if produced > 0 || got > 0 {
                            chunks.append(Chunk(ringStart: ringStart, ringEnd: ringStart + produced, item: item.id,
                                                itemStart: item.read - Int64(got), itemEnd: item.read))
                        }
                        if done { items[index].ringEnd = ring.framesWritten }
                        hasPendingAudio.value = items.contains { $0.ringEnd == nil }
                        return true
                    }
                    if let failure, wrote { events.append(.failed(failure.0, failure.1)) }
                    if !wrote && job.generation != lock.withLock({ generation }) { progressed = true }
                }
                if wrote {
                    if lock.withLock({ seekRequest == nil }) { refilling.value = false }
                    atomicMemoryFence(ordering: .sequentiallyConsistent)     // the chunk, then the flag
                    if consumerWaiting.value { dataSignal.signal() }
                    progressed = true
                    if chunkDelayForTesting > 0 { Clock.sleep(seconds: chunkDelayForTesting) }
                }
            }

            // Items whose last frame was rendered: completion, then the next item's start.
            let consumed = ring.framesRead
            lock.withLock {
                while let first = items.first, let end = first.ringEnd, consumed >= end {
                    if !first.started { events.append(.itemStarted(first.id)) }
                    items.removeFirst()
                    events.append(.itemEnded(first.id))
                    if let c = first.completion { completions.append(c) }
                    if currentItemID == first.id { currentItemID = items.first?.id }
                }
                if let p = position(consumed: consumed), p.item != currentItemID {
                    currentItemID = p.item
                }
                if let id = currentItemID, let i = items.firstIndex(where: { $0.id == id }), !items[i].started,
                   consumed > (chunks.first { $0.item == id }?.ringStart ?? Int.max)
                {
                    items[i].started = true
                    events.append(.itemStarted(id))
                }
                // Chunks stay a while after they play, for `playbackPosition(delayedBy:)`.
                while chunks.count > 1 && chunks[1].ringStart <= consumed - Self.positionHistory
                    && chunks[0].ringEnd <= consumed - Self.positionHistory
                {
                    chunks.removeFirst()
                }
                let u = underrunCount.value
                if u != reportedUnderruns { reportedUnderruns = u; events.append(.underrun(u)) }
            }
            for e in events { onEvent?(e) }
            for c in completions { c() }
            // On a real device nothing wakes this thread (the render path takes no lock): it polls,
            // often enough for a ring of a second and for completions to be on time.
            if !progressed {
                producerWaiting.value = true
                wake.wait(seconds: Self.pollInterval)
                producerWaiting.value = false
            }
        }
    }

    /// Drops what the ring holds and reads the item again from the requested frame; later
    /// items already read ahead start over. Caller holds the lock.
    private func applySeek(_ request: (item: Int, frame: Int64), ring: SampleRing, events: inout [Event]) {
        ring.discardWritten()
        chunks.removeAll()
        defer { if !hasPendingAudio.value { refilling.value = false } }
        guard let at = items.firstIndex(where: { $0.id == request.item }) else {
            hasPendingAudio.value = items.contains { $0.ringEnd == nil }
            return
        }
        items.removeFirst(at)
        for i in items.indices {
            if i > 0 && items[i].read == 0 && items[i].ringEnd == nil { break }
            do throws(AudioError) {
                try rewind(&items[i], to: i == 0 ? min(request.frame, items[i].length) : 0)
            } catch {
                events.append(.failed(items[i].id, error))
                items[i].ringEnd = ring.framesWritten
            }
            if i > 0 { items[i].started = false }
        }
        currentItemID = items.first?.id
        hasPendingAudio.value = items.contains { $0.ringEnd == nil }
    }

    /// The item and item frame at ring position `consumed`. Caller holds the lock.
    private func position(consumed: Int) -> (item: Int, frame: Int64)? {
        guard let chunk = chunks.last(where: { $0.ringStart <= consumed }) ?? chunks.first else {
            guard let id = currentItemID, let item = items.first(where: { $0.id == id }) else { return nil }
            return (id, item.read)
        }
        let span = chunk.ringEnd - chunk.ringStart
        let into = min(span, max(0, consumed - chunk.ringStart))
        let frame = span == 0 ? chunk.itemStart
            : chunk.itemStart + Int64(Double(chunk.itemEnd - chunk.itemStart) * Double(into) / Double(span))
        return (chunk.item, frame)
    }

    /// Reads up to `frames` interleaved Float32 frames of the item into `bytes` (replacing
    /// what it held): a file decodes straight into it. Nil when a stream has none ready yet.
    private func read(_ item: inout Item, frames: Int, into bytes: inout [UInt8]) throws(AudioError) -> Int? {
        bytes.removeAll(keepingCapacity: true)
        let want = Int(min(Int64(frames), item.length - item.read))
        guard want > 0 else { return 0 }
        var got = 0
        switch item.source {
        case .file(let file, _):
            got = try file.read(frames: want, into: &bytes)
        case .buffer(let buffer, let position):
            got = min(want, buffer.frameLength - position)
            let sampleBytes = buffer.channelCount * MemoryLayout<Float>.size
            buffer.withUnsafeMutableRawBytes { bytes.append(contentsOf: $0[(position * sampleBytes)..<((position + got) * sampleBytes)]) }
            item.source = .buffer(buffer, position: position + got)
        case .stream(let source):
            guard let n = try source.readAvailable(frames: want, into: &bytes) else { return nil }
            got = n
        }
        item.read += Int64(got)
        return got
    }

    private func rewind(_ item: inout Item, to frame: Int64) throws(AudioError) {
        switch item.source {
        case .file(let file, let start): try file.seek(toFrame: start + frame)
        case .buffer(let buffer, _): item.source = .buffer(buffer, position: Int(frame))
        case .stream(let source): try source.seek(toFrame: frame)
        }
        item.read = frame
        item.ringEnd = nil
    }

    /// Appends an interleaved buffer's frames to another of the same format.
    private static func append(_ source: PCMBuffer, to dest: PCMBuffer) {
        let n = source.frameLength * source.channelCount
        let at = dest.frameLength * dest.channelCount
        source.withUnsafeMutableSamples(Float.self) { s in
            dest.withUnsafeMutableSamples(Float.self) { d in (d.baseAddress! + at).update(from: s.baseAddress!, count: n) }
        }
        dest.frameLength += source.frameLength
    }
}

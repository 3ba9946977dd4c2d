import TonearmCore
import TonearmConvert

/// A buffer of an `AudioQueue` (`AudioQueueBufferRef`): fill `audioData` with up to
/// `audioDataBytesCapacity` bytes, set `audioDataByteSize`, and enqueue it.
public final class AudioQueueBuffer: @unchecked Sendable {
    /// The memory to fill (`mAudioData`).
    public let audioData: UnsafeMutableRawPointer
    /// Its size in bytes (`mAudioDataBytesCapacity`).
    public let audioDataBytesCapacity: Int
    /// The bytes of valid data (`mAudioDataByteSize`).
    public var audioDataByteSize = 0
    /// How many packet descriptions the buffer was made for (`mPacketDescriptionCapacity`).
    public let packetDescriptionCapacity: Int
    /// The packets' descriptions, for formats whose packets vary in size (`mPacketDescriptions`).
    public var packetDescriptions: [PacketDescription] = []
    /// Anything the app wants to keep with the buffer (`mUserData`).
    public var userData: Int = 0
    weak var queue: AudioQueue?

    init(capacity: Int, descriptions: Int, queue: AudioQueue) {
        audioData = .allocate(byteCount: max(1, capacity), alignment: 16)
        audioDataBytesCapacity = capacity
        packetDescriptionCapacity = descriptions
        self.queue = queue
    }

    deinit { audioData.deallocate() }

    /// Views the valid bytes.
    public var bytes: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: audioData, count: audioDataByteSize)
    }
}

/// A playback queue, as Apple's AudioQueue (seed 002): make it with a format and a callback,
/// allocate a few buffers (three is usual), fill and enqueue them, and start. Each time the
/// device has played a buffer, the callback gets it back to refill and enqueue again.
///
/// ```swift
/// let queue = try AudioQueue.newOutput(format: format) { queue, buffer in
///     let n = read(into: buffer.audioData, max: buffer.audioDataBytesCapacity)
///     guard n > 0 else { queue.stop(immediately: false); return }
///     buffer.audioDataByteSize = n
///     try? queue.enqueue(buffer)
/// }
/// for _ in 0..<3 { let b = try queue.allocateBuffer(byteSize: 32768); /* fill */ try queue.enqueue(b) }
/// try queue.start()
/// ```
///
/// The format may be compressed (MP3, FLAC, ALAC, IMA4…): the queue decodes through an
/// AudioConverter, as Apple's does; pass packet descriptions when the packets vary in size.
/// Callbacks run on the queue's own thread, in the order the buffers were enqueued, once per
/// enqueue: when the buffer has played, or when `reset()` or `stop(immediately: true)`
/// flushed it. The queue decodes without holding its lock, so `enqueue` and `currentTime`
/// never wait for a decode.
public final class AudioQueue: @unchecked Sendable {
    /// Gets back a buffer the device has played (`AudioQueueOutputCallback`).
    public typealias OutputCallback = (_ queue: AudioQueue, _ buffer: AudioQueueBuffer) -> Void

    /// The queue's parameters (`AudioQueueParameterID`).
    public enum Parameter: Sendable { case volume }

    /// The format of the enqueued data.
    public let format: StreamDescription
    /// Called on the queue's thread when `isRunning` changes (`kAudioQueueProperty_IsRunning`).
    @Synchronized public var isRunningListener: (@Sendable (Bool) -> Void)? = nil
    /// Called on the queue's thread when an enqueued buffer cannot be decoded (descriptions
    /// pointing outside it, data the codec refuses): it plays as nothing and still comes back.
    @Synchronized public var onDecodeError: (@Sendable (AudioError) -> Void)? = nil

    /// Linear gain, 0 … 1 (`kAudioQueueParam_Volume`).
    public var volume: Float {
        get { gain.value }
        set { gain.value = max(0, min(1, newValue.isFinite ? newValue : 1)) }
    }
    /// Whether the queue is started and has not stopped (`kAudioQueueProperty_IsRunning`).
    public var isRunning: Bool { running.value }
    /// Frames played since `start()`, at the queue's sample rate (`AudioQueueGetCurrentTime`'s
    /// `mSampleTime`). Tonearm names a position in frames `…Frame` and one in seconds
    /// `…Time` (a `TimeInterval`, as AVAudioPlayer's and ``AudioPlayer``'s `currentTime`), so
    /// the unit is in the name.
    public var currentFrame: Int64 { Int64(ring.framesRead - startPosition.value) }
    /// Frames played since `start()`, despite the name: use ``currentFrame``.
    @available(*, deprecated, message: "currentTime was in frames; use currentFrame (frames), or divide it by format.sampleRate for seconds")
    public var currentTime: Double { Double(currentFrame) }
    /// Times the device found no audio while the queue was running.
    public var underruns: Int { underrunCount.value }
    /// The backend that opened, once started.
    public var backendName: String? { unit.backendName }

    private let callback: OutputCallback
    private let converter: AudioConverter
    private let unit: OutputUnit
    private let ring: SampleRing
    private let channels: Int
    private let gain = AtomicFloat(1)
    private let running = AtomicFlag()
    private let playing = AtomicFlag()
    private let stopping = AtomicFlag()
    private let underrunCount = AtomicCounter()
    private let pendingAudio = AtomicFlag()
    private let dataSignal = WakeSignal()
    private let wake = WakeSignal()
    private let lock = Lock()
    private var pending: [(buffer: AudioQueueBuffer?, descriptions: [PacketDescription]?)] = []
    private var inFlight: [(buffer: AudioQueueBuffer, ringEnd: Int)] = []
    private var converted: [UInt8] = []
    private var convertedOffset = 0
    private var convertingBuffer: AudioQueueBuffer?
    /// The buffer the queue's thread is decoding without the lock.
    private var decodingBuffer: AudioQueueBuffer?
    /// Changed by a flush: a decode that started before it is dropped when it returns.
    private var generation = 0
    /// A flush asks the queue's thread, which alone uses the converter, to reset it.
    private var converterNeedsReset = false
    /// Buffers to hand back through the callback, in order (played or flushed).
    private var returning: [AudioQueueBuffer] = []
    /// The queue's thread's own: the decode in progress, swapped into `converted` when published.
    private var decoded: [UInt8] = []
    private var thread: PlaybackThread?
    private var alive = true
    /// `ring.framesRead` at `start()`; atomic, as `currentTime` reads it on any thread.
    private let startPosition = AtomicCounter()
    private var disposed = false
    /// Tests only: seconds each buffer's decode takes longer, to play a slow codec.
    var decodeDelayForTesting = 0.0

    /// Makes an output queue (`AudioQueueNewOutput`). 'fmt?' when Tonearm cannot decode the format.
    public static func newOutput(format: StreamDescription, magicCookie: [UInt8]? = nil,
                                 backend: (any AudioOutputBackend)? = nil, options: AudioOutputOptions = AudioOutputOptions(),
                                 callback: @escaping OutputCallback) throws(AudioError) -> AudioQueue
    {
        try AudioQueue(format: format, magicCookie: magicCookie, backend: backend, options: options, callback: callback)
    }

    private init(format: StreamDescription, magicCookie: [UInt8]?, backend: (any AudioOutputBackend)?,
                 options: AudioOutputOptions, callback: @escaping OutputCallback) throws(AudioError)
    {
        guard format.sampleRate > 0, (1...32).contains(format.channelsPerFrame) else {
            throw AudioError(.unsupportedDataFormat, "an output queue needs a sample rate and 1 to 32 channels, not \(format)")
        }
        self.format = format
        self.callback = callback
        channels = Int(format.channelsPerFrame)
        let output = StreamDescription.float32(sampleRate: format.sampleRate, channels: format.channelsPerFrame, interleaved: true)
        converter = try AudioConverter(from: format, to: output, magicCookie: magicCookie)
        try converter.prepare()
        unit = OutputUnit(backend: backend, options: options)
        try unit.setStreamFormat(output)
        ring = SampleRing(channels: channels, minimumFrames: max(8192, Int(format.sampleRate / 2)))
        // The thread holds the queue only for one step at a time, so dropping the queue ends it.
        thread = PlaybackThread(name: "tonearm-queue") { [weak self] in
            var wasRunning = false
            while let queue = self, queue.step(&wasRunning) {}
        }
    }

    deinit { dispose() }

    /// Makes a buffer of `byteSize` bytes (`AudioQueueAllocateBuffer`,
    /// `AudioQueueAllocateBufferWithPacketDescriptions`).
    public func allocateBuffer(byteSize: Int, packetDescriptionCapacity: Int = 0) throws(AudioError) -> AudioQueueBuffer {
        guard byteSize > 0, byteSize <= 1 << 28, packetDescriptionCapacity >= 0 else {
            throw AudioError(.invalidBuffer, "a queue buffer of \(byteSize) bytes")
        }
        return AudioQueueBuffer(capacity: byteSize, descriptions: packetDescriptionCapacity, queue: self)
    }

    /// Adds a filled buffer to the queue (`AudioQueueEnqueueBuffer`). `packetDescriptions`
    /// (or the buffer's own) are needed for packets of varying size.
    public func enqueue(_ buffer: AudioQueueBuffer, packetDescriptions: [PacketDescription]? = nil) throws(AudioError) {
        guard buffer.queue === self else { throw AudioError(.invalidBuffer, "the buffer belongs to another queue") }
        guard buffer.audioDataByteSize > 0, buffer.audioDataByteSize <= buffer.audioDataBytesCapacity else {
            throw AudioError(.bufferEmpty, "the buffer holds \(buffer.audioDataByteSize) bytes")
        }
        let descriptions = packetDescriptions ?? (buffer.packetDescriptions.isEmpty ? nil : buffer.packetDescriptions)
        if descriptions == nil && !format.isConstantBitRate {
            throw AudioError(.requiresPacketDescriptions, "packets of varying size need descriptions")
        }
        try lock.withLock { () throws(AudioError) in
            guard !disposed else { throw AudioError(.invalidRunState, "the queue was disposed") }
            pending.append((buffer, descriptions))
            pendingAudio.value = true
        }
        wake.signal()
    }

    /// Starts playing (`AudioQueueStart`); '!dev' when no output opens.
    public func start() throws(AudioError) {
        if running.value {
            playing.value = true
            return
        }
        try unit.initialize()
        let offline = !unit.isRealtime
        let offlineStream = offline ? unit.outputStream : nil
        let ring = self.ring, channels = self.channels
        let playing = self.playing, running = self.running, stopping = self.stopping
        let gain = self.gain, underruns = self.underrunCount, pendingAudio = self.pendingAudio
        let dataSignal = self.dataSignal, wake = self.wake
        try unit.setRenderCallback { [weak unit] flags, _, frames, data in
            guard playing.value else {
                if offline {
                    offlineStream?.trimCurrentBuffer(toFrames: 0)     // paused: nothing is written
                    Clock.sleep(seconds: 0.005)     // and the virtual clock idles
                }
                flags.insert(.outputIsSilence)
                return
            }
            let out = data[0].baseAddress!.assumingMemoryBound(to: Float.self)
            var n = 0
            while true {
                // The flag first, then the ring: once the queue's thread says nothing is
                // pending, everything it wrote before is seen by this mix.
                let more = pendingAudio.value
                n += ring.mix(into: out + n * channels, frames: frames - n, gain: gain.value)
                if n == frames { break }
                if stopping.value && !more {
                    running.value = false      // played out: stop after this buffer
                    unit?.stop(drain: true)
                    break
                }
                // Offline, no real time passes: wait for the app's next buffer instead of
                // underrunning (taking what is there first, so its callback can fire).
                guard offline && running.value && playing.value else {
                    if running.value && playing.value { underruns.add(1) }
                    break
                }
                wake.signal()
                dataSignal.wait(seconds: 0.01)
            }
            if offline {
                offlineStream?.trimCurrentBuffer(toFrames: n)     // a file ends with the last frame played
                if n > 0 { wake.signal() }     // real time: the queue's thread polls instead of a lock here
            }
        }
        startPosition.store(ring.framesRead)
        stopping.value = false
        running.value = true
        playing.value = true
        do throws(AudioError) {
            try unit.start()
        } catch {
            running.value = false
            throw AudioError(.cannotStart, error.message)
        }
        isRunningListener?(true)
    }

    /// Pauses (`AudioQueuePause`); `start()` resumes where it paused.
    public func pause() {
        playing.value = false
    }

    /// Stops (`AudioQueueStop`). Immediately: playback ends now and every queued buffer is
    /// handed back through the callback, in order, as Apple's queue does. Otherwise the call
    /// returns at once and the queue stops after playing everything enqueued;
    /// `isRunningListener` tells when.
    public func stop(immediately: Bool) {
        guard running.value else { return }
        if immediately {
            running.value = false
            dataSignal.signal()
            unit.stop()
            dropQueued(outputStopped: true)
            isRunningListener?(false)
        } else {
            flush()
            stopping.value = true
            playing.value = true
            wake.signal()
        }
    }

    /// Decodes what the converter still holds into the queue (`AudioQueueFlush`): call it
    /// after the last buffer so that its last frames play.
    public func flush() {
        lock.withLock {
            pending.append((nil, nil))
            pendingAudio.value = true
        }
        wake.signal()
    }

    /// Drops every queued buffer without stopping (`AudioQueueReset`); each comes back through
    /// the callback, in order, so an app that refills there gets all of its buffers back.
    public func reset() {
        dropQueued(outputStopped: !running.value)
    }

    /// Flushes every queued and decoded buffer and hands them back through the callback (on
    /// the queue's thread). With the output stopped the ring empties at once; while it runs,
    /// the render thread skips what was written at its next call.
    private func dropQueued(outputStopped: Bool) {
        lock.withLock {
            returning += inFlight.map(\.buffer)
            if let b = convertingBuffer { returning.append(b) }
            if let b = decodingBuffer { returning.append(b) }
            returning += pending.compactMap(\.buffer)
            pending.removeAll()
            inFlight.removeAll()
            converted.removeAll()
            convertedOffset = 0
            convertingBuffer = nil
            decodingBuffer = nil
            generation &+= 1
            converterNeedsReset = true
            pendingAudio.value = false
            if outputStopped { ring.reset() } else { ring.discardWritten() }
        }
        wake.signal()
    }

    /// Sets a parameter (`AudioQueueSetParameter`).
    public func setParameter(_ parameter: Parameter, _ value: Float) {
        switch parameter {
        case .volume: volume = value
        }
    }

    /// Stops at once and releases the device and the thread (`AudioQueueDispose`).
    public func dispose() {
        let first = lock.withLock { () -> Bool in
            defer { disposed = true }
            return !disposed
        }
        guard first else { return }
        stop(immediately: true)
        unit.uninitialize()
        lock.withLock { alive = false }
        wake.signal()
        thread?.join()
        thread = nil
    }

    // MARK: The queue's thread: decode into the ring, hand back played buffers.

    /// One turn of the queue's thread; false when the queue is disposed. The next buffer is
    /// taken under the lock, decoded without it, and published under it unless a flush came
    /// in between (the generation changed).
    private func step(_ wasRunning: inout Bool) -> Bool {
        var progressed = false
        var failure: AudioError?
        // Decode the next buffer when the last one is all in the ring.
        var work: (buffer: AudioQueueBuffer?, descriptions: [PacketDescription]?, generation: Int, resetFirst: Bool)?
        let goOn = lock.withLock { () -> Bool in
            guard alive else { return false }
            if converted.count == convertedOffset, !pending.isEmpty {
                let next = pending.removeFirst()
                decodingBuffer = next.buffer
                work = (next.buffer, next.descriptions, generation, converterNeedsReset)
                converterNeedsReset = false
            }
            return true
        }
        guard goOn else { return false }
        if let work {
            if work.resetFirst { converter.reset() }
            decoded.removeAll(keepingCapacity: true)
            if let buffer = work.buffer {
                do throws(AudioError) {
                    let raw = UnsafeRawBufferPointer(start: buffer.audioData, count: buffer.audioDataByteSize)
                    let count = work.descriptions?.count ?? buffer.audioDataByteSize / max(1, Int(format.bytesPerPacket))
                    try converter.convert(packets: raw, count: count, descriptions: work.descriptions, into: &decoded)
                    if decodeDelayForTesting > 0 { Clock.sleep(seconds: decodeDelayForTesting) }
                } catch {
                    decoded.removeAll()     // a bad buffer plays as nothing, and is reported
                    converter.reset()
                    failure = error
                }
            } else {
                try? converter.finish(into: &decoded)
                converter.reset()
            }
            progressed = true
        }
        let batch = lock.withLock { () -> [AudioQueueBuffer] in
            if let work {
                if work.generation == generation {
                    swap(&converted, &decoded)
                    convertedOffset = 0
                    convertingBuffer = work.buffer
                    decodingBuffer = nil
                } else {
                    failure = nil     // flushed meanwhile: the buffer went back with the flush
                }
            }
            // Copy what fits into the ring.
            let frameBytes = channels * 4
            if convertedOffset < converted.count {
                let frames = (converted.count - convertedOffset) / frameBytes
                let n = converted.withUnsafeBytes { raw in
                    ring.write((raw.baseAddress! + convertedOffset).assumingMemoryBound(to: Float.self), frames: frames)
                }
                convertedOffset += n * frameBytes
                if n > 0 { progressed = true }
            }
            if convertedOffset >= converted.count, let b = convertingBuffer {
                inFlight.append((b, ring.framesWritten))
                convertingBuffer = nil
            }
            pendingAudio.value = !pending.isEmpty || convertedOffset < converted.count
            // Buffers whose every frame was rendered go back to the app, in order.
            let consumed = ring.framesRead
            while let first = inFlight.first, consumed >= first.ringEnd {
                returning.append(inFlight.removeFirst().buffer)
            }
            defer { returning.removeAll() }
            return returning
        }
        if progressed { dataSignal.signal() }
        if let failure { onDecodeError?(failure) }
        for buffer in batch { callback(self, buffer) }
        let nowRunning = running.value
        if wasRunning && !nowRunning && stopping.value {
            stopping.value = false
            isRunningListener?(false)
        }
        wasRunning = nowRunning
        if !progressed && batch.isEmpty { wake.wait(seconds: AudioPlayerNode.pollInterval) }
        return true
    }
}

import TonearmCore

/// An output device as a backend lists it.
public struct AudioOutputDevice: Sendable, Hashable, CustomStringConvertible {
    /// The name to pass as `AudioOutputOptions.device` (ALSA's `hw:0,0`, Pulse's sink name).
    public var name: String
    /// A human description, when the backend has one.
    public var description: String
    /// The backend's default device.
    public var isDefault: Bool

    public init(name: String, description: String, isDefault: Bool = false) {
        self.name = name
        self.description = description
        self.isDefault = isDefault
    }
}

/// What to open: the device (nil for the default) and how much buffering to ask for.
public struct AudioOutputOptions: Sendable, Hashable {
    /// The device name, as `AudioOutputDevice.name`; nil for the backend's default.
    public var device: String?
    /// The latency to ask the device for, in seconds: the length of its buffer.
    public var latency: Double
    /// Frames rendered per callback; nil lets the backend choose (about a quarter of the latency).
    public var periodFrames: Int?

    public init(device: String? = nil, latency: Double = 0.1, periodFrames: Int? = nil) {
        self.device = device
        self.latency = latency
        self.periodFrames = periodFrames
    }

    /// The period to render in, for a device buffer of `latency` seconds at `rate`.
    func period(at rate: Double) -> Int {
        if let periodFrames { return max(16, min(periodFrames, 1 << 16)) }
        return max(64, min(Int(rate * latency / 4), 1 << 14))
    }
}

/// A sound system Tonearm can play through: ALSA, PulseAudio, CoreAudio, a WAV file or
/// nothing at all.
public protocol AudioOutputBackend: Sendable {
    /// A short name: `alsa`, `pulse`, `coreaudio`, `file` or `null`.
    var name: String { get }
    /// The devices this backend offers; throws when the backend cannot be loaded.
    func devices() throws(AudioError) -> [AudioOutputDevice]
    /// Opens a device for `format`, interleaved linear PCM. The stream it returns may have
    /// another sample type (the device's own); the rate and channel count are kept.
    func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream
}

/// Fills `frames` frames of the stream's format at `buffer`; `sampleTime` counts the frames
/// rendered before. Runs on the device thread: it must not allocate, lock or do I/O.
/// Returns false to end the stream after this buffer.
public typealias DeviceRenderBlock = (_ frames: Int, _ buffer: UnsafeMutableRawPointer, _ sampleTime: Int64) -> Bool

/// An open device. It calls the render block on its own thread from `start` until `stop`.
public protocol AudioOutputStream: AnyObject {
    /// The format the device takes: interleaved linear PCM, Int16, Int32 or Float32.
    var format: StreamDescription { get }
    /// Frames each render call asks for.
    var periodFrames: Int { get }
    /// Frames between the render call and the speaker: the device's buffer.
    var latencyFrames: Int { get }
    /// False for sinks that run as fast as data comes (file, null): a renderer may then wait
    /// for its producer instead of counting an underrun. No real time passes on such a sink.
    var isRealtime: Bool { get }
    /// Starts calling `render`. `onEnd` runs on the device thread when the stream ends by itself:
    /// the block returned false (nil error), or the device failed.
    func start(render: @escaping DeviceRenderBlock, onEnd: @escaping (AudioError?) -> Void) throws(AudioError)
    /// Stops calling the block. With `drain`, what the device holds plays out first.
    /// Safe to call from the render block itself (the stream then ends after that call).
    func stop(drain: Bool)
    /// Frames the device has played so far, as well as it can tell.
    var framesPlayed: Int64 { get }
    /// Called from the render block: of the buffer being rendered, only the first `frames`
    /// frames are audio. A sink without a clock (file, null) keeps only those, so a file holds
    /// what was played, without a lead-in or a tail padded to the period; a real device plays
    /// the whole buffer and ignores this.
    func trimCurrentBuffer(toFrames frames: Int)
}

extension AudioOutputStream {
    public func trimCurrentBuffer(toFrames frames: Int) {}
}

/// A device that takes PCM by blocking writes: the shape of ALSA, PulseAudio's simple API,
/// a file and the null sink. `WriterOutputStream` drives it from a device thread.
public protocol BlockingPCMWriter: AnyObject {
    /// The interleaved format `write` takes.
    var format: StreamDescription { get }
    /// Frames the device buffers.
    var latencyFrames: Int { get }
    var isRealtime: Bool { get }
    /// Writes `frames` frames, blocking until the device takes them.
    func write(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioError)
    /// Blocks until what was written has played.
    func drain()
    /// Drops what was written and not yet played.
    func discard()
    /// Releases the device.
    func close()
}

/// The device thread for a blocking writer: render a period, write it, repeat.
public final class WriterOutputStream: AudioOutputStream, @unchecked Sendable {
    public let writer: any BlockingPCMWriter
    public let periodFrames: Int
    public var format: StreamDescription { writer.format }
    public var latencyFrames: Int { writer.latencyFrames }
    public var isRealtime: Bool { writer.isRealtime }
    public var framesPlayed: Int64 {
        let written = Int64(framesWritten.value)
        return isRealtime ? max(0, written - Int64(latencyFrames)) : written
    }

    private let framesWritten = AtomicCounter()
    /// Frames of the current buffer to write (`trimCurrentBuffer`); the period unless trimmed.
    private let framesToWrite = AtomicCounter()
    private let running = AtomicFlag()
    private let drainOnStop = AtomicFlag()
    /// Guarded by `threadLock`: the device thread reads it when its render block stops the stream.
    private var thread: PlaybackThread?
    private let threadLock = Lock()
    private let buffer: UnsafeMutableRawPointer
    private var closed = false

    public init(writer: any BlockingPCMWriter, periodFrames: Int) {
        self.writer = writer
        self.periodFrames = periodFrames
        buffer = .allocate(byteCount: periodFrames * Int(writer.format.bytesPerFrame), alignment: 16)
    }

    deinit {
        stop(drain: false)
        if !closed { writer.close() }
        buffer.deallocate()
    }

    public func start(render: @escaping DeviceRenderBlock, onEnd: @escaping (AudioError?) -> Void) throws(AudioError) {
        guard !running.value else { return }
        threadLock.withLock { self.thread }?.join()
        running.value = true
        drainOnStop.value = false
        // The thread touches only these, never `self`, so the stream may go away at any time
        // after `stop` has joined it.
        let writer = self.writer, running = self.running, drainOnStop = self.drainOnStop
        let framesWritten = self.framesWritten, buffer = self.buffer, periodFrames = self.periodFrames
        let framesToWrite = self.framesToWrite
        let thread = PlaybackThread(name: "tonearm-device") {
            var failure: AudioError?
            var ended = false
            while running.value {
                framesToWrite.store(periodFrames)
                let more = render(periodFrames, buffer, Int64(framesWritten.value))
                let frames = max(0, min(periodFrames, framesToWrite.value))
                do throws(AudioError) {
                    if frames > 0 { try writer.write(buffer, frames: frames) }
                } catch {
                    failure = error
                    break
                }
                framesWritten.add(frames)
                if !more { ended = true; drainOnStop.value = true; break }
            }
            if drainOnStop.value { writer.drain() } else { writer.discard() }
            let byItself = running.value
            running.value = false
            if byItself || ended || failure != nil { onEnd(failure) }
        }
        threadLock.withLock { self.thread = thread }
    }

    public func trimCurrentBuffer(toFrames frames: Int) {
        if !isRealtime { framesToWrite.store(frames) }
    }

    public func stop(drain: Bool) {
        // A stream that ended by itself already chose to drain; a later stop only waits for it.
        // The flags come first: the render block may stop the stream before `start` has
        // stored the thread.
        if running.value { drainOnStop.value = drain }
        running.value = false
        guard let thread = threadLock.withLock({ self.thread }), !thread.isCurrent else { return }
        thread.join()
        threadLock.withLock { if self.thread === thread { self.thread = nil } }
    }

    /// Closes the device; the stream cannot start again.
    public func close() {
        stop(drain: false)
        if !closed { writer.close(); closed = true }
    }
}

import TonearmCore

/// When a render call happens: the device's sample time (frames rendered before this call)
/// and the host time in nanoseconds of the monotonic clock.
public struct AudioTimeStamp: Sendable, Hashable {
    public var sampleTime: Double
    public var hostTime: UInt64
}

/// Flags a render callback may set (`AudioUnitRenderActionFlags`).
public struct RenderActionFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The buffers hold silence: the unit may skip reading them (`kAudioUnitRenderAction_OutputIsSilence`).
    public static let outputIsSilence = RenderActionFlags(rawValue: 1 << 4)
}

/// The output audio unit (`kAudioUnitSubType_DefaultOutput`, `RemoteIO` on iOS): set a stream
/// format and a render callback, then start. The device thread calls the callback whenever it
/// needs audio (the pull model); buffers it leaves alone play as silence.
///
/// ```swift
/// let unit = OutputUnit()
/// try unit.setStreamFormat(.int16(sampleRate: 44100, channels: 2))
/// try unit.setRenderCallback { flags, timeStamp, frameCount, data in
///     // fill data[0] with frameCount frames
/// }
/// try unit.start()
/// ```
///
/// The callback runs on the device thread: it should not allocate, lock or block, or the
/// device underruns. `stop()` may be called from inside it.
public final class OutputUnit: @unchecked Sendable {
    /// Fills `frameCount` frames into `data` (`AURenderCallback`).
    public typealias RenderCallback = (_ flags: inout RenderActionFlags, _ timeStamp: AudioTimeStamp,
                                       _ frameCount: Int, _ data: AudioBufferList) -> Void

    /// The backend to open, or nil to try the system's in turn (`AudioOutputBackends.system`).
    public let backend: (any AudioOutputBackend)?
    /// Device, latency and period.
    public let options: AudioOutputOptions

    /// The format the callback renders (`kAudioUnitProperty_StreamFormat`, input scope):
    /// native-endian Int16, Int32 or Float32 linear PCM, interleaved or planar. Set it with
    /// `setStreamFormat(_:)` before `initialize()`. Apple's default: Float32, planar, stereo, 44.1 kHz.
    public var streamFormat: StreamDescription {
        get { lock.withLock { format } }
        @available(*, deprecated, message: "use setStreamFormat(_:), which throws once the unit is initialized")
        set { try? setStreamFormat(newValue) }     // ignored once initialized, as the error is
    }

    /// Sets the format the callback renders (`AudioUnitSetProperty` of
    /// `kAudioUnitProperty_StreamFormat`). Once initialized the format is fixed, as in Apple's
    /// units: `kAudioUnitErr_PropertyNotWritable`; uninitialize first to change it.
    public func setStreamFormat(_ format: StreamDescription) throws(AudioError) {
        try lock.withLock { () throws(AudioError) in
            guard stream == nil else {
                throw AudioError(.propertyNotWritable, "the stream format cannot change once the unit is initialized; uninitialize it first")
            }
            self.format = format
        }
    }

    /// Called on the device thread when the unit stops by itself, after the last buffer was
    /// written: `stop()` from inside the render callback (nil), or the device failed (the error).
    /// `start()` takes the handler set at that time.
    public var onEnd: ((AudioError?) -> Void)? {
        get { lock.withLock { endHandler } }
        set { lock.withLock { endHandler = newValue } }
    }

    /// The name of the backend that opened, once initialized.
    public var backendName: String? { lock.withLock { openedBackendName } }
    /// The device's format (the callback's format, interleaved, maybe another sample type).
    public var deviceFormat: StreamDescription? { currentStream?.format }
    /// Frames per render call, once initialized.
    public var framesPerCall: Int { currentStream?.periodFrames ?? 0 }
    /// Seconds between a render call and the speaker.
    public var latency: Double {
        guard let stream = currentStream else { return 0 }
        return Double(stream.latencyFrames) / stream.format.sampleRate
    }
    /// True on a sink with a virtual clock (file, null), which never waits in real time.
    public var isRealtime: Bool { currentStream?.isRealtime ?? true }
    /// Whether the device is calling the callback.
    public var isRunning: Bool { running.value }
    /// Frames played by the device so far.
    public var framesPlayed: Int64 { currentStream?.framesPlayed ?? 0 }

    private let running = AtomicFlag()
    // The control side's state, guarded by `lock`: any thread may ask for `framesPlayed` while
    // another stops the unit. The render block never reads these (`start` hands it what it
    // needs as constants), so rendering takes no lock. No stream method is called with the
    // lock held: `stop` joins the device thread, which may itself be calling `stop`.
    private let lock = Lock()
    private var format: StreamDescription = .float32(sampleRate: 44100, channels: 2, interleaved: false)
    private var endHandler: ((AudioError?) -> Void)?
    private var openedBackendName: String?
    private var callback: RenderCallback?
    private var stream: (any AudioOutputStream)?
    private var copier: SampleCopier?
    private var clientBuffers: [UnsafeMutableRawPointer] = []
    private var list: UnsafeMutablePointer<UnsafeMutableRawBufferPointer>?
    private var bufferCount = 0

    private var currentStream: (any AudioOutputStream)? { lock.withLock { stream } }

    public init(backend: (any AudioOutputBackend)? = nil, options: AudioOutputOptions = AudioOutputOptions()) {
        self.backend = backend
        self.options = options
    }

    deinit {
        uninitialize()
    }

    /// Sets the render callback (`kAudioUnitProperty_SetRenderCallback`). The device thread
    /// holds the callback while it runs: `kAudioUnitErr_CannotDoInCurrentContext` while the
    /// unit is running; stop it first.
    public func setRenderCallback(_ callback: @escaping RenderCallback) throws(AudioError) {
        guard !running.value else {
            throw AudioError(.cannotDoInCurrentContext, "the render callback cannot change while the unit is running; stop it first")
        }
        lock.withLock { self.callback = callback }
    }

    /// The open stream, for the engine and the queue to trim an offline sink's buffers.
    var outputStream: (any AudioOutputStream)? { lock.withLock { stream } }

    /// Opens the device (`AudioUnitInitialize`). '!dev' lists every backend tried and why it
    /// failed; 'fmt?' for a stream format no device takes.
    public func initialize() throws(AudioError) {
        // Under the lock throughout, so that two threads initializing open one device.
        try lock.withLock { () throws(AudioError) in try initializeLocked() }
    }

    private func initializeLocked() throws(AudioError) {
        guard stream == nil else { return }
        let device = try OutputFormat.deviceFormat(for: format)
        let opened: (name: String, stream: any AudioOutputStream)
        if let backend {
            opened = (backend.name, try backend.open(format: device, options: options))
        } else {
            opened = try AudioOutputBackends.openFirst(AudioOutputBackends.system, format: device, options: options)
        }
        let s = opened.stream
        openedBackendName = opened.name
        let client = PCMBuffer.commonFormat(of: format)!
        let channels = Int(format.channelsPerFrame)
        let copier = SampleCopier(client: client, device: PCMBuffer.commonFormat(of: s.format)!,
                                  channels: channels, clientInterleaved: format.isInterleaved)
        bufferCount = format.isInterleaved ? 1 : channels
        let list = UnsafeMutablePointer<UnsafeMutableRawBufferPointer>.allocate(capacity: bufferCount)
        let bytesPerBuffer = s.periodFrames * Int(format.bytesPerFrame)
        if !copier.isIdentity {
            clientBuffers = (0..<bufferCount).map { _ in .allocate(byteCount: bytesPerBuffer, alignment: 16) }
        }
        for i in 0..<bufferCount {
            // Identity: the render block points buffer 0 at the device's buffer on each call.
            list[i] = clientBuffers.isEmpty ? UnsafeMutableRawBufferPointer(start: nil, count: 0)
                : UnsafeMutableRawBufferPointer(start: clientBuffers[i], count: bytesPerBuffer)
        }
        self.list = list
        self.copier = copier
        stream = s
    }

    /// Starts the device (`AudioOutputUnitStart`), initializing first if needed.
    public func start() throws(AudioError) {
        try initialize()
        // Everything the render block uses, taken once; `running` is set under the lock so
        // that a second `start` meanwhile returns.
        let taken = lock.withLock { () -> (stream: any AudioOutputStream, copier: SampleCopier, list: UnsafeMutablePointer<UnsafeMutableRawBufferPointer>,
                                           callback: RenderCallback?, onEnd: ((AudioError?) -> Void)?, frameBytes: Int,
                                           buffers: [UnsafeMutableRawPointer], count: Int)? in
            guard let stream, let copier, let list, !self.running.value else { return nil }
            self.running.value = true
            return (stream, copier, list, callback, endHandler, Int(format.bytesPerFrame), clientBuffers, bufferCount)
        }
        guard let (stream, copier, list, callback, onEnd, clientFrameBytes, buffers, count) = taken else { return }
        let running = self.running
        var started = false
        defer { if !started { running.value = false } }
        try stream.start(render: { frames, out, sampleTime in
            let bytes = frames * clientFrameBytes
            if copier.isIdentity {
                list[0] = UnsafeMutableRawBufferPointer(start: out, count: bytes)
            } else {
                for i in 0..<count { list[i] = UnsafeMutableRawBufferPointer(start: buffers[i], count: bytes) }
            }
            for i in 0..<count { list[i].baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: bytes) }
            var flags: RenderActionFlags = []
            callback?(&flags, AudioTimeStamp(sampleTime: Double(sampleTime), hostTime: Clock.nanoseconds),
                      frames, AudioBufferList(list, count: count))
            if flags.contains(.outputIsSilence) {
                for i in 0..<count { list[i].baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: bytes) }
            }
            if !copier.isIdentity {
                copier.copy(frames: frames, from: AudioBufferList(list, count: count), to: out)
            }
            return running.value
        }, onEnd: { error in
            running.value = false
            onEnd?(error)
        })
        started = true
    }

    /// Stops the device (`AudioOutputUnitStop`). What the device holds is dropped; pass
    /// `drain: true` to let it play out. Safe to call from the render callback.
    public func stop(drain: Bool = false) {
        running.value = false
        currentStream?.stop(drain: drain)
    }

    /// Closes the device (`AudioUnitUninitialize`); `initialize()` opens it again. Not from the
    /// render callback: stop there, and uninitialize from another thread.
    public func uninitialize() {
        stop()
        let (s, buffers, list) = lock.withLock { () -> ((any AudioOutputStream)?, [UnsafeMutableRawPointer], UnsafeMutablePointer<UnsafeMutableRawBufferPointer>?) in
            defer {
                stream = nil
                clientBuffers = []
                self.list = nil
                copier = nil
                openedBackendName = nil
            }
            return (stream, clientBuffers, self.list)
        }
        if let s = s as? WriterOutputStream { s.close() }
        for b in buffers { b.deallocate() }
        list?.deallocate()
    }
}

/// The backends Tonearm knows, and opening the first that works.
public enum AudioOutputBackends {
    /// The system's sound backends in the order tried: CoreAudio on Apple platforms;
    /// PulseAudio (or PipeWire's Pulse server), then ALSA elsewhere.
    public static var system: [any AudioOutputBackend] {
        #if canImport(AudioToolbox)
        return [CoreAudioOutputBackend()]
        #else
        return [PulseOutputBackend(), ALSAOutputBackend()]
        #endif
    }

    /// A backend by its short name: `pulse`, `alsa`, `coreaudio` or `null`. (`file` needs a path:
    /// use `FileOutputBackend`.)
    public static func named(_ name: String) -> (any AudioOutputBackend)? {
        switch name.lowercased() {
        case "pulse", "pulseaudio", "pipewire": return PulseOutputBackend()
        case "alsa": return ALSAOutputBackend()
        case "null": return NullOutputBackend()
        #if canImport(AudioToolbox)
        case "coreaudio": return CoreAudioOutputBackend()
        #endif
        default: return nil
        }
    }

    /// Opens `format` on the first backend that can; '!dev' otherwise, with each backend's
    /// reason in the message.
    public static func openFirst(_ backends: [any AudioOutputBackend], format: StreamDescription,
                                 options: AudioOutputOptions) throws(AudioError) -> (name: String, stream: any AudioOutputStream)
    {
        var reasons: [String] = []
        for backend in backends {
            do throws(AudioError) {
                return (backend.name, try backend.open(format: format, options: options))
            } catch {
                reasons.append("\(backend.name): \(error.message)")
            }
        }
        throw AudioError(.badDevice, "no sound output could be opened (" + reasons.joined(separator: "; ") + ")")
    }
}

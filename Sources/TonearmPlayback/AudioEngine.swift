import TonearmCore

/// The mixer every player node feeds (`AVAudioMixerNode`): a master volume.
public final class AudioMixerNode: @unchecked Sendable {
    let gain = AtomicFloat(1)
    /// Linear gain on the mix, 0 … 16.
    public var outputVolume: Float {
        get { gain.value }
        set { gain.value = max(0, min(16, newValue.isFinite ? newValue : 1)) }
    }
}

/// A playback graph, as `AVAudioEngine`: player nodes mixed into one output.
///
/// ```swift
/// let engine = AudioEngine(format: .float32(sampleRate: 44100, channels: 2))
/// let player = AudioPlayerNode()
/// engine.attach(player)
/// engine.connect(player, to: engine.mainMixerNode)
/// try player.scheduleFile("a.flac")
/// try engine.start()
/// player.play()
/// ```
///
/// The engine renders Float32 at its format's rate and channel count; every node converts
/// what it plays to that. The render path mixes the nodes' rings and never allocates or locks.
/// On a sink with a virtual clock (file, null) it waits for the nodes instead of underrunning,
/// so rendering offline is exact and as fast as decoding; and while no node has audio to play
/// (before `play()`, after the last item) no time passes there: nothing is written, so a file
/// holds exactly what the nodes played, whether `start()` came before `play()` or after.
public final class AudioEngine: @unchecked Sendable {
    /// The format of the mix: Float32, interleaved, at the rate and channel count given.
    public let format: StreamDescription
    /// The mixer every attached node feeds.
    public let mainMixerNode = AudioMixerNode()
    /// The attached nodes.
    public var attachedNodes: [AudioPlayerNode] { graphLock.withLock { nodeList } }
    /// The output; its backend and options are fixed at init.
    public let outputUnit: OutputUnit

    /// Whether the output is running.
    public var isRunning: Bool { running.value }
    /// Underruns summed over the nodes.
    public var underruns: Int { attachedNodes.reduce(0) { $0 + $1.underruns } }
    /// Frames rendered since the engine was made; on a sink without a clock (file, null), the
    /// frames the nodes filled, which are the frames written.
    public var renderedFrames: Int64 { Int64(rendered.value) }
    /// Frames the device has played (rendered minus what its buffer still holds).
    public var framesPlayed: Int64 { outputUnit.framesPlayed }

    /// When true, an offline engine (file or null sink) stops by itself once every node has
    /// played all it was given; `onIdle` then runs on the device thread, after the last
    /// buffer was written.
    public var stopsWhenIdle: Bool {
        get { stopsWhenIdleFlag.value }
        set { stopsWhenIdleFlag.value = newValue }
    }
    @Synchronized public var onIdle: (@Sendable () -> Void)? = nil
    /// Called on the device thread when the output fails while running.
    @Synchronized public var onError: (@Sendable (AudioError) -> Void)? = nil

    let running = AtomicFlag()
    private let rendered = AtomicCounter()
    private let stopsWhenIdleFlag = AtomicFlag()
    // Guarded by `graphLock`: a thread may attach while another reads `attachedNodes` or
    // `underruns`. The render block reads only `nodes`, whose count is stored after its entry.
    private let graphLock = Lock()
    private var nodeList: [AudioPlayerNode] = []
    private let nodes = NodeTable()

    /// An engine mixing to `format`'s rate and channel count, on `backend` (nil: the system's).
    public init(format: StreamDescription = .float32(sampleRate: 44100, channels: 2),
                backend: (any AudioOutputBackend)? = nil, options: AudioOutputOptions = AudioOutputOptions())
    {
        self.format = .float32(sampleRate: format.sampleRate, channels: format.channelsPerFrame, interleaved: true)
        outputUnit = OutputUnit(backend: backend, options: options)
        try? outputUnit.setStreamFormat(self.format)     // a new unit is not initialized: cannot fail
    }

    deinit {
        stop()
        for i in 0..<nodes.count { nodes[i].detach() }
    }

    /// Adds a node to the engine (`attach`); it is mixed to the main mixer from then on.
    /// As with AVAudioEngine, a node may be attached while the engine runs.
    public func attach(_ node: AudioPlayerNode) {
        guard node.engine == nil else { return }
        // The ring holds a second of audio: enough to ride out a slow decode or a busy disk.
        node.attach(to: self, format: format, ringFrames: max(Int(format.sampleRate), 8192))
        graphLock.withLock {
            nodes.append(node)
            nodeList.append(node)
        }
    }

    /// Connects a node to a mixer (`connect(_:to:format:)`). Every node feeds the main mixer,
    /// converted to the engine's format, so this only attaches it.
    public func connect(_ node: AudioPlayerNode, to mixer: AudioMixerNode, format: StreamDescription? = nil) {
        attach(node)
    }

    /// Opens the output and starts rendering (`start()`): '!dev' when no output opens.
    public func start() throws(AudioError) {
        guard !running.value else { return }
        let nodes = self.nodes
        let channels = Int(format.channelsPerFrame)
        let mixer = mainMixerNode.gain
        let running = self.running, rendered = self.rendered
        try outputUnit.initialize()
        let offline = !outputUnit.isRealtime
        let offlineStream = offline ? outputUnit.outputStream : nil
        let stopsWhenIdle = self.stopsWhenIdle
        let onIdle = self.onIdle, onError = self.onError
        outputUnit.onEnd = { error in
            running.value = false
            if let error { onError?(error) } else if stopsWhenIdle && offline { onIdle?() }
        }
        try outputUnit.setRenderCallback { [weak unit = outputUnit] flags, _, frames, data in
            let out = data[0].baseAddress!.assumingMemoryBound(to: Float.self)
            let count = nodes.count
            var anyPlaying = false
            // Frames from the start of the buffer that some node filled.
            var audible = 0
            for i in 0..<count {
                let node = nodes[i]
                if node.playing.value { anyPlaying = true }
                audible = max(audible, node.render(into: out, frames: frames, offline: offline, engineRunning: running))
            }
            let gain = mixer.value
            if gain != 1 { for i in 0..<(frames * channels) { out[i] *= gain } }
            if offline {
                // A virtual clock moves only with audio: the silence before a node plays, and
                // after the last frame of what it played, is not written.
                offlineStream?.trimCurrentBuffer(toFrames: audible)
                rendered.add(audible)
                var idle = stopsWhenIdle
                for i in 0..<count where idle && !nodes[i].isIdle { idle = false }
                if idle {
                    unit?.stop(drain: true)     // onEnd calls onIdle once this buffer is out
                } else if audible == 0 {
                    Clock.sleep(seconds: 0.002)     // nothing to play yet: let the virtual clock idle
                }
            } else {
                rendered.add(frames)
            }
            if !anyPlaying { flags.insert(.outputIsSilence) }
        }
        running.value = true
        do throws(AudioError) {
            try outputUnit.start()
        } catch {
            running.value = false
            throw error
        }
    }

    /// Stops the output (`pause()`); `start()` goes on. The nodes keep their place.
    public func pause() {
        running.value = false
        for node in attachedNodes { node.dataSignal.signal() }
        outputUnit.stop()
    }

    /// Stops the output and closes the device (`stop()`). The nodes keep their items.
    public func stop() {
        running.value = false
        for node in attachedNodes { node.dataSignal.signal() }
        outputUnit.uninitialize()
    }

    /// Seconds between rendering and hearing: the device's buffer.
    public var latency: Double { outputUnit.latency }
}

/// The engine's nodes as the render thread reads them, with no lock: append-only, in blocks
/// that never move once allocated, so a node can attach while the render thread walks the
/// table. The count is stored after the entry it admits.
final class NodeTable: @unchecked Sendable {
    static let blockSize = 64
    /// Room for 1024 blocks: 65,536 nodes, far more than memory allows (each node keeps a
    /// second of audio and a thread).
    static let blockCount = 1024
    private let blocks: UnsafeMutablePointer<UnsafeMutablePointer<Unmanaged<AudioPlayerNode>>?>
    private let counter = AtomicCounter()

    init() {
        blocks = .allocate(capacity: Self.blockCount)
        blocks.initialize(repeating: nil, count: Self.blockCount)
    }

    deinit {
        let n = counter.value
        for i in 0..<n { entry(i).pointee.release() }
        for b in 0..<Self.blockCount { blocks[b]?.deallocate() }
        blocks.deallocate()
    }

    /// Nodes in the table; entries below it are complete.
    var count: Int { counter.value }

    subscript(i: Int) -> AudioPlayerNode { entry(i).pointee.takeUnretainedValue() }

    private func entry(_ i: Int) -> UnsafeMutablePointer<Unmanaged<AudioPlayerNode>> {
        blocks[i / Self.blockSize]! + i % Self.blockSize
    }

    /// Adds a node (retained). Callers serialise appends; readers may run meanwhile.
    func append(_ node: AudioPlayerNode) {
        let i = counter.value
        let b = i / Self.blockSize
        precondition(b < Self.blockCount, "more than \(Self.blockSize * Self.blockCount) nodes")
        if blocks[b] == nil { blocks[b] = .allocate(capacity: Self.blockSize) }
        (blocks[b]! + i % Self.blockSize).initialize(to: Unmanaged.passRetained(node))
        counter.store(i + 1)     // after the entry: the render thread reads the count first
    }
}

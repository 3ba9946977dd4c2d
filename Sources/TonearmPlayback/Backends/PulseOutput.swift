import TonearmCore

/// PulseAudio (and PipeWire's Pulse server) through libpulse's simple API, loaded at run time
/// from `libpulse-simple.so.0` and `libpulse.so.0`: the build needs no PulseAudio headers and
/// runs where the libraries are missing (opening then throws '!dev' and says so).
///
/// The device is a sink name as `pactl list short sinks` shows it; nil plays to the server's
/// default sink. The server converts sample types and rates itself, so the stream keeps the
/// format asked for. `options.latency` becomes the stream's target buffer length (`tlength`).
public struct PulseOutputBackend: AudioOutputBackend {
    public let name = "pulse"

    /// How long `devices()` waits for a server that does not answer.
    public var listingTimeout: Double

    public init(listingTimeout: Double = 2) {
        self.listingTimeout = listingTimeout
    }

    public func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        let device = try OutputFormat.deviceFormat(for: format)
        let writer = try PulseWriter(lib: try PulseLibrary.load(), sink: options.device, format: device,
                                     latency: boundedLatency(options.latency))
        return WriterOutputStream(writer: writer, periodFrames: options.period(at: device.sampleRate))
    }
}

/// A playback stream of the simple API, written with blocking `pa_simple_write`.
final class PulseWriter: BlockingPCMWriter {
    let format: StreamDescription
    let latencyFrames: Int
    let isRealtime = true
    /// The sink asked for; nil for the default.
    let sink: String?

    private let lib: PulseLibrary
    private var stream: PulseLibrary.Object?
    private let bytesPerFrame: Int

    init(lib: PulseLibrary, sink: String?, format: StreamDescription, latency: Double) throws(AudioError) {
        self.lib = lib
        self.sink = sink
        self.format = format
        bytesPerFrame = Int(format.bytesPerFrame)
        let sampleFormat: UInt32
        switch PCMBuffer.commonFormat(of: format) {
        case .int16: sampleFormat = PulseConstant.sampleS16
        case .int32: sampleFormat = PulseConstant.sampleS32
        default: sampleFormat = PulseConstant.sampleFloat32
        }
        let targetFrames = max(1, Int(format.sampleRate * latency))
        latencyFrames = targetFrames
        let unset = UInt32.max      // (uint32_t) -1: let the server choose
        // pa_buffer_attr { maxlength, tlength, prebuf, minreq, fragsize }
        var attr: (UInt32, UInt32, UInt32, UInt32, UInt32) =
            (unset, UInt32(clamping: targetFrames * bytesPerFrame), unset, unset, unset)
        var error: Int32 = 0
        let opened: PulseLibrary.Object? = withUnsafeTemporaryAllocation(byteCount: 12, alignment: 4) { spec in
            // pa_sample_spec { uint32 format; uint32 rate; uint8 channels } (12 bytes with padding)
            spec.initializeMemory(as: UInt8.self, repeating: 0)
            spec.storeBytes(of: sampleFormat, toByteOffset: 0, as: UInt32.self)
            spec.storeBytes(of: UInt32(format.sampleRate), toByteOffset: 4, as: UInt32.self)
            spec.storeBytes(of: UInt8(format.channelsPerFrame), toByteOffset: 8, as: UInt8.self)
            return withUnsafePointer(to: &attr) { attr in
                lib.simpleNew(nil, "tonearm", PulseConstant.streamPlayback, sink, "Tonearm playback",
                              UnsafeRawPointer(spec.baseAddress!), nil, UnsafeRawPointer(attr), &error)
            }
        }
        guard let opened else {
            let what = sink.map { "sink '\($0)'" } ?? "the default sink"
            throw AudioError(.badDevice, "PulseAudio: cannot play to \(what): \(lib.message(error))")
        }
        stream = opened
    }

    deinit { close() }

    /// Microseconds between a write and the speaker, as the server reports them now.
    var currentLatencyMicroseconds: UInt64? {
        guard let stream else { return nil }
        var error: Int32 = 0
        let usec = lib.simpleGetLatency(stream, &error)
        return usec == UInt64.max ? nil : usec
    }

    func write(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioError) {
        guard let stream else { throw AudioError(.hardwareNotRunning, "PulseAudio: the stream is closed") }
        var error: Int32 = 0
        // pa_simple_write blocks until the server has taken every byte.
        if lib.simpleWrite(stream, bytes, frames * bytesPerFrame, &error) < 0 {
            throw AudioError(.hardwareNotRunning, "PulseAudio: \(lib.message(error))")
        }
    }

    func drain() {
        guard let stream else { return }
        var error: Int32 = 0
        _ = lib.simpleDrain(stream, &error)
    }

    func discard() {
        guard let stream else { return }
        var error: Int32 = 0
        _ = lib.simpleFlush(stream, &error)
    }

    func close() {
        guard let stream else { return }
        self.stream = nil
        lib.simpleFree(stream)
    }
}

import TonearmCore

/// A sink that plays nothing. By default it runs on a virtual clock: it takes frames as fast as
/// they are rendered and no real time passes, which makes playback tests deterministic and fast.
/// With `realtime`, it paces itself as a device would, so underruns can happen.
///
/// `tap`, when set, sees every buffer written (on the device thread), for tests that check
/// what was rendered.
public struct NullOutputBackend: AudioOutputBackend {
    public let name = "null"
    public var realtime: Bool
    public var tap: (@Sendable (UnsafeRawBufferPointer, Int) -> Void)?

    public init(realtime: Bool = false, tap: (@Sendable (UnsafeRawBufferPointer, Int) -> Void)? = nil) {
        self.realtime = realtime
        self.tap = tap
    }

    public func devices() throws(AudioError) -> [AudioOutputDevice] {
        [AudioOutputDevice(name: "null", description: "No output (virtual clock)", isDefault: true)]
    }

    public func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        let device = try OutputFormat.deviceFormat(for: format)
        let writer = NullWriter(format: device, realtime: realtime,
                                latencyFrames: Int(device.sampleRate * options.latency), tap: tap)
        return WriterOutputStream(writer: writer, periodFrames: options.period(at: device.sampleRate))
    }
}

final class NullWriter: BlockingPCMWriter {
    let format: StreamDescription
    let isRealtime: Bool
    let latencyFrames: Int
    private let tap: (@Sendable (UnsafeRawBufferPointer, Int) -> Void)?
    private var written: Int64 = 0
    private var startNanos: UInt64 = 0

    init(format: StreamDescription, realtime: Bool, latencyFrames: Int,
         tap: (@Sendable (UnsafeRawBufferPointer, Int) -> Void)?)
    {
        self.format = format
        isRealtime = realtime
        self.latencyFrames = realtime ? latencyFrames : 0
        self.tap = tap
    }

    func write(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioError) {
        tap?(UnsafeRawBufferPointer(start: bytes, count: frames * Int(format.bytesPerFrame)), frames)
        if isRealtime {
            // Keep at most `latencyFrames` ahead of the wall clock, as a device buffer would.
            if written == 0 { startNanos = Clock.nanoseconds }
            let ahead = written - Int64(latencyFrames)
            if ahead > 0 { Clock.sleep(until: startNanos + UInt64(Double(ahead) / format.sampleRate * 1e9)) }
        }
        written += Int64(frames)
    }

    func drain() {
        if isRealtime { Clock.sleep(until: startNanos + UInt64(Double(written) / format.sampleRate * 1e9)) }
    }

    func discard() {}
    func close() {}
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import TonearmCore
import TonearmPlayback

/// A sink that measures the render path. It runs on `WriterOutputStream`'s device thread like
/// every blocking backend; its `write` switches the allocation counter off on entry and back on
/// at exit, so what is counted is everything that thread does between two writes: the render
/// block and all it calls. The first `warmUpPeriods` renders are not counted (first-call lazy
/// initialisation is not the render path's steady state), then `measuredPeriods` renders are.
///
/// Pass it wherever a backend goes (`OutputUnit(backend:options:)`, a queue, a player), start,
/// call `waitUntilMeasured()`, stop.
struct CountingOutputBackend: AudioOutputBackend {
    let name = "counting"
    /// The device's sample type, when it should differ from the client's (conversion paths).
    var deviceSampleType: PCMBuffer.CommonFormat?
    var periodFrames = 512
    var warmUpPeriods = 8
    var measuredPeriods = 200
    /// Paces writes to the wall clock as a device would (the pause is outside the measurement),
    /// and reports `isRealtime`, for render paths that behave differently on a real device.
    var realtime = false
    let progress = MeasurementProgress()

    /// Options that match the backend's period.
    var options: AudioOutputOptions { AudioOutputOptions(latency: 0.1, periodFrames: periodFrames) }

    func devices() throws(AudioError) -> [AudioOutputDevice] {
        [AudioOutputDevice(name: "counting", description: "Allocation-counting sink", isDefault: true)]
    }

    func open(format: StreamDescription, options _: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        guard let client = PCMBuffer.commonFormat(of: format), format.isInterleaved else {
            throw AudioError(.unsupportedDataFormat, "the counting sink takes interleaved Int16, Int32 or Float32")
        }
        let sample = deviceSampleType ?? client
        let device = StreamDescription.pcm(sampleRate: format.sampleRate, channels: format.channelsPerFrame,
                                           bits: UInt32(sample.bytesPerSample * 8), isFloat: sample == .float32)
        let writer = CountingWriter(format: device, realtime: realtime, progress: progress,
                                    warmUp: warmUpPeriods, measured: measuredPeriods)
        return WriterOutputStream(writer: writer, periodFrames: periodFrames)
    }

    /// Blocks until the measured periods have been rendered. A render path that never gets
    /// there (a hang, a stream that ended early) ends the harness with an error line after a
    /// minute, since the device thread can then not be stopped cleanly.
    func waitUntilMeasured(scenario: String) {
        var waited = 0
        while !progress.isDone {
            usleep(1000)
            waited += 1
            if waited == 60_000 {
                Harness.fail(scenario: scenario, "timed out after \(progress.writes) device writes")
            }
        }
    }
}

/// How far the device thread got; shared by the backend and its writers.
final class MeasurementProgress: Sendable {
    private let writeCount = Atomic<Int>(0)
    private let audible = Atomic<Int>(0)
    private let done = Atomic<Bool>(false)

    var writes: Int { writeCount.load(ordering: .acquiring) }
    /// Measured renders that wrote something other than zeros.
    var audibleRenders: Int { audible.load(ordering: .acquiring) }
    var isDone: Bool { done.load(ordering: .acquiring) }

    func nextWrite() -> Int { writeCount.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue }
    func countAudible() { audible.wrappingAdd(1, ordering: .relaxed) }
    func finish() { done.store(true, ordering: .releasing) }
}

final class CountingWriter: BlockingPCMWriter {
    let format: StreamDescription
    let isRealtime: Bool
    let latencyFrames = 0
    private let progress: MeasurementProgress
    private let warmUp: Int
    private let measured: Int
    private var startNanos: UInt64 = 0
    private var written: Int64 = 0

    init(format: StreamDescription, realtime: Bool, progress: MeasurementProgress, warmUp: Int, measured: Int) {
        self.format = format
        isRealtime = realtime
        self.progress = progress
        self.warmUp = warmUp
        self.measured = measured
    }

    func write(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioError) {
        AllocationCounter.pause()
        // Write n follows render n: renders warmUp+1 ... warmUp+measured are counted.
        let n = progress.nextWrite()
        if n > warmUp && n <= warmUp + measured && isAudible(bytes, frames: frames) { progress.countAudible() }
        if n >= warmUp + measured {
            progress.finish()
            usleep(200)    // a virtual clock would spin until the scenario stops the stream
            return
        }
        if isRealtime { pace(frames) }
        if n >= warmUp { AllocationCounter.resume() }
    }

    private func isAudible(_ bytes: UnsafeRawPointer, frames: Int) -> Bool {
        let raw = UnsafeRawBufferPointer(start: bytes, count: frames * Int(format.bytesPerFrame))
        return raw.contains { $0 != 0 }
    }

    private func pace(_ frames: Int) {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let now = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        if written == 0 { startNanos = now }
        written += Int64(frames)
        let due = startNanos + UInt64(Double(written) / format.sampleRate * 1e9)
        if due > now { usleep(UInt32((due - now) / 1000)) }
    }

    func drain() {}
    func discard() {}
    func close() {}
}

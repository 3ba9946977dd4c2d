#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmConvert
import TonearmCore
import TonearmPlayback

// The render paths measured. Each renders 8 periods of 512 frames to warm up, then 200 counted
// periods, through its own CountingOutputBackend (on a virtual clock, or paced to the wall clock
// with `realtime: true`, where the render paths take their real-device branches). To add one:
//
//     Scenario("audioqueue-int16") { backend in
//         let queue = ... // on `backend` (its `options` match the backend's period)
//         ... start it ...
//         backend.waitUntilMeasured(scenario: "audioqueue-int16")
//         ... stop it ...
//     },
//
// RenderAllocationTests asserts zero allocations and zero frees for every scenario here except
// the controls, which must count exactly their `expectedPerRender` calls on every render.
var allScenarios: [Scenario] { [
    Scenario("outputunit-int16-interleaved") { backend in
        // Seed 004's format: the client's buffer is the device's buffer (the identity path).
        try measureOutputUnit("outputunit-int16-interleaved", on: backend,
                              format: .int16(sampleRate: 44100, channels: 2), callback: int16SineCallback(channels: 2))
    },
    Scenario("outputunit-float32-planar") { backend in
        // Apple's default format: planar client buffers copied into the interleaved device buffer.
        try measureOutputUnit("outputunit-float32-planar", on: backend,
                              format: .float32(sampleRate: 48000, channels: 2), callback: float32PlanarSineCallback(channels: 2))
    },
    Scenario("outputunit-int16-to-float32-device", backend: CountingOutputBackend(deviceSampleType: .float32)) { backend in
        // The device takes another sample type: the copier converts.
        try measureOutputUnit("outputunit-int16-to-float32-device", on: backend,
                              format: .int16(sampleRate: 44100, channels: 2), callback: int16SineCallback(channels: 2))
    },
    Scenario("audioqueue-int16") { backend in
        // Seed 002: the render path mixes the queue's ring; on a virtual clock it waits for the queue.
        try measureAudioQueue("audioqueue-int16", on: backend)
    },
    Scenario("audioqueue-int16-realtime", backend: CountingOutputBackend(realtime: true)) { backend in
        // On a real device the render path never waits: it mixes what is there.
        try measureAudioQueue("audioqueue-int16-realtime", on: backend)
    },
    Scenario("audioengine-player-node") { backend in
        // Seed 001: a scheduled buffer on a player node, node volume and mixer volume.
        try measureEngine("audioengine-player-node", on: backend)
    },
    Scenario("audioengine-player-node-realtime", backend: CountingOutputBackend(realtime: true)) { backend in
        try measureEngine("audioengine-player-node-realtime", on: backend)
    },
    Scenario("audioplayer-two-wav-files") { backend in
        // `tonearm play a.wav b.wav`: the track change falls inside the measured periods.
        let base = "/tmp/RenderAllocCheck-\(getpid())"
        let paths = [base + "-a.wav", base + "-b.wav"]
        defer { for p in paths { unlink(p) } }
        let sine = Sine(sampleRate: 44100)
        for p in paths { try writeSineWAV(p, frames: 66150, sine: sine) }    // 1.5 s each
        let player = try AudioPlayer(paths: paths, backend: backend, options: backend.options)
        try player.play()
        backend.waitUntilMeasured(scenario: "audioplayer-two-wav-files")
        player.stop()
    },
    Scenario("control-allocating-callback", expectedPerRender: (1, 1)) { backend in
        // Builds an array every render: the counter must see one allocation and one free per render.
        let sine = Sine(sampleRate: 48000)
        let keeper = ArrayKeeper()
        try measureOutputUnit("control-allocating-callback", on: backend, format: .float32(sampleRate: 48000, channels: 1)) {
            _, _, frames, data in
            var samples = [Float](repeating: 0, count: frames)
            for i in 0..<frames { samples[i] = sine.next() }
            let out = data[0].baseAddress!.assumingMemoryBound(to: Float.self)
            for i in 0..<frames { out[i] = samples[i] }
            keeper.last = samples    // escapes, so the optimiser cannot put it on the stack
        }
    },
    Scenario("control-c-allocations", expectedPerRender: (4, 3)) { backend in
        // The rest of the family, and glibc allocating for itself: an over-aligned Swift allocation
        // (posix_memalign or aligned_alloc underneath), calloc, realloc, and strdup's own malloc.
        let text: StaticString = "render"    // a C string already: no Swift bridging copy
        let cText = UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
        try measureOutputUnit("control-c-allocations", on: backend, format: .int16(sampleRate: 44100, channels: 2)) {
            _, _, _, _ in
            let aligned = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)
            aligned.deallocate()
            free(opaque(realloc(opaque(calloc(4, 16)), 128)))
            free(opaque(strdup(cText)))
        }
    },
] }

/// Plays `callback` through an OutputUnit on `backend` until the measured periods are rendered.
func measureOutputUnit(_ name: String, on backend: CountingOutputBackend, format: StreamDescription,
                       callback: @escaping OutputUnit.RenderCallback) throws(AudioError)
{
    let unit = OutputUnit(backend: backend, options: backend.options)
    try unit.setStreamFormat(format)
    try unit.setRenderCallback(callback)
    try unit.start()
    backend.waitUntilMeasured(scenario: name)
    unit.stop()
    unit.uninitialize()
}

/// Plays Int16 stereo through an AudioQueue of three 16 KB buffers, refilled with a sine on the
/// queue's thread.
func measureAudioQueue(_ name: String, on backend: CountingOutputBackend) throws {
    let sine = Sine(sampleRate: 44100)
    let fill = { (buffer: AudioQueueBuffer) in
        let samples = buffer.audioDataBytesCapacity / 4
        fillInt16Sine(buffer.audioData.assumingMemoryBound(to: Int16.self), frames: samples, channels: 2, sine)
        buffer.audioDataByteSize = samples * 4
    }
    let queue = try AudioQueue.newOutput(format: .int16(sampleRate: 44100, channels: 2), backend: backend,
                                         options: backend.options) { queue, buffer in
        fill(buffer)
        try? queue.enqueue(buffer)
    }
    queue.volume = 0.8
    for _ in 0..<3 {
        let buffer = try queue.allocateBuffer(byteSize: 16384)
        fill(buffer)
        try queue.enqueue(buffer)
    }
    try queue.start()
    backend.waitUntilMeasured(scenario: name)
    queue.stop(immediately: true)
    queue.dispose()
}

/// Plays four seconds of sine scheduled on a player node, as AudioPlayer sets an engine up.
func measureEngine(_ name: String, on backend: CountingOutputBackend) throws {
    let engine = AudioEngine(format: .float32(sampleRate: 48000, channels: 2), backend: backend, options: backend.options)
    let node = AudioPlayerNode()
    engine.attach(node)
    let frames = 4 * 48000
    let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: true, frameCapacity: frames)
    let sine = Sine(sampleRate: 48000)
    buffer.withUnsafeMutableSamples(Float.self) { out in
        for i in 0..<frames {
            let v = sine.next()
            out[2 * i] = v
            out[2 * i + 1] = v
        }
    }
    buffer.frameLength = frames
    try node.scheduleBuffer(buffer)
    node.volume = 0.8
    engine.mainMixerNode.outputVolume = 0.9
    engine.stopsWhenIdle = true
    node.play()
    try engine.start()
    backend.waitUntilMeasured(scenario: name)
    node.stop()
    engine.stop()
}

/// Writes `frames` frames of Int16 stereo sine to a WAV file.
func writeSineWAV(_ path: String, frames: Int, sine: Sine) throws {
    let format = StreamDescription.int16(sampleRate: 44100, channels: 2)
    let file = try ExtAudioFile.create(path: path, type: .wave, format: format)
    let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 44100, channels: 2, interleaved: true, frameCapacity: frames)
    buffer.withUnsafeMutableSamples(Int16.self) { fillInt16Sine($0.baseAddress!, frames: frames, channels: 2, sine) }
    buffer.frameLength = frames
    try file.write(buffer)
    try file.close()
}

func fillInt16Sine(_ out: UnsafeMutablePointer<Int16>, frames: Int, channels: Int, _ sine: Sine) {
    for i in 0..<frames {
        let v = Int16(sine.next() * 32767)
        for c in 0..<channels { out[i * channels + c] = v }
    }
}

/// Hides a pointer from the optimiser, which otherwise removes a C allocation freed unused.
@_optimize(none)
func opaque(_ p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? { p }

/// A 440 Hz sine at half scale, its phase kept between calls.
final class Sine {
    private var phase = 0.0
    private let step: Double

    init(frequency: Double = 440, sampleRate: Double) {
        step = 2 * Double.pi * frequency / sampleRate
    }

    func next() -> Float {
        let v = Float(0.5 * sin(phase))
        phase += step
        if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        return v
    }
}

final class ArrayKeeper {
    var last: [Float] = []
}

func int16SineCallback(channels: Int) -> OutputUnit.RenderCallback {
    let sine = Sine(sampleRate: 44100)
    return { _, _, frames, data in
        fillInt16Sine(data[0].baseAddress!.assumingMemoryBound(to: Int16.self), frames: frames, channels: channels, sine)
    }
}

func float32PlanarSineCallback(channels: Int) -> OutputUnit.RenderCallback {
    let sine = Sine(sampleRate: 48000)
    return { _, _, frames, data in
        for i in 0..<frames {
            let v = sine.next()
            for c in 0..<channels { data[c].baseAddress!.assumingMemoryBound(to: Float.self)[i] = v }
        }
    }
}

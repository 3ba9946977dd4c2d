#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore
import TonearmPlayback

// The render paths measured. Each renders 8 periods of 512 frames to warm up, then 200 counted
// periods, through its own CountingOutputBackend. To add one:
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
            free(realloc(calloc(4, 16), 128))
            free(strdup(cText))
        }
    },
] }

/// Plays `callback` through an OutputUnit on `backend` until the measured periods are rendered.
func measureOutputUnit(_ name: String, on backend: CountingOutputBackend, format: StreamDescription,
                       callback: @escaping OutputUnit.RenderCallback) throws(AudioError)
{
    let unit = OutputUnit(backend: backend, options: backend.options)
    unit.streamFormat = format
    unit.setRenderCallback(callback)
    try unit.start()
    backend.waitUntilMeasured(scenario: name)
    unit.stop()
    unit.uninitialize()
}

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
        let out = data[0].baseAddress!.assumingMemoryBound(to: Int16.self)
        for i in 0..<frames {
            let v = Int16(sine.next() * 32767)
            for c in 0..<channels { out[i * channels + c] = v }
        }
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

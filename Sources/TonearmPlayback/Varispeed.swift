import TonearmCore
import TonearmConvert

/// Playback rate by resampling: interleaved Float32 in, the same sample rate out, `rate`
/// times fewer frames. One filter runs across items, so a rate change mid-album stays gapless.
final class Varispeed {
    let rate: Float
    let channels: Int
    /// The most frames one `process` call writes to the ring.
    let maximumOutput: Int
    private let resampler: Resampler
    private let input: PCMBuffer
    private let output: PCMBuffer
    private var scratch: [Float]

    init(rate: Float, sampleRate: Double, channels: Int, chunk: Int) throws(AudioError) {
        self.rate = rate
        self.channels = channels
        resampler = try Resampler(inputRate: sampleRate * Double(rate), outputRate: sampleRate, channels: channels,
                                  complexity: .normal, quality: 0x20)
        input = PCMBuffer(commonFormat: .float32, sampleRate: sampleRate, channels: channels, interleaved: false,
                          frameCapacity: chunk)
        maximumOutput = resampler.maximumOutputFrames(forInputFrames: chunk) + resampler.filterLength + 64
        output = PCMBuffer(commonFormat: .float32, sampleRate: sampleRate, channels: channels, interleaved: false,
                           frameCapacity: maximumOutput)
        scratch = [Float](repeating: 0, count: maximumOutput * channels)
    }

    func reset() { resampler.reset() }

    /// Resamples `frames` interleaved frames (and, with `flush`, the filter's tail) into the
    /// ring; returns the frames written.
    func process(_ source: UnsafeBufferPointer<Float>, frames: Int, flush: Bool, into ring: SampleRing) -> Int {
        input.frameLength = frames
        input.withUnsafeMutableSamples(Float.self) { d in
            for c in 0..<channels {
                let base = input.channelStart(c)
                for i in 0..<frames { d[base + i] = source[i * channels + c] }
            }
        }
        output.frameLength = 0
        try? resampler.process(input, into: output)
        if flush { try? resampler.flush(into: output) }
        let n = output.frameLength
        output.withUnsafeMutableSamples(Float.self) { s in
            for c in 0..<channels {
                let base = output.channelStart(c)
                for i in 0..<n { scratch[i * channels + c] = s[base + i] }
            }
        }
        return scratch.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: n) }
    }
}

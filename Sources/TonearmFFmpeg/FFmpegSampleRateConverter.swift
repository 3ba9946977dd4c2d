#if FFmpeg
import CFFmpeg
import TonearmCore

/// libswresample resampling planar Float32, for Tonearm's ``Resampler`` when its complexity is
/// `.ffmpeg` (`tonearm convert --src ffmpeg`), as seed 002's player resamples with it.
package final class FFmpegSampleRateConverter {
    private var swr: OpaquePointer?
    package let channels: Int
    private let inputRate: Int32
    private let outputRate: Int32

    package init(inputRate: Double, outputRate: Double, channels: Int) throws(AudioError) {
        FFmpegLog.prepare()
        guard inputRate.rounded() == inputRate, outputRate.rounded() == outputRate,
              inputRate >= 1, outputRate >= 1, inputRate <= Double(Int32.max), outputRate <= Double(Int32.max)
        else {
            throw AudioError(.unsupportedDataFormat, "swresample takes whole sample rates, not \(inputRate) → \(outputRate) Hz")
        }
        self.channels = channels
        self.inputRate = Int32(inputRate)
        self.outputRate = Int32(outputRate)
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        defer { av_channel_layout_uninit(&layout) }
        var s: OpaquePointer?
        var r = withUnsafeMutablePointer(to: &layout) { l in
            swr_alloc_set_opts2(&s, l, AV_SAMPLE_FMT_FLTP, self.outputRate, l, AV_SAMPLE_FMT_FLTP, self.inputRate, 0, nil)
        }
        if r >= 0, s != nil { r = swr_init(s) }
        guard r >= 0, let s else {
            var dead = s
            swr_free(&dead)
            throw AudioError(ffmpeg: r, "swresample could not convert \(inputRate) → \(outputRate) Hz", fallback: .unsupportedDataFormat)
        }
        swr = s
    }

    deinit { swr_free(&swr) }

    /// A bound on the frames one call writes for `n` input frames, the same whatever
    /// swresample holds: the rate ratio, and room for its filter's history (32 taps by
    /// default, at either rate). swresample keeps what does not fit for the next call.
    package func maximumOutputFrames(forInputFrames n: Int) -> Int {
        let ratio = Double(outputRate) / Double(inputRate)
        return Int((Double(max(0, n)) * ratio).rounded(.up)) + Int((64 * max(1, ratio)).rounded(.up)) + 16
    }

    /// Resamples `frames` input frames (or, with nil inputs, flushes what swresample holds)
    /// into channel pointers with room for `capacity` frames; returns the frames written.
    package func convert(_ inputs: UnsafePointer<UnsafePointer<Float>>?, frames: Int,
                         into outputs: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int) throws(AudioError) -> Int
    {
        let out = UnsafeMutableRawPointer(mutating: outputs).assumingMemoryBound(to: Optional<UnsafeMutablePointer<UInt8>>.self)
        let r: Int32
        if let inputs {
            let inp = UnsafeMutableRawPointer(mutating: inputs).assumingMemoryBound(to: Optional<UnsafePointer<UInt8>>.self)
            r = swr_convert(swr, out, Int32(clamping: capacity), inp, Int32(clamping: frames))
        } else {
            r = swr_convert(swr, out, Int32(clamping: capacity), nil, 0)
        }
        if r < 0 { throw AudioError(ffmpeg: r, "swresample", fallback: .invalidInputSize) }
        return Int(r)
    }

    /// Forgets the history, for a new stream.
    package func reset() {
        swr_close(swr)
        _ = swr_init(swr)
    }
}
#endif

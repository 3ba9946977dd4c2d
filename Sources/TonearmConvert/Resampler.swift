import TonearmCore
#if FFmpeg
import TonearmFFmpeg
#endif

/// The converter's sample-rate stage: planar Float32 in, planar Float32 out, at another rate.
///
/// Output frame k is the input signal at input time k · inputRate / outputRate, so output
/// frame 0 is aligned with input frame 0: the filter's latency is compensated and never shows
/// as leading silence or a shift. Input before frame 0 and after the last frame is silence.
/// A stream of N input frames gives exactly ceil(N · outputRate / inputRate) output frames
/// (``flush(into:)`` writes the last ones), and feeding the input in chunks of any sizes gives
/// bit-identical output.
///
/// - Equal rates: a copy.
/// - 'line' (``SampleRateConverterComplexity/linear``): linear interpolation between the two
///   neighbouring frames; no anti-alias filter.
/// - 'norm' and 'bats': a Kaiser-windowed sinc designed in Double, its cutoff halfway between
///   the passband edge and the lower of the two Nyquist frequencies, where the stopband
///   starts (nothing aliases or images above −rejection). When output rate / input rate
///   reduces to L/M with L ≤ 4096 phases, each output uses one precomputed row of taps
///   (44100↔48000, 48000→16000, 8000→44100, 96000→44100…). Other ratios (non-integer rates
///   or a large L) interpolate linearly between the two nearest rows of a fine table.
///   Dot products run in Float with SIMD8, two channels sharing each load of the taps;
///   'bats' Max keeps history and taps in Double, since Float's rounding floor (near
///   −150 dB, well under the 140 dB promised from Medium) would cap its 160 dB design.
/// - 'norm' and 'bats' upsampling by an exact ratio between 1 and 2 (44.1→48, 32→44.1 kHz…)
///   run in two stages: ×2 by the same steep filter applied by overlap-save FFT convolution
///   (two phases of the taps below; 2048-point blocks at 'norm' High, 4096 at 'bats' High),
///   then a polyphase stage from twice the input rate to the output rate whose filter only
///   has to reject from 1.5 × the input rate (16 taps at 'norm' High, 24 at 'bats', which adds
///   10 dB there). 'bats' runs both stages in Double, 'norm' in Float: its FFT transforms two
///   channels at once, so a channel's last bits depend on its partner's (by under 2^-20).
/// - Downsampling by an exact ratio between ½ and 1 (48→44.1, 48→32 kHz…) runs the mirror
///   of that (``ResamplerTwoStageDown``): a short polyphase stage to twice the output rate
///   (12 taps at 'norm' High, 16 at 'bats'; it rejects only what would fold under the
///   output's Nyquist), then ÷2 by the steep filter applied by FFT, in Float for 'norm' and
///   Double for 'bats'. Worst aliases at 48→44.1 kHz, Medium / High / Max: 'norm' −109.5 /
///   −118.7 / −129.0 dB, 'bats' −152.2 / −159.6 / −169.6 dB.
///
/// Quality (Apple's 0…127) scales the filter within its complexity. The stopband always
/// starts at the lower Nyquist; the design adds 9 dB to the rejection for the margin that
/// Kaiser's formulas, Float taps and the fine table's interpolation eat.
///
/// | complexity | quality | passband (× lower Nyquist) | rejection | taps 44.1→48 / 48→44.1 kHz |
/// |---|---|---|---|---|
/// | 'norm' | Min 0…0x1F | 0.80 | 70 dB | 56 / 56 |
/// | 'norm' | Low 0x20…0x3F | 0.85 | 85 dB | 88 / 88 |
/// | 'norm' | Medium 0x40…0x5F | 0.90 | 100 dB | 144 / 160 |
/// | 'norm' | High 0x60…0x7E (default) | 0.90 | 110 dB | 160 / 176 |
/// | 'norm' | Max 0x7F | 0.91 | 120 dB | 192 / 208 |
/// | 'bats' | Min | 0.90 | 110 dB | 160 / 176 |
/// | 'bats' | Low | 0.93 | 125 dB | 256 / 280 |
/// | 'bats' | Medium | 0.95 | 140 dB | 400 / 432 |
/// | 'bats' | High | 0.95 | 150 dB | 424 / 464 |
/// | 'bats' | Max (Double) | 0.96 | 160 dB | 568 / 616 |
///
/// Downsampling lengthens the filter by the ratio (48000→16000 at 'norm' High: 472 taps).
///
/// Measured (single tones, Kaiser-windowed DFT at the exact frequency; ripple up to 0.9 /
/// 0.95 of the lower Nyquist; the worst alias of tones from the output Nyquist up, and the
/// worst image of in-band tones, over 44.1→48, 8→44.1, 44.1→47.952 (fine table), 48→44.1,
/// 96→44.1, 48→16 and 48→47.952 kHz):
///
/// | | ripple | worst alias (down) | worst image (up) |
/// |---|---|---|---|
/// | 'norm' Medium 0x40 | 0.0003 dB | −103.4 dB | −110.9 dB |
/// | 'norm' High 0x60 | 0.0001 dB | −113.1 dB | −121.5 dB |
/// | 'norm' Max 0x7F | 0.00002 dB | −123.5 dB | −137.8 dB |
/// | 'bats' Medium 0x40 | 0.00002 dB | −142.6 dB | −156.2 dB |
/// | 'bats' High 0x60 | 0.00001 dB | −149.2 dB | −156.2 dB |
/// | 'bats' Max 0x7F | 0.00001 dB | −163.3 dB | −168.0 dB |
///
/// The largest ripples are on the fine table (exact tables: under 0.00003 dB). 'bats'
/// High's design reaches 150 dB but its Float rounding floor shows at −149 dB (48→16 kHz);
/// Max in Float would stop near −151 dB, hence Double there.
///
/// THD+N of a 997 Hz sine at −1 dBFS, 44.1→48 kHz (everything but the tone, fitted by least
/// squares): 'norm' High (two stages) −130.5 dB, the images of its 16-tap second stage (one
/// stage gave −140.9 dB at twice the time); 'bats' (two stages) Low −143.0, Medium −149.7,
/// High −150.0, Max −149.9 dB; 'bats' High in one stage in Double −150.0 dB; 48→44.1 kHz
/// (two stages) 'norm' High −129.3 dB (one stage −140.2), 'bats' High −150.2 dB (one stage in
/// Float −139.5). −150 dB is the
/// floor that Float input and output set; soxr at precision 28 reaches the same. The worst
/// images up of 'norm' are those of its two stages at 44.1→48 kHz (6.6 and 19.8 kHz tones).
///
/// Speed (44.1→48 kHz stereo, 10 minutes, one core, CPU time, before the two stages): 'norm'
/// High 1.1 s, 'line' 0.16 s; `sox rate -v` 2.4 s and `rate -h` 1.9 s (with 0.17 s of file
/// reading), ffmpeg's swresample 0.57 s (0.36 s of it decoding and writing; its default
/// 32-tap filter is far shorter).
///
/// Against issue 21's anchor, soxr at precision 28 (through ffmpeg, one thread), 30 s of
/// 16-bit stereo, 44.1→48 kHz, callgrind instruction counts of the whole process: 'norm'
/// High 0.32 G (two stages in Float; one stage was 0.86 G) and 'bats' High 0.62 G (two
/// stages in Double; one stage in Float was 1.76 G) against ffmpeg's 0.89 G, of which soxr
/// is 0.38 G. Time over 1 hour, writing to /dev/null, paired medians on an idle machine:
/// 'norm' 0.44 × and 'bats' 0.96 × ffmpeg with soxr p28. Down, 48→44.1 kHz, for 30 s:
/// 'norm' High 0.37 G (one stage 0.73 G), 'bats' High 0.70 G (one stage in Float 1.48 G),
/// against ffmpeg's 0.88 G; 1 hour: 'norm' 0.55 ×, 'bats' 1.04 ×.
public final class Resampler {
    public let inputRate: Double
    public let outputRate: Double
    public let channels: Int
    public let complexity: SampleRateConverterComplexity
    public let quality: Int

    /// The most channels, as the channel mixer's.
    public static let maximumChannels = 64
    /// The highest rate either side may have, in Hz.
    public static let maximumRate = 8_000_000.0
    /// The largest factor between the two rates, either way.
    public static let maximumRatio = 256.0
    /// The most phases of an exact table.
    public static let maximumExactPhases = 4096

    private enum Engine {
        case copy
        case float(ResamplerEngine<Float>)
        case double(ResamplerEngine<Double>)
        /// Two stages: Double for 'bats', Float for 'norm'.
        case twoStage(ResamplerTwoStage<DoubleFFT>)
        case twoStageFloat(ResamplerTwoStage<FFT>)
        case twoStageDown(ResamplerTwoStageDown<FFT>)
        case twoStageDownDouble(ResamplerTwoStageDown<DoubleFFT>)
        #if FFmpeg
        case ffmpeg(FFmpegSampleRateConverter)
        #endif
    }

    private let engine: Engine

    /// The coefficient table the engine reads (nil for a copy or 'line'), for tests of the
    /// design cache.
    var coefficientTable: UnsafeRawPointer? {
        switch engine {
        case .copy: nil
        case .float(let e): e.mode == .linear ? nil : UnsafeRawPointer(e.table)
        case .double(let e): UnsafeRawPointer(e.table)
        case .twoStage(let e): UnsafeRawPointer(e.second.table)
        case .twoStageFloat(let e): UnsafeRawPointer(e.second.table)
        case .twoStageDown(let e): UnsafeRawPointer(e.first.table)
        case .twoStageDownDouble(let e): UnsafeRawPointer(e.first.table)
        #if FFmpeg
        case .ffmpeg: nil
        #endif
        }
    }
    /// Channel pointers for a call, allocated once.
    private let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// Taps per output frame (0 for a copy, 2 for 'line'); for the two-stage designs, those of
    /// the FFT stage's steep filter per phase (up) or per parity (down), the short stage's
    /// aside.
    public var filterLength: Int {
        switch engine {
        case .copy: 0
        case .float(let e): e.taps
        case .double(let e): e.taps
        case .twoStage(let e): e.taps
        case .twoStageFloat(let e): e.taps
        case .twoStageDown(let e): e.taps
        case .twoStageDownDouble(let e): e.taps
        #if FFmpeg
        case .ffmpeg: 0
        #endif
        }
    }

    /// Whether a channel's rounding depends on the channel beside it: the two-stage engines
    /// transform channels in pairs (by under 2^-20 in Float, 'norm'; in Double, 'bats', far
    /// under Float's last bit, so that its Float output differs only where a value lies that
    /// close to a rounding boundary). Elsewhere a channel comes out bit for bit the same alone
    /// as beside others.
    var roundsChannelsInPairs: Bool {
        switch engine {
        case .twoStage, .twoStageFloat, .twoStageDown, .twoStageDownDouble: true
        default: false
        }
    }

    /// Whether each output takes one exact row of taps (true) or interpolates a fine table.
    var usesExactTable: Bool {
        switch engine {
        case .copy: true
        case .float(let e): e.mode != .interpolated
        case .double(let e): e.mode != .interpolated
        case .twoStage: true
        case .twoStageFloat: true
        case .twoStageDown: true
        case .twoStageDownDouble: true
        #if FFmpeg
        case .ffmpeg: false
        #endif
        }
    }

    /// - Parameters:
    ///   - inputRate, outputRate: in Hz, each 1…8 MHz, at most 256 times apart.
    ///   - channels: 1…64.
    ///   - complexity: 'line', 'norm' or 'bats'.
    ///   - quality: Apple's kAudioConverterSampleRateConverterQuality, 0…127 (Min 0, Low 0x20,
    ///     Medium 0x40, High 0x60, Max 0x7F). Default High.
    /// - Throws: 'fmt?' for rates or channel counts out of those ranges, or a quality
    ///   outside 0…127.
    public convenience init(inputRate: Double, outputRate: Double, channels: Int,
                            complexity: SampleRateConverterComplexity = .normal, quality: Int = 0x60) throws(AudioError)
    {
        try self.init(inputRate: inputRate, outputRate: outputRate, channels: channels, complexity: complexity,
                      quality: quality, forceFloat: false)
    }

    /// `forceFloat` and `forceDouble` choose the engine's precision, and `forceInterpolated`
    /// the fine table, for the tests that measure what each costs.
    init(inputRate: Double, outputRate: Double, channels: Int, complexity: SampleRateConverterComplexity,
         quality: Int, forceFloat: Bool = false, forceDouble: Bool = false, forceInterpolated: Bool = false) throws(AudioError)
    {
        guard inputRate.isFinite, outputRate.isFinite, inputRate >= 1, outputRate >= 1,
              inputRate <= Resampler.maximumRate, outputRate <= Resampler.maximumRate
        else {
            throw AudioError(.unsupportedDataFormat,
                             "sample rates \(inputRate) → \(outputRate) Hz: each must be 1 Hz to \(Int(Resampler.maximumRate)) Hz")
        }
        guard outputRate / inputRate <= Resampler.maximumRatio, inputRate / outputRate <= Resampler.maximumRatio else {
            throw AudioError(.unsupportedDataFormat,
                             "sample rates \(inputRate) → \(outputRate) Hz are more than \(Int(Resampler.maximumRatio)) times apart")
        }
        guard (1...Resampler.maximumChannels).contains(channels) else {
            throw AudioError(.unsupportedDataFormat, "\(channels) channels: the resampler takes 1 to \(Resampler.maximumChannels)")
        }
        guard (0...0x7F).contains(quality) else {
            throw AudioError(.unsupportedDataFormat, "sample-rate converter quality \(quality) is not in 0…127")
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.complexity = complexity
        self.quality = quality
        inputPointers = .allocate(capacity: channels)
        outputPointers = .allocate(capacity: channels)

        if inputRate == outputRate {
            engine = .copy
            return
        }
        if complexity == .ffmpeg {
            #if FFmpeg
            engine = .ffmpeg(try FFmpegSampleRateConverter(inputRate: inputRate, outputRate: outputRate, channels: channels))
            return
            #else
            throw AudioError(.propertyNotSupported, "the 'ffmp' sample-rate converter is FFmpeg's; Tonearm was built without the FFmpeg trait")
            #endif
        }
        // The step between outputs, M/L input frames: exact for rates with up to six
        // decimals (44144.1 Hz is 441441/10), otherwise to 2^-32 of a frame.
        var l = 1 << 32
        var m = Int((inputRate / outputRate * Double(l)).rounded())
        var scale = 1
        for _ in 0...6 {
            if let a = Resampler.scaledInteger(inputRate, scale), let b = Resampler.scaledInteger(outputRate, scale) {
                let g = Resampler.gcd(a, b)
                if b / g <= 1 << 40, a / g <= 1 << 40 {
                    l = b / g
                    m = a / g
                }
                break
            }
            scale *= 10
        }
        if l == m {
            // Rates equal to 10^-6 Hz (44100 against 44100.0000001): a copy too.
            engine = .copy
            return
        }
        let spec = ResamplerFilterSpec.make(complexity, quality: quality)
        let ratio = outputRate / inputRate
        if complexity == .linear {
            engine = .float(ResamplerEngine(mode: .linear, channels: channels, l: l, m: m, filter: nil, finePhases: 0))
            return
        }
        guard let filter = KaiserSinc(ratio: ratio, spec: spec, maximumTaps: 1 << 18) else {
            throw AudioError(.unsupportedDataFormat, "no filter for \(inputRate) → \(outputRate) Hz")
        }
        // The fine table needs fewer phases when the kernel is wider (downsampling): what
        // counts is phases per period of the cutoff.
        var fine = spec.finePhases
        while fine > 16 && Double(fine / 2) >= Double(spec.finePhases) * min(1, ratio) { fine /= 2 }
        let exact = !forceInterpolated && l <= Resampler.maximumExactPhases && l * filter.taps <= 1 << 22
        let tableSize = exact ? l * filter.taps : fine * filter.taps * 2
        guard tableSize <= 1 << 24 else {
            throw AudioError(.unsupportedDataFormat, "the filter for \(inputRate) → \(outputRate) Hz would need \(tableSize) taps")
        }
        if exact && !forceFloat && !forceDouble {
            if complexity == .mastering, let e = ResamplerTwoStage<DoubleFFT>(channels: channels, l: l, m: m, spec: spec, secondMargin: 10) {
                engine = .twoStage(e)
                return
            }
            if complexity == .mastering,
               let e = ResamplerTwoStageDown<DoubleFFT>(channels: channels, l: l, m: m, spec: spec, firstMargin: 10)
            {
                engine = .twoStageDownDouble(e)
                return
            }
            if complexity == .normal, let e = ResamplerTwoStage<FFT>(channels: channels, l: l, m: m, spec: spec, secondMargin: 0) {
                engine = .twoStageFloat(e)
                return
            }
            if complexity == .normal, let e = ResamplerTwoStageDown<FFT>(channels: channels, l: l, m: m, spec: spec, firstMargin: 0) {
                engine = .twoStageDown(e)
                return
            }
        }
        let mode: ResamplerEngine<Float>.Mode = exact ? .exact : .interpolated
        if (spec.usesDouble || forceDouble) && !forceFloat {
            let dmode: ResamplerEngine<Double>.Mode = exact ? .exact : .interpolated
            engine = .double(ResamplerEngine(mode: dmode, channels: channels, l: l, m: m, filter: filter, finePhases: fine))
        } else {
            engine = .float(ResamplerEngine(mode: mode, channels: channels, l: l, m: m, filter: filter, finePhases: fine))
        }
    }

    deinit {
        inputPointers.deallocate()
        outputPointers.deallocate()
    }

    /// rate × scale when that is a whole number (to 10^-6 of one), nil otherwise. The
    /// fraction is scaled apart so that the test stays exact for large rates.
    static func scaledInteger(_ rate: Double, _ scale: Int) -> Int? {
        let whole = rate.rounded(.down)
        let fraction = (rate - whole) * Double(scale)
        guard abs(fraction - fraction.rounded()) <= 1e-6 else { return nil }
        return Int(whole) * scale + Int(fraction.rounded())
    }

    static func gcd(_ a: Int, _ b: Int) -> Int {
        var a = a, b = b
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    /// The most output frames ``process(_:into:)`` can write for `n` input frames; it also
    /// covers what ``flush(into:)`` writes after them.
    public func maximumOutputFrames(forInputFrames n: Int) -> Int {
        let n = max(0, n)
        switch engine {
        case .copy: return n
        case .float(let e): return e.maximumOutputFrames(forInputFrames: n)
        case .double(let e): return e.maximumOutputFrames(forInputFrames: n)
        case .twoStage(let e): return e.maximumOutputFrames(forInputFrames: n)
        case .twoStageFloat(let e): return e.maximumOutputFrames(forInputFrames: n)
        case .twoStageDown(let e): return e.maximumOutputFrames(forInputFrames: n)
        case .twoStageDownDouble(let e): return e.maximumOutputFrames(forInputFrames: n)
        #if FFmpeg
        case .ffmpeg(let e): return e.maximumOutputFrames(forInputFrames: n)
        #endif
        }
    }

    /// Output frames ``flush(into:)`` would write now.
    public var pendingOutputFrames: Int {
        switch engine {
        case .copy: 0
        case .float(let e): e.totalOutputFrames() - e.outputFrames
        case .double(let e): e.totalOutputFrames() - e.outputFrames
        case .twoStage(let e): e.totalOutputFrames() - e.outputFrames
        case .twoStageFloat(let e): e.totalOutputFrames() - e.outputFrames
        case .twoStageDown(let e): e.totalOutputFrames() - e.outputFrames
        case .twoStageDownDouble(let e): e.totalOutputFrames() - e.outputFrames
        #if FFmpeg
        case .ffmpeg(let e): e.maximumOutputFrames(forInputFrames: 0)
        #endif
        }
    }

    private func check(_ buffer: PCMBuffer, _ role: String) throws(AudioError) {
        guard buffer.commonFormat == .float32, !buffer.isInterleaved || buffer.channelCount == 1 else {
            throw AudioError(.unsupportedDataFormat, "the resampler's \(role) must be planar Float32")
        }
        guard buffer.channelCount == channels else {
            throw AudioError(.unsupportedDataFormat, "the resampler's \(role) has \(buffer.channelCount) channels, not \(channels)")
        }
    }

    /// Resamples planar Float32 input, appending the output frames it completes after
    /// `output.frameLength`.
    ///
    /// - Throws: 'fmt?' for a buffer that is not planar Float32 with ``channels`` channels;
    ///   'otsz' when `output` has fewer than ``maximumOutputFrames(forInputFrames:)`` free
    ///   frames (nothing is consumed then).
    public func process(_ input: PCMBuffer, into output: PCMBuffer) throws(AudioError) {
        try check(input, "input")
        try check(output, "output")
        let frames = input.frameLength
        let need = maximumOutputFrames(forInputFrames: frames)
        guard output.frameCapacity - output.frameLength >= need else {
            throw AudioError(.invalidOutputSize, "\(frames) input frames need room for \(need) output frames, not \(output.frameCapacity - output.frameLength)")
        }
        let written = input.withUnsafeMutableSamples(Float.self) { src in
            output.withUnsafeMutableSamples(Float.self) { dst in
                for c in 0..<channels {
                    inputPointers[c] = UnsafePointer(src.baseAddress! + input.channelStart(c))
                    outputPointers[c] = dst.baseAddress! + output.channelStart(c) + output.frameLength
                }
                return processUnchecked(inputPointers, frameCount: frames, into: outputPointers)
            }
        }
        output.frameLength += written
    }

    /// The pointer form of ``process(_:into:)`` for the converter's inner loop: `inputs` and
    /// `outputs` each point at ``channels`` channel pointers; each output channel has room for
    /// `capacity` frames. Returns the frames written.
    public func process(_ inputs: UnsafePointer<UnsafePointer<Float>>, frameCount: Int,
                        into outputs: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int) throws(AudioError) -> Int
    {
        guard frameCount >= 0 else { throw AudioError(.invalidInputSize, "\(frameCount) input frames") }
        let need = maximumOutputFrames(forInputFrames: frameCount)
        guard capacity >= need else {
            throw AudioError(.invalidOutputSize, "\(frameCount) input frames need room for \(need) output frames, not \(capacity)")
        }
        return processUnchecked(inputs, frameCount: frameCount, into: outputs)
    }

    private func processUnchecked(_ inputs: UnsafePointer<UnsafePointer<Float>>, frameCount: Int,
                                  into outputs: UnsafePointer<UnsafeMutablePointer<Float>>) -> Int
    {
        switch engine {
        case .copy:
            for c in 0..<channels { outputs[c].update(from: inputs[c], count: frameCount) }
            return frameCount
        case .float(let e): return e.process(inputs, frames: frameCount, outputs)
        case .double(let e): return e.process(inputs, frames: frameCount, outputs)
        case .twoStage(let e): return e.process(inputs, frames: frameCount, outputs)
        case .twoStageFloat(let e): return e.process(inputs, frames: frameCount, outputs)
        case .twoStageDown(let e): return e.process(inputs, frames: frameCount, outputs)
        case .twoStageDownDouble(let e): return e.process(inputs, frames: frameCount, outputs)
        #if FFmpeg
        case .ffmpeg(let e):
            // The room was checked against maximumOutputFrames, which asks swresample; it
            // fails only on arguments that are wrong, never on the samples.
            return (try? e.convert(inputs, frames: frameCount, into: outputs,
                                   capacity: maximumOutputFrames(forInputFrames: frameCount))) ?? 0
        #endif
        }
    }

    /// After the last input: appends the remaining output frames (the filter's reach past the
    /// end, into silence), so that the stream of N input frames gave exactly
    /// ceil(N · outputRate / inputRate) frames. The next input then starts a new stream.
    ///
    /// - Throws: 'otsz' when `output` lacks room for ``pendingOutputFrames`` (nothing is written then).
    public func flush(into output: PCMBuffer) throws(AudioError) {
        try check(output, "output")
        let remaining = pendingOutputFrames
        guard output.frameCapacity - output.frameLength >= remaining else {
            throw AudioError(.invalidOutputSize, "flushing needs room for \(remaining) output frames")
        }
        guard remaining > 0 else { reset(); return }
        let written = output.withUnsafeMutableSamples(Float.self) { dst in
            for c in 0..<channels { outputPointers[c] = dst.baseAddress! + output.channelStart(c) + output.frameLength }
            switch engine {
            case .copy: return 0
            case .float(let e): e.flush(outputPointers, remaining: remaining)
            case .double(let e): e.flush(outputPointers, remaining: remaining)
            case .twoStage(let e): e.flush(outputPointers, remaining: remaining)
            case .twoStageFloat(let e): e.flush(outputPointers, remaining: remaining)
            case .twoStageDown(let e): e.flush(outputPointers, remaining: remaining)
            case .twoStageDownDouble(let e): e.flush(outputPointers, remaining: remaining)
            #if FFmpeg
            case .ffmpeg(let e):
                // swresample says how much it holds only as a bound; it gives what it has.
                let n = (try? e.convert(nil, frames: 0, into: outputPointers, capacity: remaining)) ?? 0
                e.reset()
                return n
            #endif
            }
            return remaining
        }
        output.frameLength += written
    }

    /// Forgets all history (after a seek); the next input starts a new stream at output frame 0.
    public func reset() { reset(origin: 0) }

    /// ``reset()`` for a stream that starts at input frame `origin` of a longer one, after a
    /// seek: the two-stage engines then place their FFT blocks as for the longer stream, so
    /// that, once the filter has run up, their output is bit for bit the same (the one-stage
    /// engines' is anyway).
    func reset(origin: Int) {
        switch engine {
        case .copy: break
        case .float(let e): e.reset()
        case .double(let e): e.reset()
        case .twoStage(let e): e.reset(origin: origin)
        case .twoStageFloat(let e): e.reset(origin: origin)
        case .twoStageDown(let e): e.reset(origin: origin)
        case .twoStageDownDouble(let e): e.reset(origin: origin)
        #if FFmpeg
        case .ffmpeg(let e): e.reset()
        #endif
        }
    }
}

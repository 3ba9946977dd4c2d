import TonearmCore

/// Downsampling by a ratio between ½ and 1 (48 → 44.1 kHz, 48 → 32 kHz…) in two stages, the
/// mirror of ``ResamplerTwoStage``, in the sample type of `F`: Double for 'bats', Float for
/// 'norm'.
///
/// 1. **Input → 2 × output by polyphase.** At twice the output rate only what would land
///    under the output's Nyquist must go: the images of the input from 1.5 × the output rate
///    up (those below fold no lower than the output's Nyquist, where stage 2 rejects). So
///    this filter is flat to the passband edge and rejects from 1.5 × the output rate: 12
///    taps at 'norm' High, 16 at 'bats' (which adds 10 dB to it). Its cutoff lies above the
///    input's Nyquist, so its phases are not scaled to a DC gain of 1 each (their sums swing
///    with the image at the input rate, which stage 2 removes); the whole chain's gain is the
///    filter's, 1 within its ripple.
/// 2. **÷ 2 by FFT.** The single-stage design's steep filter, at twice the output rate: flat
///    to the passband edge of the output's Nyquist, rejecting from that Nyquist. Output n is
///    Σ c[i]·z[2n − half + 1 + i] over the doubled stream z; split by parity, with w[k] =
///    z[2k + 2] + i·z[2k + 1] and g[j] = c[2j + 1] − i·c[2j], it is Re Σ g[j]·w[n − half/2 + j]:
///    one complex correlation of half the taps at the output rate, by overlap-save. Each
///    block of `size` values of w gives `hop` = size − taps/2 + 1 outputs: one forward
///    transform per channel, and one inverse per pair of channels (each channel's product
///    made Hermitian, so that its inverse is real, and the pair packed as real and
///    imaginary parts).
///
/// Blocks sit at fixed places in the output stream (counted from an origin a seek sets), so
/// any chunking gives the same output; the inverse transform pairs channels, so a channel's
/// last bits depend on its partner's, as in 'norm''s upsampling.
final class ResamplerTwoStageDown<F: ResamplerFFT> {
    typealias S = F.Sample
    let channels: Int
    /// Output rate / input rate, reduced.
    let l: Int, m: Int
    /// Stage 2: taps of each parity (half the filter's), the FFT size and the outputs a
    /// block gives.
    let taps: Int, size: Int, hop: Int
    private let fft: F
    /// FFT of g reversed (a correlation as a convolution), over `size` for the unscaled inverse
    /// and over 2 for the Hermitian half-sum.
    private let spectrumRe: UnsafeMutablePointer<S>, spectrumIm: UnsafeMutablePointer<S>
    /// Stage 1, from the input rate to twice the output rate.
    let first: ResamplerEngine<S>
    /// Per channel, what stage 1 wrote in the current call (`scratchCapacity` frames).
    private let scratch: UnsafeMutablePointer<S>
    private let scratchPointers: UnsafeMutablePointer<UnsafeMutablePointer<S>>
    private let scratchCapacity: Int
    /// Input frames stage 1 takes per round, so that its outputs fit the scratch.
    private let chunk: Int
    /// Per channel, the current block of w as real and imaginary parts, and how many values
    /// of the doubled stream z it holds (2·size when full).
    private let blockRe: UnsafeMutablePointer<S>, blockIm: UnsafeMutablePointer<S>
    private var filledZ = 0
    /// Values of z before z[0] in the first block: the correlation's reach into the past.
    private let leadZ: Int
    /// Transform buffers: the first channel of a pair's (then the pair's inverse), the second's.
    private let vr: UnsafeMutablePointer<S>, vi: UnsafeMutablePointer<S>
    private let yr: UnsafeMutablePointer<S>, yi: UnsafeMutablePointer<S>
    /// Silence for the flush, one chunk per channel.
    private let silence: UnsafeMutablePointer<Float>
    private let silencePointers: UnsafeMutablePointer<UnsafePointer<Float>>
    /// The input of one round of stage 1, per channel.
    private let chunkPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    /// Outputs of the next block not written (a stream started off the grid of blocks).
    private var dropOutputs = 0
    /// Input frames taken since the stream began, and outputs given.
    private(set) var inputFrames = 0, outputFrames = 0

    /// nil when the ratio is not between ½ and 1 (exclusive) or stage 1 would need more than
    /// ``Resampler/maximumExactPhases`` phases. `firstMargin` dB are added to stage 1's
    /// rejection ('bats' adds 10, as its upsampling does to its short stage).
    init?(channels: Int, l: Int, m: Int, spec: ResamplerFilterSpec, firstMargin: Double) {
        guard l < m, 2 * l > m else { return nil }
        let g = Resampler.gcd(2 * l, m)
        let l1 = 2 * l / g, m1 = m / g
        let outPerIn = Double(l) / Double(m)
        // Stage 1 in cycles per input frame: flat to the passband edge of the output's
        // Nyquist, rejecting from 1.5 × the output rate. Stage 2 in cycles per doubled frame:
        // flat to the passband edge, rejecting from a quarter of the doubled rate.
        guard l1 <= Resampler.maximumExactPhases,
              var short = KaiserSinc(pass: spec.passband * 0.5 * outPerIn, stop: 1.5 * outPerIn,
                                     rejection: spec.rejection + firstMargin, maximumTaps: 1 << 10, granule: S.self == Float.self ? 4 : 8),
              let steep = KaiserSinc(pass: spec.passband * 0.25, stop: 0.25, rejection: spec.rejection, maximumTaps: 1 << 14)
        else { return nil }
        short.normalizesPhases = false
        self.channels = channels
        self.l = l
        self.m = m
        taps = steep.taps / 2
        leadZ = steep.half - 1
        size = TwoStageSupport.fftSize(taps: taps)
        hop = size - taps + 1
        fft = F(size: size)
        // g[j] = c[2j + 1] − i·c[2j], reversed; c = the steep filter's phase-0 taps.
        let c = steep.phaseTaps(0)
        var gr = [Double](repeating: 0, count: size), gi = gr
        let scale = 1 / Double(2 * size)
        for j in 0..<taps {
            gr[taps - 1 - j] = c[2 * j + 1] * scale
            gi[taps - 1 - j] = -c[2 * j] * scale
        }
        (spectrumRe, spectrumIm) = TwoStageSupport.spectrum(gr, gi)
        first = ResamplerEngine(mode: .exact, channels: channels, l: l1, m: m1, filter: short, finePhases: 0)
        chunk = 1024
        scratchCapacity = first.maximumOutputFrames(forInputFrames: chunk)
        scratch = .allocate(capacity: scratchCapacity * channels)
        scratch.initialize(repeating: 0, count: scratchCapacity * channels)
        scratchPointers = .allocate(capacity: channels)
        for c in 0..<channels { scratchPointers[c] = scratch + c * scratchCapacity }
        blockRe = .allocate(capacity: 2 * size * channels)
        blockRe.initialize(repeating: 0, count: 2 * size * channels)
        blockIm = blockRe + size * channels
        vr = .allocate(capacity: 4 * size)
        vr.initialize(repeating: 0, count: 4 * size)
        vi = vr + size
        yr = vr + 2 * size
        yi = vr + 3 * size
        silence = .allocate(capacity: chunk)
        silence.initialize(repeating: 0, count: chunk)
        silencePointers = .allocate(capacity: channels)
        for c in 0..<channels { silencePointers[c] = UnsafePointer(silence) }
        chunkPointers = .allocate(capacity: channels)
        chunkPointers.initialize(repeating: UnsafePointer(silence), count: channels)
        reset()
    }

    deinit {
        spectrumRe.deallocate()
        spectrumIm.deallocate()
        scratch.deallocate()
        scratchPointers.deallocate()
        blockRe.deallocate()
        vr.deallocate()
        silence.deallocate()
        silencePointers.deallocate()
        chunkPointers.deallocate()
    }

    /// Starts a new stream whose frame 0 is frame `origin` of a longer one (a seek): when the
    /// origin falls on an output frame, the blocks fall where they fall in a stream started at
    /// that one's frame 0 (stage 1 lines up by itself at the rate steps ``ExtAudioFile`` seeks to).
    func reset(origin: Int = 0) {
        let (q, r) = UInt(max(0, origin)).multipliedFullWidth(by: UInt(l))
        let (outputOrigin, rest) = q == 0 ? r.quotientAndRemainder(dividingBy: UInt(m)) : (0, 1)
        // The first block starts `skip` outputs earlier, with silence, and drops them.
        let skip = rest == 0 ? Int(outputOrigin % UInt(hop)) : 0
        for c in 0..<channels {
            (blockRe + c * size).update(repeating: 0, count: size)
            (blockIm + c * size).update(repeating: 0, count: size)
        }
        filledZ = leadZ + 2 * skip
        dropOutputs = skip
        inputFrames = 0
        outputFrames = 0
        first.reset()
    }

    /// A bound on the outputs `n` more input frames (and a flush) can give: the outputs of a
    /// block held (fewer than `size`), then those of the new frames and stage 1's reach.
    func maximumOutputFrames(forInputFrames n: Int) -> Int {
        n > Int.max / 4 - size ? Int.max : resampledLength(n, l: l, m: m) + size + first.taps + 4
    }

    /// Outputs a whole stream of ``inputFrames`` frames gives: ceil(inputFrames · L / M).
    func totalOutputFrames() -> Int { resampledLength(inputFrames, l: l, m: m) }

    /// Takes `frames` frames of each input channel; writes the outputs the blocks it
    /// completes give.
    func process(_ inputs: UnsafePointer<UnsafePointer<Float>>, frames: Int,
                 _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>) -> Int
    {
        let produced = feed(inputs, frames: frames, outputs, at: 0, limit: Int.max)
        inputFrames += frames
        outputFrames += produced
        return produced
    }

    /// Writes the rest of the stream, `remaining` frames: silence goes through stage 1 until
    /// stage 2 has given every output of the stream. Then both stages start a new stream.
    func flush(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, remaining: Int) {
        var produced = 0
        while produced < remaining {
            produced += feed(silencePointers, frames: chunk, outputs, at: produced, limit: remaining - produced)
        }
        reset()
    }

    /// Stage 1 on `frames` frames, a chunk at a time, its output into the blocks; each full
    /// block through stage 2 (at most `limit` outputs, at `offset`).
    private func feed(_ inputs: UnsafePointer<UnsafePointer<Float>>, frames: Int,
                      _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int, limit: Int) -> Int
    {
        var consumed = 0, produced = 0
        while consumed < frames && produced < limit {
            let count = min(chunk, frames - consumed)
            for c in 0..<channels { chunkPointers[c] = inputs[c] + consumed }
            let made = first.process(UnsafePointer(chunkPointers), frames: count, scratchPointers)
            consumed += count
            var taken = 0
            while taken < made && produced < limit {
                let n = min(made - taken, 2 * size - filledZ)
                for c in 0..<channels { deinterleave(scratchPointers[c] + taken, n, c) }
                filledZ += n
                taken += n
                if filledZ == 2 * size {
                    produced += runBlock(outputs, at: offset + produced, limit: limit - produced)
                }
            }
        }
        return produced
    }

    /// z values into a channel's block: z at block position q goes to w[q / 2], its imaginary
    /// part when q is even, its real part when q is odd (w[k] = z[2k + 2] + i·z[2k + 1], the
    /// block starting on an odd z).
    @inline(__always)
    private func deinterleave(_ src: UnsafePointer<S>, _ n: Int, _ c: Int) {
        let re = blockRe + c * size, im = blockIm + c * size
        var i = 0, k = filledZ >> 1
        if filledZ & 1 == 1 && n > 0 {
            re[k] = src[0]
            i = 1
            k += 1
        }
        // From an even position: (imaginary, real) pairs, four at a time.
        let raw = UnsafeRawPointer(src)
        while i + 8 <= n {
            let v = raw.loadUnaligned(fromByteOffset: i * MemoryLayout<S>.stride, as: SIMD8<S>.self)
            store(v.evenHalf, im + k)
            store(v.oddHalf, re + k)
            i += 8
            k += 4
        }
        while i + 1 < n {
            im[k] = src[i]
            re[k] = src[i + 1]
            i += 2
            k += 1
        }
        if i < n { im[k] = src[i] }
    }

    /// Stage 2 on the full block; keeps its last taps − 1 values of w for the next.
    private func runBlock(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int, limit: Int) -> Int {
        let n = size, first = taps - 1
        let drop = dropOutputs
        dropOutputs = 0
        let count = min(hop - drop, limit)
        var c = 0
        while c < channels {
            let pair = c + 1 < channels
            transform(c, into: vr, vi)
            if pair {
                transform(c + 1, into: yr, yi)
                // V = E₀ + i·E₁, E the Hermitian half-sum of each product: E[k] = (Y[k] +
                // conj Y[−k]) / 2 (the / 2 is in the spectrum).
                hermitianPair(vr, vi, yr, yi)
            } else {
                hermitian(vr, vi)
            }
            fft.inverse(vr, vi)
            let re = vr + first + drop, im = vi + first + drop
            let out0 = outputs[c] + offset
            for i in 0..<count { out0[i] = re[i].output() }
            if pair {
                let out1 = outputs[c + 1] + offset
                for i in 0..<count { out1[i] = im[i].output() }
            }
            c += 2
        }
        for c in 0..<channels {
            let re = blockRe + c * n, im = blockIm + c * n
            re.update(from: re + hop, count: n - hop)
            im.update(from: im + hop, count: n - hop)
        }
        filledZ = 2 * (n - hop)
        return count
    }

    /// Channel c's block, transformed and times the spectrum, into (re, im).
    @inline(__always)
    private func transform(_ c: Int, into re: UnsafeMutablePointer<S>, _ im: UnsafeMutablePointer<S>) {
        re.update(from: blockRe + c * size, count: size)
        im.update(from: blockIm + c * size, count: size)
        fft.forward(re, im)
        var k = 0
        while k < size {
            let ar = load(re + k), ai = load(im + k), gr = load(spectrumRe + k), gi = load(spectrumIm + k)
            store(ar * gr - ai * gi, re + k)
            store(ar * gi + ai * gr, im + k)
            k += 4
        }
    }

    /// (a, b) ← E(a) + i·E(b), E(y)[k] = y[k] + conj y[−k].
    private func hermitianPair(_ ar: UnsafeMutablePointer<S>, _ ai: UnsafeMutablePointer<S>,
                               _ br: UnsafeMutablePointer<S>, _ bi: UnsafeMutablePointer<S>)
    {
        // Bins k and −k together, from the values before either is written. E₀[k] = (pr + qr)
        // + i(pi − qi), E₁[k] = (sr + tr) + i(si − ti), V = E₀ + i·E₁; and E[−k] = conj E[k].
        @inline(__always) func one(_ k: Int) {
            let j = (size - k) & (size - 1)
            let pr = ar[k], pi = ai[k], qr = ar[j], qi = ai[j]
            let sr = br[k], si = bi[k], tr = br[j], ti = bi[j]
            ar[k] = (pr + qr) - (si - ti)
            ai[k] = (pi - qi) + (sr + tr)
            ar[j] = (pr + qr) + (si - ti)
            ai[j] = (sr + tr) - (pi - qi)
        }
        one(0)
        one(size / 2)
        // Bins k … k + 3 against −k … −k − 3, loaded from j = size − k − 3 and reversed.
        @inline(__always) func reversed(_ v: SIMD4<S>) -> SIMD4<S> { SIMD4(v[3], v[2], v[1], v[0]) }
        var k = 1
        while k + 3 < size / 2 {
            let j = size - k - 3
            let pr = load(ar + k), pi = load(ai + k), qr = reversed(load(ar + j)), qi = reversed(load(ai + j))
            let sr = load(br + k), si = load(bi + k), tr = reversed(load(br + j)), ti = reversed(load(bi + j))
            let x = pr + qr, y = pi - qi, u = sr + tr, v = si - ti
            store(x - v, ar + k)
            store(y + u, ai + k)
            store(reversed(x + v), ar + j)
            store(reversed(u - y), ai + j)
            k += 4
        }
        while k < size / 2 {
            one(k)
            k += 1
        }
    }

    /// a ← E(a), E(y)[k] = y[k] + conj y[−k].
    private func hermitian(_ ar: UnsafeMutablePointer<S>, _ ai: UnsafeMutablePointer<S>) {
        for k in 0...(size / 2) {
            let j = (size - k) & (size - 1)
            let sr = ar[k] + ar[j], si = ai[k] - ai[j]
            ar[k] = sr
            ai[k] = si
            ar[j] = sr
            ai[j] = -si
        }
    }

    @inline(__always) private func load(_ p: UnsafeMutablePointer<S>) -> SIMD4<S> { TwoStageSupport.load(p) }
    @inline(__always) private func store(_ v: SIMD4<S>, _ p: UnsafeMutablePointer<S>) { TwoStageSupport.store(v, p) }
}

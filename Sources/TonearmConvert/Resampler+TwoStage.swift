import TonearmCore

/// The complex FFT a two-stage resampler runs its first stage with: ``FFT`` (Float, for
/// 'norm') or ``DoubleFFT`` (for 'bats').
protocol ResamplerFFT: AnyObject {
    associatedtype Sample: ResamplerSample & SIMDScalar
    init(size: Int)
    func forward(_ re: UnsafeMutablePointer<Sample>, _ im: UnsafeMutablePointer<Sample>)
    func inverse(_ re: UnsafeMutablePointer<Sample>, _ im: UnsafeMutablePointer<Sample>)
}

extension FFT: ResamplerFFT {}
extension DoubleFFT: ResamplerFFT {}

/// What the two-stage designs share.
enum TwoStageSupport {
    /// The FFT size for an overlap-save filter of `taps` taps: work per output goes as
    /// size·log₂(size) / (size − taps), near its least at eight times the taps (4096 points for
    /// 'bats' High's 424).
    static func fftSize(taps: Int) -> Int {
        var size = 1024
        while size < 8 * taps { size *= 2 }
        return size
    }

    /// The transform of a complex filter (`re`, `im`, one value per point) computed in Double,
    /// then stored as `S`: the spectrum a block's transform is multiplied by.
    static func spectrum<S: ResamplerSample>(_ re: [Double], _ im: [Double]) -> (UnsafeMutablePointer<S>, UnsafeMutablePointer<S>) {
        var re = re, im = im
        let size = re.count
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in DoubleFFT(size: size).forward(r.baseAddress!, i.baseAddress!) }
        }
        let sr = UnsafeMutablePointer<S>.allocate(capacity: size), si = UnsafeMutablePointer<S>.allocate(capacity: size)
        for k in 0..<size {
            sr[k] = S(re[k])
            si[k] = S(im[k])
        }
        return (sr, si)
    }

    @inline(__always)
    static func load<S: SIMDScalar>(_ p: UnsafeMutablePointer<S>) -> SIMD4<S> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD4<S>.self)
    }

    @inline(__always)
    static func store<S: SIMDScalar>(_ v: SIMD4<S>, _ p: UnsafeMutablePointer<S>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<S>.self)
    }
}

/// Upsampling by a ratio between 1 and 2 (44.1 → 48 kHz, 32 → 44.1 kHz…) in two stages, in
/// the sample type of `F`: Double for 'bats', Float for 'norm'.
///
/// 1. **×2 by FFT.** The single-stage design's steep filter (flat to the passband edge of
///    the input's Nyquist, rejecting from that Nyquist) evaluated at the two instants 0 and ½
///    between input frames: two phases of `taps` taps each, applied by overlap-save
///    convolution. Each block of `size` input frames gives `hop` = size − taps + 1 frames of
///    each phase: one forward transform per pair of channels (the pair packed as real and
///    imaginary parts) and one inverse transform per channel, whose real and imaginary parts
///    come out as the two phases (the filter's spectrum is packed the same way, G = FFT(g₀ +
///    i·g½)), which is the doubled stream interleaved.
/// 2. **2 × input → output by polyphase.** The doubled stream holds nothing between the
///    input's Nyquist and 1.5 × the input rate (stage 1 removed it), and its first image
///    starts there, so this filter only has to be flat to the passband edge and reject from
///    1.5 × the input rate: some 16–24 taps (a single-stage 'bats' High filter has 424).
///
/// Stage 1 blocks sit at fixed places in the stream (counted from an origin that a seek
/// sets, see ``reset(origin:)``), so any chunking of the input gives the same blocks and
/// bit-identical output; its output is the stream a single-stage engine of
/// phases 0 and ½ would give, so stage 2 sees the doubled signal aligned at frame 0 and the
/// output keeps the single-stage timing. Latency inside is up to one block; ``flush`` feeds
/// silence through both stages until every output of the stream is written.
///
/// Rounding: a Float FFT's rounding would show near −138 dB on the 'bats' filter, hence
/// Double there (the THD+N floor is then the Float input and output's); 'norm' promises at
/// most 120 dB, far above Float's rounding. The filter's spectrum is computed in Double either
/// way.
final class ResamplerTwoStage<F: ResamplerFFT> {
    typealias S = F.Sample
    let channels: Int
    /// Output rate / input rate, reduced.
    let l: Int, m: Int
    /// Taps of each of stage 1's phases, the FFT size and the frames each block gives.
    let taps: Int, size: Int, hop: Int
    private let fft: F
    /// Stage 1's filter in the frequency domain: FFT(g₀ + i·g½) / (2·size), g₀ and g½ the two
    /// phases' taps in reverse order (a correlation as a convolution); the 2 undoes the
    /// sum of a pair's two halves, the size the unscaled inverse.
    private let spectrumRe: UnsafeMutablePointer<S>, spectrumIm: UnsafeMutablePointer<S>
    /// Per channel, the current block: `filled` of its `size` frames.
    private let block: UnsafeMutablePointer<S>
    private var filled = 0
    /// Silence before input frame 0 in the first block: the phases' reach into the past.
    private let lead: Int
    /// A pair's forward transform, and each channel's inverse one.
    private let zr: UnsafeMutablePointer<S>, zi: UnsafeMutablePointer<S>
    private let ar: UnsafeMutablePointer<S>, ai: UnsafeMutablePointer<S>
    private let br: UnsafeMutablePointer<S>, bi: UnsafeMutablePointer<S>
    /// Per channel, one block's doubled frames (2·hop), and pointers to them.
    private let doubled: UnsafeMutablePointer<S>
    private let doubledPointers: UnsafeMutablePointer<UnsafePointer<S>>
    /// Stage 2, from twice the input rate to the output rate.
    let second: ResamplerEngine<S>
    /// Input frames taken since the stream began, output frames given, and doubled frames
    /// passed to stage 2.
    private(set) var inputFrames = 0, outputFrames = 0
    private var doubledFrames = 0
    /// Doubled frames of the next block not passed to stage 2 (a stream started off the grid
    /// of blocks: see ``reset(origin:)``).
    private var dropDoubled = 0

    /// nil when the ratio is not between 1 and 2 (exclusive) or stage 2 would need more
    /// than ``Resampler/maximumExactPhases`` phases. `secondMargin` dB are added to stage 2's
    /// rejection: 'bats' adds 10, so that its images stay well under the −150 dB THD+N.
    init?(channels: Int, l: Int, m: Int, spec: ResamplerFilterSpec, secondMargin: Double) {
        guard l > m, l < 2 * m else { return nil }
        let g = Resampler.gcd(l, 2 * m)
        let l2 = l / g, m2 = 2 * m / g
        guard l2 <= Resampler.maximumExactPhases,
              let steep = KaiserSinc(ratio: 2, spec: spec, maximumTaps: 1 << 14),
              // In cycles per doubled frame: flat to the passband edge (a quarter of the
              // doubled rate, times the passband), rejecting from the first image, 1.5 × the
              // input rate.
              let short = KaiserSinc(pass: spec.passband * 0.25, stop: 0.75, rejection: spec.rejection + secondMargin, maximumTaps: 1 << 10)
        else { return nil }
        self.channels = channels
        self.l = l
        self.m = m
        taps = steep.taps
        lead = steep.half - 1
        size = TwoStageSupport.fftSize(taps: taps)
        hop = size - taps + 1
        fft = F(size: size)
        var gr = [Double](repeating: 0, count: size), gi = gr
        let even = steep.phaseTaps(0), odd = steep.phaseTaps(0.5)
        let scale = 1 / Double(2 * size)
        for j in 0..<taps {
            gr[j] = even[taps - 1 - j] * scale
            gi[j] = odd[taps - 1 - j] * scale
        }
        (spectrumRe, spectrumIm) = TwoStageSupport.spectrum(gr, gi)
        block = .allocate(capacity: size * channels)
        block.initialize(repeating: 0, count: size * channels)
        zr = .allocate(capacity: 6 * size)
        zr.initialize(repeating: 0, count: 6 * size)
        zi = zr + size
        ar = zr + 2 * size
        ai = zr + 3 * size
        br = zr + 4 * size
        bi = zr + 5 * size
        doubled = .allocate(capacity: 2 * hop * channels)
        doubled.initialize(repeating: 0, count: 2 * hop * channels)
        doubledPointers = .allocate(capacity: channels)
        for c in 0..<channels { doubledPointers[c] = UnsafePointer(doubled + c * 2 * hop) }
        second = ResamplerEngine(mode: .exact, channels: channels, l: l2, m: m2, filter: short, finePhases: 0)
        reset()
    }

    deinit {
        spectrumRe.deallocate()
        spectrumIm.deallocate()
        block.deallocate()
        zr.deallocate()
        doubled.deallocate()
        doubledPointers.deallocate()
    }

    /// Starts a new stream whose frame 0 is frame `origin` of a longer one (a seek): stage 1's
    /// blocks then fall where they fall in a stream started at that one's frame 0, so once
    /// the filter has run up on real input, every block and output is bit for bit that
    /// stream's (with a rate step from ``ExtAudioFile``, stage 2's phases line up as well).
    func reset(origin: Int = 0) {
        // The first block starts `skip` frames earlier, with silence, and its first `skip`
        // doubled pairs are dropped.
        let skip = max(0, origin) % hop
        for c in 0..<channels { (block + c * size).update(repeating: 0, count: lead + skip) }
        filled = lead + skip
        dropDoubled = 2 * skip
        inputFrames = 0
        outputFrames = 0
        doubledFrames = 0
        second.reset()
    }

    /// A bound on the outputs `n` more input frames (and a flush) can give: up to a block
    /// already held, then the new frames, doubled, through stage 2.
    func maximumOutputFrames(forInputFrames n: Int) -> Int {
        n > Int.max / 4 - size ? Int.max : second.maximumOutputFrames(forInputFrames: 2 * (n + size))
    }

    /// Outputs a whole stream of ``inputFrames`` frames gives: ceil(inputFrames · L / M).
    func totalOutputFrames() -> Int { resampledLength(inputFrames, l: l, m: m) }

    /// Takes `frames` frames of each input channel; writes the outputs the blocks it
    /// completes give.
    func process(_ inputs: UnsafePointer<UnsafePointer<Float>>, frames: Int,
                 _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>) -> Int
    {
        var consumed = 0, produced = 0
        while consumed < frames {
            let count = min(size - filled, frames - consumed)
            for c in 0..<channels {
                let src = inputs[c] + consumed, dst = block + c * size + filled
                for i in 0..<count { dst[i] = S(src[i]) }
            }
            filled += count
            consumed += count
            if filled == size { produced += runBlock(outputs, at: produced, limit: Int.max) }
        }
        inputFrames += frames
        outputFrames += produced
        return produced
    }

    /// Writes the rest of the stream, `remaining` frames: silence goes into stage 1 until the
    /// doubled stream reaches past the input's end by stage 2's window, and stage 2 gives
    /// outputs up to the stream's count. Then both stages start a new stream.
    func flush(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, remaining: Int) {
        let need = 2 * inputFrames + second.taps + 2
        var produced = 0
        while doubledFrames < need && produced < remaining {
            for c in 0..<channels { (block + c * size + filled).update(repeating: 0, count: size - filled) }
            filled = size
            produced += runBlock(outputs, at: produced, limit: remaining - produced)
        }
        // Stage 2's own flush writes any outputs still missing (with silence past what it
        // holds, none when the loop above reached `need`) and resets it.
        second.flush(outputs, at: produced, remaining: remaining - produced)
        reset()
    }

    /// Stage 1 on the full block, then its doubled frames through stage 2 (at most `limit`
    /// outputs, at `offset`); keeps the block's last taps − 1 frames for the next.
    private func runBlock(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int, limit: Int) -> Int {
        let n = size, first = taps - 1
        var c = 0
        while c < channels {
            let pair = c + 1 < channels
            zr.update(from: block + c * n, count: n)
            if pair {
                zi.update(from: block + (c + 1) * n, count: n)
            } else {
                zi.update(repeating: 0, count: n)
            }
            fft.forward(zr, zi)
            // The pair's spectra from Z = X₀ + i·X₁: 2X₀[k] = Z[k] + conj Z[−k], 2X₁[k] =
            // −i·(Z[k] − conj Z[−k]); each times G.
            spectra(0, 0)
            spectra(n / 2, n / 2)
            // Bins k … k + 3 at once, against n − k … n − k − 3 (loaded as four, reversed).
            var k = 1
            while k + 3 < n / 2 {
                spectraQuad(k, n - k - 3)
                spectraQuad(n - k - 3, k)
                k += 4
            }
            while k < n / 2 {
                spectra(k, n - k)
                spectra(n - k, k)
                k += 1
            }
            fft.inverse(ar, ai)
            interleave(ar + first, ai + first, doubled + c * 2 * hop)
            if pair {
                fft.inverse(br, bi)
                interleave(br + first, bi + first, doubled + (c + 1) * 2 * hop)
            }
            c += 2
        }
        for c in 0..<channels {
            let b = block + c * n
            b.update(from: b + hop, count: n - hop)
        }
        filled = n - hop
        let drop = dropDoubled
        dropDoubled = 0
        doubledFrames += 2 * hop - drop
        if drop > 0 {
            for c in 0..<channels { doubledPointers[c] += drop }
        }
        defer {
            if drop > 0 {
                for c in 0..<channels { doubledPointers[c] -= drop }
            }
        }
        return second.process(doubledPointers, frames: 2 * hop - drop, outputs, at: offset, limit: limit)
    }

    /// Bin k of both channels' filtered spectra, from Z[k] and Z[j], j = −k mod size.
    @inline(__always)
    private func spectra(_ k: Int, _ j: Int) {
        let pr = zr[k], pi = zi[k], qr = zr[j], qi = zi[j]
        let gr = spectrumRe[k], gi = spectrumIm[k]
        let x0r = pr + qr, x0i = pi - qi
        let x1r = pi + qi, x1i = qr - pr
        ar[k] = x0r * gr - x0i * gi
        ai[k] = x0r * gi + x0i * gr
        br[k] = x1r * gr - x1i * gi
        bi[k] = x1r * gi + x1i * gr
    }

    /// ``spectra(_:_:)`` for bins k … k + 3, whose partners are j + 3 … j.
    @inline(__always)
    private func spectraQuad(_ k: Int, _ j: Int) {
        let reversed = SIMD4(3, 2, 1, 0)
        let pr = load(zr + k), pi = load(zi + k)
        let qr = load(zr + j)[reversed], qi = load(zi + j)[reversed]
        let gr = load(spectrumRe + k), gi = load(spectrumIm + k)
        let x0r = pr + qr, x0i = pi - qi
        let x1r = pi + qi, x1i = qr - pr
        store(x0r * gr - x0i * gi, ar + k)
        store(x0r * gi + x0i * gr, ai + k)
        store(x1r * gr - x1i * gi, br + k)
        store(x1r * gi + x1i * gr, bi + k)
    }

    @inline(__always) private func load(_ p: UnsafeMutablePointer<S>) -> SIMD4<S> { TwoStageSupport.load(p) }
    @inline(__always) private func store(_ v: SIMD4<S>, _ p: UnsafeMutablePointer<S>) { TwoStageSupport.store(v, p) }

    /// Phase 0 and phase ½, alternately: the doubled stream.
    @inline(__always)
    private func interleave(_ even: UnsafePointer<S>, _ odd: UnsafePointer<S>, _ out: UnsafeMutablePointer<S>) {
        for i in 0..<hop {
            out[2 * i] = even[i]
            out[2 * i + 1] = odd[i]
        }
    }
}

import TonearmCore

/// 'bats' upsampling by a ratio between 1 and 2 (44.1 → 48 kHz, 32 → 44.1 kHz…) in two
/// stages, in Double throughout:
///
/// 1. **×2 by FFT.** The single-stage design's steep filter (flat to 0.95 of the input's
///    Nyquist, rejecting from that Nyquist) evaluated at the two instants 0 and ½ between
///    input frames: two phases of `taps` taps each, applied by overlap-save convolution.
///    Each block of `size` input frames gives `hop` = size − taps + 1 frames of each
///    phase: one forward transform per pair of channels (the pair packed as real and
///    imaginary parts) and one inverse transform per channel, whose real and imaginary parts
///    come out as the two phases (the filter's spectrum is packed the same way, G = FFT(g₀ +
///    i·g½)), which is the doubled stream interleaved.
/// 2. **2 × input → output by polyphase.** The doubled stream holds nothing between the
///    input's Nyquist and 1.5 × the input rate (stage 1 removed it), and its first image
///    starts there, so this filter only has to be flat to the passband edge and reject from
///    1.5 × the input rate: some 24 taps (a single-stage 'bats' High filter has 424).
///
/// Stage 1 blocks sit at fixed places in the stream, so any chunking of the input gives the
/// same blocks and bit-identical output; its output is the stream a single-stage engine of
/// phases 0 and ½ would give, so stage 2 sees the doubled signal aligned at frame 0 and the
/// output keeps the single-stage timing. Latency inside is up to one block; ``flush`` feeds
/// silence through both stages until every output of the stream is written.
///
/// Rounding: a Float FFT's rounding would show near −138 dB on this filter, hence Double;
/// the THD+N floor is then the Float input and output's.
final class ResamplerTwoStage {
    let channels: Int
    /// Output rate / input rate, reduced.
    let l: Int, m: Int
    /// Taps of each of stage 1's phases, the FFT size and the frames each block gives.
    let taps: Int, size: Int, hop: Int
    private let fft: DoubleFFT
    /// Stage 1's filter in the frequency domain: FFT(g₀ + i·g½) / (2·size), g₀ and g½ the two
    /// phases' taps in reverse order (a correlation as a convolution); the 2 undoes the
    /// sum of a pair's two halves, the size the unscaled inverse.
    private let spectrumRe: UnsafeMutablePointer<Double>, spectrumIm: UnsafeMutablePointer<Double>
    /// Per channel, the current block: `filled` of its `size` frames.
    private let block: UnsafeMutablePointer<Double>
    private var filled = 0
    /// Silence before input frame 0 in the first block: the phases' reach into the past.
    private let lead: Int
    /// A pair's forward transform, and each channel's inverse one.
    private let zr: UnsafeMutablePointer<Double>, zi: UnsafeMutablePointer<Double>
    private let ar: UnsafeMutablePointer<Double>, ai: UnsafeMutablePointer<Double>
    private let br: UnsafeMutablePointer<Double>, bi: UnsafeMutablePointer<Double>
    /// Per channel, one block's doubled frames (2·hop), and pointers to them.
    private let doubled: UnsafeMutablePointer<Double>
    private let doubledPointers: UnsafeMutablePointer<UnsafePointer<Double>>
    /// Stage 2, from twice the input rate to the output rate.
    let second: ResamplerEngine<Double>
    /// Input frames taken since the stream began, output frames given, and doubled frames
    /// passed to stage 2.
    private(set) var inputFrames = 0, outputFrames = 0
    private var doubledFrames = 0

    /// nil when the ratio is not between 1 and 2 (exclusive) or stage 2 would need more
    /// than ``Resampler/maximumExactPhases`` phases.
    init?(channels: Int, l: Int, m: Int, spec: ResamplerFilterSpec) {
        guard l > m, l < 2 * m else { return nil }
        let g = Resampler.gcd(l, 2 * m)
        let l2 = l / g, m2 = 2 * m / g
        guard l2 <= Resampler.maximumExactPhases,
              let steep = KaiserSinc(ratio: 2, spec: spec, maximumTaps: 1 << 14),
              // In cycles per doubled frame: flat to the passband edge (a quarter of the
              // doubled rate, times the passband), rejecting from the first image, 1.5 × the
              // input rate.
              let short = KaiserSinc(pass: spec.passband * 0.25, stop: 0.75, rejection: spec.rejection + 10, maximumTaps: 1 << 10)
        else { return nil }
        self.channels = channels
        self.l = l
        self.m = m
        taps = steep.taps
        lead = steep.half - 1
        // Work per input frame goes as size·log₂(size) / (size − taps): eight times the taps
        // is near the least (4096 points for 'bats' High's 424 taps).
        var size = 1024
        while size < 8 * taps { size *= 2 }
        self.size = size
        hop = size - taps + 1
        fft = DoubleFFT(size: size)
        spectrumRe = .allocate(capacity: size)
        spectrumIm = .allocate(capacity: size)
        spectrumRe.initialize(repeating: 0, count: size)
        spectrumIm.initialize(repeating: 0, count: size)
        let even = steep.phaseTaps(0), odd = steep.phaseTaps(0.5)
        let scale = 1 / Double(2 * size)
        for j in 0..<taps {
            spectrumRe[j] = even[taps - 1 - j] * scale
            spectrumIm[j] = odd[taps - 1 - j] * scale
        }
        fft.forward(spectrumRe, spectrumIm)
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

    func reset() {
        for c in 0..<channels { (block + c * size).update(repeating: 0, count: lead) }
        filled = lead
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
                for i in 0..<count { dst[i] = Double(src[i]) }
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
        let n = size, mask = size - 1, first = taps - 1
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
            // Bins k and k + 1 at once, against n − k and n − k − 1 (loaded as a pair, swapped).
            var k = 1
            while k + 1 < n / 2 {
                spectraPair(k, n - k - 1)
                spectraPair(n - k - 1, k)
                k += 2
            }
            if k < n / 2 {
                spectra(k, n - k)
                spectra(n - k, k)
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
        doubledFrames += 2 * hop
        return second.process(doubledPointers, frames: 2 * hop, outputs, at: offset, limit: limit)
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

    /// ``spectra(_:_:)`` for bins k and k + 1, whose partners are j + 1 and j.
    @inline(__always)
    private func spectraPair(_ k: Int, _ j: Int) {
        let pr = load(zr + k), pi = load(zi + k)
        let qr = load(zr + j)[SIMD2(1, 0)], qi = load(zi + j)[SIMD2(1, 0)]
        let gr = load(spectrumRe + k), gi = load(spectrumIm + k)
        let x0r = pr + qr, x0i = pi - qi
        let x1r = pi + qi, x1i = qr - pr
        store(x0r * gr - x0i * gi, ar + k)
        store(x0r * gi + x0i * gr, ai + k)
        store(x1r * gr - x1i * gi, br + k)
        store(x1r * gi + x1i * gr, bi + k)
    }

    @inline(__always)
    private func load(_ p: UnsafeMutablePointer<Double>) -> SIMD2<Double> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD2<Double>.self)
    }

    @inline(__always)
    private func store(_ v: SIMD2<Double>, _ p: UnsafeMutablePointer<Double>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD2<Double>.self)
    }

    /// Phase 0 and phase ½, alternately: the doubled stream.
    @inline(__always)
    private func interleave(_ even: UnsafePointer<Double>, _ odd: UnsafePointer<Double>, _ out: UnsafeMutablePointer<Double>) {
        for i in 0..<hop {
            out[2 * i] = even[i]
            out[2 * i + 1] = odd[i]
        }
    }
}

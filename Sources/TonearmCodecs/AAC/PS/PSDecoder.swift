/// The parametric stereo decoder of HE-AAC v2 (ISO/IEC 14496-3 subpart 8, §8.6.4): it turns
/// the mono QMF matrix of an SBR channel into a left and a right one.
///
/// The SBR decoder of a mono (SCE) element makes one and, for each 2048-sample frame:
/// 1. hands it the frame's ps_data, the EXTENSION_ID_PS payload of sbr_extension_data after
///    its 2-bit id, with ``parse(_:bitCount:)``; a frame without one calls nothing;
/// 2. after HF adjustment, with the QMF matrix it would give its synthesis bank, calls
///    ``process(inputReal:inputImag:bandLimit:leftReal:leftImag:rightReal:rightImag:)`` and
///    runs its synthesis bank on each output (a second bank, with its own state, for the
///    right channel).
///
/// The input is the whole synthesis input X of §4.6.18.8, bands below k_x (the delayed core)
/// included: 38 slots × 64 bands, slot-major. Slots 0…31 are the frame's; slots 32…37 are
/// the 6 that follow, of which only bands 0…4 are read. The SBR decoder has them: synthesis
/// slot n takes X_Low slot n + 2 (t_HFAdj), so X_Low's last 6 slots (34…39, the frame's
/// analysis slots 26…31) are synthesis slots 32…37. The hybrid filters are centred on them,
/// so PS adds no delay: the output keeps the SBR decoder's. `bandLimit` is k_x + M, the top
/// of the SBR range: above it the input is empty, and the decorrelator's delay lines there
/// are cleared.
///
/// Until the first PS header, both outputs are the input. A payload that is invalid (a reserved
/// mode, borders that go back, an index out of range, bits that run out) is refused: the last
/// frame's parameters hold over the frame, as in a frame with no new envelope (num_env 0); a
/// frame with no payload does the same. Nothing a payload holds can make it trap or read
/// outside it.
///
/// Where FFmpeg's float decoder (the goldens' source) reads the standard its own way, this
/// decoder does as it does: IPD/OPD stay on, with the last values, when a new header turns
/// the extension off (ps_switch_44k's frames 11–13 differ by 0.2 otherwise); in the hybrid
/// bands of negative frequency (0 and 1 at 20 bands, 9…13 at 34) the imaginary part of the
/// mixing matrix starts each envelope negated and ends it as coded (the fixtures with IPD/OPD
/// differ by up to 8e-3 otherwise, and by as much when it is negated throughout); the phase
/// smoothing runs over the first 11 (17) parameter bands at 20 (34) bands, the 5 IPD/OPD
/// parameters of 10 bands mapped to 20 bands; time deltas read the previous envelope band for
/// band, whatever its resolution.
final class PSDecoder {
    var parameters = PSParameters()
    /// A payload is read into this copy, which takes the place of ``parameters`` when valid.
    private var staging = PSParameters()
    /// Why the last payload was refused, nil when it was read.
    private(set) var lastError: PSParameters.Failure?
    private var parsed = false

    let hybrid = PSHybrid()
    let work = PSWork()

    init() {}

    /// Reads one frame's ps_data: `bitCount` bits from the start of `bytes`, MSB first.
    /// Returns false when the payload is invalid (the last parameters then hold).
    @discardableResult
    func parse(_ bytes: [UInt8], bitCount: Int) -> Bool {
        bytes.withUnsafeBufferPointer { parse($0, bitCount: bitCount) }
    }

    @discardableResult
    func parse(_ bytes: UnsafeBufferPointer<UInt8>, bitCount: Int) -> Bool {
        var r = PSBits(bytes, bitCount: bitCount)
        parsed = true
        staging.assign(parameters)
        do {
            try staging.read(&r)
            swap(&parameters, &staging)
            lastError = nil
            return true
        } catch {
            lastError = error
            parameters.keep()
            return false
        }
    }

    /// Back to the state before the first frame (after a seek).
    func reset() {
        parameters = PSParameters()
        staging = PSParameters()
        lastError = nil
        parsed = false
        hybrid.reset()
        work.reset()
    }

    /// One frame: the mono QMF matrix into the left and right ones.
    /// - Parameters:
    ///   - inputReal, inputImag: 38 slots × 64 bands, slot-major (see the type's note).
    ///   - bandLimit: k_x + M.
    ///   - leftReal … rightImag: 32 slots × 64 bands each, slot-major.
    func process(inputReal: UnsafePointer<Float>, inputImag: UnsafePointer<Float>, bandLimit: Int,
                 leftReal: UnsafeMutablePointer<Float>, leftImag: UnsafeMutablePointer<Float>,
                 rightReal: UnsafeMutablePointer<Float>, rightImag: UnsafeMutablePointer<Float>) {
        if !parsed { parameters.keep() }
        parsed = false
        guard parameters.headerSeen else {
            leftReal.update(from: inputReal, count: 32 * 64)
            rightReal.update(from: inputReal, count: 32 * 64)
            leftImag.update(from: inputImag, count: 32 * 64)
            rightImag.update(from: inputImag, count: 32 * 64)
            return
        }
        let p = parameters, w = work
        w.clearAbove(bandLimit, is34: p.is34)
        hybrid.analyze(re: inputReal, im: inputImag, is34: p.is34, outRe: w.leftRe, outIm: w.leftIm)
        decorrelate(p)
        mix(p)
        PSHybrid.synthesize(re: w.leftRe, im: w.leftIm, is34: p.is34, outRe: leftReal, outIm: leftImag)
        PSHybrid.synthesize(re: w.rightRe, im: w.rightIm, is34: p.is34, outRe: rightReal, outIm: rightImag)
    }
}

/// The decoder's state across frames and its work arrays, allocated once.
final class PSWork {
    static let bands = 91
    /// The delay line of each hybrid band: 14 slots of history, then the frame's 32.
    static let delaySpan = 14 + 32
    /// The all-pass links' delay lines: 5 slots of history, then the frame's 32.
    static let linkSpan = 5 + 32

    /// The hybrid matrices, band-major (band × 32 + slot): the mono input becomes the left
    /// output in place, the decorrelated signal the right.
    let leftRe, leftIm, rightRe, rightIm: UnsafeMutablePointer<Float>
    let delayRe, delayIm: UnsafeMutablePointer<Float>
    /// [band × 3 + link] × linkSpan.
    let linkRe, linkIm: UnsafeMutablePointer<Float>
    /// The transient detector's state per parameter band, and its per-slot work.
    let peakDecay, powerSmooth, diffSmooth: UnsafeMutablePointer<Float>
    let power, transientGain: UnsafeMutablePointer<Float>
    /// The mixing matrices H11, H12, H21, H22 ([coefficient × 6 + envelope] × 34 + band): row
    /// 0 is the last frame's last envelope, row e + 1 envelope e's; real and imaginary parts.
    let hRe, hIm: UnsafeMutablePointer<Float>
    /// The IPD and OPD indices of the last two frames per band (older × 8 + last).
    var ipdHistory = [Int](repeating: 0, count: 17)
    var opdHistory = [Int](repeating: 0, count: 17)
    /// The parameters mapped to the frame's resolution, [envelope × 34 + band].
    var iid = [Int](repeating: 0, count: 5 * 34), icc = [Int](repeating: 0, count: 5 * 34)
    var ipd = [Int](repeating: 0, count: 5 * 34), opd = [Int](repeating: 0, count: 5 * 34)

    private let all: [(UnsafeMutablePointer<Float>, Int)]

    init() {
        func buffer(_ n: Int) -> (UnsafeMutablePointer<Float>, Int) {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return (p, n)
        }
        let matrices = (0..<4).map { _ in buffer(Self.bands * 32) }
        let delays = (0..<2).map { _ in buffer(Self.bands * Self.delaySpan) }
        let links = (0..<2).map { _ in buffer(50 * 3 * Self.linkSpan) }
        let detector = (0..<3).map { _ in buffer(34) }
        let slots = (0..<2).map { _ in buffer(34 * 32) }
        let mixing = (0..<2).map { _ in buffer(4 * 6 * 34) }
        (leftRe, leftIm, rightRe, rightIm) = (matrices[0].0, matrices[1].0, matrices[2].0, matrices[3].0)
        (delayRe, delayIm) = (delays[0].0, delays[1].0)
        (linkRe, linkIm) = (links[0].0, links[1].0)
        (peakDecay, powerSmooth, diffSmooth) = (detector[0].0, detector[1].0, detector[2].0)
        (power, transientGain) = (slots[0].0, slots[1].0)
        (hRe, hIm) = (mixing[0].0, mixing[1].0)
        all = matrices + delays + links + detector + slots + mixing
    }

    deinit { for (p, _) in all { p.deallocate() } }

    func reset() {
        for (p, n) in all { p.update(repeating: 0, count: n) }
        for i in 0..<17 { ipdHistory[i] = 0; opdHistory[i] = 0 }
    }

    /// The decorrelator's state, cleared when the hybrid configuration changes.
    func resetDecorrelator() {
        for p in [peakDecay, powerSmooth, diffSmooth] { p.update(repeating: 0, count: 34) }
        for p in [delayRe, delayIm] { p.update(repeating: 0, count: Self.bands * Self.delaySpan) }
        for p in [linkRe, linkIm] { p.update(repeating: 0, count: 50 * 3 * Self.linkSpan) }
    }

    /// Clears the delay lines of the hybrid bands at and above QMF band `limit`, where the
    /// input is empty, so that no old signal rings there.
    func clearAbove(_ limit: Int, is34: Bool) {
        let bands = PSHybrid.bandCount(is34: is34)
        let top = max(0, min(bands, limit + bands - 64))
        (delayRe + top * Self.delaySpan).update(repeating: 0, count: (bands - top) * Self.delaySpan)
        (delayIm + top * Self.delaySpan).update(repeating: 0, count: (bands - top) * Self.delaySpan)
        let allpass = is34 ? 50 : 30
        if top < allpass {
            (linkRe + top * 3 * Self.linkSpan).update(repeating: 0, count: (allpass - top) * 3 * Self.linkSpan)
            (linkIm + top * 3 * Self.linkSpan).update(repeating: 0, count: (allpass - top) * 3 * Self.linkSpan)
        }
    }
}

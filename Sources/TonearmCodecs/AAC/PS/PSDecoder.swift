import TonearmCore
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
    ///   - inputTop: when known, a QMF band at and above which the frame's 32 slots are empty
    ///     (the slots carried from the last frame may reach above `bandLimit`); else the
    ///     input is scanned for it.
    ///   - leftReal … rightImag: 32 slots × 64 bands each, slot-major.
    func process(inputReal: UnsafePointer<Float>, inputImag: UnsafePointer<Float>, bandLimit: Int, inputTop: Int? = nil,
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
        let p = parameters, w = work, is34 = p.is34
        w.beginFrame(is34: is34, was34: p.was34)
        w.clearAbove(bandLimit, is34: is34)
        let top = activeBands(inputReal, inputImag, bandLimit: bandLimit, inputTop: inputTop, is34: is34)
        hybrid.analyze(re: inputReal, im: inputImag, is34: is34,
                       outRe: w.delayRe + PSWork.history, outIm: w.delayIm + PSWork.history,
                       stride: PSWork.delaySpan, top: top)
        decorrelate(p, top: top)
        mix(p, top: top)
        PSHybrid.synthesize(re: w.leftRe, im: w.leftIm, is34: is34, top: top, outRe: leftReal, outIm: leftImag)
        PSHybrid.synthesize(re: w.rightRe, im: w.rightIm, is34: is34, top: top, outRe: rightReal, outIm: rightImag)
    }

    /// The hybrid bands that can carry signal this frame: those below the highest QMF band
    /// with input in the frame's 32 slots (the slots carried from the last frame may reach
    /// above `bandLimit`), and those whose delay lines `clearAbove` did not clear. Above
    /// them the input is empty and the decorrelator's state is cleared, so every output is
    /// zero and the bands are skipped.
    private func activeBands(_ re: UnsafePointer<Float>, _ im: UnsafePointer<Float>, bandLimit: Int, inputTop: Int?,
                             is34: Bool) -> Int {
        let bands = PSHybrid.bandCount(is34: is34)
        let split = PSHybrid.splitBands(is34: is34), first = PSHybrid.hybridBands(is34: is34)
        let limit = min(max(bandLimit, split), 64)
        var topQMF = limit
        if let inputTop { topQMF = min(max(inputTop, limit), 64) }
        for slot in 0..<(inputTop == nil ? 32 : 0) {
            let r = re + slot * 64, i = im + slot * 64
            var band = 63
            while band >= topQMF {
                if r[band] != 0 || i[band] != 0 { topQMF = band + 1; break }
                band -= 1
            }
        }
        return min(max(topQMF - split + first, PSWork.clearedFrom(bandLimit, is34: is34)), bands)
    }
}

/// The decoder's state across frames and its work arrays, allocated once.
final class PSWork {
    static let bands = 91
    /// The delay line of each hybrid band: 16 slots of history (the decorrelator reaches 14
    /// back), then the frame's 32, which the hybrid analysis writes in place.
    static let history = 16
    static let delaySpan = history + 32
    /// The all-pass bands are filtered 4 at a time, one band a lane: 13 groups reach 50 bands.
    static let linkGroups = 13
    /// Each group's 3 links are delay lines of their delays (3, 4, 5 slots) of history, then
    /// the frame's 32 slots, 108 entries in all; `linkOffset` is where each link's starts.
    static let linkEntries = 108
    static let linkOffset = [0, 35, 71]

    /// The hybrid matrices, band-major (band × 32 + slot): the mixed left output, and the
    /// decorrelated signal, which the mixing turns into the right output in place.
    let leftRe, leftIm, rightRe, rightIm: UnsafeMutablePointer<Float>
    /// The mono hybrid signal, band × delaySpan + history + slot.
    let delayRe, delayIm: UnsafeMutablePointer<Float>
    /// The all-pass links' delay lines: [group × 108 + linkOffset[m] + delay + slot], a band
    /// a lane.
    let linkRe, linkIm: UnsafeMutablePointer<SIMD4<Float>>
    /// The transient detector's state per parameter band, and its per-slot work.
    let peakDecay, powerSmooth, diffSmooth: UnsafeMutablePointer<Float>
    let power, transientGain: UnsafeMutablePointer<Float>
    /// The mixing matrices H11, H12, H21, H22 ([coefficient × 6 + envelope] × 34 + band): row
    /// 0 is the last frame's last envelope, row e + 1 envelope e's; real and imaginary parts.
    let hRe, hIm: UnsafeMutablePointer<Float>
    /// The interpolated matrices per parameter band and slot, [(band × 8 + c) × 32 + slot]:
    /// c 0…3 the real parts of H11, H12, H21, H22, c 4…7 their imaginary parts; `negated`
    /// holds one band's with the imaginary parts that start negated (the bands of negative
    /// frequency).
    let coefficients, negated: UnsafeMutablePointer<Float>
    /// Zeros to read and a sink to write for the unused lanes of the all-pass groups.
    let zeros, sink: UnsafeMutablePointer<Float>
    /// The IPD and OPD indices of the last two frames per band (older × 8 + last).
    let ipdHistory, opdHistory: UnsafeMutablePointer<Int>
    /// The parameters mapped to the frame's resolution, [envelope × 34 + band].
    let iid, icc, ipd, opd: UnsafeMutablePointer<Int>
    private let indices: [(UnsafeMutablePointer<Int>, Int)]

    private let all: [(UnsafeMutablePointer<Float>, Int)]

    init() {
        func buffer(_ n: Int) -> (UnsafeMutablePointer<Float>, Int) {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return (p, n)
        }
        let matrices = (0..<4).map { _ in buffer(Self.bands * 32) }
        let delays = (0..<2).map { _ in buffer(Self.bands * Self.delaySpan) }
        // 36 parameter bands: the detector runs on 4 at a time.
        let detector = (0..<3).map { _ in buffer(36) }
        let slots = (0..<2).map { _ in buffer(36 * 32) }
        let mixing = (0..<2).map { _ in buffer(4 * 6 * 34) }
        let interpolated = [buffer(34 * 8 * 32), buffer(8 * 32)]
        let spare = [buffer(64), buffer(32)]
        (leftRe, leftIm, rightRe, rightIm) = (matrices[0].0, matrices[1].0, matrices[2].0, matrices[3].0)
        (delayRe, delayIm) = (delays[0].0, delays[1].0)
        (peakDecay, powerSmooth, diffSmooth) = (detector[0].0, detector[1].0, detector[2].0)
        (power, transientGain) = (slots[0].0, slots[1].0)
        (hRe, hIm) = (mixing[0].0, mixing[1].0)
        (coefficients, negated) = (interpolated[0].0, interpolated[1].0)
        (zeros, sink) = (spare[0].0, spare[1].0)
        all = matrices + delays + detector + slots + mixing + interpolated + spare
        func indexBuffer(_ n: Int) -> (UnsafeMutablePointer<Int>, Int) {
            let p = UnsafeMutablePointer<Int>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return (p, n)
        }
        indices = [indexBuffer(17), indexBuffer(17)] + (0..<4).map { _ in indexBuffer(5 * 34) }
        (ipdHistory, opdHistory) = (indices[0].0, indices[1].0)
        (iid, icc, ipd, opd) = (indices[2].0, indices[3].0, indices[4].0, indices[5].0)
        let links = Self.linkGroups * Self.linkEntries
        linkRe = .allocate(capacity: links)
        linkRe.initialize(repeating: .zero, count: links)
        linkIm = .allocate(capacity: links)
        linkIm.initialize(repeating: .zero, count: links)
    }

    deinit {
        for (p, _) in all { p.deallocate() }
        for (p, _) in indices { p.deallocate() }
        linkRe.deallocate()
        linkIm.deallocate()
    }

    func reset() {
        for (p, n) in all { p.update(repeating: 0, count: n) }
        resetLinks()
        for (p, n) in indices { p.update(repeating: 0, count: n) }
    }

    private func resetLinks() {
        linkRe.update(repeating: .zero, count: Self.linkGroups * Self.linkEntries)
        linkIm.update(repeating: .zero, count: Self.linkGroups * Self.linkEntries)
    }

    /// The decorrelator's state, cleared when the hybrid configuration changes.
    func resetDecorrelator() {
        for p in [peakDecay, powerSmooth, diffSmooth] { p.update(repeating: 0, count: 36) }
        for p in [delayRe, delayIm] { p.update(repeating: 0, count: Self.bands * Self.delaySpan) }
        resetLinks()
    }

    /// Before a frame's input is written: the decorrelator starts afresh when the hybrid
    /// configuration changed, and each delay line's last frame becomes its history.
    func beginFrame(is34: Bool, was34: Bool) {
        if is34 != was34 { resetDecorrelator() }
        let span = Self.delaySpan, history = Self.history
        for p in [delayRe, delayIm] {
            for k in 0..<PSHybrid.bandCount(is34: is34) {
                let row = p + k * span
                for i in stride(from: 0, to: history, by: 8) { storeFloats(loadFloat8(row + 32 + i), row + i) }
            }
        }
    }

    /// The first hybrid band that `clearAbove` clears at `limit`.
    static func clearedFrom(_ limit: Int, is34: Bool) -> Int {
        let bands = PSHybrid.bandCount(is34: is34)
        return max(0, min(bands, limit + bands - 64))
    }

    /// Clears the delay lines of the hybrid bands at and above QMF band `limit`, where the
    /// input is empty, so that no old signal rings there. Called after ``beginFrame(is34:was34:)``:
    /// the history is what the frame reads of the past.
    func clearAbove(_ limit: Int, is34: Bool) {
        let bands = PSHybrid.bandCount(is34: is34)
        let top = Self.clearedFrom(limit, is34: is34)
        for k in top..<bands {
            (delayRe + k * Self.delaySpan).update(repeating: 0, count: Self.history)
            (delayIm + k * Self.delaySpan).update(repeating: 0, count: Self.history)
        }
        let allpass = is34 ? 50 : 30
        for k in top..<max(top, allpass) {
            let group = k / 4 * Self.linkEntries, lane = k % 4
            for e in 0..<Self.linkEntries {
                linkRe[group + e][lane] = 0
                linkIm[group + e][lane] = 0
            }
        }
    }
}

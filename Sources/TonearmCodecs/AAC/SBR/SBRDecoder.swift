import TonearmCore
/// The SBR decoder of one channel element (HE-AAC, ISO/IEC 14496-3 subpart 4, §4.6.18): it
/// reads the element's SBR extension payloads and turns each 1024-sample core frame of a
/// channel into 2048 samples at twice the rate.
///
/// The AAC decoder makes one per SCE or CPE (with 1 or 2 channels) and, for each raw data
/// block:
/// 1. hands it the payload of a fill element's EXT_SBR_DATA or EXT_SBR_DATA_CRC extension
///    that follows the element, with ``parse(_:bitPosition:bitCount:crc:elementIsPair:)``;
/// 2. after decoding the element's core, calls ``process(channel:core:output:)`` for channel
///    0, then channel 1 of a CPE.
///
/// A payload that is invalid (a header whose tables break the standard's limits, a grid or
/// value out of range, a CRC mismatch, bits that run out) turns SBR off, as does a frame
/// with no payload while SBR is on: the output is then the core upsampled through the QMF
/// banks (the low 32 bands, the high band empty), with the same delay, until the next valid
/// header. Before any header the output is the same. Nothing a payload holds can make it
/// trap or read outside the payload.
///
/// Delay: the QMF analysis and synthesis pair delays by ``qmfDelay`` output samples, and
/// the HF tools work 6 QMF slots (384 output samples) behind the analysis (t_HFGen − t_HFAdj
/// = 8 − 2), so the output lags the core by ``delay`` = 962 samples at the output rate. It
/// applies with SBR on or off. FFmpeg's decoder has the same structure and delay and does not
/// trim it (its HE-AAC output starts with 962 samples of the filter banks' ramp-up), so
/// decodes compare sample for sample.
final class SBRDecoder {
    /// numTimeSlots for a 1024-sample core frame; a time slot is RATE = 2 QMF slots.
    static let timeSlots = 16
    /// The bits of bs_pointer for 1…5 envelopes: ⌈log2(L_E + 1)⌉.
    static let pointerBits = [0, 1, 2, 2, 3, 3]
    /// EXTENSION_ID_PS, the extended data that carries parametric stereo.
    static let extensionPS = 2
    /// The delay of the analysis and synthesis QMF banks together, in output samples.
    static let qmfDelay = 578
    /// The delay of the SBR path, in output samples.
    static let delay = qmfDelay + 6 * 64

    let outputRate: Int
    let channels: [SBRChannel]
    /// The last valid header and its tables.
    var header: SBRHeader?
    var tables: SBRFrequencyTables?
    /// A valid header was seen and SBR has not been turned off since.
    var active = false
    /// This frame's payload was read (and its values wait for dequantisation).
    var dataReady = false
    /// This frame's header reset the tables (the gain smoothing starts afresh).
    var reset = false
    /// The CPE's second channel carries balances (bs_coupling).
    var coupling = false
    /// k_x and M of this frame and of the previous one (the high band of the slots that a
    /// frame's last envelope carries into the next belongs to the previous tables).
    var kx = 32, m = 0
    var previousKx = 32, previousM = 0
    private var pushed = false
    /// The PS payload of the last frame (EXTENSION_ID_PS), MSB first, for a PS decoder.
    var psBytes = [UInt8](repeating: 0, count: 270)
    var psBitCount = 0
    /// Whether the last payload carried a header.
    var headerInPayload = false
    /// Why the last payload was refused, nil when it was read.
    private(set) var lastError: SBRPayloadError?

    let scratch = SBRScratch()

    /// - Parameters:
    ///   - outputSampleRate: the SBR rate, twice the core's (the AudioSpecificConfig's
    ///     extension sampling frequency).
    ///   - channels: 1 for an SCE, 2 for a CPE.
    init(outputSampleRate: Int, channels: Int, parametricStereo: Bool = false) {
        precondition(channels == 1 || channels == 2)
        precondition(!parametricStereo || channels == 1)
        outputRate = outputSampleRate
        self.channels = (0..<channels).map { _ in SBRChannel() }
        stereo = parametricStereo ? SBRStereo() : nil
    }

    /// HE-AAC v2: the PS decoder of a mono element whose output is stereo, with the right
    /// channel's synthesis bank and the QMF matrices PS works on; nil otherwise.
    let stereo: SBRStereo?

    /// Reads one EXT_SBR_DATA (`crc` false) or EXT_SBR_DATA_CRC (`crc` true) payload: the
    /// `bitCount` bits from bit `bitPosition` of `base`, those after the 4-bit extension_type.
    /// `elementIsPair` says whether the element it belongs to is a CPE.
    ///
    /// Returns false, and turns SBR off until the next valid header, when the payload is
    /// invalid (``lastError`` says why).
    @discardableResult
    func parse(_ base: UnsafePointer<UInt8>, bitPosition: Int, bitCount: Int, crc: Bool, elementIsPair: Bool) -> Bool {
        reset = false
        headerInPayload = false
        previousKx = kx
        previousM = m
        pushed = true
        var r = SBRBits(base, bitPosition: bitPosition, bitCount: bitCount)
        do {
            try read(&r, crc: crc, elementIsPair: elementIsPair)
            lastError = nil
            // A PS payload that is refused leaves the last PS parameters (PSDecoder's rule).
            if let stereo, psBitCount > 0,
               !psBytes.withUnsafeBufferPointer({ stereo.ps.parse(UnsafeBufferPointer(rebasing: $0[0..<(psBitCount + 7) / 8]), bitCount: psBitCount) }) {
                stereo.refusedPayloads += 1
            }
            return true
        } catch {
            turnOff()
            lastError = error
            return false
        }
    }

    /// ``parse(_:bitPosition:bitCount:crc:elementIsPair:)`` over bytes.
    @discardableResult
    func parse(_ bytes: [UInt8], bitPosition: Int = 0, bitCount: Int? = nil, crc: Bool, elementIsPair: Bool) -> Bool {
        let count = min(bitCount ?? bytes.count * 8 - bitPosition, bytes.count * 8 - bitPosition)
        guard !bytes.isEmpty, count > 0 else { return parse([0], bitPosition: 0, bitCount: 0, crc: crc, elementIsPair: elementIsPair) }
        return bytes.withUnsafeBufferPointer {
            parse($0.baseAddress!, bitPosition: bitPosition, bitCount: count, crc: crc, elementIsPair: elementIsPair)
        }
    }

    /// SBR off: the core is only upsampled, and a header is needed to start again.
    func turnOff() {
        active = false
        dataReady = false
        header = nil
        kx = 32
        m = 0
        for c in channels { c.transient = -1 }
    }

    /// Forgets the stream: the state of a decoder just made (after a seek).
    func resetState() {
        turnOff()
        tables = nil
        reset = false
        coupling = false
        previousKx = 32
        previousM = 0
        pushed = false
        psBitCount = 0
        lastError = nil
        for c in channels { c.reset() }
        stereo?.reset()
    }

    /// Turns one channel's 1024 core samples (full scale ±1) into 2048 output samples.
    /// Channel 0 first: its call starts the frame. With parametric stereo, `output` gets the
    /// left channel and `right` (required then) the right one.
    func process(channel: Int, core: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
                 right: UnsafeMutablePointer<Float>? = nil) {
        precondition(channel >= 0 && channel < channels.count)
        if channel == 0 { beginFrame() }
        let c = channels[channel]
        let s = scratch
        c.current ^= 1
        let wr = c.wReal[c.current], wi = c.wImag[c.current]
        for slot in 0..<32 { c.analysis.analyze(core + 32 * slot, real: wr + 32 * slot, imag: wi + 32 * slot) }

        // X_Low: this frame's analysis at slots 8…39 (bands below k_x), the previous frame's
        // last 8 slots at 0…7 (bands below its k_x).
        let xr = s.lowReal, xi = s.lowImag
        sbrZero(xr, 32 * 40)
        sbrZero(xi, 32 * 40)
        let lowBands = min(max(kx, 0), 32)
        var k = 0
        while k + 4 <= lowBands {
            for l in stride(from: 0, to: 32, by: 4) {
                sbrTransposeBlock(wr + l * 32 + k, 32, xr + k * 40 + 8 + l, 40)
                sbrTransposeBlock(wi + l * 32 + k, 32, xi + k * 40 + 8 + l, 40)
            }
            k += 4
        }
        for k in k..<lowBands {
            for l in 0..<32 {
                xr[k * 40 + 8 + l] = wr[l * 32 + k]
                xi[k * 40 + 8 + l] = wi[l * 32 + k]
            }
        }
        let pr = c.wReal[c.current ^ 1], pi = c.wImag[c.current ^ 1]
        for k in 0..<min(previousKx, 32) {
            for l in 0..<8 {
                xr[k * 40 + l] = pr[(24 + l) * 32 + k]
                xi[k * 40 + l] = pi[(24 + l) * 32 + k]
            }
        }

        let yr = c.yReal[c.current], yi = c.yImag[c.current]
        if active, let t = tables, c.envelopeCount > 0 {
            generateHighBand(c, t)
            adjustHighBand(c, t, into: yr, yi)
        }

        // The synthesis input (§4.6.18.8): the low band delayed by t_HFAdj, the adjusted high
        // band; the first slots are the previous frame's when its last envelope reached past
        // its end.
        let carried = max(2 * c.previousEnd - 32, 0)
        let oldYr = c.yReal[c.current ^ 1], oldYi = c.yImag[c.current ^ 1]
        // The whole matrix X is built first (with PS, 38 slots: PS adds the last 6).
        let stereo = right == nil ? nil : self.stereo
        let matrixRe = stereo?.inputReal ?? s.synthesisReal, matrixIm = stereo?.inputImag ?? s.synthesisImag
        for slot in 0..<32 {
            let re = matrixRe + 64 * slot, im = matrixIm + 64 * slot
            sbrZero(re, 64)
            sbrZero(im, 64)
            let fromPrevious = slot < carried
            let (lowEnd, highEnd) = fromPrevious ? (previousKx, previousKx + previousM) : (kx, kx + m)
            let (hr, hi, row) = fromPrevious ? (oldYr, oldYi, slot + 32) : (yr, yi, slot)
            if fromPrevious {
                for k in 0..<min(lowEnd, 32) {
                    re[k] = xr[k * 40 + slot + 2]
                    im[k] = xi[k * 40 + slot + 2]
                }
            }
            // The adjusted high band, 8 bands a vector, then one at a time.
            var k = max(lowEnd, 0)
            let highTop = min(highEnd, 64)
            while k + 8 <= highTop {
                storeFloats(loadFloat8(hr + row * 64 + k), re + k)
                storeFloats(loadFloat8(hi + row * 64 + k), im + k)
                k += 8
            }
            while k < highTop {
                re[k] = hr[row * 64 + k]
                im[k] = hi[row * 64 + k]
                k += 1
            }
        }
        // The low band of the frame's own slots: X_Low transposed, 4 bands × 4 slots at a time.
        let firstSlot = min(max(carried, 0), 32)
        var slot = firstSlot
        while slot < 32 && slot & 3 != 0 {
            for k in 0..<lowBands {
                matrixRe[slot * 64 + k] = xr[k * 40 + slot + 2]
                matrixIm[slot * 64 + k] = xi[k * 40 + slot + 2]
            }
            slot += 1
        }
        for k in stride(from: 0, to: lowBands & ~3, by: 4) {
            for l in stride(from: slot, to: 32, by: 4) {
                sbrTransposeBlock(xr + k * 40 + l + 2, 40, matrixRe + l * 64 + k, 64)
                sbrTransposeBlock(xi + k * 40 + l + 2, 40, matrixIm + l * 64 + k, 64)
            }
        }
        for k in lowBands & ~3..<lowBands {
            for l in slot..<32 {
                matrixRe[l * 64 + k] = xr[k * 40 + l + 2]
                matrixIm[l * 64 + k] = xi[k * 40 + l + 2]
            }
        }
        if stereo == nil {
            for slot in 0..<32 {
                c.synthesis.synthesize(real: matrixRe + 64 * slot, imag: matrixIm + 64 * slot, into: output + 64 * slot)
            }
        }
        // Above the highest band of the high band (the carried slots' or the frame's), X is empty.
        let inputTop = max(carried > 0 ? previousKx + previousM : 0, kx + m)
        if let stereo, let right { applyStereo(stereo, c, output, right, inputTop: inputTop) }
    }

    /// PS (§8.6.4) between HF adjustment and synthesis: X gets the 6 slots of low bands that
    /// follow the frame (X_Low's last, the hybrid filters' lookahead), PS turns it into a left
    /// and a right matrix, and each has its synthesis bank.
    private func applyStereo(_ st: SBRStereo, _ c: SBRChannel, _ left: UnsafeMutablePointer<Float>,
                             _ right: UnsafeMutablePointer<Float>, inputTop: Int) {
        let xr = scratch.lowReal, xi = scratch.lowImag
        for slot in 32..<38 {
            let re = st.inputReal + 64 * slot, im = st.inputImag + 64 * slot
            sbrZero(re, 64)
            sbrZero(im, 64)
            for k in 0..<min(kx, 5) {
                re[k] = xr[k * 40 + slot + 2]
                im[k] = xi[k * 40 + slot + 2]
            }
        }
        st.ps.process(inputReal: st.inputReal, inputImag: st.inputImag, bandLimit: kx + m, inputTop: inputTop,
                      leftReal: st.leftReal, leftImag: st.leftImag, rightReal: st.rightReal, rightImag: st.rightImag)
        for slot in 0..<32 {
            c.synthesis.synthesize(real: st.leftReal + 64 * slot, imag: st.leftImag + 64 * slot, into: left + 64 * slot)
            st.synthesis.synthesize(real: st.rightReal + 64 * slot, imag: st.rightImag + 64 * slot, into: right + 64 * slot)
        }
    }

    /// The frame's bookkeeping, once before its first channel: SBR goes off when it was on
    /// and no payload came; this frame's values are dequantised.
    private func beginFrame() {
        if active && !dataReady { turnOff() }
        if pushed {
            pushed = false
        } else {
            previousKx = kx
            previousM = m
        }
        if active {
            dequantize()
            dataReady = false
        }
    }
}

/// Work arrays of one decoder, shared by its channels (each channel's frame uses them in
/// turn): X_Low and X_High band-major (40 slots a band), the LPC coefficients and the
/// per-envelope HF adjustment values (64 QMF bands a row).
final class SBRScratch {
    let lowReal: UnsafeMutablePointer<Float>
    let lowImag: UnsafeMutablePointer<Float>
    let highReal: UnsafeMutablePointer<Float>
    let highImag: UnsafeMutablePointer<Float>
    /// X_Low slot-major for the LPC: 40 slots × 32 bands; the covariance sums, 8 rows of 8
    /// bands per group of 8 bands.
    let lowSlotReal: UnsafeMutablePointer<Float>
    let lowSlotImag: UnsafeMutablePointer<Float>
    let covariance: UnsafeMutablePointer<Float>
    /// X_High slot-major for HF assembly: 40 slots × 64 bands, from band k_x.
    let highSlotReal: UnsafeMutablePointer<Float>
    let highSlotImag: UnsafeMutablePointer<Float>
    let alpha0: UnsafeMutablePointer<Float>
    let alpha1: UnsafeMutablePointer<Float>
    /// The synthesis input X of a channel without PS, slot-major (32 slots × 64 bands).
    let synthesisReal: UnsafeMutablePointer<Float>
    let synthesisImag: UnsafeMutablePointer<Float>
    /// E_OrigMapped, Q_Mapped, E_Curr, the gains G, Q_M and S_M, per envelope.
    let origMapped: UnsafeMutablePointer<Float>
    let noiseMapped: UnsafeMutablePointer<Float>
    let current: UnsafeMutablePointer<Float>
    let gain: UnsafeMutablePointer<Float>
    let noiseLevel: UnsafeMutablePointer<Float>
    let sineLevel: UnsafeMutablePointer<Float>
    /// One slot's smoothed gains and noise levels.
    let filteredGain: UnsafeMutablePointer<Float>
    let filteredNoise: UnsafeMutablePointer<Float>
    /// S_IndexMapped (row l + 1 for envelope l; row 0 is the previous frame's) and S_Mapped.
    var sineIndexMapped = [Bool](repeating: false, count: 6 * 64)
    var sineMapped = [Bool](repeating: false, count: 5 * 64)
    private let all: [UnsafeMutablePointer<Float>]

    init() {
        func buffer(_ n: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return p
        }
        lowReal = buffer(32 * 40); lowImag = buffer(32 * 40)
        highReal = buffer(64 * 40); highImag = buffer(64 * 40)
        highSlotReal = buffer(40 * 64); highSlotImag = buffer(40 * 64)
        lowSlotReal = buffer(40 * 32); lowSlotImag = buffer(40 * 32); covariance = buffer(4 * 8 * 8)
        alpha0 = buffer(2 * 64); alpha1 = buffer(2 * 64)
        synthesisReal = buffer(32 * 64); synthesisImag = buffer(32 * 64)
        origMapped = buffer(5 * 64); noiseMapped = buffer(5 * 64); current = buffer(5 * 64)
        gain = buffer(5 * 64); noiseLevel = buffer(5 * 64); sineLevel = buffer(5 * 64)
        filteredGain = buffer(64); filteredNoise = buffer(64)
        all = [lowReal, lowImag, highReal, highImag, highSlotReal, highSlotImag, lowSlotReal, lowSlotImag, covariance, alpha0, alpha1, synthesisReal, synthesisImag,
               origMapped, noiseMapped, current, gain, noiseLevel, sineLevel, filteredGain, filteredNoise]
    }

    deinit { for p in all { p.deallocate() } }
}

/// The parametric stereo part of a mono element's SBR decoder (HE-AAC v2): the PS decoder,
/// the right channel's synthesis bank, and the QMF matrices between them, slot-major (64
/// bands a slot): X of 38 slots, the left and right outputs of 32.
final class SBRStereo {
    let ps = PSDecoder()
    let synthesis = SBRSynthesisFilterbank()
    /// PS payloads refused so far (each leaves the last parameters over its frame).
    var refusedPayloads = 0
    let inputReal: UnsafeMutablePointer<Float>
    let inputImag: UnsafeMutablePointer<Float>
    let leftReal: UnsafeMutablePointer<Float>
    let leftImag: UnsafeMutablePointer<Float>
    let rightReal: UnsafeMutablePointer<Float>
    let rightImag: UnsafeMutablePointer<Float>

    init() {
        func buffer(_ n: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return p
        }
        inputReal = buffer(38 * 64); inputImag = buffer(38 * 64)
        leftReal = buffer(32 * 64); leftImag = buffer(32 * 64)
        rightReal = buffer(32 * 64); rightImag = buffer(32 * 64)
    }

    deinit { for p in [inputReal, inputImag, leftReal, leftImag, rightReal, rightImag] { p.deallocate() } }

    func reset() {
        ps.reset()
        synthesis.reset()
    }
}

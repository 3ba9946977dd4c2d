#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The CELT layer of Opus (RFC 6716 §4.3) for one stream of one or two channels: a frame of
/// 2.5–20 ms from the range decoder to 48 kHz PCM.
final class CELTDecoder {
    /// Channels this decoder outputs (the stream's: 1, or 2 for a coupled stream).
    let channels: Int
    static let bufferSize = 2048
    private static let historySize = bufferSize + CELTTables.overlap

    /// Per channel, the synthesis history: the last `bufferSize` output samples (before
    /// de-emphasis) and the next frame's overlap.
    let history: UnsafeMutablePointer<Float>
    /// Band energies of the last frame, of the two before (for anti-collapse), and the
    /// background noise level (for concealment), 21 per channel.
    private let oldBandE: UnsafeMutablePointer<Float>
    private let oldLogE: UnsafeMutablePointer<Float>
    private let oldLogE2: UnsafeMutablePointer<Float>
    private let backgroundLogE: UnsafeMutablePointer<Float>
    private var preemphasisMemory: (Float, Float) = (0, 0)
    var postfilterPeriod = 0, postfilterPeriodOld = 0
    var postfilterGain: Float = 0, postfilterGainOld: Float = 0
    var postfilterTapset = 0, postfilterTapsetOld = 0
    /// The final range of the last frame, which seeds the folding noise.
    private(set) var rng: UInt32 = 0
    /// Frames concealed in a row (×2^LM samples, as the reference counts them).
    var lossCount = 0
    /// Lost frames in a row, and whether the last one was pitch-based: the periodic
    /// concealment runs for the first five losses after two good frames in a row.
    var lostFrames = 0
    var skipPeriodicConcealment = true
    var lastConcealmentWasPeriodic = false
    var concealmentPitch = 0
    /// The LPC (order 24) of each channel's excitation, from the first lost frame.
    var concealmentLPC = [Float](repeating: 0, count: 2 * 24)

    /// What the frames used, for tests: transient frames, anti-collapse, post-filter,
    /// intensity and dual stereo, concealed frames.
    struct Statistics {
        var frames = 0, transient = 0, antiCollapse = 0, postfilter = 0, intensity = 0, dualStereo = 0, concealed = 0
    }
    private(set) var statistics = Statistics()

    /// First and last+1 coded band: 17 in hybrid frames; by bandwidth.
    var startBand = 0
    var endBand = 21

    private let imdct = CELTIMDCT()
    private let bands = CELTBandDecoder()
    private let x: UnsafeMutablePointer<Float>
    private let freq: UnsafeMutablePointer<Float>
    private let collapse: UnsafeMutablePointer<UInt8>
    private var allocation = CELTAllocation()
    private var caps = [Int](repeating: 0, count: CELTTables.bandCount)
    private var offsets = [Int](repeating: 0, count: CELTTables.bandCount)
    private var tfRes = [Int](repeating: 0, count: CELTTables.bandCount)

    init(channels: Int) {
        self.channels = channels
        history = .allocate(capacity: 2 * Self.historySize)
        let energies = UnsafeMutablePointer<Float>.allocate(capacity: 4 * 2 * CELTTables.bandCount)
        oldBandE = energies
        oldLogE = energies + 2 * CELTTables.bandCount
        oldLogE2 = energies + 4 * CELTTables.bandCount
        backgroundLogE = energies + 6 * CELTTables.bandCount
        x = .allocate(capacity: 2 * 960)
        x.initialize(repeating: 0, count: 2 * 960)
        freq = .allocate(capacity: 2 * 960)
        freq.initialize(repeating: 0, count: 2 * 960)
        collapse = .allocate(capacity: 2 * CELTTables.bandCount)
        collapse.initialize(repeating: 0, count: 2 * CELTTables.bandCount)
        bands.disablePhaseInversion = channels == 1
        reset()
    }

    deinit {
        history.deallocate()
        oldBandE.deallocate()
        x.deallocate()
        freq.deallocate()
        collapse.deallocate()
    }

    /// OPUS_RESET_STATE.
    func reset() {
        history.initialize(repeating: 0, count: 2 * Self.historySize)
        let n = 2 * CELTTables.bandCount
        oldBandE.initialize(repeating: 0, count: n)
        oldLogE.initialize(repeating: -28, count: n)
        oldLogE2.initialize(repeating: -28, count: n)
        backgroundLogE.initialize(repeating: 0, count: n)
        preemphasisMemory = (0, 0)
        postfilterPeriod = 0; postfilterPeriodOld = 0
        postfilterGain = 0; postfilterGainOld = 0
        postfilterTapset = 0; postfilterTapsetOld = 0
        rng = 0
        lossCount = 0
        lostFrames = 0
        skipPeriodicConcealment = true
        lastConcealmentWasPeriodic = false
    }

    @inline(__always)
    func channelHistory(_ c: Int) -> UnsafeMutablePointer<Float> { history + c * Self.historySize }

    /// Decodes one frame of `frameSize` samples (120 · 2^LM) from `rd`, whose frame is `length`
    /// bytes long, for a packet of `streamChannels` channels, into `output` (planar,
    /// `output[c · stride + i]`, ±1.0; `stride` is `frameSize` unless given), added to what
    /// is there when `accumulate`.
    func decode(_ rd: inout OpusRangeDecoder, length: Int, frameSize: Int, streamChannels: Int,
                output: UnsafeMutablePointer<Float>, stride: Int? = nil, accumulate: Bool)
    {
        let nb = CELTTables.bandCount
        var lm = 0
        while lm < 3 && CELTTables.shortBlockSize << lm != frameSize { lm += 1 }
        let m = 1 << lm
        let n = frameSize
        let c = streamChannels
        let cc = channels
        let start = startBand, end = endBand
        // Two good frames in a row before pitch-based concealment again.
        skipPeriodicConcealment = lostFrames != 0
        let effEnd = min(end, CELTTables.effectiveBands)
        if c == 1 {
            for i in 0..<nb { oldBandE[i] = max(oldBandE[i], oldBandE[nb + i]) }
        }
        var totalBits = length * 8
        var tell = rd.tell()
        var silence = false
        if tell >= totalBits {
            silence = true
        } else if tell == 1 {
            silence = rd.decodeBit(logp: 15)
        }
        if silence {
            // Pretend every bit was read: the rest of the frame decodes as zeros.
            tell = length * 8
            rd.skipToEnd()
        }
        var postfilterGainNew: Float = 0
        var postfilterPitch = 0
        var postfilterTapsetNew = 0
        if start == 0 && tell + 16 <= totalBits {
            if rd.decodeBit(logp: 1) {
                let octave = Int(rd.decodeUInt(6))
                postfilterPitch = (16 << octave) + Int(rd.decodeBits(4 + octave)) - 1
                let qg = Int(rd.decodeBits(3))
                if rd.tell() + 2 <= totalBits {
                    postfilterTapsetNew = CELTTables.tapsetICDF.withUnsafeBufferPointer { rd.decodeICDF($0, bits: 2) }
                }
                postfilterGainNew = 0.09375 * Float(qg + 1)
            }
            tell = rd.tell()
        }
        var transient = false
        if lm > 0 && tell + 3 <= totalBits {
            transient = rd.decodeBit(logp: 3)
            tell = rd.tell()
        }
        let intra = tell + 3 <= totalBits ? rd.decodeBit(logp: 3) : false
        if !intra && lossCount != 0 {
            // After a loss, keep the energy prediction from overshooting.
            let missing = min(10, lossCount >> lm)
            let safety: Float = lm == 0 ? 1.5 : lm == 1 ? 0.5 : 0
            for ch in 0..<2 {
                for i in start..<end {
                    let k = ch * nb + i
                    if oldBandE[k] < max(oldLogE[k], oldLogE2[k]) {
                        let e0 = oldBandE[k], e1 = oldLogE[k], e2 = oldLogE2[k]
                        var slope = max(e1 - e0, 0.5 * (e2 - e0))
                        slope = min(slope, 2)
                        oldBandE[k] = max(-20, e0 - max(0, Float(1 + missing) * slope))
                    } else {
                        oldBandE[k] = min(min(oldBandE[k], oldLogE[k]), oldLogE2[k])
                    }
                    oldBandE[k] -= safety
                }
            }
        }
        CELTEnergy.decodeCoarse(oldBandE, start: start, end: end, intra: intra, channels: c, lm: lm, &rd)
        decodeTF(start: start, end: end, transient: transient, lm: lm, &rd)
        tell = rd.tell()
        var spread = 2
        if tell + 4 <= totalBits {
            spread = CELTTables.spreadICDF.withUnsafeBufferPointer { rd.decodeICDF($0, bits: 5) }
        }
        CELTAllocation.caps(lm: lm, channels: c, into: &caps)
        var dynallocLogp = 6
        totalBits <<= CELTTables.bitRes
        var tellFrac = rd.tellFraction()
        for i in 0..<nb { offsets[i] = 0 }
        for i in start..<end {
            let width = (c * (CELTTables.bandEdges[i + 1] - CELTTables.bandEdges[i])) << lm
            let quanta = min(width << CELTTables.bitRes, max(6 << CELTTables.bitRes, width))
            var loopLogp = dynallocLogp
            var boost = 0
            while tellFrac + (loopLogp << CELTTables.bitRes) < totalBits && boost < caps[i] {
                let flag = rd.decodeBit(logp: loopLogp)
                tellFrac = rd.tellFraction()
                if !flag { break }
                boost += quanta
                totalBits -= quanta
                loopLogp = 1
            }
            offsets[i] = boost
            if boost > 0 { dynallocLogp = max(2, dynallocLogp - 1) }
        }
        let trim = tellFrac + (6 << CELTTables.bitRes) <= totalBits
            ? CELTTables.trimICDF.withUnsafeBufferPointer { rd.decodeICDF($0, bits: 7) } : 5
        var bits = ((length * 8) << CELTTables.bitRes) - rd.tellFraction() - 1
        let antiCollapseReserve = transient && lm >= 2 && bits >= (lm + 2) << CELTTables.bitRes ? 1 << CELTTables.bitRes : 0
        bits -= antiCollapseReserve
        allocation.compute(start: start, end: end, offsets: offsets, cap: caps, trim: trim, total: bits, channels: c, lm: lm, &rd)
        allocation.fineQuant.withUnsafeBufferPointer { fq in
            CELTEnergy.decodeFine(oldBandE, start: start, end: end, fineQuant: fq.baseAddress!, channels: c, &rd)
        }
        for ch in 0..<cc {
            let h = channelHistory(ch)
            h.update(from: h + n, count: Self.bufferSize - n + CELTTables.overlap)
        }
        x.update(repeating: 0, count: 2 * n)
        bands.seed = rng
        bands.decode(x: x, y: c == 2 ? x + n : nil, collapse: collapse, start: start, end: end, allocation: allocation,
                     shortBlocks: transient, spread: spread, tfRes: tfRes,
                     totalBits: length * (8 << CELTTables.bitRes) - antiCollapseReserve, lm: lm, &rd)
        var antiCollapseOn = false
        if antiCollapseReserve > 0 { antiCollapseOn = rd.decodeBits(1) != 0 }
        allocation.fineQuant.withUnsafeBufferPointer { fq in
            allocation.finePriority.withUnsafeBufferPointer { fp in
                CELTEnergy.decodeFinal(oldBandE, start: start, end: end, fineQuant: fq.baseAddress!,
                                       finePriority: fp.baseAddress!, bitsLeft: length * 8 - rd.tell(), channels: c, &rd)
            }
        }
        statistics.frames += 1
        if transient { statistics.transient += 1 }
        if antiCollapseOn { statistics.antiCollapse += 1 }
        if postfilterGainNew > 0 { statistics.postfilter += 1 }
        if c == 2 && allocation.intensity > start && allocation.intensity < end { statistics.intensity += 1 }
        if allocation.dualStereo { statistics.dualStereo += 1 }
        if antiCollapseOn {
            antiCollapse(lm: lm, channels: c, n: n, start: start, end: end, seed: bands.seed)
        }
        if silence {
            for i in 0..<(c * nb) { oldBandE[i] = -28 }
        }
        synthesize(lm: lm, n: n, streamChannels: c, transient: transient, start: start, end: effEnd, silence: silence)
        postfilter(lm: lm, n: n, channels: cc, next: (postfilterPitch, postfilterGainNew, postfilterTapsetNew))
        if c == 1 { (oldBandE + nb).update(from: oldBandE, count: nb) }
        if !transient {
            oldLogE2.update(from: oldLogE, count: 2 * nb)
            oldLogE.update(from: oldBandE, count: 2 * nb)
        } else {
            for i in 0..<(2 * nb) { oldLogE[i] = min(oldLogE[i], oldBandE[i]) }
        }
        let increase = Float(min(160, lossCount + m)) * 0.001
        for i in 0..<(2 * nb) { backgroundLogE[i] = min(backgroundLogE[i] + increase, oldBandE[i]) }
        for ch in 0..<2 {
            for i in 0..<start {
                oldBandE[ch * nb + i] = 0
                oldLogE[ch * nb + i] = -28; oldLogE2[ch * nb + i] = -28
            }
            for i in end..<nb {
                oldBandE[ch * nb + i] = 0
                oldLogE[ch * nb + i] = -28; oldLogE2[ch * nb + i] = -28
            }
        }
        rng = rd.range
        deemphasize(n: n, output: output, stride: stride ?? n, accumulate: accumulate)
        lossCount = 0
        lostFrames = 0
        lastConcealmentWasPeriodic = false
    }

    /// A lost frame (RFC 6716 §4.4, the reference decoder's behaviour): for the first
    /// losses, the last pitch period repeated through an LPC synthesis filter, decaying;
    /// after five, in hybrid frames or before two good frames in a row, noise.
    func conceal(frameSize n: Int, output: UnsafeMutablePointer<Float>, accumulate: Bool) {
        if lostFrames >= 5 || startBand != 0 || skipPeriodicConcealment {
            concealWithNoise(frameSize: n, output: output, accumulate: accumulate)
            lastConcealmentWasPeriodic = false
        } else {
            concealPeriodically(frameSize: n)
            deemphasize(n: n, output: output, accumulate: accumulate)
            lastConcealmentWasPeriodic = true
        }
        var lm = 0
        while lm < 3 && CELTTables.shortBlockSize << lm != n { lm += 1 }
        lossCount += 1 << lm
        lostFrames += 1
        statistics.concealed += 1
    }

    /// Noise shaped by the last band energies, decaying towards the background level,
    /// through the post-filter with the last parameters.
    private func concealWithNoise(frameSize n: Int, output: UnsafeMutablePointer<Float>, accumulate: Bool) {
        let nb = CELTTables.bandCount
        var lm = 0
        while lm < 3 && CELTTables.shortBlockSize << lm != n { lm += 1 }
        let start = startBand, end = endBand
        let effEnd = max(start, min(end, CELTTables.effectiveBands))
        for ch in 0..<channels {
            let h = channelHistory(ch)
            h.update(from: h + n, count: Self.bufferSize - n + CELTTables.overlap)
        }
        let decay: Float = lossCount == 0 ? 1.5 : 0.5
        for ch in 0..<channels {
            for i in start..<end {
                oldBandE[ch * nb + i] = max(backgroundLogE[ch * nb + i], oldBandE[ch * nb + i] - decay)
            }
        }
        var seed = rng
        x.update(repeating: 0, count: 2 * n)
        for ch in 0..<channels {
            for i in start..<effEnd {
                let offset = n * ch + (CELTTables.bandEdges[i] << lm)
                let length = (CELTTables.bandEdges[i + 1] - CELTTables.bandEdges[i]) << lm
                for j in 0..<length {
                    seed = CELTBandDecoder.lcg(seed)
                    x[offset + j] = Float(Int32(bitPattern: seed) >> 20)
                }
                CELTPVQ.renormalize(x + offset, n: length, gain: 1)
            }
        }
        rng = seed
        synthesize(lm: lm, n: n, streamChannels: channels, transient: false, start: start, end: effEnd, silence: false)
        postfilter(lm: lm, n: n, channels: channels, next: nil)
        deemphasize(n: n, output: output, accumulate: accumulate)
    }

    /// The pitch post-filter over the frame just synthesised in each channel's history: its
    /// first 2.5 ms cross-fade from the previous parameters to the current ones, the rest (in
    /// frames longer than 2.5 ms) from the current ones to `next`, which then become current
    /// (`nil`: a concealed frame keeps the current ones).
    private func postfilter(lm: Int, n: Int, channels count: Int, next: (period: Int, gain: Float, tapset: Int)?) {
        for ch in 0..<count {
            let syn = channelHistory(ch) + Self.bufferSize - n
            postfilterPeriod = max(postfilterPeriod, CELTTables.combFilterMinimumPeriod)
            postfilterPeriodOld = max(postfilterPeriodOld, CELTTables.combFilterMinimumPeriod)
            Self.combFilter(syn, n: CELTTables.shortBlockSize, t0: postfilterPeriodOld, t1: postfilterPeriod,
                            g0: postfilterGainOld, g1: postfilterGain, tapset0: postfilterTapsetOld, tapset1: postfilterTapset)
            if lm != 0 {
                Self.combFilter(syn + CELTTables.shortBlockSize, n: n - CELTTables.shortBlockSize, t0: postfilterPeriod,
                                t1: next?.period ?? postfilterPeriod, g0: postfilterGain, g1: next?.gain ?? postfilterGain,
                                tapset0: postfilterTapset, tapset1: next?.tapset ?? postfilterTapset)
            }
        }
        postfilterPeriodOld = postfilterPeriod
        postfilterGainOld = postfilterGain
        postfilterTapsetOld = postfilterTapset
        guard let next else { return }
        (postfilterPeriod, postfilterGain, postfilterTapset) = next
        if lm != 0 {
            postfilterPeriodOld = postfilterPeriod
            postfilterGainOld = postfilterGain
            postfilterTapsetOld = postfilterTapset
        }
    }

    /// tf_decode (§4.3.4.5): per band, the time–frequency resolution change.
    private func decodeTF(start: Int, end: Int, transient: Bool, lm: Int, _ rd: inout OpusRangeDecoder) {
        var budget = rd.storage * 8
        var tell = rd.tell()
        var logp = transient ? 2 : 4
        let selectReserve = lm > 0 && tell + logp + 1 <= budget
        if selectReserve { budget -= 1 }
        var changed = 0, current = 0
        for i in start..<end {
            if tell + logp <= budget {
                current ^= rd.decodeBit(logp: logp) ? 1 : 0
                tell = rd.tell()
                changed |= current
            }
            tfRes[i] = current
            logp = transient ? 4 : 5
        }
        var select = 0
        let t = transient ? 4 : 0
        let table = CELTTables.tfSelect[lm]
        if selectReserve && table[t + changed] != table[t + 2 + changed] {
            select = rd.decodeBit(logp: 1) ? 1 : 0
        }
        for i in start..<end { tfRes[i] = table[t + 2 * select + tfRes[i]] }
    }

    /// anti_collapse (§4.3.5): noise in the short blocks of transient frames that got no pulse.
    private func antiCollapse(lm: Int, channels c: Int, n size: Int, start: Int, end: Int, seed seedIn: UInt32) {
        let nb = CELTTables.bandCount
        var seed = seedIn
        for i in start..<end {
            let n0 = CELTTables.bandEdges[i + 1] - CELTTables.bandEdges[i]
            let depth = ((1 + allocation.pulses[i]) / n0) >> lm
            let thresh = 0.5 * exp2f(-0.125 * Float(depth))
            let sqrt1 = 1 / sqrtf(Float(n0 << lm))
            for ch in 0..<c {
                var prev1 = oldLogE[ch * nb + i], prev2 = oldLogE2[ch * nb + i]
                if c == 1 {
                    prev1 = max(prev1, oldLogE[nb + i])
                    prev2 = max(prev2, oldLogE2[nb + i])
                }
                let ediff = max(0, oldBandE[ch * nb + i] - min(prev1, prev2))
                var r = 2 * exp2f(-ediff)
                if lm == 3 { r *= 1.41421356 }
                r = min(thresh, r) * sqrt1
                let band = x + ch * size + (CELTTables.bandEdges[i] << lm)
                var renormalize = false
                for k in 0..<(1 << lm) where collapse[i * c + ch] & UInt8(truncatingIfNeeded: 1 << k) == 0 {
                    for j in 0..<n0 {
                        seed = CELTBandDecoder.lcg(seed)
                        band[(j << lm) + k] = seed & 0x8000 != 0 ? r : -r
                    }
                    renormalize = true
                }
                if renormalize { CELTPVQ.renormalize(band, n: n0 << lm, gain: 1) }
            }
        }
    }

    /// denormalise_bands: the shape times the band's amplitude 2^(energy + mean).
    private func denormalize(_ shape: UnsafePointer<Float>, into f: UnsafeMutablePointer<Float>, energy: UnsafePointer<Float>,
                             lm: Int, n: Int, start: Int, end: Int, silence: Bool)
    {
        let m = 1 << lm
        var s = start, e = end
        if silence { s = 0; e = 0 }
        f.update(repeating: 0, count: n)
        for i in s..<e {
            let g = exp2f(min(32, energy[i] + CELTTables.energyMeans[i]))
            for j in (m * CELTTables.bandEdges[i])..<(m * CELTTables.bandEdges[i + 1]) { f[j] = shape[j] * g }
        }
    }

    /// celt_synthesis: denormalisation and the inverse MDCTs into the history.
    private func synthesize(lm: Int, n: Int, streamChannels c: Int, transient: Bool, start: Int, end: Int, silence: Bool) {
        let nb = CELTTables.bandCount
        let blocks = transient ? 1 << lm : 1
        let nbBlock = transient ? CELTTables.shortBlockSize : n
        let shift = transient ? 0 : lm
        CELTTables.window.withUnsafeBufferPointer { w in
            let window = w.baseAddress!
            if channels == 2 && c == 1 {
                denormalize(x, into: freq, energy: oldBandE, lm: lm, n: n, start: start, end: end, silence: silence)
                for ch in 0..<2 {
                    let syn = channelHistory(ch) + Self.bufferSize - n
                    for b in 0..<blocks {
                        imdct.backward(freq + b, stride: blocks, shift: shift, into: syn + nbBlock * b, window: window)
                    }
                }
            } else if channels == 1 && c == 2 {
                let freq2 = freq + 960
                denormalize(x, into: freq, energy: oldBandE, lm: lm, n: n, start: start, end: end, silence: silence)
                denormalize(x + n, into: freq2, energy: oldBandE + nb, lm: lm, n: n, start: start, end: end, silence: silence)
                for i in 0..<n { freq[i] = 0.5 * freq[i] + 0.5 * freq2[i] }
                let syn = channelHistory(0) + Self.bufferSize - n
                for b in 0..<blocks {
                    imdct.backward(freq + b, stride: blocks, shift: shift, into: syn + nbBlock * b, window: window)
                }
            } else {
                for ch in 0..<channels {
                    denormalize(x + ch * n, into: freq, energy: oldBandE + ch * nb, lm: lm, n: n, start: start, end: end,
                                silence: silence)
                    let syn = channelHistory(ch) + Self.bufferSize - n
                    for b in 0..<blocks {
                        imdct.backward(freq + b, stride: blocks, shift: shift, into: syn + nbBlock * b, window: window)
                    }
                }
            }
        }
    }

    /// The pitch post-filter (§4.3.7.1), in place over `n` samples at `y` (with its history
    /// before): from period t0 / gain g0 to t1 / g1, cross-faded over the overlap.
    static func combFilter(_ y: UnsafeMutablePointer<Float>, n: Int, t0 t0In: Int, t1 t1In: Int, g0: Float, g1: Float,
                           tapset0: Int, tapset1: Int)
    {
        if g0 == 0 && g1 == 0 { return }
        let t0 = max(t0In, CELTTables.combFilterMinimumPeriod), t1 = max(t1In, CELTTables.combFilterMinimumPeriod)
        let gains = CELTTables.combGains
        let g00 = g0 * gains[tapset0][0], g01 = g0 * gains[tapset0][1], g02 = g0 * gains[tapset0][2]
        let g10 = g1 * gains[tapset1][0], g11 = g1 * gains[tapset1][1], g12 = g1 * gains[tapset1][2]
        var x1 = y[-t1 + 1], x2 = y[-t1], x3 = y[-t1 - 1], x4 = y[-t1 - 2]
        var overlap = CELTTables.overlap
        if g0 == g1 && t0 == t1 && tapset0 == tapset1 { overlap = 0 }
        overlap = min(overlap, n)
        var i = 0
        CELTTables.window.withUnsafeBufferPointer { w in
            while i < overlap {
                let x0 = y[i - t1 + 2]
                let f = w[i] * w[i]
                let a = 1 - f
                y[i] = y[i]
                    + (a * g00) * y[i - t0]
                    + (a * g01) * (y[i - t0 + 1] + y[i - t0 - 1])
                    + (a * g02) * (y[i - t0 + 2] + y[i - t0 - 2])
                    + (f * g10) * x2
                    + (f * g11) * (x1 + x3)
                    + (f * g12) * (x0 + x4)
                x4 = x3; x3 = x2; x2 = x1; x1 = x0
                i += 1
            }
        }
        if g1 == 0 { return }
        // The constant filter for the rest.
        x4 = y[i - t1 - 2]; x3 = y[i - t1 - 1]; x2 = y[i - t1]; x1 = y[i - t1 + 1]
        while i < n {
            let x0 = y[i - t1 + 2]
            y[i] = y[i] + g10 * x2 + g11 * (x1 + x3) + g12 * (x0 + x4)
            x4 = x3; x3 = x2; x2 = x1; x1 = x0
            i += 1
        }
    }

    /// De-emphasis (1/(1 − 0.85·z⁻¹)) and scaling to ±1.0.
    func deemphasize(n: Int, output: UnsafeMutablePointer<Float>, stride: Int? = nil, accumulate: Bool) {
        let coef = CELTTables.deemphasis
        let scale: Float = 1.0 / 32768
        for ch in 0..<channels {
            let syn = channelHistory(ch) + Self.bufferSize - n
            var mem = ch == 0 ? preemphasisMemory.0 : preemphasisMemory.1
            let out = output + ch * (stride ?? n)
            if accumulate {
                for j in 0..<n {
                    let t = syn[j] + 1e-30 + mem
                    mem = coef * t
                    out[j] += t * scale
                }
            } else {
                for j in 0..<n {
                    let t = syn[j] + 1e-30 + mem
                    mem = coef * t
                    out[j] = t * scale
                }
            }
            if ch == 0 { preemphasisMemory.0 = mem } else { preemphasisMemory.1 = mem }
        }
    }
}

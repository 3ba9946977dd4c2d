import TonearmCore

/// Layer III of MPEG-1, MPEG-2 LSF and MPEG-2.5 (ISO/IEC 11172-3 2.4.3.4, 13818-3 2.4.3.4):
/// one frame in, 1152 or 576 PCM samples per channel out.
///
/// The steps per granule and channel: the bit reservoir gives the main data; scale
/// factors; Huffman decoding (``Layer3Huffman``); requantisation; joint stereo (mid/side,
/// intensity stereo of MPEG-1 and of LSF); the reordering of short blocks; alias
/// reduction; the IMDCT with its windows and overlap; frequency inversion; and the
/// synthesis filter bank.
final class Layer3Decoder {
    /// How a frame went.
    enum Outcome {
        case decoded
        /// The reservoir did not hold the bytes main_data_begin points back to, as after a
        /// seek: the frame's spectrum is silent, its overlap from before still sounds.
        case missingReservoir
        /// Side information, CRC or lengths are wrong: silent spectrum, as above.
        case damaged
    }

    private static let reservoirCapacity = 4096

    /// Main data bytes: the tail of earlier frames (the reservoir) and then this frame's.
    private let reservoir: UnsafeMutablePointer<UInt8>
    private var reservoirCount = 0
    /// Per channel: the spectrum (576), the overlap of the IMDCT (576, as `time`: 18 slots
    /// × 32 subbands), the Huffman values.
    private let xr: UnsafeMutablePointer<Float>
    private let overlap: UnsafeMutablePointer<Float>
    private let quantized: UnsafeMutablePointer<Int32>
    /// One granule's IMDCT output, 18 time slots × 32 subbands, and scratch space.
    private let time: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    /// The IMDCT's working values, four subbands to a vector.
    private let lanes: UnsafeMutablePointer<SIMD4<Float>>
    /// Scale factors per channel: 22 long bands, and 13 short bands × 3 windows.
    private var longScale = [[Int]](repeating: [Int](repeating: 0, count: 22), count: 2)
    private var shortScale = [[Int]](repeating: [Int](repeating: 0, count: 39), count: 2)
    private var intensityScale = 0
    /// LSF intensity stereo: per long band (22), then per short band and window (39), the
    /// position that is illegal there (the largest its scale factor length can hold), or
    /// -1 where every position is legal (0-bit scale factors).
    private var illegalLong = [Int](repeating: -1, count: 22)
    private var illegalShort = [Int](repeating: -1, count: 39)
    private var sideInfo = Layer3SideInfo()
    /// This decoder's copies of the tables its loops read, so that they read no globals.
    private let pow43: UnsafeMutablePointer<Float>
    private let gains: UnsafeMutablePointer<Float>
    private let imdctShortMatrix: UnsafeMutablePointer<Float>
    private let oddScale: UnsafeMutablePointer<Float>
    /// The IMDCT windows with its scaling and signs: block types 0, 1, 3 (36 each), then
    /// the short window (12).
    private let windows: UnsafeMutablePointer<Float>
    private let alias: UnsafeMutablePointer<Float>

    private static func copy(_ tables: [Float]...) -> UnsafeMutablePointer<Float> {
        let all = tables.flatMap { $0 }
        let p = UnsafeMutablePointer<Float>.allocate(capacity: all.count)
        p.initialize(from: all, count: all.count)
        return p
    }

    init() {
        pow43 = Self.copy(Layer3Tables.pow43)
        gains = Self.copy(Layer3Tables.gains)
        imdctShortMatrix = Self.copy(Layer3Tables.imdctShort)
        oddScale = Self.copy(Layer3Tables.imdctOddScale)
        windows = Self.copy(Layer3Tables.imdctLongWindows[0], Layer3Tables.imdctLongWindows[1],
                            Layer3Tables.imdctLongWindows[2], Layer3Tables.imdctShortWindow)
        alias = Self.copy(Layer3Tables.aliasCS, Layer3Tables.aliasCA)
        reservoir = .allocate(capacity: Self.reservoirCapacity + 8)
        reservoir.initialize(repeating: 0, count: Self.reservoirCapacity + 8)
        xr = .allocate(capacity: 2 * 576)
        xr.initialize(repeating: 0, count: 2 * 576)
        overlap = .allocate(capacity: 2 * 576)
        overlap.initialize(repeating: 0, count: 2 * 576)
        quantized = .allocate(capacity: 576)
        quantized.initialize(repeating: 0, count: 576)
        time = .allocate(capacity: 576)
        time.initialize(repeating: 0, count: 576)
        scratch = .allocate(capacity: 640)
        scratch.initialize(repeating: 0, count: 640)
        lanes = .allocate(capacity: 64)
        lanes.initialize(repeating: SIMD4<Float>(), count: 64)
    }

    deinit {
        for p in [pow43, gains, imdctShortMatrix, oddScale, windows, alias] { p.deallocate() }
        lanes.deallocate()
        reservoir.deallocate()
        xr.deallocate()
        overlap.deallocate()
        quantized.deallocate()
        time.deallocate()
        scratch.deallocate()
    }

    func reset() {
        reservoirCount = 0
        overlap.update(repeating: 0, count: 2 * 576)
    }

    /// Decodes one frame into `pcm` (planar, channel c at c × 1152), for `h.channels`
    /// channels, through the channels' synthesis filters.
    func decode(_ frame: UnsafeRawBufferPointer, header h: MPEGAudioHeader, synthesis: [MPEGSynthesisFilter],
                into pcm: UnsafeMutablePointer<Float>) -> Outcome
    {
        let channels = h.channels
        let granules = h.version == .mpeg1 ? 2 : 1
        let mainStart = h.headerLength + h.sideInfoSize
        var outcome = Outcome.decoded
        var dataStart = -1, dataEnd = 0
        if frame.count < mainStart || !sideInfo.parse(frame, header: h) {
            // Where this frame's main data ends is unknown: later frames cannot point back.
            reservoirCount = 0
            outcome = .damaged
        } else {
            // A CRC covers the side information only: the main data still feeds the reservoir.
            if h.hasCRC && !MPEGCRC.check(frame, protectedBits: h.sideInfoSize * 8) { outcome = .damaged }
            // Keep at most the 511 bytes a later frame can point back to.
            let incoming = frame.count - mainStart
            if reservoirCount + incoming > Self.reservoirCapacity {
                let keep = min(reservoirCount, 512)
                (reservoir + 0).update(from: reservoir + (reservoirCount - keep), count: keep)
                reservoirCount = keep
            }
            if sideInfo.mainDataBegin <= reservoirCount {
                dataStart = reservoirCount - sideInfo.mainDataBegin
            } else if outcome == .decoded {
                outcome = .missingReservoir
            }
            let n = min(incoming, Self.reservoirCapacity - reservoirCount)
            (reservoir + reservoirCount).update(from: frame.baseAddress!.assumingMemoryBound(to: UInt8.self) + mainStart, count: n)
            reservoirCount += n
            dataEnd = reservoirCount
        }

        let rate = h.sampleRateIndex
        let data = UnsafeRawBufferPointer(start: reservoir, count: dataEnd)
        var position = max(0, dataStart) * 8
        for gr in 0..<granules {
            var nonzero = (0, 0)
            for ch in 0..<channels {
                let spectrum = xr + ch * 576
                guard outcome == .decoded else {
                    spectrum.update(repeating: 0, count: 576)
                    continue
                }
                var g = sideInfo.granules[gr * 2 + ch]
                let end = min(position + g.part23Length, dataEnd * 8)
                var bits = MPEGBits(data, bitPosition: position)
                if h.version == .mpeg1 {
                    readScaleFactorsMPEG1(&bits, g, channel: ch, granule: gr)
                } else {
                    g.preflag = readScaleFactorsLSF(&bits, g, channel: ch,
                                                    intensityChannel: ch == 1 && h.channelMode == 1 && h.modeExtension & 1 != 0)
                }
                let n = huffman(data, from: min(bits.position, end), to: end, g, rate: rate)
                requantize(g, count: n, channel: ch, rate: rate, mpeg1: h.version == .mpeg1)
                if ch == 0 { nonzero.0 = n } else { nonzero.1 = n }
                position += g.part23Length
            }
            if outcome == .decoded, channels == 2, h.channelMode == 1 {
                jointStereo(h, right: sideInfo.granules[gr * 2 + 1], rate: rate, nonzero: &nonzero)
            }
            for ch in 0..<channels {
                let g = outcome == .decoded ? sideInfo.granules[gr * 2 + ch] : Layer3GranuleInfo()
                let n = outcome == .decoded ? (ch == 0 ? nonzero.0 : nonzero.1) : 0
                hybridSynthesis(g, count: n, channel: ch, rate: rate, mpeg1: h.version == .mpeg1)
                let out = pcm + ch * 1152 + gr * 576
                synthesis[ch].synthesize(time, slots: 18, into: out)
            }
        }
        return outcome
    }

    /// A silent frame of `frames` samples per channel (a damaged or foreign frame): the
    /// overlap of the last granule fades out through the filter bank. The reservoir is
    /// dropped, as the next frame cannot point back past an unknown frame.
    func conceal(channels: Int, frames: Int, synthesis: [MPEGSynthesisFilter], into pcm: UnsafeMutablePointer<Float>) {
        reservoirCount = 0
        for gr in 0..<frames / 576 {
            for ch in 0..<channels {
                (xr + ch * 576).update(repeating: 0, count: 576)
                hybridSynthesis(Layer3GranuleInfo(), count: 0, channel: ch, rate: 0, mpeg1: true)
                let out = pcm + ch * 1152 + gr * 576
                synthesis[ch].synthesize(time, slots: 18, into: out)
            }
        }
    }

    // MARK: Scale factors

    /// The first long band each scfsi bit covers (bands 0–5, 6–10, 11–15, 16–20).
    private static let scfsiGroupStarts = [0, 6, 11, 16, 21]

    private func readScaleFactorsMPEG1(_ r: inout MPEGBits, _ g: Layer3GranuleInfo, channel ch: Int, granule gr: Int) {
        let s1 = Layer3Tables.slen1[g.scalefacCompress], s2 = Layer3Tables.slen2[g.scalefacCompress]
        if g.isShort {
            var sfb = 0
            if g.mixed {
                for b in 0..<8 { longScale[ch][b] = r.read(s1) }
                sfb = 3
            }
            while sfb < 12 {
                let len = sfb < 6 ? s1 : s2
                for w in 0..<3 { shortScale[ch][sfb * 3 + w] = r.read(len) }
                sfb += 1
            }
            for w in 0..<3 { shortScale[ch][36 + w] = 0 }
        } else {
            let scfsi = ch == 0 ? sideInfo.scfsi.0 : sideInfo.scfsi.1
            // Index loops, not enumerated(): a debug build allocates for generic iteration.
            let starts = Self.scfsiGroupStarts
            for i in 0..<4 {
                if gr == 1 && scfsi >> (3 - i) & 1 == 1 { continue }
                let len = i < 2 ? s1 : s2
                for b in starts[i]..<starts[i + 1] { longScale[ch][b] = r.read(len) }
            }
            longScale[ch][21] = 0
        }
    }

    /// Reads LSF scale factors; returns the preflag their compression implies.
    private func readScaleFactorsLSF(_ r: inout MPEGBits, _ g: Layer3GranuleInfo, channel ch: Int, intensityChannel: Bool) -> Bool {
        var slen = (0, 0, 0, 0)
        var table = 0
        let sfc = g.scalefacCompress
        var preflag = false
        if intensityChannel {
            intensityScale = sfc & 1
            let c = sfc >> 1
            if c < 180 {
                slen = (c / 36, c % 36 / 6, c % 6, 0); table = 3
            } else if c < 244 {
                let t = c - 180
                slen = ((t & 63) >> 4, (t & 15) >> 2, t & 3, 0); table = 4
            } else {
                let t = c - 244
                slen = (t / 3, t % 3, 0, 0); table = 5
            }
        } else if sfc < 400 {
            slen = ((sfc >> 4) / 5, (sfc >> 4) % 5, (sfc & 15) >> 2, sfc & 3)
        } else if sfc < 500 {
            let t = sfc - 400
            slen = ((t >> 2) / 5, (t >> 2) % 5, t & 3, 0); table = 1
        } else {
            let t = sfc - 500
            slen = (t / 3, t % 3, 0, 0); table = 2
            preflag = true
        }
        let kind = !g.isShort ? 0 : g.mixed ? 2 : 1
        let counts = Layer3Tables.lsfPartitions[table][kind]
        for b in 0..<22 { longScale[ch][b] = 0 }
        for b in 0..<39 { shortScale[ch][b] = 0 }
        if intensityChannel {
            for b in 0..<22 { illegalLong[b] = -1 }
            for b in 0..<39 { illegalShort[b] = -1 }
        }
        var k = 0
        for p in 0..<4 {
            let len = p == 0 ? slen.0 : p == 1 ? slen.1 : p == 2 ? slen.2 : slen.3
            let illegal = len > 0 ? (1 << len) - 1 : -1
            for _ in 0..<counts[p] {
                let v = r.read(len)
                if kind == 0 || kind == 2 && k < 6 {
                    longScale[ch][k] = v
                    if intensityChannel { illegalLong[k] = illegal }
                } else {
                    let s = kind == 2 ? k - 6 + 9 : k
                    if s < 39 {
                        shortScale[ch][s] = v
                        if intensityChannel { illegalShort[s] = illegal }
                    }
                }
                k += 1
            }
        }
        return preflag
    }

    // MARK: Spectrum

    /// The boundaries of regions 1 and 2, then the Huffman decoding into `quantized`.
    private func huffman(_ data: UnsafeRawBufferPointer, from start: Int, to end: Int, _ g: Layer3GranuleInfo, rate: Int) -> Int {
        let long = Layer3Tables.longBands[rate], short = Layer3Tables.shortBands[rate]
        var r1: Int, r2: Int
        if g.windowSwitching {
            // Short blocks, mixed or not, switch tables after three short bands (36 lines,
            // 72 at 8 kHz), as the reference decoder and ffmpeg do; start and stop
            // blocks after eight long bands.
            r1 = g.blockType == 2 ? short[3] * 3 : long[8]
            r2 = 576
        } else {
            r1 = long[min(22, g.region0Count + 1)]
            r2 = long[min(22, g.region0Count + g.region1Count + 2)]
        }
        let big = g.bigValues * 2
        r1 = min(r1, big)
        r2 = min(max(r2, r1), big)
        return Layer3Huffman.decode(data, start: start, end: max(start, end), bigValues: g.bigValues, tableSelect: g.tableSelect,
                                    region1Start: r1, region2Start: r2, count1TableB: g.count1TableB, into: quantized)
    }

    /// xr = sign · |q|^(4/3) · 2^(gain/4), in the decoding order (short blocks still
    /// grouped by window).
    private func requantize(_ g: Layer3GranuleInfo, count n: Int, channel ch: Int, rate: Int, mpeg1: Bool) {
        let out = xr + ch * 576
        // The bands below tile lines 0..<n (in mixed blocks the long part ends where the
        // short part starts, at every rate): only the lines above need zeros.
        (out + n).update(repeating: 0, count: 576 - n)
        guard n > 0 else { return }
        let long = Layer3Tables.longBands[rate], short = Layer3Tables.shortBands[rate]
        let multiplier = g.scalefacScale ? 4 : 2
        let base = g.globalGain - 210
        let preflag = g.preflag
        do {
            do {
                @inline(__always) func scale(_ from: Int, _ to: Int, _ q: Int) {
                    let factor = gains[min(575, max(0, q + Layer3Tables.gainOffset))]
                    var i = from
                    let stop = min(to, n)
                    // Four lines at a time: the table read per line, the product and the sign (a
                    // magnitude ≥ 0 takes the value's sign bit, as a negation would) in SIMD.
                    let src = UnsafeRawPointer(quantized), dst = UnsafeMutableRawPointer(out)
                    let cap = SIMD4<UInt32>(repeating: 8206), signBit = SIMD4<UInt32>(repeating: 0x8000_0000)
                    while i &+ 4 <= stop {
                        let v = src.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
                        let s = v &>> 31
                        let k = pointwiseMin(SIMD4<UInt32>(truncatingIfNeeded: (v ^ s) &- s), cap)
                        let m = SIMD4<Float>(pow43[Int(k[0])], pow43[Int(k[1])], pow43[Int(k[2])], pow43[Int(k[3])]) * factor
                        let signed = unsafeBitCast(m, to: SIMD4<UInt32>.self) | (SIMD4<UInt32>(truncatingIfNeeded: v) & signBit)
                        dst.storeBytes(of: signed, toByteOffset: i &* 4, as: SIMD4<UInt32>.self)
                        i &+= 4
                    }
                    while i < stop {
                        let v = quantized[i]
                        let m = pow43[Int(min(8206, v.magnitude))] * factor
                        out[i] = v < 0 ? -m : m
                        i += 1
                    }
                }
                var longBands = 22
                var firstShort = 13
                if g.isShort {
                    longBands = g.mixed ? (mpeg1 ? 8 : 6) : 0
                    firstShort = g.mixed ? 3 : 0
                }
                let pretab = Layer3Tables.pretab
                for b in 0..<longBands where long[b] < n {
                    let sf = longScale[ch][b] + (preflag ? pretab[b] : 0)
                    scale(long[b], long[b + 1], base - multiplier * sf)
                }
                guard g.isShort else { return }
                for b in firstShort..<13 where short[b] * 3 < n {
                    let width = short[b + 1] - short[b]
                    for w in 0..<3 {
                        let start = short[b] * 3 + w * width
                        let gain = w == 0 ? g.subblockGain.0 : w == 1 ? g.subblockGain.1 : g.subblockGain.2
                        scale(start, start + width, base - 8 * gain - multiplier * shortScale[ch][b * 3 + w])
                    }
                }
            }
        }
    }

    // MARK: Stereo

    private func jointStereo(_ h: MPEGAudioHeader, right g1: Layer3GranuleInfo, rate: Int,
                             nonzero: inout (Int, Int))
    {
        let ms = h.modeExtension & 2 != 0, intensity = h.modeExtension & 1 != 0
        let left = xr, right = xr + 576
        let limit = max(nonzero.0, nonzero.1)
        let invSqrt2: Float = 0.70710678118654752
        @inline(__always) func midSide(_ from: Int, _ to: Int) {
            guard ms else { return }
            var i = from
            while i < min(to, limit) {
                let m = left[i], s = right[i]
                left[i] = (m + s) * invSqrt2
                right[i] = (m - s) * invSqrt2
                i += 1
            }
        }
        guard intensity else {
            midSide(0, limit)
            nonzero = (limit, limit)
            return
        }
        let mpeg1 = h.version == .mpeg1
        let io: Float = intensityScale == 1 ? 0.70710678118654752 : 0.84089641525371454
        /// Intensity stereo over lines [from, to) at position p, or mid/side when p is
        /// illegal: 7 in MPEG-1; in LSF the largest value its scale factor's length can
        /// hold (13818-3 2.4.3.2, `illegal`), while a 0-bit scale factor gives position 0.
        /// ffmpeg and mpg123 use every LSF position; the reference decoder does not, and
        /// the compliance streams test45 and test46 (45 and 33 dB that way) show it.
        @inline(__always) func band(_ from: Int, _ to: Int, position p: Int, illegal: Int = -1) {
            if mpeg1 && p >= 7 || !mpeg1 && p == illegal {
                midSide(from, to)
                return
            }
            var kl: Float = 1, kr: Float = 1
            if mpeg1 {
                (kl, kr) = Layer3Tables.intensityMPEG1[p]
            } else if p & 1 == 1 {
                for _ in 0..<(p + 1) / 2 { kl *= io }
            } else {
                for _ in 0..<p / 2 { kr *= io }
            }
            for i in from..<to {
                let x = left[i]
                left[i] = x * kl
                right[i] = x * kr
            }
        }
        let long = Layer3Tables.longBands[rate], short = Layer3Tables.shortBands[rate]
        // The last non-zero line of the right channel: intensity stereo starts above its band.
        var last = -1
        var i = nonzero.1 - 1
        while i >= 0 { if right[i] != 0 { last = i; break }; i -= 1 }

        if !g1.isShort {
            var first = 0
            while first < 22 && long[first] <= last { first += 1 }
            midSide(0, long[first])
            for b in first..<22 {
                if b == 21 && first == 21 && !mpeg1 {
                    band(long[b], long[b + 1], position: 0)
                    continue
                }
                let s = b == 21 ? 20 : b
                band(long[b], long[b + 1], position: longScale[1][s], illegal: illegalLong[s])
            }
        } else {
            let firstShort = g1.mixed ? 3 : 0
            let longEnd = g1.mixed ? (mpeg1 ? 8 : 6) : 0
            // Per window: the band above the window's last non-zero line.
            var anyShortNonzero = false
            for w in 0..<3 {
                var first = firstShort
                var b = 12
                while b >= firstShort {
                    let width = short[b + 1] - short[b]
                    let start = short[b] * 3 + w * width
                    var found = false
                    var j = width - 1
                    while j >= 0 { if right[start + j] != 0 { found = true; break }; j -= 1 }
                    if found { first = b + 1; anyShortNonzero = true; break }
                    b -= 1
                }
                for b in firstShort..<13 {
                    let width = short[b + 1] - short[b]
                    let start = short[b] * 3 + w * width
                    if b < first {
                        midSide(start, start + width)
                    } else {
                        if b == 12 && first == 12 && !mpeg1 {
                            band(start, start + width, position: 0)
                            continue
                        }
                        let s = b == 12 ? 11 : b
                        band(start, start + width, position: shortScale[1][s * 3 + w], illegal: illegalShort[s * 3 + w])
                    }
                }
            }
            if longEnd > 0 {
                var first = 0
                if anyShortNonzero { first = longEnd } else { while first < longEnd && long[first] <= last { first += 1 } }
                for b in 0..<longEnd {
                    if b < first { midSide(long[b], long[b + 1]) } else {
                        band(long[b], long[b + 1], position: longScale[1][b], illegal: illegalLong[b])
                    }
                }
            }
        }
        let all = max(limit, nonzero.0)
        nonzero = (all, all)
    }

    // MARK: Hybrid filter bank

    /// Reorders short blocks, reduces aliasing, runs the IMDCT with overlap and inverts
    /// odd subbands' odd samples, leaving 18 × 32 samples in `time`.
    private func hybridSynthesis(_ g: Layer3GranuleInfo, count n: Int, channel ch: Int, rate: Int, mpeg1: Bool) {
        let x = xr + ch * 576, ov = overlap + ch * 576
        var end = n
        if g.isShort {
            let short = Layer3Tables.shortBands[rate]
            let firstShort = g.mixed ? 3 : 0
            // Lines of window w, band b, at short[b]·3 + w·width + j go to short[b]·3 + 3j + w.
            for b in firstShort..<13 where short[b] * 3 < n {
                let width = short[b + 1] - short[b], start = short[b] * 3
                scratch.update(from: x + start, count: 3 * width)
                for w in 0..<3 {
                    for j in 0..<width { x[start + 3 * j + w] = scratch[w * width + j] }
                }
                end = max(end, short[b + 1] * 3)
            }
        }
        // Alias reduction between long-block subbands.
        let aliasBands = g.isShort ? (g.mixed ? 2 : 0) : 32
        if aliasBands > 0 && n > 0 {
            let bands = min(aliasBands, (n + 7) / 18 + 1)
            let cs = alias, ca = alias + 8
            do {
                do {
                    // The eight butterflies across each subband edge, four at a time: lines
                    // below the edge (read downwards) in reversed vectors.
                    let cs0 = Self.load(cs), cs1 = Self.load(cs + 4), ca0 = Self.load(ca), ca1 = Self.load(ca + 4)
                    var sb = 1
                    while sb < bands {
                        let edge = x + sb * 18
                        let a0 = Self.reversed(Self.load(edge - 4)), a1 = Self.reversed(Self.load(edge - 8))
                        let b0 = Self.load(edge), b1 = Self.load(edge + 4)
                        Self.store(Self.reversed(a0 * cs0 - b0 * ca0), edge - 4)
                        Self.store(Self.reversed(a1 * cs1 - b1 * ca1), edge - 8)
                        Self.store(b0 * cs0 + a0 * ca0, edge)
                        Self.store(b1 * cs1 + a1 * ca1, edge + 4)
                        sb += 1
                    }
                }
            }
            end = min(576, max(end, bands * 18))
        }
        let active = min(32, (end + 17) / 18)
        // Four subbands at a time; the IMDCT of a silent subband is silent, so a group
        // with any active subband runs whole.
        var sb = 0
        while sb < 32 {
            let o = ov + sb, out = time + sb
            if sb >= active {
                // Nothing new: the overlap from the last granule sounds out.
                for t in 0..<18 {
                    let v = Self.load(o + t * 32)
                    Self.store(t & 1 == 1 ? v * Self.inversion : v, out + t * 32)
                    Self.store(SIMD4<Float>(), o + t * 32)
                }
            } else if g.mixed && sb == 0 && (g.isShort || g.blockType != 0) {
                // The mixed-block flag puts the two lowest subbands in the normal window
                // whatever the block type (11172-3 2.4.2.7 mixed_block_flag): start and stop
                // blocks may carry it too (the compliance stream si_block does). The group
                // runs both ways and each lane takes its own.
                let s = scratch
                imdctLong(x, window: 0, overlap: o, time: s, overlapOut: s + 72, stride: 4)
                if g.isShort {
                    imdctShort(x, overlap: o, time: s + 144, overlapOut: s + 216, stride: 4)
                } else {
                    imdctLong(x, window: g.blockType == 1 ? 1 : 2, overlap: o, time: s + 144, overlapOut: s + 216, stride: 4)
                }
                for t in 0..<18 {
                    out[t * 32] = s[t * 4]; out[t * 32 + 1] = s[t * 4 + 1]
                    out[t * 32 + 2] = s[144 + t * 4 + 2]; out[t * 32 + 3] = s[144 + t * 4 + 3]
                    o[t * 32] = s[72 + t * 4]; o[t * 32 + 1] = s[72 + t * 4 + 1]
                    o[t * 32 + 2] = s[216 + t * 4 + 2]; o[t * 32 + 3] = s[216 + t * 4 + 3]
                }
            } else if g.isShort {
                imdctShort(x + sb * 18, overlap: o, time: out, overlapOut: o, stride: 32)
            } else {
                let window = g.blockType == 0 ? 0 : g.blockType == 1 ? 1 : 2
                imdctLong(x + sb * 18, window: window, overlap: o, time: out, overlapOut: o, stride: 32)
            }
            sb += 4
        }
    }

    /// Frequency inversion: odd subbands' odd time slots change sign (a group starts even).
    /// Computed, not stored: a stored static is a lazy global, checked at every use.
    @inline(__always)
    private static var inversion: SIMD4<Float> { SIMD4<Float>(1, -1, 1, -1) }

    @inline(__always)
    private static func store(_ v: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<Float>.self)
    }

    @inline(__always)
    private static func load(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always)
    private static func reversed(_ v: SIMD4<Float>) -> SIMD4<Float> { SIMD4(v[3], v[2], v[1], v[0]) }

    /// The 9-point DCT-III of a[0…8] into t[0…8], four lanes at once:
    /// t[n] = Σq a[q]·cos(π(2n + 1)q/18). Outputs n and 8 − n share their even-q and odd-q
    /// sums up to a sign; the cosines of multiples of π/18 fold onto six (c1…c8 below) and
    /// the exact ½ and √3/2.
    @inline(__always)
    private static func dct9(_ a: UnsafePointer<SIMD4<Float>>, _ t: UnsafeMutablePointer<SIMD4<Float>>) {
        let c1: Float = 0.984807753012208, c2: Float = 0.9396926207859084, c4: Float = 0.766044443118978
        let c5: Float = 0.6427876096865394, c7: Float = 0.3420201433256688, c8: Float = 0.17364817766693041
        let half: Float = 0.5, root3: Float = 0.8660254037844386
        let a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5], a6 = a[6], a7 = a[7], a8 = a[8]
        let e0 = a0 + a6 * half, s3 = a3 * root3
        var ev = e0 + a2 * c2 + a4 * c4 + a8 * c8, od = a1 * c1 + a5 * c5 + a7 * c7 + s3
        t[0] = ev + od; t[8] = ev - od
        ev = e0 - a2 * c8 - a4 * c2 + a8 * c4; od = a1 * c5 - a5 * c7 + a7 * c1 - s3
        t[2] = ev + od; t[6] = ev - od
        ev = e0 - a2 * c4 + a4 * c8 - a8 * c2; od = a1 * c7 + a5 * c1 - a7 * c5 - s3
        t[3] = ev + od; t[5] = ev - od
        ev = a0 - a6 + (a2 - a4 - a8) * half; od = (a1 - a5 - a7) * root3
        t[1] = ev + od; t[7] = ev - od
        t[4] = a0 - a2 + a4 - a6 + a8
    }

    /// The long IMDCT of four subbands (inputs at 18-line steps), windowed, added to the
    /// overlap and frequency-inverted into `time`, its second half into `overlapOut` (both
    /// slot t at t × `stride`; the overlap read is slot t at t × 32).
    ///
    /// Its core is the 18-point DCT-IV u[n] = Σk X[k]·cos(π(2n + 1)(2k + 1)/72). With
    /// Y[m] = X[m] + X[m − 1] (X[−1] = 0), 2cos(π(2n + 1)/72)·u[n] = Σm Y[m]·cos(π(2n + 1)m/36)
    /// = z[n], an 18-point DCT-III. Its even m give a 9-point DCT-III E (E[17 − n] = E[n]),
    /// its odd m a 9-point DCT-IV O (O[17 − n] = −O[n]), which the same step turns into a
    /// DCT-III of Y[2q + 1] + Y[2q − 1] divided by 2cos(π(2n + 1)/36). The windows carry the
    /// division by 2cos(π(2n + 1)/72) (``Layer3Tables/imdctLongWindows``).
    private func imdctLong(_ x: UnsafeMutablePointer<Float>, window: Int, overlap o: UnsafeMutablePointer<Float>,
                           time out: UnsafeMutablePointer<Float>, overlapOut: UnsafeMutablePointer<Float>, stride: Int)
    {
        let y = lanes, even = lanes + 18, odd = lanes + 27, e = lanes + 36, d = lanes + 45
        // Line k of the four subbands in lanes: 4 × 4 transposes, then lines 16 and 17.
        // (Ranges, not strides, here and below: a debug build allocates to iterate a stride.)
        for q in 0..<4 {
            let k = q * 4
            let c = MPEGSynthesisFilter.transpose(Self.load(x + k), Self.load(x + 18 + k), Self.load(x + 36 + k), Self.load(x + 54 + k))
            y[k] = c.0; y[k + 1] = c.1; y[k + 2] = c.2; y[k + 3] = c.3
        }
        y[16] = SIMD4<Float>(x[16], x[34], x[52], x[70])
        y[17] = SIMD4<Float>(x[17], x[35], x[53], x[71])
        var previous = SIMD4<Float>()
        for k in 0..<18 {
            let v = y[k]
            y[k] = v + previous
            previous = v
        }
        for p in 0..<9 { even[p] = y[2 * p] }
        odd[0] = y[1]
        for q in 1..<9 { odd[q] = y[2 * q + 1] + y[2 * q - 1] }
        Self.dct9(even, e)
        Self.dct9(odd, d)
        let z = lanes
        for n in 0..<9 {
            let a = e[n], b = d[n] * oddScale[n]
            z[n] = a + b
            z[17 - n] = a - b
        }
        let w = windows + window * 36
        // Output j takes z[j + 9] for j < 9, z[26 − j] up to 26, z[j − 27] after: loops
        // without a branch, two slots a turn so that the inversion's slot is known.
        @inline(__always) func first(_ j: Int, _ n: Int) {
            var v = z[n] * w[j] + Self.load(o + j * 32)
            if j & 1 == 1 { v *= Self.inversion }
            Self.store(v, out + j * stride)
        }
        for p in 0..<4 { let j = 2 * p; first(j, j + 9); first(j + 1, j + 10) }
        first(8, 17)
        for p in 0..<4 { let j = 9 + 2 * p; first(j, 26 - j); first(j + 1, 25 - j) }
        first(17, 9)
        for j in 18..<27 { Self.store(z[26 - j] * w[j], overlapOut + (j - 18) * stride) }
        for j in 27..<36 { Self.store(z[j - 27] * w[j], overlapOut + (j - 18) * stride) }
    }

    /// The three short IMDCTs of four subbands (6-point DCT-IVs, ``Layer3Tables/imdctShortSource(_:)``),
    /// windowed and overlapped as the long one.
    private func imdctShort(_ x: UnsafeMutablePointer<Float>, overlap o: UnsafeMutablePointer<Float>,
                            time out: UnsafeMutablePointer<Float>, overlapOut: UnsafeMutablePointer<Float>, stride: Int)
    {
        // z[0…35]: the 36 windowed samples, window w's 12 at 6 + 6w.
        let z = lanes, u = lanes + 36, input = lanes + 42
        for i in 0..<36 { z[i] = SIMD4<Float>() }
        for i in 0..<18 { input[i] = SIMD4<Float>(x[i], x[18 + i], x[36 + i], x[54 + i]) }
        let m = imdctShortMatrix, win = windows + 108
        for w in 0..<3 {
            for n in 0..<6 {
                var s = SIMD4<Float>()
                for k in 0..<6 { s += input[3 * k + w] * m[n * 6 + k] }
                u[n] = s
            }
            for i in 0..<12 {
                let n = i < 3 ? i + 3 : i < 9 ? 8 - i : i - 9
                z[6 + 6 * w + i] += u[n] * win[i]
            }
        }
        for t in 0..<18 {
            var v = z[t] + Self.load(o + t * 32)
            if t & 1 == 1 { v *= Self.inversion }
            Self.store(v, out + t * stride)
            Self.store(z[18 + t], overlapOut + t * stride)
        }
    }
}

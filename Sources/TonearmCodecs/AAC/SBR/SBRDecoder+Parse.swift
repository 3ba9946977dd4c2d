import Foundation

// Reading sbr_extension_data (ISO/IEC 14496-3 §4.4.2.8, Tables 4.62–4.74) and decoding its
// values (§4.6.18.3): the delta coding of envelopes and noise floors against the previous
// frame, and their dequantisation, with coupling.

/// Why a payload was refused; SBR is then off until the next valid header (the caller's
/// output is the upsampled core meanwhile).
enum SBRPayloadError: Error, Equatable {
    /// EXT_SBR_DATA_CRC whose bs_sbr_crc_bits do not match.
    case crc
    /// A header whose frequency tables break the standard's limits.
    case header
    /// A grid, count or value out of range.
    case data
    /// The payload ended before its syntax did.
    case truncated
    /// SBR data of a CPE for a decoder of one channel, or the reverse.
    case element
}

extension SBRDecoder {
    /// The CRC of EXT_SBR_DATA_CRC (§4.6.18.2): CRC-10 with the polynomial
    /// x¹⁰ + x⁹ + x⁵ + x⁴ + x + 1 and initial value 0, over `count` bits from `r`'s position
    /// (all of the payload after bs_sbr_crc_bits, its fill bits included).
    static func crc10(_ r: SBRBits, count: Int) -> Int {
        var r = r
        var crc = 0
        for _ in 0..<max(0, count) {
            let top = crc >> 9 & 1
            crc = (crc << 1) & 0x3FF
            if top ^ r.read(1) == 1 { crc ^= 0x233 }
        }
        return crc
    }

    /// Reads one extension payload; see ``parse(_:bitPosition:bitCount:crc:elementIsPair:)``.
    func read(_ r: inout SBRBits, crc: Bool, elementIsPair: Bool) throws(SBRPayloadError) {
        if crc {
            let stored = r.read(10)
            guard !r.overrun, Self.crc10(r, count: r.bitsLeft) == stored else { throw .crc }
        }
        headerInPayload = r.bit()
        if headerInPayload {
            let h = SBRHeader(&r)
            guard !r.overrun else { throw .truncated }
            try apply(h)
        }
        guard active, let tables else { return }
        guard elementIsPair == (channels.count == 2) else { throw .element }
        if elementIsPair {
            try readPair(&r, tables)
        } else {
            try readSingle(&r, tables)
        }
        try readExtendedData(&r)
        guard !r.overrun else { throw .truncated }
        dataReady = true
    }

    /// A new header: the tables again when the master table's parameters change (a reset),
    /// the limiter table alone when only bs_limiter_bands does.
    private func apply(_ h: SBRHeader) throws(SBRPayloadError) {
        active = true
        dataReady = false
        let old = header
        header = h
        if old == nil || old!.needsReset(to: h) {
            guard let t = SBRFrequencyTables(header: h, outputRate: outputRate) else { throw .header }
            tables = t
            reset = true
            kx = t.kx
            m = t.m
            // A reset starts the noise table afresh (f_IndexNoise = 0, §4.6.18.7.5).
            for c in channels { c.noiseIndex = 0 }
        } else if let t = tables, old!.limiterBands != h.limiterBands {
            tables = t.withLimiterBands(h.limiterBands)
        }
    }

    private func readSingle(_ r: inout SBRBits, _ t: SBRFrequencyTables) throws(SBRPayloadError) {
        if r.bit() { r.skip(4) }  // bs_data_extra, bs_reserved
        let c = channels[0]
        try readGrid(&r, c)
        readDeltaDirections(&r, c)
        readInverseFiltering(&r, c, t)
        try readEnvelope(&r, c, t, balance: false)
        try readNoise(&r, c, t, balance: false)
        readSinusoids(&r, c, t)
    }

    private func readPair(_ r: inout SBRBits, _ t: SBRFrequencyTables) throws(SBRPayloadError) {
        if r.bit() { r.skip(8) }  // bs_data_extra, bs_reserved
        let c0 = channels[0], c1 = channels[1]
        coupling = r.bit()
        if coupling {
            // One grid and one set of inverse filtering modes for both channels; the second
            // channel's envelopes and noise floors are balances against the first's levels.
            try readGrid(&r, c0)
            copyGrid(from: c0, to: c1)
            readDeltaDirections(&r, c0)
            readDeltaDirections(&r, c1)
            readInverseFiltering(&r, c0, t)
            for i in 0..<5 {
                c1.previousInvf[i] = c1.invf[i]
                c1.invf[i] = c0.invf[i]
            }
            try readEnvelope(&r, c0, t, balance: false)
            try readNoise(&r, c0, t, balance: false)
            try readEnvelope(&r, c1, t, balance: true)
            try readNoise(&r, c1, t, balance: true)
        } else {
            try readGrid(&r, c0)
            try readGrid(&r, c1)
            readDeltaDirections(&r, c0)
            readDeltaDirections(&r, c1)
            readInverseFiltering(&r, c0, t)
            readInverseFiltering(&r, c1, t)
            try readEnvelope(&r, c0, t, balance: false)
            try readEnvelope(&r, c1, t, balance: false)
            try readNoise(&r, c0, t, balance: false)
            try readNoise(&r, c1, t, balance: false)
        }
        readSinusoids(&r, c0, t)
        readSinusoids(&r, c1, t)
    }

    /// What the next frame refers to from this one, saved before the grid is replaced.
    private func keepPrevious(_ c: SBRChannel) {
        c.resolution[0] = c.resolution[c.envelopeCount]
        c.previousEnd = c.borders[c.envelopeCount]
        c.previousTransient = c.transient == c.envelopeCount ? 0 : -1
    }

    /// sbr_grid (Table 4.65) and the time borders it gives (§4.6.18.3.3).
    private func readGrid(_ r: inout SBRBits, _ c: SBRChannel) throws(SBRPayloadError) {
        keepPrevious(c)
        c.ampRes = header?.ampRes ?? 1
        let frameClass = r.read(2)
        let slots = Self.timeSlots
        var count: Int
        var pointer = 0
        var t = [Int](repeating: 0, count: 6)
        switch frameClass {
        case 0:  // FIXFIX: 1, 2 or 4 envelopes of equal length.
            count = 1 << r.read(2)
            guard count <= 4 else { throw .data }
            if count == 1 { c.ampRes = 0 }
            let res = r.read(1)
            for l in 1...count { c.resolution[l] = res }
            let step = (slots + count / 2) / count
            for l in 0..<count { t[l] = l * step }
            t[count] = slots
        case 1:  // FIXVAR: a variable trailing border, relative borders counted back from it.
            let trail = slots + r.read(2)
            let relatives = r.read(2)
            count = relatives + 1
            t[0] = 0
            t[count] = trail
            for i in 0..<relatives { t[count - 1 - i] = t[count - i] - 2 * r.read(2) - 2 }
            pointer = r.read(Self.pointerBits[count])
            for l in 0..<count { c.resolution[count - l] = r.read(1) }
        case 2:  // VARFIX: a variable leading border, relative borders counted on from it.
            t[0] = r.read(2)
            let relatives = r.read(2)
            count = relatives + 1
            t[count] = slots
            for i in 0..<relatives { t[i + 1] = t[i] + 2 * r.read(2) + 2 }
            pointer = r.read(Self.pointerBits[count])
            for l in 1...count { c.resolution[l] = r.read(1) }
        default:  // VARVAR: both.
            t[0] = r.read(2)
            let trail = slots + r.read(2)
            let lead = r.read(2), trailing = r.read(2)
            count = lead + trailing + 1
            guard count <= 5 else { throw .data }
            t[count] = trail
            for i in 0..<lead { t[i + 1] = t[i] + 2 * r.read(2) + 2 }
            for i in 0..<trailing { t[count - 1 - i] = t[count - i] - 2 * r.read(2) - 2 }
            pointer = r.read(Self.pointerBits[count])
            for l in 1...count { c.resolution[l] = r.read(1) }
        }
        guard pointer <= count + 1 else { throw .data }
        for l in 0..<count where t[l] >= t[l + 1] { throw .data }
        c.frameClass = frameClass
        c.envelopeCount = count
        c.pointer = pointer
        for l in 0...count { c.borders[l] = t[l] }
        c.noiseCount = count > 1 ? 2 : 1
        c.noiseBorders[0] = t[0]
        c.noiseBorders[c.noiseCount] = t[count]
        if c.noiseCount == 2 {
            // The middle noise border (§4.6.18.3.3).
            let middle: Int
            switch frameClass {
            case 0: middle = count / 2
            case 2: middle = pointer == 0 ? 1 : pointer == 1 ? count - 1 : pointer - 1
            default: middle = count - max(pointer - 1, 1)
            }
            guard middle > 0, middle < count else { throw .data }
            c.noiseBorders[1] = t[middle]
        }
        // l_A: the envelope that starts at a transient.
        c.transient = -1
        if frameClass & 1 == 1 && pointer > 0 {
            c.transient = count + 1 - pointer
        } else if frameClass == 2 && pointer > 1 {
            c.transient = pointer - 1
        }
    }

    /// The coupled second channel takes the first's grid; what it kept of its own previous
    /// frame stays its own.
    private func copyGrid(from a: SBRChannel, to b: SBRChannel) {
        keepPrevious(b)
        for l in 1...5 { b.resolution[l] = a.resolution[l] }
        for l in 0..<6 { b.borders[l] = a.borders[l] }
        for l in 0..<3 { b.noiseBorders[l] = a.noiseBorders[l] }
        b.envelopeCount = a.envelopeCount
        b.noiseCount = a.noiseCount
        b.ampRes = a.ampRes
        b.frameClass = a.frameClass
        b.pointer = a.pointer
        b.transient = a.transient
    }

    /// sbr_dtdf (Table 4.66).
    private func readDeltaDirections(_ r: inout SBRBits, _ c: SBRChannel) {
        for l in 0..<c.envelopeCount { c.deltaTimeEnvelope[l] = r.bit() }
        for l in 0..<c.noiseCount { c.deltaTimeNoise[l] = r.bit() }
    }

    /// sbr_invf (Table 4.67).
    private func readInverseFiltering(_ r: inout SBRBits, _ c: SBRChannel, _ t: SBRFrequencyTables) {
        for i in 0..<5 { c.previousInvf[i] = c.invf[i] }
        for i in 0..<t.noiseCount { c.invf[i] = r.read(2) }
    }

    /// sbr_envelope (Table 4.68) and its delta decoding (§4.6.18.3.5): a frequency-coded
    /// envelope is a start value and steps up the bands; a time-coded one steps from the
    /// previous envelope, mapped across a change of frequency resolution. Balance values of
    /// the coupled second channel count double. Values outside 0…127 are refused.
    private func readEnvelope(_ r: inout SBRBits, _ c: SBRChannel, _ t: SBRFrequencyTables, balance: Bool) throws(SBRPayloadError) {
        let delta = balance ? 2 : 1
        let timeCode: SBRHuffman, frequencyCode: SBRHuffman, startBits: Int
        switch (c.ampRes, balance) {
        case (0, false): (timeCode, frequencyCode, startBits) = (.envelope15Time, .envelope15Frequency, 7)
        case (0, true): (timeCode, frequencyCode, startBits) = (.balance15Time, .balance15Frequency, 6)
        case (_, false): (timeCode, frequencyCode, startBits) = (.envelope30Time, .envelope30Frequency, 6)
        case (_, true): (timeCode, frequencyCode, startBits) = (.balance30Time, .balance30Frequency, 5)
        }
        let odd = t.highCount & 1
        // The values are worked on out of the channel, so that its array is accessed once.
        var values = [Int]()
        swap(&values, &c.envelopeQ)
        defer { swap(&values, &c.envelopeQ) }
        for l in 0..<c.envelopeCount {
            let res = c.resolution[l + 1], previousRes = c.resolution[l]
            let row = (l + 1) * 64, previousRow = l * 64
            let n = res == 1 ? t.highCount : t.lowCount
            if c.deltaTimeEnvelope[l] {
                for k in 0..<n {
                    // The previous envelope's band that holds this one's start.
                    let j = res == previousRes ? k : res == 1 ? (k + odd) >> 1 : (k == 0 ? 0 : 2 * k - odd)
                    let v = values[previousRow + j] + delta * timeCode.decode(&r)
                    guard v >= 0 && v <= 127 else { throw .data }
                    values[row + k] = v
                }
            } else {
                values[row] = delta * r.read(startBits)
                for k in 1..<max(n, 1) {
                    let v = values[row + k - 1] + delta * frequencyCode.decode(&r)
                    guard v >= 0 && v <= 127 else { throw .data }
                    values[row + k] = v
                }
            }
            guard !r.overrun else { throw .truncated }
        }
        let last = c.envelopeCount * 64
        for k in 0..<64 { values[k] = values[last + k] }
    }

    /// sbr_noise (Table 4.69) and its delta decoding: 5-bit start values, the noise time code
    /// or the 3.0 dB envelope frequency code, values 0…30.
    private func readNoise(_ r: inout SBRBits, _ c: SBRChannel, _ t: SBRFrequencyTables, balance: Bool) throws(SBRPayloadError) {
        let delta = balance ? 2 : 1
        let timeCode: SBRHuffman = balance ? .noiseBalanceTime : .noiseTime
        let frequencyCode: SBRHuffman = balance ? .balance30Frequency : .envelope30Frequency
        var values = [Int]()
        swap(&values, &c.noiseQ)
        defer { swap(&values, &c.noiseQ) }
        for l in 0..<c.noiseCount {
            let row = (l + 1) * 5, previousRow = l * 5
            if c.deltaTimeNoise[l] {
                for k in 0..<t.noiseCount {
                    let v = values[previousRow + k] + delta * timeCode.decode(&r)
                    guard v >= 0 && v <= 30 else { throw .data }
                    values[row + k] = v
                }
            } else {
                values[row] = delta * r.read(5)
                for k in 1..<max(t.noiseCount, 1) {
                    let v = values[row + k - 1] + delta * frequencyCode.decode(&r)
                    guard v >= 0 && v <= 30 else { throw .data }
                    values[row + k] = v
                }
            }
            guard !r.overrun else { throw .truncated }
        }
        let last = c.noiseCount * 5
        for k in 0..<5 { values[k] = values[last + k] }
    }

    /// sbr_sinusoidal_coding (Table 4.70), behind bs_add_harmonic_flag.
    private func readSinusoids(_ r: inout SBRBits, _ c: SBRChannel, _ t: SBRFrequencyTables) {
        c.addHarmonicFlag = r.bit()
        for k in 0..<64 { c.addHarmonic[k] = false }
        if c.addHarmonicFlag {
            for k in 0..<t.highCount { c.addHarmonic[k] = r.bit() }
        }
    }

    /// bs_extended_data: what follows sbr_data, behind a 2-bit bs_extension_id. Parametric
    /// stereo's (EXTENSION_ID_PS, 2) is kept for a PS decoder; others are skipped.
    private func readExtendedData(_ r: inout SBRBits) throws(SBRPayloadError) {
        psBitCount = 0
        guard r.bit() else { return }
        var size = r.read(4)
        if size == 15 { size += r.read(8) }
        var left = 8 * size
        guard left <= r.bitsLeft else { throw .truncated }
        // One extension fills the rest (a reader stops when fewer than 8 bits are left).
        if left > 7 {
            let id = r.read(2)
            left -= 2
            if id == Self.extensionPS {
                psBitCount = left
                var i = 0
                while left > 0 {
                    let n = min(8, left)
                    psBytes[i] = UInt8(truncatingIfNeeded: r.read(n) << (8 - n))
                    i += 1
                    left -= n
                }
            }
        }
        r.skip(left)
    }

    /// Dequantisation (§4.6.18.3.5): E_orig = 64·2^(E/a) and Q_orig = 2^(6 − Q), a = 2 at
    /// 1.5 dB and 1 at 3.0 dB; with coupling, the first channel's levels and the second's
    /// balances (centred on 12 at 3.0 dB, 24 at 1.5 dB) give left and right.
    func dequantize() {
        guard let t = tables else { return }
        if coupling && channels.count == 2 {
            let c0 = channels[0], c1 = channels[1]
            let alpha: Float = c0.ampRes == 1 ? 1 : 0.5
            let pan: Float = c0.ampRes == 1 ? 12 : 24
            for l in 0..<c0.envelopeCount {
                for k in 0..<(c0.resolution[l + 1] == 1 ? t.highCount : t.lowCount) {
                    var level = exp2f(Float(c0.envelopeQ[(l + 1) * 64 + k]) * alpha + 7)
                    if level > 1e20 { level = 1 }
                    let ratio = exp2f((pan - Float(c1.envelopeQ[(l + 1) * 64 + k])) * alpha)
                    let left = level / (1 + ratio)
                    c0.envelope[l * 64 + k] = left
                    c1.envelope[l * 64 + k] = left * ratio
                }
            }
            for l in 0..<c0.noiseCount {
                for k in 0..<t.noiseCount {
                    let level = exp2f(Float(7 - c0.noiseQ[(l + 1) * 5 + k]))
                    let ratio = exp2f(Float(12 - c1.noiseQ[(l + 1) * 5 + k]))
                    let left = level / (1 + ratio)
                    c0.noise[l * 5 + k] = left
                    c1.noise[l * 5 + k] = left * ratio
                }
            }
            return
        }
        for c in channels {
            let alpha: Float = c.ampRes == 1 ? 1 : 0.5
            // The arrays out of the channel while in use, so that their accesses are not
            // checked one at a time.
            let envelopeQ = c.envelopeQ, noiseQ = c.noiseQ, resolution = c.resolution
            var envelope = [Float](), noise = [Float]()
            swap(&envelope, &c.envelope)
            swap(&noise, &c.noise)
            for l in 0..<c.envelopeCount {
                for k in 0..<(resolution[l + 1] == 1 ? t.highCount : t.lowCount) {
                    let e = exp2f(alpha * Float(envelopeQ[(l + 1) * 64 + k]) + 6)
                    envelope[l * 64 + k] = e > 1e20 ? 1 : e
                }
            }
            for l in 0..<c.noiseCount {
                for k in 0..<t.noiseCount { noise[l * 5 + k] = exp2f(Float(6 - noiseQ[(l + 1) * 5 + k])) }
            }
            swap(&envelope, &c.envelope)
            swap(&noise, &c.noise)
        }
    }
}

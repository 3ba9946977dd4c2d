import TonearmCore

/// Layers I and II of MPEG audio (ISO/IEC 11172-3 §2.4.1.5–2.4.3.3, and ISO/IEC 13818-3's
/// lower sample rates, which change only layer II's allocation table): one frame's bit
/// allocation, scale factors and samples, dequantised to subband samples for the
/// synthesis filter bank.
enum MPEGLayer12 {
    /// Subband samples per channel in one frame: 12 for layer I, 36 for layer II (times 32 subbands).
    static func slots(layer: Int) -> Int { layer == 1 ? 12 : 36 }

    /// Decodes one layer I or II frame (`frame` starts at the 4-byte header and holds the whole frame)
    /// into dequantised subband samples, laid out samples[(channel * slots + slot) * 32 + subband],
    /// full scale ±1.0 (scale factor × dequantised fraction), for header.channels channels.
    /// Checks the CRC when header.hasCRC (layer I: bit allocation; layer II: bit allocation + scfsi)
    /// and throws AudioError(.codecBadData, …) ('bada') when it does not match or the frame is too
    /// short for what it declares. Never traps on any input.
    ///
    /// Ancillary data after the samples is ignored. A layer I allocation of 15 (forbidden,
    /// §2.4.2.5) throws 'bada'; so does a layer other than I or II.
    static func decode(_ frame: UnsafeRawBufferPointer, header: MPEGAudioHeader,
                       into samples: UnsafeMutablePointer<Float>) throws(AudioError)
    {
        guard header.layer == 1 || header.layer == 2 else {
            throw AudioError(.codecBadData, "MPEG layer \(header.layer) is not layer I or II")
        }
        let length = header.frameLength
        guard length >= header.headerLength, frame.count >= length else {
            throw AudioError(.codecBadData, "MPEG layer \(header.layer) frame of \(frame.count) bytes, its header declares \(length)")
        }
        let channels = header.channels
        samples.update(repeating: 0, count: channels * slots(layer: header.layer) * 32)
        let bits = MPEGBits(frame, from: header.headerLength, to: length)
        // Per-frame side information on the stack: allocation (class + 1, 0 = none), scfsi
        // and three scale factor indices, for 2 channels × 32 subbands.
        let failure: AudioError? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * 32 * 5) { side in
            let side = side.baseAddress!
            side.initialize(repeating: 0, count: 2 * 32 * 5)
            var bits = bits
            if header.layer == 1 {
                return decodeLayer1(frame, header, &bits, side, samples)
            }
            return decodeLayer2(frame, header, &bits, side, samples)
        }
        if let failure { throw failure }
    }

    /// The intensity stereo bound (§2.4.2.3 mode_extension): subbands from it on share one
    /// allocation and one set of samples; 32 (or the sblimit) when the mode is not joint stereo.
    @inline(__always)
    private static func bound(_ header: MPEGAudioHeader, limit: Int) -> Int {
        header.channelMode == 1 ? min(limit, 4 * (header.modeExtension + 1)) : limit
    }

    private static func crcError(_ header: MPEGAudioHeader) -> AudioError {
        AudioError(.codecBadData, "MPEG layer \(header.layer) frame fails its CRC")
    }

    private static func shortError(_ header: MPEGAudioHeader) -> AudioError {
        AudioError(.codecBadData, "MPEG layer \(header.layer) frame is too short for its allocation (\(header.frameLength) bytes)")
    }

    // MARK: Layer I (§2.4.1.5, §2.4.2.5, §2.4.3.2)

    private static func decodeLayer1(_ frame: UnsafeRawBufferPointer, _ header: MPEGAudioHeader, _ bits: inout MPEGBits,
                                     _ side: UnsafeMutablePointer<UInt8>, _ out: UnsafeMutablePointer<Float>) -> AudioError?
    {
        let channels = header.channels
        let bound = bound(header, limit: 32)
        let allocation = side, scale = side + 64
        for sb in 0..<32 {
            for ch in 0..<(sb < bound ? channels : 1) {
                let a = bits.read(4)
                if a == 15 { return AudioError(.codecBadData, "MPEG layer I bit allocation 15 is forbidden") }
                allocation[ch * 32 + sb] = UInt8(a)
            }
            if sb >= bound && channels == 2 { allocation[32 + sb] = allocation[sb] }
        }
        if bits.overrun { return shortError(header) }
        if header.hasCRC && !MPEGCRC.check(frame, protectedBits: bits.position - 48) { return crcError(header) }
        for sb in 0..<32 {
            for ch in 0..<channels where allocation[ch * 32 + sb] != 0 {
                scale[ch * 32 + sb] = UInt8(bits.read(6))
            }
        }
        let classes = layer1Classes, factors = scaleFactors
        classes.withUnsafeBufferPointer { classes in
            factors.withUnsafeBufferPointer { factors in
                for slot in 0..<12 {
                    for sb in 0..<32 {
                        if sb < bound {
                            for ch in 0..<channels {
                                let a = Int(allocation[ch * 32 + sb])
                                guard a != 0 else { continue }
                                let q = classes[a - 1]
                                let v = Float(bits.read(q.bits)) * q.step - q.offset
                                out[(ch * 12 + slot) * 32 + sb] = factors[Int(scale[ch * 32 + sb])] * v
                            }
                        } else {
                            let a = Int(allocation[sb])
                            guard a != 0 else { continue }
                            let q = classes[a - 1]
                            let v = Float(bits.read(q.bits)) * q.step - q.offset
                            for ch in 0..<channels {
                                out[(ch * 12 + slot) * 32 + sb] = factors[Int(scale[ch * 32 + sb])] * v
                            }
                        }
                    }
                }
            }
        }
        return bits.overrun ? shortError(header) : nil
    }

    // MARK: Layer II (§2.4.1.6, §2.4.2.6, §2.4.3.3)

    private static func decodeLayer2(_ frame: UnsafeRawBufferPointer, _ header: MPEGAudioHeader, _ bits: inout MPEGBits,
                                     _ side: UnsafeMutablePointer<UInt8>, _ out: UnsafeMutablePointer<Float>) -> AudioError?
    {
        let channels = header.channels
        let table = allocationTables[allocationTableIndex(header)]
        let sblimit = table.sblimit
        let bound = bound(header, limit: sblimit)
        // allocation[ch * 32 + sb]: quantisation class + 1, 0 when the subband is not coded.
        let allocation = side, scfsi = side + 64, scale = side + 128
        for sb in 0..<sblimit {
            let row = table.rows[sb]
            for ch in 0..<(sb < bound ? channels : 1) {
                let a = bits.read(row.nbal)
                // Rows with fewer than 2^nbal entries (none in the standard's tables) read as not coded.
                let c = a < row.classes.count ? Int(row.classes[a]) : -1
                allocation[ch * 32 + sb] = UInt8(c + 1)
            }
            if sb >= bound && channels == 2 { allocation[32 + sb] = allocation[sb] }
        }
        for sb in 0..<sblimit {
            for ch in 0..<channels where allocation[ch * 32 + sb] != 0 {
                scfsi[ch * 32 + sb] = UInt8(bits.read(2))
            }
        }
        if bits.overrun { return shortError(header) }
        if header.hasCRC && !MPEGCRC.check(frame, protectedBits: bits.position - 48) { return crcError(header) }
        // Three scale factors per coded subband, one for each third (12 samples) of the frame;
        // scfsi says which are sent (§2.4.2.6 scfsi): 0 all, 1 first = second, 2 one for all,
        // 3 second = third.
        for sb in 0..<sblimit {
            for ch in 0..<channels where allocation[ch * 32 + sb] != 0 {
                let s = scale + (ch * 32 + sb) * 3
                switch scfsi[ch * 32 + sb] {
                case 0:
                    s[0] = UInt8(bits.read(6)); s[1] = UInt8(bits.read(6)); s[2] = UInt8(bits.read(6))
                case 1:
                    s[0] = UInt8(bits.read(6)); s[1] = s[0]; s[2] = UInt8(bits.read(6))
                case 2:
                    s[0] = UInt8(bits.read(6)); s[1] = s[0]; s[2] = s[0]
                default:
                    s[0] = UInt8(bits.read(6)); s[1] = UInt8(bits.read(6)); s[2] = s[1]
                }
            }
        }
        let classes = quantClasses, factors = scaleFactors
        classes.withUnsafeBufferPointer { classes in
            factors.withUnsafeBufferPointer { factors in
                var v0: Float = 0, v1: Float = 0, v2: Float = 0
                // Reads one triple of samples of class q (a group code or three codes).
                func triple(_ q: QuantClass) {
                    if q.grouped {
                        var c = bits.read(q.bits)
                        let n = q.levels
                        let a = c % n; c /= n
                        let b = c % n; c /= n
                        // Codes past n³ − 1 are invalid; reduce rather than trap.
                        v0 = Float(a) * q.step - q.offset
                        v1 = Float(b) * q.step - q.offset
                        v2 = Float(c % n) * q.step - q.offset
                    } else {
                        v0 = Float(bits.read(q.bits)) * q.step - q.offset
                        v1 = Float(bits.read(q.bits)) * q.step - q.offset
                        v2 = Float(bits.read(q.bits)) * q.step - q.offset
                    }
                }
                for granule in 0..<12 {
                    let part = granule >> 2
                    for sb in 0..<sblimit {
                        if sb < bound {
                            for ch in 0..<channels {
                                let a = Int(allocation[ch * 32 + sb])
                                guard a != 0 else { continue }
                                triple(classes[a - 1])
                                let f = factors[Int(scale[(ch * 32 + sb) * 3 + part])]
                                let o = out + (ch * 36 + granule * 3) * 32 + sb
                                o[0] = f * v0; o[32] = f * v1; o[64] = f * v2
                            }
                        } else {
                            let a = Int(allocation[sb])
                            guard a != 0 else { continue }
                            triple(classes[a - 1])
                            for ch in 0..<channels {
                                let f = factors[Int(scale[(ch * 32 + sb) * 3 + part])]
                                let o = out + (ch * 36 + granule * 3) * 32 + sb
                                o[0] = f * v0; o[32] = f * v1; o[64] = f * v2
                            }
                        }
                    }
                }
            }
        }
        return bits.overrun ? shortError(header) : nil
    }
}

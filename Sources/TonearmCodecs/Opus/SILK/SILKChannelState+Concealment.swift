/// What packet-loss concealment keeps from the last good frame.
struct SILKPLCState {
    var fsKHz = 0
    var pitchLQ8: Int32 = 0
    var ltpQ14: [Int32] = [0, 0, 0, 0, 0]
    var prevLPCQ12 = [Int16](repeating: 0, count: 16)
    var lastFrameLost = false
    var randSeed: Int32 = 0
    var randScaleQ14: Int32 = 0
    var concealedEnergy: Int32 = 0
    var concealedEnergyShift: Int32 = 0
    var prevLTPScaleQ14: Int32 = 0
    var prevGainQ16: (Int32, Int32) = (65536, 65536)
    var subframes = 2
    var subframeLength = 20
}

/// The comfort-noise estimate, kept up to date in inactive frames and mixed into
/// concealed ones.
struct SILKCNGState {
    var fsKHz = 0
    var excitationQ14 = [Int32](repeating: 0, count: SILKChannelState.maxFrameLength)
    var smoothNLSFQ15 = [Int16](repeating: 0, count: 16)
    var synthesisState = [Int32](repeating: 0, count: 16)
    var smoothGainQ16: Int32 = 0
    var randSeed: Int32 = 0
}

/// Packet-loss concealment, comfort noise and the gluing of concealed to decoded frames.
/// RFC 6716 leaves concealment to the implementation (§4.4); this follows libopus's
/// fixed-point SILK concealment so that lost frames sound as they do there: the last
/// frame's pitch excitation repeated with the LTP filter of its strongest pitch pulse,
/// mixed with a noise excitation drawn from its quietest subframe, fading (pitch gain
/// 0.99 then 0.95 per frame, noise 0.95/0.8 voiced, 0.99/0.9 otherwise), through its LPC
/// filter with bandwidth expansion, the pitch lag drifting up 1% a subframe; plus comfort
/// noise shaped by the smoothed inactive-frame spectrum; and on the first good frame, a
/// gain ramp from the concealed energy if the new frame is louder.
///
/// That is libopus 1.4 and later. libopus 1.3 (still Debian 12's) differs in two details,
/// which ``SILKDecoder/libopus13Concealment`` selects: the noise fades only after a frame
/// that was not inactive, and the comfort-noise gain has no fast path down.
extension SILKChannelState {
    private static let harmonicAttenuationQ15: [Int32] = [32440, 31130]
    private static let randomAttenuationVoicedQ15: [Int32] = [31130, 26214]
    private static let randomAttenuationUnvoicedQ15: [Int32] = [32440, 29491]

    private func resetPLCIfRateChanged() {
        // Only these restart with a new rate; the rest (seed, noise scale, the last
        // filters) carries over, as in libopus.
        if fsKHz != plc.fsKHz {
            plc.pitchLQ8 = Int32(frameLength) << 7
            plc.prevGainQ16 = (65536, 65536)
            plc.subframeLength = 20
            plc.subframes = 2
            plc.fsKHz = fsKHz
        }
    }

    /// After a decoded frame: remembers what concealment of the next one needs.
    func updateConcealment(_ p: SILKFrameParameters) {
        resetPLCIfRateChanged()
        prevSignalType = indices.signalType
        var ltpGain: Int32 = 0
        if indices.signalType == 2 {
            var j = 0
            while j * subframeLength < p.pitchLags[subframes - 1] && j < subframes {
                let sub = subframes - 1 - j
                var gain: Int32 = 0
                for i in 0..<5 { gain += Int32(p.ltpQ14[sub * 5 + i]) }
                if gain > ltpGain {
                    ltpGain = gain
                    for i in 0..<5 { plc.ltpQ14[i] = Int32(p.ltpQ14[sub * 5 + i]) }
                    plc.pitchLQ8 = Int32(p.pitchLags[sub]) << 8
                }
                j += 1
            }
            for i in 0..<5 { plc.ltpQ14[i] = i == 2 ? ltpGain : 0 }
            // Keep the pitch gain between 0.7 and 0.95.
            if ltpGain < 11469 {
                let scaleQ10 = (Int32(11469) << 10) / max(ltpGain, 1)
                for i in 0..<5 { plc.ltpQ14[i] = SILKFixedPoint.smulbb(plc.ltpQ14[i], scaleQ10) >> 10 }
            } else if ltpGain > 15565 {
                let scaleQ14 = (Int32(15565) << 14) / max(ltpGain, 1)
                for i in 0..<5 { plc.ltpQ14[i] = SILKFixedPoint.smulbb(plc.ltpQ14[i], scaleQ14) >> 14 }
            }
        } else {
            plc.pitchLQ8 = SILKFixedPoint.smulbb(Int32(fsKHz), 18) << 8
            for i in 0..<5 { plc.ltpQ14[i] = 0 }
        }
        for i in 0..<lpcOrder { plc.prevLPCQ12[i] = p.lpcQ12[1][i] }
        plc.prevLTPScaleQ14 = p.ltpScaleQ14
        plc.prevGainQ16 = (p.gainsQ16[subframes - 2], p.gainsQ16[subframes - 1])
        plc.subframeLength = subframeLength
        plc.subframes = subframes
    }

    /// Conceals a lost frame into `frame` (`frameLength` samples).
    func conceal(_ p: inout SILKFrameParameters, frame: UnsafeMutablePointer<Int16>) {
        typealias F = SILKFixedPoint
        resetPLCIfRateChanged()
        let prevGainQ10 = (plc.prevGainQ16.0 >> 6, plc.prevGainQ16.1 >> 6)
        if firstFrameAfterReset {
            for i in 0..<16 { plc.prevLPCQ12[i] = 0 }
        }
        // Noise from the quieter of the last two subframes' excitation.
        var energy = [Int32](repeating: 0, count: 2)
        var shift = [Int32](repeating: 0, count: 2)
        var scaled = [Int16](repeating: 0, count: subframeLength)
        for k in 0..<2 {
            let gain = k == 0 ? prevGainQ10.0 : prevGainQ10.1
            for i in 0..<subframeLength {
                let e = excitationQ14[i + (k + subframes - 2) * subframeLength]
                scaled[i] = F.sat16(F.smulww(e, gain) >> 8)
            }
            (energy[k], shift[k]) = scaled.withUnsafeBufferPointer { Self.sumOfSquares($0.baseAddress!, count: subframeLength) }
        }
        let randomStart: Int
        if energy[0] >> shift[1] < energy[1] >> shift[0] {
            randomStart = max(0, (plc.subframes - 1) * plc.subframeLength - 128)
        } else {
            randomStart = max(0, plc.subframes * plc.subframeLength - 128)
        }
        var b = plc.ltpQ14
        var randScaleQ14 = plc.randScaleQ14
        let attenuation = min(1, lossCount)
        let harmonicGainQ15 = Self.harmonicAttenuationQ15[attenuation]
        var randomGainQ15 = prevSignalType == 2 ? Self.randomAttenuationVoicedQ15[attenuation]
            : Self.randomAttenuationUnvoicedQ15[attenuation]
        SILKNLSF.bandwidthExpand(&plc.prevLPCQ12, order: lpcOrder, chirpQ16: 64881) // 0.99
        let a = plc.prevLPCQ12
        if lossCount == 0 {
            randScaleQ14 = 1 << 14
            if prevSignalType == 2 {
                for i in 0..<5 { randScaleQ14 -= b[i] }
                randScaleQ14 = max(3277, randScaleQ14)
                randScaleQ14 = Int32(Int16(truncatingIfNeeded: F.smulbb(randScaleQ14, plc.prevLTPScaleQ14) >> 14))
            } else {
                // Less noise after a frame with a high LPC gain.
                let invGainQ30 = SILKNLSF.inversePredictionGain(plc.prevLPCQ12, order: lpcOrder)
                var downScaleQ30 = min(Int32(1 << 30) >> 3, invGainQ30)
                downScaleQ30 = max(Int32(1 << 30) >> 8, downScaleQ30)
                downScaleQ30 <<= 3
                randomGainQ15 = F.smulwb(downScaleQ30, randomGainQ15) >> 14
            }
        }
        var seed = plc.randSeed
        var lag = max(Int(F.rshiftRound(plc.pitchLQ8, 8)), 3)
        var ltpIndex = ltpMemoryLength
        let sLTP = scratchLTP
        let sLTPQ14 = scratchLTPQ15
        // Re-whitening of the past output with the concealment's LPC filter.
        let start = max(0, ltpMemoryLength - lag - lpcOrder - 2)
        outBuffer.withUnsafeBufferPointer { outBuf in
            lpcAnalysisForConcealment(sLTP + start, outBuf.baseAddress! + start, a, ltpMemoryLength - start, lpcOrder)
        }
        var invGainQ30 = F.inverse32VarQ(plc.prevGainQ16.1, 46)
        invGainQ30 = min(invGainQ30, Int32.max >> 1)
        for i in stride(from: start + lpcOrder, to: ltpMemoryLength, by: 1) {
            sLTPQ14[i] = F.smulwb(invGainQ30, Int32(sLTP[i]))
        }
        // LTP synthesis with a fading pitch and noise excitation.
        excitationQ14.withUnsafeBufferPointer { exc in
            let random = exc.baseAddress! + randomStart
            for _ in 0..<subframes {
                var pred = ltpIndex - lag + 2
                for _ in 0..<subframeLength {
                    var ltp: Int32 = 2
                    if pred - 4 >= 0 {
                        ltp = F.smlawb(ltp, sLTPQ14[pred], b[0])
                        ltp = F.smlawb(ltp, sLTPQ14[pred - 1], b[1])
                        ltp = F.smlawb(ltp, sLTPQ14[pred - 2], b[2])
                        ltp = F.smlawb(ltp, sLTPQ14[pred - 3], b[3])
                        ltp = F.smlawb(ltp, sLTPQ14[pred - 4], b[4])
                    }
                    pred += 1
                    seed = F.rand(seed)
                    let index = Int((seed >> 25) & 127)
                    sLTPQ14[ltpIndex] = F.smlawb(ltp, random[index], randScaleQ14) << 2
                    ltpIndex += 1
                }
                for j in 0..<5 { b[j] = F.smulbb(harmonicGainQ15, b[j]) >> 15 }
                if !libopus13Concealment || indices.signalType != 0 {
                    randScaleQ14 = F.smulbb(randScaleQ14, randomGainQ15) >> 15
                }
                plc.pitchLQ8 = F.smlawb(plc.pitchLQ8, plc.pitchLQ8, 655)
                plc.pitchLQ8 = min(plc.pitchLQ8, F.smulbb(18, Int32(fsKHz)) << 8)
                lag = max(Int(F.rshiftRound(plc.pitchLQ8, 8)), 3)
            }
        }
        // LPC synthesis, in place over the LTP output.
        let s = sLTPQ14 + ltpMemoryLength - 16
        for i in 0..<16 { s[i] = lpcStateQ14[i] }
        for i in 0..<frameLength {
            var pred = Int32(lpcOrder >> 1)
            for j in 0..<lpcOrder {
                pred = F.smlawb(pred, s[16 + i - j - 1], Int32(a[j]))
            }
            s[16 + i] = F.addSat32(s[16 + i], F.lshiftSat32(pred, 4))
            frame[i] = F.sat16(F.rshiftRound(F.smulww(s[16 + i], prevGainQ10.1), 8))
        }
        for i in 0..<16 { lpcStateQ14[i] = s[frameLength + i] }
        plc.randSeed = seed
        plc.randScaleQ14 = randScaleQ14
        // The faded pitch gain carries on into the next lost frame.
        plc.ltpQ14 = b
        for k in 0..<4 { p.pitchLags[k] = lag }
    }

    private func lpcAnalysisForConcealment(_ out: UnsafeMutablePointer<Int16>, _ input: UnsafePointer<Int16>,
                                           _ b: [Int16], _ length: Int, _ order: Int)
    {
        guard length > order else { return }
        for ix in order..<length {
            let x = input + ix - 1
            var acc: Int32 = 0
            for j in 0..<order { acc = acc &+ Int32(x[-j]) &* Int32(b[j]) }
            acc = (Int32(x[1]) << 12) &- acc
            out[ix] = SILKFixedPoint.sat16(SILKFixedPoint.rshiftRound(acc, 12))
        }
        for i in 0..<order { out[i] = 0 }
    }

    /// The energy of `x` right-shifted so it fits 32 bits with headroom, and the shift.
    static func sumOfSquares(_ x: UnsafePointer<Int16>, count: Int) -> (Int32, Int32) {
        var shift = 31 - SILKFixedPoint.clz32(Int32(count))
        var energy = UInt32(count)
        func accumulate(_ shift: Int32, _ start: UInt32) -> UInt32 {
            var e = start
            var i = 0
            while i < count - 1 {
                var t = UInt32(bitPattern: Int32(x[i]) * Int32(x[i]))
                t = t &+ UInt32(bitPattern: Int32(x[i + 1]) * Int32(x[i + 1]))
                e = e &+ (t >> UInt32(shift))
                i += 2
            }
            if i < count {
                e = e &+ (UInt32(bitPattern: Int32(x[i]) * Int32(x[i])) >> UInt32(shift))
            }
            return e
        }
        energy = accumulate(shift, energy)
        shift = max(0, shift + 3 - SILKFixedPoint.clz32(Int32(bitPattern: energy)))
        energy = accumulate(shift, 0)
        return (Int32(bitPattern: energy), shift)
    }

    /// Comfort noise: in good inactive frames, updates the smoothed spectrum, excitation
    /// and gain; in concealed frames, adds noise from them to `frame`.
    func comfortNoise(_ p: SILKFrameParameters, frame: UnsafeMutablePointer<Int16>) {
        typealias F = SILKFixedPoint
        if fsKHz != cng.fsKHz {
            let step = Int32(32767) / Int32(lpcOrder + 1)
            var acc: Int32 = 0
            for i in 0..<lpcOrder {
                acc += step
                cng.smoothNLSFQ15[i] = Int16(acc)
            }
            cng.smoothGainQ16 = 0
            cng.randSeed = 3_176_576
            cng.fsKHz = fsKHz
        }
        if lossCount == 0 && prevSignalType == 0 {
            for i in 0..<lpcOrder {
                let d = Int32(prevNLSFQ15[i]) - Int32(cng.smoothNLSFQ15[i])
                cng.smoothNLSFQ15[i] = Int16(truncatingIfNeeded: Int32(cng.smoothNLSFQ15[i]) + F.smulwb(d, 16348))
            }
            var maxGain: Int32 = 0
            var loudest = 0
            for i in 0..<subframes where p.gainsQ16[i] > maxGain {
                maxGain = p.gainsQ16[i]
                loudest = i
            }
            let moved = (subframes - 1) * subframeLength
            for i in stride(from: moved - 1, through: 0, by: -1) {
                cng.excitationQ14[subframeLength + i] = cng.excitationQ14[i]
            }
            for i in 0..<subframeLength {
                cng.excitationQ14[i] = excitationQ14[loudest * subframeLength + i]
            }
            for i in 0..<subframes {
                cng.smoothGainQ16 = cng.smoothGainQ16 &+ F.smulwb(p.gainsQ16[i] &- cng.smoothGainQ16, 4634)
                // A gain 3 dB under the smoothed one is taken at once (libopus 1.4 on).
                if !libopus13Concealment && F.smulww(cng.smoothGainQ16, 46396) > p.gainsQ16[i] {
                    cng.smoothGainQ16 = p.gainsQ16[i]
                }
            }
        }
        guard lossCount > 0 else {
            for i in 0..<lpcOrder { cng.synthesisState[i] = 0 }
            return
        }
        var gainQ16 = F.smulww(plc.randScaleQ14, plc.prevGainQ16.1)
        if gainQ16 >= 1 << 21 || cng.smoothGainQ16 > 1 << 23 {
            gainQ16 = (gainQ16 >> 16) &* (gainQ16 >> 16)
            gainQ16 = ((cng.smoothGainQ16 >> 16) &* (cng.smoothGainQ16 >> 16)) &- (gainQ16 << 5)
            gainQ16 = Self.sqrtApprox(gainQ16) << 16
        } else {
            gainQ16 = F.smulww(gainQ16, gainQ16)
            gainQ16 = F.smulww(cng.smoothGainQ16, cng.smoothGainQ16) &- (gainQ16 << 5)
            gainQ16 = Self.sqrtApprox(gainQ16) << 8
        }
        let gainQ10 = gainQ16 >> 6
        var mask = 255
        while mask > frameLength { mask >>= 1 }
        var a = [Int16](repeating: 0, count: 16)
        var smooth = SIMD16<Int16>()
        for i in 0..<lpcOrder { smooth[i] = cng.smoothNLSFQ15[i] }
        SILKNLSF.toLPC(smooth, order: lpcOrder, into: &a)
        var sig = [Int32](repeating: 0, count: frameLength + 16)
        for i in 0..<16 { sig[i] = cng.synthesisState[i] }
        var seed = cng.randSeed
        for i in 0..<frameLength {
            seed = F.rand(seed)
            sig[16 + i] = cng.excitationQ14[Int(seed >> 24) & mask]
        }
        cng.randSeed = seed
        for i in 0..<frameLength {
            var pred = Int32(lpcOrder >> 1)
            for j in 0..<lpcOrder { pred = F.smlawb(pred, sig[16 + i - j - 1], Int32(a[j])) }
            sig[16 + i] = F.addSat32(sig[16 + i], F.lshiftSat32(pred, 4))
            let noise = Int32(F.sat16(F.rshiftRound(F.smulww(sig[16 + i], gainQ10), 8)))
            frame[i] = F.sat16(Int32(frame[i]) + noise)
        }
        for i in 0..<16 { cng.synthesisState[i] = sig[frameLength + i] }
    }

    /// After concealment, measures the concealed energy; on the first good frame after
    /// it, ramps the frame's gain up from the concealed level if the frame is louder.
    func glueFrames(_ frame: UnsafeMutablePointer<Int16>, length: Int) {
        if lossCount > 0 {
            (plc.concealedEnergy, plc.concealedEnergyShift) = Self.sumOfSquares(frame, count: length)
            plc.lastFrameLost = true
            return
        }
        if plc.lastFrameLost {
            var (energy, shift) = Self.sumOfSquares(frame, count: length)
            if shift > plc.concealedEnergyShift {
                plc.concealedEnergy >>= shift - plc.concealedEnergyShift
            } else if shift < plc.concealedEnergyShift {
                energy >>= plc.concealedEnergyShift - shift
            }
            if energy > plc.concealedEnergy {
                let lz = SILKFixedPoint.clz32(plc.concealedEnergy) - 1
                plc.concealedEnergy = plc.concealedEnergy << lz
                energy >>= max(24 - lz, 0)
                let fracQ24 = plc.concealedEnergy / max(energy, 1)
                var gainQ16 = Self.sqrtApprox(fracQ24) << 4
                var slopeQ16 = ((1 << 16) - gainQ16) / Int32(length)
                slopeQ16 <<= 2
                for i in 0..<length {
                    frame[i] = Int16(truncatingIfNeeded: SILKFixedPoint.smulwb(gainQ16, Int32(frame[i])))
                    gainQ16 += slopeQ16
                    if gainQ16 > 1 << 16 { break }
                }
            }
        }
        plc.lastFrameLost = false
    }

    /// An approximation of √x (SILK's SQRT_APPROX).
    static func sqrtApprox(_ x: Int32) -> Int32 {
        guard x > 0 else { return 0 }
        let lz = SILKFixedPoint.clz32(x)
        let rotation = (24 - Int(lz)) & 31
        let u = UInt32(bitPattern: x)
        let rotated = rotation == 0 ? u : (u >> UInt32(rotation)) | (u << UInt32(32 - rotation))
        let fracQ7 = Int32(rotated & 0x7F)
        var y: Int32 = lz & 1 != 0 ? 32768 : 46214
        y >>= lz >> 1
        return SILKFixedPoint.smlawb(y, y, SILKFixedPoint.smulbb(213, fracQ7))
    }
}

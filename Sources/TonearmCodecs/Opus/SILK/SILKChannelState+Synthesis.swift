/// SILK's synthesis (RFC 6716 §4.2.7.8.6 and §4.2.7.9): the excitation from the pulses and
/// the LCG, then long-term (pitch) and short-term (LPC) prediction, in the RFC's exact
/// fixed-point arithmetic.
extension SILKChannelState {
    /// Decodes one frame's output (`frameLength` samples) into `out` from `pulses`.
    func synthesize(_ p: inout SILKFrameParameters, pulses: UnsafePointer<Int16>, out: UnsafeMutablePointer<Int16>) {
        typealias F = SILKFixedPoint
        let offsetQ10 = SILKTables.quantizationOffsetsQ10[(indices.signalType >> 1) * 2 + indices.quantOffsetType]
        let interpolated = indices.nlsfInterpolationQ2 < 4
        let order = lpcOrder
        let subLength = subframeLength
        let memLength = ltpMemoryLength

        excitationQ14.withUnsafeMutableBufferPointer { exc in
            // §4.2.7.8.6: the excitation: pulses moved towards zero by the quantisation
            // level adjustment, offset, and sign-flipped by the LCG.
            var seed = Int32(indices.seed)
            for i in 0..<frameLength {
                seed = F.rand(seed)
                var e = Int32(pulses[i]) << 14
                if e > 0 { e -= 80 << 4 } else if e < 0 { e += 80 << 4 }
                e += offsetQ10 << 4
                if seed < 0 { e = -e }
                exc[i] = e
                seed = seed &+ Int32(pulses[i])
            }
        }

        let sLTP = scratchLTP
        let sLTPQ15 = scratchLTPQ15
        let residual = scratchResidual
        let sLPC = scratchLPC
        for i in 0..<16 { sLPC[i] = lpcStateQ14[i] }
        var ltpIndex = memLength
        var lag = 0

        outBuffer.withUnsafeMutableBufferPointer { outBuf in
        excitationQ14.withUnsafeMutableBufferPointer { excBuf in
            var a = (Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0),
                     Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0))
            for k in 0..<subframes {
                let exc = excBuf.baseAddress! + k * subLength
                let xq = out + k * subLength
                let lpc = p.lpcQ12[k >> 1]
                withUnsafeMutableBytes(of: &a) { raw in
                    let coeffs = raw.bindMemory(to: Int32.self)
                    for j in 0..<16 { coeffs[j] = j < order ? Int32(lpc[j]) : 0 }
                }
                var signalType = indices.signalType
                let gainQ16 = p.gainsQ16[k]
                let gainQ10 = gainQ16 >> 6
                var invGainQ31 = F.inverse32VarQ(gainQ16, 47)
                // A new gain rescales the LPC state (and, below, the LTP state).
                var gainAdjQ16: Int32 = 1 << 16
                if gainQ16 != prevGainQ16 {
                    gainAdjQ16 = F.div32VarQ(prevGainQ16, gainQ16, 16)
                    for i in 0..<16 { sLPC[i] = F.smulww(gainAdjQ16, sLPC[i]) }
                }
                prevGainQ16 = gainQ16

                // From voiced concealment into an unvoiced frame, keep a weak pitch
                // predictor for the first half so the change is not abrupt.
                if lossCount > 0 && prevSignalType == 2 && indices.signalType != 2 && k < 2 {
                    for i in 0..<5 { p.ltpQ14[k * 5 + i] = 0 }
                    p.ltpQ14[k * 5 + 2] = 4096
                    signalType = 2
                    p.pitchLags[k] = lagPrev
                }

                if signalType == 2 {
                    // Decoded lags are at least 2 ms; this only keeps damaged state from
                    // reading the LTP buffer ahead of what it has written.
                    lag = max(p.pitchLags[k], 3)
                    // §4.2.7.9.1: re-whitening: the past output through this subframe's
                    // LPC analysis filter gives the LTP's history in the excitation domain.
                    if k == 0 || (k == 2 && interpolated) {
                        let start = memLength - lag - order - 2
                        if k == 2 {
                            for i in 0..<(2 * subLength) { outBuf[memLength + i] = out[i] }
                        }
                        if start >= 0 {
                            lpcAnalysis(sLTP + start, outBuf.baseAddress! + start + k * subLength, lpc, memLength - start, order)
                        }
                        if k == 0 {
                            // LTP scaling limits the damage of a lost previous packet.
                            invGainQ31 = F.smulwb(invGainQ31, p.ltpScaleQ14) << 2
                        }
                        for i in 0..<(lag + 2) where memLength - i - 1 >= 0 {
                            sLTPQ15[ltpIndex - i - 1] = F.smulwb(invGainQ31, Int32(sLTP[memLength - i - 1]))
                        }
                    } else if gainAdjQ16 != 1 << 16 {
                        for i in 0..<(lag + 2) where ltpIndex - i - 1 >= 0 {
                            sLTPQ15[ltpIndex - i - 1] = F.smulww(gainAdjQ16, sLTPQ15[ltpIndex - i - 1])
                        }
                    }
                }

                // §4.2.7.9.1: long-term prediction.
                let res: UnsafeMutablePointer<Int32>
                if signalType == 2 {
                    let b0 = Int32(p.ltpQ14[k * 5]), b1 = Int32(p.ltpQ14[k * 5 + 1]), b2 = Int32(p.ltpQ14[k * 5 + 2])
                    let b3 = Int32(p.ltpQ14[k * 5 + 3]), b4 = Int32(p.ltpQ14[k * 5 + 4])
                    var pred = ltpIndex - lag + 2
                    for i in 0..<subLength {
                        var ltp: Int32 = 2
                        if pred - 4 >= 0 {
                            ltp = F.smlawb(ltp, sLTPQ15[pred], b0)
                            ltp = F.smlawb(ltp, sLTPQ15[pred - 1], b1)
                            ltp = F.smlawb(ltp, sLTPQ15[pred - 2], b2)
                            ltp = F.smlawb(ltp, sLTPQ15[pred - 3], b3)
                            ltp = F.smlawb(ltp, sLTPQ15[pred - 4], b4)
                        }
                        pred += 1
                        residual[i] = exc[i] &+ (ltp << 1)
                        sLTPQ15[ltpIndex] = residual[i] << 1
                        ltpIndex += 1
                    }
                    res = residual
                } else {
                    res = exc
                }

                // §4.2.7.9.2: short-term prediction, then the gain.
                withUnsafeBytes(of: &a) { raw in
                    let c = raw.bindMemory(to: Int32.self)
                    for i in 0..<subLength {
                        let s = sLPC + 16 + i
                        var pred = Int32(order >> 1)
                        pred = F.smlawb(pred, s[-1], c[0])
                        pred = F.smlawb(pred, s[-2], c[1])
                        pred = F.smlawb(pred, s[-3], c[2])
                        pred = F.smlawb(pred, s[-4], c[3])
                        pred = F.smlawb(pred, s[-5], c[4])
                        pred = F.smlawb(pred, s[-6], c[5])
                        pred = F.smlawb(pred, s[-7], c[6])
                        pred = F.smlawb(pred, s[-8], c[7])
                        pred = F.smlawb(pred, s[-9], c[8])
                        pred = F.smlawb(pred, s[-10], c[9])
                        if order == 16 {
                            pred = F.smlawb(pred, s[-11], c[10])
                            pred = F.smlawb(pred, s[-12], c[11])
                            pred = F.smlawb(pred, s[-13], c[12])
                            pred = F.smlawb(pred, s[-14], c[13])
                            pred = F.smlawb(pred, s[-15], c[14])
                            pred = F.smlawb(pred, s[-16], c[15])
                        }
                        s[0] = F.addSat32(res[i], F.lshiftSat32(pred, 4))
                        xq[i] = F.sat16(F.rshiftRound(F.smulww(s[0], gainQ10), 8))
                    }
                }
                for i in 0..<16 { sLPC[i] = sLPC[subLength + i] }
            }
        }
        }
        for i in 0..<16 { lpcStateQ14[i] = sLPC[i] }
    }

    /// The LPC analysis (whitening) filter over `length` samples; the first `order`
    /// outputs are 0.
    private func lpcAnalysis(_ out: UnsafeMutablePointer<Int16>, _ input: UnsafePointer<Int16>, _ b: [Int16],
                             _ length: Int, _ order: Int)
    {
        guard length > order else {
            for i in 0..<max(length, 0) { out[i] = 0 }
            return
        }
        b.withUnsafeBufferPointer { coeffs in
            for ix in order..<length {
                let x = input + ix - 1
                var acc: Int32 = 0
                for j in 0..<order {
                    acc = acc &+ Int32(x[-j]) &* Int32(coeffs[j])
                }
                acc = (Int32(x[1]) << 12) &- acc
                out[ix] = SILKFixedPoint.sat16(SILKFixedPoint.rshiftRound(acc, 12))
            }
        }
        for i in 0..<order { out[i] = 0 }
    }
}

/// An NLSF codebook (RFC 6716 §4.2.7.5): NB/MB (order 10) or WB (order 16).
struct SILKNLSFCodebook: Sendable {
    let order: Int
    var vectors: Int { 32 }
    /// The stage-2 step, Q16 (0.18 NB/MB, 0.15 WB).
    let stepQ16: Int32
    let stage1Q8: [UInt8]
    /// The stage-2 residual's weights (Q9) for each stage-1 vector, derived from it.
    let stage1WeightsQ9: [Int32]
    let stage1ICDF: [UInt8]
    let prediction: [UInt8]
    let stage2Select: [UInt8]
    let stage2ICDF: [UInt8]
    let deltaMinQ15: [Int32]

    init(order: Int, stepQ16: Int32, stage1Q8: [UInt8], stage1ICDF: [UInt8], prediction: [UInt8],
         stage2Select: [UInt8], stage2ICDF: [UInt8], deltaMinQ15: [Int32])
    {
        self.order = order
        self.stepQ16 = stepQ16
        self.stage1Q8 = stage1Q8
        self.stage1ICDF = stage1ICDF
        self.prediction = prediction
        self.stage2Select = stage2Select
        self.stage2ICDF = stage2ICDF
        self.deltaMinQ15 = deltaMinQ15
        // §4.2.7.5.3: w2 = 1024/(c[k] − c[k−1]) + 1024/(c[k+1] − c[k]) in Q18 (c[−1] = 0,
        // c[order] = 256), and w = √w2 by SILK's square-root approximation, in Q9.
        var weights = [Int32](repeating: 0, count: stage1Q8.count)
        for base in stride(from: 0, to: stage1Q8.count, by: order) {
            for k in 0..<order {
                let c = Int32(stage1Q8[base + k])
                let before = k > 0 ? Int32(stage1Q8[base + k - 1]) : 0
                let after = k < order - 1 ? Int32(stage1Q8[base + k + 1]) : 256
                let w2 = (1024 / max(c - before, 1) + 1024 / max(after - c, 1)) << 16
                let bits = 32 - SILKFixedPoint.clz32(w2)
                let fraction = (w2 >> (bits - 8)) & 127
                let y: Int32 = (bits & 1 != 0 ? 32768 : 46214) >> ((32 - bits) >> 1)
                weights[base + k] = y + ((213 * fraction * y) >> 16)
            }
        }
        stage1WeightsQ9 = weights
    }

    static let narrowMedium = SILKNLSFCodebook(
        order: 10, stepQ16: 11797, stage1Q8: SILKTables.nlsfCB1NBMBQ8,
        stage1ICDF: SILKTables.nlsfCB1NBMBICDF, prediction: SILKTables.nlsfPredNBMBQ8,
        stage2Select: SILKTables.nlsfCB2SelectNBMB, stage2ICDF: SILKTables.nlsfCB2NBMBICDF,
        deltaMinQ15: SILKTables.nlsfDeltaMinNBMBQ15)
    static let wideband = SILKNLSFCodebook(
        order: 16, stepQ16: 9830, stage1Q8: SILKTables.nlsfCB1WBQ8,
        stage1ICDF: SILKTables.nlsfCB1WBICDF, prediction: SILKTables.nlsfPredWBQ8,
        stage2Select: SILKTables.nlsfCB2SelectWB, stage2ICDF: SILKTables.nlsfCB2WBICDF,
        deltaMinQ15: SILKTables.nlsfDeltaMinWBQ15)

    /// §4.2.7.5.2: for stage-1 vector `index`, where each coefficient's stage-2 ICDF starts
    /// in ``stage2ICDF`` and its backward prediction weight (Q8).
    func unpack(_ index: Int, icdfOffsets: inout SIMD16<Int>, predictionQ8: inout SIMD16<Int32>) {
        let base = index * order / 2
        var i = 0
        while i < order {
            let entry = Int(stage2Select[base + i / 2])
            icdfOffsets[i] = ((entry >> 1) & 7) * 9
            predictionQ8[i] = Int32(prediction[i + (entry & 1) * (order - 1)])
            icdfOffsets[i + 1] = ((entry >> 5) & 7) * 9
            predictionQ8[i + 1] = Int32(prediction[i + ((entry >> 4) & 1) * (order - 1) + 1])
            i += 2
        }
    }
}

/// NLSF decoding, stabilisation and conversion to LPC coefficients (RFC 6716 §4.2.7.5).
/// Vectors of at most 16 coefficients are SIMD16 values, not arrays: a frame's decode
/// allocates nothing.
enum SILKNLSF {
    /// §4.2.7.5.2 – §4.2.7.5.4: the NLSF vector (Q15) from the indices, stabilised.
    static func decode(_ indices: [Int], codebook cb: SILKNLSFCodebook, into nlsf: inout SIMD16<Int16>) {
        let order = cb.order
        var offsets = SIMD16<Int>()
        var predQ8 = SIMD16<Int32>()
        let stage1 = min(max(indices[0], 0), cb.vectors - 1)
        cb.unpack(stage1, icdfOffsets: &offsets, predictionQ8: &predQ8)
        // §4.2.7.5.3: the residual, dequantised backwards with the prediction.
        var residualQ10 = SIMD16<Int32>()
        var outQ10: Int32 = 0
        for i in stride(from: order - 1, through: 0, by: -1) {
            let predQ10 = SILKFixedPoint.smulbb(outQ10, predQ8[i]) >> 8
            outQ10 = Int32(indices[i + 1]) << 10
            // NLSF_QUANT_LEVEL_ADJ: 0.1 in Q10.
            if outQ10 > 0 { outQ10 -= 102 } else if outQ10 < 0 { outQ10 += 102 }
            outQ10 = SILKFixedPoint.smlawb(predQ10, outQ10, cb.stepQ16)
            residualQ10[i] = outQ10
        }
        // The stage-1 vector plus the residual scaled by the inverse weights.
        for i in 0..<order {
            let weight = cb.stage1WeightsQ9[stage1 * order + i]
            let value = (residualQ10[i] << 14) / weight + (Int32(cb.stage1Q8[stage1 * order + i]) << 7)
            nlsf[i] = Int16(min(max(value, 0), 32767))
        }
        stabilize(&nlsf, deltaMinQ15: cb.deltaMinQ15, order: order)
    }

    /// §4.2.7.5.4: moves NLSFs apart until each is at least its minimum distance from its
    /// neighbours (and the ends); after 20 rounds, a sort and clamping settle it.
    static func stabilize(_ nlsf: inout SIMD16<Int16>, deltaMinQ15 dMin: [Int32], order L: Int) {
        for _ in 0..<20 {
            var minDiff = Int32(nlsf[0]) - dMin[0]
            var index = 0
            for i in 1..<L {
                let diff = Int32(nlsf[i]) - (Int32(nlsf[i - 1]) + dMin[i])
                if diff < minDiff { minDiff = diff; index = i }
            }
            let last = 32768 - (Int32(nlsf[L - 1]) + dMin[L])
            if last < minDiff { minDiff = last; index = L }
            if minDiff >= 0 { return }
            if index == 0 {
                nlsf[0] = Int16(dMin[0])
            } else if index == L {
                nlsf[L - 1] = Int16(32768 - dMin[L])
            } else {
                var minCenter: Int32 = 0
                for k in 0..<index { minCenter += dMin[k] }
                minCenter += dMin[index] >> 1
                var maxCenter: Int32 = 32768
                var k = L
                while k > index { maxCenter -= dMin[k]; k -= 1 }
                maxCenter -= dMin[index] >> 1
                let sum = Int32(nlsf[index - 1]) + Int32(nlsf[index])
                let center = min(max(SILKFixedPoint.rshiftRound(sum, 1), minCenter), maxCenter)
                nlsf[index - 1] = Int16(truncatingIfNeeded: center - (dMin[index] >> 1))
                nlsf[index] = Int16(truncatingIfNeeded: Int32(nlsf[index - 1]) + dMin[index])
            }
        }
        // Fallback: sort, then enforce the spacing from below and from above.
        for i in 1..<L {
            let value = nlsf[i]
            var j = i - 1
            while j >= 0 && nlsf[j] > value { nlsf[j + 1] = nlsf[j]; j -= 1 }
            nlsf[j + 1] = value
        }
        nlsf[0] = Int16(max(Int32(nlsf[0]), dMin[0]))
        for i in 1..<L {
            let floor = Int32(Int16(clamping: Int32(nlsf[i - 1]) + dMin[i]))
            nlsf[i] = Int16(max(Int32(nlsf[i]), floor))
        }
        nlsf[L - 1] = Int16(min(Int32(nlsf[L - 1]), 32768 - dMin[L]))
        for i in stride(from: L - 2, through: 0, by: -1) {
            nlsf[i] = Int16(truncatingIfNeeded: min(Int32(nlsf[i]), Int32(nlsf[i + 1]) - dMin[i + 1]))
        }
    }

    private static let ordering16: [Int] = [0, 15, 8, 7, 4, 11, 12, 3, 2, 13, 10, 5, 6, 9, 14, 1]
    private static let ordering10: [Int] = [0, 9, 6, 3, 4, 5, 8, 1, 2, 7]

    /// §4.2.7.5.6 – §4.2.7.5.8: LPC coefficients (Q12) from NLSFs (Q15), limited so that
    /// they fit 16 bits and the filter is stable with a bounded prediction gain.
    static func toLPC(_ nlsf: SIMD16<Int16>, order d: Int, into aQ12: inout [Int16]) {
        let qa: Int32 = 16
        let ordering = d == 16 ? ordering16 : ordering10
        var cosQA = SIMD16<Int32>()
        let cosTable = SILKTables.lsfCosQ12
        for k in 0..<d {
            let n = Int32(nlsf[k])
            let fInt = n >> 8
            let fFrac = n - (fInt << 8)
            let cosValue = cosTable[Int(fInt)]
            let delta = cosTable[Int(fInt) + 1] - cosValue
            cosQA[ordering[k]] = SILKFixedPoint.rshiftRound((cosValue << 8) + delta * fFrac, 20 - qa)
        }
        let dd = d / 2
        var p = SIMD16<Int32>()  // 9 used
        var q = SIMD16<Int32>()
        findPolynomial(&p, cosQA, offset: 0, dd)
        findPolynomial(&q, cosQA, offset: 1, dd)
        var a32 = SIMD16<Int32>()
        for k in 0..<dd {
            let pSum = p[k + 1] &+ p[k]
            let qDiff = q[k + 1] &- q[k]
            a32[k] = 0 &- qDiff &- pSum
            a32[d - k - 1] = qDiff &- pSum
        }
        fit(&a32, into: &aQ12, qOut: 12, qIn: qa + 1, order: d)
        var i: Int32 = 0
        while inversePredictionGain(aQ12, order: d) == 0 && i < 16 {
            bandwidthExpand32(&a32, order: d, chirpQ16: 65536 - (2 << i))
            for k in 0..<d { aQ12[k] = Int16(truncatingIfNeeded: SILKFixedPoint.rshiftRound(a32[k], qa + 1 - 12)) }
            i += 1
        }
    }

    /// One of the two polynomials of §4.2.7.5.6 from every other 2·cos(NLSF), QA.
    private static func findPolynomial(_ out: inout SIMD16<Int32>, _ cosQA: SIMD16<Int32>, offset: Int, _ dd: Int) {
        let qa: Int64 = 16
        out[0] = 1 << 16
        out[1] = 0 &- cosQA[offset]
        for k in 1..<dd {
            let f = Int64(cosQA[offset + 2 * k])
            out[k + 1] = (out[k - 1] << 1) &- Int32(truncatingIfNeeded: SILKFixedPoint.rshiftRound64(f * Int64(out[k]), qa))
            var n = k
            while n > 1 {
                out[n] = out[n] &+ (out[n - 2] &- Int32(truncatingIfNeeded: SILKFixedPoint.rshiftRound64(f * Int64(out[n - 1]), qa)))
                n -= 1
            }
            out[1] = out[1] &- Int32(truncatingIfNeeded: f)
        }
    }

    /// §4.2.7.5.7: brings the 32-bit coefficients into 16-bit range with bandwidth
    /// expansion (ten tries, then clipping).
    static func fit(_ aIn: inout SIMD16<Int32>, into aOut: inout [Int16], qOut: Int32, qIn: Int32, order d: Int) {
        var round = 0
        while round < 10 {
            var maxAbs: Int32 = 0
            var index = 0
            for k in 0..<d {
                let a = SILKFixedPoint.abs32(aIn[k])
                if a > maxAbs { maxAbs = a; index = k }
            }
            maxAbs = SILKFixedPoint.rshiftRound(maxAbs, qIn - qOut)
            guard maxAbs > 32767 else { break }
            maxAbs = min(maxAbs, 163_838)
            let chirpQ16 = 65470 - ((maxAbs - 32767) << 14) / ((maxAbs &* Int32(index + 1)) >> 2)
            bandwidthExpand32(&aIn, order: d, chirpQ16: chirpQ16)
            round += 1
        }
        if round == 10 {
            for k in 0..<d {
                aOut[k] = SILKFixedPoint.sat16(SILKFixedPoint.rshiftRound(aIn[k], qIn - qOut))
                aIn[k] = Int32(aOut[k]) << (qIn - qOut)
            }
        } else {
            for k in 0..<d { aOut[k] = Int16(truncatingIfNeeded: SILKFixedPoint.rshiftRound(aIn[k], qIn - qOut)) }
        }
    }

    /// §4.2.7.5.8: the inverse of the filter's prediction gain (Q30), or 0 when the filter
    /// is unstable or its gain exceeds 10⁴ (40 dB).
    static func inversePredictionGain(_ aQ12: [Int16], order: Int) -> Int32 {
        let qa: Int32 = 24
        var a = SIMD16<Int32>()
        var dc: Int32 = 0
        for k in 0..<order {
            dc += Int32(aQ12[k])
            a[k] = Int32(aQ12[k]) << (qa - 12)
        }
        if dc >= 4096 { return 0 }
        let limit: Int32 = 16_773_022 // 0.99975 in Q24
        let minInvGain: Int32 = 107_374 // 1/1e4 in Q30
        var invGainQ30: Int32 = 1 << 30
        var k = order - 1
        while k > 0 {
            if a[k] > limit || a[k] < -limit { return 0 }
            let rcQ31 = 0 &- (a[k] << (31 - qa))
            let rcMult1Q30 = (1 << 30) &- SILKFixedPoint.smmul(rcQ31, rcQ31)
            invGainQ30 = SILKFixedPoint.smmul(invGainQ30, rcMult1Q30) << 2
            if invGainQ30 < minInvGain { return 0 }
            let mult2Q = 32 - SILKFixedPoint.clz32(SILKFixedPoint.abs32(rcMult1Q30))
            let rcMult2 = SILKFixedPoint.inverse32VarQ(rcMult1Q30, mult2Q + 30)
            for n in 0..<((k + 1) >> 1) {
                let t1 = a[n]
                let t2 = a[k - n - 1]
                let f1 = Int32(truncatingIfNeeded: SILKFixedPoint.rshiftRound64(Int64(t2) * Int64(rcQ31), 31))
                let v1 = SILKFixedPoint.rshiftRound64(Int64(SILKFixedPoint.subSat32(t1, f1)) * Int64(rcMult2), Int64(mult2Q))
                if v1 > Int64(Int32.max) || v1 < Int64(Int32.min) { return 0 }
                a[n] = Int32(v1)
                let f2 = Int32(truncatingIfNeeded: SILKFixedPoint.rshiftRound64(Int64(t1) * Int64(rcQ31), 31))
                let v2 = SILKFixedPoint.rshiftRound64(Int64(SILKFixedPoint.subSat32(t2, f2)) * Int64(rcMult2), Int64(mult2Q))
                if v2 > Int64(Int32.max) || v2 < Int64(Int32.min) { return 0 }
                a[k - n - 1] = Int32(v2)
            }
            k -= 1
        }
        if a[0] > limit || a[0] < -limit { return 0 }
        let rcQ31 = 0 &- (a[0] << (31 - qa))
        let rcMult1Q30 = (1 << 30) &- SILKFixedPoint.smmul(rcQ31, rcQ31)
        invGainQ30 = SILKFixedPoint.smmul(invGainQ30, rcMult1Q30) << 2
        if invGainQ30 < minInvGain { return 0 }
        return invGainQ30
    }

    /// Bandwidth expansion of 32-bit coefficients: a[i] × chirp^(i+1).
    static func bandwidthExpand32(_ a: inout SIMD16<Int32>, order d: Int, chirpQ16 chirpIn: Int32) {
        var chirp = chirpIn
        let chirpMinusOne = chirp - 65536
        for i in 0..<(d - 1) {
            a[i] = SILKFixedPoint.smulww(chirp, a[i])
            chirp = chirp &+ SILKFixedPoint.rshiftRound(chirp &* chirpMinusOne, 16)
        }
        a[d - 1] = SILKFixedPoint.smulww(chirp, a[d - 1])
    }

    /// Bandwidth expansion of Q12 coefficients (after a loss, and in concealment).
    static func bandwidthExpand(_ a: inout [Int16], order d: Int, chirpQ16 chirpIn: Int32) {
        var chirp = chirpIn
        let chirpMinusOne = chirp - 65536
        for i in 0..<(d - 1) {
            a[i] = Int16(truncatingIfNeeded: SILKFixedPoint.rshiftRound(chirp &* Int32(a[i]), 16))
            chirp = chirp &+ SILKFixedPoint.rshiftRound(chirp &* chirpMinusOne, 16)
        }
        a[d - 1] = Int16(truncatingIfNeeded: SILKFixedPoint.rshiftRound(chirp &* Int32(a[d - 1]), 16))
    }
}

/// How a frame's first gain and LTP scaling are coded (RFC 6716 §4.2.7.4, §4.2.7.6.3).
enum SILKConditionalCoding {
    /// The first frame of a packet (or after a gap): absolute gain, LTP scaling coded.
    case independently
    /// A side frame after mid-only frames: absolute gain, no LTP scaling.
    case independentlyNoLTPScaling
    /// A frame after one of the same channel in the packet: delta gain.
    case conditionally
}

extension SILKChannelState {
    /// §4.2.7.3 – §4.2.7.7: the side information of one frame, into ``indices``.
    func decodeIndices(_ rd: inout OpusRangeDecoder, frameIndex: Int, lbrr: Bool, coding: SILKConditionalCoding) {
        var ix = indices
        indices.nlsfIndices = []  // moved out, so that ix's is written in place rather than copied
        // §4.2.7.3: frame type and quantisation offset.
        let typeOffset: Int
        if lbrr || vadFlags[frameIndex] {
            typeOffset = rd.decodeICDF(SILKTables.typeOffsetVADICDF, bits: 8) + 2
        } else {
            typeOffset = rd.decodeICDF(SILKTables.typeOffsetNoVADICDF, bits: 8)
        }
        ix.signalType = typeOffset >> 1
        ix.quantOffsetType = typeOffset & 1

        // §4.2.7.4: gains.
        if coding == .conditionally {
            ix.setGainIndex(0, rd.decodeICDF(SILKTables.deltaGainICDF, bits: 8))
        } else {
            let msb = rd.decodeICDF(SILKTables.gainICDF, offset: ix.signalType * 8, count: 8)
            ix.setGainIndex(0, msb << 3 + rd.decodeICDF(SILKTables.uniform8ICDF, bits: 8))
        }
        for k in 1..<subframes {
            ix.setGainIndex(k, rd.decodeICDF(SILKTables.deltaGainICDF, bits: 8))
        }

        // §4.2.7.5.1 – 2: NLSF stage 1 and the stage-2 residuals.
        let cb = nlsfCodebook
        ix.nlsfIndices[0] = rd.decodeICDF(cb.stage1ICDF, offset: (ix.signalType >> 1) * cb.vectors, count: cb.vectors)
        var offsets = SIMD16<Int>()
        var predQ8 = SIMD16<Int32>()
        cb.unpack(ix.nlsfIndices[0], icdfOffsets: &offsets, predictionQ8: &predQ8)
        for i in 0..<cb.order {
            var value = rd.decodeICDF(cb.stage2ICDF, offset: offsets[i], count: 9)
            if value == 0 {
                value -= rd.decodeICDF(SILKTables.nlsfExtICDF, bits: 8)
            } else if value == 8 {
                value += rd.decodeICDF(SILKTables.nlsfExtICDF, bits: 8)
            }
            ix.nlsfIndices[i + 1] = value - 4
        }
        // §4.2.7.5.5: interpolation weight, 20 ms frames only.
        ix.nlsfInterpolationQ2 = subframes == 4 ? rd.decodeICDF(SILKTables.nlsfInterpolationFactorICDF, bits: 8) : 4

        if ix.signalType == 2 {
            // §4.2.7.6.1: pitch lag, absolute or relative to the previous frame's.
            var absolute = true
            if coding == .conditionally && ecPrevSignalType == 2 {
                let delta = rd.decodeICDF(SILKTables.pitchDeltaICDF, bits: 8)
                if delta > 0 {
                    ix.lagIndex = ecPrevLagIndex + delta - 9
                    absolute = false
                }
            }
            if absolute {
                ix.lagIndex = rd.decodeICDF(SILKTables.pitchLagICDF, bits: 8) * (fsKHz >> 1)
                let low: [UInt8] = fsKHz == 16 ? SILKTables.uniform8ICDF
                    : fsKHz == 12 ? SILKTables.uniform6ICDF : SILKTables.uniform4ICDF
                ix.lagIndex += rd.decodeICDF(low, bits: 8)
            }
            ecPrevLagIndex = ix.lagIndex
            let contour: [UInt8] = fsKHz == 8
                ? (subframes == 4 ? SILKTables.pitchContourNBICDF : SILKTables.pitchContour10msNBICDF)
                : (subframes == 4 ? SILKTables.pitchContourICDF : SILKTables.pitchContour10msICDF)
            ix.contourIndex = rd.decodeICDF(contour, bits: 8)
            // §4.2.7.6.2: LTP filter.
            ix.periodicityIndex = rd.decodeICDF(SILKTables.ltpPerIndexICDF, bits: 8)
            let gainTable: [UInt8] = ix.periodicityIndex == 0 ? SILKTables.ltpGainICDF0
                : ix.periodicityIndex == 1 ? SILKTables.ltpGainICDF1 : SILKTables.ltpGainICDF2
            for k in 0..<subframes {
                ix.setLTPIndex(k, rd.decodeICDF(gainTable, bits: 8))
            }
            // §4.2.7.6.3: LTP scaling.
            ix.ltpScaleIndex = coding == .independently ? rd.decodeICDF(SILKTables.ltpScaleICDF, bits: 8) : 0
        }
        ecPrevSignalType = ix.signalType
        // §4.2.7.7: the LCG seed.
        ix.seed = rd.decodeICDF(SILKTables.uniform4ICDF, bits: 8)
        indices = ix
    }

    /// §4.2.7.4 – §4.2.7.6: dequantises the indices into the frame's filter parameters.
    func decodeParameters(_ p: inout SILKFrameParameters, coding: SILKConditionalCoding) {
        // §4.2.7.4: gains, on a log scale, with the first one absolute or relative.
        var prev = lastGainIndex
        for k in 0..<subframes {
            if k == 0 && coding != .conditionally {
                prev = max(indices.gainIndex(0), prev - 16)
            } else {
                let delta = indices.gainIndex(k) - 4
                let threshold = 2 * 36 - 64 + prev
                prev += delta > threshold ? 2 * delta - threshold : delta
            }
            prev = min(max(prev, 0), 63)
            // INV_SCALE_Q16 = 1907825, OFFSET = 2090.
            let logQ7 = min(SILKFixedPoint.smulwb(1_907_825, Int32(prev)) + 2090, 3967)
            p.gainsQ16[k] = SILKFixedPoint.log2lin(logQ7)
        }
        lastGainIndex = prev

        // §4.2.7.5: NLSFs, their interpolation with the previous frame's, and the LPC
        // coefficients.
        let order = lpcOrder
        var nlsf = SIMD16<Int16>()
        SILKNLSF.decode(indices.nlsfIndices, codebook: nlsfCodebook, into: &nlsf)
        SILKNLSF.toLPC(nlsf, order: order, into: &p.lpcQ12[1])
        if firstFrameAfterReset { indices.nlsfInterpolationQ2 = 4 }
        if indices.nlsfInterpolationQ2 < 4 {
            var nlsf0 = SIMD16<Int16>()
            let w = Int32(indices.nlsfInterpolationQ2)
            for i in 0..<order {
                let prevValue = Int32(prevNLSFQ15[i])
                nlsf0[i] = Int16(truncatingIfNeeded: prevValue + ((w * (Int32(nlsf[i]) - prevValue)) >> 2))
            }
            SILKNLSF.toLPC(nlsf0, order: order, into: &p.lpcQ12[0])
        } else {
            // Element by element: sharing the array would copy it at the next frame's write.
            for i in 0..<SILKChannelState.maxLPCOrder { p.lpcQ12[0][i] = p.lpcQ12[1][i] }
        }
        for i in 0..<order { prevNLSFQ15[i] = nlsf[i] }
        // After a loss, a little bandwidth expansion (BWE_AFTER_LOSS_Q16).
        if lossCount > 0 {
            SILKNLSF.bandwidthExpand(&p.lpcQ12[0], order: order, chirpQ16: 63570)
            SILKNLSF.bandwidthExpand(&p.lpcQ12[1], order: order, chirpQ16: 63570)
        }

        if indices.signalType == 2 {
            // §4.2.7.6.1: per-subframe pitch lags from the lag and the contour.
            let contour: [Int8]
            let contourSize: Int
            if fsKHz == 8 {
                contour = subframes == 4 ? SILKTables.cbLagsStage2 : SILKTables.cbLagsStage210ms
                contourSize = subframes == 4 ? 11 : 3
            } else {
                contour = subframes == 4 ? SILKTables.cbLagsStage3 : SILKTables.cbLagsStage310ms
                contourSize = subframes == 4 ? 34 : 12
            }
            let minLag = 2 * fsKHz
            let maxLag = 18 * fsKHz
            let lag = minLag + indices.lagIndex
            let c = min(max(indices.contourIndex, 0), contourSize - 1)
            for k in 0..<subframes {
                p.pitchLags[k] = min(max(lag + Int(contour[k * contourSize + c]), minLag), maxLag)
            }
            // §4.2.7.6.2: LTP taps.
            let codebook: [Int8] = indices.periodicityIndex == 0 ? SILKTables.ltpVQ0
                : indices.periodicityIndex == 1 ? SILKTables.ltpVQ1 : SILKTables.ltpVQ2
            for k in 0..<subframes {
                let row = indices.ltpIndex(k)
                for i in 0..<5 {
                    p.ltpQ14[k * 5 + i] = Int16(codebook[row * 5 + i]) << 7
                }
            }
            p.ltpScaleQ14 = SILKTables.ltpScalesQ14[indices.ltpScaleIndex]
        } else {
            for k in 0..<4 { p.pitchLags[k] = 0 }
            for i in 0..<20 { p.ltpQ14[i] = 0 }
            indices.periodicityIndex = 0
            p.ltpScaleQ14 = 0
        }
    }
}

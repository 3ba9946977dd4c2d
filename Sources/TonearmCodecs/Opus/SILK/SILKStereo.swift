/// Mid/side stereo (RFC 6716 §4.2.7.1 and §4.2.8): the prediction weights from the
/// bitstream, and the unmixing of mid and side into left and right, with the weights
/// interpolated over the first 8 ms and a one-sample delay of mid against side.
struct SILKStereoState {
    var predPrevQ13: (Int32, Int32) = (0, 0)
    /// The last two samples of the previous frame's mid and side.
    var mid: (Int16, Int16) = (0, 0)
    var side: (Int16, Int16) = (0, 0)

    /// §4.2.7.1: the two prediction weights, Q13.
    static func decodePrediction(_ rd: inout OpusRangeDecoder) -> (Int32, Int32) {
        let joint = rd.decodeICDF(SILKTables.stereoPredJointICDF, bits: 8)
        let coarse = (joint / 5, joint - 5 * (joint / 5))
        let a0 = rd.decodeICDF(SILKTables.uniform3ICDF, bits: 8)
        let b0 = rd.decodeICDF(SILKTables.uniform5ICDF, bits: 8)
        let a1 = rd.decodeICDF(SILKTables.uniform3ICDF, bits: 8)
        let b1 = rd.decodeICDF(SILKTables.uniform5ICDF, bits: 8)
        let w0 = weight(a0 + 3 * coarse.0, b0)
        let w1 = weight(a1 + 3 * coarse.1, b1)
        return (w0 - w1, w1)
    }

    /// One weight: `step` of five sub-steps inside interval `interval` of Table 7, Q13.
    private static func weight(_ interval: Int, _ step: Int) -> Int32 {
        let table = SILKTables.stereoPredQuantQ13
        let i = min(interval, 14)
        let low = table[i]
        // 0.5 / 5 in Q16.
        let stepQ13 = SILKFixedPoint.smulwb(table[i + 1] - low, 6554)
        return SILKFixedPoint.smlabb(low, stepQ13, Int32(2 * step + 1))
    }

    /// §4.2.7.2: whether only the mid channel is coded in this frame.
    static func decodeMidOnly(_ rd: inout OpusRangeDecoder) -> Bool {
        rd.decodeICDF(SILKTables.stereoOnlyCodeMidICDF, bits: 8) == 1
    }

    /// §4.2.8: turns `x1` (mid) and `x2` (side) into left and right in place. Both hold
    /// two samples of history at 0 and 1 (filled here) and the frame from 2; the results
    /// for output are at 1 ..< 1 + `length` (one sample late, like mid).
    mutating func unmix(_ x1: UnsafeMutablePointer<Int16>, _ x2: UnsafeMutablePointer<Int16>,
                        prediction: (Int32, Int32), fsKHz: Int, length: Int)
    {
        typealias F = SILKFixedPoint
        x1[0] = mid.0; x1[1] = mid.1
        x2[0] = side.0; x2[1] = side.1
        mid = (x1[length], x1[length + 1])
        side = (x2[length], x2[length + 1])
        var pred0 = predPrevQ13.0
        var pred1 = predPrevQ13.1
        let interpolationLength = 8 * fsKHz
        let denomQ16 = Int32((1 << 16) / interpolationLength)
        let delta0 = F.rshiftRound(F.smulbb(prediction.0 - predPrevQ13.0, denomQ16), 16)
        let delta1 = F.rshiftRound(F.smulbb(prediction.1 - predPrevQ13.1, denomQ16), 16)
        for n in 0..<length {
            if n < interpolationLength {
                pred0 += delta0
                pred1 += delta1
            } else if n == interpolationLength {
                pred0 = prediction.0
                pred1 = prediction.1
            }
            // A low-passed mid (Q11) predicts the side with weight 0, mid itself with 1.
            var sum = ((Int32(x1[n]) + Int32(x1[n + 2])) &+ (Int32(x1[n + 1]) << 1)) << 9
            sum = F.smlawb(Int32(x2[n + 1]) << 8, sum, pred0)
            sum = F.smlawb(sum, Int32(x1[n + 1]) << 11, pred1)
            x2[n + 1] = F.sat16(F.rshiftRound(sum, 8))
        }
        predPrevQ13 = prediction
        for n in 0..<length {
            let m = Int32(x1[n + 1])
            let s = Int32(x2[n + 1])
            x1[n + 1] = F.sat16(m + s)
            x2[n + 1] = F.sat16(m - s)
        }
    }
}

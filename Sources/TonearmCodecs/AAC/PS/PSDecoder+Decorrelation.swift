// Decorrelation (ISO/IEC 14496-3 §8.6.4): the decorrelated signal d is the mono signal
// through a band-dependent filter, attenuated where a transient would smear:
// - the lowest hybrid bands (30 at 10/20 bands, 50 at 34) through a delay of 2 slots, a
//   fractional delay and a chain of 3 all-pass links (delays 3, 4, 5 slots, each with its own
//   fractional delay), whose coefficients decay above band 10 (32) by 0.05 a band;
// - the middle bands (up to 42, 62) through a delay of 14 slots;
// - the highest through a delay of 1 slot.
// The transient detector follows each parameter band's power with a decaying peak; after a
// transient, while the peak decays above the power, it attenuates d by the smoothed power
// over 1.5 × the smoothed excess of the peak, where that is below 1.

extension PSDecoder {
    func decorrelate(_ p: PSParameters) {
        let w = work, is34 = p.is34
        if is34 != p.was34 { w.resetDecorrelator() }
        let bands = PSHybrid.bandCount(is34: is34), parameterBands = is34 ? 34 : 20
        let allpassBands = is34 ? 50 : 30, shortDelayBand = is34 ? 62 : 42, decayStart = is34 ? 32 : 10
        let bandOf = is34 ? PSTables.bandOfHybrid34 : PSTables.bandOfHybrid20
        let s = (re: UnsafePointer(w.leftRe), im: UnsafePointer(w.leftIm))

        // The power of each parameter band, per slot.
        w.power.update(repeating: 0, count: 34 * 32)
        for k in 0..<bands {
            let row = w.power + bandOf[k] * 32
            for n in 0..<32 {
                let re = s.re[k * 32 + n], im = s.im[k * 32 + n]
                row[n] += re * re + im * im
            }
        }
        // The transient detector's gain, per parameter band and slot.
        for i in 0..<parameterBands {
            var peak = w.peakDecay[i], smooth = w.powerSmooth[i], diff = w.diffSmooth[i]
            for n in 0..<32 {
                let power = w.power[i * 32 + n]
                peak = max(PSTables.peakDecay * peak, power)
                smooth += PSTables.smoothing * (power - smooth)
                diff += PSTables.smoothing * (peak - power - diff)
                let denominator = PSTables.transientImpact * diff
                w.transientGain[i * 32 + n] = denominator > smooth ? smooth / denominator : 1
            }
            w.peakDecay[i] = peak
            w.powerSmooth[i] = smooth
            w.diffSmooth[i] = diff
        }

        let phases = is34 ? PSTables.phases34 : PSTables.phases20
        let linkDelay = PSTables.linkDelay
        let span = PSWork.delaySpan, history = span - 32, linkSpan = PSWork.linkSpan
        for k in 0..<bands {
            // The band's delay line: its last 14 slots, then this frame's.
            let dr = w.delayRe + k * span, di = w.delayIm + k * span
            dr.update(from: dr + 32, count: history)
            di.update(from: di + 32, count: history)
            (dr + history).update(from: s.re + k * 32, count: 32)
            (di + history).update(from: s.im + k * 32, count: 32)
            let gain = w.transientGain + bandOf[k] * 32
            let outRe = w.rightRe + k * 32, outIm = w.rightIm + k * 32
            if k >= allpassBands {
                let delay = k < shortDelayBand ? 14 : 1
                for n in 0..<32 {
                    outRe[n] = gain[n] * dr[history + n - delay]
                    outIm[n] = gain[n] * di[history + n - delay]
                }
                continue
            }
            let decay = min(max(1 - 0.05 * Float(k - decayStart), 0), 1)
            let phi = (re: phases[k * 8], im: phases[k * 8 + 1])
            var qRe = SIMD4<Float>(), qIm = qRe, a = qRe
            for m in 0..<3 {
                qRe[m] = phases[k * 8 + 2 + 2 * m]
                qIm[m] = phases[k * 8 + 3 + 2 * m]
                a[m] = PSTables.allpassCoefficient[m] * decay
            }
            let linkRe = w.linkRe + k * 3 * linkSpan, linkIm = w.linkIm + k * 3 * linkSpan
            for m in 0..<3 {
                (linkRe + m * linkSpan).update(from: linkRe + m * linkSpan + 32, count: 5)
                (linkIm + m * linkSpan).update(from: linkIm + m * linkSpan + 32, count: 5)
            }
            for n in 0..<32 {
                let xr = dr[history + n - 2], xi = di[history + n - 2]
                var inRe = xr * phi.re - xi * phi.im
                var inIm = xr * phi.im + xi * phi.re
                for m in 0..<3 {
                    let lRe = linkRe + m * linkSpan, lIm = linkIm + m * linkSpan
                    let at = n + 5 - linkDelay[m]
                    let lr = lRe[at], li = lIm[at]
                    let outR = lr * qRe[m] - li * qIm[m] - a[m] * inRe
                    let outI = lr * qIm[m] + li * qRe[m] - a[m] * inIm
                    lRe[n + 5] = inRe + a[m] * outR
                    lIm[n + 5] = inIm + a[m] * outI
                    inRe = outR
                    inIm = outI
                }
                outRe[n] = gain[n] * inRe
                outIm[n] = gain[n] * inIm
            }
        }
    }
}

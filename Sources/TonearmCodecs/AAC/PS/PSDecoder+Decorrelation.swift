import TonearmCore
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
    /// One frame with the mono hybrid signal in ``PSWork/leftRe`` and ``PSWork/leftIm``
    /// (band-major, all bands), as ``process(inputReal:inputImag:bandLimit:leftReal:leftImag:rightReal:rightImag:)``
    /// would have it from the hybrid analysis.
    func decorrelate(_ p: PSParameters) {
        let w = work, bands = PSHybrid.bandCount(is34: p.is34)
        w.beginFrame(is34: p.is34, was34: p.was34)
        for k in 0..<bands {
            (w.delayRe + k * PSWork.delaySpan + PSWork.history).update(from: w.leftRe + k * 32, count: 32)
            (w.delayIm + k * PSWork.delaySpan + PSWork.history).update(from: w.leftIm + k * 32, count: 32)
        }
        decorrelate(p, top: bands)
    }

    /// The decorrelated signal of the hybrid bands below `top` into ``PSWork/rightRe`` and
    /// ``PSWork/rightIm``, from the delay lines (their frame written, their history advanced).
    func decorrelate(_ p: PSParameters, top: Int) {
        let w = work, is34 = p.is34
        let bands = PSHybrid.bandCount(is34: is34), parameterBands = is34 ? 34 : 20
        let top = min(max(top, 0), bands)
        let allpassBands = is34 ? 50 : 30, shortDelayBand = is34 ? 62 : 42, decayStart = is34 ? 32 : 10
        let bandOf = is34 ? PSTables.bandOfHybrid34 : PSTables.bandOfHybrid20
        let span = PSWork.delaySpan, history = PSWork.history
        let delayRe = w.delayRe + history, delayIm = w.delayIm + history
        let powerRows = w.power, gains = w.transientGain

        // The power of each parameter band, per slot.
        sbrZero(powerRows, 36 * 32)
        bandOf.withUnsafeBufferPointer { bandOf in
            for k in 0..<top {
                let row = powerRows + bandOf[k] * 32
                let re = delayRe + k * span, im = delayIm + k * span
                for n in stride(from: 0, to: 32, by: 8) {
                    let r = loadFloat8(re + n), i = loadFloat8(im + n)
                    storeFloats(loadFloat8(row + n) + (r * r + i * i), row + n)
                }
            }
        }
        // The transient detector's gain, per parameter band and slot: 4 bands at a time, a
        // band a lane (rows 34 and 35 are padding, their power zero).
        let decay = PSTables.peakDecay, smoothing = PSTables.smoothing, impact = PSTables.transientImpact
        for i in stride(from: 0, to: parameterBands, by: 4) {
            var peak = loadFloat4(w.peakDecay + i), smooth = loadFloat4(w.powerSmooth + i), diff = loadFloat4(w.diffSmooth + i)
            let rows = powerRows + i * 32, gain = gains + i * 32
            @inline(__always) func step(_ power: SIMD4<Float>) -> SIMD4<Float> {
                let decayed = decay * peak
                peak = decayed.replacing(with: power, where: power .>= decayed)
                smooth += smoothing * (power - smooth)
                diff += smoothing * (peak - power - diff)
                let denominator = impact * diff
                return (smooth / denominator).replacing(with: 1, where: .!(denominator .> smooth))
            }
            for n in stride(from: 0, to: 32, by: 4) {
                let p = sbrTranspose4(loadFloat4(rows + n), loadFloat4(rows + 32 + n), loadFloat4(rows + 64 + n), loadFloat4(rows + 96 + n))
                let g0 = step(p.0), g1 = step(p.1), g2 = step(p.2), g3 = step(p.3)
                let g = sbrTranspose4(g0, g1, g2, g3)
                storeFloats(g.0, gain + n)
                storeFloats(g.1, gain + 32 + n)
                storeFloats(g.2, gain + 64 + n)
                storeFloats(g.3, gain + 96 + n)
            }
            storeFloats(peak, w.peakDecay + i)
            storeFloats(smooth, w.powerSmooth + i)
            storeFloats(diff, w.diffSmooth + i)
        }

        let outRe = w.rightRe, outIm = w.rightIm
        // The delay-only bands.
        bandOf.withUnsafeBufferPointer { bandOf in
            for k in min(allpassBands, top)..<top {
                let delay = k < shortDelayBand ? 14 : 1
                let gain = gains + bandOf[k] * 32
                let re = delayRe + k * span - delay, im = delayIm + k * span - delay
                for n in stride(from: 0, to: 32, by: 8) {
                    let g = loadFloat8(gain + n)
                    storeFloats(g * loadFloat8(re + n), outRe + k * 32 + n)
                    storeFloats(g * loadFloat8(im + n), outIm + k * 32 + n)
                }
            }
        }

        // The all-pass bands, 4 at a time: each band a lane of the links' rings. Unused lanes
        // read zeros, which keep their rings at zero, and write to a sink.
        let phases = is34 ? PSTables.phases34 : PSTables.phases20
        let allpassTop = min(allpassBands, top)
        let linkRe = w.linkRe, linkIm = w.linkIm
        let a = PSTables.allpassCoefficient
        precondition(phases.count >= allpassBands * 8 && bandOf.count >= allpassBands)
        for k0 in stride(from: 0, to: allpassTop, by: 4) {
            var phiRe = SIMD4<Float>(), phiIm = phiRe
            var q0Re = phiRe, q0Im = phiRe, q1Re = phiRe, q1Im = phiRe, q2Re = phiRe, q2Im = phiRe
            var a0 = phiRe, a1 = phiRe, a2 = phiRe
            for lane in 0..<min(4, allpassTop - k0) {
                let k = k0 + lane, t = k * 8
                let attenuation = min(max(1 - 0.05 * Float(k - decayStart), 0), 1)
                phiRe[lane] = phases[t]; phiIm[lane] = phases[t + 1]
                q0Re[lane] = phases[t + 2]; q0Im[lane] = phases[t + 3]
                q1Re[lane] = phases[t + 4]; q1Im[lane] = phases[t + 5]
                q2Re[lane] = phases[t + 6]; q2Im[lane] = phases[t + 7]
                a0[lane] = a[0] * attenuation; a1[lane] = a[1] * attenuation; a2[lane] = a[2] * attenuation
            }
            // Per lane: the input (the link chain follows a delay of 2 slots), the gain and the output.
            let zeros = UnsafePointer(w.zeros), sink = w.sink
            func input(_ k: Int, _ base: UnsafeMutablePointer<Float>) -> UnsafePointer<Float> {
                k < allpassTop ? UnsafePointer(base + k * span - 2) : zeros
            }
            func gain(_ k: Int) -> UnsafePointer<Float> { k < allpassTop ? UnsafePointer(gains + bandOf[k] * 32) : zeros }
            func output(_ k: Int, _ base: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float> {
                k < allpassTop ? base + k * 32 : sink
            }
            let (x0, x1, x2, x3) = (input(k0, delayRe), input(k0 + 1, delayRe), input(k0 + 2, delayRe), input(k0 + 3, delayRe))
            let (y0, y1, y2, y3) = (input(k0, delayIm), input(k0 + 1, delayIm), input(k0 + 2, delayIm), input(k0 + 3, delayIm))
            let (g0, g1, g2, g3) = (gain(k0), gain(k0 + 1), gain(k0 + 2), gain(k0 + 3))
            let (r0, r1, r2, r3) = (output(k0, outRe), output(k0 + 1, outRe), output(k0 + 2, outRe), output(k0 + 3, outRe))
            let (i0, i1, i2, i3) = (output(k0, outIm), output(k0 + 1, outIm), output(k0 + 2, outIm), output(k0 + 3, outIm))
            let ring = k0 / 4 * PSWork.linkEntries
            let ring0 = ring + PSWork.linkOffset[0], ring1 = ring + PSWork.linkOffset[1], ring2 = ring + PSWork.linkOffset[2]
            /// Slot n of the 4 bands: the input after the 2-slot delay, the output before the
            /// gain. Link m reads its line `delay` slots back (entry n) and writes slot n.
            @inline(__always) func chain(_ n: Int, _ xr: SIMD4<Float>, _ xi: SIMD4<Float>) -> (SIMD4<Float>, SIMD4<Float>) {
                // Link m, its line `delay` slots long: out = Q·line − a·in; the line takes in + a·out.
                @inline(__always) func link(_ ring: Int, _ delay: Int, _ qRe: SIMD4<Float>, _ qIm: SIMD4<Float>, _ a: SIMD4<Float>,
                                            _ sRe: SIMD4<Float>, _ sIm: SIMD4<Float>) -> (SIMD4<Float>, SIMD4<Float>) {
                    let lr = linkRe[ring + n], li = linkIm[ring + n]
                    let oRe = lr * qRe - li * qIm - a * sRe
                    let oIm = lr * qIm + li * qRe - a * sIm
                    linkRe[ring + delay + n] = sRe + a * oRe
                    linkIm[ring + delay + n] = sIm + a * oIm
                    return (oRe, oIm)
                }
                let s = (xr * phiRe - xi * phiIm, xr * phiIm + xi * phiRe)
                let o0 = link(ring0, 3, q0Re, q0Im, a0, s.0, s.1)
                let o1 = link(ring1, 4, q1Re, q1Im, a1, o0.0, o0.1)
                return link(ring2, 5, q2Re, q2Im, a2, o1.0, o1.1)
            }
            // 4 slots at a time: the bands' rows transposed into one vector a slot, and back.
            var n = 0
            while n < 32 {
                let xr = sbrTranspose4(loadFloat4(x0 + n), loadFloat4(x1 + n), loadFloat4(x2 + n), loadFloat4(x3 + n))
                let xi = sbrTranspose4(loadFloat4(y0 + n), loadFloat4(y1 + n), loadFloat4(y2 + n), loadFloat4(y3 + n))
                let g = sbrTranspose4(loadFloat4(g0 + n), loadFloat4(g1 + n), loadFloat4(g2 + n), loadFloat4(g3 + n))
                let s0 = chain(n, xr.0, xi.0), s1 = chain(n + 1, xr.1, xi.1)
                let s2 = chain(n + 2, xr.2, xi.2), s3 = chain(n + 3, xr.3, xi.3)
                let dr = sbrTranspose4(g.0 * s0.0, g.1 * s1.0, g.2 * s2.0, g.3 * s3.0)
                let di = sbrTranspose4(g.0 * s0.1, g.1 * s1.1, g.2 * s2.1, g.3 * s3.1)
                storeFloats(dr.0, r0 + n); storeFloats(dr.1, r1 + n); storeFloats(dr.2, r2 + n); storeFloats(dr.3, r3 + n)
                storeFloats(di.0, i0 + n); storeFloats(di.1, i1 + n); storeFloats(di.2, i2 + n); storeFloats(di.3, i3 + n)
                n += 4
            }
            // The last slots become the lines' history.
            for i in 0..<3 {
                linkRe[ring0 + i] = linkRe[ring0 + 32 + i]
                linkIm[ring0 + i] = linkIm[ring0 + 32 + i]
            }
            for i in 0..<4 {
                linkRe[ring1 + i] = linkRe[ring1 + 32 + i]
                linkIm[ring1 + i] = linkIm[ring1 + 32 + i]
            }
            for i in 0..<5 {
                linkRe[ring2 + i] = linkRe[ring2 + 32 + i]
                linkIm[ring2 + i] = linkIm[ring2 + 32 + i]
            }
        }
    }
}

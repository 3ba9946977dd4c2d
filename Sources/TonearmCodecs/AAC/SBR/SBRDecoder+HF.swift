import TonearmCore
import Foundation

// HF generation (ISO/IEC 14496-3 §4.6.18.6) and HF adjustment (§4.6.18.7). Time runs in QMF
// slots of the frame's output: slot i of X_Low and X_High is at index i + t_HFAdj (= 2) of a
// band's 40, so the previous frame's last 8 analysis slots are indices 0…7 and this frame's
// analysis starts at index 8 (t_HFGen).

extension SBRDecoder {
    /// §4.6.18.6: the LPC of each low band, the chirp factors, and the patches that copy the
    /// filtered low band up to k_x…k_x + M of X_High, over the frame's envelopes.
    func generateHighBand(_ c: SBRChannel, _ t: SBRFrequencyTables) {
        let s = scratch
        let xr = s.lowReal, xi = s.lowImag
        let a0 = s.alpha0, a1 = s.alpha1

        // Covariance-method prediction of order 2 per low band (§4.6.18.6.2):
        // φ(i, j) = Σ_{n<38} X(n + 2 − i)·X*(n + 2 − j), summed 8 bands at a time (a band a
        // lane, each in the order of n) over X_Low transposed to slot-major (32 bands a slot).
        let lowBands = min(max(t.k0, 0), 32), groups = (lowBands + 7) / 8
        let tr = s.lowSlotReal, ti = s.lowSlotImag
        for k in stride(from: 0, to: groups * 8, by: 4) {
            for l in stride(from: 0, to: 40, by: 4) {
                sbrTransposeBlock(xr + k * 40 + l, 40, tr + l * 32 + k, 32)
                sbrTransposeBlock(xi + k * 40 + l, 40, ti + l * 32 + k, 32)
            }
        }
        let sums = s.covariance
        for group in 0..<groups {
            let r = tr + group * 8, q = ti + group * 8
            func x(_ n: Int) -> (SIMD8<Float>, SIMD8<Float>) { (loadFloat8(r + n * 32), loadFloat8(q + n * 32)) }
            // The sums over n = 1…37 that the terms share, then each term's ends.
            var e = SIMD8<Float>(), cr = e, ci = e, r02r = e, r02i = e
            var (r0, q0) = x(0), (r1, q1) = x(1)
            for n in 0..<38 {
                let (r2, q2) = x(n + 2)
                if n > 0 {
                    e += r0 * r0 + q0 * q0
                    // X(n+1)·X*(n)
                    cr += r1 * r0 + q1 * q0
                    ci += q1 * r0 - r1 * q0
                }
                r02r += r2 * r0 + q2 * q0
                r02i += q2 * r0 - r2 * q0
                (r0, q0, r1, q1) = (r1, q1, r2, q2)
            }
            let (xr0, xi0) = x(0), (xr1, xi1) = x(1), (xr38, xi38) = x(38), (xr39, xi39) = x(39)
            // φ(1,1), φ(2,2), φ(1,2), φ(0,1), φ(0,2), real and imaginary parts, 8 bands a row.
            let row = sums + group * 64
            storeFloats(e + xr38 * xr38 + xi38 * xi38, row)
            storeFloats(e + xr0 * xr0 + xi0 * xi0, row + 8)
            storeFloats(cr + xr1 * xr0 + xi1 * xi0, row + 16)
            storeFloats(ci + xi1 * xr0 - xr1 * xi0, row + 24)
            storeFloats(cr + xr39 * xr38 + xi39 * xi38, row + 32)
            storeFloats(ci + xi39 * xr38 - xr39 * xi38, row + 40)
            storeFloats(r02r, row + 48)
            storeFloats(r02i, row + 56)
        }
        for k in 0..<lowBands {
            let at = (k / 8 * 8) * 8 + k % 8
            let r11 = sums[at], r22 = sums[at + 8], r12r = sums[at + 16], r12i = sums[at + 24]
            let r01r = sums[at + 32], r01i = sums[at + 40], r02r = sums[at + 48], r02i = sums[at + 56]
            let d = r22 * r11 - (r12r * r12r + r12i * r12i) / 1.000001
            var b1r: Float = 0, b1i: Float = 0, b0r: Float = 0, b0i: Float = 0
            if d != 0 {
                // α1 = (φ(0,1)·φ(1,2) − φ(0,2)·φ(1,1)) / d
                b1r = (r01r * r12r - r01i * r12i - r02r * r11) / d
                b1i = (r01r * r12i + r01i * r12r - r02i * r11) / d
            }
            if r11 != 0 {
                // α0 = −(φ(0,1) + α1·φ*(1,2)) / φ(1,1)
                b0r = -(r01r + b1r * r12r + b1i * r12i) / r11
                b0i = -(r01i + b1i * r12r - b1r * r12i) / r11
            }
            if b0r * b0r + b0i * b0i >= 16 || b1r * b1r + b1i * b1i >= 16 {
                b0r = 0; b0i = 0; b1r = 0; b1i = 0
            }
            a0[2 * k] = b0r; a0[2 * k + 1] = b0i
            a1[2 * k] = b1r; a1[2 * k + 1] = b1i
        }

        // Chirp factors per noise band from bs_invf_mode, smoothed against the previous frame's.
        for i in 0..<t.noiseCount {
            let mode = c.invf[i], previous = c.previousInvf[i]
            let target: Float
            switch mode {
            case 0: target = previous == 1 ? 0.6 : 0
            case 1: target = previous == 0 ? 0.6 : 0.75
            case 2: target = 0.9
            default: target = 0.98
            }
            let old = c.bandwidth[i]
            var bw = target < old ? 0.75 * target + 0.25 * old : 0.90625 * target + 0.09375 * old
            if bw < 0.015625 { bw = 0 }
            c.bandwidth[i] = bw
        }

        let hr = s.highReal, hi = s.highImag
        let start = 2 * c.borders[0] + 2, end = 2 * c.borders[c.envelopeCount] + 2
        var k = t.kx
        var g = 0
        for (p0, count) in zip(t.patchStart, t.patchCount) {
            for x in 0..<count {
                let p = p0 + x
                while g < t.noiseCount && k >= t.noise[g + 1] { g += 1 }
                let bw = c.bandwidth[g]
                let c1r = a1[2 * p] * bw * bw, c1i = a1[2 * p + 1] * bw * bw
                let c0r = a0[2 * p] * bw, c0i = a0[2 * p + 1] * bw
                let lr = xr + p * 40, li = xi + p * 40
                let outR = hr + k * 40, outI = hi + k * 40
                var l = start
                while l + 8 <= end {
                    let r0 = loadFloat8(lr + l), r1 = loadFloat8(lr + l - 1), r2 = loadFloat8(lr + l - 2)
                    let i0 = loadFloat8(li + l), i1 = loadFloat8(li + l - 1), i2 = loadFloat8(li + l - 2)
                    storeFloats(r0 + c0r * r1 - c0i * i1 + c1r * r2 - c1i * i2, outR + l)
                    storeFloats(i0 + c0r * i1 + c0i * r1 + c1r * i2 + c1i * r2, outI + l)
                    l += 8
                }
                while l < end {
                    outR[l] = lr[l] + c0r * lr[l - 1] - c0i * li[l - 1] + c1r * lr[l - 2] - c1i * li[l - 2]
                    outI[l] = li[l] + c0r * li[l - 1] + c0i * lr[l - 1] + c1r * li[l - 2] + c1i * lr[l - 2]
                    l += 1
                }
                k += 1
            }
        }
        // Bands no patch reaches stay empty.
        for band in k..<t.kx + t.m {
            (hr + band * 40).update(repeating: 0, count: 40)
            (hi + band * 40).update(repeating: 0, count: 40)
        }
    }

    /// §4.6.18.7: the envelope and noise data mapped to QMF bands, the energy X_High has, the
    /// limited and boosted gains, and the assembly of Y (gains smoothed over time, noise and
    /// sinusoids added) into `yr`, `yi`.
    func adjustHighBand(_ c: SBRChannel, _ t: SBRFrequencyTables, into yr: UnsafeMutablePointer<Float>,
                        _ yi: UnsafeMutablePointer<Float>) {
        let s = scratch
        let kx = t.kx, m = t.m
        let envelopes = c.envelopeCount
        let hr = s.highReal, hi = s.highImag
        // The channel's and the tables' arrays as locals, the flags' taken out of their owners
        // while in use: their accesses are then not checked one at a time.
        let borders = c.borders, resolution = c.resolution, envelope = c.envelope, noise = c.noise
        let noiseBorders = c.noiseBorders, addHarmonic = c.addHarmonic
        let high = t.high, low = t.low, noiseTable = t.noise, limiter = t.limiter
        var sineIndexMapped = [Bool](), sineMapped = [Bool](), previousSineMapped = [Bool]()
        swap(&sineIndexMapped, &s.sineIndexMapped)
        swap(&sineMapped, &s.sineMapped)
        swap(&previousSineMapped, &c.previousSineMapped)
        defer {
            swap(&sineIndexMapped, &s.sineIndexMapped)
            swap(&sineMapped, &s.sineMapped)
            swap(&previousSineMapped, &c.previousSineMapped)
        }

        // Mapping (§4.6.18.7.2).
        for i in 0..<64 { sineIndexMapped[i] = previousSineMapped[i] }
        for i in 64..<6 * 64 { sineIndexMapped[i] = false }
        for l in 0..<envelopes {
            let table = resolution[l + 1] == 1 ? high : low
            let row = l * 64
            for i in 0..<table.count - 1 {
                for band in table[i]..<table[i + 1] { s.origMapped[row + band - kx] = envelope[row + i] }
            }
            let floor = c.noiseCount > 1 && borders[l] >= noiseBorders[1] ? 1 : 0
            for i in 0..<t.noiseCount {
                for band in noiseTable[i]..<noiseTable[i + 1] { s.noiseMapped[row + band - kx] = noise[floor * 5 + i] }
            }
            // A sinusoid sits in the middle band of its high-resolution band; it starts at the
            // transient envelope unless the previous frame already had it.
            if c.addHarmonicFlag {
                for i in 0..<t.highCount {
                    let middle = (high[i] + high[i + 1]) / 2 - kx
                    sineIndexMapped[(l + 1) * 64 + middle] = addHarmonic[i]
                        && (l >= c.transient || sineIndexMapped[middle])
                }
            }
            for i in 0..<table.count - 1 {
                var present = false
                for band in table[i]..<table[i + 1] where sineIndexMapped[(l + 1) * 64 + band - kx] {
                    present = true
                }
                for band in table[i]..<table[i + 1] { sineMapped[row + band - kx] = present }
            }
        }
        for i in 0..<64 { previousSineMapped[i] = sineIndexMapped[envelopes * 64 + i] }

        // The energy of X_High per envelope (§4.6.18.7.3), per QMF band or per band of the
        // envelope's resolution.
        for l in 0..<envelopes {
            let lo = 2 * borders[l] + 2, hiSlot = 2 * borders[l + 1] + 2
            let row = l * 64
            if header?.interpolateFrequency ?? 1 == 1 {
                let scale = 0.5 / Float(borders[l + 1] - borders[l])
                for band in 0..<m {
                    let r = hr + (band + kx) * 40, q = hi + (band + kx) * 40
                    // 8 slots a vector, then one at a time.
                    var i = lo, partial = SIMD8<Float>()
                    while i + 8 <= hiSlot {
                        let x = loadFloat8(r + i), y = loadFloat8(q + i)
                        partial += x * x + y * y
                        i += 8
                    }
                    var sum = partial.sum()
                    while i < hiSlot {
                        sum += r[i] * r[i] + q[i] * q[i]
                        i += 1
                    }
                    s.current[row + band] = sum * scale
                }
            } else {
                let table = resolution[l + 1] == 1 ? high : low
                for p in 0..<table.count - 1 {
                    var sum: Float = 0
                    for band in table[p]..<table[p + 1] {
                        let r = hr + band * 40, q = hi + band * 40
                        for i in lo..<hiSlot { sum += r[i] * r[i] + q[i] * q[i] }
                    }
                    sum /= Float(2 * (borders[l + 1] - borders[l]) * (table[p + 1] - table[p]))
                    for band in table[p]..<table[p + 1] { s.current[row + band - kx] = sum }
                }
            }
        }

        // Gains (§4.6.18.7.4): per limiter band, the gains are capped at the limiter's
        // multiple of the band's mean gain, then all raised together (at most 4 dB) to keep
        // the band's energy.
        let maxGain = Self.limiterGains[header?.limiterGains ?? 2]
        for l in 0..<envelopes {
            let row = l * 64
            // Bands past the last limiter band (above the last patch) stay silent.
            (s.gain + row).update(repeating: 0, count: 64)
            (s.noiseLevel + row).update(repeating: 0, count: 64)
            (s.sineLevel + row).update(repeating: 0, count: 64)
            let noisy: Float = l == c.transient || l == c.previousTransient ? 0 : 1
            for b in 0..<t.limiterCount {
                let lo = limiter[b] - kx, hiBand = limiter[b + 1] - kx
                var sumOrig: Float = 0, sumCurr: Float = 0
                for band in lo..<hiBand {
                    let i = row + band
                    let e = s.origMapped[i], q = s.noiseMapped[i]
                    let share = e / (1 + q)
                    s.noiseLevel[i] = (share * q).squareRoot()
                    s.sineLevel[i] = sineIndexMapped[(l + 1) * 64 + band] ? share.squareRoot() : 0
                    if sineMapped[i] {
                        s.gain[i] = (e * q / ((1 + s.current[i]) * (1 + q))).squareRoot()
                    } else {
                        s.gain[i] = (e / ((1 + s.current[i]) * (1 + q * noisy))).squareRoot()
                    }
                    s.gain[i] += .leastNormalMagnitude
                    sumOrig += e
                    sumCurr += s.current[i]
                }
                let cap = min(100_000, maxGain * ((Float.ulpOfOne + sumOrig) / (Float.ulpOfOne + sumCurr)).squareRoot())
                for band in lo..<hiBand {
                    let i = row + band
                    s.noiseLevel[i] = min(s.noiseLevel[i], s.noiseLevel[i] * cap / s.gain[i])
                    s.gain[i] = min(s.gain[i], cap)
                }
                var sumAdjusted: Float = 0
                for band in lo..<hiBand {
                    let i = row + band
                    sumAdjusted += s.current[i] * s.gain[i] * s.gain[i] + s.sineLevel[i] * s.sineLevel[i]
                    if noisy != 0 && s.sineLevel[i] == 0 { sumAdjusted += s.noiseLevel[i] * s.noiseLevel[i] }
                }
                let boost = min(1.584893192, ((Float.ulpOfOne + sumOrig) / (Float.ulpOfOne + sumAdjusted)).squareRoot())
                for band in lo..<hiBand {
                    let i = row + band
                    s.gain[i] *= boost
                    s.noiseLevel[i] *= boost
                    s.sineLevel[i] *= boost
                }
            }
        }

        assemble(c, t, into: yr, yi)
    }

    /// §4.6.18.7.5: Y = X_High × the gains (smoothed over the last 4 slots with h_smooth
    /// outside transients when bs_smoothing_mode is 0), plus noise from table V, or a sinusoid
    /// whose phase turns a quarter each slot.
    private func assemble(_ c: SBRChannel, _ t: SBRFrequencyTables, into yr: UnsafeMutablePointer<Float>,
                          _ yi: UnsafeMutablePointer<Float>) {
        let s = scratch
        let kx = t.kx, m = t.m
        let smoothing = (header?.smoothingMode ?? 1) == 0 ? 4 : 0
        let gh = c.gainHistory, qh = c.noiseHistory
        let first = 2 * c.borders[0]
        sbrZero(yr, 38 * 64)
        sbrZero(yi, 38 * 64)

        // The 4 slots before this frame's first: the previous frame's last, or after a reset
        // this frame's first gains.
        if reset {
            for i in 0..<smoothing {
                for band in 0..<m {
                    gh[(first + i) * 64 + band] = s.gain[band]
                    qh[(first + i) * 64 + band] = s.noiseLevel[band]
                }
            }
        } else if smoothing > 0 {
            let from = 2 * c.previousEnd
            for i in 0..<4 where from + i < SBRChannel.historyRows {
                (gh + (first + i) * 64).update(from: gh + (from + i) * 64, count: 64)
                (qh + (first + i) * 64).update(from: qh + (from + i) * 64, count: 64)
            }
        }
        for l in 0..<c.envelopeCount {
            for i in 2 * c.borders[l]..<2 * c.borders[l + 1] {
                (gh + (smoothing + i) * 64).update(from: s.gain + l * 64, count: m)
                (qh + (smoothing + i) * 64).update(from: s.noiseLevel + l * 64, count: m)
            }
        }

        var noiseIndex = c.noiseIndex, sineIndex = c.sineIndex
        let gFilt = s.filteredGain, qFilt = s.filteredNoise
        let hSmooth = Self.smoothing

        // X_High of bands k_x … k_x + M − 1, slot-major (64 bands a slot, from band k_x), so
        // that each slot's bands are contiguous.
        let xr = s.highSlotReal, xi = s.highSlotImag
        var band = 0
        while band + 4 <= m {
            for l in stride(from: 0, to: 40, by: 4) {
                sbrTransposeBlock(s.highReal + (kx + band) * 40 + l, 40, xr + l * 64 + band, 64)
                sbrTransposeBlock(s.highImag + (kx + band) * 40 + l, 40, xi + l * 64 + band, 64)
            }
            band += 4
        }
        for band in band..<m {
            for l in 0..<40 {
                xr[l * 64 + band] = s.highReal[(kx + band) * 40 + l]
                xi[l * 64 + band] = s.highImag[(kx + band) * 40 + l]
            }
        }

        Self.noiseReal.withUnsafeBufferPointer { noiseReal in
        Self.noiseImag.withUnsafeBufferPointer { noiseImag in
        for l in 0..<c.envelopeCount {
            let transient = l == c.transient || l == c.previousTransient
            let sines = s.sineLevel + l * 64
            var anySine = false
            for band in 0..<m where sines[band] != 0 { anySine = true }
            for i in 2 * c.borders[l]..<2 * c.borders[l + 1] {
                let g: UnsafePointer<Float>, q: UnsafePointer<Float>
                if smoothing > 0 && !transient {
                    // 8 bands a vector, then one at a time; the taps in the same order.
                    var band = 0
                    while band + 8 <= m {
                        var g = SIMD8<Float>(), q = g
                        for j in 0...smoothing {
                            g += loadFloat8(gh + (i + smoothing - j) * 64 + band) * hSmooth[j]
                            q += loadFloat8(qh + (i + smoothing - j) * 64 + band) * hSmooth[j]
                        }
                        storeFloats(g, gFilt + band)
                        storeFloats(q, qFilt + band)
                        band += 8
                    }
                    while band < m {
                        var g: Float = 0, q: Float = 0
                        for j in 0...smoothing {
                            g += gh[(i + smoothing - j) * 64 + band] * hSmooth[j]
                            q += qh[(i + smoothing - j) * 64 + band] * hSmooth[j]
                        }
                        gFilt[band] = g
                        qFilt[band] = q
                        band += 1
                    }
                    (g, q) = (UnsafePointer(gFilt), UnsafePointer(qFilt))
                } else {
                    (g, q) = (UnsafePointer(gh + (i + smoothing) * 64), UnsafePointer(qh + (i + smoothing) * 64))
                }
                // X_High at slot i is at slot i + t_HFAdj.
                let outR = yr + i * 64 + kx, outI = yi + i * 64 + kx
                let inR = xr + (i + 2) * 64, inI = xi + (i + 2) * 64
                // The noise of band k is entry f_IndexNoise + k + 1 (the tables run on past
                // 512 so that a slot's entries are contiguous).
                let nr = noiseReal.baseAddress! + ((noiseIndex + 1) & 511), ni = noiseImag.baseAddress! + ((noiseIndex + 1) & 511)
                let noisy = !transient && !anySine
                var band = 0
                while band + 8 <= m {
                    let gain = loadFloat8(g + band)
                    var r = loadFloat8(inR + band) * gain, im = loadFloat8(inI + band) * gain
                    if noisy {
                        let level = loadFloat8(q + band)
                        r += level * loadFloat8(nr + band)
                        im += level * loadFloat8(ni + band)
                    }
                    storeFloats(r, outR + band)
                    storeFloats(im, outI + band)
                    band += 8
                }
                while band < m {
                    outR[band] = inR[band] * g[band]
                    outI[band] = inI[band] * g[band]
                    if noisy {
                        outR[band] += q[band] * nr[band]
                        outI[band] += q[band] * ni[band]
                    }
                    band += 1
                }
                if !noisy {
                    // φ_Sin = 1, i, −1, −i; the imaginary part alternates in sign with the band.
                    let sineRe: Float = sineIndex == 0 ? 1 : sineIndex == 2 ? -1 : 0
                    let sineIm: Float = sineIndex == 1 ? 1 : sineIndex == 3 ? -1 : 0
                    var sign: Float = (kx & 1) == 0 ? 1 : -1
                    for band in 0..<m {
                        if sines[band] != 0 {
                            outR[band] += sines[band] * sineRe
                            outI[band] += sines[band] * sineIm * sign
                        } else if !transient {
                            outR[band] += q[band] * nr[band]
                            outI[band] += q[band] * ni[band]
                        }
                        sign = -sign
                    }
                }
                noiseIndex = (noiseIndex + m) & 511
                sineIndex = (sineIndex + 1) & 3
            }
        }
        }
        }
        c.noiseIndex = noiseIndex
        c.sineIndex = sineIndex
    }

    /// Table V (§4.6.18.8.2), real and imaginary parts apart, each run on by 64 entries
    /// from its start so that 64 consecutive entries from any index are contiguous.
    static let noiseReal: [Float] = (0..<(512 + 64)).map { SBRTables.noise[2 * ($0 & 511)] }
    static let noiseImag: [Float] = (0..<(512 + 64)).map { SBRTables.noise[2 * ($0 & 511) + 1] }

    /// The limiter's ceiling on a band's gain over the limiter band's mean, by
    /// bs_limiter_gains: −3, 0, +3 dB and none (§4.6.18.7.4).
    static let limiterGains: [Float] = [0.70795, 1.0, 1.41254, 10_000_000_000]
    /// h_smooth, the gain smoothing filter over the current slot and the 4 before (§4.6.18.7.5).
    static let smoothing: [Float] = [0.33333333333333, 0.30150283239582, 0.21816949906249, 0.11516383427084, 0.03183050093751]
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Pitch-based concealment of a lost CELT frame (RFC 6716 §4.4, after the reference
/// decoder's behaviour): the last pitch period of the output's LPC excitation, repeated and
/// decaying, through the LPC synthesis filter, its energy kept below the original's; the
/// part past the frame is pre-filtered and folded so the next frame's MDCT overlaps it.
extension CELTDecoder {
    static let lpcOrder = 24
    static let maxPeriod = 1024
    static let minPitch = 100
    static let maxPitch = 720

    /// A pitch period (100 … 720 samples) of the history: the lag of the largest normalised
    /// correlation of the last 1328 samples, searched on a 2:1 low-passed copy and refined.
    func searchPitch() -> Int {
        let half = Self.bufferSize / 2
        var lp = [Float](repeating: 0, count: half)
        for ch in 0..<channels {
            let h = channelHistory(ch)
            for i in 1..<half { lp[i] += 0.25 * h[2 * i - 1] + 0.5 * h[2 * i] + 0.25 * h[2 * i + 1] }
            lp[0] += 0.5 * h[0] + 0.25 * h[1]
        }
        let length = (Self.bufferSize - Self.maxPitch) / 2
        let targetStart = half - length
        var best = Self.minPitch / 2
        var bestScore: Float = -1
        lp.withUnsafeBufferPointer { x in
            for d in (Self.minPitch / 2)...(Self.maxPitch / 2) {
                var xy: Float = 0, yy: Float = 1
                for i in 0..<length {
                    let y = x[targetStart - d + i]
                    xy += x[targetStart + i] * y
                    yy += y * y
                }
                if xy > 0 {
                    let score = xy * xy / yy
                    if score > bestScore { bestScore = score; best = d }
                }
            }
        }
        // Refine at the full rate around 2·d.
        var pitch = 2 * best
        var refined: Float = -.infinity
        let n = Self.bufferSize - Self.maxPitch
        for lag in max(Self.minPitch, 2 * best - 1)...min(Self.maxPitch, 2 * best + 1) {
            var xy: Float = 0, yy: Float = 1
            for ch in 0..<channels {
                let h = channelHistory(ch)
                for i in (Self.bufferSize - n)..<Self.bufferSize {
                    xy += h[i] * h[i - lag]
                    yy += h[i - lag] * h[i - lag]
                }
            }
            let score = xy > 0 ? xy * xy / yy : -yy
            if score > refined { refined = score; pitch = lag }
        }
        return pitch
    }

    /// Levinson–Durbin on `ac` (order + 1 lags): A(z) = 1 + Σ lpc[k]·z^−(k+1).
    static func levinson(_ ac: [Float], into lpc: UnsafeMutablePointer<Float>, order: Int) {
        for k in 0..<order { lpc[k] = 0 }
        var error = ac[0]
        guard error > 0 else { return }
        for i in 0..<order {
            var rr: Float = 0
            for j in 0..<i { rr += lpc[j] * ac[i - j] }
            rr += ac[i + 1]
            let r = -rr / error
            lpc[i] = r
            for j in 0..<((i + 1) >> 1) {
                let a = lpc[j], b = lpc[i - 1 - j]
                lpc[j] = a + r * b
                lpc[i - 1 - j] = b + r * a
            }
            error -= r * r * error
            if error < 0.001 * ac[0] { break }
        }
    }

    func concealPeriodically(frameSize n: Int) {
        let overlap = CELTTables.overlap
        let order = Self.lpcOrder, maxPeriod = Self.maxPeriod
        var fade: Float = 1
        if !lastConcealmentWasPeriodic {
            concealmentPitch = searchPitch()
        } else {
            fade = 0.8
        }
        let pitch = concealmentPitch
        let excLength = min(2 * pitch, maxPeriod)
        var exc = [Float](repeating: 0, count: maxPeriod + order)
        var fir = [Float](repeating: 0, count: excLength)
        let window = CELTTables.window
        for ch in 0..<channels {
            let buf = channelHistory(ch)
            for i in 0..<(maxPeriod + order) { exc[i] = buf[Self.bufferSize - maxPeriod - order + i] }
            let lpc = UnsafeMutablePointer<Float>.allocate(capacity: order)
            defer { lpc.deallocate() }
            if !lastConcealmentWasPeriodic {
                // LPC of the last 1024 samples, windowed at both ends, with a -40 dB noise
                // floor and lag windowing.
                var xx = Array(exc[order..<(order + maxPeriod)])
                for i in 0..<overlap {
                    xx[i] *= window[i]
                    xx[maxPeriod - 1 - i] *= window[i]
                }
                var ac = [Float](repeating: 0, count: order + 1)
                for k in 0...order {
                    var sum: Float = 0
                    for i in k..<maxPeriod { sum += xx[i] * xx[i - k] }
                    ac[k] = sum
                }
                ac[0] *= 1.0001
                for i in 1...order { ac[i] -= ac[i] * (0.008 * 0.008) * Float(i * i) }
                Self.levinson(ac, into: lpc, order: order)
                for k in 0..<order { concealmentLPC[ch * order + k] = lpc[k] }
            } else {
                for k in 0..<order { lpc[k] = concealmentLPC[ch * order + k] }
            }
            // The excitation of the last excLength samples (the FIR inverse filter).
            let first = order + maxPeriod - excLength
            for i in 0..<excLength {
                var sum = exc[first + i]
                for k in 0..<order { sum += lpc[k] * exc[first + i - k - 1] }
                fir[i] = sum
            }
            for i in 0..<excLength { exc[first + i] = fir[i] }
            // Decaying? Compare the energies of its last two halves.
            var e1: Float = 1, e2: Float = 1
            let decayLength = excLength >> 1
            for i in 0..<decayLength {
                let a = exc[order + maxPeriod - decayLength + i]
                e1 += a * a
                let b = exc[order + maxPeriod - 2 * decayLength + i]
                e2 += b * b
            }
            e1 = min(e1, e2)
            let decay = sqrtf(e1 / e2)
            buf.update(from: buf + n, count: Self.bufferSize - n)
            let offset = maxPeriod - pitch
            let extrapolation = n + overlap
            var attenuation = fade * decay
            var s1: Float = 0
            var j = 0
            for i in 0..<extrapolation {
                if j >= pitch {
                    j -= pitch
                    attenuation *= decay
                }
                buf[Self.bufferSize - n + i] = attenuation * exc[order + offset + j]
                let t = buf[Self.bufferSize - maxPeriod - n + offset + j]
                s1 += t * t
                j += 1
            }
            // The LPC synthesis filter, continuing from the last decoded samples.
            var memory = [Float](repeating: 0, count: order)
            for i in 0..<order { memory[i] = buf[Self.bufferSize - n - 1 - i] }
            let out = buf + Self.bufferSize - n
            for i in 0..<extrapolation {
                var sum = out[i]
                for k in 0..<order { sum -= lpc[k] * memory[k] }
                for k in stride(from: order - 1, to: 0, by: -1) { memory[k] = memory[k - 1] }
                memory[0] = sum
                out[i] = sum
            }
            var s2: Float = 0
            for i in 0..<extrapolation { s2 += out[i] * out[i] }
            if !(s1 > 0.2 * s2) {
                out.update(repeating: 0, count: extrapolation)
            } else if s1 < s2 {
                let ratio = sqrtf((s1 + 1) / (s2 + 1))
                for i in 0..<overlap { out[i] *= 1 - window[i] * (1 - ratio) }
                for i in overlap..<extrapolation { out[i] *= ratio }
            }
            // Pre-filter the part past the frame (the post-filter runs on the next frame's
            // overlap again) and fold it as the next frame's MDCT expects.
            var etmp = [Float](repeating: 0, count: overlap)
            let tail = buf + Self.bufferSize
            let t = max(postfilterPeriod, CELTTables.combFilterMinimumPeriod)
            let g = CELTTables.combGains[postfilterTapset].map { -postfilterGain * $0 }
            for i in 0..<overlap {
                etmp[i] = tail[i] + g[0] * tail[i - t] + g[1] * (tail[i - t + 1] + tail[i - t - 1])
                    + g[2] * (tail[i - t + 2] + tail[i - t - 2])
            }
            for i in 0..<(overlap / 2) {
                tail[i] = window[i] * etmp[overlap - 1 - i] + window[overlap - 1 - i] * etmp[i]
            }
        }
    }
}

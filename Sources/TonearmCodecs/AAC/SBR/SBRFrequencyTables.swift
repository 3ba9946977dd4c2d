import Foundation

/// The frequency band tables of one SBR header at one output rate (ISO/IEC 14496-3
/// §4.6.18.3.2 and §4.6.18.6.3): the master table, the high and low resolution tables, the
/// noise floor bands, the HF patches and the limiter bands. Band edges are QMF subband
/// indices (0…64) at the SBR (output) rate.
///
/// ``init(header:outputRate:)`` returns nil where the standard's limits are broken (k2 − k0
/// too wide for the rate, more than 5 noise bands or patches, a crossover band past the
/// master table, a band of width 0), so that the caller turns SBR off rather than trap.
struct SBRFrequencyTables: Equatable, Sendable {
    /// k0 and k2: the first and the end QMF band of the master table.
    let k0: Int
    let k2: Int
    /// f_Master, N_Master + 1 edges.
    let master: [Int]
    /// f_TableHigh (N_high + 1 edges) and f_TableLow (N_low + 1 edges).
    let high: [Int]
    let low: [Int]
    /// f_TableNoise, N_Q + 1 edges.
    let noise: [Int]
    /// f_TableLim, N_L + 1 edges.
    private(set) var limiter: [Int]
    /// k_x = f_TableHigh[0], the first QMF band SBR writes; M, the count of bands it writes.
    var kx: Int { high[0] }
    var m: Int { high[high.count - 1] - high[0] }
    /// N_high, N_low, N_Q, N_L.
    var highCount: Int { high.count - 1 }
    var lowCount: Int { low.count - 1 }
    var noiseCount: Int { noise.count - 1 }
    var limiterCount: Int { limiter.count - 1 }
    /// The HF patches: each copies `patchCount[i]` bands starting at low band
    /// `patchStart[i]` to the high band, in order from k_x up.
    let patchStart: [Int]
    let patchCount: [Int]

    /// startMin and stopMin (§4.6.18.3.2.1), the QMF bands k0 and k2 are counted from:
    /// 3/6 kHz, 4/8 kHz or 5/10 kHz by SBR sampling rate, as NINT(f × 128 / fs).
    static func minimumBands(outputRate fs: Int) -> (start: Int, stop: Int) {
        let (start, stop): (Int, Int)
        if fs < 32000 {
            (start, stop) = (3000, 6000)
        } else if fs < 64000 {
            (start, stop) = (4000, 8000)
        } else {
            (start, stop) = (5000, 10000)
        }
        return ((start * 128 + fs / 2) / fs, (stop * 128 + fs / 2) / fs)
    }

    /// The offsets of k0 from startMin for bs_start_freq 0…15, by SBR sampling rate
    /// (§4.6.18.3.2.1); nil for a rate the standard does not list.
    static func startOffsets(outputRate fs: Int) -> [Int]? {
        switch fs {
        case 16000: return [-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]
        case 22050: return [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13]
        case 24000: return [-5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16]
        case 32000: return [-6, -4, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16]
        case 44100, 48000, 64000: return [-4, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16, 20]
        case 88200, 96000: return [-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16, 20, 24]
        default: return nil
        }
    }

    /// k0 and k2 for a header at an output rate (§4.6.18.3.2.1), nil when the rate has no
    /// start table.
    static func startStop(_ h: SBRHeader, outputRate fs: Int) -> (k0: Int, k2: Int)? {
        guard let offsets = startOffsets(outputRate: fs) else { return nil }
        let (startMin, stopMin) = minimumBands(outputRate: fs)
        let k0 = startMin + offsets[h.startFrequency & 15]
        var k2: Int
        switch h.stopFrequency {
        case 14: k2 = 2 * k0
        case 15: k2 = 3 * k0
        default:
            // stopDk: the steps of a geometric scale from stopMin to 64 in 13 steps, sorted.
            let steps = geometricWidths(from: stopMin, to: 64, count: 13).sorted()
            k2 = stopMin + steps.prefix(h.stopFrequency).reduce(0, +)
        }
        return (k0, min(k2, 64))
    }

    init?(header h: SBRHeader, outputRate fs: Int) {
        guard let (k0, k2) = Self.startStop(h, outputRate: fs), k0 > 0, k2 > k0 else { return nil }
        // §4.6.18.3.2.1: the SBR range is at most 48, 35 or 32 bands wide.
        let widest = fs <= 32000 ? 48 : fs == 44100 ? 35 : 32
        guard k2 - k0 <= widest else { return nil }
        self.k0 = k0
        self.k2 = k2
        guard let master = Self.master(k0: k0, k2: k2, header: h) else { return nil }
        self.master = master
        let nMaster = master.count - 1
        guard h.crossoverBand < nMaster else { return nil }

        // §4.6.18.3.2.2: f_TableHigh is the master table from the crossover band; f_TableLow
        // takes every other edge, the first always and, for an odd N_high, the lower edges shifted.
        let high = Array(master[h.crossoverBand...])
        let nHigh = high.count - 1
        let nLow = (nHigh + 1) / 2
        let low = (0...nLow).map { $0 == 0 ? high[0] : high[2 * $0 - (nHigh & 1)] }
        self.high = high
        self.low = low
        let kx = high[0], m = high[nHigh] - high[0]
        // Requirements of §4.6.18.3.2: k_x ≤ 32 and k_x + M ≤ 64.
        guard kx <= 32, kx + m <= 64, m > 0 else { return nil }

        // Noise floor bands (§4.6.18.3.2.3).
        var nQ = 1
        if h.noiseBands > 0 {
            nQ = max(1, Int((Double(h.noiseBands) * log2(Double(k2) / Double(kx))).rounded()))
        }
        guard nQ <= 5 else { return nil }
        var noise = [low[0]]
        var i = 0
        for k in 1...nQ {
            i += (nLow - i) / (nQ + 1 - k)
            noise.append(low[i])
        }
        self.noise = noise

        guard let (start, count) = Self.patches(master: master, k0: k0, kx: kx, m: m, outputRate: fs) else { return nil }
        patchStart = start
        patchCount = count
        limiter = Self.limiterTable(low: low, kx: kx, patchCount: count, limiterBands: h.limiterBands)
    }

    /// The same tables with another bs_limiter_bands (a header may change it without a reset).
    func withLimiterBands(_ bands: Int) -> SBRFrequencyTables {
        var t = self
        t.limiter = Self.limiterTable(low: low, kx: kx, patchCount: patchCount, limiterBands: bands)
        return t
    }

    /// f_Master (§4.6.18.3.2.1), nil when a band would have no width.
    static func master(k0: Int, k2: Int, header h: SBRHeader) -> [Int]? {
        if h.frequencyScale == 0 {
            // Linear bands of 1 or 2 QMF bands, the leftover spread from one end.
            let dk = h.alterScale == 0 ? 1 : 2
            let numBands: Int
            if h.alterScale == 0 {
                numBands = 2 * ((k2 - k0) / (dk * 2))
            } else {
                numBands = 2 * Int((Double(k2 - k0) / Double(dk * 2)).rounded())
            }
            guard numBands > 0 else { return nil }
            var steps = [Int](repeating: dk, count: numBands)
            var diff = k2 - (k0 + numBands * dk)
            var k = diff < 0 ? 0 : numBands - 1
            let increment = diff < 0 ? 1 : -1
            while diff != 0 {
                guard k >= 0, k < numBands else { return nil }
                steps[k] -= increment
                k += increment
                diff += increment
            }
            guard steps.allSatisfy({ $0 > 0 }) else { return nil }
            return steps.reduce(into: [k0]) { $0.append($0.last! + $1) }
        }
        // Bands per octave, with a second, warped region above 2·k0 when k2/k0 > 2.2449.
        let bands = [12.0, 10.0, 8.0][h.frequencyScale - 1]
        let warp = h.alterScale == 0 ? 1.0 : 1.3
        let twoRegions = 49 * k2 > 110 * k0  // k2 / k0 > 2.2449
        let k1 = twoRegions ? 2 * k0 : k2
        let numBands0 = 2 * Int((bands * log2(Double(k1) / Double(k0)) / 2).rounded())
        guard numBands0 > 0, let steps0 = geometricSteps(from: k0, to: k1, count: numBands0) else { return nil }
        var table = steps0.reduce(into: [k0]) { $0.append($0.last! + $1) }
        if twoRegions {
            let numBands1 = 2 * Int((bands * log2(Double(k2) / Double(k1)) / (2 * warp)).rounded())
            guard numBands1 > 0, var steps1 = geometricSteps(from: k1, to: k2, count: numBands1) else { return nil }
            // The upper region's bands may not be narrower than the lower region's widest.
            if steps1[0] < steps0[numBands0 - 1] {
                let change = min(steps0[numBands0 - 1] - steps1[0], (steps1[numBands1 - 1] - steps1[0]) / 2)
                steps1[0] += change
                steps1[numBands1 - 1] -= change
                steps1.sort()
            }
            guard steps1.allSatisfy({ $0 > 0 }) else { return nil }
            for s in steps1 { table.append(table.last! + s) }
        }
        return table
    }

    /// The widths of `count` bands from `start` to `stop` whose edges are
    /// NINT(start · (stop/start)^(k/count)). The powers are taken as a running product in
    /// single precision and rounded half to even, as FFmpeg's decoder (the accuracy oracle)
    /// does: the standard's formula leaves the precision open, and an edge that lands near .5
    /// must round the same way.
    static func geometricWidths(from start: Int, to stop: Int, count: Int) -> [Int] {
        let base = Float(stop) / Float(start)
        let ratio = powf(base, 1 / Float(count))
        var product = Float(start)
        var previous = start
        var steps = [Int]()
        for _ in 0..<count - 1 {
            product *= ratio
            let present = Int(product.rounded(.toNearestOrEven))
            steps.append(present - previous)
            previous = present
        }
        steps.append(stop - previous)
        return steps
    }

    /// The sorted widths of `count` bands from `start` to `stop` on a geometric scale, nil when
    /// one is not positive.
    private static func geometricSteps(from start: Int, to stop: Int, count: Int) -> [Int]? {
        let steps = geometricWidths(from: start, to: stop, count: count).sorted()
        return steps[0] > 0 ? steps : nil
    }

    /// The HF patches (§4.6.18.6.3): runs of low bands, each starting on an even or odd band
    /// as the target needs, that tile k_x…k_x + M; nil past 5 patches.
    static func patches(master: [Int], k0: Int, kx: Int, m: Int, outputRate fs: Int) -> (start: [Int], count: [Int])? {
        let nMaster = master.count - 1
        var msb = k0, usb = kx
        let goalSb = (2_048_000 + fs / 2) / fs
        var k: Int
        if goalSb < kx + m {
            k = 0
            while k < nMaster && master[k] < goalSb { k += 1 }
        } else {
            k = nMaster
        }
        var start = [Int](), count = [Int]()
        var sb = 0
        var rounds = 0
        repeat {
            var j = k + 1
            var odd = 0
            repeat {
                j -= 1
                guard j >= 0 else { return nil }
                sb = master[j]
                odd = (sb - 2 + k0) & 1
            } while sb > k0 - 1 + msb - odd
            let n = max(sb - usb, 0)
            if n > 0 {
                guard start.count < 5, k0 - odd - n >= 0 else { return nil }
                start.append(k0 - odd - n)
                count.append(n)
                usb = sb
                msb = sb
            } else {
                msb = kx
            }
            if master[k] - sb < 3 { k = nMaster }
            rounds += 1
            // A valid table ends in a few rounds; a broken one must not loop.
            guard rounds <= 64 else { return nil }
        } while sb != kx + m
        if count.count > 1 && count[count.count - 1] < 3 {
            start.removeLast()
            count.removeLast()
        }
        guard !count.isEmpty else { return nil }
        return (start, count)
    }

    /// f_TableLim (§4.6.18.3.2.3): the low table's edges and the patch borders, merged where
    /// two edges are closer than 0.49 / limiterBands octaves (1.2, 2 or 3 bands per octave),
    /// keeping patch borders; a single band for bs_limiter_bands 0.
    static func limiterTable(low: [Int], kx: Int, patchCount: [Int], limiterBands: Int) -> [Int] {
        let nLow = low.count - 1
        guard limiterBands > 0 else { return [low[0], low[nLow]] }
        let perOctave = [1.2, 2.0, 3.0][min(limiterBands, 3) - 1]
        var borders = [kx]
        for n in patchCount { borders.append(borders.last! + n) }
        var candidates = low
        candidates += borders.dropFirst().dropLast()
        candidates.sort()
        // One pass over the sorted edges: `table` holds the edges kept, the last one open to
        // be replaced.
        var table = [candidates[0]]
        for edge in candidates.dropFirst() {
            let last = table[table.count - 1]
            if log2(Double(edge) / Double(last)) * perOctave >= 0.49 {
                table.append(edge)
            } else if edge == last {
                continue
            } else if !borders.contains(edge) {
                continue
            } else if !borders.contains(last) {
                table[table.count - 1] = edge
            } else {
                table.append(edge)
            }
        }
        return table
    }
}

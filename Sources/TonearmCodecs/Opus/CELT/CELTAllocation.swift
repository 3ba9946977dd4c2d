/// CELT's bit allocation (RFC 6716 §4.3.3): from the static allocation table, the trim,
/// the boosts and the caps to the bits of each band's shape (`pulses`, 1/8 bit) and fine
/// energy (`fineQuant`, whole bits), reading the skip, intensity and dual-stereo symbols.
struct CELTAllocation {
    var pulses = [Int](repeating: 0, count: CELTTables.bandCount)
    var fineQuant = [Int](repeating: 0, count: CELTTables.bandCount)
    var finePriority = [Int](repeating: 0, count: CELTTables.bandCount)
    var codedBands = 0
    var intensity = 0
    var dualStereo = false
    var balance = 0

    static let allocSteps = 6

    /// The pulse cache's bits for band `band` at `lm` (−1 … 3): [0] is the largest
    /// pseudo-pulse count, [q] the bits (1/8 bit) minus one for q pseudo-pulses.
    @inline(__always)
    static func cacheOffset(band: Int, lm: Int) -> Int {
        Int(CELTTables.cacheIndex[(lm + 1) * CELTTables.bandCount + band])
    }

    /// Pseudo-pulse q's pulse count.
    @inline(__always)
    static func pulses(forPseudo i: Int) -> Int { i < 8 ? i : (8 + (i & 7)) << ((i >> 3) - 1) }

    /// The most pseudo-pulses that fit in `bits` (1/8 bit), rounding to the nearer.
    static func bitsToPulses(band: Int, lm: Int, bits: Int) -> Int {
        CELTTables.cacheBits.withUnsafeBufferPointer { cb in
            let cache = cb.baseAddress! + cacheOffset(band: band, lm: lm)
            var lo = 0, hi = Int(cache[0])
            let b = bits - 1
            for _ in 0..<6 {
                let mid = (lo + hi + 1) >> 1
                if Int(cache[mid]) >= b { hi = mid } else { lo = mid }
            }
            return b - (lo == 0 ? -1 : Int(cache[lo])) <= Int(cache[hi]) - b ? lo : hi
        }
    }

    static func pulsesToBits(band: Int, lm: Int, pulses q: Int) -> Int {
        q == 0 ? 0 : Int(CELTTables.cacheBits[cacheOffset(band: band, lm: lm) + q]) + 1
    }

    /// init_caps: the most bits each band can use, 1/8 bit.
    static func caps(lm: Int, channels: Int, into cap: inout [Int]) {
        for i in 0..<CELTTables.bandCount {
            let n = (CELTTables.bandEdges[i + 1] - CELTTables.bandEdges[i]) << lm
            cap[i] = ((Int(CELTTables.cacheCaps[CELTTables.bandCount * (2 * lm + channels - 1) + i]) + 64) * channels * n) >> 2
        }
    }

    /// clt_compute_allocation for decoding.
    mutating func compute(start: Int, end: Int, offsets: [Int], cap: [Int], trim: Int, total totalIn: Int,
                          channels c: Int, lm: Int, _ rd: inout OpusRangeDecoder)
    {
        let bitRes = CELTTables.bitRes
        let e = CELTTables.bandEdges
        let nb = CELTTables.bandCount
        var total = max(totalIn, 0)
        var skipStart = start
        let skipReserve = total >= 1 << bitRes ? 1 << bitRes : 0
        total -= skipReserve
        var intensityReserve = 0, dualReserve = 0
        if c == 2 {
            intensityReserve = CELTTables.log2FractionTable[end - start]
            if intensityReserve > total {
                intensityReserve = 0
            } else {
                total -= intensityReserve
                dualReserve = total >= 1 << bitRes ? 1 << bitRes : 0
                total -= dualReserve
            }
        }
        // Per band (21, at most 32) as SIMD values, not arrays: a frame allocates nothing.
        var thresh = SIMD32<Int>(), trimOffset = thresh
        var bits1 = thresh, bits2 = thresh
        for j in start..<end {
            let w = e[j + 1] - e[j]
            thresh[j] = max(c << bitRes, (((3 * w) << lm) << bitRes) >> 4)
            trimOffset[j] = (c * w * (trim - 5 - lm) * (end - j - 1) * (1 << (lm + bitRes))) >> 6
            if w << lm == 1 { trimOffset[j] -= c << bitRes }
        }
        var lo = 1, hi = CELTTables.allocationVectorCount - 1
        repeat {
            var done = false
            var psum = 0
            let mid = (lo + hi) >> 1
            var j = end - 1
            while j >= start {
                let n = e[j + 1] - e[j]
                var bitsj = ((c * n * Int(CELTTables.allocationVectors[mid * nb + j])) << lm) >> 2
                if bitsj > 0 { bitsj = max(0, bitsj + trimOffset[j]) }
                bitsj += offsets[j]
                if bitsj >= thresh[j] || done {
                    done = true
                    psum += min(bitsj, cap[j])
                } else if bitsj >= c << bitRes {
                    psum += c << bitRes
                }
                j -= 1
            }
            if psum > total { hi = mid - 1 } else { lo = mid + 1 }
        } while lo <= hi
        hi = lo
        lo -= 1
        for j in start..<end {
            let n = e[j + 1] - e[j]
            var b1 = ((c * n * Int(CELTTables.allocationVectors[lo * nb + j])) << lm) >> 2
            var b2 = hi >= CELTTables.allocationVectorCount ? cap[j] : ((c * n * Int(CELTTables.allocationVectors[hi * nb + j])) << lm) >> 2
            if b1 > 0 { b1 = max(0, b1 + trimOffset[j]) }
            if b2 > 0 { b2 = max(0, b2 + trimOffset[j]) }
            if lo > 0 { b1 += offsets[j] }
            b2 += offsets[j]
            if offsets[j] > 0 { skipStart = j }
            b2 = max(0, b2 - b1)
            bits1[j] = b1
            bits2[j] = b2
        }
        interpolate(start: start, end: end, skipStart: skipStart, bits1: bits1, bits2: bits2, thresh: thresh, cap: cap,
                    total: total, skipReserve: skipReserve, intensityReserve: intensityReserve, dualReserve: dualReserve,
                    channels: c, lm: lm, &rd)
    }

    /// interp_bits2pulses.
    private mutating func interpolate(start: Int, end: Int, skipStart: Int, bits1: SIMD32<Int>, bits2: SIMD32<Int>, thresh: SIMD32<Int>,
                                      cap: [Int], total totalIn: Int, skipReserve: Int, intensityReserve intensityIn: Int,
                                      dualReserve dualIn: Int, channels c: Int, lm: Int, _ rd: inout OpusRangeDecoder)
    {
        let bitRes = CELTTables.bitRes
        let e = CELTTables.bandEdges
        var total = totalIn
        var intensityReserve = intensityIn, dualReserve = dualIn
        let allocFloor = c << bitRes
        let stereo = c > 1 ? 1 : 0
        let logM = lm << bitRes
        var lo = 0, hi = 1 << Self.allocSteps
        for _ in 0..<Self.allocSteps {
            let mid = (lo + hi) >> 1
            var psum = 0
            var done = false
            var j = end - 1
            while j >= start {
                let tmp = bits1[j] + ((mid * bits2[j]) >> Self.allocSteps)
                if tmp >= thresh[j] || done {
                    done = true
                    psum += min(tmp, cap[j])
                } else if tmp >= allocFloor {
                    psum += allocFloor
                }
                j -= 1
            }
            if psum > total { hi = mid } else { lo = mid }
        }
        var psum = 0
        var done = false
        var bits = SIMD32<Int>()
        var j = end - 1
        while j >= start {
            var tmp = bits1[j] + ((lo * bits2[j]) >> Self.allocSteps)
            if tmp < thresh[j] && !done {
                tmp = tmp >= allocFloor ? allocFloor : 0
            } else {
                done = true
            }
            tmp = min(tmp, cap[j])
            bits[j] = tmp
            psum += tmp
            j -= 1
        }
        var coded = end
        while true {
            j = coded - 1
            if j <= skipStart {
                total += skipReserve
                break
            }
            var left = total - psum
            let span = e[coded] - e[start]
            let perCoefficient = left / span
            left -= span * perCoefficient
            let rem = max(left - (e[j] - e[start]), 0)
            let bandWidth = e[coded] - e[j]
            var bandBits = bits[j] + perCoefficient * bandWidth + rem
            if bandBits >= max(thresh[j], allocFloor + (1 << bitRes)) {
                if rd.decodeBit(logp: 1) { break }
                psum += 1 << bitRes
                bandBits -= 1 << bitRes
            }
            psum -= bits[j] + intensityReserve
            if intensityReserve > 0 { intensityReserve = CELTTables.log2FractionTable[j - start] }
            psum += intensityReserve
            if bandBits >= allocFloor {
                psum += allocFloor
                bits[j] = allocFloor
            } else {
                bits[j] = 0
            }
            coded -= 1
        }
        if intensityReserve > 0 {
            intensity = start + Int(rd.decodeUInt(UInt32(coded + 1 - start)))
        } else {
            intensity = 0
        }
        if intensity <= start {
            total += dualReserve
            dualReserve = 0
        }
        dualStereo = dualReserve > 0 ? rd.decodeBit(logp: 1) : false
        var left = total - psum
        let span = e[coded] - e[start]
        let perCoefficient = left / span
        left -= span * perCoefficient
        for j in start..<coded { bits[j] += perCoefficient * (e[j + 1] - e[j]) }
        for j in start..<coded {
            let tmp = min(left, e[j + 1] - e[j])
            bits[j] += tmp
            left -= tmp
        }
        var balance = 0
        j = start
        while j < coded {
            let n0 = e[j + 1] - e[j]
            let n = n0 << lm
            let bit = bits[j] + balance
            var excess: Int
            if n > 1 {
                excess = max(bit - cap[j], 0)
                bits[j] = bit - excess
                let den = c * n + ((c == 2 && n > 2 && !dualStereo && j < intensity) ? 1 : 0)
                let nClogN = den * (CELTTables.logN[j] + logM)
                var offset = (nClogN >> 1) - den * CELTTables.fineOffset
                if n == 2 { offset += (den << bitRes) >> 2 }
                if bits[j] + offset < (den * 2) << bitRes {
                    offset += nClogN >> 2
                } else if bits[j] + offset < (den * 3) << bitRes {
                    offset += nClogN >> 3
                }
                var eb = max(0, bits[j] + offset + (den << (bitRes - 1)))
                eb = (eb / den) >> bitRes
                if c * eb > bits[j] >> bitRes { eb = (bits[j] >> stereo) >> bitRes }
                eb = min(eb, CELTTables.maxFineBits)
                fineQuant[j] = eb
                finePriority[j] = eb * (den << bitRes) >= bits[j] + offset ? 1 : 0
                bits[j] -= (c * eb) << bitRes
            } else {
                excess = max(0, bit - (c << bitRes))
                bits[j] = bit - excess
                fineQuant[j] = 0
                finePriority[j] = 1
            }
            if excess > 0 {
                let extraFine = min(excess >> (stereo + bitRes), CELTTables.maxFineBits - fineQuant[j])
                fineQuant[j] += extraFine
                let extraBits = (extraFine * c) << bitRes
                finePriority[j] = extraBits >= excess - balance ? 1 : 0
                excess -= extraBits
            }
            balance = excess
            j += 1
        }
        self.balance = balance
        while j < end {
            fineQuant[j] = (bits[j] >> stereo) >> bitRes
            bits[j] = 0
            finePriority[j] = fineQuant[j] < 1 ? 1 : 0
            j += 1
        }
        for i in 0..<CELTTables.bandCount { pulses[i] = i >= start && i < end ? bits[i] : 0 }
        codedBands = coded
    }
}

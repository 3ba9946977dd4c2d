#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The shapes of CELT's bands (RFC 6716 §4.3.4): the recursive splitting of a band by the
/// angle θ (mid/side for stereo, halves in time or frequency for mono), PVQ codewords at the
/// leaves, folding from lower bands where no pulse was coded, time–frequency changes with
/// Haar transforms, and the collapse masks anti-collapse needs.
final class CELTBandDecoder {
    private let bitRes = CELTTables.bitRes
    // Per frame.
    private var remainingBits = 0
    var seed: UInt32 = 0
    private var spread = 0
    private var intensity = 0
    private var tfChange = 0
    private var band = 0
    /// RFC 8251 §7: a mono decoder ignores the stereo phase inversion flag, so that a
    /// downmix does not cancel.
    var disablePhaseInversion = false

    /// Folding memory: the normalised, scaled output of each band (for both channels).
    private let norm: UnsafeMutablePointer<Float>
    private let norm2: UnsafeMutablePointer<Float>
    private let lowbandScratch: UnsafeMutablePointer<Float>
    private let hadamardScratch: UnsafeMutablePointer<Float>
    private let pulses: UnsafeMutablePointer<Int32>
    private static let normSize = 8 * 100

    init() {
        norm = .allocate(capacity: 2 * Self.normSize)
        norm.initialize(repeating: 0, count: 2 * Self.normSize)
        norm2 = norm + Self.normSize
        lowbandScratch = .allocate(capacity: 176)
        lowbandScratch.initialize(repeating: 0, count: 176)
        hadamardScratch = .allocate(capacity: 176)
        hadamardScratch.initialize(repeating: 0, count: 176)
        pulses = .allocate(capacity: 176)
        pulses.initialize(repeating: 0, count: 176)
    }

    deinit {
        norm.deallocate()
        lowbandScratch.deallocate()
        hadamardScratch.deallocate()
        pulses.deallocate()
    }

    @inline(__always)
    static func lcg(_ seed: UInt32) -> UInt32 { 1_664_525 &* seed &+ 1_013_904_223 }

    /// quant_all_bands, decoding: the shapes of bands start ..< end into `x` (and `y` for
    /// stereo), each N = M·width values; `collapse` gets each band's mask per channel.
    func decode(x: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>?, collapse: UnsafeMutablePointer<UInt8>,
                start: Int, end: Int, allocation: CELTAllocation, shortBlocks: Bool, spread: Int, tfRes: [Int],
                totalBits: Int, lm: Int, _ rd: inout OpusRangeDecoder)
    {
        let e = CELTTables.bandEdges
        let m = 1 << lm
        let blocks = shortBlocks ? m : 1
        let normOffset = m * e[start]
        let channels = y == nil ? 1 : 2
        self.spread = spread
        intensity = allocation.intensity
        var dualStereo = allocation.dualStereo
        var balance = allocation.balance
        var lowbandOffset = 0
        var updateLowband = true
        let codedBands = allocation.codedBands
        for i in start..<end {
            band = i
            let last = i == end - 1
            let bx = x + m * e[i]
            let by = y.map { $0 + m * e[i] }
            let n = m * e[i + 1] - m * e[i]
            let tell = rd.tellFraction()
            if i != start { balance -= tell }
            let remaining = totalBits - tell - 1
            remainingBits = remaining
            var b = 0
            if i <= codedBands - 1 {
                let currentBalance = balance / min(3, codedBands - i)
                b = max(0, min(16383, min(remaining + 1, allocation.pulses[i] + currentBalance)))
            }
            if (m * e[i] - n >= m * e[start] || i == start + 1) && (updateLowband || lowbandOffset == 0) {
                lowbandOffset = i
            }
            if i == start + 1 {
                // RFC 8251 §7: enough of the first band to fold the second from (hybrid).
                let n1 = m * (e[start + 1] - e[start]), n2 = m * (e[start + 2] - e[start + 1])
                if n2 > n1 {
                    (norm + n1).update(from: norm + 2 * n1 - n2, count: n2 - n1)
                    if dualStereo { (norm2 + n1).update(from: norm2 + 2 * n1 - n2, count: n2 - n1) }
                }
            }
            tfChange = tfRes[i]
            var effectiveLowband = -1
            var xcm: UInt32, ycm: UInt32
            if lowbandOffset != 0 && (spread != 3 || blocks > 1 || tfChange < 0) {
                effectiveLowband = max(0, m * e[lowbandOffset] - normOffset - n)
                var foldStart = lowbandOffset
                repeat { foldStart -= 1 } while foldStart > 0 && m * e[foldStart] > effectiveLowband + normOffset
                var foldEnd = lowbandOffset - 1
                repeat { foldEnd += 1 } while foldEnd < i && m * e[foldEnd] < effectiveLowband + normOffset + n
                xcm = 0; ycm = 0
                var f = foldStart
                repeat {
                    xcm |= UInt32(collapse[f * channels])
                    ycm |= UInt32(collapse[f * channels + channels - 1])
                    f += 1
                } while f < foldEnd
            } else {
                xcm = (1 << UInt32(blocks)) - 1
                ycm = xcm
            }
            if dualStereo && i == intensity {
                dualStereo = false
                for j in 0..<max(0, m * e[i] - normOffset) { norm[j] = 0.5 * (norm[j] + norm2[j]) }
            }
            let lowband1 = effectiveLowband >= 0 ? norm + effectiveLowband : nil
            let lowband2 = effectiveLowband >= 0 ? norm2 + effectiveLowband : nil
            let out1 = last ? nil : norm + (m * e[i] - normOffset)
            let out2 = last ? nil : norm2 + (m * e[i] - normOffset)
            let scratch = last ? nil : lowbandScratch
            if dualStereo, let by {
                xcm = quantBand(bx, n: n, b: b / 2, blocks: blocks, lowband: lowband1, lm: lm, lowbandOut: out1, gain: 1,
                                scratch: scratch, fill: xcm, &rd)
                ycm = quantBand(by, n: n, b: b / 2, blocks: blocks, lowband: lowband2, lm: lm, lowbandOut: out2, gain: 1,
                                scratch: scratch, fill: ycm, &rd)
            } else {
                if let by {
                    xcm = quantBandStereo(bx, by, n: n, b: b, blocks: blocks, lowband: lowband1, lm: lm, lowbandOut: out1,
                                          scratch: scratch, fill: xcm | ycm, &rd)
                } else {
                    xcm = quantBand(bx, n: n, b: b, blocks: blocks, lowband: lowband1, lm: lm, lowbandOut: out1, gain: 1,
                                    scratch: scratch, fill: xcm | ycm, &rd)
                }
                ycm = xcm
            }
            collapse[i * channels] = UInt8(truncatingIfNeeded: xcm)
            collapse[i * channels + channels - 1] = UInt8(truncatingIfNeeded: ycm)
            balance += allocation.pulses[i] + tell
            updateLowband = b > n << bitRes
        }
    }

    // MARK: Split parameters

    private static func bitexactCos(_ x: Int) -> Int {
        let tmp = (4096 + x * x) >> 13
        var x2 = tmp
        x2 = (32767 - x2) + fracMul16(x2, -7651 + fracMul16(x2, 8277 + fracMul16(-626, x2)))
        return 1 + x2
    }

    @inline(__always)
    private static func fracMul16(_ a: Int, _ b: Int) -> Int { (16384 + Int(Int32(truncatingIfNeeded: a)) * Int(Int32(truncatingIfNeeded: b))) >> 15 }

    private static func bitexactLog2Tan(_ isin: Int, _ icos: Int) -> Int {
        let lc = OpusRangeDecoder.ilog(UInt32(icos)), ls = OpusRangeDecoder.ilog(UInt32(isin))
        let c = icos << (15 - lc), s = isin << (15 - ls)
        return (ls - lc) * (1 << 11) + fracMul16(s, fracMul16(s, -2597) + 7932) - fracMul16(c, fracMul16(c, -2597) + 7932)
    }

    private static let exp2Table8 = [16384, 17866, 19483, 21247, 23170, 25267, 27554, 30048]

    private func computeQN(n: Int, b: Int, offset: Int, pulseCap: Int, stereo: Bool) -> Int {
        var n2 = 2 * n - 1
        if stereo && n == 2 { n2 -= 1 }
        var qb = (b + n2 * offset) / n2
        qb = min(b - pulseCap - (4 << bitRes), qb)
        qb = min(8 << bitRes, qb)
        if qb < (1 << bitRes) >> 1 { return 1 }
        let qn = Self.exp2Table8[qb & 7] >> (14 - (qb >> bitRes))
        return ((qn + 1) >> 1) << 1
    }

    private static func isqrt(_ v: UInt32) -> Int {
        var r = Int(Double(v).squareRoot())
        while r * r > Int(v) { r -= 1 }
        while (r + 1) * (r + 1) <= Int(v) { r += 1 }
        return r
    }

    private struct Split {
        var inv = false
        var imid = 0, iside = 0, delta = 0, itheta = 0, qalloc = 0
    }

    /// compute_theta, decoding.
    private func computeTheta(n: Int, b: inout Int, blocks: Int, blocks0: Int, lm: Int, stereo: Bool, fill: inout UInt32,
                              _ rd: inout OpusRangeDecoder) -> Split
    {
        var s = Split()
        let pulseCap = CELTTables.logN[band] + lm * (1 << bitRes)
        let offset = (pulseCap >> 1) - (stereo && n == 2 ? CELTTables.qthetaOffsetTwoPhase : CELTTables.qthetaOffset)
        var qn = computeQN(n: n, b: b, offset: offset, pulseCap: pulseCap, stereo: stereo)
        if stereo && band >= intensity { qn = 1 }
        let tell = rd.tellFraction()
        var itheta = 0
        if qn != 1 {
            if stereo && n > 2 {
                let p0 = 3, x0 = qn / 2
                let ft = UInt32(p0 * (x0 + 1) + x0)
                let fs = Int(rd.decode(ft))
                let x = fs < (x0 + 1) * p0 ? fs / p0 : x0 + 1 + (fs - (x0 + 1) * p0)
                let fl = x <= x0 ? p0 * x : (x - 1 - x0) + (x0 + 1) * p0
                let fh = x <= x0 ? p0 * (x + 1) : (x - x0) + (x0 + 1) * p0
                rd.update(UInt32(fl), UInt32(fh), ft)
                itheta = x
            } else if blocks0 > 1 || stereo {
                itheta = Int(rd.decodeUInt(UInt32(qn + 1)))
            } else {
                let half = qn >> 1
                let ft = (half + 1) * (half + 1)
                let fm = Int(rd.decode(UInt32(ft)))
                var fl: Int, fs: Int
                if fm < (half * (half + 1)) >> 1 {
                    itheta = (Self.isqrt(UInt32(8 * fm + 1)) - 1) >> 1
                    fs = itheta + 1
                    fl = (itheta * (itheta + 1)) >> 1
                } else {
                    itheta = (2 * (qn + 1) - Self.isqrt(UInt32(8 * (ft - fm - 1) + 1))) >> 1
                    fs = qn + 1 - itheta
                    fl = ft - (((qn + 1 - itheta) * (qn + 2 - itheta)) >> 1)
                }
                rd.update(UInt32(max(0, fl)), UInt32(max(0, fl + fs)), UInt32(ft))
            }
            itheta = itheta * 16384 / qn
        } else if stereo {
            if b > 2 << bitRes && remainingBits > 2 << bitRes {
                s.inv = rd.decodeBit(logp: 2) && !disablePhaseInversion
            }
            itheta = 0
        }
        s.qalloc = rd.tellFraction() - tell
        b -= s.qalloc
        if itheta == 0 {
            s.imid = 32767; s.iside = 0
            fill &= (1 << UInt32(blocks)) - 1
            s.delta = -16384
        } else if itheta == 16384 {
            s.imid = 0; s.iside = 32767
            fill &= ((1 << UInt32(blocks)) - 1) << UInt32(blocks)
            s.delta = 16384
        } else {
            s.imid = Self.bitexactCos(itheta)
            s.iside = Self.bitexactCos(16384 - itheta)
            s.delta = Self.fracMul16((n - 1) << 7, Self.bitexactLog2Tan(s.iside, s.imid))
        }
        s.itheta = itheta
        return s
    }

    // MARK: Bands

    /// quant_band_n1: one bin per channel, a sign each.
    private func quantBandN1(_ x: UnsafeMutablePointer<Float>, _ y: UnsafeMutablePointer<Float>?,
                             lowbandOut: UnsafeMutablePointer<Float>?, _ rd: inout OpusRangeDecoder) -> UInt32
    {
        for c in 0..<(y == nil ? 1 : 2) {
            var sign = false
            if remainingBits >= 1 << bitRes {
                sign = rd.decodeBits(1) != 0
                remainingBits -= 1 << bitRes
            }
            let p = c == 0 ? x : y!
            p[0] = sign ? -1 : 1
        }
        lowbandOut?[0] = x[0]
        return 1
    }

    private func quantPartition(_ x: UnsafeMutablePointer<Float>, n nIn: Int, b: Int, blocks bIn: Int,
                                lowband: UnsafeMutablePointer<Float>?, lm lmIn: Int, gain: Float, fill fillIn: UInt32,
                                _ rd: inout OpusRangeDecoder) -> UInt32
    {
        var n = nIn, blocks = bIn, lm = lmIn, fill = fillIn, b = b
        let blocks0 = blocks
        let cacheOffset = max(0, CELTAllocation.cacheOffset(band: band, lm: lm))
        let splitThreshold = CELTTables.cacheBits.withUnsafeBufferPointer { cb in
            Int(cb[cacheOffset + Int(cb[cacheOffset])]) + 12
        }
        if lm != -1 && b > splitThreshold && n > 2 {
            n >>= 1
            let y = x + n
            lm -= 1
            if blocks == 1 { fill = (fill & 1) | (fill << 1) }
            blocks = (blocks + 1) >> 1
            let s = computeTheta(n: n, b: &b, blocks: blocks, blocks0: blocks0, lm: lm, stereo: false, fill: &fill, &rd)
            let mid = Float(s.imid) / 32768, side = Float(s.iside) / 32768
            var delta = s.delta
            if blocks0 > 1 && s.itheta & 0x3FFF != 0 {
                if s.itheta > 8192 {
                    delta -= delta >> (4 - lm)
                } else {
                    delta = min(0, delta + ((n << bitRes) >> (5 - lm)))
                }
            }
            var mbits = max(0, min(b, (b - delta) / 2))
            var sbits = b - mbits
            remainingBits -= s.qalloc
            let nextLowband2 = lowband.map { $0 + n }
            var rebalance = remainingBits
            var cm: UInt32
            let sideShift = UInt32(blocks0 >> 1)
            if mbits >= sbits {
                cm = quantPartition(x, n: n, b: mbits, blocks: blocks, lowband: lowband, lm: lm, gain: gain * mid, fill: fill, &rd)
                rebalance = mbits - (rebalance - remainingBits)
                if rebalance > 3 << bitRes && s.itheta != 0 { sbits += rebalance - (3 << bitRes) }
                cm |= quantPartition(y, n: n, b: sbits, blocks: blocks, lowband: nextLowband2, lm: lm, gain: gain * side,
                                     fill: fill >> UInt32(blocks), &rd) << sideShift
            } else {
                cm = quantPartition(y, n: n, b: sbits, blocks: blocks, lowband: nextLowband2, lm: lm, gain: gain * side,
                                    fill: fill >> UInt32(blocks), &rd) << sideShift
                rebalance = sbits - (rebalance - remainingBits)
                if rebalance > 3 << bitRes && s.itheta != 16384 { mbits += rebalance - (3 << bitRes) }
                cm |= quantPartition(x, n: n, b: mbits, blocks: blocks, lowband: lowband, lm: lm, gain: gain * mid, fill: fill, &rd)
            }
            return cm
        }
        var q = CELTAllocation.bitsToPulses(band: band, lm: lm, bits: b)
        var currentBits = CELTAllocation.pulsesToBits(band: band, lm: lm, pulses: q)
        remainingBits -= currentBits
        while remainingBits < 0 && q > 0 {
            remainingBits += currentBits
            q -= 1
            currentBits = CELTAllocation.pulsesToBits(band: band, lm: lm, pulses: q)
            remainingBits -= currentBits
        }
        if q != 0 {
            let k = CELTAllocation.pulses(forPseudo: q)
            return CELTPVQ.unquantize(x, n: n, k: k, spread: spread, blocks: blocks, &rd, gain: gain, scratch: pulses)
        }
        let mask: UInt32 = (1 << UInt32(blocks)) - 1
        fill &= mask
        if fill == 0 {
            x.update(repeating: 0, count: n)
            return 0
        }
        var cm: UInt32
        if let lowband {
            for j in 0..<n {
                seed = Self.lcg(seed)
                x[j] = lowband[j] + (seed & 0x8000 != 0 ? 1.0 / 256 : -1.0 / 256)
            }
            cm = fill
        } else {
            for j in 0..<n {
                seed = Self.lcg(seed)
                x[j] = Float(Int32(bitPattern: seed) >> 20)
            }
            cm = mask
        }
        CELTPVQ.renormalize(x, n: n, gain: gain)
        return cm
    }

    private static func haar1(_ x: UnsafeMutablePointer<Float>, _ n0: Int, _ stride: Int) {
        let h = n0 >> 1
        let s: Float = 0.70710678
        for i in 0..<stride {
            for j in 0..<h {
                let a = stride * 2 * j + i, b = stride * (2 * j + 1) + i
                let t1 = s * x[a], t2 = s * x[b]
                x[a] = t1 + t2
                x[b] = t1 - t2
            }
        }
    }

    private func deinterleaveHadamard(_ x: UnsafeMutablePointer<Float>, _ n0: Int, _ stride: Int, _ hadamard: Bool) {
        let n = n0 * stride
        let tmp = hadamardScratch
        if hadamard {
            let base = stride - 2
            for i in 0..<stride {
                let o = CELTTables.orderyTable[base + i]
                for j in 0..<n0 { tmp[o * n0 + j] = x[j * stride + i] }
            }
        } else {
            for i in 0..<stride { for j in 0..<n0 { tmp[i * n0 + j] = x[j * stride + i] } }
        }
        x.update(from: tmp, count: n)
    }

    private func interleaveHadamard(_ x: UnsafeMutablePointer<Float>, _ n0: Int, _ stride: Int, _ hadamard: Bool) {
        let n = n0 * stride
        let tmp = hadamardScratch
        if hadamard {
            let base = stride - 2
            for i in 0..<stride {
                let o = CELTTables.orderyTable[base + i]
                for j in 0..<n0 { tmp[j * stride + i] = x[o * n0 + j] }
            }
        } else {
            for i in 0..<stride { for j in 0..<n0 { tmp[j * stride + i] = x[i * n0 + j] } }
        }
        x.update(from: tmp, count: n)
    }

    /// quant_band, decoding: one channel's band with its time–frequency changes.
    private func quantBand(_ x: UnsafeMutablePointer<Float>, n: Int, b: Int, blocks bIn: Int,
                           lowband lowbandIn: UnsafeMutablePointer<Float>?, lm: Int, lowbandOut: UnsafeMutablePointer<Float>?,
                           gain: Float, scratch: UnsafeMutablePointer<Float>?, fill fillIn: UInt32,
                           _ rd: inout OpusRangeDecoder) -> UInt32
    {
        let n0 = n
        var nb = n
        var blocks = bIn
        let blocks0In = blocks
        var timeDivide = 0
        var recombine = 0
        let longBlocks = blocks0In == 1
        var fill = fillIn
        var tf = tfChange
        var lowband = lowbandIn
        nb /= blocks
        if n == 1 { return quantBandN1(x, nil, lowbandOut: lowbandOut, &rd) }
        if tf > 0 { recombine = tf }
        if let scratch, let lb = lowband, recombine != 0 || (nb & 1 == 0 && tf < 0) || blocks0In > 1 {
            scratch.update(from: lb, count: n)
            lowband = scratch
        }
        for k in 0..<recombine {
            if let lb = lowband { Self.haar1(lb, n >> k, 1 << k) }
            fill = UInt32(CELTTables.bitInterleave[Int(fill & 0xF)]) | UInt32(CELTTables.bitInterleave[Int((fill >> 4) & 0xF)]) << 2
        }
        blocks >>= recombine
        nb <<= recombine
        while nb & 1 == 0 && tf < 0 {
            if let lb = lowband { Self.haar1(lb, nb, blocks) }
            fill |= fill << UInt32(blocks)
            blocks <<= 1
            nb >>= 1
            timeDivide += 1
            tf += 1
        }
        let blocks0 = blocks
        let nb0 = nb
        if blocks0 > 1, let lb = lowband {
            deinterleaveHadamard(lb, nb >> recombine, blocks0 << recombine, longBlocks)
        }
        var cm = quantPartition(x, n: n, b: b, blocks: blocks, lowband: lowband, lm: lm, gain: gain, fill: fill, &rd)
        if blocks0 > 1 { interleaveHadamard(x, nb >> recombine, blocks0 << recombine, longBlocks) }
        nb = nb0
        blocks = blocks0
        for _ in 0..<timeDivide {
            blocks >>= 1
            nb <<= 1
            cm |= cm >> UInt32(blocks)
            Self.haar1(x, nb, blocks)
        }
        for k in 0..<recombine {
            cm = UInt32(CELTTables.bitDeinterleave[Int(cm & 0xF)])
            Self.haar1(x, n0 >> k, 1 << k)
        }
        blocks <<= recombine
        if let lowbandOut {
            let scale = sqrtf(Float(n0))
            for j in 0..<n0 { lowbandOut[j] = scale * x[j] }
        }
        cm &= (1 << UInt32(blocks)) - 1
        return cm
    }

    /// quant_band_stereo, decoding.
    private func quantBandStereo(_ x: UnsafeMutablePointer<Float>, _ y: UnsafeMutablePointer<Float>, n: Int, b bIn: Int,
                                 blocks: Int, lowband: UnsafeMutablePointer<Float>?, lm: Int,
                                 lowbandOut: UnsafeMutablePointer<Float>?, scratch: UnsafeMutablePointer<Float>?,
                                 fill fillIn: UInt32, _ rd: inout OpusRangeDecoder) -> UInt32
    {
        if n == 1 { return quantBandN1(x, y, lowbandOut: lowbandOut, &rd) }
        var b = bIn
        let originalFill = fillIn
        var fill = fillIn
        let s = computeTheta(n: n, b: &b, blocks: blocks, blocks0: blocks, lm: lm, stereo: true, fill: &fill, &rd)
        let mid = Float(s.imid) / 32768, side = Float(s.iside) / 32768
        var cm: UInt32
        if n == 2 {
            var mbits = b
            var sbits = 0
            if s.itheta != 0 && s.itheta != 16384 { sbits = 1 << bitRes }
            mbits -= sbits
            let swap = s.itheta > 8192
            remainingBits -= s.qalloc + sbits
            let x2 = swap ? y : x, y2 = swap ? x : y
            var sign: Float = 1
            if sbits != 0 { sign = rd.decodeBits(1) != 0 ? -1 : 1 }
            cm = quantBand(x2, n: n, b: mbits, blocks: blocks, lowband: lowband, lm: lm, lowbandOut: lowbandOut, gain: 1,
                           scratch: scratch, fill: originalFill, &rd)
            y2[0] = -sign * x2[1]
            y2[1] = sign * x2[0]
            x[0] *= mid; x[1] *= mid
            y[0] *= side; y[1] *= side
            var t = x[0]
            x[0] = t - y[0]; y[0] = t + y[0]
            t = x[1]
            x[1] = t - y[1]; y[1] = t + y[1]
        } else {
            var mbits = max(0, min(b, (b - s.delta) / 2))
            var sbits = b - mbits
            remainingBits -= s.qalloc
            var rebalance = remainingBits
            if mbits >= sbits {
                cm = quantBand(x, n: n, b: mbits, blocks: blocks, lowband: lowband, lm: lm, lowbandOut: lowbandOut, gain: 1,
                               scratch: scratch, fill: fill, &rd)
                rebalance = mbits - (rebalance - remainingBits)
                if rebalance > 3 << bitRes && s.itheta != 0 { sbits += rebalance - (3 << bitRes) }
                cm |= quantBand(y, n: n, b: sbits, blocks: blocks, lowband: nil, lm: lm, lowbandOut: nil, gain: side,
                                scratch: nil, fill: fill >> UInt32(blocks), &rd)
            } else {
                cm = quantBand(y, n: n, b: sbits, blocks: blocks, lowband: nil, lm: lm, lowbandOut: nil, gain: side,
                               scratch: nil, fill: fill >> UInt32(blocks), &rd)
                rebalance = sbits - (rebalance - remainingBits)
                if rebalance > 3 << bitRes && s.itheta != 16384 { mbits += rebalance - (3 << bitRes) }
                cm |= quantBand(x, n: n, b: mbits, blocks: blocks, lowband: lowband, lm: lm, lowbandOut: lowbandOut, gain: 1,
                                scratch: scratch, fill: fill, &rd)
            }
        }
        if n != 2 { Self.stereoMerge(x, y, mid: mid, n: n) }
        if s.inv { for j in 0..<n { y[j] = -y[j] } }
        return cm
    }

    private static func stereoMerge(_ x: UnsafeMutablePointer<Float>, _ y: UnsafeMutablePointer<Float>, mid: Float, n: Int) {
        var xp: Float = 0, side: Float = 0
        for j in 0..<n {
            xp += y[j] * x[j]
            side += y[j] * y[j]
        }
        xp *= mid
        let el = mid * mid + side - 2 * xp
        let er = mid * mid + side + 2 * xp
        if er < 6e-4 || el < 6e-4 {
            y.update(from: x, count: n)
            return
        }
        let lgain = 1 / sqrtf(el), rgain = 1 / sqrtf(er)
        for j in 0..<n {
            let l = mid * x[j], r = y[j]
            x[j] = lgain * (l - r)
            y[j] = rgain * (l + r)
        }
    }
}

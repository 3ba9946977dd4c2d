/// CELT's band energies (RFC 6716 §4.3.2), in log2 units: the coarse 6 dB steps with the
/// Laplace model and inter-frame/inter-band prediction, the fine refinement, and the final
/// bits left over at the end of the frame. `energy` holds 21 bands per channel.
enum CELTEnergy {
    /// §4.3.2.1, ec_laplace_decode: a signed value from the Laplace-like model with
    /// probability `fs` (of 32768) for 0 and decay `decay` (Q14).
    static func decodeLaplace(_ rd: inout OpusRangeDecoder, fs fs0: UInt32, decay: UInt32) -> Int {
        let minP: UInt32 = 1
        var fs = fs0
        var value = 0
        let fm = rd.decodeBin(15)
        var fl: UInt32 = 0
        if fm >= fs {
            value += 1
            fl = fs
            fs = ((32768 - 2 * 16 * minP - fs0) &* (16384 - decay)) >> 15 + minP
            while fs > minP, fm >= fl + 2 * fs {
                fs *= 2
                fl += fs
                fs = ((fs - 2 * minP) &* decay) >> 15 + minP
                value += 1
            }
            if fs <= minP {
                let di = (fm - fl) >> 1
                value += Int(di)
                fl += 2 * di * minP
            }
            if fm < fl + fs {
                value = -value
            } else {
                fl += fs
            }
        }
        rd.update(fl, min(fl + fs, 32768), 32768)
        return value
    }

    /// §4.3.2.1: the coarse energies of bands start ..< end.
    static func decodeCoarse(_ energy: UnsafeMutablePointer<Float>, start: Int, end: Int, intra: Bool, channels: Int,
                             lm: Int, _ rd: inout OpusRangeDecoder)
    {
        let coef: Float = intra ? 0 : CELTTables.predictionCoefficient[lm]
        let beta: Float = intra ? CELTTables.betaIntra : CELTTables.betaCoefficient[lm]
        var prev: (Float, Float) = (0, 0)
        let budget = rd.storage * 8
        let model = (lm * 2 + (intra ? 1 : 0)) * 42
        CELTTables.energyProbabilityModel.withUnsafeBufferPointer { probabilities in
            for i in start..<end {
                for c in 0..<channels {
                    let tell = rd.tell()
                    var qi: Int
                    if budget - tell >= 15 {
                        let pi = model + 2 * min(i, 20)
                        qi = decodeLaplace(&rd, fs: UInt32(probabilities[pi]) << 7, decay: UInt32(probabilities[pi + 1]) << 6)
                    } else if budget - tell >= 2 {
                        qi = CELTTables.smallEnergyICDF.withUnsafeBufferPointer { rd.decodeICDF($0, bits: 2) }
                        qi = (qi >> 1) ^ -(qi & 1)
                    } else if budget - tell >= 1 {
                        qi = rd.decodeBit(logp: 1) ? -1 : 0
                    } else {
                        qi = -1
                    }
                    let q = Float(qi)
                    let index = i + c * CELTTables.bandCount
                    let old = max(-9, energy[index])
                    let p = c == 0 ? prev.0 : prev.1
                    energy[index] = coef * old + p + q
                    let next = p + q - beta * q
                    if c == 0 { prev.0 = next } else { prev.1 = next }
                }
            }
        }
    }

    /// §4.3.2.2: the fine energy bits.
    static func decodeFine(_ energy: UnsafeMutablePointer<Float>, start: Int, end: Int, fineQuant: UnsafePointer<Int>,
                           channels: Int, _ rd: inout OpusRangeDecoder)
    {
        for i in start..<end where fineQuant[i] > 0 {
            let bits = fineQuant[i]
            for c in 0..<channels {
                let q2 = rd.decodeBits(bits)
                let step = Float(1 << (14 - bits)) * (1 / 16384 as Float)
                let offset: Float = (Float(q2) + 0.5) * step - 0.5
                energy[i + c * CELTTables.bandCount] += offset
            }
        }
    }

    /// §4.3.2.2: one more bit for bands by priority, from the bits left at the end.
    static func decodeFinal(_ energy: UnsafeMutablePointer<Float>, start: Int, end: Int, fineQuant: UnsafePointer<Int>,
                            finePriority: UnsafePointer<Int>, bitsLeft: Int, channels: Int, _ rd: inout OpusRangeDecoder)
    {
        var left = bitsLeft
        for priority in 0..<2 {
            var i = start
            while i < end, left >= channels {
                defer { i += 1 }
                if fineQuant[i] >= CELTTables.maxFineBits || finePriority[i] != priority { continue }
                for c in 0..<channels {
                    let q2 = rd.decodeBits(1)
                    let step = Float(1 << (14 - fineQuant[i] - 1)) * (1 / 16384 as Float)
                    let offset: Float = (Float(q2) - 0.5) * step
                    energy[i + c * CELTTables.bandCount] += offset
                    left -= 1
                }
            }
        }
    }
}

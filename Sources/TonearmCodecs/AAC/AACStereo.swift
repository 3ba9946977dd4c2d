import TonearmCore

/// The joint stereo tools of a channel pair (M/S, intensity), on the
/// dequantised spectra.
enum AACStereo {
    /// ms_used per group × 64 bands, from ms_mask_present: 0 none, 1 per band, 2 all.
    static func readMask(_ r: inout AACBits, present: Int, info: AACICSInfo, into mask: inout [Bool]) {
        for g in 0..<info.groupCount {
            for b in 0..<info.maxSFB { mask[g * 64 + b] = present == 2 ? true : present == 1 ? r.bit() : false }
        }
    }

    /// l = m + s, r = m − s in the bands that use M/S and are coded in both channels (not
    /// noise, not intensity), as FFmpeg does: it does not give M/S noise bands the shared
    /// noise the standard describes, and a decode that matches its output does not either.
    /// Returns the number of bands (per group) it applied to.
    static func midSide(_ left: AACChannelStream, _ right: AACChannelStream, mask: [Bool], bands: [Int]) -> Int {
        let info = left.info
        let leftTypes = left.bandTypes, rightTypes = right.bandTypes
        let l = left.spectrum, r = right.spectrum
        var window = 0, applied = 0
        mask.withUnsafeBufferPointer { mask in
            for g in 0..<info.groupCount {
                let length = info.groupLength(g)
                for b in 0..<info.maxSFB where mask[g * 64 + b] {
                    guard leftTypes[g * 64 + b] < AACBandType.noise, rightTypes[g * 64 + b] < AACBandType.noise else { continue }
                    applied += 1
                    for w in window..<window + length {
                        var k = w * 128 + bands[b]
                        let end = w * 128 + bands[b + 1]
                        // Band edges are multiples of 4: four lines at a time.
                        while k + 4 <= end {
                            let m = loadFloat4(l + k)
                            let s = loadFloat4(r + k)
                            storeFloats(m + s, l + k)
                            storeFloats(m - s, r + k)
                            k += 4
                        }
                        while k < end {
                            let m = l[k], s = r[k]
                            l[k] = m + s
                            r[k] = m - s
                            k += 1
                        }
                    }
                }
                window += length
            }
        }
        return applied
    }

    /// The right channel's intensity bands: the left spectrum scaled by the band's intensity
    /// gain, inverted for codebook 14 and, where M/S is signalled, for ms_used (FFmpeg
    /// inverts for ms_mask_present 2 too, where every band counts as used).
    static func intensity(_ left: AACChannelStream, _ right: AACChannelStream, msPresent: Int, mask: [Bool], bands: [Int]) {
        let info = right.info
        var window = 0
        for g in 0..<info.groupCount {
            let length = info.groupLength(g)
            for b in 0..<info.maxSFB {
                let type = right.bandTypes[g * 64 + b]
                guard type == AACBandType.intensityInPhase || type == AACBandType.intensityOutOfPhase else { continue }
                var scale = right.gains[g * 64 + b]
                if type == AACBandType.intensityOutOfPhase { scale = -scale }
                if msPresent != 0 && mask[g * 64 + b] { scale = -scale }
                for w in window..<window + length {
                    let l = left.spectrum + w * 128, r = right.spectrum + w * 128
                    for k in bands[b]..<bands[b + 1] { r[k] = l[k] * scale }
                }
            }
            window += length
        }
    }
}

/// Temporal noise shaping: an all-pole filter run over parts of the spectrum,
/// or its inverse (the encoder's all-zero filter) for AAC LTP's predicted spectrum.
enum AACTNS {
    static func apply(_ s: AACChannelStream, _ t: AACStreamTables) {
        apply(s, t, to: s.spectrum, analysis: false)
    }

    static func apply(_ s: AACChannelStream, _ t: AACStreamTables, to spectrum: UnsafeMutablePointer<Float>, analysis: Bool) {
        guard s.tns.present else { return }
        let info = s.info
        let bands = t.bands(info)
        let bandCount = bands.count - 1
        let maxBands = min(info.isShort ? t.tnsMaxBandsShort : t.tnsMaxBandsLong, info.maxSFB)
        var state = [Float](repeating: 0, count: 20)
        for w in 0..<info.windowCount {
            var bottom = bandCount
            for f in 0..<s.tns.filterCount[w] {
                let k = w * 4 + f
                let top = bottom
                bottom = max(top - s.tns.length[k], 0)
                let order = s.tns.order[k]
                guard order > 0 else { continue }
                let start = bands[min(bottom, maxBands)], end = bands[min(top, maxBands)]
                guard end > start else { continue }
                let x = spectrum + w * 128
                var i = s.tns.downward[k] ? end - 1 : start
                let step = s.tns.downward[k] ? -1 : 1
                for j in 0..<order { state[j] = 0 }
                s.tns.lpc.withUnsafeBufferPointer { a in
                    let lpc = a.baseAddress! + k * 20
                    for _ in start..<end {
                        let input = x[i]
                        var y = input
                        // Decoding: y = x − Σ a·y (past outputs); analysis: y = x + Σ a·x (past inputs).
                        if analysis {
                            for j in 0..<order { y += lpc[j] * state[j] }
                        } else {
                            for j in 0..<order { y -= lpc[j] * state[j] }
                        }
                        var j = order - 1
                        while j > 0 { state[j] = state[j - 1]; j -= 1 }
                        state[0] = analysis ? input : y
                        x[i] = y
                        i += step
                    }
                }
            }
        }
    }
}

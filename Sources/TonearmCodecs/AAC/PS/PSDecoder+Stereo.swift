import TonearmCore
// Stereo processing (ISO/IEC 14496-3 §8.6.4): per parameter band and envelope, a 2 × 2
// matrix H mixes the mono signal s and the decorrelated d into left and right,
//   l = H11·s + H21·d,  r = H12·s + H22·d,
// from the IID and ICC (mixing procedure R_a for icc_mode 0–2, R_b for 3–5) and, with
// IPD/OPD, rotated by the smoothed phases: H11 and H21 by the OPD, H12 and H22 by OPD − IPD.
// Across each envelope the matrix moves linearly from the last envelope's value (the last
// frame's for the first) to its own, reached at the envelope's last slot.

extension PSDecoder {
    /// Mixes the hybrid bands below `top`: the mono signal (the delay lines' frame) and the
    /// decorrelated one into ``PSWork/leftRe`` and ``PSWork/rightRe`` (in place).
    func mix(_ p: PSParameters, top: Int) {
        let w = work, is34 = p.is34
        let parameterBands = is34 ? 34 : 20, phaseBands = is34 ? 17 : 11
        let bands = PSHybrid.bandCount(is34: is34)
        let bandOf = is34 ? PSTables.bandOfHybrid34 : PSTables.bandOfHybrid20
        let row = 34, coefficient = 6 * 34

        // Row 0: the last frame's last envelope.
        if p.previousEnvelopeCount > 0 {
            for c in 0..<4 {
                let base = c * coefficient
                (w.hRe + base).update(from: w.hRe + base + p.previousEnvelopeCount * row, count: row)
                (w.hIm + base).update(from: w.hIm + base + p.previousEnvelopeCount * row, count: row)
            }
        }
        let envelopes = p.envelopeCount
        Self.map(p.iid, from: p.iidBands, is34: is34, full: true, envelopes: envelopes, into: w.iid)
        Self.map(p.icc, from: p.iccBands, is34: is34, full: true, envelopes: envelopes, into: w.icc)
        if p.enableIPDOPD {
            Self.map(p.ipd, from: p.ipdBands, is34: is34, full: false, envelopes: envelopes, into: w.ipd)
            Self.map(p.opd, from: p.ipdBands, is34: is34, full: false, envelopes: envelopes, into: w.opd)
        }
        if is34 != p.was34 {
            // The last frame's matrices to this frame's resolution; the phase history restarts.
            let table = is34 ? PSTables.map20To34 : PSTables.map34To20
            var v = [Float](repeating: 0, count: 34)
            for h in [w.hRe, w.hIm] {
                for c in 0..<4 {
                    let r = h + c * coefficient
                    for (b, sources) in table.enumerated() {
                        v[b] = sources.reduce(0) { $0 + r[$1] } / Float(sources.count)
                    }
                    r.update(from: v, count: table.count)
                }
            }
            for i in 0..<17 { w.ipdHistory[i] = 0; w.opdHistory[i] = 0 }
        }

        let table = p.procedureB ? (p.fineIID ? PSTables.mixingBFine : PSTables.mixingB)
            : (p.fineIID ? PSTables.mixingAFine : PSTables.mixingA)
        let iidOffset = p.fineIID ? 15 : 7, iidSteps = p.fineIID ? 31 : 15
        let phase = PSTables.smoothedPhase
        for e in 0..<envelopes {
            for b in 0..<parameterBands {
                let iid = min(max(w.iid[e * 34 + b] + iidOffset, 0), iidSteps - 1)
                let icc = min(max(w.icc[e * 34 + b], 0), 7)
                let t = (iid * 8 + icc) * 4
                var h = (table[t], table[t + 1], table[t + 2], table[t + 3])
                if p.enableIPDOPD && b < phaseBands {
                    let o = w.opdHistory[b] * 8 + w.opd[e * 34 + b] & 7
                    let i = w.ipdHistory[b] * 8 + w.ipd[e * 34 + b] & 7
                    w.opdHistory[b] = o & 0x3F
                    w.ipdHistory[b] = i & 0x3F
                    let opd = (re: phase[2 * o], im: phase[2 * o + 1]), ipd = (re: phase[2 * i], im: phase[2 * i + 1])
                    // OPD − IPD.
                    let diff = (re: opd.re * ipd.re + opd.im * ipd.im, im: opd.im * ipd.re - opd.re * ipd.im)
                    let at = (e + 1) * row + b
                    w.hIm[at] = h.0 * opd.im
                    w.hIm[coefficient + at] = h.1 * diff.im
                    w.hIm[2 * coefficient + at] = h.2 * opd.im
                    w.hIm[3 * coefficient + at] = h.3 * diff.im
                    h = (h.0 * opd.re, h.1 * diff.re, h.2 * opd.re, h.3 * diff.re)
                }
                let at = (e + 1) * row + b
                w.hRe[at] = h.0
                w.hRe[coefficient + at] = h.1
                w.hRe[2 * coefficient + at] = h.2
                w.hRe[3 * coefficient + at] = h.3
            }
        }

        // The matrices of each parameter band at each slot: across envelope e (slots
        // borders[e] + 1 … borders[e + 1]) from row e to row e + 1, reached at its last slot.
        let phased = p.enableIPDOPD
        let coefficients = w.coefficients
        let rowCount = phased ? 8 : 4
        let ramp = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        for e in 0..<envelopes {
            let start = p.borders[e], stop = p.borders[e + 1]
            let first = max(start + 1, 0), last = min(stop, 31)
            guard stop > start, first <= last else { continue }
            let width = 1 / Float(stop - start)
            for b in 0..<parameterBands {
                // The 8 coefficients of the band a lane each (real parts, then imaginary).
                var from = SIMD8<Float>(), to = from
                for c in 0..<4 {
                    let at = c * coefficient + e * row + b
                    from[c] = w.hRe[at]; to[c] = w.hRe[at + row]
                    from[4 + c] = w.hIm[at]; to[4 + c] = w.hIm[at + row]
                }
                let step = (to - from) * width
                let rows = coefficients + b * 8 * 32
                var n = first
                while n + 8 <= last + 1 {
                    let t = Float(n - start) + ramp
                    for c in 0..<rowCount { storeFloats(from[c] + step[c] * t, rows + c * 32 + n) }
                    n += 8
                }
                while n <= last {
                    let t = Float(n - start)
                    for c in 0..<rowCount { rows[c * 32 + n] = from[c] + step[c] * t }
                    n += 1
                }
            }
        }

        let top = min(max(top, 0), bands)
        let span = PSWork.delaySpan, history = PSWork.history
        bandOf.withUnsafeBufferPointer { bandOf in
            for k in 0..<top {
                let b = bandOf[k]
                var h = UnsafePointer(coefficients + b * 8 * 32)
                if phased && (is34 ? (9...13).contains(k) : k <= 1) {
                    // The imaginary parts start each envelope negated.
                    let n = w.negated
                    n.update(from: h, count: 4 * 32)
                    for e in 0..<envelopes {
                        for c in 0..<4 {
                            let from = c * coefficient + e * row + b
                            Self.interpolate(-w.hIm[from], w.hIm[from + row], p.borders[e], p.borders[e + 1], into: n + (4 + c) * 32)
                        }
                    }
                    h = UnsafePointer(n)
                }
                let sRe = w.delayRe + k * span + history, sIm = w.delayIm + k * span + history
                let lRe = w.leftRe + k * 32, lIm = w.leftIm + k * 32
                let dRe = w.rightRe + k * 32, dIm = w.rightIm + k * 32
                for n in stride(from: 0, to: 32, by: 8) {
                    let sr = loadFloat8(sRe + n), si = loadFloat8(sIm + n), dr = loadFloat8(dRe + n), di = loadFloat8(dIm + n)
                    let h11 = loadFloat8(h + n), h12 = loadFloat8(h + 32 + n), h21 = loadFloat8(h + 64 + n), h22 = loadFloat8(h + 96 + n)
                    var lr = h11 * sr + h21 * dr, li = h11 * si + h21 * di
                    var rr = h12 * sr + h22 * dr, ri = h12 * si + h22 * di
                    if phased {
                        let j11 = loadFloat8(h + 128 + n), j12 = loadFloat8(h + 160 + n)
                        let j21 = loadFloat8(h + 192 + n), j22 = loadFloat8(h + 224 + n)
                        lr -= j11 * si + j21 * di
                        li += j11 * sr + j21 * dr
                        rr -= j12 * si + j22 * di
                        ri += j12 * sr + j22 * dr
                    }
                    storeFloats(lr, lRe + n)
                    storeFloats(li, lIm + n)
                    storeFloats(rr, dRe + n)
                    storeFloats(ri, dIm + n)
                }
            }
        }
    }

    /// One coefficient across an envelope: from `from` at slot `start` (the last envelope's
    /// end) linearly to `to` at slot `stop`, written at slots start + 1 … stop of `row`.
    @inline(__always)
    static func interpolate(_ from: Float, _ to: Float, _ start: Int, _ stop: Int, into row: UnsafeMutablePointer<Float>) {
        let first = max(start + 1, 0), last = min(stop, 31)
        guard first <= last else { return }
        let step = (to - from) / Float(stop - start)
        var n = first
        let ramp = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        while n + 8 <= last + 1 {
            storeFloats(from + step * (Float(n - start) + ramp), row + n)
            n += 8
        }
        while n <= last {
            row[n] = from + step * Float(n - start)
            n += 1
        }
    }

    /// Indices coded at `from` parameter bands (10, 20 or 34; 5, 11 or 17 for IPD/OPD) at
    /// the frame's resolution (20 or 34 bands; the first 11 or 17 when not `full`), each the
    /// mean of its sources truncated toward zero (the index mapping of §8.6.4); a band whose source
    /// was not coded is 0.
    static func map(_ values: [Int8], from: Int, is34: Bool, full: Bool, envelopes: Int, into out: UnsafeMutablePointer<Int>) {
        let source = from == 5 || from == 10 ? 10 : from == 11 || from == 20 ? 20 : 34
        let target = is34 ? 34 : 20
        let count = full ? target : (is34 ? 17 : 11)
        let table: [[Int]]? = source == target ? nil
            : is34 ? (source == 10 ? PSTables.map10To34 : PSTables.map20To34)
            : (source == 10 ? PSTables.map10To20 : PSTables.map34To20)
        for e in 0..<envelopes {
            let v = e * 34
            for b in 0..<count {
                guard let table else { out[v + b] = Int(values[v + b]); continue }
                let sources = table[b]
                if sources.contains(where: { $0 >= from }) {
                    out[v + b] = 0
                } else {
                    out[v + b] = sources.reduce(0) { $0 + Int(values[v + $1]) } / sources.count
                }
            }
        }
    }
}

// Stereo processing (ISO/IEC 14496-3 §8.6.4): per parameter band and envelope, a 2 × 2
// matrix H mixes the mono signal s and the decorrelated d into left and right,
//   l = H11·s + H21·d,  r = H12·s + H22·d,
// from the IID and ICC (mixing procedure R_a for icc_mode 0–2, R_b for 3–5) and, with
// IPD/OPD, rotated by the smoothed phases: H11 and H21 by the OPD, H12 and H22 by OPD − IPD.
// Across each envelope the matrix moves linearly from the last envelope's value (the last
// frame's for the first) to its own, reached at the envelope's last slot.

extension PSDecoder {
    func mix(_ p: PSParameters) {
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
        Self.map(p.iid, from: p.iidBands, is34: is34, full: true, envelopes: envelopes, into: &w.iid)
        Self.map(p.icc, from: p.iccBands, is34: is34, full: true, envelopes: envelopes, into: &w.icc)
        if p.enableIPDOPD {
            Self.map(p.ipd, from: p.ipdBands, is34: is34, full: false, envelopes: envelopes, into: &w.ipd)
            Self.map(p.opd, from: p.ipdBands, is34: is34, full: false, envelopes: envelopes, into: &w.opd)
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

            let start = p.borders[e], stop = p.borders[e + 1]
            guard stop > start else { continue }
            let width = 1 / Float(stop - start)
            for k in 0..<bands {
                let b = bandOf[k]
                var hr = SIMD4<Float>(), stepRe = hr, hi = hr, stepIm = hr
                for c in 0..<4 {
                    let from = c * coefficient + e * row + b
                    hr[c] = w.hRe[from]
                    stepRe[c] = (w.hRe[from + row] - hr[c]) * width
                }
                let sRe = w.leftRe + k * 32, sIm = w.leftIm + k * 32
                let dRe = w.rightRe + k * 32, dIm = w.rightIm + k * 32
                if p.enableIPDOPD {
                    let negated = is34 ? (9...13).contains(k) : k <= 1
                    for c in 0..<4 {
                        let from = c * coefficient + e * row + b
                        hi[c] = negated ? -w.hIm[from] : w.hIm[from]
                        stepIm[c] = (w.hIm[from + row] - hi[c]) * width
                    }
                    for n in start + 1...stop {
                        hr += stepRe
                        hi += stepIm
                        let lr = sRe[n], li = sIm[n], rr = dRe[n], ri = dIm[n]
                        sRe[n] = hr[0] * lr + hr[2] * rr - hi[0] * li - hi[2] * ri
                        sIm[n] = hr[0] * li + hr[2] * ri + hi[0] * lr + hi[2] * rr
                        dRe[n] = hr[1] * lr + hr[3] * rr - hi[1] * li - hi[3] * ri
                        dIm[n] = hr[1] * li + hr[3] * ri + hi[1] * lr + hi[3] * rr
                    }
                } else {
                    for n in start + 1...stop {
                        hr += stepRe
                        let lr = sRe[n], li = sIm[n], rr = dRe[n], ri = dIm[n]
                        sRe[n] = hr[0] * lr + hr[2] * rr
                        sIm[n] = hr[0] * li + hr[2] * ri
                        dRe[n] = hr[1] * lr + hr[3] * rr
                        dIm[n] = hr[1] * li + hr[3] * ri
                    }
                }
            }
        }
    }

    /// Indices coded at `from` parameter bands (10, 20 or 34; 5, 11 or 17 for IPD/OPD) at
    /// the frame's resolution (20 or 34 bands; the first 11 or 17 when not `full`), each the
    /// mean of its sources truncated toward zero (the index mapping of §8.6.4); a band whose source
    /// was not coded is 0.
    static func map(_ values: [Int8], from: Int, is34: Bool, full: Bool, envelopes: Int, into out: inout [Int]) {
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

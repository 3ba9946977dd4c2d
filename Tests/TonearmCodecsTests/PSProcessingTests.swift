import Foundation
import XCTest
@testable import TonearmCodecs

/// The signal path of parametric stereo (ISO/IEC 14496-3 §8.6.4): the hybrid filter
/// bank, the decorrelator and the mixing, each against what the standard defines.
final class PSProcessingTests: XCTestCase {
    /// A QMF matrix, 38 slots × 64 bands slot-major, for the decoder's input.
    struct Matrix {
        var re = [Float](repeating: 0, count: 38 * 64)
        var im = [Float](repeating: 0, count: 38 * 64)
    }

    /// Deterministic noise in −1…1.
    struct Noise {
        var state: UInt64 = 0x9E3779B97F4A7C15
        mutating func next() -> Float {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: state) >> 40) / Float(1 << 23)
        }
    }

    /// Analysis then synthesis gives the input back, with no delay, at both configurations
    /// (the filters of each split sum to the middle tap alone).
    func testHybridAnalysisThenSynthesisIsTransparent() {
        for is34 in [false, true] {
            let h = PSHybrid()
            var noise = Noise()
            var frames = [Matrix]()
            for _ in 0..<4 {
                var m = Matrix()
                for i in 0..<(32 * 64) { m.re[i] = noise.next(); m.im[i] = noise.next() }
                frames.append(m)
            }
            // Slots 32…37 are the next frame's first 6.
            for f in 0..<3 {
                for s in 0..<6 {
                    for b in 0..<64 {
                        frames[f].re[(32 + s) * 64 + b] = frames[f + 1].re[s * 64 + b]
                        frames[f].im[(32 + s) * 64 + b] = frames[f + 1].im[s * 64 + b]
                    }
                }
            }
            var hre = [Float](repeating: 0, count: 91 * 32), him = hre
            var ore = [Float](repeating: 0, count: 32 * 64), oim = ore
            var worst: Float = 0
            for f in 0..<3 {
                h.analyze(re: frames[f].re, im: frames[f].im, is34: is34, outRe: &hre, outIm: &him)
                PSHybrid.synthesize(re: hre, im: him, is34: is34, outRe: &ore, outIm: &oim)
                // The first frame lacks its 6 slots of history (zeros) in the split bands.
                let from = f == 0 ? 6 : 0
                for s in from..<32 {
                    for b in 0..<64 {
                        worst = max(worst, abs(ore[s * 64 + b] - frames[f].re[s * 64 + b]),
                                    abs(oim[s * 64 + b] - frames[f].im[s * 64 + b]))
                    }
                }
            }
            XCTAssertLessThan(worst, 2e-6, "34 bands: \(is34)")
        }
    }

    /// A complex tone at the centre frequency of each hybrid band comes out of that band with
    /// the gain of its filter, Σ g(n) (the prototype's DC gain), in phase with the tone (the
    /// filter is centred), and out of the split's other bands at under 13 % of that.
    func testHybridBandsSelectTheirFrequencies() {
        // Per case: the configuration, the QMF band, its first hybrid band, the hybrid bands'
        // centres in cycles a slot, in order, and the prototype's gain.
        let g8 = PSTables.prototype8, g12 = PSTables.prototype12, g4 = PSTables.prototype4, g2 = PSTables.prototype2
        func gain(_ g: [Double]) -> Double { 2 * g[0..<6].reduce(0, +) + g[6] }
        struct Case { var is34: Bool; var qmf: Int; var first: Int; var centres: [Double]; var dc: Double }
        let cases = [
            // 10/20: hybrid 0, 1 at −3/16 and −1/16 (the 8-band split's bands 6, 7), 2, 3 at
            // 1/16, 3/16; 4 and 5, sums of two bands each, are not probed.
            Case(is34: false, qmf: 0, first: 0, centres: [-3.0 / 16, -1.0 / 16, 1.0 / 16, 3.0 / 16], dc: gain(g8)),
            // The 2-band real splits: band 1's high half first, band 2's low half first.
            Case(is34: false, qmf: 1, first: 6, centres: [0.5, 0], dc: gain(g2)),
            Case(is34: false, qmf: 2, first: 8, centres: [0, 0.5], dc: gain(g2)),
            Case(is34: true, qmf: 0, first: 0, centres: (0..<12).map { (Double($0) + 0.5) / 12 }, dc: gain(g12)),
            Case(is34: true, qmf: 2, first: 20, centres: (0..<4).map { (Double($0) + 0.5) / 4 }, dc: gain(g4)),
        ]
        for c in cases {
            for (j, f) in c.centres.enumerated() {
                let h = PSHybrid()
                var m = Matrix()
                for s in 0..<38 {
                    m.re[s * 64 + c.qmf] = Float(cos(2 * Double.pi * f * Double(s)))
                    m.im[s * 64 + c.qmf] = Float(sin(2 * Double.pi * f * Double(s)))
                }
                var hre = [Float](repeating: 0, count: 91 * 32), him = hre
                h.analyze(re: m.re, im: m.im, is34: c.is34, outRe: &hre, outIm: &him)
                // Slot 20: the filter sees the tone on all its 13 taps.
                let n = 20
                func magnitude(_ k: Int) -> Double { Double(hypot(hre[k * 32 + n], him[k * 32 + n])) }
                let k = c.first + j
                // The real 2-band filter at DC passes g's sum; at 0.5 cycles its high half does.
                XCTAssertEqual(magnitude(k), c.dc, accuracy: 1e-5, "\(c.is34) QMF \(c.qmf) band \(k)")
                // Its phase is the tone's at slot n: the filter is centred.
                let phase = Double(atan2(him[k * 32 + n], hre[k * 32 + n]))
                XCTAssertEqual(remainder(phase - 2 * Double.pi * f * Double(n), 2 * Double.pi), 0, accuracy: 1e-4)
                // 13 taps for up to 12 bands: the neighbours leak up to 13 % of the gain.
                for other in c.first..<(c.first + c.centres.count) where other != k {
                    XCTAssertLessThan(magnitude(other), 0.13 * c.dc, "\(c.is34) QMF \(c.qmf) band \(other) for \(k)")
                }
            }
        }
    }

    /// A stationary tone keeps the transient detector's gain at 1, so the delay-only bands
    /// give the input delayed by exactly 14 slots (hybrid bands 30…41 at 20 bands) or 1 (42…).
    func testDecorrelatorDelays() {
        for (k, delay) in [(32, 14), (47, 1), (55, 14), (70, 1)] {
            let d = PSDecoder()
            let is34 = k > 50
            d.parameters.is34 = is34
            d.parameters.was34 = is34
            for frame in 0..<3 {
                for n in 0..<32 {
                    let t = Double(frame * 32 + n)
                    d.work.leftRe[k * 32 + n] = Float(cos(0.3 * t))
                    d.work.leftIm[k * 32 + n] = Float(sin(0.3 * t))
                }
                d.decorrelate(d.parameters)
                for n in 0..<32 where frame * 32 + n >= delay {
                    let t = Double(frame * 32 + n - delay)
                    XCTAssertEqual(Double(d.work.rightRe[k * 32 + n]), cos(0.3 * t), accuracy: 1e-6, "band \(k) slot \(n)")
                    XCTAssertEqual(Double(d.work.rightIm[k * 32 + n]), sin(0.3 * t), accuracy: 1e-6, "band \(k) slot \(n)")
                }
            }
        }
    }

    /// The all-pass bands: an impulse in hybrid band k, through the decorrelator, against the
    /// filter the standard writes, evaluated here sample by sample in double precision:
    /// H(z) = z^−2 · φ_fract · Π_m (Q_fract(m)·z^−d(m) − a(m)·g) / (1 − a(m)·g·Q_fract(m)·z^−d(m)).
    func testAllpassChainImpulseResponse() {
        for (is34, k) in [(false, 3), (false, 12), (false, 25), (true, 7), (true, 40)] {
            let d = PSDecoder()
            d.parameters.headerSeen = true
            d.parameters.is34 = is34
            d.parameters.was34 = is34
            let bands = PSHybrid.bandCount(is34: is34)
            var response = [(re: Double, im: Double)]()
            for frame in 0..<3 {
                for i in 0..<(bands * 32) { d.work.leftRe[i] = 0; d.work.leftIm[i] = 0 }
                // The detector attenuates after the impulse: its gain is taken out below.
                if frame == 0 { d.work.leftRe[k * 32] = 1 }
                d.decorrelate(d.parameters)
                for n in 0..<32 {
                    let b = (is34 ? PSTables.bandOfHybrid34 : PSTables.bandOfHybrid20)[k]
                    let g = d.work.transientGain[b * 32 + n]
                    XCTAssertGreaterThan(g, 0)
                    response.append((Double(d.work.rightRe[k * 32 + n] / g), Double(d.work.rightIm[k * 32 + n] / g)))
                }
            }
            // The reference: the chain run on an impulse in double precision.
            let f = PSTables.centreFrequency(k, is34: is34)
            let decay = min(max(1 - 0.05 * Double(k - (is34 ? 32 : 10)), 0), 1)
            var x = [(re: Double, im: Double)](repeating: (0, 0), count: 96)
            x[2] = (cos(-Double.pi * 0.39 * f), sin(-Double.pi * 0.39 * f))
            for m in 0..<3 {
                let a = Double(PSTables.allpassCoefficient[m]) * decay, dm = PSTables.linkDelay[m]
                let q = (re: cos(-Double.pi * PSTables.fractionalDelay[m] * f), im: sin(-Double.pi * PSTables.fractionalDelay[m] * f))
                // y[n] = q·x[n−d] − a·x[n] + a·q·y[n−d]
                var y = [(re: Double, im: Double)](repeating: (0, 0), count: 96)
                for n in 0..<96 {
                    var re = -a * x[n].re, im = -a * x[n].im
                    if n >= dm {
                        let u = (re: x[n - dm].re + a * y[n - dm].re, im: x[n - dm].im + a * y[n - dm].im)
                        re += q.re * u.re - q.im * u.im
                        im += q.re * u.im + q.im * u.re
                    }
                    y[n] = (re, im)
                }
                x = y
            }
            for n in 0..<96 {
                XCTAssertEqual(response[n].re, x[n].re, accuracy: 1e-5, "\(is34) band \(k) slot \(n)")
                XCTAssertEqual(response[n].im, x[n].im, accuracy: 1e-5, "\(is34) band \(k) slot \(n)")
            }
        }
    }

    /// The transient detector: a band whose power drops from 1 to 0.01 is attenuated after the
    /// drop by smoothed power / (1.5 · smoothed peak excess), as §8.6.4 defines them.
    func testTransientAttenuation() {
        let d = PSDecoder()
        d.parameters.headerSeen = true
        let k = 20, b = PSTables.bandOfHybrid20[k]
        var level = [Double]()
        for frame in 0..<2 {
            for n in 0..<32 {
                let a: Float = frame == 0 ? 1 : 0.1
                d.work.leftRe[k * 32 + n] = a
                d.work.leftIm[k * 32 + n] = 0
                level.append(Double(a * a))
            }
            d.decorrelate(d.parameters)
            var peak = 0.0, smooth = 0.0, diff = 0.0
            for (i, p) in level.enumerated() {
                peak = max(0.76592833836465 * peak, p)
                smooth += 0.25 * (p - smooth)
                diff += 0.25 * (peak - p - diff)
                let expected = 1.5 * diff > smooth ? smooth / (1.5 * diff) : 1
                if i >= frame * 32 {
                    XCTAssertEqual(Double(d.work.transientGain[b * 32 + i - frame * 32]), expected, accuracy: 1e-5, "slot \(i)")
                }
            }
        }
        // The drop is attenuated (the exact values are checked above).
        XCTAssertLessThan((0..<32).map { d.work.transientGain[b * 32 + $0] }.min() ?? 1, 0.9)
    }

    // MARK: Mixing

    /// A payload: header (IID, ICC, optional IPD/OPD extension), one envelope of constant
    /// indices in frequency direction.
    func payload(iidMode: Int, iid: Int, iccMode: Int, icc: Int, ipd: Int? = nil, opd: Int = 0) -> PSParameterTests.Writer {
        var w = PSParameterTests.Writer()
        w.put(1, 1); w.put(1, 1); w.put(iidMode, 3); w.put(1, 1); w.put(iccMode, 3); w.put(ipd == nil ? 0 : 1, 1)
        w.put(0, 1); w.put(1, 2)
        let fine = iidMode >= 3
        w.put(0, 1)
        for b in 0..<PSParameters.bandCounts[iidMode] {
            w.code(fine ? PSTables.iidFineFrequency : PSTables.iidDefaultFrequency, b == 0 ? iid : 0, offset: fine ? -30 : -14)
        }
        w.put(0, 1)
        for b in 0..<PSParameters.bandCounts[iccMode] { w.code(PSTables.iccFrequency, b == 0 ? icc : 0, offset: -7) }
        if let ipd {
            var x = PSParameterTests.Writer()
            x.put(0, 2); x.put(1, 1)
            x.put(0, 1)
            for b in 0..<PSParameters.phaseBandCounts[iidMode] { x.code(PSTables.ipdFrequency, b == 0 ? ipd : 0, offset: 0) }
            x.put(0, 1)
            for b in 0..<PSParameters.phaseBandCounts[iidMode] { x.code(PSTables.opdFrequency, b == 0 ? opd : 0, offset: 0) }
            x.put(0, 1)
            let size = (x.bits.count + 7) / 8
            w.put(size, 4)
            w.bits += x.bits + [Int](repeating: 0, count: size * 8 - x.bits.count)
        }
        return w
    }

    /// Runs frames of a steady tone in QMF band `qmf` with the same payload each frame;
    /// returns the last frame's left and right (re, im) at slot 31 of that band, and the input.
    func run(_ w: PSParameterTests.Writer, qmf: Int, frames: Int = 4) -> (l: (Float, Float), r: (Float, Float), x: (Float, Float)) {
        let d = PSDecoder()
        var lr = [Float](repeating: 0, count: 32 * 64), li = lr, rr = lr, ri = lr
        var x: (Float, Float) = (0, 0)
        for frame in 0..<frames {
            var m = Matrix()
            for s in 0..<38 {
                let t = Double(frame * 32 + s)
                m.re[s * 64 + qmf] = Float(cos(0.2 * t))
                m.im[s * 64 + qmf] = Float(sin(0.2 * t))
            }
            x = (m.re[31 * 64 + qmf], m.im[31 * 64 + qmf])
            XCTAssertTrue(d.parse(w.bytes, bitCount: w.bits.count))
            d.process(inputReal: m.re, inputImag: m.im, bandLimit: 64,
                      leftReal: &lr, leftImag: &li, rightReal: &rr, rightImag: &ri)
        }
        let i = 31 * 64 + qmf
        return ((lr[i], li[i]), (rr[i], ri[i]), x)
    }

    /// ICC 1 (index 0) and an IID: R_a and R_b both give L = c2·s and R = c1·s with
    /// c = 10^(IID/20), c1 = √2/√(1 + c²), c2 = c·c1 (no decorrelated part).
    func testLevelDifference() {
        for (mode, index) in [(1, 3), (1, -7), (4, 12), (4, 0), (2, 5), (5, -15)] {
            for iccMode in [mode % 3, mode % 3 + 3] {
                let r = run(payload(iidMode: mode, iid: index, iccMode: iccMode, icc: 0), qmf: 12)
                let steps = mode >= 3 ? PSTables.iidFineDecibels : PSTables.iidDefaultDecibels
                let c = pow(10, steps[index + steps.count / 2] / 20)
                let c1 = 2.0.squareRoot() / (1 + c * c).squareRoot(), c2 = c * c1
                let what = "iid_mode \(mode) index \(index) icc_mode \(iccMode)"
                XCTAssertEqual(Double(r.l.0), c2 * Double(r.x.0), accuracy: 2e-5, what)
                XCTAssertEqual(Double(r.l.1), c2 * Double(r.x.1), accuracy: 2e-5, what)
                XCTAssertEqual(Double(r.r.0), c1 * Double(r.x.0), accuracy: 2e-5, what)
                XCTAssertEqual(Double(r.r.1), c1 * Double(r.x.1), accuracy: 2e-5, what)
            }
        }
    }

    /// IPD 90° (index 2), OPD 0, IID 0 dB, ICC 1 in a band that has phase parameters: once the
    /// phase smoothing has seen the same index three frames, R = e^(−iπ/2)·L.
    func testPhaseDifference() {
        for mode in [1, 2] {
            // QMF band 5 is parameter band 10 at 20 bands, 16 at 34: both have IPD/OPD.
            let r = run(payload(iidMode: mode, iid: 0, iccMode: mode, icc: 0, ipd: 2, opd: 1), qmf: 5)
            // L = e^(iπ/4)·s (OPD 1), R = e^(i(π/4 − π/2))·s.
            let x = (re: Double(r.x.0), im: Double(r.x.1))
            let c = 0.5.squareRoot()
            XCTAssertEqual(Double(r.l.0), c * (x.re - x.im), accuracy: 2e-5, "iid_mode \(mode)")
            XCTAssertEqual(Double(r.l.1), c * (x.re + x.im), accuracy: 2e-5)
            XCTAssertEqual(Double(r.r.0), c * (x.re + x.im), accuracy: 2e-5)
            XCTAssertEqual(Double(r.r.1), c * (x.im - x.re), accuracy: 2e-5)
        }
    }

    /// The mixing matrices at points the formulas of §8.6.4 give in closed form, and
    /// their power: H11² + H12² + H21² + H22² = c1² + c2² = 2 everywhere, for R_a and R_b.
    func testMixingMatrixValues() {
        func h(_ t: [Float], _ iid: Int, _ icc: Int) -> [Double] { (0..<4).map { Double(t[(iid * 8 + icc) * 4 + $0]) } }
        // R_a, IID 0 dB (index 7 of the table), ICC 0 (index 5): α = π/4, β = 0.
        let a = Double.pi / 4
        for (x, y) in zip(h(PSTables.mixingA, 7, 5), [cos(a), cos(-a), sin(a), sin(-a)]) { XCTAssertEqual(x, y, accuracy: 1e-6) }
        // R_b, IID 0 dB, ICC 1: α = π/4, γ = 0, so H = (1, 1, 0, 0).
        for (x, y) in zip(h(PSTables.mixingB, 7, 0), [1.0, 1, 0, 0]) { XCTAssertEqual(x, y, accuracy: 1e-6) }
        for (table, steps) in [(PSTables.mixingA, 15), (PSTables.mixingB, 15), (PSTables.mixingAFine, 31), (PSTables.mixingBFine, 31)] {
            for i in 0..<steps {
                for j in 0..<8 {
                    XCTAssertEqual(h(table, i, j).map { $0 * $0 }.reduce(0, +), 2, accuracy: 1e-5, "\(i) \(j)")
                }
            }
        }
    }

    /// After ``PSDecoder/reset()`` the decoder gives what a new one gives.
    func testResetStartsAfresh() {
        let payloads = [payload(iidMode: 2, iid: 3, iccMode: 5, icc: 4, ipd: 3, opd: 6), payload(iidMode: 1, iid: -2, iccMode: 1, icc: 6)]
        var noise = Noise()
        let inputs = (0..<6).map { _ in (0..<(38 * 64)).map { _ in noise.next() } }
        func run(_ d: PSDecoder) -> [Float] {
            var lr = [Float](repeating: 0, count: 32 * 64), li = lr, rr = lr, ri = lr
            var out = [Float]()
            for (i, x) in inputs.enumerated() {
                let w = payloads[i / 3]
                d.parse(w.bytes, bitCount: w.bits.count)
                d.process(inputReal: x, inputImag: x.reversed(), bandLimit: 40,
                          leftReal: &lr, leftImag: &li, rightReal: &rr, rightImag: &ri)
                out += lr + li + rr + ri
            }
            return out
        }
        let d = PSDecoder()
        let first = run(d)
        d.reset()
        XCTAssertEqual(run(d), first)
        XCTAssertEqual(run(PSDecoder()), first)
        XCTAssertNotEqual(run(d), first)
    }

    /// Garbage payloads and inputs never trap.
    func testNoPayloadCrashes() {
        var noise = Noise()
        let d = PSDecoder()
        var lr = [Float](repeating: 0, count: 32 * 64), li = lr, rr = lr, ri = lr
        let m = Matrix()
        for i in 0..<3000 {
            let n = i % 40
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: Int(noise.next() * 1000)) }
            d.parse(bytes, bitCount: max(0, n * 8 - i % 7))
            if i % 10 == 0 {
                d.process(inputReal: m.re, inputImag: m.im, bandLimit: i % 70,
                          leftReal: &lr, leftImag: &li, rightReal: &rr, rightImag: &ri)
            }
        }
        XCTAssertEqual((lr + li + rr + ri).filter { !$0.isFinite }.count, 0)
    }
}

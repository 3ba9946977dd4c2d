import Foundation

// Normative data of parametric stereo (ISO/IEC 14496-3 subpart 8, §8.6.4; the Huffman tables of Annex 8.B),
// written in Tonearm's own form. Where the standard defines a table by a formula (the
// modulated hybrid filters, the fractional delays, the dequantised mixing matrices and the
// phase smoothing), the table is computed here from the formula and the standard's constants.

enum PSTables {
    // MARK: Huffman tables (Annex 8.B)

    // One entry per value, from the smallest value to the largest: the code's length << 20 |
    // the code. IID and ICC are signed (the first entry is −LAV); IPD and OPD are 0…7.

    /// huff_iid_df and huff_iid_dt, default quantisation (iid_mode 0–2): −14…14.
    static let iidDefaultFrequency: [UInt32] = [
        0x11_1FFFB, 0x11_1FFFC, 0x11_1FFFD, 0x11_1FFFA, 0x10_0FFFC, 0x0F_07FFC, 0x0D_01FFD, 0x0A_003FE,
        0x09_001FE, 0x07_0007E, 0x06_0003C, 0x05_0001D, 0x04_0000D, 0x03_00005, 0x01_00000, 0x03_00004,
        0x04_0000C, 0x05_0001C, 0x06_0003D, 0x06_0003E, 0x08_000FE, 0x0B_007FE, 0x0D_01FFC, 0x0E_03FFC,
        0x0E_03FFD, 0x0F_07FFD, 0x11_1FFFE, 0x12_3FFFE, 0x12_3FFFF,
    ]
    static let iidDefaultTime: [UInt32] = [
        0x13_7FFF9, 0x13_7FFFA, 0x13_7FFFB, 0x14_FFFF8, 0x14_FFFF9, 0x14_FFFFA, 0x11_1FFFD, 0x0F_07FFE,
        0x0C_00FFE, 0x0A_003FE, 0x08_000FE, 0x06_0003E, 0x04_0000E, 0x02_00002, 0x01_00000, 0x03_00006,
        0x05_0001E, 0x07_0007E, 0x09_001FE, 0x0B_007FE, 0x0D_01FFE, 0x0E_03FFE, 0x11_1FFFC, 0x13_7FFF8,
        0x14_FFFFB, 0x14_FFFFC, 0x14_FFFFD, 0x14_FFFFE, 0x14_FFFFF,
    ]
    /// huff_iid_df and huff_iid_dt, fine quantisation (iid_mode 3–5): −30…30.
    static let iidFineFrequency: [UInt32] = [
        0x12_1FEB4, 0x12_1FEB5, 0x12_1FD76, 0x12_1FD77, 0x12_1FD74, 0x12_1FD75, 0x12_1FE8A, 0x12_1FE8B,
        0x12_1FE88, 0x11_0FE80, 0x12_1FEB6, 0x11_0FE82, 0x11_0FEB8, 0x10_07F42, 0x10_07FAE, 0x0F_03FAF,
        0x0E_01FD1, 0x0E_01FE9, 0x0D_00FE9, 0x0C_007EA, 0x0C_007FB, 0x0B_003FB, 0x0A_001FB, 0x0A_001FF,
        0x08_0007C, 0x07_0003C, 0x06_0001C, 0x05_0000C, 0x04_00000, 0x03_00001, 0x01_00001, 0x03_00002,
        0x04_00001, 0x05_0000D, 0x06_0001D, 0x07_0003D, 0x08_0007D, 0x09_000FC, 0x0A_001FC, 0x0B_003FC,
        0x0B_003F4, 0x0C_007EB, 0x0D_00FEA, 0x0E_01FEA, 0x0E_01FD6, 0x0F_03FD0, 0x10_07FAF, 0x10_07F43,
        0x11_0FEB9, 0x11_0FE83, 0x12_1FEB7, 0x11_0FE81, 0x12_1FE89, 0x12_1FE8E, 0x12_1FE8F, 0x12_1FE8C,
        0x12_1FE8D, 0x12_1FEB2, 0x12_1FEB3, 0x12_1FEB0, 0x12_1FEB1,
    ]
    static let iidFineTime: [UInt32] = [
        0x10_04ED4, 0x10_04ED5, 0x10_04ECE, 0x10_04ECF, 0x10_04ECC, 0x10_04ED6, 0x10_04ED8, 0x10_04F46,
        0x10_04F60, 0x0F_02718, 0x0F_02719, 0x0F_02764, 0x0F_02765, 0x0F_0276D, 0x0F_027B1, 0x0E_013B7,
        0x0E_013D6, 0x0D_009C7, 0x0D_009E9, 0x0D_009ED, 0x0C_004EE, 0x0C_004F7, 0x0B_00278, 0x0A_00139,
        0x09_0009A, 0x09_0009F, 0x07_00020, 0x06_00011, 0x05_0000A, 0x03_00003, 0x01_00001, 0x02_00000,
        0x05_0000B, 0x06_00012, 0x07_00021, 0x08_0004C, 0x09_0009B, 0x0A_0013A, 0x0B_00279, 0x0B_00270,
        0x0C_004EF, 0x0C_004E2, 0x0D_009EA, 0x0D_009D8, 0x0E_013D7, 0x0E_013D0, 0x0F_027B2, 0x0F_027A2,
        0x0F_0271A, 0x0F_0271B, 0x10_04F66, 0x10_04F67, 0x10_04F61, 0x10_04F47, 0x10_04ED9, 0x10_04ED7,
        0x10_04ECD, 0x10_04ED2, 0x10_04ED3, 0x10_04ED0, 0x10_04ED1,
    ]
    /// huff_icc_df and huff_icc_dt: −7…7.
    static let iccFrequency: [UInt32] = [
        0x0E_03FFF, 0x0E_03FFE, 0x0C_00FFE, 0x0A_003FE, 0x07_0007E, 0x05_0001E, 0x03_00006, 0x01_00000,
        0x02_00002, 0x04_0000E, 0x06_0003E, 0x08_000FE, 0x09_001FE, 0x0B_007FE, 0x0D_01FFE,
    ]
    static let iccTime: [UInt32] = [
        0x0E_03FFE, 0x0D_01FFE, 0x0B_007FE, 0x09_001FE, 0x07_0007E, 0x05_0001E, 0x03_00006, 0x01_00000,
        0x02_00002, 0x04_0000E, 0x06_0003E, 0x08_000FE, 0x0A_003FE, 0x0C_00FFE, 0x0E_03FFF,
    ]
    /// huff_ipd_df, huff_ipd_dt, huff_opd_df, huff_opd_dt: 0…7 (differences modulo 8).
    static let ipdFrequency: [UInt32] = [0x01_00001, 0x03_00000, 0x04_00006, 0x04_00004, 0x04_00002, 0x04_00003, 0x04_00005, 0x04_00007]
    static let ipdTime: [UInt32] = [0x01_00001, 0x03_00002, 0x04_00002, 0x05_00003, 0x05_00002, 0x04_00000, 0x04_00003, 0x03_00003]
    static let opdFrequency: [UInt32] = [0x01_00001, 0x03_00001, 0x04_00006, 0x04_00004, 0x05_0000F, 0x05_0000E, 0x04_00005, 0x03_00000]
    static let opdTime: [UInt32] = [0x01_00001, 0x03_00002, 0x04_00001, 0x05_00007, 0x05_00006, 0x04_00000, 0x04_00002, 0x03_00003]

    // MARK: Quantisation (§8.6.4, the IID and ICC tables)

    /// IID in dB, default quantisation: indices −7…7.
    static let iidDefaultDecibels: [Double] = [-25, -18, -14, -10, -7, -4, -2, 0, 2, 4, 7, 10, 14, 18, 25]
    /// IID in dB, fine quantisation: indices −15…15.
    static let iidFineDecibels: [Double] = [
        -50, -45, -40, -35, -30, -25, -22, -19, -16, -13, -10, -8, -6, -4, -2, 0,
        2, 4, 6, 8, 10, 13, 16, 19, 22, 25, 30, 35, 40, 45, 50,
    ]
    /// ICC, indices 0…7.
    static let icc: [Double] = [1, 0.937, 0.84118, 0.60092, 0.36764, 0, -0.589, -1]

    // MARK: Hybrid filter bank (§8.6.4)

    /// The first seven taps of the 13-tap prototype filters (symmetric about tap 6): g0 for the
    /// 8-band split (10/20 bands) and the 12-band split (34), g1 for the 8-band split of the
    /// second QMF band (34), g2 for the 4-band splits (34), and the real 2-band filter of the
    /// second and third QMF bands (10/20).
    static let prototype8: [Double] = [
        0.00746082949812, 0.02270420949825, 0.04546865930473, 0.07266113929591,
        0.09885108575264, 0.11793710567217, 0.125,
    ]
    static let prototype12: [Double] = [
        0.04081179924692, 0.03812810994926, 0.05144908135699, 0.06399831151592,
        0.07428313801106, 0.08100347892914, 0.08333333333333,
    ]
    static let prototype8Second: [Double] = [
        0.01565675600122, 0.03752716391991, 0.05417891378782, 0.08417044116767,
        0.10307344158036, 0.12222452249753, 0.125,
    ]
    static let prototype4: [Double] = [
        -0.05908211155639, -0.04871498374946, 0.0, 0.07778723915851,
        0.16486303567403, 0.23279856662996, 0.25,
    ]
    static let prototype2: [Double] = [0, 0.01899487526049, 0, -0.07293139167538, 0, 0.30596630545168, 0.5]

    /// The complex filters of a Q-band split: tap n of band q is g(n)·e^(−i·2π(q + ½)(n − 6)/Q),
    /// all 13 taps, band-major (re, im).
    static func modulated(_ proto: [Double], bands: Int) -> (re: [Float], im: [Float]) {
        var re = [Float](repeating: 0, count: bands * 13), im = re
        for q in 0..<bands {
            for n in 0..<13 {
                let g = proto[n <= 6 ? n : 12 - n]
                let theta = 2 * Double.pi * (Double(q) + 0.5) * Double(n - 6) / Double(bands)
                re[q * 13 + n] = Float(g * cos(theta))
                im[q * 13 + n] = Float(-g * sin(theta))
            }
        }
        return (re, im)
    }

    static let filter8 = modulated(prototype8, bands: 8)
    static let filter12 = modulated(prototype12, bands: 12)
    static let filter8Second = modulated(prototype8Second, bands: 8)
    static let filter4 = modulated(prototype4, bands: 4)
    /// The 2-band real filter's 13 taps (the low band's; the high band's are modulated by (−1)^(n−6)).
    static let filter2: [Float] = (0..<13).map { Float(prototype2[$0 <= 6 ? $0 : 12 - $0]) }

    // MARK: Parameter band of each hybrid band (Tables 8.48 and 8.49)

    /// k → parameter band, 20-band configuration (71 hybrid bands).
    static let bandOfHybrid20: [Int] = [
        1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 14, 15,
        15, 15, 16, 16, 16, 16, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18, 18, 18,
        18, 18, 18, 18, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
        19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
    ]
    /// k → parameter band, 34-band configuration (91 hybrid bands).
    static let bandOfHybrid34: [Int] = [
        0, 1, 2, 3, 4, 5, 6, 6, 7, 2, 1, 0, 10, 10, 4, 5, 6, 7, 8,
        9, 10, 11, 12, 9, 14, 11, 12, 13, 14, 15, 16, 13, 16, 17, 18, 19, 20, 21,
        22, 22, 23, 23, 24, 24, 25, 25, 26, 26, 27, 27, 27, 28, 28, 28, 29, 29, 29,
        30, 30, 30, 31, 31, 31, 31, 32, 32, 32, 32, 33, 33, 33, 33, 33, 33, 33, 33,
        33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33,
    ]

    // MARK: Parameter band mapping (the index mapping of §8.6.4)

    // Each entry lists the source bands whose mean (of indices: truncated toward zero) gives
    // one band of the target resolution; a band listed twice weighs double.
    static let map10To20: [[Int]] = (0..<20).map { [$0 / 2] }
    static let map34To20: [[Int]] = [
        [0, 0, 1], [1, 2, 2], [3, 3, 4], [4, 5, 5], [6, 7], [8, 9], [10], [11], [12, 13], [14, 15],
        [16], [17], [18], [19], [20, 21], [22, 23], [24, 25], [26, 27], [28, 29, 30, 31], [32, 33],
    ]
    static let map10To34: [[Int]] = [
        [0], [0], [0], [1], [1], [1], [2], [2], [2], [2], [3], [3], [4], [4], [4], [4], [5],
        [5], [6], [6], [7], [7], [7], [7], [8], [8], [8], [8], [9], [9], [9], [9], [9], [9],
    ]
    static let map20To34: [[Int]] = [
        [0], [0, 1], [1], [2], [2, 3], [3], [4], [4], [5], [5], [6], [7], [8], [8], [9], [9], [10],
        [11], [12], [13], [14], [14], [15], [15], [16], [16], [17], [17], [18], [18], [18], [18], [19], [19],
    ]

    // MARK: Decorrelation (§8.6.4)

    /// The all-pass links' filter coefficients a(m), fractional delays q(m) and delays d(m).
    static let allpassCoefficient: [Float] = [0.65143905753106, 0.56471812200776, 0.48954165955695]
    static let fractionalDelay: [Double] = [0.43, 0.75, 0.347]
    static let linkDelay = [3, 4, 5]
    /// The fractional delay of the chain's input, q_φ.
    static let phaseFractionalDelay = 0.39
    /// The peak decay factor α and the smoothing coefficient of the transient detector.
    static let peakDecay: Float = 0.76592833836465
    static let smoothing: Float = 0.25
    static let transientImpact: Float = 1.5

    /// The centre frequency f of each all-pass band, in QMF bands: the hybrid bands' (in eighths
    /// of a band at 10/20 bands, in 24ths at 34), then k − 6.5 or k − 26.5 for the QMF bands.
    static func centreFrequency(_ k: Int, is34: Bool) -> Double {
        if is34 {
            let hybrid: [Double] = [
                2, 6, 10, 14, 18, 22, 26, 30, 34, -10, -6, -2, 51, 57, 15, 21,
                27, 33, 39, 45, 54, 66, 78, 42, 102, 66, 78, 90, 102, 114, 126, 90,
            ]
            return k < 32 ? hybrid[k] / 24 : Double(k) - 26.5
        }
        let hybrid: [Double] = [-3, -1, 1, 3, 5, 7, 10, 14, 18, 22]
        return k < 10 ? hybrid[k] / 8 : Double(k) - 6.5
    }

    /// Per all-pass band: φ_fract = e^(−iπ q_φ f) and Q_fract(m) = e^(−iπ q(m) f), as
    /// [re, im, re0, im0, re1, im1, re2, im2].
    static func fractionalPhases(is34: Bool) -> [Float] {
        let bands = is34 ? 50 : 30
        var t = [Float](repeating: 0, count: bands * 8)
        for k in 0..<bands {
            let f = centreFrequency(k, is34: is34)
            let phi = -Double.pi * phaseFractionalDelay * f
            t[k * 8] = Float(cos(phi))
            t[k * 8 + 1] = Float(sin(phi))
            for m in 0..<3 {
                let theta = -Double.pi * fractionalDelay[m] * f
                t[k * 8 + 2 + 2 * m] = Float(cos(theta))
                t[k * 8 + 3 + 2 * m] = Float(sin(theta))
            }
        }
        return t
    }

    static let phases20 = fractionalPhases(is34: false)
    static let phases34 = fractionalPhases(is34: true)

    // MARK: Mixing matrices (§8.6.4)

    /// H11, H12, H21, H22 for each IID and ICC index, [iid][icc][4]: mixing procedure R_a
    /// (icc_mode 0–2) or R_b (3–5), default (15 IID steps) or fine (31) quantisation.
    static func mixing(fine: Bool, procedureB: Bool) -> [Float] {
        let steps = fine ? iidFineDecibels : iidDefaultDecibels
        var t = [Float](repeating: 0, count: steps.count * 8 * 4)
        for (i, db) in steps.enumerated() {
            let c = pow(10, db / 20)
            for (j, rho) in icc.enumerated() {
                let h: [Double]
                if procedureB {
                    let r = max(rho, 0.05)
                    var alpha = 0.5 * atan2(2 * c * r, c * c - 1)
                    if alpha < 0 { alpha += Double.pi / 2 }
                    let mu0 = c + 1 / c
                    let mu = (1 + (4 * r * r - 4) / (mu0 * mu0)).squareRoot()
                    let gamma = atan(((1 - mu) / (1 + mu)).squareRoot())
                    let s2 = 2.0.squareRoot()
                    h = [s2 * cos(alpha) * cos(gamma), s2 * sin(alpha) * cos(gamma),
                         -s2 * sin(alpha) * sin(gamma), s2 * cos(alpha) * sin(gamma)]
                } else {
                    let c1 = 2.0.squareRoot() / (1 + c * c).squareRoot()
                    let c2 = c * c1
                    let alpha = 0.5 * acos(rho)
                    let beta = alpha * (c1 - c2) / 2.0.squareRoot()
                    h = [c2 * cos(beta + alpha), c1 * cos(beta - alpha), c2 * sin(beta + alpha), c1 * sin(beta - alpha)]
                }
                for n in 0..<4 { t[(i * 8 + j) * 4 + n] = Float(h[n]) }
            }
        }
        return t
    }

    static let mixingA = mixing(fine: false, procedureB: false)
    static let mixingAFine = mixing(fine: true, procedureB: false)
    static let mixingB = mixing(fine: false, procedureB: true)
    static let mixingBFine = mixing(fine: true, procedureB: true)

    /// The smoothed IPD/OPD phase (§8.6.4): the unit vector of
    /// ¼·e^(iπ·p0/4) + ½·e^(iπ·p1/4) + e^(iπ·p2/4) for the indices of the frame before last, the
    /// last frame and this one, at p0·64 + p1·8 + p2, as (re, im) pairs.
    static let smoothedPhase: [Float] = {
        var t = [Float](repeating: 0, count: 512 * 2)
        for i in 0..<512 {
            var re = 0.0, im = 0.0
            for (p, w) in [(i >> 6, 0.25), (i >> 3 & 7, 0.5), (i & 7, 1.0)] {
                re += w * cos(Double(p) * Double.pi / 4)
                im += w * sin(Double(p) * Double.pi / 4)
            }
            let m = (re * re + im * im).squareRoot()
            t[2 * i] = Float(re / m)
            t[2 * i + 1] = Float(im / m)
        }
        return t
    }()
}

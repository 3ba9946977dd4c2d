#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The constant tables of layer III (ISO/IEC 11172-3 Annex B and 13818-3 Annex B), and
/// the ones derived from formulas once.
enum Layer3Tables {
    /// Scale factor band boundaries for long blocks (22 bands + the end), by
    /// ``MPEGAudioHeader/sampleRateIndex``: 44.1, 48, 32 kHz (MPEG-1), 22.05, 24, 16 kHz
    /// (MPEG-2), 11.025, 12, 8 kHz (MPEG-2.5).
    static let longBands: [[Int]] = [
        [0, 4, 8, 12, 16, 20, 24, 30, 36, 44, 52, 62, 74, 90, 110, 134, 162, 196, 238, 288, 342, 418, 576],
        [0, 4, 8, 12, 16, 20, 24, 30, 36, 42, 50, 60, 72, 88, 106, 128, 156, 190, 230, 276, 330, 384, 576],
        [0, 4, 8, 12, 16, 20, 24, 30, 36, 44, 54, 66, 82, 102, 126, 156, 194, 240, 296, 364, 448, 550, 576],
        [0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576],
        [0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 114, 136, 162, 194, 232, 278, 332, 394, 464, 540, 576],
        [0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576],
        [0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576],
        [0, 6, 12, 18, 24, 30, 36, 44, 54, 66, 80, 96, 116, 140, 168, 200, 238, 284, 336, 396, 464, 522, 576],
        [0, 12, 24, 36, 48, 60, 72, 88, 108, 132, 160, 192, 232, 280, 336, 400, 476, 566, 568, 570, 572, 574, 576],
    ]

    /// Scale factor band boundaries for short blocks (13 bands + the end), in lines of one
    /// window, by sample rate as ``longBands``.
    static let shortBands: [[Int]] = [
        [0, 4, 8, 12, 16, 22, 30, 40, 52, 66, 84, 106, 136, 192],
        [0, 4, 8, 12, 16, 22, 28, 38, 50, 64, 80, 100, 126, 192],
        [0, 4, 8, 12, 16, 22, 30, 42, 58, 78, 104, 138, 180, 192],
        [0, 4, 8, 12, 18, 24, 32, 42, 56, 74, 100, 132, 174, 192],
        [0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 136, 180, 192],
        [0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 134, 174, 192],
        [0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 134, 174, 192],
        [0, 4, 8, 12, 18, 26, 36, 48, 62, 80, 104, 134, 174, 192],
        [0, 8, 16, 24, 36, 52, 72, 96, 124, 160, 162, 164, 166, 192],
    ]

    /// The preemphasis added to long-block scale factors when `preflag` is set.
    static let pretab: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 2, 0]

    /// MPEG-1 scale factor lengths by scalefac_compress.
    static let slen1: [Int] = [0, 0, 0, 0, 3, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4]
    static let slen2: [Int] = [0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3, 1, 2, 3, 2, 3]

    /// MPEG-2 LSF: scale factors per partition, [table][block kind: long, short, mixed][partition].
    /// Tables 0–2 serve ordinary channels, 3–5 the intensity-coded right channel.
    static let lsfPartitions: [[[Int]]] = [
        [[6, 5, 5, 5], [9, 9, 9, 9], [6, 9, 9, 9]],
        [[6, 5, 7, 3], [9, 9, 12, 6], [6, 9, 12, 6]],
        [[11, 10, 0, 0], [18, 18, 0, 0], [15, 18, 0, 0]],
        [[7, 7, 7, 0], [12, 12, 12, 0], [6, 15, 12, 0]],
        [[6, 6, 6, 3], [12, 9, 9, 6], [6, 12, 9, 6]],
        [[8, 8, 5, 0], [15, 12, 9, 0], [6, 18, 9, 0]],
    ]

    /// |x|^(4/3) for every quantised magnitude a granule can hold (15 + 2^13 − 1).
    static let pow43: [Float] = (0..<8207).map { Float(pow(Double($0), 4.0 / 3.0)) }

    /// 2^(q/4) for q = −512…63, at q + 512: the gain of global_gain, subblock gains and
    /// scale factors, in quarter steps.
    static let gainOffset = 512
    static let gains: [Float] = (0..<576).map { Float(pow(2.0, Double($0 - 512) / 4)) }

    /// The alias-reduction butterflies: cs = 1/√(1+c²), ca = c/√(1+c²).
    static let aliasCS: [Float] = aliasCoefficients.map { Float(1 / (1 + $0 * $0).squareRoot()) }
    static let aliasCA: [Float] = aliasCoefficients.map { Float($0 / (1 + $0 * $0).squareRoot()) }
    private static let aliasCoefficients: [Double] = [-0.6, -0.535, -0.33, -0.185, -0.095, -0.041, -0.0142, -0.0037]

    /// The 36-point windows of block types 0 (normal), 1 (start) and 3 (stop); type 2
    /// uses ``shortWindow`` thrice.
    static let longWindows: [[Float]] = [0, 1, 3].map { type in
        (0..<36).map { i -> Float in
            let long = sin(Double.pi / 36 * (Double(i) + 0.5))
            switch (type, i) {
            case (1, 18..<24), (3, 12..<18): return 1
            case (1, 24..<30): return Float(sin(Double.pi / 12 * (Double(i - 18) + 0.5)))
            case (1, 30...), (3, ..<6): return 0
            case (3, 6..<12): return Float(sin(Double.pi / 12 * (Double(i - 6) + 0.5)))
            default: return Float(long)
            }
        }
    }
    static let shortWindow: [Float] = (0..<12).map { Float(sin(Double.pi / 12 * (Double($0) + 0.5))) }

    /// The long IMDCT's 36 outputs x[j] = Σk X[k]·cos(π/72 · (2j + 19)(2k + 1)) are ±u[n(j)],
    /// u the 18-point DCT-IV u[n] = Σk X[k]·cos(π/72 · (2n + 1)(2k + 1)) (n + 9 past 17 folds
    /// back with a sign): n = j + 9 for j < 9, 26 − j for j < 27, j − 27 above, and the sign
    /// is − from j = 9 on.
    static func imdctLongSource(_ j: Int) -> (n: Int, sign: Double) {
        j < 9 ? (j + 9, 1) : j < 27 ? (26 - j, -1) : (j - 27, -1)
    }

    /// ``longWindows`` with the IMDCT's last step folded in: the decoder's DCT-IV leaves
    /// z[n] = 2cos(π(2n + 1)/72)·u[n], so entry j is ±window[j] / (2cos(π(2n(j) + 1)/72)).
    static let imdctLongWindows: [[Float]] = (0..<3).map { type in
        (0..<36).map { j in
            let (n, sign) = imdctLongSource(j)
            return Float(sign * Double(longWindows[type][j]) / (2 * cos(Double.pi / 72 * Double(2 * n + 1))))
        }
    }

    /// 1/(2cos(π(2n + 1)/36)), n = 0…8: the long IMDCT's odd half (``Layer3Decoder``).
    static let imdctOddScale: [Float] = (0..<9).map { Float(1 / (2 * cos(Double.pi / 36 * Double(2 * $0 + 1)))) }

    /// The short IMDCT's 12 outputs x[i] = Σk X[k]·cos(π/24 · (2i + 7)(2k + 1)) are ±u[n(i)],
    /// u the 6-point DCT-IV: n = i + 3 for i < 3, 8 − i for i < 9, i − 9 above; − from i = 3 on.
    static func imdctShortSource(_ i: Int) -> (n: Int, sign: Float) {
        i < 3 ? (i + 3, 1) : i < 9 ? (8 - i, -1) : (i - 9, -1)
    }

    /// ``shortWindow`` with the signs of ``imdctShortSource(_:)`` folded in.
    static let imdctShortWindow: [Float] = (0..<12).map { imdctShortSource($0).sign * shortWindow[$0] }

    /// The 6-point DCT-IV: [n][k] = cos(π/24 · (2n + 1)(2k + 1)).
    static let imdctShort: [Float] = (0..<36).map { (i: Int) -> Float in
        let n = i / 6, k = i % 6
        return Float(cos(Double.pi / 24 * Double((2 * n + 1) * (2 * k + 1))))
    }

    /// MPEG-1 intensity stereo: (left, right) factors for positions 0…6.
    static let intensityMPEG1: [(Float, Float)] = (0..<7).map { p in
        let a = Double(p) * Double.pi / 12
        let s = sin(a), c = cos(a)
        return (Float(s / (s + c)), Float(c / (s + c)))
    }
}

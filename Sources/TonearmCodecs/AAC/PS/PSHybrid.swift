/// The hybrid analysis and synthesis filter banks of parametric stereo (ISO/IEC 14496-3
/// §8.6.4): the lowest QMF bands are split again for a finer frequency resolution where
/// the ear has it.
///
/// - 10 and 20 parameter bands: QMF band 0 into 8, of which the four outer ones are summed in
///   pairs of opposite frequency (±5/16 and ±7/16 cycles a slot), giving 6; bands 1 and 2 into
///   2 each: 10 hybrid bands, then QMF bands 3…63 as they are, 71 in all.
/// - 34 parameter bands: QMF band 0 into 12, band 1 into 8, bands 2, 3 and 4 into 4 each:
///   32 hybrid bands, then QMF bands 5…63, 91 in all.
///
/// Each split is a 13-tap filter centred on its middle tap. The SBR decoder gives each frame
/// 6 QMF slots of lookahead in the low bands (its X_Low reaches that far), so the filter is
/// applied centred and the hybrid bands have no delay against the QMF bands that are not
/// split. The synthesis is the sum of each QMF band's hybrid bands: the filters of a split
/// add up to the middle tap alone, so analysis then synthesis gives the input back.
final class PSHybrid {
    /// Per split QMF band: 6 slots of history, then the frame's 32 and the 6 of lookahead.
    private static let span = 44

    private let historyRe = UnsafeMutablePointer<Float>.allocate(capacity: 5 * PSHybrid.span)
    private let historyIm = UnsafeMutablePointer<Float>.allocate(capacity: 5 * PSHybrid.span)
    /// The 8 bands of the 10/20-band configuration's first split, before two pairs are summed.
    private let splitRe = UnsafeMutablePointer<Float>.allocate(capacity: 8 * 32)
    private let splitIm = UnsafeMutablePointer<Float>.allocate(capacity: 8 * 32)

    init() { reset() }

    deinit {
        for p in [historyRe, historyIm, splitRe, splitIm] { p.deallocate() }
    }

    /// The first split's 8 bands that make each of the 6 hybrid bands of the 10/20-band configuration.
    private static let summed8 = [[6], [7], [0], [1], [2, 5], [3, 4]]

    /// The hybrid bands each split QMF band becomes.
    private static let splitWidths20 = [6, 2, 2]
    private static let splitWidths34 = [12, 8, 4, 4, 4]

    static func bandCount(is34: Bool) -> Int { is34 ? 91 : 71 }
    /// The QMF bands that are split, and the hybrid bands they become.
    static func splitBands(is34: Bool) -> Int { is34 ? 5 : 3 }
    static func hybridBands(is34: Bool) -> Int { is34 ? 32 : 10 }

    func reset() {
        historyRe.update(repeating: 0, count: 5 * Self.span)
        historyIm.update(repeating: 0, count: 5 * Self.span)
    }

    /// Analysis of one frame.
    /// - Parameters:
    ///   - re, im: the QMF matrix, slot-major (slot × 64 + band), 38 slots: the frame's 32,
    ///     then 6 of lookahead, of which only bands 0…4 are read.
    ///   - outRe, outIm: the hybrid matrix, band-major (band × 32 + slot), 71 or 91 bands.
    func analyze(re: UnsafePointer<Float>, im: UnsafePointer<Float>, is34: Bool,
                 outRe: UnsafeMutablePointer<Float>, outIm: UnsafeMutablePointer<Float>) {
        let span = Self.span
        let hr = historyRe, hi = historyIm
        for band in 0..<5 {
            for slot in 0..<38 {
                hr[band * span + 6 + slot] = re[slot * 64 + band]
                hi[band * span + 6 + slot] = im[slot * 64 + band]
            }
        }
        if is34 {
            Self.complexSplit(hr, hi, PSTables.filter12, bands: 12, outRe, outIm)
            Self.complexSplit(hr + span, hi + span, PSTables.filter8Second, bands: 8, outRe + 12 * 32, outIm + 12 * 32)
            for q in 0..<3 {
                Self.complexSplit(hr + (2 + q) * span, hi + (2 + q) * span, PSTables.filter4, bands: 4,
                                  outRe + (20 + 4 * q) * 32, outIm + (20 + 4 * q) * 32)
            }
        } else {
            // The 8-band split, then its bands in order of frequency: 6 and 7 (−3/16 and −1/16
            // cycles a slot) first, 0 and 1, then 2+5 and 3+4.
            let tRe = splitRe, tIm = splitIm
            Self.complexSplit(hr, hi, PSTables.filter8, bands: 8, tRe, tIm)
            for (k, parts) in Self.summed8.enumerated() {
                for n in 0..<32 {
                    var sr: Float = 0, si: Float = 0
                    for q in parts { sr += tRe[q * 32 + n]; si += tIm[q * 32 + n] }
                    outRe[k * 32 + n] = sr
                    outIm[k * 32 + n] = si
                }
            }
            // Odd QMF bands are spectrally inverted: in band 1 the high-pass half holds the
            // lower frequencies, so it comes first.
            Self.realSplit(hr + span, hi + span, low: 7, high: 6, outRe, outIm)
            Self.realSplit(hr + 2 * span, hi + 2 * span, low: 8, high: 9, outRe, outIm)
        }
        let split = Self.splitBands(is34: is34), first = Self.hybridBands(is34: is34)
        for band in split..<64 {
            let k = first + band - split
            for n in 0..<32 {
                outRe[k * 32 + n] = re[n * 64 + band]
                outIm[k * 32 + n] = im[n * 64 + band]
            }
        }
        for band in 0..<5 {
            for i in 0..<6 {
                historyRe[band * span + i] = historyRe[band * span + 32 + i]
                historyIm[band * span + i] = historyIm[band * span + 32 + i]
            }
        }
    }

    /// Synthesis: each QMF band is the sum of its hybrid bands.
    /// - Parameters:
    ///   - re, im: the hybrid matrix, band-major, 71 or 91 bands × 32 slots.
    ///   - outRe, outIm: the QMF matrix, slot-major, 32 slots × 64 bands.
    static func synthesize(re: UnsafePointer<Float>, im: UnsafePointer<Float>, is34: Bool,
                           outRe: UnsafeMutablePointer<Float>, outIm: UnsafeMutablePointer<Float>) {
        let widths = is34 ? splitWidths34 : splitWidths20
        var k = 0
        for (band, width) in widths.enumerated() {
            for n in 0..<32 {
                var sr: Float = 0, si: Float = 0
                for j in 0..<width { sr += re[(k + j) * 32 + n]; si += im[(k + j) * 32 + n] }
                outRe[n * 64 + band] = sr
                outIm[n * 64 + band] = si
            }
            k += width
        }
        for band in widths.count..<64 {
            for n in 0..<32 {
                outRe[n * 64 + band] = re[k * 32 + n]
                outIm[n * 64 + band] = im[k * 32 + n]
            }
            k += 1
        }
    }

    /// A Q-band complex split of one QMF band's 44 slots: band q at slot n is
    /// Σ_j h_q(j)·x(n + j), j = 0…12, written band-major from `out`.
    private static func complexSplit(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                                     _ filter: (re: [Float], im: [Float]), bands: Int,
                                     _ outRe: UnsafeMutablePointer<Float>, _ outIm: UnsafeMutablePointer<Float>) {
        filter.re.withUnsafeBufferPointer { fr in
            filter.im.withUnsafeBufferPointer { fi in
                for q in 0..<bands {
                    for n in 0..<32 {
                        var sr: Float = 0, si: Float = 0
                        for j in 0..<13 {
                            let a = fr[q * 13 + j], b = fi[q * 13 + j]
                            let x = xr[n + j], y = xi[n + j]
                            sr += a * x - b * y
                            si += a * y + b * x
                        }
                        outRe[q * 32 + n] = sr
                        outIm[q * 32 + n] = si
                    }
                }
            }
        }
    }

    /// The real 2-band split: the prototype (low) and the prototype modulated by (−1)^(j−6)
    /// (high); its odd-offset taps are the only ones besides the middle.
    private static func realSplit(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>, low: Int, high: Int,
                                  _ outRe: UnsafeMutablePointer<Float>, _ outIm: UnsafeMutablePointer<Float>) {
        let g = PSTables.filter2
        for n in 0..<32 {
            let midRe = g[6] * xr[n + 6], midIm = g[6] * xi[n + 6]
            var sideRe: Float = 0, sideIm: Float = 0
            for j in stride(from: 1, to: 6, by: 2) {
                sideRe += g[j] * (xr[n + j] + xr[n + 12 - j])
                sideIm += g[j] * (xi[n + j] + xi[n + 12 - j])
            }
            outRe[low * 32 + n] = midRe + sideRe
            outIm[low * 32 + n] = midIm + sideIm
            outRe[high * 32 + n] = midRe - sideRe
            outIm[high * 32 + n] = midIm - sideIm
        }
    }
}

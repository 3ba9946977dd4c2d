import TonearmCore
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
    /// The complex splits' pair sums and differences of 8 slots.
    private let pairs = UnsafeMutablePointer<Float>.allocate(capacity: 6 * 32)

    init() { reset() }

    deinit {
        for p in [historyRe, historyIm, splitRe, splitIm, pairs] { p.deallocate() }
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
        analyze(re: re, im: im, is34: is34, outRe: outRe, outIm: outIm, stride: 32, top: Self.bandCount(is34: is34))
    }

    /// Analysis into rows `stride` apart (band × stride + slot). The hybrid bands from `top`
    /// (at least the split ones') are written as zeros: their QMF bands must be empty.
    func analyze(re: UnsafePointer<Float>, im: UnsafePointer<Float>, is34: Bool,
                 outRe: UnsafeMutablePointer<Float>, outIm: UnsafeMutablePointer<Float>, stride: Int, top: Int) {
        let span = Self.span
        let hr = historyRe, hi = historyIm
        for band in 0..<5 {
            for slot in 0..<38 {
                hr[band * span + 6 + slot] = re[slot * 64 + band]
                hi[band * span + 6 + slot] = im[slot * 64 + band]
            }
        }
        if is34 {
            Self.complexSplit(hr, hi, PSTables.filter12, bands: 12, outRe, outIm, stride, pairs)
            Self.complexSplit(hr + span, hi + span, PSTables.filter8Second, bands: 8,
                              outRe + 12 * stride, outIm + 12 * stride, stride, pairs)
            for q in 0..<3 {
                Self.complexSplit(hr + (2 + q) * span, hi + (2 + q) * span, PSTables.filter4, bands: 4,
                                  outRe + (20 + 4 * q) * stride, outIm + (20 + 4 * q) * stride, stride, pairs)
            }
        } else {
            // The 8-band split, then its bands in order of frequency: 6 and 7 (−3/16 and −1/16
            // cycles a slot) first, 0 and 1, then 2+5 and 3+4.
            let tRe = splitRe, tIm = splitIm
            Self.complexSplit(hr, hi, PSTables.filter8, bands: 8, tRe, tIm, 32, pairs)
            for (k, parts) in Self.summed8.enumerated() {
                let oRe = outRe + k * stride, oIm = outIm + k * stride
                for n in Swift.stride(from: 0, to: 32, by: 8) {
                    var sr = loadFloat8(tRe + parts[0] * 32 + n), si = loadFloat8(tIm + parts[0] * 32 + n)
                    if parts.count > 1 {
                        sr += loadFloat8(tRe + parts[1] * 32 + n)
                        si += loadFloat8(tIm + parts[1] * 32 + n)
                    }
                    storeFloats(sr, oRe + n)
                    storeFloats(si, oIm + n)
                }
            }
            // Odd QMF bands are spectrally inverted: in band 1 the high-pass half holds the
            // lower frequencies, so it comes first.
            Self.realSplit(hr + span, hi + span, outRe + 7 * stride, outIm + 7 * stride, outRe + 6 * stride, outIm + 6 * stride)
            Self.realSplit(hr + 2 * span, hi + 2 * span, outRe + 8 * stride, outIm + 8 * stride, outRe + 9 * stride, outIm + 9 * stride)
        }
        let bands = Self.bandCount(is34: is34)
        let split = Self.splitBands(is34: is34), first = Self.hybridBands(is34: is34)
        let top = min(max(top, first), bands)
        // The QMF bands that are not split, transposed to band-major.
        let topQMF = top - first + split
        var band = split
        while band + 4 <= topQMF {
            let k = first + band - split
            for n in Swift.stride(from: 0, to: 32, by: 4) {
                sbrTransposeBlock(re + n * 64 + band, 64, outRe + k * stride + n, stride)
                sbrTransposeBlock(im + n * 64 + band, 64, outIm + k * stride + n, stride)
            }
            band += 4
        }
        for band in band..<topQMF {
            let k = first + band - split
            let oRe = outRe + k * stride, oIm = outIm + k * stride
            for n in 0..<32 {
                oRe[n] = re[n * 64 + band]
                oIm[n] = im[n * 64 + band]
            }
        }
        for k in top..<bands {
            (outRe + k * stride).update(repeating: 0, count: 32)
            (outIm + k * stride).update(repeating: 0, count: 32)
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
        synthesize(re: re, im: im, is34: is34, top: bandCount(is34: is34), outRe: outRe, outIm: outIm)
    }

    /// Synthesis of the hybrid bands below `top` (at least the split ones'); the QMF bands
    /// of those above are zeros, whatever the matrix holds there.
    static func synthesize(re: UnsafePointer<Float>, im: UnsafePointer<Float>, is34: Bool, top: Int,
                           outRe: UnsafeMutablePointer<Float>, outIm: UnsafeMutablePointer<Float>) {
        let widths = is34 ? splitWidths34 : splitWidths20
        let bands = bandCount(is34: is34), split = splitBands(is34: is34), first = hybridBands(is34: is34)
        let top = min(max(top, first), bands)
        var k = 0
        for (band, width) in widths.enumerated() {
            for n in Swift.stride(from: 0, to: 32, by: 8) {
                var sr = loadFloat8(re + k * 32 + n), si = loadFloat8(im + k * 32 + n)
                for j in 1..<width {
                    sr += loadFloat8(re + (k + j) * 32 + n)
                    si += loadFloat8(im + (k + j) * 32 + n)
                }
                for i in 0..<8 {
                    outRe[(n + i) * 64 + band] = sr[i]
                    outIm[(n + i) * 64 + band] = si[i]
                }
            }
            k += width
        }
        let topQMF = top - first + split
        // Hybrid band k is QMF band k − first + split.
        let iRe = re + (first - split) * 32, iIm = im + (first - split) * 32
        var band = split
        while band + 4 <= topQMF {
            for n in Swift.stride(from: 0, to: 32, by: 4) {
                sbrTransposeBlock(iRe + band * 32 + n, 32, outRe + n * 64 + band, 64)
                sbrTransposeBlock(iIm + band * 32 + n, 32, outIm + n * 64 + band, 64)
            }
            band += 4
        }
        for n in 0..<32 {
            let oRe = outRe + n * 64, oIm = outIm + n * 64
            for band in band..<topQMF {
                oRe[band] = iRe[band * 32 + n]
                oIm[band] = iIm[band * 32 + n]
            }
            for band in topQMF..<64 {
                oRe[band] = 0
                oIm[band] = 0
            }
        }
    }

    /// A Q-band complex split of one QMF band's 44 slots: band q at slot n is
    /// Σ_j h_q(j)·x(n + j), j = 0…12, written band-major from `out`, rows `stride` apart.
    /// The taps are a symmetric prototype times e^(−iθ(j − 6)): taps j and 12 − j have the
    /// same real part and opposite imaginary parts, so each pair is applied to the sum and
    /// the difference of its two inputs, which all Q bands share (`pairs`, 6 × 4 × 8 floats).
    private static func complexSplit(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                                     _ filter: (re: [Float], im: [Float]), bands: Int,
                                     _ outRe: UnsafeMutablePointer<Float>, _ outIm: UnsafeMutablePointer<Float>,
                                     _ stride: Int, _ pairs: UnsafeMutablePointer<Float>) {
        filter.re.withUnsafeBufferPointer { fr in
            filter.im.withUnsafeBufferPointer { fi in
                precondition(fr.count >= bands * 13 && fi.count >= bands * 13)
                for n in Swift.stride(from: 0, to: 32, by: 8) {
                    for j in 0..<6 {
                        let a = loadFloat8(xr + n + j), b = loadFloat8(xr + n + 12 - j)
                        let c = loadFloat8(xi + n + j), d = loadFloat8(xi + n + 12 - j)
                        let u = pairs + j * 32
                        storeFloats(a + b, u)
                        storeFloats(c + d, u + 8)
                        storeFloats(a - b, u + 16)
                        storeFloats(c - d, u + 24)
                    }
                    let midRe = loadFloat8(xr + n + 6), midIm = loadFloat8(xi + n + 6)
                    for q in 0..<bands {
                        let a6 = fr[q * 13 + 6], b6 = fi[q * 13 + 6]
                        var sr = a6 * midRe - b6 * midIm, si = a6 * midIm + b6 * midRe
                        for j in 0..<6 {
                            let a = fr[q * 13 + j], b = fi[q * 13 + j], u = pairs + j * 32
                            sr += a * loadFloat8(u) - b * loadFloat8(u + 24)
                            si += a * loadFloat8(u + 8) + b * loadFloat8(u + 16)
                        }
                        storeFloats(sr, outRe + q * stride + n)
                        storeFloats(si, outIm + q * stride + n)
                    }
                }
            }
        }
    }

    /// The real 2-band split: the prototype (low) and the prototype modulated by (−1)^(j−6)
    /// (high); its odd-offset taps are the only ones besides the middle.
    private static func realSplit(_ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
                                  _ lowRe: UnsafeMutablePointer<Float>, _ lowIm: UnsafeMutablePointer<Float>,
                                  _ highRe: UnsafeMutablePointer<Float>, _ highIm: UnsafeMutablePointer<Float>) {
        let g = PSTables.filter2
        let g1 = g[1], g3 = g[3], g5 = g[5], g6 = g[6]
        for n in Swift.stride(from: 0, to: 32, by: 8) {
            let midRe = g6 * loadFloat8(xr + n + 6), midIm = g6 * loadFloat8(xi + n + 6)
            var sideRe = g1 * (loadFloat8(xr + n + 1) + loadFloat8(xr + n + 11))
            var sideIm = g1 * (loadFloat8(xi + n + 1) + loadFloat8(xi + n + 11))
            sideRe += g3 * (loadFloat8(xr + n + 3) + loadFloat8(xr + n + 9))
            sideIm += g3 * (loadFloat8(xi + n + 3) + loadFloat8(xi + n + 9))
            sideRe += g5 * (loadFloat8(xr + n + 5) + loadFloat8(xr + n + 7))
            sideIm += g5 * (loadFloat8(xi + n + 5) + loadFloat8(xi + n + 7))
            storeFloats(midRe + sideRe, lowRe + n)
            storeFloats(midIm + sideIm, lowIm + n)
            storeFloats(midRe - sideRe, highRe + n)
            storeFloats(midIm - sideIm, highIm + n)
        }
    }
}

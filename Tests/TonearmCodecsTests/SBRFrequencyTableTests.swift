import XCTest
@testable import TonearmCodecs

/// The SBR frequency band tables (ISO/IEC 14496-3 §4.6.18.3.2, §4.6.18.6.3), worked by hand
/// from the standard's formulas, and the limits that make a header invalid.
final class SBRFrequencyTableTests: XCTestCase {
    /// 44.1 kHz, start 5, stop 9, 10 bands per octave warped (the defaults of freq_scale 2,
    /// alter_scale 1): startMin 12 + offset 2 = k0 14; stopMin 23 + the 9 smallest of the 13
    /// geometric steps (2,2,2,2,3,3,3,3,4) = k2 47. 47/14 > 2.2449, so two regions: 10 bands
    /// from 14 to 28, then 2·NINT(10·log2(47/28)/2.6) = 6 bands from 28 to 47 (steps 2,3,3,3,4,4,
    /// none narrower than the first region's widest, 2).
    func testTwoRegionMasterTableAt44100() throws {
        let t = try XCTUnwrap(SBRFrequencyTables(header: SBRHeader(startFrequency: 5, stopFrequency: 9), outputRate: 44100))
        XCTAssertEqual(t.k0, 14)
        XCTAssertEqual(t.k2, 47)
        XCTAssertEqual(t.master, [14, 15, 16, 17, 18, 19, 20, 22, 24, 26, 28, 30, 33, 36, 39, 43, 47])
        XCTAssertEqual(t.high, t.master)
        // N_high 16 is even: every other edge from the first.
        XCTAssertEqual(t.low, [14, 16, 18, 20, 24, 28, 33, 39, 47])
        XCTAssertEqual(t.kx, 14)
        XCTAssertEqual(t.m, 33)
        // N_Q = NINT(2·log2(47/14)) = 3; the edges at low-table indices 0, 2, 5, 8.
        XCTAssertEqual(t.noise, [14, 18, 28, 47])
        // goalSb = NINT(2.048e6/44100) = 46: patches end at 26, 36 and 47, each starting on the
        // band parity its target needs.
        XCTAssertEqual(t.patchStart, [2, 4, 2])
        XCTAssertEqual(t.patchCount, [12, 10, 11])
        // Limiter, 2 bands per octave: edges closer than 0.245 octave merge; the patch borders
        // 26 and 36 push out the non-border edges 24 and 33 beside them.
        XCTAssertEqual(t.limiter, [14, 18, 26, 36, 47])
    }

    /// 48 kHz, start 3, stop 5, linear bands of 1 (freq_scale 0, alter_scale 0): k0 = 11 + 0,
    /// k2 = 21 + 2+2+2+2+3 = 32; 2·⌊21/2⌋ = 20 bands, the one band left over widening the last.
    func testLinearMasterTableAt48000() throws {
        let h = SBRHeader(startFrequency: 3, stopFrequency: 5, frequencyScale: 0, alterScale: 0)
        let t = try XCTUnwrap(SBRFrequencyTables(header: h, outputRate: 48000))
        XCTAssertEqual(t.k0, 11)
        XCTAssertEqual(t.k2, 32)
        XCTAssertEqual(t.master, Array(11...30) + [32])
        XCTAssertEqual(t.low, [11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 32])
        XCTAssertEqual(t.noise, [11, 17, 23, 32])
        // goalSb 43 is past the top: the patches run from the master table's end; the third
        // would be 2 bands wide and is dropped, leaving bands 30 and 31 empty.
        XCTAssertEqual(t.patchStart, [1, 1])
        XCTAssertEqual(t.patchCount, [10, 9])
        XCTAssertEqual(t.limiter, [11, 15, 21, 25, 32])
        // bs_limiter_bands 0: one limiter band. 3 bands per octave (edges 0.163 octave apart)
        // keeps more edges; 32 is within that of 29 and is no patch border, so it goes.
        XCTAssertEqual(t.withLimiterBands(0).limiter, [11, 32])
        XCTAssertEqual(t.withLimiterBands(3).limiter, [11, 13, 15, 17, 21, 25, 29])
    }

    /// alter_scale 1 with freq_scale 0: bands of 2, 2·NINT(21/4) = 10 of them, one band short:
    /// the last is 3 wide.
    func testLinearBandsOfTwo() throws {
        let h = SBRHeader(startFrequency: 3, stopFrequency: 5, frequencyScale: 0, alterScale: 1)
        let t = try XCTUnwrap(SBRFrequencyTables(header: h, outputRate: 48000))
        XCTAssertEqual(t.master, [11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 32])
        // An odd crossover: N_high 9, the low table's edges from index 1 on shift down by one.
        let x = try XCTUnwrap(SBRFrequencyTables(header: SBRHeader(startFrequency: 3, stopFrequency: 5, crossoverBand: 1,
                                                                   frequencyScale: 0, alterScale: 1), outputRate: 48000))
        XCTAssertEqual(x.high, [13, 15, 17, 19, 21, 23, 25, 27, 29, 32])
        XCTAssertEqual(x.low, [13, 15, 19, 23, 27, 32])
        XCTAssertEqual(x.kx, 13)
    }

    /// Every bs_freq_scale at 22.05 kHz (16 kHz and 24 kHz have their own start tables, too).
    func testBandsPerOctave() throws {
        // 22.05 kHz: startMin NINT(3000·128/22050) = 17, start 4 → k0 = 16; stopMin 35, stop 14 → 2·k0.
        for (scale, count) in [(1, 12), (2, 10), (3, 8)] {
            let h = SBRHeader(startFrequency: 4, stopFrequency: 14, frequencyScale: scale, alterScale: 0)
            let t = try XCTUnwrap(SBRFrequencyTables(header: h, outputRate: 22050))
            XCTAssertEqual(t.k0, 16)
            XCTAssertEqual(t.k2, 32)
            // One octave, one region: `count` bands.
            XCTAssertEqual(t.master.count - 1, count, "freq_scale \(scale)")
            XCTAssertEqual(t.master.first, 16)
            XCTAssertEqual(t.master.last, 32)
        }
        // freq_scale 3 (8 per octave): steps of 16·2^(k/8) are 1,2,2,2,2,2,2,3 sorted.
        let t = try XCTUnwrap(SBRFrequencyTables(header: SBRHeader(startFrequency: 4, stopFrequency: 14, frequencyScale: 3, alterScale: 0), outputRate: 22050))
        XCTAssertEqual(t.master, [16, 17, 19, 21, 23, 25, 27, 29, 32])
        XCTAssertEqual(SBRFrequencyTables.startStop(SBRHeader(startFrequency: 0, stopFrequency: 0), outputRate: 16000)?.k0, 24 - 8)
        XCTAssertEqual(SBRFrequencyTables.startStop(SBRHeader(startFrequency: 15, stopFrequency: 15), outputRate: 24000)?.k0, 16 + 16)
        XCTAssertEqual(SBRFrequencyTables.startStop(SBRHeader(startFrequency: 15, stopFrequency: 13), outputRate: 96000)?.k0, 7 + 24)
    }

    func testInvalidHeadersAreRefused() {
        // k2 − k0 = 64 − 31 = 33 > 32 at 48 kHz.
        XCTAssertNil(SBRFrequencyTables(header: SBRHeader(startFrequency: 15, stopFrequency: 15), outputRate: 48000))
        // k0 8, k2 16: 10 bands per octave over one octave of 8 QMF bands leaves bands of width 0.
        XCTAssertNil(SBRFrequencyTables(header: SBRHeader(startFrequency: 0, stopFrequency: 14), outputRate: 44100))
        // A crossover band past the master table (k0 18, k2 23: N_Master 2 at 8 bands per octave).
        let h = SBRHeader(startFrequency: 9, stopFrequency: 0, crossoverBand: 7, frequencyScale: 3, alterScale: 0)
        XCTAssertEqual(SBRFrequencyTables(header: SBRHeader(startFrequency: 9, stopFrequency: 0, crossoverBand: 1, frequencyScale: 3, alterScale: 0), outputRate: 44100)?.master, [18, 20, 23])
        XCTAssertNil(SBRFrequencyTables(header: h, outputRate: 44100))
        // An output rate the start tables do not list.
        XCTAssertNil(SBRFrequencyTables(header: SBRHeader(startFrequency: 5, stopFrequency: 9), outputRate: 44000))
        // No header value, at any listed rate, traps or gives a table outside the QMF bands.
        for rate in [16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000] {
            for start in 0..<16 {
                for stop in 0..<16 {
                    for scale in 0..<4 {
                        for alter in 0..<2 {
                            for xover in 0..<8 {
                                let h = SBRHeader(startFrequency: start, stopFrequency: stop, crossoverBand: xover,
                                                  frequencyScale: scale, alterScale: alter, noiseBands: 3, limiterBands: 3)
                                guard let t = SBRFrequencyTables(header: h, outputRate: rate) else { continue }
                                XCTAssertLessThanOrEqual(t.kx + t.m, 64)
                                XCTAssertLessThanOrEqual(t.noiseCount, 5)
                                XCTAssertLessThanOrEqual(t.patchCount.count, 5)
                                XCTAssertEqual(t.limiter.first, t.kx)
                                // The last edge may be a patch's end below k_x + M: the bands
                                // no patch reaches get no gain.
                                XCTAssertLessThanOrEqual(t.limiter.last!, t.kx + t.m)
                                XCTAssertEqual(t.limiter, t.limiter.sorted())
                            }
                        }
                    }
                }
            }
        }
    }

    func testHeaderFieldsAndDefaults() {
        // amp_res 0, start 5, stop 9, xover 2, reserved, extra_1 1 (scale 3, alter 0, noise 1),
        // extra_2 0.
        var bits = SBRTestBits()
        bits.put(0, 1); bits.put(5, 4); bits.put(9, 4); bits.put(2, 3); bits.put(0, 2)
        bits.put(1, 1); bits.put(0, 1); bits.put(3, 2); bits.put(0, 1); bits.put(1, 2)
        let bytes = bits.bytes
        let h = bytes.withUnsafeBufferPointer { p -> SBRHeader in
            var r = SBRBits(p.baseAddress!, bitPosition: 0, bitCount: bits.count)
            return SBRHeader(&r)
        }
        XCTAssertEqual(h.ampRes, 0)
        XCTAssertEqual(h.startFrequency, 5)
        XCTAssertEqual(h.stopFrequency, 9)
        XCTAssertEqual(h.crossoverBand, 2)
        XCTAssertEqual(h.frequencyScale, 3)
        XCTAssertEqual(h.alterScale, 0)
        XCTAssertEqual(h.noiseBands, 1)
        XCTAssertEqual([h.limiterBands, h.limiterGains, h.interpolateFrequency, h.smoothingMode], [2, 2, 1, 1])
        var other = h
        other.limiterGains = 0
        XCTAssertFalse(h.needsReset(to: other))
        other.noiseBands = 2
        XCTAssertTrue(h.needsReset(to: other))
    }
}

/// An MSB-first bit writer for building payloads in tests.
struct SBRTestBits {
    private(set) var bits: [UInt8] = []
    var count: Int { bits.count }
    mutating func put(_ value: Int, _ n: Int) {
        for i in stride(from: n - 1, through: 0, by: -1) { bits.append(UInt8(value >> i & 1)) }
    }
    /// A Huffman code's word for a value (SBRTables' form).
    mutating func put(code words: [UInt32], _ value: Int) {
        let w = words[value + words.count / 2]
        put(Int(w & 0xFFFFF), Int(w >> 20))
    }
    var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: (bits.count + 7) / 8 + 1)
        for (i, b) in bits.enumerated() where b == 1 { out[i / 8] |= 0x80 >> (i % 8) }
        return out
    }
}

import Foundation
import XCTest
@testable import TonearmCodecs

/// sbr_extension_data read from payloads built bit by bit (ISO/IEC 14496-3 §4.4.2.8), the
/// values decoded and dequantised (§4.6.18.3), and what the decoder does with payloads
/// that are invalid, truncated or missing.
final class SBRPayloadTests: XCTestCase {
    /// Every code is a complete prefix code (Kraft sum exactly 1) and decodes to its value.
    func testHuffmanCodes() {
        let all: [[UInt32]] = [SBRTables.envelope15Time, SBRTables.envelope15Frequency, SBRTables.balance15Time,
                               SBRTables.balance15Frequency, SBRTables.envelope30Time, SBRTables.envelope30Frequency,
                               SBRTables.balance30Time, SBRTables.balance30Frequency, SBRTables.noiseTime,
                               SBRTables.noiseBalanceTime]
        XCTAssertEqual(all.map(\.count), [121, 121, 49, 49, 63, 63, 25, 25, 63, 25])
        for words in all {
            var kraft = 0  // in units of 2^-20
            for w in words { kraft += 1 << (20 - Int(w >> 20)) }
            XCTAssertEqual(kraft, 1 << 20)
            let code = SBRHuffman(words)
            var bits = SBRTestBits()
            for v in -code.lav...code.lav { bits.put(code: words, v) }
            let bytes = bits.bytes
            bytes.withUnsafeBufferPointer { p in
                var r = SBRBits(p.baseAddress!, bitPosition: 0, bitCount: bits.count)
                for v in -code.lav...code.lav { XCTAssertEqual(code.decode(&r), v) }
                XCTAssertEqual(r.position, bits.count)
            }
        }
    }

    /// bs_header_flag and a header with neither optional part: 44.1 kHz, start 5, stop 9 (the
    /// tables of SBRFrequencyTableTests: N_low 8, N_high 16, N_Q 3).
    func putHeader(_ b: inout SBRTestBits, ampRes: Int = 1) {
        b.put(1, 1)
        b.put(ampRes, 1); b.put(5, 4); b.put(9, 4); b.put(0, 3); b.put(0, 2); b.put(0, 1); b.put(0, 1)
    }

    /// An SCE payload: FIXFIX with 2 envelopes at low resolution, the first coded in
    /// frequency, the second in time; noise the same; one sinusoid; a PS extension.
    func singlePayload() -> SBRTestBits {
        var b = SBRTestBits()
        putHeader(&b)
        b.put(0, 1)                          // bs_data_extra
        b.put(0, 2); b.put(1, 2); b.put(0, 1)  // FIXFIX, 2 envelopes, low resolution
        b.put(0, 1); b.put(1, 1)             // bs_df_env
        b.put(0, 1); b.put(1, 1)             // bs_df_noise
        for m in [3, 2, 1] { b.put(m, 2) }   // bs_invf_mode
        b.put(20, 6)
        for d in [1, -2, 0, 0, 3, -1, 0] { b.put(code: SBRTables.envelope30Frequency, d) }
        for d in [1, 1, 1, 1, 1, 1, 1, -1] { b.put(code: SBRTables.envelope30Time, d) }
        b.put(10, 5)
        for d in [2, -1] { b.put(code: SBRTables.envelope30Frequency, d) }
        for d in [0, 1, -1] { b.put(code: SBRTables.noiseTime, d) }
        b.put(1, 1)                          // bs_add_harmonic_flag
        for k in 0..<16 { b.put(k == 3 ? 1 : 0, 1) }
        b.put(1, 1); b.put(2, 4)             // bs_extended_data, 2 bytes
        b.put(2, 2); b.put(0b10_1100_1110_0011, 14)  // EXTENSION_ID_PS and its bits
        return b
    }

    func parse(_ d: SBRDecoder, _ b: SBRTestBits, crc: Bool = false, pair: Bool = false) -> Bool {
        d.parse(b.bytes, bitPosition: 0, bitCount: b.count, crc: crc, elementIsPair: pair)
    }

    func testSingleChannelElement() throws {
        let d = SBRDecoder(outputSampleRate: 44100, channels: 1)
        XCTAssertTrue(parse(d, singlePayload()), String(describing: d.lastError))
        let c = d.channels[0]
        XCTAssertTrue(d.headerInPayload)
        XCTAssertEqual(d.header?.frequencyScale, 2)
        XCTAssertEqual(d.tables?.lowCount, 8)
        XCTAssertEqual([c.frameClass, c.envelopeCount, c.noiseCount, c.ampRes], [0, 2, 2, 1])
        XCTAssertEqual(Array(c.borders[0...2]), [0, 8, 16])
        XCTAssertEqual(Array(c.noiseBorders[0...2]), [0, 8, 16])
        XCTAssertEqual(Array(c.invf[0..<3]), [3, 2, 1])
        XCTAssertEqual(Array(c.envelopeQ[64..<72]), [20, 21, 19, 19, 19, 22, 21, 21])
        XCTAssertEqual(Array(c.envelopeQ[128..<136]), [21, 22, 20, 20, 20, 23, 22, 20])
        // Row 0 keeps the last envelope for the next frame's time deltas.
        XCTAssertEqual(Array(c.envelopeQ[0..<8]), [21, 22, 20, 20, 20, 23, 22, 20])
        XCTAssertEqual(Array(c.noiseQ[5..<8]), [10, 12, 11])
        XCTAssertEqual(Array(c.noiseQ[10..<13]), [10, 13, 10])
        XCTAssertTrue(c.addHarmonicFlag)
        XCTAssertEqual((0..<16).filter { c.addHarmonic[$0] }, [3])
        XCTAssertEqual(d.psBitCount, 14)
        XCTAssertEqual(Array(d.psBytes[0..<2]), [0b1011_0011, 0b1000_1100])
        // E_orig = 64·2^E at 3.0 dB; Q_orig = 2^(6 − Q).
        d.dequantize()
        XCTAssertEqual(c.envelope[0], 0x1p26)
        XCTAssertEqual(c.envelope[64 + 5], 0x1p29)
        XCTAssertEqual(Array(c.noise[0..<3]), [0x1p-4, 0x1p-6, 0x1p-5])
        XCTAssertEqual(Array(c.noise[5..<8]), [0x1p-4, 0x1p-7, 0x1p-4])

        // The next frame's time deltas start from the last envelope, mapped to high
        // resolution (N_high 16 even: high band j takes low band j/2).
        var b = SBRTestBits()
        b.put(0, 1)                                  // no header
        b.put(0, 1)
        b.put(0, 2); b.put(0, 2); b.put(1, 1)        // FIXFIX, 1 envelope, high resolution
        b.put(1, 1); b.put(1, 1)                     // time deltas
        for m in [0, 0, 0] { b.put(m, 2) }
        // One envelope: amp_res 0 (1.5 dB) for FIXFIX with a single envelope.
        for _ in 0..<16 { b.put(code: SBRTables.envelope15Time, 2) }
        for _ in 0..<3 { b.put(code: SBRTables.noiseTime, 0) }
        b.put(0, 1); b.put(0, 1)
        XCTAssertTrue(parse(d, b), String(describing: d.lastError))
        XCTAssertFalse(d.headerInPayload)
        XCTAssertEqual(c.ampRes, 0)
        XCTAssertEqual(Array(c.envelopeQ[64..<80]), [23, 23, 24, 24, 22, 22, 22, 22, 22, 22, 25, 25, 24, 24, 22, 22])
        XCTAssertEqual(Array(c.noiseQ[5..<8]), [10, 13, 10])
        XCTAssertEqual(Array(c.previousInvf[0..<3]), [3, 2, 1])
        d.dequantize()
        // 1.5 dB: E_orig = 64·2^(E/2).
        XCTAssertEqual(c.envelope[0], Float(64 * pow(2, 11.5)), accuracy: 1)
    }

    func testCoupledChannelPair() throws {
        var b = SBRTestBits()
        putHeader(&b)
        b.put(0, 1); b.put(1, 1)                     // bs_data_extra, bs_coupling
        b.put(0, 2); b.put(0, 2); b.put(0, 1)        // FIXFIX, 1 envelope (1.5 dB), low
        b.put(0, 1); b.put(0, 1)                     // channel 0: frequency deltas
        b.put(0, 1); b.put(0, 1)                     // channel 1
        for m in [1, 1, 2] { b.put(m, 2) }
        b.put(40, 7)
        for _ in 0..<7 { b.put(code: SBRTables.envelope15Frequency, 0) }
        b.put(6, 5)
        for _ in 0..<2 { b.put(code: SBRTables.envelope30Frequency, 0) }
        b.put(12, 6)                                 // balance start, ×2
        b.put(code: SBRTables.balance15Frequency, 1)
        for _ in 0..<6 { b.put(code: SBRTables.balance15Frequency, 0) }
        b.put(6, 5)
        for _ in 0..<2 { b.put(code: SBRTables.balance30Frequency, 0) }
        b.put(0, 1); b.put(0, 1); b.put(0, 1)        // no sinusoids, no extended data
        let d = SBRDecoder(outputSampleRate: 44100, channels: 2)
        XCTAssertTrue(parse(d, b, pair: true), String(describing: d.lastError))
        XCTAssertTrue(d.coupling)
        let (c0, c1) = (d.channels[0], d.channels[1])
        XCTAssertEqual(c1.envelopeCount, 1)
        XCTAssertEqual(Array(c1.invf[0..<3]), [1, 1, 2])
        XCTAssertEqual(Array(c1.envelopeQ[64..<67]), [24, 26, 26])
        XCTAssertEqual(Array(c1.noiseQ[5..<8]), [12, 12, 12])
        d.dequantize()
        // Level 2^(40/2 + 7); balance 24 (centre at 1.5 dB) splits it evenly, 26 by 2^(−1).
        XCTAssertEqual(c0.envelope[0], 0x1p26)
        XCTAssertEqual(c1.envelope[0], 0x1p26)
        XCTAssertEqual(c0.envelope[1], 0x1p27 / 1.5, accuracy: 1)
        XCTAssertEqual(c1.envelope[1], 0x1p27 / 3, accuracy: 1)
        XCTAssertEqual(Array(c0.noise[0..<3]), [1, 1, 1])
        XCTAssertEqual(Array(c1.noise[0..<3]), [1, 1, 1])
    }

    func testCRC() {
        var body = singlePayload()
        // Fill bits to the end of the payload: a spare byte, then to a byte boundary (the
        // payload follows a 4-bit type). The CRC covers them too.
        body.put(0, 8 + (8 - (body.count + 10 + 4) % 8) % 8)
        let crc = SBRTestBits.crc10(body)
        var b = SBRTestBits()
        b.put(crc, 10)
        b.append(body)
        let d = SBRDecoder(outputSampleRate: 44100, channels: 1)
        XCTAssertTrue(parse(d, b, crc: true), String(describing: d.lastError))
        XCTAssertEqual(Array(d.channels[0].envelopeQ[64..<72]), [20, 21, 19, 19, 19, 22, 21, 21])
        body.flip(40)
        var bad = SBRTestBits()
        bad.put(crc, 10)
        bad.append(body)
        XCTAssertFalse(parse(d, bad, crc: true))
        XCTAssertEqual(d.lastError, .crc)
        XCTAssertFalse(d.active)
    }

    func testInvalidPayloadsTurnSBROff() {
        func grid(_ put: (inout SBRTestBits) -> Void) -> SBRTestBits {
            var b = SBRTestBits()
            putHeader(&b)
            b.put(0, 1)
            put(&b)
            for _ in 0..<400 { b.put(0, 1) }
            return b
        }
        let d = SBRDecoder(outputSampleRate: 44100, channels: 1)
        // FIXFIX with 2^3 = 8 envelopes.
        XCTAssertFalse(parse(d, grid { $0.put(0, 2); $0.put(3, 2) }))
        XCTAssertEqual(d.lastError, .data)
        XCTAssertFalse(d.active)
        XCTAssertEqual([d.kx, d.m], [32, 0])
        // VARVAR with 3 + 3 relative borders: 7 envelopes.
        XCTAssertFalse(parse(d, grid { $0.put(3, 2); $0.put(0, 2); $0.put(0, 2); $0.put(3, 2); $0.put(3, 2) }))
        XCTAssertEqual(d.lastError, .data)
        // FIXVAR whose relative borders run below the leading border: 16 − 3·8 < 0.
        XCTAssertFalse(parse(d, grid { $0.put(1, 2); $0.put(0, 2); $0.put(3, 2); for _ in 0..<3 { $0.put(3, 2) } }))
        XCTAssertEqual(d.lastError, .data)
        // An envelope value below 0: start 0, then −1.
        var b = SBRTestBits()
        putHeader(&b)
        b.put(0, 1); b.put(0, 2); b.put(0, 2); b.put(0, 1); b.put(0, 1); b.put(0, 1)
        for _ in 0..<3 { b.put(0, 2) }
        b.put(0, 7); b.put(code: SBRTables.envelope15Frequency, -1)
        for _ in 0..<100 { b.put(0, 1) }
        XCTAssertFalse(parse(d, b))
        XCTAssertEqual(d.lastError, .data)
        // The valid payload cut short, and given to a decoder of the wrong element.
        let full = singlePayload()
        XCTAssertFalse(d.parse(full.bytes, bitPosition: 0, bitCount: full.count / 2, crc: false, elementIsPair: false))
        XCTAssertEqual(d.lastError, .truncated)
        XCTAssertFalse(parse(d, full, pair: true))
        XCTAssertEqual(d.lastError, .element)
        // A header whose tables break the limits: 48 kHz, start 15, stop 15.
        var h = SBRTestBits()
        h.put(1, 1); h.put(1, 1); h.put(15, 4); h.put(15, 4); h.put(0, 3); h.put(0, 2); h.put(0, 2)
        let d48 = SBRDecoder(outputSampleRate: 48000, channels: 1)
        XCTAssertFalse(parse(d48, h))
        XCTAssertEqual(d48.lastError, .header)
        // And then a valid one works again.
        XCTAssertTrue(parse(d, full))
        XCTAssertTrue(d.active)
    }

    /// Without SBR data the output is the core upsampled through the QMF banks, delayed by
    /// ``SBRDecoder/delay``; a frame with no payload while SBR is on turns it off.
    func testUpsamplingFallbackAndItsDelay() {
        let d = SBRDecoder(outputSampleRate: 44100, channels: 1)
        let frames = 12
        let input = (0..<1024 * frames).map { Float(0.5 * sin(2 * .pi * 1000 * Double($0) / 22050)) }
        var output = [Float](repeating: 0, count: 2048 * frames)
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                for f in 0..<frames { d.process(channel: 0, core: i.baseAddress! + 1024 * f, output: o.baseAddress! + 2048 * f) }
            }
        }
        var e = 0.0
        for n in 4096..<2048 * frames {
            let x = Double(output[n]) - 0.5 * sin(2 * .pi * 1000 * Double(n - SBRDecoder.delay) / 44100)
            e += x * x
        }
        XCTAssertEqual(SBRDecoder.delay, 962)
        XCTAssertLessThan((e / Double(2048 * frames - 4096)).squareRoot(), 5e-4)

        XCTAssertTrue(parse(d, singlePayload()))
        XCTAssertTrue(d.active)
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                d.process(channel: 0, core: i.baseAddress!, output: o.baseAddress!)
                XCTAssertTrue(d.active)
                XCTAssertEqual([d.kx, d.m], [14, 33])
                d.process(channel: 0, core: i.baseAddress!, output: o.baseAddress!)
            }
        }
        XCTAssertFalse(d.active)
        XCTAssertEqual([d.kx, d.m], [32, 0])
    }

    /// After ``SBRDecoder/resetState()`` (a seek) the decoder gives what a new one gives.
    func testResetStateIsAFreshDecoder() {
        let core = (0..<1024).map { Float(sin(Double($0) * 0.05)) * 0.3 }
        func run(_ d: SBRDecoder) -> [Float] {
            var out = [Float](repeating: 0, count: 2048 * 3)
            XCTAssertTrue(parse(d, singlePayload()))
            core.withUnsafeBufferPointer { i in
                out.withUnsafeMutableBufferPointer { o in
                    for f in 0..<3 {
                        if f > 0 {
                            // The same payload each frame: its first envelope and noise floor are
                            // frequency coded, so it reads the same whatever came before.
                            XCTAssertTrue(parse(d, singlePayload()))
                        }
                        d.process(channel: 0, core: i.baseAddress!, output: o.baseAddress! + 2048 * f)
                    }
                }
            }
            return out
        }
        let used = SBRDecoder(outputSampleRate: 44100, channels: 1)
        let first = run(used)
        XCTAssertGreaterThan(first.map(abs).max()!, 0.1)
        used.resetState()
        XCTAssertEqual(run(used), first)
        XCTAssertEqual(run(SBRDecoder(outputSampleRate: 44100, channels: 1)), first)
    }

    /// Random and mutated payloads, each followed by a frame: no trap, finite output.
    func testArbitraryPayloadsNeverTrap() {
        var seed: UInt64 = 0x5EED
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        let core = (0..<1024).map { Float(sin(Double($0) * 0.3)) * 0.5 }
        var out = [Float](repeating: 0, count: 2048)
        let valid = singlePayload().bytes
        for channels in [1, 2] {
            let d = SBRDecoder(outputSampleRate: [44100, 48000, 24000, 96000][Int(next() % 4)], channels: channels)
            for round in 0..<1500 {
                var bytes: [UInt8]
                if round % 2 == 0 {
                    bytes = (0..<Int(next() % 80) + 1).map { _ in UInt8(truncatingIfNeeded: next()) }
                    bytes[0] |= 0x80  // a header, so the data behind it is read
                } else {
                    bytes = valid
                    for _ in 0..<Int(next() % 6) + 1 { bytes[Int(next()) % bytes.count] ^= UInt8(1 << (next() % 8)) }
                }
                d.parse(bytes, bitPosition: 0, bitCount: bytes.count * 8 - Int(next() % 8), crc: next() % 4 == 0,
                        elementIsPair: channels == 2)
                for c in 0..<channels {
                    core.withUnsafeBufferPointer { i in
                        out.withUnsafeMutableBufferPointer { d.process(channel: c, core: i.baseAddress!, output: $0.baseAddress!) }
                    }
                    XCTAssertTrue(out.allSatisfy(\.isFinite), "round \(round)")
                }
            }
        }
    }
}

extension SBRTestBits {
    mutating func append(_ other: SBRTestBits) { for b in other.bitsArray { put(Int(b), 1) } }
    var bitsArray: [UInt8] { (0..<count).map { bytes[$0 / 8] >> (7 - $0 % 8) & 1 } }
    mutating func flip(_ i: Int) {
        var all = bitsArray
        all[i] ^= 1
        self = SBRTestBits()
        for b in all { put(Int(b), 1) }
    }
    /// bs_sbr_crc_bits of a payload body (fill bits included): CRC-10 (x¹⁰+x⁹+x⁵+x⁴+x+1,
    /// initial 0) over its bits, written independently of the decoder's.
    static func crc10(_ body: SBRTestBits) -> Int {
        var crc = 0
        for b in body.bitsArray {
            let top = crc >> 9 & 1
            crc = (crc << 1) & 0x3FF
            if top ^ Int(b) == 1 { crc ^= 0x233 }
        }
        return crc
    }
}

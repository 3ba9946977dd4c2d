import XCTest
@testable import TonearmCodecs
import TonearmTestSupport

final class Layer3HuffmanTests: XCTestCase {
    // MARK: - Helpers

    /// MSB-first bit writer for building test streams.
    private struct Bits {
        var bytes: [UInt8] = []
        var count = 0
        mutating func put(_ value: Int, _ n: Int) {
            guard n > 0 else { return }
            for k in stride(from: n - 1, through: 0, by: -1) {
                if count % 8 == 0 { bytes.append(0) }
                if (value >> k) & 1 != 0 { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
                count += 1
            }
        }
        mutating func put(_ s: String) {
            for c in s where c == "0" || c == "1" { put(c == "1" ? 1 : 0, 1) }
        }
    }

    private struct Setup {
        var start = 0
        var end: Int? = nil
        var bigValues = 0
        var tables = (1, 1, 1)
        var region1 = 576
        var region2 = 576
        var count1B = false
    }

    /// Decodes `bytes` (exactly sized heap buffer) and returns (n, all 576 values).
    private func decode(_ bytes: [UInt8], _ s: Setup) -> (Int, [Int32]) {
        var out = [Int32](repeating: 0x5A5A, count: 576)
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { raw.deallocate() }
        raw.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: bytes.count))
        let n = out.withUnsafeMutableBufferPointer { o in
            Layer3Huffman.decode(UnsafeRawBufferPointer(raw), start: s.start, end: s.end ?? bytes.count * 8,
                                 bigValues: s.bigValues, tableSelect: s.tables, region1Start: s.region1,
                                 region2Start: s.region2, count1TableB: s.count1B, into: o.baseAddress!)
        }
        return (n, out)
    }

    private func code(table number: Int, x: Int, y: Int) -> (code: Int, length: Int) {
        let t = Layer3HuffmanTables.pairCode(number)!
        let w = t.words[x * t.size + y]
        return (Int(w & 0xFFFFF), Int(w >> 20))
    }

    /// Encodes a pair the way §2.4.2.7 lays it out: code, x linbits, x sign, y linbits, y sign.
    private func encodePair(_ bits: inout Bits, table: Int, _ x: Int, _ y: Int) {
        let number = Layer3HuffmanTables.codeNumber(forTable: table)
        guard number != 0 else { return }
        let lin = Layer3HuffmanTables.linbits[table]
        let ax = min(abs(x), lin > 0 ? 15 : 99), ay = min(abs(y), lin > 0 ? 15 : 99)
        let c = code(table: number, x: ax, y: ay)
        bits.put(c.code, c.length)
        if ax != 0 {
            if lin > 0 && ax == 15 { bits.put(abs(x) - 15, lin) }
            bits.put(x < 0 ? 1 : 0, 1)
        }
        if ay != 0 {
            if lin > 0 && ay == 15 { bits.put(abs(y) - 15, lin) }
            bits.put(y < 0 ? 1 : 0, 1)
        }
    }

    private func encodeQuad(_ bits: inout Bits, tableB: Bool, _ q: [Int]) {
        let index = (q[0] != 0 ? 8 : 0) | (q[1] != 0 ? 4 : 0) | (q[2] != 0 ? 2 : 0) | (q[3] != 0 ? 1 : 0)
        let w = (tableB ? Layer3HuffmanTables.count1B : Layer3HuffmanTables.count1A)[index]
        bits.put(Int(w & 0xFFFFF), Int(w >> 20))
        for v in q where v != 0 { bits.put(v < 0 ? 1 : 0, 1) }
    }

    /// A random value a table can code: 0..<size, or with linbits up to 15 + 2^linbits − 1.
    private func randomValue(table: Int, using rng: inout SeededGenerator) -> Int {
        guard let t = Layer3HuffmanTables.pairCode(Layer3HuffmanTables.codeNumber(forTable: table)) else { return 0 }
        let lin = Layer3HuffmanTables.linbits[table]
        var v = Int.random(in: 0..<t.size, using: &rng)
        if lin > 0 && v == 15 { v += Int.random(in: 0..<(1 << lin), using: &rng) }
        return Bool.random(using: &rng) ? -v : v
    }

    // MARK: - Known codewords (ISO/IEC 11172-3 Table B.7)

    func testKnownCodewordsTable1() {
        // Table 1: (0,0) 1; (0,1) 001; (1,0) 01; (1,1) 000. Signs follow each nonzero value.
        var b = Bits()
        b.put("1"); b.put("001 1"); b.put("01 0"); b.put("000 1 0")
        let (n, out) = decode(b.bytes, Setup(end: b.count, bigValues: 4, tables: (1, 1, 1)))
        XCTAssertEqual(n, 8)
        XCTAssertEqual(Array(out[0..<8]), [0, 0, 0, -1, 1, 0, -1, 1])
        XCTAssertTrue(out[8...].allSatisfy { $0 == 0 })
    }

    func testKnownCodewordsLinbitsTables() {
        // Table 16 (linbits 1): (0,0) 1; (15,15) 00000011; (1,15) 00001001; (15,0) 000001100.
        // Table 24 (linbits 4): (0,0) 1111; (15,15) 0011; (15,1) 0010100.
        var b = Bits()
        b.put("1")
        b.put("00000011 1 0 0 1")          // table 16 (15,15): x = 15+1, +; y = 15+0, −
        b.put("00001001 1 1 1")            // table 16 (1,15): x = −1, y = 15+1, −
        b.put("000001100 0 1")             // table 16 (15,0): x = −15
        b.put("1111")                      // table 24 (0,0)
        b.put("0011 1010 0 0000 1")        // table 24 (15,15): x = 25, y = −15
        b.put("0010100 1111 1 0")          // table 24 (15,1): x = −30, y = 1
        let (n, out) = decode(b.bytes, Setup(end: b.count, bigValues: 7, tables: (16, 24, 24), region1: 8, region2: 8))
        XCTAssertEqual(n, 14)
        XCTAssertEqual(Array(out[0..<14]), [0, 0, 16, -15, -1, -16, -15, 0, 0, 0, 25, -15, -30, 1])
    }

    func testKnownCodewordsCount1() {
        // Table A: 0000 → 1; 0001 → 0101; 1111 → 000001.
        // Table B: vwxy → the 4-bit complement; 1010 → 0101.
        var a = Bits()
        a.put("1"); a.put("0101 1"); a.put("000001 0 1 0 1")
        let (na, outA) = decode(a.bytes, Setup(end: a.count))
        XCTAssertEqual(na, 12)
        XCTAssertEqual(Array(outA[0..<12]), [0, 0, 0, 0, 0, 0, 0, -1, 1, -1, 1, -1])
        var bb = Bits()
        bb.put("1111"); bb.put("0101 0 1"); bb.put("0000 1 1 1 1")
        let (nb, outB) = decode(bb.bytes, Setup(end: bb.count, count1B: true))
        XCTAssertEqual(nb, 12)
        XCTAssertEqual(Array(outB[0..<12]), [0, 0, 0, 0, 1, 0, -1, 0, -1, -1, -1, -1])
    }

    // MARK: - Table integrity

    func testEveryTableIsACompletePrefixCode() {
        var codes: [(String, [(Int, Int)])] = []
        for number in [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 24] {
            let t = Layer3HuffmanTables.pairCode(number)!
            XCTAssertEqual(t.words.count, t.size * t.size, "table \(number)")
            codes.append(("table \(number)", t.words.map { (Int($0 & 0xFFFFF), Int($0 >> 20)) }))
        }
        codes.append(("count1 A", Layer3HuffmanTables.count1A.map { (Int($0 & 0xFFFFF), Int($0 >> 20)) }))
        codes.append(("count1 B", Layer3HuffmanTables.count1B.map { (Int($0 & 0xFFFFF), Int($0 >> 20)) }))
        for (name, list) in codes {
            // Kraft sum exactly 1 (in units of 2^-19, the longest code).
            var kraft = 0
            for (code, length) in list {
                XCTAssert((1...19).contains(length) && code < 1 << length, "\(name): code \(code)/\(length)")
                kraft += 1 << (19 - length)
            }
            XCTAssertEqual(kraft, 1 << 19, "\(name): Kraft sum")
            let strings = list.map { (c, l) in String(String(c, radix: 2)).leftPadded(to: l) }.sorted()
            for k in 0..<(strings.count - 1) {
                XCTAssertFalse(strings[k + 1].hasPrefix(strings[k]), "\(name): \(strings[k]) prefixes \(strings[k + 1])")
            }
        }
        XCTAssertEqual(Layer3HuffmanTables.pairCode(15)!.size, 16)
        XCTAssertEqual(Layer3HuffmanTables.pairCode(12)!.size, 8)
        XCTAssertEqual(Layer3HuffmanTables.linbits[16...31], [1, 2, 3, 4, 6, 8, 10, 13, 4, 5, 6, 7, 8, 9, 11, 13])
        for t in [0, 4, 14] { XCTAssertNil(Layer3HuffmanTables.pairCode(Layer3HuffmanTables.codeNumber(forTable: t))) }
    }

    // MARK: - Round trips

    func testRoundTripEveryTable() {
        var rng = SeededGenerator(seed: 0x3_1117)
        for table in 0..<32 {
            for trial in 0..<8 {
                let bigValues = Int.random(in: 0...288, using: &rng)
                let tableB = Bool.random(using: &rng)
                var b = Bits()
                b.put(Int.random(in: 0..<128, using: &rng), 7)   // unaligned start (part2 bits)
                let start = b.count
                var want = [Int32](repeating: 0, count: 576)
                for p in 0..<bigValues {
                    let x = randomValue(table: table, using: &rng), y = randomValue(table: table, using: &rng)
                    encodePair(&b, table: table, x, y)
                    if Layer3HuffmanTables.codeNumber(forTable: table) != 0 {
                        want[2 * p] = Int32(x); want[2 * p + 1] = Int32(y)
                    }
                }
                let quads = Int.random(in: 0...((576 - 2 * bigValues) / 4), using: &rng)
                for q in 0..<quads {
                    let vals = (0..<4).map { _ in Int.random(in: -1...1, using: &rng) }
                    encodeQuad(&b, tableB: tableB, vals)
                    for k in 0..<4 { want[2 * bigValues + 4 * q + k] = Int32(vals[k]) }
                }
                let end = b.count
                b.put(Int.random(in: 0..<256, using: &rng), 8)    // next channel's bits
                let (n, out) = decode(b.bytes, Setup(start: start, end: end, bigValues: bigValues,
                                                    tables: (table, table, table), count1B: tableB))
                // count1 continues while bits remain, so with quads = 0 a zero-code quad can't
                // appear; the decoded count is exactly what was encoded.
                XCTAssertEqual(n, 2 * bigValues + 4 * quads, "table \(table) trial \(trial)")
                XCTAssertEqual(out, want, "table \(table) trial \(trial)")
            }
        }
    }

    func testRoundTripThreeRegions() {
        var rng = SeededGenerator(seed: 0xB16)
        let choices = [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 20, 23, 24, 27, 31, 0, 4, 14]
        for trial in 0..<200 {
            let tables = (choices.randomElement(using: &rng)!, choices.randomElement(using: &rng)!,
                          choices.randomElement(using: &rng)!)
            let bigValues = Int.random(in: 0...288, using: &rng)
            let r1 = Int.random(in: 0...288, using: &rng) * 2
            let r2 = Int.random(in: r1 / 2...288, using: &rng) * 2
            var b = Bits()
            var want = [Int32](repeating: 0, count: 576)
            for p in 0..<bigValues {
                let table = 2 * p < r1 ? tables.0 : 2 * p < r2 ? tables.1 : tables.2
                let x = randomValue(table: table, using: &rng), y = randomValue(table: table, using: &rng)
                encodePair(&b, table: table, x, y)
                if Layer3HuffmanTables.codeNumber(forTable: table) != 0 {
                    want[2 * p] = Int32(x); want[2 * p + 1] = Int32(y)
                }
            }
            let quads = min(Int.random(in: 0...20, using: &rng), (576 - 2 * bigValues) / 4)
            for q in 0..<quads {
                let vals = (0..<4).map { _ in Int.random(in: -1...1, using: &rng) }
                encodeQuad(&b, tableB: false, vals)
                for k in 0..<4 { want[2 * bigValues + 4 * q + k] = Int32(vals[k]) }
            }
            let (n, out) = decode(b.bytes, Setup(end: b.count, bigValues: bigValues, tables: tables,
                                                 region1: r1, region2: r2))
            XCTAssertEqual(n, 2 * bigValues + 4 * quads, "trial \(trial) \(tables)")
            XCTAssertEqual(out, want, "trial \(trial) \(tables) r1 \(r1) r2 \(r2)")
        }
    }

    // MARK: - Overrun rules

    func testCount1OverrunDropsTheLastQuad() {
        // Two quads 0000 (table A: "1") then 1111 ("000001" + 4 signs) cut 1 bit short.
        var b = Bits()
        b.put("1"); b.put("1"); b.put("000001 0000")
        for cut in 1...9 {
            let (n, out) = decode(b.bytes, Setup(end: b.count - cut))
            XCTAssertEqual(n, 8, "cut \(cut)")
            XCTAssert(out.allSatisfy { $0 == 0 }, "cut \(cut)")
        }
        let (n, out) = decode(b.bytes, Setup(end: b.count))
        XCTAssertEqual(n, 12)
        XCTAssertEqual(Array(out[8..<12]), [1, 1, 1, 1])
        // Count1 stops at 576 values even with bits left.
        let full = [UInt8](repeating: 0xFF, count: 40)  // table A "1" = 0000, 320 quads' worth
        let (m, _) = decode(full, Setup(end: 320, bigValues: 10))
        XCTAssertEqual(m, 576)
    }

    func testBigValuesStopAtEnd() {
        // Table 1 pairs (1,1) "000" + 2 signs = 5 bits each; end cuts the third pair.
        var b = Bits()
        for _ in 0..<4 { b.put("000 0 1") }
        let (n, out) = decode(b.bytes, Setup(end: 12, bigValues: 4))
        XCTAssertEqual(n, 4)
        XCTAssertEqual(Array(out[0..<4]), [1, -1, 1, -1])
        XCTAssert(out[4...].allSatisfy { $0 == 0 })
        // Exactly at end: all four kept, no count1.
        let (m, out2) = decode(b.bytes, Setup(end: 20, bigValues: 4))
        XCTAssertEqual(m, 8)
        XCTAssertEqual(Array(out2[0..<8]), [1, -1, 1, -1, 1, -1, 1, -1])
        // start == end: nothing decoded.
        let (z, out3) = decode(b.bytes, Setup(start: 20, end: 20, bigValues: 0))
        XCTAssertEqual(z, 0)
        XCTAssert(out3.allSatisfy { $0 == 0 })
    }

    func testTruncatedBufferNeverReadsPastTheEnd() {
        // Buffers of every size 0...24 bytes, table 24 linbits 13 codes cut anywhere:
        // the exactly-sized heap buffer makes an overread visible to the address sanitizer
        // and guard pages; values must match a decode of the same bits padded with zeros.
        var rng = SeededGenerator(seed: 77)
        for size in 0...24 {
            for _ in 0..<20 {
                let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let start = size == 0 ? 0 : Int.random(in: 0...(size * 8), using: &rng)
                let s = Setup(start: start, end: size * 8, bigValues: 288, tables: (31, 13, 24),
                              region1: 16, region2: 40, count1B: Bool.random(using: &rng))
                let (n, out) = decode(bytes, s)
                let (np, outp) = decode(bytes + [UInt8](repeating: 0, count: 16), s)
                XCTAssertEqual(n, np)
                XCTAssertEqual(out, outp)
            }
        }
    }

    func testGarbageNeverTraps() {
        var rng = SeededGenerator(seed: 0xBAD)
        for trial in 0..<3000 {
            let size = Int.random(in: 0...300, using: &rng)
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let end = Int.random(in: 0...(size * 8), using: &rng)
            let start = Int.random(in: 0...end, using: &rng)
            let r1 = Int.random(in: 0...288, using: &rng) * 2
            let r2 = Int.random(in: r1 / 2...288, using: &rng) * 2
            let s = Setup(start: start, end: end, bigValues: Int.random(in: 0...288, using: &rng),
                          tables: (trial % 32, Int.random(in: 0...31, using: &rng), Int.random(in: 0...31, using: &rng)),
                          region1: r1, region2: r2, count1B: Bool.random(using: &rng))
            let (n, out) = decode(bytes, s)
            XCTAssert((0...576).contains(n))
            XCTAssert(out[n...].allSatisfy { $0 == 0 })
            XCTAssert(out.allSatisfy { abs($0) <= 15 + 8191 })
        }
    }

    // MARK: - Throughput (printed, no threshold)

    func testThroughput() {
        var rng = SeededGenerator(seed: 0x5EED)
        // Granules like a 128 kb/s encode: big values in tables 7/13/24-ish, then count1.
        var streams: [([UInt8], Setup)] = []
        var expected = 0
        let mixes = [(7, 13, 24), (10, 15, 26), (5, 8, 16), (13, 31, 9)]
        for g in 0..<64 {
            let tables = mixes[g % mixes.count]
            let bigValues = 180 + g % 60
            var b = Bits()
            for p in 0..<bigValues {
                let table = 2 * p < 72 ? tables.0 : 2 * p < 200 ? tables.1 : tables.2
                encodePair(&b, table: table, randomValue(table: table, using: &rng), randomValue(table: table, using: &rng))
            }
            for _ in 0..<((576 - 2 * bigValues) / 4) {
                encodeQuad(&b, tableB: g % 3 == 0, (0..<4).map { _ in Int.random(in: -1...1, using: &rng) })
            }
            expected += 2 * bigValues + (576 - 2 * bigValues) / 4 * 4
            streams.append((b.bytes, Setup(end: b.count, bigValues: bigValues, tables: tables,
                                           region1: 72, region2: 200, count1B: g % 3 == 0)))
        }
        #if DEBUG
        let rounds = 20
        #else
        let rounds = 4000
        #endif
        var out = [Int32](repeating: 0, count: 576)
        var checksum = 0
        var bits = 0
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<rounds {
                for (bytes, s) in streams {
                    bytes.withUnsafeBytes { raw in
                        out.withUnsafeMutableBufferPointer { o in
                            checksum &+= Layer3Huffman.decode(raw, start: 0, end: s.end!, bigValues: s.bigValues,
                                                              tableSelect: s.tables, region1Start: s.region1,
                                                              region2Start: s.region2, count1TableB: s.count1B,
                                                              into: o.baseAddress!)
                        }
                    }
                    bits &+= s.end!
                }
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let granules = Double(rounds * streams.count)
        print("Layer3Huffman: \(Int(seconds / granules * 1e9)) ns/granule, "
              + "\(Int(granules * 576 / seconds / 1e6)) Mvalues/s, \(Int(Double(bits) / seconds / 1e6)) Mbit/s "
              + "(\(rounds * streams.count) granules, avg \(bits / (rounds * streams.count)) bits)")
        XCTAssertEqual(checksum, rounds * expected)
    }
}

private extension String {
    func leftPadded(to n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}

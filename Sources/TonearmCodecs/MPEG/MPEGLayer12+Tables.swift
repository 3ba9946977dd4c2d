import TonearmCore

// Normative tables of MPEG audio layers I and II: ISO/IEC 11172-3 Annex B (Tables B.1,
// B.2a–d and B.4) and ISO/IEC 13818-3 Table B.1 for the lower sample rates.

extension MPEGLayer12 {
    /// A quantisation class of Table B.4: `levels` steps, coded in `bits` bits per sample,
    /// or per group of three samples when `grouped`.
    struct QuantClass {
        var levels: Int
        var bits: Int
        var grouped: Bool
        /// The dequantised fraction of code v is v·step − offset = (2v − (levels − 1)) / levels,
        /// which is C·(s‴ + D) of §2.4.3.3.5 (and of layer I, §2.4.3.2.3) written out.
        var step: Float
        var offset: Float

        init(levels: Int, bits: Int, grouped: Bool) {
            self.levels = levels
            self.bits = bits
            self.grouped = grouped
            step = Float(2.0 / Double(levels))
            offset = Float(Double(levels - 1) / Double(levels))
        }
    }

    /// Table B.4's seventeen classes, by index: 3, 5, 7, 9, 15, 31 … 65535 levels.
    static let quantClasses: [QuantClass] = {
        var c = [QuantClass(levels: 3, bits: 5, grouped: true), QuantClass(levels: 5, bits: 7, grouped: true),
                 QuantClass(levels: 7, bits: 3, grouped: false), QuantClass(levels: 9, bits: 10, grouped: true)]
        for bits in 4...16 { c.append(QuantClass(levels: (1 << bits) - 1, bits: bits, grouped: false)) }
        return c
    }()

    /// Layer I's classes by allocation 1–14: 2…15 bits a sample, (2^bits − 1) levels.
    static let layer1Classes: [QuantClass] = (2...15).map { QuantClass(levels: (1 << $0) - 1, bits: $0, grouped: false) }

    /// Table B.1: scale factor i is 2^(1 − i/3). Index 63 is not in the table; it continues
    /// the formula (2^−20), so a stream using it decodes near silence rather than failing.
    static let scaleFactors: [Float] = (0..<64).map { Float(pow2(1.0 - Double($0) / 3.0)) }

    private static func pow2(_ x: Double) -> Double {
        // 2^x from an integer power and the cube roots of 2, exact to a double's precision
        // without Foundation: x is always a multiple of 1/3 here.
        let thirds = Int((x * 3).rounded())
        var q = thirds / 3, r = thirds % 3
        if r < 0 { r += 3; q -= 1 }
        let cubeRoot2 = 1.2599210498948731647672106
        var v = r == 0 ? 1.0 : r == 1 ? cubeRoot2 : cubeRoot2 * cubeRoot2
        if q >= 0 { for _ in 0..<q { v *= 2 } } else { for _ in 0..<(-q) { v /= 2 } }
        return v
    }

    /// One row kind of an allocation table: the allocation field's width and the class
    /// (index into `quantClasses`, or −1 for "not coded") of each allocation value.
    struct AllocationRow {
        var nbal: Int
        var classes: [Int8]
    }

    /// The distinct rows of Tables B.2a–d and 13818-3 B.1, written as level counts.
    private static func row(_ levels: [Int]) -> AllocationRow {
        let classes = [Int8(-1)] + levels.map { n in Int8(quantClasses.firstIndex { $0.levels == n }!) }
        var nbal = 0
        while 1 << nbal < classes.count { nbal += 1 }
        return AllocationRow(nbal: nbal, classes: classes)
    }

    private static let lowRows: [AllocationRow] = [
        // B.2a/b subbands 0–2: 15 classes from 3 levels, skipping 5 and 9.
        row([3, 7, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095, 8191, 16383, 32767, 65535]),
        // B.2a/b subbands 3–10.
        row([3, 5, 7, 9, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095, 8191, 65535]),
        // B.2a/b subbands 11–22.
        row([3, 5, 7, 9, 15, 31, 65535]),
        // B.2a/b subbands 23 up.
        row([3, 5, 65535]),
        // B.2c/d subbands 0–1.
        row([3, 5, 9, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095, 8191, 16383, 32767]),
        // B.2c/d subbands 2 up.
        row([3, 5, 9, 15, 31, 63, 127]),
        // 13818-3 B.1 subbands 0–3.
        row([3, 5, 7, 9, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095, 8191, 16383]),
        // 13818-3 B.1 subbands 4–10.
        row([3, 5, 9, 15, 31, 63, 127]),
        // 13818-3 B.1 subbands 11 up.
        row([3, 5, 9]),
    ]

    /// An allocation table: for each coded subband (sblimit of them), its row.
    struct AllocationTable {
        var rows: [AllocationRow]
        var sblimit: Int { rows.count }
    }

    private static func table(_ runs: [(row: Int, count: Int)]) -> AllocationTable {
        AllocationTable(rows: runs.flatMap { Array(repeating: lowRows[$0.row], count: $0.count) })
    }

    /// B.2a (27 subbands), B.2b (30), B.2c (8), B.2d (12), then 13818-3 B.1 (30).
    static let allocationTables: [AllocationTable] = [
        table([(0, 3), (1, 8), (2, 12), (3, 4)]),
        table([(0, 3), (1, 8), (2, 12), (3, 7)]),
        table([(4, 2), (5, 6)]),
        table([(4, 2), (5, 10)]),
        table([(6, 4), (7, 7), (8, 19)]),
    ]

    /// Which table a layer II frame uses (11172-3 Annex B.2's headings, by the bit rate per
    /// channel; every lower sample rate uses 13818-3's single table).
    static func allocationTableIndex(_ header: MPEGAudioHeader) -> Int {
        guard header.version == .mpeg1 else { return 4 }
        let perChannel = header.bitRate / 1000 / header.channels
        let rate = header.sampleRate
        if (rate == 48000 && perChannel >= 56) || (perChannel >= 56 && perChannel <= 80) { return 0 }
        if rate != 48000 && perChannel >= 96 { return 1 }
        if rate != 32000 && perChannel <= 48 { return 2 }
        return 3
    }
}

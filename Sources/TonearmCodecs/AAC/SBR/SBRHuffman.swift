/// Decoding of the ten SBR Huffman codes (ISO/IEC 14496-3 §4.6.18.3.4, Annex 4.A.6), each
/// turned once into a binary tree, whose first 8 levels are looked up at once: codes are at
/// most 20 bits, most of them 8 or fewer.
struct SBRHuffman: Sendable {
    /// Node n's children at 2n and 2n + 1: ≥ 0 is the next node, < 0 a leaf holding
    /// −1 − (value + LAV).
    private let tree: [Int32]
    let lav: Int

    init(_ words: [UInt32]) {
        lav = words.count / 2
        var tree = [Int32](repeating: 0, count: 2)
        var nodes = 1
        for (index, word) in words.enumerated() {
            let length = Int(word >> 20), code = Int(word & 0xFFFFF)
            var node = 0
            for b in stride(from: length - 1, to: 0, by: -1) {
                let slot = 2 * node + (code >> b & 1)
                if tree[slot] == 0 {
                    tree[slot] = Int32(nodes)
                    nodes += 1
                    tree += [0, 0]
                }
                node = Int(tree[slot])
            }
            tree[2 * node + (code & 1)] = -1 - Int32(index)
        }
        self.tree = tree
        // The walk of each 8-bit pattern: a leaf or a dead end within it, or the node reached.
        var fast = [UInt32](repeating: 0, count: 256)
        for pattern in 0..<256 {
            var node = 0
            var entry = UInt32(Self.pending) << 24
            for i in 0..<8 {
                let next = tree[2 * node + (pattern >> (7 - i) & 1)]
                if next < 0 {
                    entry = UInt32(Self.leaf) << 24 | UInt32(i + 1) << 16 | UInt32(Int(-1 - next) - lav + 0x8000)
                    break
                }
                if next == 0 {
                    entry = UInt32(Self.deadEnd) << 24 | UInt32(i + 1) << 16
                    break
                }
                node = Int(next)
            }
            if entry >> 24 == Self.pending { entry |= 8 << 16 | UInt32(node) }
            fast[pattern] = entry
        }
        self.fast = fast
    }

    /// The first 8 bits' walk per pattern: kind << 24 | bits used << 16 | value + 0x8000 (a
    /// leaf) or the node reached (pending).
    private let fast: [UInt32]
    private static let pending: UInt32 = 0, leaf: UInt32 = 1, deadEnd: UInt32 = 2

    /// The next value, −LAV…LAV. An incomplete read (the payload ends) gives 0 and leaves
    /// the reader past its end, which the caller's overrun check sees.
    @inline(__always)
    func decode(_ r: inout SBRBits) -> Int {
        // The next 8 bits at once (past the end they read as zeros, as one at a time).
        let entry = fast[r.peek(8)]
        r.skip(Int(entry >> 16 & 0xFF))
        switch entry >> 24 {
        case Self.leaf: return Int(entry & 0xFFFF) - 0x8000
        case Self.deadEnd: return 0
        default: break
        }
        var node = Int(entry & 0xFFFF)
        for _ in 8..<21 {
            let next = tree[2 * node + r.read(1)]
            if next < 0 { return Int(-1 - next) - lav }
            if next == 0 { break }
            node = Int(next)
        }
        return 0
    }

    static let envelope15Time = SBRHuffman(SBRTables.envelope15Time)
    static let envelope15Frequency = SBRHuffman(SBRTables.envelope15Frequency)
    static let balance15Time = SBRHuffman(SBRTables.balance15Time)
    static let balance15Frequency = SBRHuffman(SBRTables.balance15Frequency)
    static let envelope30Time = SBRHuffman(SBRTables.envelope30Time)
    static let envelope30Frequency = SBRHuffman(SBRTables.envelope30Frequency)
    static let balance30Time = SBRHuffman(SBRTables.balance30Time)
    static let balance30Frequency = SBRHuffman(SBRTables.balance30Frequency)
    static let noiseTime = SBRHuffman(SBRTables.noiseTime)
    static let noiseBalanceTime = SBRHuffman(SBRTables.noiseBalanceTime)
}

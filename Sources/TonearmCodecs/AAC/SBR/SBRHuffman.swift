/// Decoding of the ten SBR Huffman codes (ISO/IEC 14496-3 §4.6.18.3.4, Annex 4.A.6), each
/// turned once into a binary tree walked one bit at a time: codes are at most 20 bits and a
/// frame holds a few hundred of them, far from the decoder's cost.
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
    }

    /// The next value, −LAV…LAV. An incomplete read (the payload ends) gives 0 and leaves
    /// the reader past its end, which the caller's overrun check sees.
    @inline(__always)
    func decode(_ r: inout SBRBits) -> Int {
        var node = 0
        for _ in 0..<21 {
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

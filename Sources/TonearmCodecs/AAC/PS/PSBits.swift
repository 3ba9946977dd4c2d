/// An MSB-first reader over one ps_data payload (a few hundred bits a frame).
///
/// Reading past `end` gives zeros and sets ``overrun``, so the parser checks once per
/// syntax element and no count read from the payload can make it read outside it.
struct PSBits {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    let end: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, bitCount: Int) {
        self.bytes = bytes
        end = max(0, min(bitCount, bytes.count * 8))
    }

    var overrun: Bool { position > end }

    mutating func bit() -> Int {
        defer { position += 1 }
        guard position < end else { return 0 }
        return Int(bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
    }

    mutating func read(_ count: Int) -> Int {
        var v = 0
        for _ in 0..<count { v = v << 1 | bit() }
        return v
    }

    mutating func skip(_ count: Int) { position += max(0, count) }
}

/// A canonical Huffman decoder built from one of the tables of Annex 8.B (``PSTables``): a
/// binary tree in an array, two children a node, a leaf holding −(value index + 1).
struct PSHuffman {
    private var tree: [Int16]
    /// The value of the first entry (−LAV, or 0 for IPD/OPD).
    let offset: Int

    init(_ table: [UInt32], offset: Int) {
        self.offset = offset
        tree = [0, 0]
        for (value, entry) in table.enumerated() {
            let length = Int(entry >> 20), code = Int(entry & 0xFFFFF)
            var node = 0
            for i in stride(from: length - 1, through: 0, by: -1) {
                let slot = 2 * node + (code >> i & 1)
                if i == 0 {
                    tree[slot] = Int16(-(value + 1))
                } else {
                    if tree[slot] <= 0 {
                        tree[slot] = Int16(tree.count / 2)
                        tree += [0, 0]
                    }
                    node = Int(tree[slot])
                }
            }
        }
    }

    /// The next value, or nil when the bits lead nowhere (never for the standard's complete
    /// codes) or run out.
    func decode(_ r: inout PSBits) -> Int? {
        var node = 0
        for _ in 0..<20 {
            let next = Int(tree[2 * node + r.bit()])
            if next < 0 { return -next - 1 + offset }
            if next == 0 || r.overrun { return nil }
            node = next
        }
        return nil
    }

    static let iidDefaultFrequency = PSHuffman(PSTables.iidDefaultFrequency, offset: -14)
    static let iidDefaultTime = PSHuffman(PSTables.iidDefaultTime, offset: -14)
    static let iidFineFrequency = PSHuffman(PSTables.iidFineFrequency, offset: -30)
    static let iidFineTime = PSHuffman(PSTables.iidFineTime, offset: -30)
    static let iccFrequency = PSHuffman(PSTables.iccFrequency, offset: -7)
    static let iccTime = PSHuffman(PSTables.iccTime, offset: -7)
    static let ipdFrequency = PSHuffman(PSTables.ipdFrequency, offset: 0)
    static let ipdTime = PSHuffman(PSTables.ipdTime, offset: 0)
    static let opdFrequency = PSHuffman(PSTables.opdFrequency, offset: 0)
    static let opdTime = PSHuffman(PSTables.opdTime, offset: 0)
}

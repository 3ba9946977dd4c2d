/// The AAC Huffman codebooks as two-level lookup tables, built once from the codeword
/// lists of ``AACHuffman`` (ISO/IEC 14496-3 Annex 4.A; spectral data decoding).
///
/// A table entry is either a leaf, `index << 8 | length` (the codebook index and the whole
/// codeword's length), or a link, `1 << 31 | offset << 8 | bits`: the next `bits` bits
/// after the root's pick an entry of the sub-table at `offset`. Every codebook is complete
/// (its Kraft sum is 1), so every bit pattern decodes to some entry.
struct AACHuffman: Sendable {
    let rootBits: Int
    let entries: [UInt32]

    init(codes: [UInt32], rootBits: Int) {
        self.rootBits = rootBits
        var table = [UInt32](repeating: 0, count: 1 << rootBits)
        // Codes longer than the root, grouped by their first rootBits bits.
        var long: [Int: [(code: UInt32, length: Int, index: Int)]] = [:]
        for (index, e) in codes.enumerated() {
            let length = Int(e >> 24), code = e & 0xFF_FFFF
            if length <= rootBits {
                let first = Int(code) << (rootBits - length)
                for j in first..<first + (1 << (rootBits - length)) { table[j] = UInt32(index) << 8 | UInt32(length) }
            } else {
                long[Int(code >> UInt32(length - rootBits)), default: []].append((code, length, index))
            }
        }
        for prefix in long.keys.sorted() {
            let group = long[prefix]!
            let subBits = group.map(\.length).max()! - rootBits
            let offset = table.count
            table += [UInt32](repeating: 0, count: 1 << subBits)
            for c in group {
                let rest = c.length - rootBits
                let suffix = Int(c.code & ((1 << UInt32(rest)) - 1))
                let first = offset + suffix << (subBits - rest)
                for j in first..<first + (1 << (subBits - rest)) { table[j] = UInt32(c.index) << 8 | UInt32(c.length) }
            }
            table[prefix] = 1 << 31 | UInt32(offset) << 8 | UInt32(subBits)
        }
        entries = table
    }

    /// Decodes one codeword: its codebook index.
    @inline(__always)
    func decode(_ bits: inout AACBits) -> Int {
        let w = bits.peek32()
        return entries.withUnsafeBufferPointer { t in
            var e = t[Int(w &>> UInt32(32 &- rootBits))]
            if e & 0x8000_0000 != 0 {
                let sub = e & 0xFF
                e = t[Int((e &>> 8) & 0x7F_FFFF) &+ Int((w &<< UInt32(rootBits)) &>> (32 &- sub))]
            }
            bits.position &+= Int(e & 0xFF)
            return Int(e &>> 8)
        }
    }

    /// The scale factor codebook (Table 4.A.1): index = difference + 60.
    static let scaleFactors = AACHuffman(codes: scaleFactorCodes, rootBits: 8)

    /// Spectrum codebooks 1…11 (index 0 unused).
    static let spectrum: [AACHuffman] = {
        let books = [spectrum1Codes, spectrum2Codes, spectrum3Codes, spectrum4Codes, spectrum5Codes, spectrum6Codes,
                     spectrum7Codes, spectrum8Codes, spectrum9Codes, spectrum10Codes, spectrum11Codes]
        return [AACHuffman(codes: [0x0100_0000, 0x0100_0001], rootBits: 1)] + books.map { AACHuffman(codes: $0, rootBits: 8) }
    }()
}

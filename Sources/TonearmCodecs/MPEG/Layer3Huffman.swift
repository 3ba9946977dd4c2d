// Layer III Huffman decoding of one granule/channel's spectrum (ISO/IEC 11172-3 §2.4.2.7
// big_values, count1; §2.4.3.4 Huffman decoding; Annex B Table B.7).

enum Layer3Huffman {
    /// Decodes one granule/channel's Huffman-coded spectrum into `out` (576 values).
    /// - data: the main-data bytes; bits are MSB-first. Never read past data.count (no trap, no overread).
    /// - start: bit position where the Huffman data begins (after the scale factors).
    /// - end: bit position where this granule/channel's part2_3 data ends (exclusive). The caller guarantees start <= end <= data.count * 8.
    /// - bigValues: pairs in the big-values region (caller clamps to <= 288).
    /// - tableSelect: table numbers for regions 0, 1, 2 (0...31).
    /// - region1Start, region2Start: sample indices where regions 1 and 2 begin (caller clamps: region1Start <= region2Start <= 576; each even).
    /// - count1TableB: true selects count1 table B, else A.
    /// Values written are signed quantised magnitudes with linbits applied (|v| <= 15 + 8191).
    /// Returns n = the number of values decoded (big-values region 2*bigValues, clipped, plus 4 per count1 quad);
    /// out[n..<576] are set to zero.
    ///
    /// A big-values pair whose bits would run past `end` is not kept and decoding stops there
    /// (count1 is not attempted). A count1 quad that ends past `end` is discarded and ends decoding.
    static func decode(_ data: UnsafeRawBufferPointer, start: Int, end: Int, bigValues: Int,
                       tableSelect: (Int, Int, Int), region1Start: Int, region2Start: Int,
                       count1TableB: Bool, into out: UnsafeMutablePointer<Int32>) -> Int {
        let lut = DecodeTables.shared
        // The caller promises these bounds; clamping again costs nothing per sample and keeps
        // a careless caller from turning into an overread.
        let byteCount = data.count
        let endBit = min(max(end, 0), byteCount &* 8)
        let startBit = min(max(start, 0), endBit)
        let bigEnd = min(max(bigValues, 0), 288) &* 2
        let r1 = min(max(region1Start, 0), 576) & ~1
        let r2 = min(max(region2Start, r1), 576) & ~1

        var bits = BitCache(data, bytePosition: startBit >> 3, byteCount: byteCount)
        bits.skip(startBit & 7)

        var i = 0
        var stopped = false
        let bounds = (min(r1, bigEnd), min(r2, bigEnd), bigEnd)
        let tables = (tableSelect.0 & 31, tableSelect.1 & 31, tableSelect.2 & 31)
        for region in 0..<3 {
            let regionEnd: Int
            let table: Int
            switch region {
            case 0: regionEnd = bounds.0; table = tables.0
            case 1: regionEnd = bounds.1; table = tables.1
            default: regionEnd = bounds.2; table = tables.2
            }
            if i >= regionEnd { continue }
            let info = lut.info[table]
            if info == 0 {
                // Table 0 (and the unused 4 and 14): the pairs are zero and take no bits.
                while i < regionEnd { out[i] = 0; out[i &+ 1] = 0; i &+= 2 }
                continue
            }
            let base = Int(info & 0xFFFFF)
            let rootBits = UInt64(info >> 20 & 31)
            let linbits = UInt64(info >> 25)
            let entries = lut.entries
            while i < regionEnd {
                // Worst case per pair: 19 code bits + 2 × (13 linbits + sign) = 47 bits.
                if bits.count < 48 { bits.refill() }
                var e = entries[base &+ Int(truncatingIfNeeded: bits.cache &>> (64 &- rootBits))]
                if e & DecodeTables.complete != 0 {
                    // Code and sign bits all within the first level: the entry holds the values.
                    bits.consume(UInt64(e & 31))
                    if bits.position > endBit { stopped = true; break }
                    out[i] = Int32(Int8(truncatingIfNeeded: e >> 8))
                    out[i &+ 1] = Int32(Int8(truncatingIfNeeded: e >> 16))
                    i &+= 2
                    continue
                }
                if e & DecodeTables.link != 0 {
                    let sub = UInt64(e >> 20 & 31)
                    let idx = (bits.cache &<< rootBits) &>> (64 &- sub)
                    e = entries[Int(e & 0xFFFFF) &+ Int(truncatingIfNeeded: idx)]
                }
                var x = Int32(e >> 4 & 15)
                var y = Int32(e & 15)
                if e & DecodeTables.escape == 0 {
                    // No linbits: the signs sit right after the code; take them without branches.
                    let c = bits.cache &<< UInt64(e >> 8 & 31)
                    let nx = UInt64(e >> 13 & 1), ny = UInt64(e >> 14 & 1)
                    let sx = Int32(truncatingIfNeeded: c &>> 63 & nx)
                    let sy = Int32(truncatingIfNeeded: (c &<< nx) &>> 63 & ny)
                    bits.cache = c &<< (nx &+ ny)
                    bits.count &-= UInt64(e >> 8 & 31) &+ nx &+ ny
                    x = (x ^ (0 &- sx)) &+ sx
                    y = (y ^ (0 &- sy)) &+ sy
                } else {
                    // x or y is 15 in a table with linbits (16...31): order is
                    // x linbits, x sign, y linbits, y sign (§2.4.2.7).
                    bits.consume(UInt64(e >> 8 & 31))
                    if x != 0 {
                        if x == 15 { x &+= Int32(truncatingIfNeeded: bits.take(linbits)) }
                        let s = Int32(truncatingIfNeeded: bits.take(1))
                        x = (x ^ (0 &- s)) &+ s
                    }
                    if y != 0 {
                        if y == 15 { y &+= Int32(truncatingIfNeeded: bits.take(linbits)) }
                        let s = Int32(truncatingIfNeeded: bits.take(1))
                        y = (y ^ (0 &- s)) &+ s
                    }
                }
                if bits.position > endBit { stopped = true; break }
                out[i] = x
                out[i &+ 1] = y
                i &+= 2
            }
            if stopped { break }
        }

        if !stopped {
            // count1 region (§2.4.3.4): quadruples until part2_3_length is used up.
            // One lookup a quad: code and sign bits together are at most 10.
            let quads = count1TableB ? lut.count1B : lut.count1A
            while i &+ 4 <= 576 && bits.position < endBit {
                if bits.count < 16 { bits.refill() }
                let e = quads[Int(truncatingIfNeeded: bits.cache &>> 54)]
                bits.consume(e & 15)
                // Encoders commonly overrun by one quad; reference decoders drop it.
                if bits.position > endBit { break }
                out[i] = Int32(Int8(truncatingIfNeeded: e &>> 32))
                out[i &+ 1] = Int32(Int8(truncatingIfNeeded: e &>> 40))
                out[i &+ 2] = Int32(Int8(truncatingIfNeeded: e &>> 48))
                out[i &+ 3] = Int32(Int8(truncatingIfNeeded: e &>> 56))
                i &+= 4
            }
        }
        if i < 576 { (out + i).update(repeating: 0, count: 576 &- i) }
        return i
    }

}

/// An MSB-first 64-bit bit cache over raw bytes. Bits past the end of the data read as zero
/// (and are never loaded); `position` keeps counting so the caller's `end` check still holds.
private struct BitCache {
    /// Unread bits, left-aligned; bits below the top `count` are zero or the true next bits.
    var cache: UInt64 = 0
    var count: UInt64 = 0
    /// Next byte to load (may pass `byteCount` once the data is exhausted).
    var next: Int
    let base: UnsafeRawPointer?
    let byteCount: Int

    @inline(__always)
    init(_ data: UnsafeRawBufferPointer, bytePosition: Int, byteCount: Int) {
        base = data.baseAddress
        next = bytePosition
        self.byteCount = byteCount
        refill()
    }

    /// Bit position of the next unread bit from the start of the data.
    @inline(__always)
    var position: Int { next &* 8 &- Int(truncatingIfNeeded: count) }

    /// Tops the cache up to at least 56 bits.
    @inline(__always)
    mutating func refill() {
        if let base, next &+ 8 <= byteCount {
            let word = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: next, as: UInt64.self))
            cache |= word &>> count
            let bytes = (64 &- count) &>> 3
            next &+= Int(truncatingIfNeeded: bytes)
            count &+= bytes &<< 3
        } else {
            (cache, count, next) = BitCache.refillSlowly(cache, count, next, base, byteCount)
        }
    }

    /// The last < 8 bytes, one at a time; past the end, zero bytes. Static and by value so the
    /// hot loop's cache stays in registers.
    @inline(never)
    static func refillSlowly(_ cache: UInt64, _ count: UInt64, _ next: Int, _ base: UnsafeRawPointer?,
                             _ byteCount: Int) -> (UInt64, UInt64, Int) {
        var (cache, count, next) = (cache, count, next)
        while count <= 56 {
            if let base, next < byteCount {
                cache |= UInt64(base.load(fromByteOffset: next, as: UInt8.self)) &<< (56 &- count)
            }
            next &+= 1
            count &+= 8
        }
        return (cache, count, next)
    }

    @inline(__always)
    mutating func consume(_ n: UInt64) {
        cache &<<= n
        count &-= n
    }

    @inline(__always)
    mutating func skip(_ n: Int) { consume(UInt64(truncatingIfNeeded: n)) }

    /// Reads `n` (1...32) bits.
    @inline(__always)
    mutating func take(_ n: UInt64) -> UInt64 {
        let v = cache &>> (64 &- n)
        consume(n)
        return v
    }
}

/// Lookup tables built once from Layer3HuffmanTables: a first level indexed by the next
/// `rootBits` bits and second-level tables for longer codes, all in one never-freed block.
private struct DecodeTables: @unchecked Sendable {
    /// Leaf: bit 31 clear, code length in bits 8...12, x in 4...7, y in 0...3, x != 0 in 13,
    /// y != 0 in 14, and `escape` (15) when x or y is 15 in a code used with linbits.
    /// Link: bit 31 set, second-level size (bits) in 20...24, entry index in 0...19.
    /// Complete (first level only, no linbits): bit 30 set, code + sign bits length in 0...4,
    /// signed x in 8...15 and signed y in 16...23.
    let entries: UnsafePointer<UInt32>
    /// Per table 0...31: first-level entry index (bits 0...19), root bits (20...24),
    /// linbits (25...); 0 for tables that code nothing.
    let info: UnsafePointer<UInt32>
    /// 1024 entries indexed by the next 10 bits (a quad's code, at most 6 bits, and its
    /// sign bits, at most 4): code + sign bits length in bits 0...3, the signed values v, w,
    /// x, y as bytes 4...7.
    let count1A: UnsafePointer<UInt64>
    let count1B: UnsafePointer<UInt64>

    static let shared = DecodeTables()
    static let link: UInt32 = 0x8000_0000
    static let escape: UInt32 = 0x8000
    static let complete: UInt32 = 0x4000_0000

    /// Longest first level; codes up to this long decode with one lookup.
    static let maximumRootBits = 9

    private init() {
        var entries: [UInt32] = []
        var codeBase = [Int: (base: Int, rootBits: Int)]()
        for number in [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 24] {
            guard let code = Layer3HuffmanTables.pairCode(number) else { continue }
            let base = entries.count
            // Tables 16 and 24 are only ever used with linbits (16...31).
            let rootBits = DecodeTables.build(code, linbits: number >= 16, into: &entries)
            codeBase[number] = (base, rootBits)
        }
        var info = [UInt32](repeating: 0, count: 32)
        for table in 0..<32 {
            let number = Layer3HuffmanTables.codeNumber(forTable: table)
            guard let (base, rootBits) = codeBase[number] else { continue }
            info[table] = UInt32(base) | UInt32(rootBits) << 20 | UInt32(Layer3HuffmanTables.linbits[table]) << 25
        }
        func quadTable(_ words: [UInt32]) -> [UInt64] {
            var t = [UInt64](repeating: 0, count: 1024)
            for (value, word) in words.enumerated() {
                let length = Int(word >> 20), code = Int(word & 0xFFFFF)
                let first = code << (10 - length)
                for k in first..<(first + 1 << (10 - length)) {
                    // v, w, x, y are value's bits 3...0; each 1 takes the next bit as its sign.
                    var used = length
                    var entry: UInt64 = 0
                    for (lane, bit) in [3, 2, 1, 0].enumerated() where value >> bit & 1 != 0 {
                        used += 1
                        let negative = k >> (10 - used) & 1 != 0
                        entry |= UInt64(UInt8(bitPattern: negative ? -1 : 1)) << (32 + 8 * lane)
                    }
                    t[k] = entry | UInt64(used)
                }
            }
            return t
        }
        self.entries = DecodeTables.persist(entries)
        self.info = DecodeTables.persist(info)
        self.count1A = DecodeTables.persist(quadTable(Layer3HuffmanTables.count1A))
        self.count1B = DecodeTables.persist(quadTable(Layer3HuffmanTables.count1B))
    }

    private static func persist<T>(_ a: [T]) -> UnsafePointer<T> {
        let p = UnsafeMutablePointer<T>.allocate(capacity: a.count)
        p.initialize(from: a, count: a.count)
        return UnsafePointer(p)
    }

    /// Appends one code's first level and its second-level tables; returns the root bits.
    private static func build(_ code: Layer3HuffmanTables.PairCode, linbits: Bool,
                              into entries: inout [UInt32]) -> Int {
        let codes = code.words.enumerated().map { (value, word) in
            (length: Int(word >> 20), code: Int(word & 0xFFFFF), x: value / code.size, y: value % code.size)
        }
        let maxLength = codes.map(\.length).max() ?? 1
        let rootBits = min(maxLength, maximumRootBits)
        let base = entries.count
        entries.append(contentsOf: repeatElement(0, count: 1 << rootBits))
        // Longest suffix below each root prefix decides its second-level size.
        var subBits = [Int](repeating: 0, count: 1 << rootBits)
        for c in codes where c.length > rootBits {
            let prefix = c.code >> (c.length - rootBits)
            subBits[prefix] = max(subBits[prefix], c.length - rootBits)
        }
        for prefix in 0..<(1 << rootBits) where subBits[prefix] > 0 {
            entries[base + prefix] = 0x8000_0000 | UInt32(subBits[prefix]) << 20 | UInt32(entries.count)
            entries.append(contentsOf: repeatElement(0, count: 1 << subBits[prefix]))
        }
        for c in codes {
            var leaf = UInt32(c.length << 8 | c.x << 4 | c.y)
            if c.x != 0 { leaf |= 1 << 13 }
            if c.y != 0 { leaf |= 1 << 14 }
            if linbits && (c.x == 15 || c.y == 15) { leaf |= escape }
            if c.length <= rootBits {
                let first = c.code << (rootBits - c.length)
                let spare = rootBits - c.length
                let signs = (c.x != 0 ? 1 : 0) + (c.y != 0 ? 1 : 0)
                for k in first..<(first + 1 << spare) {
                    if leaf & escape == 0 && signs <= spare {
                        // The sign bits follow the code inside this index: store signed values.
                        let after = k & ((1 << spare) - 1)
                        var left = spare
                        func sign(_ v: Int) -> Int {
                            guard v != 0 else { return 0 }
                            left -= 1
                            return (after >> left) & 1 != 0 ? -v : v
                        }
                        let sx = sign(c.x), sy = sign(c.y)
                        entries[base + k] = complete | UInt32(c.length + signs)
                            | UInt32(UInt8(truncatingIfNeeded: sx)) << 8 | UInt32(UInt8(truncatingIfNeeded: sy)) << 16
                    } else {
                        entries[base + k] = leaf
                    }
                }
            } else {
                let prefix = c.code >> (c.length - rootBits)
                let link = entries[base + prefix]
                let sub = Int(link >> 20 & 31)
                let suffixLength = c.length - rootBits
                let suffix = c.code & ((1 << suffixLength) - 1)
                let first = suffix << (sub - suffixLength)
                let start = Int(link & 0xFFFFF)
                for k in first..<(first + 1 << (sub - suffixLength)) { entries[start + k] = leaf }
            }
        }
        return rootBits
    }
}

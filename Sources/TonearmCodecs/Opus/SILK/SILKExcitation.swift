extension OpusRangeDecoder {
    /// A symbol from `table[offset ..< offset + count]`, an 8-bit ICDF ending in 0.
    @inline(__always)
    mutating func decodeICDF(_ table: [UInt8], offset: Int, count: Int) -> Int {
        table.withUnsafeBufferPointer { decodeICDF(UnsafeBufferPointer(rebasing: $0[offset ..< offset + count]), bits: 8) }
    }

    /// A symbol from a two-entry ICDF { first, 0 }.
    @inline(__always)
    mutating func decodeBinaryICDF(_ first: UInt8) -> Int {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2) { buffer in
            buffer[0] = first
            buffer[1] = 0
            return decodeICDF(UnsafeBufferPointer(buffer), bits: 8)
        }
    }
}

/// The excitation of a SILK frame (RFC 6716 §4.2.7.8): pulse counts per 16-sample block,
/// shell-coded positions, LSBs and signs.
enum SILKExcitation {
    static let shellBlock = 16

    /// Decodes `frameLength` pulses (rounded up to whole blocks) into `pulses`, which holds
    /// at least that many rounded up to 16.
    static func decodePulses(_ rd: inout OpusRangeDecoder, into pulses: UnsafeMutablePointer<Int16>,
                             signalType: Int, quantOffsetType: Int, frameLength: Int)
    {
        // §4.2.7.8.1: the rate level.
        let rateLevel = rd.decodeICDF(SILKTables.rateLevelsICDF, offset: (signalType >> 1) * 9, count: 9)
        let blocks = (frameLength + shellBlock - 1) / shellBlock
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 40) { scratch in
                let sum = UnsafeMutableBufferPointer(rebasing: scratch[0..<20])
                let lsbCount = UnsafeMutableBufferPointer(rebasing: scratch[20..<40])
                let perBlock = SILKTables.pulsesPerBlockICDF
                for b in 0..<blocks {
                    lsbCount[b] = 0
                    sum[b] = rd.decodeICDF(perBlock, offset: rateLevel * 18, count: 18)
                    while sum[b] == 17 {
                        lsbCount[b] += 1
                        // After ten LSBs the table without the escape is used.
                        let skip = lsbCount[b] == 10 ? 1 : 0
                        sum[b] = rd.decodeICDF(perBlock, offset: 9 * 18 + skip, count: 18 - skip)
                    }
                }
                // §4.2.7.8.3: shell decoding.
                for b in 0..<blocks {
                    let block = pulses + b * shellBlock
                    if sum[b] > 0 {
                        shellDecode(&rd, block, sum[b])
                    } else {
                        block.update(repeating: 0, count: shellBlock)
                    }
                }
                // §4.2.7.8.4: LSBs.
                for b in 0..<blocks where lsbCount[b] > 0 {
                    let block = pulses + b * shellBlock
                    for k in 0..<shellBlock {
                        var value = Int32(block[k])
                        for _ in 0..<lsbCount[b] {
                            value = value << 1 + Int32(rd.decodeICDF(SILKTables.lsbICDF, offset: 0, count: 2))
                        }
                        block[k] = Int16(truncatingIfNeeded: value)
                    }
                    sum[b] |= lsbCount[b] << 5
                }
                // §4.2.7.8.5: signs, by signal type, offset type and the block's count.
                let signBase = 7 * (quantOffsetType + (signalType << 1))
                let signBlocks = (frameLength + shellBlock / 2) >> 4
                for b in 0..<signBlocks where sum[b] > 0 {
                    let first = SILKTables.signICDF[signBase + min(sum[b] & 0x1F, 6)]
                    let block = pulses + b * shellBlock
                    for k in 0..<shellBlock where block[k] > 0 {
                        if rd.decodeBinaryICDF(first) == 0 { block[k] = -block[k] }
                    }
                }
        }
    }

    /// Splits `total` pulses over 16 samples, halving recursively (§4.2.7.8.3).
    private static func shellDecode(_ rd: inout OpusRangeDecoder, _ out: UnsafeMutablePointer<Int16>, _ total: Int) {
        var p3 = (0, 0)
        var p2 = (0, 0, 0, 0)
        var p1 = (0, 0, 0, 0, 0, 0, 0, 0)
        p3 = split(&rd, total, SILKTables.shellCodeTable3)
        var s = split(&rd, p3.0, SILKTables.shellCodeTable2); p2.0 = s.0; p2.1 = s.1
        s = split(&rd, p2.0, SILKTables.shellCodeTable1); p1.0 = s.0; p1.1 = s.1
        leaves(&rd, out, 0, p1.0)
        leaves(&rd, out, 2, p1.1)
        s = split(&rd, p2.1, SILKTables.shellCodeTable1); p1.2 = s.0; p1.3 = s.1
        leaves(&rd, out, 4, p1.2)
        leaves(&rd, out, 6, p1.3)
        s = split(&rd, p3.1, SILKTables.shellCodeTable2); p2.2 = s.0; p2.3 = s.1
        s = split(&rd, p2.2, SILKTables.shellCodeTable1); p1.4 = s.0; p1.5 = s.1
        leaves(&rd, out, 8, p1.4)
        leaves(&rd, out, 10, p1.5)
        s = split(&rd, p2.3, SILKTables.shellCodeTable1); p1.6 = s.0; p1.7 = s.1
        leaves(&rd, out, 12, p1.6)
        leaves(&rd, out, 14, p1.7)
    }

    @inline(__always)
    private static func leaves(_ rd: inout OpusRangeDecoder, _ out: UnsafeMutablePointer<Int16>, _ at: Int, _ total: Int) {
        let s = split(&rd, total, SILKTables.shellCodeTable0)
        out[at] = Int16(s.0)
        out[at + 1] = Int16(s.1)
    }

    /// One split: how many of `total` pulses go to the first half.
    @inline(__always)
    private static func split(_ rd: inout OpusRangeDecoder, _ total: Int, _ table: [UInt8]) -> (Int, Int) {
        guard total > 0 else { return (0, 0) }
        let t = min(total, 16)
        let first = rd.decodeICDF(table, offset: SILKTables.shellCodeTableOffsets[t], count: t + 1)
        return (first, t - first)
    }
}

import TonearmCore

/// Finds where FLAC frames end: at the first position after a frame's start where a valid
/// header begins and the CRC-16 of the bytes so far is 0.
public enum FLACFrameScanner {
    /// What the scan found.
    enum Result {
        /// The frame ends at `at`, where the next one (with this header) begins.
        case end(at: Int, next: FLACFrameHeader)
        /// No end yet: either more bytes are needed, or `position` passed the limit.
        case exhausted
    }

    /// The first index `i` in `from..<to` where a sync code may begin: `p[i]` is 0xFF and
    /// `p[i + 1]` is 0xF8 or 0xF9, or `p[i]` is 0xFF and the last of the `count` bytes (its
    /// partner has not arrived). `to` when there is none.
    ///
    /// Release builds look sixteen bytes at a time with SIMD compares; debug builds, where
    /// unspecialised SIMD code is very slow, eight at a time with integer arithmetic. The
    /// tests check that both give the same answers.
    @inline(__always)
    static func findSync(_ p: UnsafeRawPointer, from: Int, to: Int, count: Int) -> Int {
        #if DEBUG
        return findSyncWords(p, from: from, to: to, count: count)
        #else
        return findSyncVectors(p, from: from, to: to, count: count)
        #endif
    }

    /// ``findSync(_:from:to:count:)`` eight bytes at a time: a byte of `~word` is zero where
    /// the word has 0xFF.
    @inline(__always)
    public static func findSyncWords(_ p: UnsafeRawPointer, from: Int, to: Int, count: Int) -> Int {
        var i = from
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while i < to {
            if i + 8 <= to {
                let x = ~UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let z = (x &- ones) & ~x & highs  // exact up to the first zero byte
                if z == 0 { i += 8; continue }
                i += z.trailingZeroBitCount >> 3
            } else if p.load(fromByteOffset: i, as: UInt8.self) != 0xFF {
                i += 1
                continue
            }
            // p[i] is 0xFF.
            if i + 1 == count || p.load(fromByteOffset: i + 1, as: UInt8.self) & 0xFE == 0xF8 { return i }
            i += 1
        }
        return to
    }

    /// ``findSync(_:from:to:count:)`` sixteen bytes at a time: 0xFF in one vector and
    /// 0xF8/0xF9 in the same vector shifted by a byte.
    @inline(__always)
    public static func findSyncVectors(_ p: UnsafeRawPointer, from: Int, to: Int, count: Int) -> Int {
        var i = from
        let ff = SIMD16<UInt8>(repeating: 0xFF), fe = SIMD16<UInt8>(repeating: 0xFE), f8 = SIMD16<UInt8>(repeating: 0xF8)
        while i < to && i + 17 <= count {
            let a = p.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            let b = p.loadUnaligned(fromByteOffset: i + 1, as: SIMD16<UInt8>.self)
            let m = (a .== ff) .& ((b & fe) .== f8)
            if any(m) {
                for k in 0..<16 where m[k] { return min(i + k, to) }
            }
            i += 16
        }
        while i < to {
            if p.load(fromByteOffset: i, as: UInt8.self) == 0xFF {
                if i + 1 == count || p.load(fromByteOffset: i + 1, as: UInt8.self) & 0xFE == 0xF8 { return i }
            }
            i += 1
        }
        return to
    }

    /// Scans for the end of the frame that begins at index `start`.
    ///
    /// Candidates are looked for from `searched` on; `crc` is the CRC-16 of the frame's
    /// bytes up to `crcEnd`, and is brought forward only to candidates whose header is valid
    /// (their CRC-8 right and `accept` content), so that it runs over long stretches at a
    /// time. Ends count only at or after `minimumEnd` and at or before `limit`. A candidate
    /// whose header is cut by the end of the bytes stops the scan there unless `isEnd`
    /// (then it is no header). After the scan, `searched` is where to go on.
    @inline(__always)
    static func scan(_ p: UnsafeRawPointer, count: Int, searched: inout Int, crcEnd: inout Int, crc: inout UInt16,
                     minimumEnd: Int, limit: Int, isEnd: Bool, tables: UnsafePointer<UInt32>,
                     shift: UnsafePointer<UInt32>, accept: (FLACFrameHeader) -> Bool) -> Result
    {
        var i = max(searched, minimumEnd)
        defer { searched = i }
        let stop = min(count, limit + 1)
        while i < stop {
            i = findSync(p, from: i, to: stop, count: count)
            guard i < stop else { break }
            guard i + 1 < count else {
                if isEnd { i += 1; continue }
                return .exhausted
            }
            do {
                switch FLACFrameHeader.parse(p + i, count: count - i) {
                case .header(let h) where accept(h):
                    crc = FLACCRC.update(crc, p + crcEnd, i - crcEnd, tables, shift)
                    crcEnd = i
                    if crc == 0 { return .end(at: i, next: h) }
                case .needMore where !isEnd:
                    return .exhausted
                default:
                    break
                }
            }
            i += 1
        }
        return .exhausted
    }
}

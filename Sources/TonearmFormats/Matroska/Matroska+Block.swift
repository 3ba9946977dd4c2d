import TonearmCore

/// The header of a SimpleBlock or Block (RFC 9559 §10.1, §10.2) and where its frames lie.
struct MatroskaBlock {
    var track: UInt64
    /// Relative to the Cluster's Timestamp, in TimestampScale units.
    var timestamp: Int16
    var flags: UInt8
    /// Each frame's range in the block's body; one frame without lacing.
    var frames: [Range<Int>]

    /// The most frames a lace can hold (the count is one byte, less one).
    static let maximumLaceCount = 256

    var isKeyframe: Bool { flags & 0x80 != 0 }

    /// Reads the track number alone, to skip other tracks' blocks before they are whole.
    static func track(_ p: UnsafeRawBufferPointer) -> UInt64? { EBML.vint(p, at: 0)?.value }

    /// Parses a block's body; throws for lacing that does not add up (§10.3).
    static func parse(_ p: UnsafeRawBufferPointer) throws(AudioError) -> MatroskaBlock {
        guard let (track, n) = EBML.vint(p, at: 0), n + 3 <= p.count else { throw EBML.fail("a block header is cut short") }
        let timestamp = Int16(bitPattern: UInt16(p[n]) << 8 | UInt16(p[n + 1]))
        let flags = p[n + 2]
        var at = n + 3
        let lacing = flags >> 1 & 3
        guard lacing != 0 else {
            return MatroskaBlock(track: track, timestamp: timestamp, flags: flags, frames: [at..<p.count])
        }
        guard at < p.count else { throw EBML.fail("a laced block has no frame count") }
        let count = Int(p[at]) + 1
        at += 1
        var sizes: [Int] = []
        sizes.reserveCapacity(count)
        switch lacing {
        case 1:  // Xiph (§10.3.2): each size but the last as runs of 255 ended by a smaller byte.
            for _ in 0..<count - 1 {
                var size = 0
                while true {
                    guard at < p.count else { throw EBML.fail("a Xiph lace is cut short") }
                    let b = Int(p[at])
                    at += 1
                    size += b
                    if b < 255 { break }
                }
                sizes.append(size)
            }
        case 3:  // EBML (§10.3.3): the first size, then signed differences from the one before.
            guard let (first, k) = EBML.vint(p, at: at), first <= UInt64(p.count) else {
                throw EBML.fail("an EBML lace is cut short")
            }
            at += k
            var size = Int(first)
            sizes.append(size)
            for _ in 1..<max(1, count - 1) where count > 2 {
                guard let (d, k) = EBML.signedVint(p, at: at) else { throw EBML.fail("an EBML lace is cut short") }
                at += k
                let next = Int64(size) + d
                guard next >= 0, next <= Int64(p.count) else { throw EBML.fail("an EBML lace gives a frame of \(next) bytes") }
                size = Int(next)
                sizes.append(size)
            }
        default:  // Fixed-size (§10.3.4): the frames share what is left equally.
            let left = p.count - at
            guard left % count == 0 else { throw EBML.fail("\(left) bytes do not split into \(count) fixed-size frames") }
            sizes = Array(repeating: left / count, count: count - 1)
        }
        let used = sizes.reduce(0, +)
        guard used <= p.count - at else { throw EBML.fail("a lace's frames are larger than the block") }
        sizes.append(p.count - at - used)
        var frames: [Range<Int>] = []
        frames.reserveCapacity(count)
        for s in sizes {
            frames.append(at..<at + s)
            at += s
        }
        return MatroskaBlock(track: track, timestamp: timestamp, flags: flags, frames: frames)
    }
}

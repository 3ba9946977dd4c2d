import TonearmCore

/// Limits and shared helpers of the MP4 family (ISO/IEC 14496-12 and -14, 3GPP TS 26.244,
/// Apple's QuickTime File Format).
///
/// Every table the parser allocates is bounded by the bytes of the box that describes it, and
/// every box it reads whole is bounded by one of these sizes; beyond them it fails with a limit
/// error instead of allocating.
enum MP4 {
    /// The largest `moov` read (60 MiB). A 50-hour AAC audiobook's sample tables take about
    /// 30 MiB; the bound stays below ``ParserDriver``'s 64 MiB buffer.
    static let maximumMoovSize = 60 << 20
    /// The largest `moof` read (16 MiB).
    static let maximumMoofSize = 16 << 20
    /// The largest `ftyp` read.
    static let maximumFtypSize = 1 << 16
    /// Most samples one track may have in total (2^22 samples are 27 hours of 44.1 kHz AAC).
    /// With a `stsz` that lists sizes, its box bounds the count well below this.
    static let maximumSampleCount = 1 << 22
    /// Most samples a `stsz` with one constant size may claim, where the box bounds nothing:
    /// 2^20 (a 24 MiB table). Where the source's size is known, the samples must also fit it.
    static let maximumConstantSizeSamples = 1 << 20
    /// Most samples one `trun` may describe without per-sample fields.
    static let maximumRunWithoutFields = 1 << 16
    /// Deepest box nesting followed.
    static let maximumDepth = 16
    /// Most chapters kept from a chapter track.
    static let maximumChapters = 4096
    /// The most `stsd` entries kept.
    static let maximumSampleEntries = 64
    /// Most bytes read of one chapter title sample.
    static let maximumChapterSampleSize = 4096
    /// Most boxes walked with a byte-range fetcher while looking for a `moov` after `mdat`.
    static let maximumBoxesToMoov = 4096
    /// The largest box size accepted: far beyond any file, small enough that offsets plus
    /// sizes never overflow.
    static let maximumBoxSize: Int64 = 1 << 60

    /// Top-level boxes a file may begin with; anything else is not an MP4 file.
    static let firstBoxTypes: Set<FourCC> = ["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "uuid", "styp", "sidx", "moof", "pdin", "meta", "jP  "]
}

@inline(__always) func mp4be16(_ p: UnsafeRawBufferPointer, _ i: Int) -> UInt16 {
    UInt16(bigEndian: p.loadUnaligned(fromByteOffset: i, as: UInt16.self))
}

@inline(__always) func mp4be32(_ p: UnsafeRawBufferPointer, _ i: Int) -> UInt32 {
    UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i, as: UInt32.self))
}

@inline(__always) func mp4be64(_ p: UnsafeRawBufferPointer, _ i: Int) -> UInt64 {
    UInt64(bigEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self))
}

/// A box header: 32-bit size and type, a 64-bit `largesize` when the size is 1, and no size
/// at all (the box runs to the end of the file) when it is 0 (ISO/IEC 14496-12 §4.2).
struct MP4BoxHeader: Equatable, Sendable {
    var type: FourCC
    /// 8, or 16 with a largesize.
    var headerSize: Int
    /// The whole box, header included; nil when it runs to the end of the file.
    var size: Int64?

    var bodySize: Int64? { size.map { $0 - Int64(headerSize) } }

    /// Reads a header at `offset` in `p`; nil when fewer bytes than the header are there.
    static func read(_ p: UnsafeRawBufferPointer, at offset: Int = 0) throws(AudioError) -> MP4BoxHeader? {
        guard p.count - offset >= 8 else { return nil }
        let size32 = mp4be32(p, offset)
        let type = FourCC(rawValue: mp4be32(p, offset + 4))
        switch size32 {
        case 0:
            return MP4BoxHeader(type: type, headerSize: 8, size: nil)
        case 1:
            guard p.count - offset >= 16 else { return nil }
            let large = mp4be64(p, offset + 8)
            guard large >= 16, large <= UInt64(MP4.maximumBoxSize) else {
                throw AudioError(.invalidChunk, "box \(type) claims a 64-bit size of \(large) bytes")
            }
            return MP4BoxHeader(type: type, headerSize: 16, size: Int64(large))
        default:
            guard size32 >= 8 else {
                throw AudioError(.invalidChunk, "box \(type) claims \(size32) bytes, fewer than its header")
            }
            return MP4BoxHeader(type: type, headerSize: 8, size: Int64(size32))
        }
    }
}

/// A box inside bytes held in memory: `start` is its header, `body` its contents.
struct MP4Box: Sendable {
    var type: FourCC
    var start: Int
    var body: Range<Int>
}

/// Walks boxes in memory (the bodies of `moov`, `moof` and their children).
enum MP4Boxes {
    /// The boxes that fill `range` of `p`, in order. A size of 0 runs to the end of the range
    /// (QuickTime also ends some lists with a 32-bit zero); fewer than 8 bytes left over end
    /// the list. A box that overruns the range is an error.
    static func children(_ p: UnsafeRawBufferPointer, _ range: Range<Int>) throws(AudioError) -> [MP4Box] {
        var out: [MP4Box] = []
        var i = range.lowerBound
        while range.upperBound - i >= 8 {
            let view = UnsafeRawBufferPointer(rebasing: p[i..<range.upperBound])
            guard let h = try MP4BoxHeader.read(view) else { break }
            if h.size == nil && mp4be32(p, i) == 0 && h.type.rawValue == 0 { break }  // a zero terminator
            let size = h.size ?? Int64(range.upperBound - i)
            guard size <= Int64(range.upperBound - i) else {
                throw AudioError(.invalidChunk, "box \(h.type) of \(size) bytes overruns its parent (\(range.upperBound - i) bytes left)")
            }
            out.append(MP4Box(type: h.type, start: i, body: (i + h.headerSize)..<(i + Int(size))))
            i += Int(size)
        }
        return out
    }

    /// The first child of the given type.
    static func first(_ type: FourCC, in p: UnsafeRawBufferPointer, _ range: Range<Int>) throws(AudioError) -> MP4Box? {
        try children(p, range).first { $0.type == type }
    }

    /// Where the contents of a `meta` box begin: ISO's `meta` is a full box (4 bytes of version
    /// and flags before its children); QuickTime's is a plain container. Tell them apart by
    /// whether a child header (a size and a `hdlr`) comes first.
    static func metaChildren(_ p: UnsafeRawBufferPointer, _ body: Range<Int>) -> Range<Int> {
        if body.count >= 8, mp4be32(p, body.lowerBound + 4) == FourCC("hdlr").rawValue { return body }
        return min(body.lowerBound + 4, body.upperBound)..<body.upperBound
    }
}

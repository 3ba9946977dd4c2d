import TonearmCore

/// Ogg's CRC-32 (RFC 3533 §6): generator polynomial 0x04C11DB7, initial value 0, no bit
/// reflection and no final XOR. It covers the whole page with the CRC field set to zero.
enum OggCRC {
    /// One entry per byte value: the CRC register after shifting that byte through it.
    static let table: [UInt32] = (0..<256).map { (n: Int) -> UInt32 in
        var r = UInt32(n) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    /// Runs `bytes` through the register, starting from `crc`.
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = crc
        table.withUnsafeBufferPointer { t in
            for b in bytes { c = (c << 8) ^ t[Int((c >> 24) ^ UInt32(b))] }
        }
        return c
    }

    /// The CRC of a page whose bytes are `page` (its CRC field, bytes 22–25, counts as zero).
    static func pageChecksum(_ page: UnsafeRawBufferPointer) -> UInt32 {
        precondition(page.count >= OggPage.minimumHeaderSize)
        var c = update(0, UnsafeRawBufferPointer(rebasing: page[0..<22]))
        let zeros: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        c = withUnsafeBytes(of: zeros) { update(c, $0) }
        return update(c, UnsafeRawBufferPointer(rebasing: page[26...]))
    }
}

/// The header of one Ogg page (RFC 3533 §6).
///
/// | bytes | field |
/// |---|---|
/// | 0  | capture pattern `OggS` |
/// | 4  | stream structure version, 0 |
/// | 5  | header type: 0x01 continued packet, 0x02 first page (BOS), 0x04 last page (EOS) |
/// | 6  | granule position, 64-bit little-endian; −1 when no packet ends on the page |
/// | 14 | bitstream serial number |
/// | 18 | page sequence number |
/// | 22 | CRC-32 |
/// | 26 | number of segments, then that many lacing values, then the body |
struct OggPage: Sendable, Equatable {
    static let minimumHeaderSize = 27
    /// 27 + 255 lacing values + 255 × 255 body bytes.
    static let maximumSize = 27 + 255 + 255 * 255

    var flags: UInt8
    var granulePosition: Int64
    var serial: UInt32
    var sequence: UInt32
    var checksum: UInt32
    var lacing: [UInt8]

    var isContinued: Bool { flags & 0x01 != 0 }
    var isFirst: Bool { flags & 0x02 != 0 }
    var isLast: Bool { flags & 0x04 != 0 }
    var headerSize: Int { OggPage.minimumHeaderSize + lacing.count }
    var bodySize: Int { lacing.reduce(0) { $0 + Int($1) } }
    var size: Int { headerSize + bodySize }
    /// True when the last packet that begins on this page goes on to the next page.
    var endsInsidePacket: Bool { lacing.last == 255 }

    /// What lies at the start of some bytes.
    enum Scan: Equatable {
        /// A page whose CRC is right.
        case page(OggPage)
        /// More bytes are needed to tell (at most `OggPage.maximumSize` in all).
        case needMore
        /// Not a page: no capture pattern, an unknown version, or a wrong CRC.
        case invalid(String)
    }

    /// Reads and checks the page at the start of `bytes`.
    static func scan(_ bytes: UnsafeRawBufferPointer) -> Scan {
        let n = bytes.count
        // The capture pattern can be refused from its first bytes.
        let capture: [UInt8] = [0x4F, 0x67, 0x67, 0x53]  // "OggS"
        for i in 0..<min(4, n) where bytes[i] != capture[i] { return .invalid("no capture pattern") }
        if n > 4 && bytes[4] != 0 { return .invalid("stream structure version \(bytes[4])") }
        if n > 5 && bytes[5] & 0xF8 != 0 { return .invalid("undefined header type bits 0x\(String(bytes[5], radix: 16))") }
        guard n >= minimumHeaderSize else { return .needMore }
        let segments = Int(bytes[26])
        guard n >= minimumHeaderSize + segments else { return .needMore }
        var body = 0
        for i in 0..<segments { body += Int(bytes[minimumHeaderSize + i]) }
        let size = minimumHeaderSize + segments + body
        guard n >= size else { return .needMore }
        let page = UnsafeRawBufferPointer(rebasing: bytes[0..<size])
        let stored = le32(page, 22)
        guard OggCRC.pageChecksum(page) == stored else { return .invalid("CRC mismatch") }
        return .page(OggPage(flags: bytes[5], granulePosition: Int64(bitPattern: le64(page, 6)),
                             serial: le32(page, 14), sequence: le32(page, 18), checksum: stored,
                             lacing: Array(UnsafeRawBufferPointer(rebasing: page[27..<27 + segments]))))
    }

    /// The first offset at or after `start` where a page may begin (the capture pattern `OggS`), or nil.
    static func nextCapture(in bytes: UnsafeRawBufferPointer, from start: Int = 1) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var i = max(0, start)
        while i + 4 <= bytes.count {
            if bytes[i] == 0x4F && bytes[i + 1] == 0x67 && bytes[i + 2] == 0x67 && bytes[i + 3] == 0x53 { return i }
            i += 1
        }
        return nil
    }

    /// The packets laid out in the body: each piece runs from `start` for `size` bytes
    /// (relative to the body); `completes` is false for the last piece when it continues on
    /// the next page, `continues` is true for the first piece of a continued page.
    struct Piece: Equatable {
        var start: Int
        var size: Int
        var completes: Bool
        var continues: Bool
    }

    var pieces: [Piece] {
        var out: [Piece] = []
        var offset = 0, pieceStart = 0, size = 0
        var open = false
        for value in lacing {
            if !open { pieceStart = offset; size = 0; open = true }
            size += Int(value)
            offset += Int(value)
            if value < 255 {
                out.append(Piece(start: pieceStart, size: size, completes: true, continues: isContinued && out.isEmpty))
                open = false
            }
        }
        if open {
            out.append(Piece(start: pieceStart, size: size, completes: false, continues: isContinued && out.isEmpty))
        }
        return out
    }

    static func le32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    static func le64(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(le32(b, at)) | UInt64(le32(b, at + 4)) << 32
    }
}

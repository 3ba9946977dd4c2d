import TonearmCore

/// What the decoder needs of a FLAC frame header (RFC 9639 §9.1). The container parser
/// has its own; codecs and formats do not share code, so this is the decoder's copy,
/// reading only the fields decoding needs.
struct FLACDecoderFrameHeader {
    var blockSize: Int
    /// 0–7 independent channels, 8 left/side, 9 side/right, 10 mid/side.
    var channelAssignment: Int
    /// 0 when the header leaves it to STREAMINFO.
    var bitsPerSample: Int
    /// Bytes of the header, CRC-8 included.
    var length: Int

    var channels: Int { channelAssignment < 8 ? channelAssignment + 1 : 2 }

    private static let sampleSizes = [0, 8, 12, -1, 16, 20, 24, 32]

    /// The header at the start of `p`, or nil when it is not a valid one.
    static func parse(_ p: UnsafeRawBufferPointer) -> FLACDecoderFrameHeader? {
        let n = p.count
        guard n >= 6, p[0] == 0xFF, p[1] & 0xFE == 0xF8 else { return nil }
        let blockCode = Int(p[2] >> 4), rateCode = Int(p[2] & 0xF)
        let channelCode = Int(p[3] >> 4), sizeCode = Int((p[3] >> 1) & 7)
        guard blockCode != 0, rateCode != 15, channelCode <= 10, sizeCode != 3, p[3] & 1 == 0 else { return nil }
        // The frame or sample number, coded as UTF-8 codes a code point (up to 7 bytes).
        var i = 4
        let lead = p[i]
        let extra: Int
        switch lead {
        case 0x00...0x7F: extra = 0
        case 0xC0...0xDF: extra = 1
        case 0xE0...0xEF: extra = 2
        case 0xF0...0xF7: extra = 3
        case 0xF8...0xFB: extra = 4
        case 0xFC...0xFD: extra = 5
        case 0xFE where p[1] & 1 == 1: extra = 6
        default: return nil
        }
        i += 1
        guard n > i + extra else { return nil }
        for _ in 0..<extra {
            guard p[i] & 0xC0 == 0x80 else { return nil }
            i += 1
        }
        var blockSize: Int
        switch blockCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 144 << blockCode
        case 6:
            guard n > i else { return nil }
            blockSize = Int(p[i]) + 1
            i += 1
        case 7:
            guard n > i + 1 else { return nil }
            blockSize = (Int(p[i]) << 8 | Int(p[i + 1])) + 1
            i += 2
        default: blockSize = 1 << blockCode
        }
        switch rateCode {
        case 12: i += 1
        case 13, 14: i += 2
        default: break
        }
        guard n > i else { return nil }
        var crc: UInt8 = 0
        for k in 0..<i { crc = FLACChecksums.crc8Table[Int(crc ^ p[k])] }
        guard crc == p[i] else { return nil }
        return FLACDecoderFrameHeader(blockSize: blockSize, channelAssignment: channelCode,
                                      bitsPerSample: sampleSizes[sizeCode], length: i + 1)
    }
}

/// The frame CRCs (RFC 9639 §9.1.8 and §9.3): CRC-8 with polynomial 0x07, CRC-16 with
/// 0x8005, both MSB first from 0.
enum FLACChecksums {
    static let crc8Table: [UInt8] = (0..<256).map { (i: Int) -> UInt8 in
        var c = UInt8(i)
        for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
        return c
    }

    /// Four tables for four bytes at a time: entry `x` of table k (at 256 × k) is the CRC
    /// of byte x followed by k zero bytes.
    static let crc16Tables: [UInt16] = {
        var t = [UInt16](repeating: 0, count: 1024)
        for i in 0..<256 {
            var c = UInt16(i) << 8
            for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
            t[i] = c
        }
        for k in 1..<4 {
            for i in 0..<256 {
                let prev = t[256 * (k - 1) + i]
                t[256 * k + i] = (prev << 8) ^ t[Int(prev >> 8)]
            }
        }
        return t
    }()

    /// The CRC-16 of the bytes; 0 over a whole frame, its CRC included, when it is intact.
    static func crc16(_ p: UnsafeRawBufferPointer) -> UInt16 {
        crc16Tables.withUnsafeBufferPointer { t in
            var c: UInt16 = 0
            var i = 0
            let n = p.count
            while i + 4 <= n {
                // The CRC so far meets the first two bytes; the last two enter as they are.
                let x = UInt32(c) << 16 ^ UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i, as: UInt32.self))
                c = t[768 + Int(x >> 24)] ^ t[512 + Int((x >> 16) & 0xFF)] ^ t[256 + Int((x >> 8) & 0xFF)]
                    ^ t[Int(x & 0xFF)]
                i += 4
            }
            while i < n {
                c = (c << 8) ^ t[Int((c >> 8) ^ UInt16(p[i]))]
                i += 1
            }
            return c
        }
    }
}

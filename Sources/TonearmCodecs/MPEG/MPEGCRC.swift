import TonearmCore

/// The CRC-16 of MPEG audio frames (polynomial x¹⁶ + x¹⁵ + x² + 1, initial value 0xFFFF).
///
/// It covers the last two bytes of the header and then the frame's protected bits (layer
/// III: the side information; layers I and II: the bit allocation and, in layer II, the
/// scale factor selection), skipping the stored CRC word itself.
enum MPEGCRC {
    /// Whether a frame's stored CRC matches. `frame` starts at the header; `protectedBits`
    /// counts the bits after the CRC word that the CRC covers. False when the frame is too short.
    static func check(_ frame: UnsafeRawBufferPointer, protectedBits: Int) -> Bool {
        guard frame.count >= 6, protectedBits >= 0, 6 + (protectedBits + 7) / 8 <= frame.count else { return false }
        let base = frame.baseAddress!
        // Whole bytes through the table-driven CRC-16 FLAC uses (the same polynomial), the
        // protected bits' last partial byte bit by bit.
        var crc = FLACCRC.crc16(0xFFFF, base + 2, count: 2)
        crc = FLACCRC.crc16(crc, base + 6, count: protectedBits / 8)
        if protectedBits % 8 > 0 { crc = update(crc, byte: frame[6 + protectedBits / 8], bits: protectedBits % 8) }
        return crc == UInt16(frame[4]) << 8 | UInt16(frame[5])
    }

    /// Feeds the top `bits` (< 8) bits of `byte`, most significant first.
    @inline(__always)
    private static func update(_ crc: UInt16, byte: UInt8, bits: Int) -> UInt16 {
        var c = crc
        var b = byte
        for _ in 0..<bits {
            let feedback = (c >> 15) ^ UInt16(b >> 7)
            c <<= 1
            if feedback & 1 == 1 { c ^= 0x8005 }
            b <<= 1
        }
        return c
    }
}

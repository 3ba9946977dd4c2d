/// FLAC frame headers and CRCs, shared by the container parser (TonearmFormats) and the
/// decoder (TonearmCodecs).

/// The header of a FLAC frame (RFC 9639, section 9.1).
///
/// | bits | field |
/// |---|---|
/// | 15 | sync code 0b111111111111100 (the last of them a reserved 0 bit) |
/// | 1  | blocking strategy: 0 fixed (a frame number follows), 1 variable (a sample number) |
/// | 4  | block size code |
/// | 4  | sample rate code |
/// | 4  | channel assignment: 0–7 independent, 8 left/side, 9 side/right, 10 mid/side |
/// | 3  | sample size code, then a reserved 0 bit |
/// | 8–56 | the frame or sample number, coded as UTF-8 codes its code points (up to 36 bits) |
/// | 0/8/16 | the block size minus one, for codes 6 and 7 |
/// | 0/8/16 | the sample rate, for codes 12 (kHz), 13 (Hz) and 14 (tens of Hz) |
/// | 8  | CRC-8 of all the bytes before it |
public struct FLACFrameHeader: Hashable, Sendable {
    /// True for a variable block size stream, whose headers carry the first sample's number.
    public var isVariableBlockSize: Bool
    /// Samples per channel in the frame.
    public var blockSize: Int
    /// Samples per second; 0 when the header leaves it to STREAMINFO.
    public var sampleRate: Int
    /// 0–7: 1 to 8 independent channels; 8 left/side, 9 side/right, 10 mid/side stereo.
    public var channelAssignment: Int
    /// Bits per sample; 0 when the header leaves it to STREAMINFO.
    public var bitsPerSample: Int
    /// The frame number (fixed block size) or the number of the first sample (variable).
    public var number: UInt64
    /// Bytes of the header, its CRC-8 included.
    public var length: Int

    public var channels: Int { channelAssignment < 8 ? channelAssignment + 1 : 2 }

    public init(isVariableBlockSize: Bool, blockSize: Int, sampleRate: Int, channelAssignment: Int, bitsPerSample: Int,
                number: UInt64, length: Int)
    {
        self.isVariableBlockSize = isVariableBlockSize
        self.blockSize = blockSize
        self.sampleRate = sampleRate
        self.channelAssignment = channelAssignment
        self.bitsPerSample = bitsPerSample
        self.number = number
        self.length = length
    }

    /// The longest header: 2 + 2 + 7 (number) + 2 (block size) + 2 (rate) + 1 (CRC).
    public static let maximumLength = 16

    public enum Parse: Equatable {
        case header(FLACFrameHeader)
        /// Not a frame header (or its CRC-8 is wrong).
        case invalid
        /// More bytes are needed to tell.
        case needMore
    }

    static let rates = [0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000]
    static let sampleSizes = [0, 8, 12, -1, 16, 20, 24, 32]

    /// Reads a frame header from the first `count` bytes at `p`.
    public static func parse(_ p: UnsafeRawPointer, count: Int) -> Parse {
        @inline(__always) func byte(_ i: Int) -> Int { Int(p.load(fromByteOffset: i, as: UInt8.self)) }
        if count < 4 {
            if count >= 1 && byte(0) != 0xFF { return .invalid }
            if count >= 2 && byte(1) & 0xFE != 0xF8 { return .invalid }
            return .needMore
        }
        guard byte(0) == 0xFF, byte(1) & 0xFE == 0xF8 else { return .invalid }
        let variable = byte(1) & 1 == 1
        let b2 = byte(2), b3 = byte(3)
        let blockCode = b2 >> 4, rateCode = b2 & 0xF
        let channelCode = b3 >> 4, sizeCode = (b3 >> 1) & 7
        guard blockCode != 0, rateCode != 15, channelCode <= 10, sizeCode != 3, b3 & 1 == 0 else { return .invalid }

        // The coded number: a UTF-8-like sequence of up to 7 bytes.
        var i = 4
        guard count > i else { return .needMore }
        let lead = byte(i)
        var extra: Int
        var value: UInt64
        switch lead {
        case 0x00...0x7F: extra = 0; value = UInt64(lead)
        case 0xC0...0xDF: extra = 1; value = UInt64(lead & 0x1F)
        case 0xE0...0xEF: extra = 2; value = UInt64(lead & 0x0F)
        case 0xF0...0xF7: extra = 3; value = UInt64(lead & 0x07)
        case 0xF8...0xFB: extra = 4; value = UInt64(lead & 0x03)
        case 0xFC...0xFD: extra = 5; value = UInt64(lead & 0x01)
        case 0xFE where variable: extra = 6; value = 0  // 36-bit sample numbers only
        default: return .invalid
        }
        i += 1
        for _ in 0..<extra {
            guard count > i else { return .needMore }
            let b = byte(i)
            guard b & 0xC0 == 0x80 else { return .invalid }
            value = value << 6 | UInt64(b & 0x3F)
            i += 1
        }

        let blockSize: Int
        switch blockCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 144 << blockCode
        case 6:
            guard count > i else { return .needMore }
            blockSize = byte(i) + 1
            i += 1
        case 7:
            guard count > i + 1 else { return .needMore }
            blockSize = (byte(i) << 8 | byte(i + 1)) + 1
            i += 2
        default: blockSize = 1 << blockCode
        }

        var rate: Int
        switch rateCode {
        case 12:
            guard count > i else { return .needMore }
            rate = byte(i) * 1000
            i += 1
        case 13, 14:
            guard count > i + 1 else { return .needMore }
            rate = byte(i) << 8 | byte(i + 1)
            if rateCode == 14 { rate *= 10 }
            i += 2
        default: rate = rates[rateCode]
        }
        if rateCode >= 12 && rate == 0 { return .invalid }

        guard count > i else { return .needMore }
        guard FLACCRC.crc8(p, count: i) == UInt8(byte(i)) else { return .invalid }
        return .header(FLACFrameHeader(isVariableBlockSize: variable, blockSize: blockSize, sampleRate: rate,
                                       channelAssignment: channelCode, bitsPerSample: sampleSizes[sizeCode],
                                       number: value, length: i + 1))
    }

    /// A generous upper bound on the size of a frame with this header: twice the size of
    /// verbatim subframes plus room for the headers. Real encoders never go past the
    /// verbatim size; a "frame" that runs longer is damaged, and the parser resynchronises.
    public static func sizeBound(blockSize: Int, channels: Int, bitsPerSample: Int) -> Int {
        let bits = (bitsPerSample > 0 ? bitsPerSample : 32) + 1  // a side channel has one bit more
        return 1024 + 2 * channels * (8 + (blockSize * bits + 7) / 8)
    }
}

/// The CRCs of FLAC frames: CRC-8 (polynomial x^8 + x^2 + x + 1) over the header and
/// CRC-16 (x^16 + x^15 + x^2 + 1) over the whole frame, both most significant bit first
/// from an initial value of 0. Run over a frame including its own CRC-16, the CRC-16 is 0.
public enum FLACCRC {
    @usableFromInline static let crc8Table: [UInt8] = (0..<256).map { (i: Int) -> UInt8 in
        var c = UInt8(i)
        for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
        return c
    }

    /// Eight tables of 256 entries for eight bytes at a time: entry `x` of table `k` is the
    /// CRC of byte `x` followed by `k` zero bytes. Entries are 32-bit (the CRC uses the low 16
    /// bits): whole-register loads and XORs are faster than 16-bit ones.
    public static let crc16Tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt16(i) << 8
            for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
            t[i] = UInt32(c)
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = (prev << 8 & 0xFFFF) ^ t[Int(prev >> 8)]
            }
        }
        return t
    }()

    /// The CRC-8 of `count` bytes.
    public static func crc8(_ p: UnsafeRawPointer, count: Int) -> UInt8 {
        crc8Table.withUnsafeBufferPointer { t in
            var c: UInt8 = 0
            for i in 0..<count { c = t[Int(c ^ p.load(fromByteOffset: i, as: UInt8.self))] }
            return c
        }
    }

    /// One byte.
    @inlinable @inline(__always)
    public static func update(_ crc: UInt16, byte: UInt8, _ t: UnsafePointer<UInt32>) -> UInt16 {
        (crc << 8) ^ UInt16(truncatingIfNeeded: t[Int((crc >> 8) ^ UInt16(byte))])
    }

    /// Bytes per lane of the three-lane CRC-16.
    public static let lane = 128

    /// Multiplying a CRC-16 by x^(8 × lane) modulo the polynomial, i.e. running it through
    /// `lane` zero bytes, as two tables (it is linear): entry `x` is the shift of `x << 8`,
    /// entry `256 + x` the shift of `x`.
    public static let laneShift: [UInt32] = {
        func zeros(_ value: UInt16) -> UInt32 {
            var c = value
            for _ in 0..<lane { c = (c << 8) ^ UInt16(crc16Tables[Int(c >> 8)]) }
            return UInt32(c)
        }
        return (0..<256).map { zeros(UInt16($0) << 8) } + (0..<256).map { zeros(UInt16($0)) }
    }()

    /// The CRC-16 of `count` bytes, continuing from `crc`.
    public static func crc16(_ crc: UInt16, _ p: UnsafeRawPointer, count: Int) -> UInt16 {
        crc16Tables.withUnsafeBufferPointer { t in
            laneShift.withUnsafeBufferPointer { s in update(crc, p, count, t.baseAddress!, s.baseAddress!) }
        }
    }

    /// Eight bytes: the CRC so far folds into the first two, then one lookup per byte.
    @inlinable @inline(__always)
    public static func eight(_ c: UInt32, _ p: UnsafeRawPointer, _ t: UnsafePointer<UInt32>) -> UInt32 {
        let v = UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)) ^ (UInt64(c) << 48)
        return t[7 * 256 + Int(v >> 56)] ^ t[6 * 256 + Int((v >> 48) & 0xFF)]
            ^ t[5 * 256 + Int((v >> 40) & 0xFF)] ^ t[4 * 256 + Int((v >> 32) & 0xFF)]
            ^ t[3 * 256 + Int((v >> 24) & 0xFF)] ^ t[2 * 256 + Int((v >> 16) & 0xFF)]
            ^ t[256 + Int((v >> 8) & 0xFF)] ^ t[Int(v & 0xFF)]
    }

    /// CRC-16 over `count` bytes. Long runs go as three independent lanes of ``lane``
    /// bytes whose CRCs are joined by ``laneShift`` (CRC(A‖B) = CRC(A)·x^(8|B|) ⊕ CRC(B)),
    /// so that the table lookups of one lane need not wait for the other's; the rest eight
    /// bytes at a time, then byte by byte. `t` is ``crc16Tables``, `s` ``laneShift``.
    @inlinable @inline(__always)
    public static func update(_ crc: UInt16, _ p: UnsafeRawPointer, _ count: Int, _ t: UnsafePointer<UInt32>,
                       _ s: UnsafePointer<UInt32>) -> UInt16
    {
        var c = UInt32(crc)
        var i = 0
        let l = 128  // == lane, as a literal so that the offsets below are constants
        while count - i >= 3 * l {
            let q = p + i
            var a = c, b: UInt32 = 0, d: UInt32 = 0
            var k = 0
            while k < l {
                a = eight(a, q + k, t)
                b = eight(b, q + l + k, t)
                d = eight(d, q + 2 * l + k, t)
                k += 8
            }
            a = s[Int(a >> 8)] ^ s[256 + Int(a & 0xFF)] ^ b
            c = s[Int(a >> 8)] ^ s[256 + Int(a & 0xFF)] ^ d
            i += 3 * l
        }
        while i + 8 <= count {
            c = eight(c, p + i, t)
            i += 8
        }
        var c16 = UInt16(truncatingIfNeeded: c)
        while i < count {
            c16 = update(c16, byte: p.load(fromByteOffset: i, as: UInt8.self), t)
            i += 1
        }
        return c16
    }
}

import TonearmCore

/// AMR and AMR-WB storage format (RFC 4867 §5) for ``FramedParser``: the signature
/// `#!AMR\n` (narrowband, 8 kHz, 160 frames per packet) or `#!AMR-WB\n` (wideband, 16 kHz,
/// 320 frames per packet), then frames that each begin with a one-byte header:
/// P (1, zero) · FT frame type (4) · Q quality (1) · P (2, zero). The frame type gives the
/// size. The multichannel forms (`#!AMR_MC1.0\n`, `#!AMR-WB_MC1.0\n`) are refused.
public struct AMRFormat: FramedFormat {
    public private(set) var isWideband = false

    /// Bytes of a frame, header included, by frame type; 0 for the types not allowed.
    /// Narrowband: the eight modes 4.75–12.2 kbit/s, SID, then NO_DATA (15).
    static let narrowbandSizes = [13, 14, 16, 18, 20, 21, 27, 32, 6, 0, 0, 0, 0, 0, 0, 1]
    /// Wideband: the nine modes 6.60–23.85 kbit/s, SID, then SPEECH_LOST (14) and NO_DATA (15).
    static let widebandSizes = [18, 24, 33, 37, 41, 47, 51, 59, 61, 6, 0, 0, 0, 0, 1, 1]

    static let narrowbandMagic = Array("#!AMR\n".utf8)
    static let widebandMagic = Array("#!AMR-WB\n".utf8)
    static let multichannelMagics = [Array("#!AMR_MC1.0\n".utf8), Array("#!AMR-WB_MC1.0\n".utf8)]

    public init() {}

    public var headerSize: Int { 1 }
    public var announcementOrder: [AudioFilePropertyID] {
        [.fileFormat, .dataFormat, .bitRate, .audioDataByteCount, .audioDataPacketCount, .dataOffset, .maximumPacketSize]
    }
    public var packetSizeUpperBound: UInt32 { isWideband ? 61 : 32 }

    public mutating func parseFileHeader(_ bytes: UnsafeRawBufferPointer, isEndOfStream: Bool,
                                         properties p: inout FileProperties) throws(AudioError) -> Int?
    {
        func check(_ magic: [UInt8]) -> Bool? {
            let k = min(bytes.count, magic.count)
            for i in 0..<k where bytes[i] != magic[i] { return false }
            return k == magic.count ? true : nil
        }
        var undecided = false
        for magic in AMRFormat.multichannelMagics {
            switch check(magic) {
            case true?: throw AudioError(.unsupportedDataFormat, "multichannel AMR is not supported")
            case nil: undecided = true
            default: break
            }
        }
        for (magic, wide) in [(AMRFormat.widebandMagic, true), (AMRFormat.narrowbandMagic, false)] {
            switch check(magic) {
            case true?:
                if undecided && !isEndOfStream { return nil }
                isWideband = wide
                let rate: Double = wide ? 16000 : 8000
                p.dataFormat = StreamDescription(sampleRate: rate, formatID: wide ? .amrWB : .amr, bytesPerPacket: 0,
                                                 framesPerPacket: wide ? 320 : 160, bytesPerFrame: 0,
                                                 channelsPerFrame: 1, bitsPerChannel: 0)
                p.dataFormatName = wide ? "AMR-WB" : "AMR"
                return magic.count
            case nil:
                undecided = true
            default:
                break
            }
        }
        if undecided && !isEndOfStream { return nil }
        throw AudioError(.unsupportedFileType, "not an AMR file: it does not begin with #!AMR")
    }

    @inline(__always)
    public func header(at p: UnsafeRawPointer) -> FrameHeader? {
        let b = byteAt(p, 0)
        guard b & 0x83 == 0 else { return nil }
        let type = Int(b >> 3 & 0xF)
        let size = isWideband ? AMRFormat.widebandSizes[type] : AMRFormat.narrowbandSizes[type]
        guard size > 0 else { return nil }
        // Bits per second: the payload bits over 20 ms.
        return FrameHeader(length: size, streamKey: 0, bitRate: (size - 1) * 8 * 50)
    }

    public mutating func firstFrame(_ header: FrameHeader, bytes: UnsafeRawBufferPointer, offset: Int64,
                                    properties p: inout FileProperties) throws(AudioError) -> FirstFrameRole
    {
        .audio
    }
}

import TonearmCore

/// LATM in LOAS ('loas', ISO/IEC 14496-3 §1.7) for ``FramedParser``.
///
/// The AudioSyncStream: sync 0x2B7 (11 bits), the length of the AudioMuxElement (13 bits),
/// then the AudioMuxElement with `muxConfigPresent` = 1: `useSameStreamMux` (1 bit) and,
/// when it is 0, a StreamMuxConfig that holds the AudioSpecificConfig. Packets are whole
/// LOAS frames (the payload inside is not byte-aligned). Read: audioMuxVersion 0 and 1
/// with audioMuxVersionA 0, one program, one layer, all streams with the same time
/// framing, and frameLengthType 0 (payload lengths in bytes). Other forms are refused
/// with 'fmt?'. Frames before the first configuration are dropped.
public struct LOASFormat: FramedFormat {
    public private(set) var config: AACAudioConfig?

    public init() {}

    public var headerSize: Int { 3 }
    public var hasTags: Bool { true }
    public var announcementOrder: [AudioFilePropertyID] {
        [.formatList, .fileFormat, .dataFormat, .magicCookieData, .bitRate, .audioDataByteCount, .audioDataPacketCount, .dataOffset,
         .maximumPacketSize]
    }
    public var packetSizeUpperBound: UInt32 { 8191 + 3 }

    @inline(__always)
    public func header(at p: UnsafeRawPointer) -> FrameHeader? {
        let b1 = byteAt(p, 1)
        guard byteAt(p, 0) == 0x56, b1 & 0xE0 == 0xE0 else { return nil }
        let length = (Int(b1 & 0x1F) << 8 | Int(byteAt(p, 2))) + 3
        guard length > 4 else { return nil }
        return FrameHeader(length: length, streamKey: 0)
    }

    public mutating func firstFrame(_ header: FrameHeader, bytes: UnsafeRawBufferPointer, offset: Int64,
                                    properties p: inout FileProperties) throws(AudioError) -> FirstFrameRole
    {
        guard let (c, asc) = try LOASFormat.streamMuxConfig(Array(bytes[3...])) else { return .skip }
        guard let format = c.streamDescription else { throw AudioError(.unsupportedDataFormat, "LATM channel configuration \(c.channelConfiguration)") }
        config = c
        p.dataFormat = format
        p.magicCookie = asc
        // HE-AAC signalled in the config, or possible in the frames (LC at 24 kHz or less):
        // the layers, richest first, as ADTS offers them.
        p.formatList = (try? AudioSpecificConfig.parse(asc))?.formatList
        p.dataFormatName = "AAC in LATM"
        return .audio
    }

    /// Reads the StreamMuxConfig at the start of an AudioMuxElement: the configuration and
    /// the AudioSpecificConfig's bits as bytes; nil when the element reuses an earlier one.
    static func streamMuxConfig(_ element: [UInt8]) throws(AudioError) -> (AACAudioConfig, [UInt8])? {
        var r = BitReader(element)
        let mux: LATM.MuxConfig
        do throws(LATM.Failure) {
            guard let m = try LATM.readMuxConfig(&r) else { return nil }
            mux = m
        } catch {
            switch error {
            case .short: throw AudioError(.invalidFile, "the LATM StreamMuxConfig is cut short")
            case .unsupported(let what): throw AudioError(.unsupportedDataFormat, "LATM with \(what) is not supported")
            case .invalid(let why): throw AudioError(.unsupportedDataFormat, "LATM: \(why)")
            }
        }
        let ascStart = mux.ascStart, ascEnd = mux.ascEnd
        var configReader = BitReader(element)
        _ = configReader.skip(ascStart)
        let c = try AACAudioConfig.read(&configReader)
        // The AudioSpecificConfig's bits, realigned to whole bytes.
        var copy = BitReader(element)
        _ = copy.skip(ascStart)
        var asc: [UInt8] = []
        var left = ascEnd - ascStart
        while left > 0 {
            let n = min(8, left)
            asc.append(UInt8(copy.read(n)! << (8 - n)))
            left -= n
        }
        return (c, asc)
    }
}

import TonearmCore

/// AAC audio configuration as the MPEG-4 AudioSpecificConfig carries it, reduced to what a
/// container needs, and the sample-rate table shared by ADTS and LATM.
public struct AACAudioConfig: Sendable, Equatable {
    /// The MPEG-4 audio object type (2 = AAC LC, 5 = SBR, 29 = PS…).
    public var objectType: Int
    public var sampleRate: Int
    /// The channel configuration (1–7; 7 is 7.1, eight channels).
    public var channelConfiguration: Int
    /// For explicit SBR/PS signalling: the output rate and the core object type.
    public var extensionSampleRate: Int?
    public var coreObjectType: Int?

    /// Sample rates by the 4-bit sampling frequency index.
    public static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    public static func channels(configuration c: Int) -> Int? {
        switch c {
        case 1...6: return c
        case 7: return 8
        default: return nil
        }
    }

    public var channels: Int? { AACAudioConfig.channels(configuration: channelConfiguration) }

    /// The format Apple gives this configuration: AAC at the core rate, HE-AAC ('aach') or
    /// HE-AAC v2 ('aacp') at the output rate with 2048 frames per packet.
    public var streamDescription: StreamDescription? {
        guard let ch = channels else { return nil }
        var id: AudioFormatID = .mpeg4AAC
        var rate = sampleRate, fpp: UInt32 = 1024, outChannels = ch
        if objectType == 5 || objectType == 29 {
            id = objectType == 5 ? .mpeg4AAC_HE : .mpeg4AAC_HE_V2
            rate = extensionSampleRate ?? sampleRate * 2
            fpp = 2048
            if objectType == 29 { outChannels = 2 }
        }
        return StreamDescription(sampleRate: Double(rate), formatID: id, bytesPerPacket: 0, framesPerPacket: fpp,
                                 bytesPerFrame: 0, channelsPerFrame: UInt32(outChannels), bitsPerChannel: 0)
    }

    /// The two-byte AudioSpecificConfig of a plain AAC configuration: object type (5 bits),
    /// sampling frequency index (4), channel configuration (4), then three zero flags
    /// (1024-sample frames, no core coder, no extension).
    public static func audioSpecificConfig(objectType: Int, frequencyIndex: Int, channelConfiguration: Int) -> [UInt8] {
        let bits = UInt16(objectType & 0x1F) << 11 | UInt16(frequencyIndex & 0xF) << 7 | UInt16(channelConfiguration & 0xF) << 3
        return [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }

    /// Reads an AudioSpecificConfig from a bit reader, leaving it after the config. Only
    /// the general audio object types (1–4, 6, 7, 17, 19–23), possibly behind explicit
    /// SBR or PS, are understood; a program config element (channel configuration 0) is
    /// refused.
    public static func read(_ r: inout BitReader) throws(AudioError) -> AACAudioConfig {
        func bits(_ n: Int) throws(AudioError) -> Int {
            guard let v = r.read(n) else { throw AudioError(.invalidFile, "the AudioSpecificConfig is cut short") }
            return Int(v)
        }
        func objectType() throws(AudioError) -> Int {
            let t = try bits(5)
            return t == 31 ? 32 + (try bits(6)) : t
        }
        func rate() throws(AudioError) -> Int {
            let i = try bits(4)
            if i == 15 {
                let r = try bits(24)
                guard r > 0 else { throw AudioError(.unsupportedDataFormat, "a sample rate of 0") }
                return r
            }
            guard i < sampleRates.count else { throw AudioError(.unsupportedDataFormat, "sampling frequency index \(i) is reserved") }
            return sampleRates[i]
        }
        var aot = try objectType()
        let sampleRate = try rate()
        let channelConfiguration = try bits(4)
        var c = AACAudioConfig(objectType: aot, sampleRate: sampleRate, channelConfiguration: channelConfiguration)
        if aot == 5 || aot == 29 {
            c.extensionSampleRate = try rate()
            aot = try objectType()
            c.coreObjectType = aot
        }
        switch aot {
        case 1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23:
            _ = try bits(1)  // frame length flag
            if try bits(1) == 1 { _ = try bits(14) }  // core coder delay
            let extensionFlag = try bits(1)
            guard channelConfiguration != 0 else {
                throw AudioError(.unsupportedDataFormat, "AAC with a program config element (channel configuration 0) is not supported")
            }
            if aot == 6 || aot == 20 { _ = try bits(3) }  // layer number
            if extensionFlag == 1 {
                if aot == 22 { _ = try bits(5 + 11) }
                if aot == 17 || aot == 19 || aot == 20 || aot == 23 { _ = try bits(3) }
                _ = try bits(1)  // extension flag 3
            }
        default:
            throw AudioError(.unsupportedDataFormat, "MPEG-4 audio object type \(aot) is not supported")
        }
        if [17, 19, 20, 21, 22, 23].contains(aot) {
            let epConfig = try bits(2)
            if epConfig == 2 || epConfig == 3 { throw AudioError(.unsupportedDataFormat, "AAC error protection config \(epConfig) is not supported") }
        }
        guard c.channels != nil else { throw AudioError(.unsupportedDataFormat, "channel configuration \(channelConfiguration) is reserved") }
        return c
    }
}

/// AAC in ADTS ('adts') for ``FramedParser``. Packets are the raw access units: the 7-byte
/// header (9 with its CRC) is not part of a packet, as Apple's parser hands them to an
/// AAC decoder with the AudioSpecificConfig as the magic cookie.
///
/// Header: sync 0xFFF (12 bits), MPEG version (1), layer 00 (2), protection absent (1),
/// profile = object type − 1 (2), sampling frequency index (4), private (1), channel
/// configuration (3), four flags, frame length with the header (13), buffer fullness (11),
/// raw data blocks − 1 (2).
public struct ADTSFormat: FramedFormat {
    /// The header's configuration (for channel configuration 0, the channels are the program
    /// config element's, which the magic cookie carries).
    public private(set) var config: AACAudioConfig?
    private var bitRate = 0

    public init() {}

    public var headerSize: Int { 7 }
    public var hasTags: Bool { true }
    public var announcementOrder: [AudioFilePropertyID] {
        [.formatList, .fileFormat, .dataFormat, .magicCookieData, .bitRate, .audioDataByteCount, .audioDataPacketCount,
         .dataOffset, .maximumPacketSize]
    }
    /// The 13-bit frame length bounds every packet.
    public var packetSizeUpperBound: UInt32 { 8191 - 7 }

    /// The header at `p`: nil unless the sync, the layer and the fields are valid; frames
    /// with several raw data blocks are not taken.
    @inline(__always)
    public func header(at p: UnsafeRawPointer) -> FrameHeader? {
        guard byteAt(p, 0) == 0xFF else { return nil }
        let b1 = byteAt(p, 1), b2 = byteAt(p, 2), b3 = byteAt(p, 3)
        guard b1 & 0xF6 == 0xF0 else { return nil }
        let frequencyIndex = Int(b2 >> 2 & 0xF)
        let channelConfiguration = Int(b2 & 1) << 2 | Int(b3 >> 6)
        guard frequencyIndex < 13 else { return nil }
        let length = Int(b3 & 3) << 11 | Int(byteAt(p, 4)) << 3 | Int(byteAt(p, 5) >> 5)
        let headerLength = b1 & 1 == 1 ? 7 : 9
        guard length > headerLength, byteAt(p, 6) & 3 == 0 else { return nil }
        let rate = AACAudioConfig.sampleRates[frequencyIndex]
        return FrameHeader(length: length, payloadOffset: headerLength,
                           streamKey: UInt32(b2 >> 6) << 8 | UInt32(frequencyIndex) << 4 | UInt32(channelConfiguration),
                           bitRate: length * 8 * rate / 1024)
    }

    public func unsupportedStream(at p: UnsafeRawPointer) -> AudioError? {
        guard byteAt(p, 0) == 0xFF, byteAt(p, 1) & 0xF6 == 0xF0 else { return nil }
        guard byteAt(p, 2) >> 2 & 0xF < 13 else { return nil }
        if byteAt(p, 6) & 3 != 0 {
            return AudioError(.unsupportedDataFormat, "ADTS frames with several raw data blocks are not supported")
        }
        return nil
    }

    public mutating func firstFrame(_ header: FrameHeader, bytes: UnsafeRawBufferPointer, offset: Int64,
                                    properties p: inout FileProperties) throws(AudioError) -> FirstFrameRole
    {
        let objectType = Int(bytes[2] >> 6) + 1
        let frequencyIndex = Int(bytes[2] >> 2 & 0xF)
        let channelConfiguration = Int(bytes[2] & 1) << 2 | Int(bytes[3] >> 6)
        let c = AACAudioConfig(objectType: objectType, sampleRate: AACAudioConfig.sampleRates[frequencyIndex],
                               channelConfiguration: channelConfiguration)
        var cookie = AACAudioConfig.audioSpecificConfig(objectType: objectType, frequencyIndex: frequencyIndex,
                                                        channelConfiguration: channelConfiguration)
        let format: StreamDescription
        if channelConfiguration == 0 {
            // The cookie carries the program, as ffmpeg's aac_adtstoasc puts it: the two
            // bytes above (their three flags zero), then the element, byte-aligned from the
            // config's start. The format is the cookie's, read as every AAC cookie is.
            let program = try ADTSFormat.programConfig(bytes, payloadOffset: header.payloadOffset)
            var w = BitWriter(bytes: cookie)
            program.write(to: &w)
            cookie = w.takeBytes()
            format = try AudioSpecificConfig.parse(cookie).streamDescription
        } else {
            guard let f = c.streamDescription else { throw AudioError(.unsupportedDataFormat, "ADTS channel configuration \(channelConfiguration)") }
            format = f
        }
        config = c
        p.dataFormat = format
        p.dataFormatName = "AAC (\(["Main", "LC", "SSR", "LTP"][objectType - 1]))"
        p.magicCookie = cookie
        p.formatList = ADTSFormat.formatList(format, objectType: objectType)
        return .audio
    }

    /// The program config element that must open the first frame of a stream whose channel
    /// configuration is 0 (ISO/IEC 14496-3 §1.A.3.2: the channels are then the PCE's).
    static func programConfig(_ frame: UnsafeRawBufferPointer, payloadOffset: Int) throws(AudioError) -> AACProgramConfig {
        let missing = AudioError(.unsupportedDataFormat,
                                 "ADTS with channel configuration 0 whose first frame does not begin with a program config element")
        guard payloadOffset < frame.count else { throw missing }
        var r = BitReader(Array(frame[payloadOffset...]))
        guard r.read(3) == 5 else { throw missing }
        let program: AACProgramConfig
        do throws(AudioSpecificConfig.Failure) {
            program = try AACProgramConfig.parse(&r)
        } catch {
            throw AudioError(.invalidFile, "the first ADTS frame's program config element is cut short")
        }
        guard program.channels > 0 else { throw AudioError(.unsupportedDataFormat, "an ADTS program config element with no channels") }
        return program
    }

    /// Apple's format list for AAC whose SBR cannot be seen without decoding: HE-AAC at twice
    /// the rate (2048 frames per packet) first, then the AAC format itself. Only AAC LC can
    /// carry SBR, so other profiles list themselves alone.
    static func formatList(_ f: StreamDescription, objectType: Int) -> [AudioFormatListItem] {
        let tag = ChannelLayout.defaultLayout(channels: Int(f.channelsPerFrame))?.tag ?? .unknown
        var list: [AudioFormatListItem] = []
        if objectType == 2 {
            var he = f
            he.formatID = .mpeg4AAC_HE
            he.sampleRate = f.sampleRate * 2
            he.framesPerPacket = 2048
            list.append(AudioFormatListItem(format: he, channelLayoutTag: tag))
        }
        list.append(AudioFormatListItem(format: f, channelLayoutTag: tag))
        return list
    }
}

import TonearmCore

/// The MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1): the AAC magic cookie.
///
/// Read far enough to name Apple's format: the audio object type, the core and extension
/// sampling rates, the channel configuration (from a program_config_element when it is 0),
/// the frame length, and SBR and PS signalling, both explicit (object type 5 or 29 first)
/// and backward-compatible (the 0x2B7 and 0x548 sync extensions after the GASpecificConfig).
struct AudioSpecificConfig: Equatable, Sendable {
    var objectType: Int
    var sampleRate: Double
    var channels: Int
    /// 1024 or 960 for AAC, 512 or 480 for AAC-LD and ELD.
    var frameLength: Int
    /// SBR is present (HE-AAC), with the output rate it gives.
    var sbr = false
    var extensionSampleRate: Double?
    /// Parametric stereo is present (HE-AAC v2).
    var ps = false
    /// The config says whether SBR is there (explicitly, or with a sync extension); when it
    /// does not, SBR may still hide in the bitstream (implicit signalling).
    var sbrSignalled = false

    static let rates: [Double] = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    enum Failure: Error { case short, invalid(String) }

    static func parse(_ bytes: [UInt8]) throws(AudioError) -> AudioSpecificConfig {
        var r = BitReader(bytes)
        do throws(Failure) {
            return try parse(&r)
        } catch {
            switch error {
            case .short: throw AudioError(.unsupportedDataFormat, "the AudioSpecificConfig (\(bytes.count) bytes) ends early")
            case .invalid(let why): throw AudioError(.unsupportedDataFormat, "AudioSpecificConfig: \(why)")
            }
        }
    }

    private static func bits(_ r: inout BitReader, _ n: Int) throws(Failure) -> Int {
        guard let v = r.read(n) else { throw .short }
        return Int(v)
    }

    private static func objectType(_ r: inout BitReader) throws(Failure) -> Int {
        let t = try bits(&r, 5)
        return t == 31 ? 32 + (try bits(&r, 6)) : t
    }

    private static func rate(_ r: inout BitReader) throws(Failure) -> Double {
        let index = try bits(&r, 4)
        if index == 15 { return Double(try bits(&r, 24)) }
        guard index < rates.count else { throw .invalid("sampling frequency index \(index) is reserved") }
        return rates[index]
    }

    private static func parse(_ r: inout BitReader) throws(Failure) -> AudioSpecificConfig {
        var type = try objectType(&r)
        let coreRate = try rate(&r)
        var channelConfiguration = try bits(&r, 4)
        var config = AudioSpecificConfig(objectType: type, sampleRate: coreRate, channels: 0, frameLength: 1024)
        var explicitExtension = false
        if type == 5 || type == 29 {
            // Explicit hierarchical signalling: the extension rate, then the core's object type.
            explicitExtension = true
            config.sbrSignalled = true
            config.sbr = true
            config.ps = type == 29
            config.extensionSampleRate = try rate(&r)
            type = try objectType(&r)
            if type == 22 { channelConfiguration = try bits(&r, 4) }
            config.objectType = type
        }
        var channels = channelConfigurationChannels(channelConfiguration)
        var parsedGA = false
        switch type {
        case 1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23:
            // GASpecificConfig (§4.4.1).
            let frameLengthFlag = try bits(&r, 1)
            if type == 23 { config.frameLength = frameLengthFlag == 1 ? 480 : 512 }
            else { config.frameLength = frameLengthFlag == 1 ? 960 : 1024 }
            if try bits(&r, 1) == 1 { _ = try bits(&r, 14) }  // dependsOnCoreCoder: coreCoderDelay
            let extensionFlag = try bits(&r, 1)
            if channelConfiguration == 0 { channels = try programConfigElementChannels(&r) }
            if type == 6 || type == 20 { _ = try bits(&r, 3) }  // layerNr
            if extensionFlag == 1 {
                if type == 22 { _ = try bits(&r, 5); _ = try bits(&r, 11) }
                if type == 17 || type == 19 || type == 20 || type == 23 { _ = try bits(&r, 3) }
                _ = try bits(&r, 1)  // extensionFlag3
            }
            parsedGA = true
            // The error-resilient types end with an epConfig.
            if type >= 17 { _ = try bits(&r, 2) }
        case 39:
            // ELD: frameLengthFlag first (§4.6.20.3); the rest is not needed to name the format.
            config.frameLength = try bits(&r, 1) == 1 ? 480 : 512
        default:
            break
        }
        config.channels = channels
        // Backward-compatible signalling (§1.6.5.2): a sync extension after the core config.
        if parsedGA && !explicitExtension && r.bitsRemaining >= 16 {
            if try bits(&r, 11) == 0x2B7 {
                let extensionType = try objectType(&r)
                if extensionType == 5 {
                    config.sbrSignalled = true
                    if try bits(&r, 1) == 1 {
                        config.sbr = true
                        config.extensionSampleRate = try rate(&r)
                        if r.bitsRemaining >= 12, try bits(&r, 11) == 0x548 {
                            config.ps = try bits(&r, 1) == 1
                        }
                    }
                }
            }
        }
        guard config.channels > 0 else { throw .invalid("channel configuration \(channelConfiguration) gives no channels") }
        return config
    }

    /// Channels of a channelConfiguration (Table 1.19); 0 when a PCE must say.
    static func channelConfigurationChannels(_ c: Int) -> Int {
        switch c {
        case 1...6: return c
        case 7: return 8
        case 11: return 7
        case 12, 14: return 8
        default: return 0
        }
    }

    /// Counts the channels a program_config_element describes (§4.4.1.1, Table 4.2).
    private static func programConfigElementChannels(_ r: inout BitReader) throws(Failure) -> Int {
        _ = try bits(&r, 4)  // element_instance_tag
        _ = try bits(&r, 2)  // object_type
        _ = try bits(&r, 4)  // sampling_frequency_index
        let front = try bits(&r, 4), side = try bits(&r, 4), back = try bits(&r, 4)
        let lfe = try bits(&r, 2), assoc = try bits(&r, 3), cc = try bits(&r, 4)
        if try bits(&r, 1) == 1 { _ = try bits(&r, 4) }  // mono_mixdown
        if try bits(&r, 1) == 1 { _ = try bits(&r, 4) }  // stereo_mixdown
        if try bits(&r, 1) == 1 { _ = try bits(&r, 3) }  // matrix_mixdown
        var channels = 0
        for _ in 0..<(front + side + back) {
            let isCPE = try bits(&r, 1)
            _ = try bits(&r, 4)
            channels += isCPE == 1 ? 2 : 1
        }
        for _ in 0..<lfe { _ = try bits(&r, 4); channels += 1 }
        for _ in 0..<assoc { _ = try bits(&r, 4) }
        for _ in 0..<cc { _ = try bits(&r, 5) }
        r.alignToByte()
        let comment = try bits(&r, 8)
        guard r.skip(comment * 8) else { throw .short }
        return channels
    }

    /// Apple's format ID for this configuration.
    var formatID: AudioFormatID {
        if ps { return .mpeg4AAC_HE_V2 }
        if sbr { return .mpeg4AAC_HE }
        switch objectType {
        case 23: return .mpeg4AAC_LD
        case 39: return .mpeg4AAC_ELD
        default: return .mpeg4AAC
        }
    }

    /// The stream description Apple gives: the output rate and channels, and the frames one
    /// packet decodes to (doubled by SBR).
    var streamDescription: StreamDescription {
        let outRate = sbr ? (extensionSampleRate ?? sampleRate * 2) : sampleRate
        let outChannels = ps ? 2 : channels
        let frames = sbr ? frameLength * 2 : frameLength
        return StreamDescription(sampleRate: outRate, formatID: formatID, bytesPerPacket: 0, framesPerPacket: UInt32(frames),
                                 bytesPerFrame: 0, channelsPerFrame: UInt32(outChannels), bitsPerChannel: 0)
    }

    /// The formats a decoder may produce, richest first, as Apple's FormatList offers them
    /// for HE-AAC; nil for plain AAC. AAC LC whose config leaves SBR open, at a core rate of
    /// 24 kHz or less, may carry it implicitly: HE-AAC at twice the rate is offered first.
    var formatList: [AudioFormatListItem]? {
        if !sbr && !sbrSignalled && objectType == 2 && sampleRate <= 24000 {
            var implicit = self
            implicit.sbr = true
            implicit.extensionSampleRate = sampleRate * 2
            return implicit.formatList
        }
        guard sbr else { return nil }
        var items: [AudioFormatListItem] = []
        let full = streamDescription
        if ps {
            items.append(AudioFormatListItem(format: full, channelLayoutTag: .stereo))
            var he = full
            he.formatID = .mpeg4AAC_HE
            he.channelsPerFrame = UInt32(channels)
            items.append(AudioFormatListItem(format: he, channelLayoutTag: AudioSpecificConfig.layout(channels)?.tag ?? .unknown))
        } else {
            items.append(AudioFormatListItem(format: full, channelLayoutTag: AudioSpecificConfig.layout(channels)?.tag ?? .unknown))
        }
        let core = StreamDescription(sampleRate: sampleRate, formatID: .mpeg4AAC, bytesPerPacket: 0,
                                     framesPerPacket: UInt32(frameLength), bytesPerFrame: 0,
                                     channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        items.append(AudioFormatListItem(format: core, channelLayoutTag: AudioSpecificConfig.layout(channels)?.tag ?? .unknown))
        return items
    }

    /// The channel layout of an MPEG-4 channel count as Apple names it (its AAC_ tags are the
    /// MPEG_ tags with the centre first).
    static func layout(_ channels: Int) -> ChannelLayout? {
        switch channels {
        case 1: return ChannelLayout(tag: .mono)
        case 2: return ChannelLayout(tag: .stereo)
        case 3: return ChannelLayout(tag: .mpeg3_0_B)
        case 4: return ChannelLayout(tag: .mpeg4_0_B)
        case 5: return ChannelLayout(tag: .mpeg5_0_D)
        case 6: return ChannelLayout(tag: .mpeg5_1_D)
        case 8: return ChannelLayout(tag: ChannelLayout.Tag(rawValue: 127 << 16 | 8))  // MPEG_7_1_B
        default: return nil
        }
    }
}

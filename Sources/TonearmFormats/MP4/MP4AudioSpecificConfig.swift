import TonearmCore

/// What the containers add to the AudioSpecificConfig (which lives in TonearmCore, shared
/// with the AAC decoder): Apple's format list and channel layouts.
extension AudioSpecificConfig {
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
        case 8: return ChannelLayout(tag: .mpeg7_1_B)
        default: return nil
        }
    }
}

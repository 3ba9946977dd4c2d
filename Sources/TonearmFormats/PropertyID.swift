import TonearmCore

/// A property of an ``AudioFileStream`` or ``AudioFile``, as Apple's
/// `AudioFileStreamPropertyID` and `AudioFilePropertyID`.
public struct AudioFilePropertyID: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = FourCC(value).rawValue }
    public var fourCC: FourCC { FourCC(rawValue: rawValue) }
    public var description: String { fourCC.description }

    // MARK: AudioFileStream's 24 (seed 000)

    /// 'redy', kAudioFileStreamProperty_ReadyToProducePackets.
    public static let readyToProducePackets: Self = "redy"
    /// 'ffmt', kAudioFileStreamProperty_FileFormat.
    public static let fileFormat: Self = "ffmt"
    /// 'dfmt', kAudioFileStreamProperty_DataFormat.
    public static let dataFormat: Self = "dfmt"
    /// 'flst', kAudioFileStreamProperty_FormatList.
    public static let formatList: Self = "flst"
    /// 'mgic', kAudioFileStreamProperty_MagicCookieData.
    public static let magicCookieData: Self = "mgic"
    /// 'bcnt', kAudioFileStreamProperty_AudioDataByteCount.
    public static let audioDataByteCount: Self = "bcnt"
    /// 'pcnt', kAudioFileStreamProperty_AudioDataPacketCount.
    public static let audioDataPacketCount: Self = "pcnt"
    /// 'psze', kAudioFileStreamProperty_MaximumPacketSize.
    public static let maximumPacketSize: Self = "psze"
    /// 'doff', kAudioFileStreamProperty_DataOffset.
    public static let dataOffset: Self = "doff"
    /// 'cmap', kAudioFileStreamProperty_ChannelLayout.
    public static let channelLayout: Self = "cmap"
    /// 'pkfr', kAudioFileStreamProperty_PacketToFrame.
    public static let packetToFrame: Self = "pkfr"
    /// 'frpk', kAudioFileStreamProperty_FrameToPacket.
    public static let frameToPacket: Self = "frpk"
    /// 'rrap', kAudioFileStreamProperty_RestrictsRandomAccess.
    public static let restrictsRandomAccess: Self = "rrap"
    /// 'pkrl', kAudioFileStreamProperty_PacketToRollDistance.
    public static let packetToRollDistance: Self = "pkrl"
    /// 'pind', kAudioFileStreamProperty_PreviousIndependentPacket.
    public static let previousIndependentPacket: Self = "pind"
    /// 'nind', kAudioFileStreamProperty_NextIndependentPacket.
    public static let nextIndependentPacket: Self = "nind"
    /// 'pkdp', kAudioFileStreamProperty_PacketToDependencyInfo.
    public static let packetToDependencyInfo: Self = "pkdp"
    /// 'pkby', kAudioFileStreamProperty_PacketToByte.
    public static let packetToByte: Self = "pkby"
    /// 'bypk', kAudioFileStreamProperty_ByteToPacket.
    public static let byteToPacket: Self = "bypk"
    /// 'pnfo', kAudioFileStreamProperty_PacketTableInfo.
    public static let packetTableInfo: Self = "pnfo"
    /// 'pkub', kAudioFileStreamProperty_PacketSizeUpperBound.
    public static let packetSizeUpperBound: Self = "pkub"
    /// 'abpp', kAudioFileStreamProperty_AverageBytesPerPacket.
    public static let averageBytesPerPacket: Self = "abpp"
    /// 'brat', kAudioFileStreamProperty_BitRate.
    public static let bitRate: Self = "brat"
    /// 'info', kAudioFileStreamProperty_InfoDictionary.
    public static let infoDictionary: Self = "info"

    /// The 24 properties of AudioFileStream, in the order of Apple's header.
    public static let streamProperties: [Self] = [
        .readyToProducePackets, .fileFormat, .dataFormat, .formatList, .magicCookieData,
        .audioDataByteCount, .audioDataPacketCount, .maximumPacketSize, .dataOffset, .channelLayout,
        .packetToFrame, .frameToPacket, .restrictsRandomAccess, .packetToRollDistance,
        .previousIndependentPacket, .nextIndependentPacket, .packetToDependencyInfo, .packetToByte,
        .byteToPacket, .packetTableInfo, .packetSizeUpperBound, .averageBytesPerPacket, .bitRate,
        .infoDictionary,
    ]

    // MARK: AudioFile's own

    /// 'optm', kAudioFilePropertyIsOptimized.
    public static let isOptimized: Self = "optm"
    /// 'fnme', kAudioFilePropertyDataFormatName (deprecated by Apple in favour of
    /// kAudioFormatProperty_FormatName): a readable name of the data format.
    public static let dataFormatName: Self = "fnme"
    /// 'dszu', kAudioFilePropertyDeferSizeUpdates: a UInt32, 1 when the size fields of a file
    /// being written are brought up to date only at close rather than after every write.
    public static let deferSizeUpdates: Self = "dszu"
    /// 'mkls', kAudioFilePropertyMarkerList.
    public static let markerList: Self = "mkls"
    /// 'rgls', kAudioFilePropertyRegionList.
    public static let regionList: Self = "rgls"
    /// 'chid', kAudioFilePropertyChunkIDs.
    public static let chunkIDs: Self = "chid"
    /// 'edur', kAudioFilePropertyEstimatedDuration.
    public static let estimatedDuration: Self = "edur"
    /// 'id3t', kAudioFilePropertyID3Tag.
    public static let id3Tag: Self = "id3t"
    /// 'sbtd', kAudioFilePropertySourceBitDepth.
    public static let sourceBitDepth: Self = "sbtd"
    /// 'aart', kAudioFilePropertyAlbumArtwork.
    public static let albumArtwork: Self = "aart"
}

/// Apple's name for a stream property ID.
public typealias AudioFileStreamPropertyID = AudioFilePropertyID

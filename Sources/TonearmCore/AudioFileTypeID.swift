/// A file type, as Apple's `AudioFileTypeID`: the four characters name the container.
public struct AudioFileTypeID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ fourCC: FourCC) { rawValue = fourCC.rawValue }
    public init(stringLiteral value: String) { rawValue = FourCC(value).rawValue }
    public var fourCC: FourCC { FourCC(rawValue: rawValue) }
    public var description: String { fourCC.description }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// 'AIFF', kAudioFileAIFFType.
    public static let aiff: Self = "AIFF"
    /// 'AIFC', kAudioFileAIFCType.
    public static let aifc: Self = "AIFC"
    /// 'WAVE', kAudioFileWAVEType.
    public static let wave: Self = "WAVE"
    /// 'RF64', kAudioFileRF64Type.
    public static let rf64: Self = "RF64"
    /// 'BW64', kAudioFileBW64Type.
    public static let bw64: Self = "BW64"
    /// 'W64f', kAudioFileWave64Type.
    public static let wave64: Self = "W64f"
    /// 'NeXT', kAudioFileNextType (AU).
    public static let next: Self = "NeXT"
    /// 'caff', kAudioFileCAFType.
    public static let caf: Self = "caff"
    /// 'MPG1', kAudioFileMP1Type.
    public static let mp1: Self = "MPG1"
    /// 'MPG2', kAudioFileMP2Type.
    public static let mp2: Self = "MPG2"
    /// 'MPG3', kAudioFileMP3Type.
    public static let mp3: Self = "MPG3"
    /// 'adts', kAudioFileAAC_ADTSType.
    public static let adts: Self = "adts"
    /// 'loas', kAudioFileLATMInLOASType.
    public static let loas: Self = "loas"
    /// 'mp4f', kAudioFileMPEG4Type.
    public static let mpeg4: Self = "mp4f"
    /// 'm4af', kAudioFileM4AType.
    public static let m4a: Self = "m4af"
    /// 'm4bf', kAudioFileM4BType.
    public static let m4b: Self = "m4bf"
    /// '3gpp', kAudioFile3GPType.
    public static let threeGP: Self = "3gpp"
    /// '3gp2', kAudioFile3GP2Type.
    public static let threeGP2: Self = "3gp2"
    /// 'amrf', kAudioFileAMRType.
    public static let amr: Self = "amrf"
    /// 'ac-3', kAudioFileAC3Type.
    public static let ac3: Self = "ac-3"
    /// 'ec-3', kAudioFileEAC3Type.
    public static let eac3: Self = "ec-3"
    /// 'flac', kAudioFileFLACType.
    public static let flac: Self = "flac"
    /// 'Sd2f', kAudioFileSoundDesigner2Type.
    public static let soundDesigner2: Self = "Sd2f"
    /// 'Oggs': Ogg. Apple has no ID for Ogg; this is a Tonearm extension named after the page magic.
    public static let ogg: Self = "Oggs"
    /// 'mkv ': Matroska. Apple has no ID for it; this is a Tonearm extension.
    public static let matroska: Self = "mkv "
    /// 'webm': WebM, Matroska's subset for the web (a Tonearm extension).
    public static let webM: Self = "webm"
    /// 'mp2t': MPEG transport stream (188-, 192- and 204-byte packets), a Tonearm extension.
    public static let mpegTS: Self = "mp2t"
}

/// A data format, as Apple's `AudioFormatID`.
public struct AudioFormatID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ fourCC: FourCC) { rawValue = fourCC.rawValue }
    public init(stringLiteral value: String) { rawValue = FourCC(value).rawValue }
    public var fourCC: FourCC { FourCC(rawValue: rawValue) }
    public var description: String { fourCC.description }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// 'lpcm', kAudioFormatLinearPCM.
    public static let linearPCM: Self = "lpcm"
    /// 'ulaw', kAudioFormatULaw.
    public static let uLaw: Self = "ulaw"
    /// 'alaw', kAudioFormatALaw.
    public static let aLaw: Self = "alaw"
    /// 'ima4', kAudioFormatAppleIMA4.
    public static let appleIMA4: Self = "ima4"
    /// 'ms' 0x00 0x11, kAudioFormatDVIIntelIMA: IMA ADPCM as WAV stores it (format tag 0x0011).
    public static let dviIntelIMA = Self(FourCC(0x6D, 0x73, 0x00, 0x11))
    /// 'ms' 0x00 0x02, kAudioFormatMicrosoftADPCM (WAV format tag 0x0002).
    public static let microsoftADPCM = Self(FourCC(0x6D, 0x73, 0x00, 0x02))
    /// '.mp1', kAudioFormatMPEGLayer1.
    public static let mpegLayer1: Self = ".mp1"
    /// '.mp2', kAudioFormatMPEGLayer2.
    public static let mpegLayer2: Self = ".mp2"
    /// '.mp3', kAudioFormatMPEGLayer3.
    public static let mpegLayer3: Self = ".mp3"
    /// 'aac ', kAudioFormatMPEG4AAC.
    public static let mpeg4AAC: Self = "aac "
    /// 'aach', kAudioFormatMPEG4AAC_HE.
    public static let mpeg4AAC_HE: Self = "aach"
    /// 'aacp', kAudioFormatMPEG4AAC_HE_V2.
    public static let mpeg4AAC_HE_V2: Self = "aacp"
    /// 'aacl', kAudioFormatMPEG4AAC_LD.
    public static let mpeg4AAC_LD: Self = "aacl"
    /// 'aace', kAudioFormatMPEG4AAC_ELD.
    public static let mpeg4AAC_ELD: Self = "aace"
    /// 'alac', kAudioFormatAppleLossless.
    public static let appleLossless: Self = "alac"
    /// 'flac', kAudioFormatFLAC.
    public static let flac: Self = "flac"
    /// 'opus', kAudioFormatOpus.
    public static let opus: Self = "opus"
    /// 'ac-3', kAudioFormatAC3.
    public static let ac3: Self = "ac-3"
    /// 'ec-3', kAudioFormatEnhancedAC3.
    public static let enhancedAC3: Self = "ec-3"
    /// 'samr', kAudioFormatAMR.
    public static let amr: Self = "samr"
    /// 'sawb', kAudioFormatAMR_WB.
    public static let amrWB: Self = "sawb"
    /// 'vorb': Vorbis (a Tonearm name; Apple has none in its public header).
    public static let vorbis: Self = "vorb"
    /// 'spx ': Speex (a Tonearm name).
    public static let speex: Self = "spx "
}

/// Format flags, as Apple's `AudioFormatFlags`. The meaning depends on the format ID;
/// these are the linear PCM ones.
public struct AudioFormatFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// kAudioFormatFlagIsFloat (1).
    public static let isFloat = Self(rawValue: 1 << 0)
    /// kAudioFormatFlagIsBigEndian (2).
    public static let isBigEndian = Self(rawValue: 1 << 1)
    /// kAudioFormatFlagIsSignedInteger (4).
    public static let isSignedInteger = Self(rawValue: 1 << 2)
    /// kAudioFormatFlagIsPacked (8).
    public static let isPacked = Self(rawValue: 1 << 3)
    /// kAudioFormatFlagIsAlignedHigh (16).
    public static let isAlignedHigh = Self(rawValue: 1 << 4)
    /// kAudioFormatFlagIsNonInterleaved (32).
    public static let isNonInterleaved = Self(rawValue: 1 << 5)
    /// kAudioFormatFlagIsNonMixable (64).
    public static let isNonMixable = Self(rawValue: 1 << 6)
}

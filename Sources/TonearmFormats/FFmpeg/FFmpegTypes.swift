#if FFmpeg
import TonearmCore
import TonearmFFmpeg

extension AudioFileTypeID {
    // Tonearm's names for containers only FFmpeg reads (Apple has none). Matroska and WebM
    // ('mkv ', 'webm') and MPEG-TS ('mp2t') are Tonearm's own (Matroska/, MPEGTS/),
    // declared in TonearmCore.
    /// 'asf ': ASF, the container of WMA files.
    public static let asf: Self = "asf "
    /// 'APE ': Monkey's Audio.
    public static let ape: Self = "APE "
    /// 'wvpk': WavPack.
    public static let wavPack: Self = "wvpk"
    /// 'tta1': True Audio.
    public static let tta: Self = "tta1"
    /// '.rmf': RealMedia.
    public static let realMedia: Self = ".rmf"
    /// 'dts ': raw DTS.
    public static let dts: Self = "dts "
    /// 'FFav': any other container libavformat reads.
    public static let ffmpeg: Self = "FFav"
}

extension FormatRegistry {
    /// The containers libavformat reads for Tonearm, after all of Tonearm's own: type,
    /// name, libavformat's demuxer, extensions, MIME types.
    static let ffmpegContainers: [(AudioFileTypeID, String, String?, [String], [String])] = [
        (.asf, "ASF (Windows Media)", "asf", ["wma", "asf", "wmv"], ["audio/x-ms-wma", "video/x-ms-asf", "video/x-ms-wmv"]),
        (.ape, "Monkey's Audio", "ape", ["ape"], ["audio/x-ape", "audio/ape"]),
        (.wavPack, "WavPack", "wv", ["wv"], ["audio/x-wavpack", "audio/wavpack"]),
        (.tta, "True Audio", "tta", ["tta"], ["audio/x-tta", "audio/tta"]),
        (.realMedia, "RealMedia", "rm", ["rm", "ra", "rmvb"], ["audio/x-pn-realaudio", "application/vnd.rn-realmedia"]),
        (.dts, "DTS", "dts", ["dts"], ["audio/vnd.dts"]),
        (.ffmpeg, "FFmpeg (libavformat)", nil, [], []),
    ]

    static func ffmpegTypes() -> [FileTypeInfo] {
        ffmpegContainers.map { type, name, demuxer, extensions, mimeTypes in
            FileTypeInfo(type: type, name: name, extensions: extensions, mimeTypes: mimeTypes, usesFFmpeg: true,
                         parser: { FFmpegFormatParser(fileType: type, demuxer: demuxer) })
        }
    }

    /// Bytes the FFmpeg probe looks at: enough for raw DTS, which libavformat recognises by
    /// a run of its frames (8 KB at 768 kbit/s; 2 and 4 KB are not enough).
    static let ffmpegProbeSize = 8192

    /// libavformat's probe, after Tonearm's own magic found nothing: a container only FFmpeg
    /// reads, or nil (MPEG audio and the types Tonearm reads are left to its own parsers).
    static func ffmpegProbe(_ head: ArraySlice<UInt8>, pathExtension: String?) -> AudioFileTypeID? {
        guard let (name, score) = FFmpegDemuxer.probe(Array(head), pathExtension: pathExtension), score > 25 else { return nil }
        // MPEG audio, Matroska/WebM and MPEG-TS are Tonearm's own parsers' (a file that
        // their magic did not take is not one libavformat should read for them either).
        if name == "mp3" || name.hasPrefix("matroska") || name == "mpegts" { return nil }
        let first = name.split(separator: ",").first.map(String.init) ?? name
        return ffmpegContainers.first { $0.2 == first || $0.2 == name }?.0 ?? .ffmpeg
    }
}
#endif

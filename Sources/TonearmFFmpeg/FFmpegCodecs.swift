#if FFmpeg
import CFFmpeg
import TonearmCore

/// How Tonearm names FFmpeg's audio codecs: Apple's format IDs where Apple or Tonearm has
/// one, and for every other codec `'FF'` followed by the codec's number in FFmpeg's audio
/// range (`AVCodecID` − 0x10000, big-endian), so that any codec libavcodec decodes has a
/// format ID that maps back to it.
public enum FFmpegCodecs {
    /// The codecs with a four-char name. Tonearm's names for codecs Apple has no ID for
    /// follow the usual tags: 'wma1', 'wma2', 'wmap', 'wmal' (Windows Media Audio v1, v2,
    /// Pro, Lossless), 'dts ', 'wvpk' (WavPack), 'APE ', 'tta1', 'trhd' (TrueHD), 'mlp ',
    /// 'cook', 'atrc' (ATRAC3), 'mpc7' and 'mpc8' (Musepack), 'agsm' (GSM 6.10).
    static let named: [(AVCodecID, AudioFormatID)] = [
        (AV_CODEC_ID_PCM_MULAW, .uLaw), (AV_CODEC_ID_PCM_ALAW, .aLaw),
        (AV_CODEC_ID_ADPCM_IMA_QT, .appleIMA4), (AV_CODEC_ID_ADPCM_IMA_WAV, .dviIntelIMA),
        (AV_CODEC_ID_ADPCM_MS, .microsoftADPCM),
        (AV_CODEC_ID_MP1, .mpegLayer1), (AV_CODEC_ID_MP2, .mpegLayer2), (AV_CODEC_ID_MP3, .mpegLayer3),
        (AV_CODEC_ID_AAC, .mpeg4AAC), (AV_CODEC_ID_ALAC, .appleLossless), (AV_CODEC_ID_FLAC, .flac),
        (AV_CODEC_ID_OPUS, .opus), (AV_CODEC_ID_VORBIS, .vorbis), (AV_CODEC_ID_SPEEX, .speex),
        (AV_CODEC_ID_AC3, .ac3), (AV_CODEC_ID_EAC3, .enhancedAC3),
        (AV_CODEC_ID_AMR_NB, .amr), (AV_CODEC_ID_AMR_WB, .amrWB),
        (AV_CODEC_ID_WMAV1, "wma1"), (AV_CODEC_ID_WMAV2, "wma2"), (AV_CODEC_ID_WMAPRO, "wmap"),
        (AV_CODEC_ID_WMALOSSLESS, "wmal"), (AV_CODEC_ID_DTS, "dts "), (AV_CODEC_ID_WAVPACK, "wvpk"),
        (AV_CODEC_ID_APE, "APE "), (AV_CODEC_ID_TTA, "tta1"), (AV_CODEC_ID_TRUEHD, "trhd"),
        (AV_CODEC_ID_MLP, "mlp "), (AV_CODEC_ID_COOK, "cook"), (AV_CODEC_ID_ATRAC3, "atrc"),
        (AV_CODEC_ID_MUSEPACK7, "mpc7"), (AV_CODEC_ID_MUSEPACK8, "mpc8"), (AV_CODEC_ID_GSM, "agsm"),
    ]

    /// Linear PCM codecs: bits, float, big-endian, signed.
    static let pcm: [(AVCodecID, UInt32, Bool, Bool, Bool)] = [
        (AV_CODEC_ID_PCM_U8, 8, false, false, false), (AV_CODEC_ID_PCM_S8, 8, false, false, true),
        (AV_CODEC_ID_PCM_S16LE, 16, false, false, true), (AV_CODEC_ID_PCM_S16BE, 16, false, true, true),
        (AV_CODEC_ID_PCM_S24LE, 24, false, false, true), (AV_CODEC_ID_PCM_S24BE, 24, false, true, true),
        (AV_CODEC_ID_PCM_S32LE, 32, false, false, true), (AV_CODEC_ID_PCM_S32BE, 32, false, true, true),
        (AV_CODEC_ID_PCM_F32LE, 32, true, false, true), (AV_CODEC_ID_PCM_F32BE, 32, true, true, true),
        (AV_CODEC_ID_PCM_F64LE, 64, true, false, true), (AV_CODEC_ID_PCM_F64BE, 64, true, true, true),
    ]

    static let firstAudio = AV_CODEC_ID_FIRST_AUDIO.rawValue
    static let firstSubtitle = AV_CODEC_ID_FIRST_SUBTITLE.rawValue

    /// The format ID for an FFmpeg codec: linear PCM codecs are 'lpcm', or, with
    /// `pcmAsPackets` (a demuxed stream, whose packets hold many frames), their 'FF' IDs, so
    /// that FFmpeg decodes them packet by packet like any codec.
    package static func formatID(for codec: AVCodecID, pcmAsPackets: Bool = false) -> AudioFormatID {
        if !pcmAsPackets && pcm.contains(where: { $0.0 == codec }) { return .linearPCM }
        if let n = named.first(where: { $0.0 == codec }) { return n.1 }
        let k = codec.rawValue &- firstAudio
        return AudioFormatID(FourCC(0x46, 0x46, UInt8(truncatingIfNeeded: k >> 8), UInt8(truncatingIfNeeded: k)))
    }

    /// The FFmpeg codec for a format, nil when FFmpeg has none.
    package static func codecID(for format: StreamDescription) -> AVCodecID? {
        let id = format.formatID
        switch id {
        case .linearPCM:
            let bits = format.bitsPerChannel, float = format.isFloat, big = format.isBigEndian
            let signed = float || format.isSignedInteger || bits > 8
            guard format.bytesPerFrame == format.bytesPerSample * (format.isInterleaved ? format.channelsPerFrame : 1),
                  format.bytesPerSample * 8 == bits
            else { return nil }
            return pcm.first { $0.1 == bits && $0.2 == float && ($0.3 == big || bits == 8) && $0.4 == signed }?.0
        case .mpeg4AAC_HE, .mpeg4AAC_HE_V2: return AV_CODEC_ID_AAC
        default:
            if let n = named.first(where: { $0.1 == id }) { return n.0 }
            let f = id.fourCC.rawValue
            guard f >> 16 == 0x4646 else { return nil }
            let raw = firstAudio &+ (f & 0xFFFF)
            guard raw < firstSubtitle else { return nil }
            return AVCodecID(rawValue: raw)
        }
    }

    /// The format IDs of every audio codec this libavcodec can decode.
    public static var decodableFormats: [AudioFormatID] {
        FFmpegLog.prepare()
        var seen = Set<AudioFormatID>(), out: [AudioFormatID] = []
        var state: UnsafeMutableRawPointer?
        while let codec = av_codec_iterate(&state) {
            guard av_codec_is_decoder(codec) != 0, codec.pointee.type == AVMEDIA_TYPE_AUDIO else { continue }
            let f = formatID(for: codec.pointee.id)
            if seen.insert(f).inserted { out.append(f) }
        }
        return out
    }

    /// FFmpeg's name for the codec of a format ("wmav2"), nil when FFmpeg has none.
    public static func codecName(for format: StreamDescription) -> String? {
        guard let id = codecID(for: format), let d = avcodec_descriptor_get(id) else { return nil }
        return String(cString: d.pointee.name)
    }

    /// FFmpeg's long name for the codec of a format ("Windows Media Audio 2").
    public static func codecLongName(for format: StreamDescription) -> String? {
        guard let id = codecID(for: format), let d = avcodec_descriptor_get(id), let l = d.pointee.long_name else { return nil }
        return String(cString: l)
    }

    /// The name of a decoder for the format that this libavcodec has ("wmav2"), nil when
    /// none: the codec may be known but not built in.
    public static func decoderName(for format: StreamDescription) -> String? {
        guard let id = codecID(for: format), let d = avcodec_find_decoder(id) else { return nil }
        return String(cString: d.pointee.name)
    }

    /// libavcodec's and libavformat's versions, as "avcodec 59.37.100, avformat 59.27.100".
    public static var versions: String {
        func v(_ n: UInt32) -> String { "\(n >> 16).\((n >> 8) & 0xFF).\(n & 0xFF)" }
        return "avcodec \(v(avcodec_version())), avformat \(v(avformat_version())), avutil \(v(avutil_version()))"
    }
}
#endif

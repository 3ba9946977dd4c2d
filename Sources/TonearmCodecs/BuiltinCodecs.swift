import TonearmCore
#if FFmpeg
import TonearmFFmpeg
#endif

extension CodecRegistry {
    /// The decoders built into Tonearm; each codec folder adds its factory here.
    static func builtinFactories() -> [Factory] {
        let pcm: Factory = PCMDecoder.make
        let g711: Factory = G711Decoder.make
        let ima4: Factory = AppleIMA4Decoder.make
        let dviIMA: Factory = DVIIntelIMADecoder.make
        let msADPCM: Factory = MSADPCMDecoder.make
        let flac: Factory = FLACDecoder.make
        let alac: Factory = ALACDecoder.make
        let mpeg: Factory = MPEGDecoder.make
        let aac: Factory = AACDecoder.make
        let opus: Factory = OpusDecoder.make
        let vorbis: Factory = VorbisDecoder.make
        return [pcm, g711, ima4, dviIMA, msADPCM, flac, alac, mpeg, aac, opus, vorbis]
    }

    static let builtinDecodableFormats: [AudioFormatID] = [
        .linearPCM, .uLaw, .aLaw, .appleIMA4, .dviIntelIMA, .microsoftADPCM, .flac, .appleLossless,
        .mpegLayer1, .mpegLayer2, .mpegLayer3, .mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .opus, .vorbis,
    ]
}

extension CodecRegistry {
    /// FFmpeg's decoders, tried after every other (with the FFmpeg trait; nil without).
    static var fallbackFactory: Factory? {
        #if FFmpeg
        return FFmpegDecoder.make
        #else
        return nil
        #endif
    }

    /// The formats FFmpeg's decoders take (empty without the FFmpeg trait).
    static let fallbackDecodableFormats: [AudioFormatID] = {
        #if FFmpeg
        return FFmpegCodecs.decodableFormats
        #else
        return []
        #endif
    }()
}

import TonearmCore

extension FormatRegistry {
    /// Entries of the other format families, each from its own folder. The order is the
    /// probe's: formats with exact magic first, the sync-word formats (ADTS, MPEG) last.
    static func additionalBuiltinTypes() -> [FileTypeInfo] {
        var types = aiffTypes() + wave64Types() + cafTypes() + auTypes()
            + mp4Types() + flacTypes() + oggTypes() + matroskaTypes() + mpegTSTypes() + amrTypes() + ac3Types() + adtsTypes() + mpegTypes()
        #if FFmpeg
        types += ffmpegTypes()
        #endif
        return types
    }
}

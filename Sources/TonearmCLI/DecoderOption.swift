import Tonearm

/// `--decoder ffmpeg|native|auto`, for the commands that decode (info, convert, play, stream):
/// which decoders ``CodecRegistry`` may use, to compare FFmpeg's with Tonearm's own.
enum DecoderOption {
    static let name = "--decoder"

    /// The message for `--decoder ffmpeg` in a build that has no FFmpeg to use.
    static let withoutTrait = "this tonearm was built without the FFmpeg trait; rebuild with swift build --traits FFmpeg"

    /// Sets ``CodecRegistry/preference`` from the option, when given. ``TonearmCommand/run(_:console:)``
    /// puts the old preference back, so in-process runs (the tests) do not leak it.
    static func apply(_ a: Arguments) throws(UsageError) {
        guard let value = a.value(name) else { return }
        CodecRegistry.preference = try preference(value)
    }

    static func preference(_ value: String) throws(UsageError) -> DecoderPreference {
        switch value.lowercased() {
        case "auto", "automatic": return .automatic
        case "native": return .native
        case "ffmpeg":
            #if FFmpeg
            return .ffmpeg
            #else
            // A usage error, not the registry's 'fmt?' for every file: the build, not the
            // file, is what cannot do it.
            throw UsageError(withoutTrait)
            #endif
        default: throw UsageError("--decoder wants ffmpeg, native or auto, not '\(value)'")
        }
    }
}

/// FFmpeg's log level for `-v`: FFmpeg's messages (which demuxer and decoder it opened, what
/// it skipped) are what a verbose run wants, and noise otherwise, so it stays quiet without.
func makeFFmpegVerbose() {
    #if FFmpeg
    FFmpegLog.level = .info
    #endif
}

import TonearmCore

extension FormatRegistry {
    /// The FLAC file types.
    static func flacTypes() -> [FileTypeInfo] {
        []
    }
}

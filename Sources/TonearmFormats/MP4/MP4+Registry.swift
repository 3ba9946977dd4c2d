import TonearmCore

extension FormatRegistry {
    /// The MP4 file types.
    static func mp4Types() -> [FileTypeInfo] {
        []
    }
}

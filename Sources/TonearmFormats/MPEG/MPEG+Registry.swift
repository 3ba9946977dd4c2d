import TonearmCore

extension FormatRegistry {
    /// The MPEG file types.
    static func mpegTypes() -> [FileTypeInfo] {
        []
    }
}

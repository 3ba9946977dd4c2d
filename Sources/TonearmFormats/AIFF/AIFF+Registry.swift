import TonearmCore

extension FormatRegistry {
    /// The AIFF file types.
    static func aiffTypes() -> [FileTypeInfo] {
        []
    }
}

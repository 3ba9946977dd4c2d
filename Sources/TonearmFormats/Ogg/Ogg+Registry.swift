import TonearmCore

extension FormatRegistry {
    /// The Ogg file types.
    static func oggTypes() -> [FileTypeInfo] {
        []
    }
}

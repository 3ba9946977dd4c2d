import TonearmCore

extension FormatRegistry {
    /// The CAF file types.
    static func cafTypes() -> [FileTypeInfo] {
        []
    }
}

import TonearmCore

extension FormatRegistry {
    /// The AU file types.
    static func auTypes() -> [FileTypeInfo] {
        []
    }
}

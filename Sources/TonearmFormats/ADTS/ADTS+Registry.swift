import TonearmCore

extension FormatRegistry {
    /// The ADTS file types.
    static func adtsTypes() -> [FileTypeInfo] {
        []
    }
}

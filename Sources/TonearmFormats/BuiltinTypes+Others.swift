import TonearmCore

extension FormatRegistry {
    /// Entries of the other format families (AIFF, CAF, Wave64, AU, …).
    static func additionalBuiltinTypes() -> [FileTypeInfo] {
        []
    }
}

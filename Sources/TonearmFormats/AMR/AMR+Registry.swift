import TonearmCore

extension FormatRegistry {
    /// The AMR file types.
    static func amrTypes() -> [FileTypeInfo] {
        []
    }
}

import TonearmCore

extension FormatRegistry {
    /// The AC3 file types.
    static func ac3Types() -> [FileTypeInfo] {
        []
    }
}

import TonearmCore

extension FormatRegistry {
    /// The Wave64 file types.
    static func wave64Types() -> [FileTypeInfo] {
        []
    }
}

import TonearmCore

extension FormatRegistry {
    /// Entries of the other format families, each from its own folder.
    static func additionalBuiltinTypes() -> [FileTypeInfo] {
        aiffTypes() + wave64Types() + cafTypes() + auTypes()
    }
}

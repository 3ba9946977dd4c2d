import TonearmCore

extension FormatRegistry {
    /// The Wave64 file types.
    static func wave64Types() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .wave64, name: "Wave64", extensions: ["w64"], mimeTypes: ["audio/x-w64"],
                         hfsTypeCodes: ["W64f"], writableFormats: [.linearPCM, .uLaw, .aLaw],
                         parser: { ChunkedParser(format: Wave64Format(), fileType: .wave64) },
                         writer: { f throws(AudioError) in try Wave64Writer(format: f) }),
        ]
    }
}

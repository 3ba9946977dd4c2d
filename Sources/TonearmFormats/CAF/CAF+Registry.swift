import TonearmCore

extension FormatRegistry {
    /// The CAF file types.
    static func cafTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .caf, name: "CAF", extensions: ["caf"], mimeTypes: ["audio/x-caf"],
                         utis: ["com.apple.coreaudio-format"], hfsTypeCodes: ["caff"],
                         writableFormats: [.linearPCM, .uLaw, .aLaw, .appleIMA4, .mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .appleLossless,
                                          .flac, .opus],
                         magic: { head, _ in bytes(head, at: 0, are: "caff") ? .match(.caf) : .noMatch },
                         parser: { ChunkedParser(format: CAFFormat(), fileType: .caf) },
                         writer: { f throws(AudioError) in try CAFWriter(format: f) }),
        ]
    }
}

import TonearmCore

extension FormatRegistry {
    /// The AIFF file types.
    static func aiffTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .aiff, name: "AIFF", extensions: ["aif", "aiff"],
                         mimeTypes: ["audio/aiff", "audio/x-aiff"], utis: ["public.aiff-audio"],
                         hfsTypeCodes: ["AIFF"], writableFormats: [.linearPCM],
                         magic: { head, end in formMagic(head, end, [("FORM", "AIFF", .aiff), ("FORM", "AIFC", .aifc)]) },
                         parser: { ChunkedParser(format: AIFFFormat(), fileType: .aiff) },
                         writer: { f throws(AudioError) in try AIFFWriter(fileType: .aiff, format: f) }),
            FileTypeInfo(type: .aifc, name: "AIFC", extensions: ["aifc", "aif", "aiff"],
                         mimeTypes: ["audio/aiff", "audio/x-aiff", "audio/x-aifc"], utis: ["public.aifc-audio"],
                         hfsTypeCodes: ["AIFC"], writableFormats: [.linearPCM, .uLaw, .aLaw, .appleIMA4],
                         magic: { head, end in formMagic(head, end, [("FORM", "AIFF", .aiff), ("FORM", "AIFC", .aifc)]) },
                         parser: { ChunkedParser(format: AIFFFormat(), fileType: .aifc) },
                         writer: { f throws(AudioError) in try AIFFWriter(fileType: .aifc, format: f) }),
        ]
    }
}

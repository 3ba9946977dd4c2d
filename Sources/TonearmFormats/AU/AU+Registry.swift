import TonearmCore

extension FormatRegistry {
    /// The AU file types.
    static func auTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .next, name: "NeXT/Sun", extensions: ["au", "snd"], mimeTypes: ["audio/basic"],
                         utis: ["public.ulaw-audio"], hfsTypeCodes: ["NeXT"],
                         writableFormats: [.linearPCM, .uLaw, .aLaw],
                         parser: { AUParser() },
                         writer: { f throws(AudioError) in try AUWriter(format: f) }),
        ]
    }
}

import TonearmCore

extension FormatRegistry {
    /// The AU file types.
    static func auTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .next, name: "NeXT/Sun", extensions: ["au", "snd"], mimeTypes: ["audio/basic"],
                         utis: ["public.ulaw-audio"], hfsTypeCodes: ["NeXT"],
                         writableFormats: [.linearPCM, .uLaw, .aLaw],
                         magic: { head, _ in bytes(head, at: 0, are: ".snd") ? .match(.next) : .noMatch },
                         parser: { AUParser() },
                         writer: { f throws(AudioError) in try AUWriter(format: f) }),
        ]
    }
}

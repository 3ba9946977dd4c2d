import TonearmCore

extension FormatRegistry {
    /// The file types built into Tonearm. Each format family adds its entries here.
    static func builtinTypes() -> [FileTypeInfo] {
        let pcmFamily: [AudioFormatID] = [.linearPCM, .uLaw, .aLaw]
        var types: [FileTypeInfo] = [
            FileTypeInfo(type: .wave, name: "WAVE", extensions: ["wav", "wave"],
                         mimeTypes: ["audio/wav", "audio/x-wav", "audio/vnd.wave", "audio/wave"],
                         utis: ["com.microsoft.waveform-audio"], hfsTypeCodes: ["WAVE", ".wav"],
                         writableFormats: pcmFamily, magic: riffMagic,
                         parser: { ChunkedParser(format: WAVEFormat(), fileType: .wave) },
                         writer: { f throws(AudioError) in try WAVEWriter(fileType: .wave, format: f) }),
            FileTypeInfo(type: .rf64, name: "RF64", extensions: ["rf64", "wav"], mimeTypes: ["audio/x-rf64"],
                         writableFormats: pcmFamily, magic: riffMagic,
                         parser: { ChunkedParser(format: WAVEFormat(), fileType: .rf64) },
                         writer: { f throws(AudioError) in try WAVEWriter(fileType: .rf64, format: f) }),
            FileTypeInfo(type: .bw64, name: "BW64", extensions: ["bw64", "wav"], mimeTypes: [],
                         writableFormats: pcmFamily, magic: riffMagic,
                         parser: { ChunkedParser(format: WAVEFormat(), fileType: .bw64) },
                         writer: { f throws(AudioError) in try WAVEWriter(fileType: .bw64, format: f) }),
        ]
        types += additionalBuiltinTypes()
        return types
    }

    /// RIFF, RF64 and BW64 with the WAVE form.
    static let riffMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, end in
        formMagic(head, end, [("RIFF", "WAVE", .wave), ("RF64", "WAVE", .rf64), ("BW64", "WAVE", .bw64)])
    }
}

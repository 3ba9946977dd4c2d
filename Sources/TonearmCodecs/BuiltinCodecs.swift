import TonearmCore

extension CodecRegistry {
    /// The decoders built into Tonearm; each codec folder adds its factory here.
    static func builtinFactories() -> [Factory] {
        []
    }

    static let builtinDecodableFormats: [AudioFormatID] = []
}

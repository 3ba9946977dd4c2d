import TonearmCore

extension FormatRegistry {
    /// The Ogg file types: one, 'Oggs', a Tonearm extension named after the page magic
    /// (Apple has no Ogg type). It holds Vorbis, Opus, FLAC and Speex.
    static func oggTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .ogg, name: "Ogg", extensions: ["ogg", "oga", "opus", "spx"],
                         mimeTypes: ["audio/ogg", "audio/opus", "application/ogg", "audio/x-speex"],
                         utis: ["org.xiph.ogg-audio"],
                         magic: { head, isEndOfStream in
                             if bytes(head, at: 0, are: "OggS") { return .match(.ogg) }
                             return head.count < 4 && !isEndOfStream && Array("OggS".utf8).starts(with: head) ? .needMore : .noMatch
                         },
                         parser: { OggParser() }),
        ]
    }
}

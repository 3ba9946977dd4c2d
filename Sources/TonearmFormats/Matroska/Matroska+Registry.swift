import TonearmCore

extension FormatRegistry {
    /// Matroska ('mkv ') and WebM ('webm'), Tonearm names (Apple has none). They share one
    /// magic, on the first entry: an EBML header, whose DocType names the type when the
    /// probe's bytes hold it (the parser decides from the DocType in any case).
    static func matroskaTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .matroska, name: "Matroska", extensions: ["mka", "mkv", "mk3d"],
                         mimeTypes: ["audio/x-matroska", "video/x-matroska", "audio/matroska", "video/matroska"],
                         utis: ["org.matroska.mka", "org.matroska.mkv"],
                         magic: matroskaMagic, parser: { MatroskaParser(fileType: .matroska) }),
            FileTypeInfo(type: .webM, name: "WebM", extensions: ["webm"], mimeTypes: ["audio/webm", "video/webm"],
                         utis: ["org.webmproject.webm"], parser: { MatroskaParser(fileType: .webM) }),
        ]
    }

    /// The EBML magic (1A 45 DF A3); the DocType element (42 82, a size, the text) says
    /// "webm" or "matroska".
    static let matroskaMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, isEndOfStream in
        let magic: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3]
        guard head.count >= 4 else {
            return !isEndOfStream && magic.starts(with: head) ? .needMore : .noMatch
        }
        guard head.starts(with: magic) else { return .noMatch }
        var i = 4
        while i + 3 <= head.count {
            if head[i] == 0x42, head[i + 1] == 0x82, head[i + 2] & 0x80 != 0 {
                let n = Int(head[i + 2] & 0x7F)
                let text = head[(i + 3)..<min(head.count, i + 3 + n)]
                if text.elementsEqual("webm".utf8) { return .match(.webM) }
                if text.elementsEqual("matroska".utf8) { return .match(.matroska) }
            }
            i += 1
        }
        return .match(.matroska)
    }
}

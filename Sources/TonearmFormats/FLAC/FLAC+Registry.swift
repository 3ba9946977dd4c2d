import TonearmCore

extension FormatRegistry {
    /// The FLAC file types.
    static func flacTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .flac, name: "FLAC", extensions: ["flac"], mimeTypes: ["audio/flac", "audio/x-flac"],
                         utis: ["org.xiph.flac"], magic: flacMagic, parser: { FLACParser() }),
        ]
    }

    /// `fLaC` at the start, or after ID3v2 tags when the marker lies within the bytes seen.
    /// An ID3v2 tag alone is left to MPEG audio.
    static let flacMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, end in
        var at = 0
        while true {
            if bytes(head, at: at, are: "fLaC") { return .match(.flac) }
            guard bytes(head, at: at, are: "ID3") else { return .noMatch }
            guard head.count >= at + 10 else { return end ? .noMatch : .needMore }
            let size = (6..<10).reduce(0) { $0 << 7 | Int(head[at + $1] & 0x7F) }
            at += 10 + size + (head[at + 5] & 0x10 != 0 ? 10 : 0)
            guard head.count >= at + 4 else { return .noMatch }
        }
    }
}

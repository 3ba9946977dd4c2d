import TonearmCore

extension FormatRegistry {
    /// The MP4 file types. They share one magic, on the first entry: `ftyp` at offset 4,
    /// whose major brand names the sibling (M4A, M4B, 3GP, 3GP2, else MPEG-4).
    static func mp4Types() -> [FileTypeInfo] {
        let parser: @Sendable (AudioFileTypeID) -> @Sendable () -> FormatParser = { type in { MP4Parser(fileType: type) } }
        return [
            FileTypeInfo(type: .mpeg4, name: "MPEG4", extensions: ["mp4"], mimeTypes: ["audio/mp4"],
                         utis: ["public.mpeg-4"], hfsTypeCodes: ["mpg4"], magic: mp4Magic, parser: parser(.mpeg4)),
            FileTypeInfo(type: .m4a, name: "M4A", extensions: ["m4a"], mimeTypes: ["audio/x-m4a"],
                         utis: ["com.apple.m4a-audio"], hfsTypeCodes: ["M4A "], parser: parser(.m4a)),
            FileTypeInfo(type: .m4b, name: "M4B", extensions: ["m4b"], mimeTypes: [],
                         utis: ["com.apple.protected-mpeg-4-audio-b"], hfsTypeCodes: ["M4B "], parser: parser(.m4b)),
            FileTypeInfo(type: .threeGP, name: "3GPP", extensions: ["3gp"], mimeTypes: ["audio/3gpp"],
                         utis: ["public.3gpp"], parser: parser(.threeGP)),
            FileTypeInfo(type: .threeGP2, name: "3GPP2", extensions: ["3g2"], mimeTypes: ["audio/3gpp2"],
                         utis: ["public.3gpp2"], parser: parser(.threeGP2)),
        ]
    }

    /// `ftyp` at offset 4, and the major brand at 8 names the type.
    static let mp4Magic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, isEndOfStream in
        guard bytes(head, at: 4, are: "ftyp") else {
            return head.count < 8 && !isEndOfStream ? .needMore : .noMatch
        }
        guard head.count >= 12 else { return isEndOfStream ? .noMatch : .needMore }
        return .match(MP4Parser.fileType(forBrand: FourCC(head[8], head[9], head[10], head[11])))
    }
}

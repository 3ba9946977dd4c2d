import TonearmCore

extension FormatRegistry {
    /// The Wave64 file types.
    static func wave64Types() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .wave64, name: "Wave64", extensions: ["w64"], mimeTypes: ["audio/x-w64"],
                         hfsTypeCodes: ["W64f"], writableFormats: [.linearPCM, .uLaw, .aLaw],
                         magic: { head, end in
                             let guid = Wave64Format.guid("riff")
                             let n = min(head.count, guid.count)
                             guard head[0..<n].elementsEqual(guid[0..<n]) else { return .noMatch }
                             return n == guid.count ? .match(.wave64) : (end ? .noMatch : .needMore)
                         },
                         parser: { ChunkedParser(format: Wave64Format(), fileType: .wave64) },
                         writer: { f throws(AudioError) in try Wave64Writer(format: f) }),
        ]
    }
}

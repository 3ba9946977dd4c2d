import TonearmCore

extension FormatRegistry {
    /// The AMR file types: narrowband and wideband storage format.
    static func amrTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .amr, name: "AMR", extensions: ["amr"], mimeTypes: ["audio/amr", "audio/amr-wb", "audio/3gpp"],
                         utis: ["org.3gpp.adaptive-multi-rate-audio"], hfsTypeCodes: ["amrf"], magic: amrMagic,
                         parser: { FramedParser(format: AMRFormat(), fileType: .amr) }),
        ]
    }

    /// `#!AMR\n` or `#!AMR-WB\n` at byte 0.
    static let amrMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, end in
        let prefix = Array("#!AMR".utf8)
        let k = min(head.count, prefix.count)
        guard head[0..<k].elementsEqual(prefix[0..<k]) else { return .noMatch }
        guard head.count > prefix.count else { return end ? .noMatch : .needMore }
        if head[5] == 0x0A { return .match(.amr) }
        let wide = Array("#!AMR-WB\n".utf8)
        let w = min(head.count, wide.count)
        guard head[0..<w].elementsEqual(wide[0..<w]) else { return .noMatch }
        return w == wide.count ? .match(.amr) : (end ? .noMatch : .needMore)
    }
}

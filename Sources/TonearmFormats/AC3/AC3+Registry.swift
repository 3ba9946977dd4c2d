import TonearmCore

extension FormatRegistry {
    /// The AC3 file types: AC-3 and E-AC-3 sync frames.
    static func ac3Types() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .ac3, name: "AC3", extensions: ["ac3"], mimeTypes: ["audio/ac3", "audio/vnd.dolby.dd-raw"],
                         utis: ["public.ac3-audio"], hfsTypeCodes: ["ac-3"], magic: ac3Magic, readsLeadingID3v2: true,
                         parser: { FramedParser(format: AC3Format(), fileType: .ac3) }),
            FileTypeInfo(type: .eac3, name: "EC3", extensions: ["ec3", "eac3"], mimeTypes: ["audio/eac3", "audio/ec3"],
                         utis: ["public.enhanced-ac3-audio"], hfsTypeCodes: ["ec-3"], readsLeadingID3v2: true,
                         parser: { FramedParser(format: AC3Format(), fileType: .eac3) }),
        ]
    }

    /// A sync frame header at byte 0 (AC-3 or E-AC-3 by its bsid), confirmed by the next
    /// one when that lies within the probe's bytes.
    static let ac3Magic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, end in
        guard head.first == 0x0B else { return .noMatch }
        if head.count >= 2 && head[1] != 0x77 { return .noMatch }
        guard head.count >= 8 else { return end ? .noMatch : .needMore }
        let enhanced = head.withUnsafeBytes { AC3Format.Header($0.baseAddress!)?.isEnhanced }
        guard let enhanced else { return .noMatch }
        return framedMagic(AC3Format(), head, end, enhanced ? .eac3 : .ac3, firstByte: 0x0B)
    }
}

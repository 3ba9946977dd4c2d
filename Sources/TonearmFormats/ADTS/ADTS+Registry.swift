import TonearmCore

extension FormatRegistry {
    /// The ADTS file types: AAC in ADTS, and LATM in LOAS.
    static func adtsTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .adts, name: "AAC ADTS", extensions: ["aac", "adts"],
                         mimeTypes: ["audio/aac", "audio/x-aac", "audio/aacp"], utis: ["public.aac-audio"],
                         hfsTypeCodes: ["adts"], magic: adtsMagic, readsLeadingID3v2: true,
                         parser: { FramedParser(format: ADTSFormat(), fileType: .adts) }),
            FileTypeInfo(type: .loas, name: "LATM/LOAS", extensions: ["loas", "latm", "xhe"], mimeTypes: ["audio/usac"],
                         utis: ["public.latm-loas"], hfsTypeCodes: ["loas"], magic: loasMagic, readsLeadingID3v2: true,
                         parser: { FramedParser(format: LOASFormat(), fileType: .loas) }),
        ]
    }

    /// A frame header at byte 0 of `head`, confirmed by the next one when that lies within
    /// the probe's bytes: `.match` only when the header parses.
    static func framedMagic<F: FramedFormat>(_ format: F, _ head: [UInt8], _ end: Bool, _ type: AudioFileTypeID,
                                             firstByte: UInt8) -> ProbeResult
    {
        let h = format.headerSize
        guard let b0 = head.first, b0 == firstByte else { return .noMatch }
        guard head.count >= h else { return end ? .noMatch : .needMore }
        return head.withUnsafeBytes { raw -> ProbeResult in
            guard let first = format.header(at: raw.baseAddress!) else {
                // A valid header of a kind the parser refuses: this type, and the parser says why.
                return format.unsupportedStream(at: raw.baseAddress!) != nil ? .match(type) : .noMatch
            }
            let next = first.length
            if next + h <= probeSize {
                if raw.count < next + h { return end ? (raw.count == next ? .match(type) : .noMatch) : .needMore }
                guard let second = format.header(at: raw.baseAddress! + next), second.streamKey == first.streamKey else {
                    return .noMatch
                }
            }
            return .match(type)
        }
    }

    static let adtsMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, end in
        framedMagic(ADTSFormat(), head, end, .adts, firstByte: 0xFF)
    }

    static let loasMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, end in
        framedMagic(LOASFormat(), head, end, .loas, firstByte: 0x56)
    }
}

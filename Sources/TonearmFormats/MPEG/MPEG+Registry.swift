import TonearmCore

extension FormatRegistry {
    /// The MPEG file types. MP3 comes first, so that `audio/mpeg` picks it, as does the probe
    /// of ID3v2 tags that nothing recognisable follows; the parser then names the layer it finds.
    static func mpegTypes() -> [FileTypeInfo] {
        let parser: @Sendable (AudioFileTypeID) -> FormatParser = { FramedParser(format: MPEGFormat(), fileType: $0) }
        return [
            FileTypeInfo(type: .mp3, name: "MPEG Layer 3", extensions: ["mp3", "mpga"],
                         mimeTypes: ["audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg-3", "audio/x-mp3", "audio/mpa"],
                         utis: ["public.mp3"], hfsTypeCodes: ["MPG3", "Mp3 ", "MP3 "], magic: mpegMagic,
                         readsLeadingID3v2: true, parser: { parser(.mp3) }),
            FileTypeInfo(type: .mp2, name: "MPEG Layer 2", extensions: ["mp2"], mimeTypes: ["audio/mpeg", "audio/mp2"],
                         utis: ["public.mp2"], hfsTypeCodes: ["MPG2", "MP2 "], readsLeadingID3v2: true, parser: { parser(.mp2) }),
            FileTypeInfo(type: .mp1, name: "MPEG Layer 1", extensions: ["mp1"], mimeTypes: ["audio/mpeg"],
                         utis: ["public.mp1"], hfsTypeCodes: ["MPG1", "MP1 "], readsLeadingID3v2: true, parser: { parser(.mp1) }),
        ]
    }

    /// A frame header at byte 0 (after any ID3v2 tags, which the registry's probe passes)
    /// whose successor, when it lies within the probe's bytes, agrees with it. A free-format
    /// header (bit rate index 0) is claimed too, so that the parser refuses it with 'fmt?'
    /// rather than the stream being unknown ('typ?').
    static let mpegMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, end in
        func word(_ i: Int) -> UInt32 {
            UInt32(head[i]) << 24 | UInt32(head[i + 1]) << 16 | UInt32(head[i + 2]) << 8 | UInt32(head[i + 3])
        }
        guard let b0 = head.first, b0 == 0xFF else { return .noMatch }
        guard head.count >= 4 else { return end ? .noMatch : .needMore }
        guard let h = MPEGAudioHeader(word(0)) else { return MPEGAudioHeader.isFreeFormat(word(0)) ? .match(.mp3) : .noMatch }
        let next = h.frameLength
        if next + 4 <= probeSize {
            if head.count < next + 4 { return end ? (head.count == next ? .match(h.fileType) : .noMatch) : .needMore }
            guard let h2 = MPEGAudioHeader(word(next)), h2.streamKey == h.streamKey else { return .noMatch }
        }
        return .match(h.fileType)
    }

    /// Bytes the MPEG sync scan looks through when no magic matched and nothing hints the type.
    static let syncScanSize = 16 << 10
    /// Frames in a row the sync scan wants to see before it calls the bytes MPEG audio.
    static let syncScanFrames = 4

    /// The last resort of the probe, for MPEG audio that does not begin at byte 0 (the
    /// compliance stream `sin1k0db` begins with 136 zero bytes and the tail of a cut frame):
    /// a run of ``syncScanFrames`` frames, each where the one before it ends and all of one
    /// stream, beginning within the first ``syncScanSize`` bytes. Fewer frames do when the
    /// stream ends after them, but never one alone. A chance sync pattern in junk does not
    /// chain, so junk is still refused.
    static func mpegSyncScan(_ head: ArraySlice<UInt8>, isEndOfStream end: Bool) -> ProbeResult {
        let bytes = Array(head.prefix(syncScanSize + 4 * 2881))
        let n = bytes.count
        func word(_ i: Int) -> UInt32 {
            UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
        }
        var start = 0
        while start + 4 <= min(n, syncScanSize) {
            defer { start += 1 }
            guard bytes[start] == 0xFF, let first = MPEGAudioHeader(word(start)) else { continue }
            var at = start + first.frameLength, count = 1
            while count < syncScanFrames, at + 4 <= n, let h = MPEGAudioHeader(word(at)), h.streamKey == first.streamKey {
                at += h.frameLength
                count += 1
            }
            if count >= syncScanFrames { return .match(first.fileType) }
            if at + 4 > n {
                // The run reaches the end of the bytes: more may follow, or the stream ends.
                if !end { return .needMore }
                if count >= 2 && at <= n { return .match(first.fileType) }
            }
        }
        return n < syncScanSize && !end ? .needMore : .noMatch
    }
}

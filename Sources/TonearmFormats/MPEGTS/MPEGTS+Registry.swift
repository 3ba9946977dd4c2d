import TonearmCore

extension FormatRegistry {
    /// MPEG transport streams ('mp2t', a Tonearm name: Apple has none), in 188-byte packets,
    /// M2TS's 192 or DVB's 204.
    static func mpegTSTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .mpegTS, name: "MPEG transport stream", extensions: ["ts", "m2ts", "mts"],
                         mimeTypes: ["video/mp2t", "audio/mp2t"], utis: ["public.mpeg-2-transport-stream"],
                         magic: mpegTSMagic, magicBytes: longProbeSize, parser: { MPEGTSParser() }),
        ]
    }

    /// Sync bytes 0x47 at a stride of 188, 192 (after a 4-byte prefix) or 204 from the first
    /// packet on: four of them, or two when the bytes end sooner (``FormatRegistry/longProbeSize``
    /// bytes are enough).
    static let mpegTSMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { head, isEndOfStream in
        guard head.first == 0x47 || (head.count > 4 && head[4] == 0x47) else {
            return head.count < 5 && !isEndOfStream && (head.isEmpty || head[0] != 0x47) ? .needMore : .noMatch
        }
        return head.withUnsafeBytes { raw -> ProbeResult in
            if let (start, layout) = TSLayout.find(in: raw, from: 0, isEndOfStream: isEndOfStream),
               start == 0 || start + layout.syncOffset == 0
            {
                return start == 0 ? .match(.mpegTS) : .noMatch
            }
            return isEndOfStream || head.count >= longProbeSize ? .noMatch : .needMore
        }
    }
}

import TonearmCore

extension FormatRegistry {
    /// The FLAC file types.
    static func flacTypes() -> [FileTypeInfo] {
        [
            FileTypeInfo(type: .flac, name: "FLAC", extensions: ["flac"], mimeTypes: ["audio/flac", "audio/x-flac"],
                         utis: ["org.xiph.flac"], writableFormats: [.flac], magic: flacMagic, readsLeadingID3v2: true,
                         parser: { FLACParser() }, writer: { f throws(AudioError) in try FLACWriter(format: f) }),
        ]
    }

    /// `fLaC` at the start, or after ID3v2 tags when the marker lies within the probe's
    /// bytes (``FormatRegistry/probeSize``, whatever more has arrived): an ID3v2 tag alone
    /// is left to MPEG audio. A stream of bare frames (a multicast capture) is claimed by its
    /// first frame header, when the header is whole, its CRC-8 right, it gives the sample
    /// rate and depth itself, and a valid subframe header follows. (0xFFF8 and 0xFFF9 are
    /// also MPEG-2 ADTS syncs: these checks leave about one such stream in a thousand.)
    static let flacMagic: @Sendable ([UInt8], Bool) -> ProbeResult = { whole, end in
        let head = whole.prefix(probeSize)
        let marker = Array("fLaC".utf8)
        if head.count < 4 && !end && head.elementsEqual(marker.prefix(head.count)) && !head.isEmpty { return .needMore }
        if head.count >= 2 && head[head.startIndex] == 0xFF && head[head.startIndex + 1] & 0xFE == 0xF8 {
            return bareFrameMagic(Array(head), end)
        }
        var at = 0
        while true {
            if bytes(Array(head), at: at, are: "fLaC") { return .match(.flac) }
            let id3: [UInt8] = [0x49, 0x44, 0x33]
            let seen = head.dropFirst(at).prefix(3)
            guard seen.elementsEqual(id3.prefix(seen.count)) else { return .noMatch }
            guard head.count >= at + 10 else { return end || at + 10 > probeSize ? .noMatch : .needMore }
            let size = (6..<10).reduce(0) { $0 << 7 | Int(head[at + $1] & 0x7F) }
            at += 10 + size + (head[at + 5] & 0x10 != 0 ? 10 : 0)
            guard at + 4 <= probeSize else { return .noMatch }
            guard head.count >= at + 4 else { return end ? .noMatch : .needMore }
        }
    }

    static func bareFrameMagic(_ head: [UInt8], _ end: Bool) -> ProbeResult {
        let parsed = head.withUnsafeBytes { FLACFrameHeader.parse($0.baseAddress!, count: $0.count) }
        switch parsed {
        case .header(let h):
            guard h.sampleRate != 0, h.bitsPerSample != 0 else { return .noMatch }
            guard head.count > h.length else { return end ? .noMatch : .needMore }
            // The first subframe header: a zero bit, then a type that is not reserved.
            let b = head[h.length]
            let type = b >> 1 & 0x3F
            let valid = b & 0x80 == 0 && (type <= 1 || (8...12).contains(type) || type >= 32)
            return valid ? .match(.flac) : .noMatch
        case .needMore:
            return end ? .noMatch : .needMore
        case .invalid:
            return .noMatch
        }
    }
}

import TonearmCore

/// iTunes-style metadata (`udta/meta/ilst`), the gapless `iTunSMPB` comment, and Nero
/// chapters (`udta/chpl`).
struct MP4Metadata: Sendable {
    var info = InfoDictionary()
    var artwork: [UInt8]?
    /// iTunSMPB: priming, remainder and valid frames.
    var gapless: (priming: Int64, remainder: Int64, valid: Int64)?
    var neroChapters: [Chapter] = []

    /// The item types of ilst and the InfoDictionary key each fills.
    static let keys: [FourCC: String] = [
        FourCC(0xA9, 0x6E, 0x61, 0x6D): InfoDictionary.title,         // ©nam
        FourCC(0xA9, 0x41, 0x52, 0x54): InfoDictionary.artist,        // ©ART
        FourCC(0xA9, 0x61, 0x6C, 0x62): InfoDictionary.album,         // ©alb
        FourCC(0xA9, 0x64, 0x61, 0x79): InfoDictionary.year,          // ©day
        FourCC(0xA9, 0x67, 0x65, 0x6E): InfoDictionary.genre,         // ©gen
        FourCC(0xA9, 0x63, 0x6D, 0x74): InfoDictionary.comments,      // ©cmt
        FourCC(0xA9, 0x77, 0x72, 0x74): InfoDictionary.composer,      // ©wrt
        FourCC(0xA9, 0x74, 0x6F, 0x6F): InfoDictionary.encodingApplication,  // ©too
        FourCC(0xA9, 0x6C, 0x79, 0x72): "lyricist",                   // ©lyr
        "cprt": InfoDictionary.copyright,
        "trkn": InfoDictionary.trackNumber,
        "gnre": InfoDictionary.genre,
        "tmpo": "tempo",
    ]

    /// Reads the children of a `meta` box (after its version and flags when it has them).
    mutating func readMeta(_ p: UnsafeRawBufferPointer, _ body: Range<Int>) throws(AudioError) {
        let range = MP4Boxes.metaChildren(p, body)
        guard let ilst = try MP4Boxes.first("ilst", in: p, range) else { return }
        for item in try MP4Boxes.children(p, ilst.body) {
            try readItem(p, item)
        }
    }

    private mutating func readItem(_ p: UnsafeRawBufferPointer, _ item: MP4Box) throws(AudioError) {
        let children = try MP4Boxes.children(p, item.body)
        if item.type == "----" {
            // A free-form item: mean (a reverse-DNS domain), name, data.
            var name = ""
            var value: [UInt8]?
            for c in children {
                if c.type == "name", c.body.count >= 4 { name = decodeText(bytes(p, (c.body.lowerBound + 4)..<c.body.upperBound)) }
                if c.type == "data", c.body.count >= 8, value == nil { value = bytes(p, (c.body.lowerBound + 8)..<c.body.upperBound) }
            }
            if name == "iTunSMPB", let value { gapless = MP4Metadata.parseSMPB(decodeText(value)) }
            return
        }
        guard let data = children.first(where: { $0.type == "data" }), data.body.count >= 8 else { return }
        let type = mp4be32(p, data.body.lowerBound) & 0x00FF_FFFF
        let payload = bytes(p, (data.body.lowerBound + 8)..<data.body.upperBound)
        if item.type == "covr" {
            if artwork == nil, !payload.isEmpty { artwork = payload }
            return
        }
        guard let key = MP4Metadata.keys[item.type] else { return }
        let text: String?
        switch item.type {
        case "trkn":
            // Implicit type: 2 reserved bytes, the track, the total.
            guard payload.count >= 4 else { return }
            let track = Int(payload[2]) << 8 | Int(payload[3])
            let total = payload.count >= 6 ? Int(payload[4]) << 8 | Int(payload[5]) : 0
            text = total > 0 ? "\(track)/\(total)" : "\(track)"
        case "gnre":
            // An ID3v1 genre number plus one.
            guard payload.count >= 2 else { return }
            let n = Int(payload[0]) << 8 | Int(payload[1])
            text = ID3v1.genre(n - 1)  // gnre counts from 1
        case "tmpo":
            text = MP4Metadata.integer(payload).map(String.init)
        default:
            switch type {
            case 1: text = String(decoding: payload, as: UTF8.self)
            case 2: text = MP4Metadata.utf16BE(payload)
            case 21, 22: text = MP4Metadata.integer(payload).map(String.init)
            default: text = decodeText(payload)
            }
        }
        if let text, !text.isEmpty, info[key] == nil { info[key] = text }
    }

    private func bytes(_ p: UnsafeRawBufferPointer, _ r: Range<Int>) -> [UInt8] { Array(UnsafeRawBufferPointer(rebasing: p[r])) }

    static func integer(_ b: [UInt8]) -> Int64? {
        guard [1, 2, 3, 4, 8].contains(b.count) else { return nil }
        var v: Int64 = b[0] & 0x80 != 0 ? -1 : 0
        for x in b { v = v << 8 | Int64(x) }
        return v
    }

    static func utf16BE(_ b: [UInt8]) -> String {
        var units: [UInt16] = []
        units.reserveCapacity(b.count / 2)
        var i = 0
        while i + 1 < b.count { units.append(UInt16(b[i]) << 8 | UInt16(b[i + 1])); i += 2 }
        return String(decoding: units, as: UTF16.self)
    }

    /// iTunSMPB: " 00000000 PPPPPPPP RRRRRRRR VVVVVVVVVVVVVVVV …", hexadecimal fields of which
    /// the second is the priming, the third the remainder and the fourth the valid frames.
    static func parseSMPB(_ text: String) -> (priming: Int64, remainder: Int64, valid: Int64)? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 4, let p = Int64(fields[1], radix: 16), let r = Int64(fields[2], radix: 16),
              let v = Int64(fields[3], radix: 16), p >= 0, r >= 0, v >= 0, p < 1 << 31, r < 1 << 31, v < 1 << 53
        else { return nil }
        return (p, r, v)
    }

    /// Nero's `chpl` (in moov/udta): version, flags, in version 1 four more bytes, a count,
    /// then per chapter a start in units of 100 ns and a length-prefixed UTF-8 title.
    mutating func readChpl(_ p: UnsafeRawBufferPointer, _ body: Range<Int>) {
        var r = ByteReader(bytes(p, body))
        guard let version = r.readUInt8(), r.skip(3) else { return }
        if version >= 1 { r.skip(4) }
        guard let count = r.readUInt8() else { return }
        var chapters: [Chapter] = []
        for _ in 0..<count {
            guard let start = r.readUInt64(), let length = r.readUInt8(), let title = r.readBytes(Int(length)) else { break }
            chapters.append(Chapter(start: Double(start) / 10_000_000, title: String(decoding: title, as: UTF8.self)))
        }
        neroChapters = chapters
    }
}

/// The title in a QuickTime chapter track's text sample: a 16-bit length, then the text
/// (UTF-8, or UTF-16 after a byte-order mark), then optional boxes such as `encd`.
func mp4ChapterTitle(_ sample: [UInt8]) -> String? {
    guard sample.count >= 2 else { return nil }
    let length = Int(sample[0]) << 8 | Int(sample[1])
    let text = Array(sample[2..<min(sample.count, 2 + length)])
    if text.count >= 2 && text[0] == 0xFE && text[1] == 0xFF { return MP4Metadata.utf16BE(Array(text[2...])) }
    if text.count >= 2 && text[0] == 0xFF && text[1] == 0xFE {
        var units: [UInt16] = []
        var i = 2
        while i + 1 < text.count { units.append(UInt16(text[i + 1]) << 8 | UInt16(text[i])); i += 2 }
        return String(decoding: units, as: UTF16.self)
    }
    return String(decoding: text, as: UTF8.self)
}

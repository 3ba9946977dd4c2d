import TonearmCore

/// Vorbis comments (the `VORBIS_COMMENT` block of FLAC, the comment header of Vorbis,
/// `OpusTags`): a vendor string and `NAME=value` fields, all lengths little-endian.
public struct VorbisComment: Sendable, Equatable {
    public var vendor: String
    /// The fields in file order; names keep their case as written.
    public var fields: [(name: String, value: String)]

    public static func == (a: Self, b: Self) -> Bool {
        a.vendor == b.vendor && a.fields.count == b.fields.count
            && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Reads the comment structure from `r` (without any codec header before it).
    /// Counts and lengths are checked against the bytes that remain before anything is
    /// allocated; a field without `=` is kept with an empty value.
    public static func read(_ r: inout ByteReader) throws(AudioError) -> VorbisComment {
        func fail(_ why: String) -> AudioError { AudioError(.invalidChunk, "Vorbis comment: \(why)") }
        guard let vendorLength = r.readUInt32(.little), let vendorBytes = r.readBytes(Int(vendorLength)) else {
            throw fail("the vendor string runs past the block")
        }
        guard let count = r.readUInt32(.little) else { throw fail("no field count") }
        // Each field takes at least its 4-byte length.
        guard Int64(count) * 4 <= Int64(r.readableBytes) else { throw fail("\(count) fields cannot fit \(r.readableBytes) bytes") }
        var fields: [(String, String)] = []
        fields.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let length = r.readUInt32(.little), let raw = r.readBytes(Int(length)) else {
                throw fail("a field runs past the block")
            }
            let text = String(decoding: raw, as: UTF8.self)
            if let eq = text.firstIndex(of: "=") {
                fields.append((String(text[..<eq]), String(text[text.index(after: eq)...])))
            } else {
                fields.append((text, ""))
            }
        }
        return VorbisComment(vendor: String(decoding: vendorBytes, as: UTF8.self), fields: fields)
    }

    /// The bytes of the structure, for writers.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        let v = Array(vendor.utf8)
        w.write(UInt32(v.count), .little)
        w.write(v)
        w.write(UInt32(fields.count), .little)
        for (name, value) in fields {
            let f = Array((name + "=" + value).utf8)
            w.write(UInt32(f.count), .little)
            w.write(f)
        }
        return w.bytes
    }

    /// The fields as Apple's InfoDictionary keys (title, artist, album, year, track number,
    /// genre, comments, composer, copyright); unknown names are kept lowercased. Repeated
    /// names are joined with "; ".
    public var infoDictionary: InfoDictionary {
        var info = InfoDictionary()
        for (name, value) in fields {
            let upper = name.uppercased()
            if upper == "METADATA_BLOCK_PICTURE" { continue }
            let key = VorbisComment.appleKeys[upper] ?? name.lowercased()
            if let old = info[key] { info[key] = old + "; " + value } else { info[key] = value }
        }
        return info
    }

    /// A comment structure from an InfoDictionary, for writers.
    public init(vendor: String, info: InfoDictionary) {
        self.vendor = vendor
        fields = info.map { (VorbisComment.vorbisNames[$0.key] ?? $0.key.uppercased(), $0.value) }
    }

    public init(vendor: String, fields: [(name: String, value: String)]) {
        self.vendor = vendor
        self.fields = fields
    }

    /// The values of `METADATA_BLOCK_PICTURE` fields (base64 of a FLAC PICTURE block).
    public var pictureBlocks: [String] {
        fields.filter { $0.name.uppercased() == "METADATA_BLOCK_PICTURE" }.map(\.value)
    }

    static let appleKeys: [String: String] = [
        "TITLE": InfoDictionary.title, "ARTIST": InfoDictionary.artist, "ALBUM": InfoDictionary.album,
        "DATE": InfoDictionary.year, "TRACKNUMBER": InfoDictionary.trackNumber, "GENRE": InfoDictionary.genre,
        "COMMENT": InfoDictionary.comments, "DESCRIPTION": InfoDictionary.comments,
        "COMPOSER": InfoDictionary.composer, "COPYRIGHT": InfoDictionary.copyright,
        "ENCODER": InfoDictionary.encodingApplication,
    ]

    /// ``appleKeys`` reversed, one name per key (comments are COMMENT, not DESCRIPTION).
    static let vorbisNames: [String: String] = Dictionary(
        appleKeys.filter { $0.key != "DESCRIPTION" }.map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
}

/// A FLAC PICTURE block (also carried base64-encoded in Vorbis comments).
public struct FLACPicture: Sendable, Equatable {
    public var type: UInt32
    public var mimeType: String
    public var description: String
    public var width: UInt32, height: UInt32, depth: UInt32, colors: UInt32
    public var data: [UInt8]

    /// Reads a PICTURE block body (big-endian fields). Lengths are checked against the bytes
    /// that remain.
    public static func read(_ r: inout ByteReader) throws(AudioError) -> FLACPicture {
        func fail() -> AudioError { AudioError(.invalidChunk, "a PICTURE block runs past its end") }
        guard let type = r.readUInt32(), let mimeLength = r.readUInt32(), let mime = r.readBytes(Int(mimeLength)),
              let descLength = r.readUInt32(), let desc = r.readBytes(Int(descLength)),
              let width = r.readUInt32(), let height = r.readUInt32(), let depth = r.readUInt32(),
              let colors = r.readUInt32(), let length = r.readUInt32(), let data = r.readBytes(Int(length))
        else { throw fail() }
        return FLACPicture(type: type, mimeType: decodeText(mime), description: String(decoding: desc, as: UTF8.self),
                           width: width, height: height, depth: depth, colors: colors, data: data)
    }
}

/// Base64 (RFC 4648) decoding, for pictures in Vorbis comments. Returns nil on bad input.
public func decodeBase64(_ text: String) -> [UInt8]? {
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count * 3 / 4)
    var buffer: UInt32 = 0, bits = 0
    for c in text.utf8 {
        let v: UInt32
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a") + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0") + 52)
        case UInt8(ascii: "+"): v = 62
        case UInt8(ascii: "/"): v = 63
        case UInt8(ascii: "="), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
        default: return nil
        }
        buffer = buffer << 6 | v
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
        }
    }
    return out
}

import TonearmCore

/// ID3v2 tags (versions 2.2, 2.3 and 2.4), as they lead MP3 and ADTS streams.
///
/// The 10-byte header is `ID3`, the major and minor version, flags and a 28-bit
/// "syncsafe" size (7 bits per byte) of what follows the header, not counting a 2.4 footer.
/// Read here: unsynchronisation (the whole tag in 2.2/2.3, per frame in 2.4), the extended
/// header (skipped), the footer, and the frames that map to Apple's InfoDictionary keys,
/// plus APIC/PIC pictures. Compressed and encrypted frames are skipped.
public enum ID3v2 {
    public static let headerSize = 10

    /// The size of the whole tag (header, body and footer) when `b` begins with a valid
    /// ID3v2 header, else nil.
    public static func tagSize(_ b: UnsafeRawBufferPointer) -> Int64? {
        guard b.count >= headerSize, b[0] == 0x49, b[1] == 0x44, b[2] == 0x33, b[3] != 0xFF, b[4] != 0xFF,
              b[6] < 0x80, b[7] < 0x80, b[8] < 0x80, b[9] < 0x80 else { return nil }
        let size = Int64(b[6]) << 21 | Int64(b[7]) << 14 | Int64(b[8]) << 7 | Int64(b[9])
        let footer: Int64 = b[3] >= 4 && b[5] & 0x10 != 0 ? 10 : 0
        return Int64(headerSize) + size + footer
    }

    /// What a tag holds.
    public struct Tag: Sendable, Equatable {
        public var majorVersion: Int
        public var info = InfoDictionary()
        /// Pictures in tag order: the APIC picture type and the image bytes.
        public var pictures: [(type: UInt8, mimeType: String, data: [UInt8])] = []

        public static func == (a: Tag, b: Tag) -> Bool {
            a.majorVersion == b.majorVersion && a.info == b.info && a.pictures.count == b.pictures.count
                && zip(a.pictures, b.pictures).allSatisfy { $0.type == $1.type && $0.mimeType == $1.mimeType && $0.data == $1.data }
        }

        /// The front cover (picture type 3), else the first picture.
        public var artwork: [UInt8]? { (pictures.first { $0.type == 3 } ?? pictures.first)?.data }
    }

    /// Reads a whole tag (header included); nil when it is not one this reader understands.
    public static func parse(_ raw: UnsafeRawBufferPointer) -> Tag? {
        guard let total = tagSize(raw) else { return nil }
        let major = Int(raw[3]), flags = raw[5]
        guard (2...4).contains(major) else { return nil }
        let bodyEnd = Int(min(Int64(raw.count), total - (major >= 4 && flags & 0x10 != 0 ? 10 : 0)))
        guard bodyEnd >= headerSize else { return nil }
        var body = Array(raw[headerSize..<bodyEnd])
        if major == 2 && flags & 0x40 != 0 { return Tag(majorVersion: major) }  // 2.2 compression: no scheme was ever defined
        let tagUnsync = flags & 0x80 != 0
        if tagUnsync && major < 4 { body = removeUnsynchronisation(body[...]) }
        var pos = 0
        if major >= 3 && flags & 0x40 != 0, body.count >= 4 {
            // Extended header: 2.3 gives its size without the 4 size bytes, 2.4 a syncsafe size with them.
            if major == 3 {
                pos = 4 + Int(be32(body, 0))
            } else {
                pos = syncsafe(body, 0)
            }
            if pos < 0 || pos > body.count { return Tag(majorVersion: major) }
        }
        var tag = Tag(majorVersion: major)
        let headerLength = major == 2 ? 6 : 10
        while pos + headerLength <= body.count {
            let idBytes = body[pos..<pos + (major == 2 ? 3 : 4)]
            guard idBytes.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }) else { break }  // padding or junk
            let id = String(decoding: idBytes, as: UTF8.self)
            var size: Int
            var formatFlags: UInt8 = 0
            switch major {
            case 2:
                size = Int(body[pos + 3]) << 16 | Int(body[pos + 4]) << 8 | Int(body[pos + 5])
            case 3:
                size = Int(be32(body, pos + 4))
                formatFlags = body[pos + 9]
            default:
                // 2.4 sizes are syncsafe; some writers (old iTunes) put plain integers there.
                let plain = Int(be32(body, pos + 4))
                size = body[pos + 4..<pos + 8].allSatisfy({ $0 < 0x80 }) ? syncsafe(body, pos + 4) : plain
                if size != plain && !frameFollows(body, at: pos + headerLength + size) && frameFollows(body, at: pos + headerLength + plain) {
                    size = plain
                }
                formatFlags = body[pos + 9]
            }
            let dataStart = pos + headerLength
            guard size >= 0, dataStart + size <= body.count else { break }
            pos = dataStart + size
            var data = body[dataStart..<dataStart + size]
            if major == 3 {
                if formatFlags & 0xC0 != 0 { continue }  // compressed or encrypted
                if formatFlags & 0x20 != 0 { data = data.dropFirst() }  // group identifier
            } else if major == 4 {
                if formatFlags & 0x0C != 0 { continue }  // compressed or encrypted
                if formatFlags & 0x40 != 0 { data = data.dropFirst() }  // group identifier
                if formatFlags & 0x01 != 0 { data = data.dropFirst(4) }  // data length indicator
                if formatFlags & 0x02 != 0 || tagUnsync { data = removeUnsynchronisation(data)[...] }
            }
            take(id: id, data: data, into: &tag)
        }
        return tag
    }

    /// Reads a tag into the file's properties: the info keys (replacing what is there when
    /// `overwrite`, else only adding what is missing) and the artwork.
    public static func read(_ raw: UnsafeRawBufferPointer, into p: inout FileProperties, overwrite: Bool = true) {
        guard let tag = parse(raw) else { return }
        for (key, value) in tag.info where overwrite || p.info[key] == nil { p.info[key] = value }
        if let art = tag.artwork, overwrite || p.albumArtwork == nil { p.albumArtwork = art }
    }

    // MARK: Frames

    /// Apple's InfoDictionary key for a text frame.
    static func infoKey(_ id: String) -> String? {
        switch id {
        case "TIT2", "TT2": return InfoDictionary.title
        case "TPE1", "TP1": return InfoDictionary.artist
        case "TALB", "TAL": return InfoDictionary.album
        case "TRCK", "TRK": return InfoDictionary.trackNumber
        case "TYER", "TYE", "TDRC": return InfoDictionary.year
        case "TCON", "TCO": return InfoDictionary.genre
        case "TCOM", "TCM": return InfoDictionary.composer
        case "TCOP", "TCR": return InfoDictionary.copyright
        case "TSSE", "TSS": return InfoDictionary.encodingApplication
        default: return nil
        }
    }

    static func take(id: String, data: ArraySlice<UInt8>, into tag: inout Tag) {
        guard let encoding = data.first else { return }
        let rest = data.dropFirst()
        switch id {
        case "COMM", "COM":
            // Encoding, language (3), a short description, then the text.
            guard tag.info[InfoDictionary.comments] == nil, rest.count >= 3 else { return }
            let (description, afterDescription) = terminated(rest.dropFirst(3), encoding: encoding)
            // iTunes keeps its own data in comments named iTunNORM, iTunSMPB, …
            guard !description.hasPrefix("iTun") else { return }
            let text = decodeStrings(afterDescription, encoding: encoding).joined(separator: "; ")
            if !text.isEmpty { tag.info[InfoDictionary.comments] = text }
        case "APIC":
            // Encoding, MIME type (Latin-1, terminated), picture type, description, data.
            guard let zero = rest.firstIndex(of: 0) else { return }
            let mime = latin1(rest[rest.startIndex..<zero])
            let afterMime = rest[(zero + 1)...]
            guard let type = afterMime.first else { return }
            let (_, image) = terminated(afterMime.dropFirst(), encoding: encoding)
            if !image.isEmpty { tag.pictures.append((type, mime, Array(image))) }
        case "PIC":
            // Encoding, image format (3 characters), picture type, description, data.
            guard rest.count >= 4 else { return }
            let format = latin1(rest.prefix(3))
            let type = rest[rest.startIndex + 3]
            let (_, image) = terminated(rest.dropFirst(4), encoding: encoding)
            let mime = format.uppercased() == "PNG" ? "image/png" : format.uppercased() == "JPG" ? "image/jpeg" : format
            if !image.isEmpty { tag.pictures.append((type, mime, Array(image))) }
        default:
            guard let key = infoKey(id), tag.info[key] == nil else { return }
            var values = decodeStrings(rest, encoding: encoding).filter { !$0.isEmpty }
            if key == InfoDictionary.genre { values = values.map(genreName) }
            if !values.isEmpty { tag.info[key] = values.joined(separator: "; ") }
        }
    }

    /// A genre as text: "(13)", "13" or "(13)Pop" name ID3v1 genres; "(RX)" and "(CR)" are Remix and Cover.
    static func genreName(_ raw: String) -> String {
        var s = Substring(raw)
        if s.hasPrefix("("), let close = s.firstIndex(of: ")") {
            let inside = s[s.index(after: s.startIndex)..<close]
            let after = s[s.index(after: close)...]
            if !after.isEmpty && !after.hasPrefix("(") { return String(after) }
            if inside == "RX" { return "Remix" }
            if inside == "CR" { return "Cover" }
            s = inside
        }
        if let n = Int(s), let name = ID3v1.genre(n) { return name }
        return raw
    }

    // MARK: Text

    /// The strings of a text field, split at the encoding's terminator.
    static func decodeStrings(_ data: ArraySlice<UInt8>, encoding: UInt8) -> [String] {
        var out: [String] = []
        var rest = data
        while !rest.isEmpty {
            let (s, after) = terminated(rest, encoding: encoding)
            out.append(s)
            if after.count == rest.count { break }
            rest = after
        }
        while out.last == "" { out.removeLast() }
        return out
    }

    /// One terminated string and what follows its terminator (all of `data` when there is none).
    static func terminated(_ data: ArraySlice<UInt8>, encoding: UInt8) -> (String, ArraySlice<UInt8>) {
        let wide = encoding == 1 || encoding == 2
        var end = data.endIndex, next = data.endIndex
        if wide {
            var i = data.startIndex
            while i + 1 < data.endIndex {
                if data[i] == 0 && data[i + 1] == 0 { end = i; next = i + 2; break }
                i += 2
            }
        } else if let zero = data.firstIndex(of: 0) {
            end = zero
            next = zero + 1
        }
        return (decode(data[data.startIndex..<end], encoding: encoding), data[next...])
    }

    /// Text in one of ID3's four encodings: 0 Latin-1, 1 UTF-16 with a byte-order mark,
    /// 2 UTF-16 big-endian, 3 UTF-8.
    static func decode(_ data: ArraySlice<UInt8>, encoding: UInt8) -> String {
        switch encoding {
        case 1, 2:
            var bigEndian = encoding == 2
            var bytes = data
            if bytes.count >= 2 {
                let a = bytes[bytes.startIndex], b = bytes[bytes.startIndex + 1]
                if a == 0xFF && b == 0xFE { bigEndian = false; bytes = bytes.dropFirst(2) }
                else if a == 0xFE && b == 0xFF { bigEndian = true; bytes = bytes.dropFirst(2) }
            }
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var i = bytes.startIndex
            while i + 1 < bytes.endIndex {
                let hi = bigEndian ? bytes[i] : bytes[i + 1], lo = bigEndian ? bytes[i + 1] : bytes[i]
                units.append(UInt16(hi) << 8 | UInt16(lo))
                i += 2
            }
            return String(decoding: units, as: UTF16.self)
        case 3:
            return String(decoding: data, as: UTF8.self)
        default:
            return latin1(data)
        }
    }

    static func latin1<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var s = String.UnicodeScalarView()
        for b in bytes { s.append(Unicode.Scalar(b)) }
        return String(s)
    }

    // MARK: Bytes

    /// Undoes unsynchronisation: every 0x00 that follows a 0xFF was inserted by the writer.
    static func removeUnsynchronisation(_ data: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count)
        var previous: UInt8 = 0
        for b in data {
            if !(previous == 0xFF && b == 0) { out.append(b) }
            previous = b
        }
        return out
    }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        guard i >= 0, i + 4 <= b.count else { return 0 }
        return UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    static func syncsafe(_ b: [UInt8], _ i: Int) -> Int {
        guard i >= 0, i + 4 <= b.count else { return 0 }
        return Int(b[i] & 0x7F) << 21 | Int(b[i + 1] & 0x7F) << 14 | Int(b[i + 2] & 0x7F) << 7 | Int(b[i + 3] & 0x7F)
    }

    /// True when a 2.4 frame header (or padding, or the end) lies at `i`.
    static func frameFollows(_ b: [UInt8], at i: Int) -> Bool {
        if i == b.count { return true }
        guard i >= 0, i + 10 <= b.count else { return false }
        if b[i] == 0 { return true }
        return b[i..<i + 4].allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}

/// ID3v1 and ID3v1.1: 128 bytes at the end of the file, `TAG` then fixed Latin-1 fields.
public enum ID3v1 {
    public static let size = 128

    /// The fields as info keys; nil when the bytes are not a tag.
    public static func parse(_ b: UnsafeRawBufferPointer) -> InfoDictionary? {
        guard b.count >= size, b[0] == 0x54, b[1] == 0x41, b[2] == 0x47 else { return nil }
        func field(_ start: Int, _ length: Int) -> String {
            var end = start + length
            if let zero = (start..<end).first(where: { b[$0] == 0 }) { end = zero }
            var s = ID3v2.latin1((start..<end).map { b[$0] })
            while s.last == " " { s.removeLast() }
            return s
        }
        var info = InfoDictionary()
        func set(_ key: String, _ value: String) { if !value.isEmpty { info[key] = value } }
        set(InfoDictionary.title, field(3, 30))
        set(InfoDictionary.artist, field(33, 30))
        set(InfoDictionary.album, field(63, 30))
        set(InfoDictionary.year, field(93, 4))
        // ID3v1.1: a zero at byte 28 of the comment and a track number at byte 29.
        if b[125] == 0 && b[126] != 0 {
            set(InfoDictionary.comments, field(97, 28))
            info[InfoDictionary.trackNumber] = String(b[126])
        } else {
            set(InfoDictionary.comments, field(97, 30))
        }
        if let name = genre(Int(b[127])) { info[InfoDictionary.genre] = name }
        return info
    }

    /// Adds the tag's fields that the properties do not have yet (an ID3v2 tag wins).
    public static func read(_ b: UnsafeRawBufferPointer, into p: inout FileProperties) {
        guard let info = parse(b) else { return }
        for (key, value) in info where p.info[key] == nil { p.info[key] = value }
    }

    /// The name of an ID3v1 genre number: the 80 of the ID3v1 list and Winamp's additions.
    public static func genre(_ n: Int) -> String? {
        n >= 0 && n < genres.count ? genres[n] : nil
    }

    static let genres: [String] = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz", "Metal",
        "New Age", "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno", "Industrial",
        "Alternative", "Ska", "Death Metal", "Pranks", "Soundtrack", "Euro-Techno", "Ambient", "Trip-Hop", "Vocal", "Jazz+Funk",
        "Fusion", "Trance", "Classical", "Instrumental", "Acid", "House", "Game", "Sound Clip", "Gospel", "Noise",
        "AlternRock", "Bass", "Soul", "Punk", "Space", "Meditative", "Instrumental Pop", "Instrumental Rock", "Ethnic", "Gothic",
        "Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk", "Eurodance", "Dream", "Southern Rock", "Comedy", "Cult", "Gangsta",
        "Top 40", "Christian Rap", "Pop/Funk", "Jungle", "Native American", "Cabaret", "New Wave", "Psychadelic", "Rave", "Showtunes",
        "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro", "Musical", "Rock & Roll", "Hard Rock",
        "Folk", "Folk-Rock", "National Folk", "Swing", "Fast Fusion", "Bebob", "Latin", "Revival", "Celtic", "Bluegrass",
        "Avantgarde", "Gothic Rock", "Progressive Rock", "Psychedelic Rock", "Symphonic Rock", "Slow Rock", "Big Band", "Chorus",
        "Easy Listening", "Acoustic", "Humour", "Speech", "Chanson", "Opera", "Chamber Music", "Sonata", "Symphony", "Booty Bass",
        "Primus", "Porn Groove", "Satire", "Slow Jam", "Club", "Tango", "Samba", "Folklore", "Ballad", "Power Ballad",
        "Rhythmic Soul", "Freestyle", "Duet", "Punk Rock", "Drum Solo", "A capella", "Euro-House", "Dance Hall",
    ]
}

import TonearmCore

/// APEv2 (and APEv1) tags, as they end MP3 files: an optional 32-byte header, the items,
/// then a 32-byte footer. Header and footer are alike: `APETAGEX`, the version (1000 or
/// 2000), the size of items and footer, the item count and flags (bit 31: the tag has a
/// header, bit 29: this is the header), all little-endian. Each item is a value size,
/// flags (bits 1–2: 0 UTF-8 text, 1 binary, 2 external), a NUL-terminated key and the value.
public enum APETag {
    public static let headerSize = 32
    /// Items beyond this count are not read.
    public static let maximumItems = 1024

    public struct Header: Sendable, Equatable {
        public var version: UInt32
        /// Bytes of the items and the footer (not the header).
        public var size: Int64
        public var itemCount: UInt32
        public var flags: UInt32
        public var isHeader: Bool { flags & (1 << 29) != 0 }
        public var hasHeader: Bool { flags & (1 << 31) != 0 }

        /// Reads a header or footer; nil when the 32 bytes are not one.
        public init?(_ b: UnsafeRawBufferPointer) {
            guard b.count >= APETag.headerSize, Array(b[0..<8]) == Array("APETAGEX".utf8) else { return nil }
            func le32(_ i: Int) -> UInt32 { UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24 }
            version = le32(8)
            size = Int64(le32(12))
            itemCount = le32(16)
            flags = le32(20)
            guard size >= Int64(APETag.headerSize), version == 1000 || version == 2000 else { return nil }
            // APEv1 has no header: its footer never claims to be one.
            if version == 1000 { flags &= ~(UInt32(1) << 29) }
        }
    }

    /// The items as info keys, and the front cover when there is one.
    public static func parseItems(_ b: UnsafeRawBufferPointer, count: UInt32) -> (info: InfoDictionary, cover: [UInt8]?) {
        var info = InfoDictionary()
        var cover: [UInt8]?
        var pos = 0
        var n = 0
        while pos + 8 < b.count && n < Int(min(count, UInt32(maximumItems))) {
            n += 1
            let size = Int(UInt32(b[pos]) | UInt32(b[pos + 1]) << 8 | UInt32(b[pos + 2]) << 16 | UInt32(b[pos + 3]) << 24)
            let flags = UInt32(b[pos + 4]) | UInt32(b[pos + 5]) << 8 | UInt32(b[pos + 6]) << 16 | UInt32(b[pos + 7]) << 24
            var k = pos + 8
            while k < b.count && b[k] != 0 { k += 1 }
            guard k < b.count else { break }
            let key = String(decoding: UnsafeRawBufferPointer(rebasing: b[(pos + 8)..<k]), as: UTF8.self)
            let valueStart = k + 1
            guard size >= 0, valueStart + size <= b.count else { break }
            let value = UnsafeRawBufferPointer(rebasing: b[valueStart..<valueStart + size])
            pos = valueStart + size
            let kind = flags >> 1 & 3
            if kind == 1 {
                // Binary: cover art is a file name, a NUL, then the image.
                if key.lowercased() == "cover art (front)", cover == nil, let zero = value.firstIndex(of: 0) {
                    cover = Array(value[(zero + 1)...])
                }
                continue
            }
            guard kind == 0, let mapped = infoKey(key) else { continue }
            // Several values are separated by NULs.
            let text = value.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: "; ")
            if !text.isEmpty && info[mapped] == nil { info[mapped] = text }
        }
        return (info, cover)
    }

    static func infoKey(_ key: String) -> String? {
        switch key.lowercased() {
        case "title": return InfoDictionary.title
        case "artist": return InfoDictionary.artist
        case "album": return InfoDictionary.album
        case "year": return InfoDictionary.year
        case "track": return InfoDictionary.trackNumber
        case "genre": return InfoDictionary.genre
        case "comment": return InfoDictionary.comments
        case "composer": return InfoDictionary.composer
        case "copyright": return InfoDictionary.copyright
        default: return nil
        }
    }

    /// Reads a whole tag that begins with its header; adds what the properties lack.
    public static func read(_ b: UnsafeRawBufferPointer, into p: inout FileProperties) {
        guard let h = Header(b), h.isHeader, b.count >= headerSize + Int(h.size) else { return }
        let items = UnsafeRawBufferPointer(rebasing: b[headerSize..<(headerSize + Int(h.size) - headerSize)])
        merge(parseItems(items, count: h.itemCount), into: &p)
    }

    /// Reads the items of a tag found by its footer; `items` holds the items and the footer.
    public static func readItems(_ items: UnsafeRawBufferPointer, footer: UnsafeRawBufferPointer, into p: inout FileProperties) {
        guard let h = Header(footer), items.count >= headerSize else { return }
        merge(parseItems(UnsafeRawBufferPointer(rebasing: items[0..<(items.count - headerSize)]), count: h.itemCount), into: &p)
    }

    static func merge(_ found: (info: InfoDictionary, cover: [UInt8]?), into p: inout FileProperties) {
        for (key, value) in found.info where p.info[key] == nil { p.info[key] = value }
        if p.albumArtwork == nil, let cover = found.cover { p.albumArtwork = cover }
    }
}

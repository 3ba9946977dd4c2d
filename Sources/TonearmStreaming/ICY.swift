import TonearmCore

/// What a SHOUTcast or Icecast server says about its stream in the response headers
/// (`icy-name`, `icy-genre`, `icy-br`, `icy-description`, `icy-url`, `icy-metaint`).
public struct ICYHeaders: Sendable, Hashable {
    public var name: String?
    public var genre: String?
    /// Bit rate in kbit/s, as the server announces it.
    public var bitRate: Int?
    public var description: String?
    public var url: String?
    /// Audio bytes between two metadata blocks; nil when the server interleaves none.
    public var metaInterval: Int?

    /// Reads the ICY fields of a response's headers (names in any case). Values are decoded
    /// as UTF-8, or in `fallback` when they are not valid UTF-8.
    public init(headers: [(name: String, value: [UInt8])], fallback: LegacyTextEncoding = .automatic) {
        for (rawName, rawValue) in headers {
            let value = decodeText(rawValue, fallback: fallback).trimmingSpaces
            switch rawName.lowercased() {
            case "icy-name": name = value
            case "icy-genre": genre = value
            case "icy-br": bitRate = Int(value.split(separator: ",").first.map(String.init) ?? value)
            case "icy-description": description = value
            case "icy-url": url = value
            case "icy-metaint": metaInterval = Int(value).flatMap { $0 > 0 ? $0 : nil }
            default: break
            }
        }
    }

    /// The same from headers already decoded as text.
    public init(headers: [String: String]) {
        self.init(headers: headers.map { (name: $0.key, value: Array($0.value.utf8)) })
    }
}

/// One ICY metadata block: `StreamTitle='Artist - Title';StreamUrl='…';`.
public struct ICYMetadata: Sendable, Hashable {
    /// Every key and value, in order.
    public var fields: [(key: String, value: String)]

    /// The title now playing (`StreamTitle`).
    public var streamTitle: String? { self["StreamTitle"] }
    /// The URL sent with it (`StreamUrl`).
    public var streamURL: String? { self["StreamUrl"] }

    public subscript(key: String) -> String? {
        fields.first { $0.key.lowercased() == key.lowercased() }?.value
    }

    /// Parses a block's text (its NUL padding included). Values end at a quote followed by a
    /// semicolon, so a title such as `Guns N' Roses - Don't Cry` survives. Text that is not
    /// UTF-8 is decoded in `fallback`, so that Cyrillic titles are not lost.
    public init(bytes: [UInt8], fallback: LegacyTextEncoding = .automatic) {
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        let text = Array(bytes[..<end])
        var fields: [(key: String, value: String)] = []
        var i = 0
        while i < text.count {
            while i < text.count && (text[i] == 0x20 || text[i] == 0x3B || text[i] == 0x0A || text[i] == 0x0D) { i += 1 }
            guard let eq = text[i...].firstIndex(of: 0x3D) else { break }               // '='
            let key = decodeText(text[i..<eq], fallback: .latin1).trimmingSpaces
            var j = eq + 1
            let value: ArraySlice<UInt8>
            if j < text.count && (text[j] == 0x27 || text[j] == 0x22) {                  // quoted
                let quote = text[j]
                j += 1
                var close = j
                var found: Int?
                while close < text.count {
                    if text[close] == quote && (close + 1 == text.count || text[close + 1] == 0x3B) { found = close; break }
                    close += 1
                }
                let stop = found ?? text.count
                value = text[j..<stop]
                i = min(text.count, stop + 2)
            } else {
                let stop = text[j...].firstIndex(of: 0x3B) ?? text.count                 // ';'
                value = text[j..<stop]
                i = stop + 1
            }
            if !key.isEmpty { fields.append((key, decodeText(value, fallback: fallback))) }
        }
        self.fields = fields
    }

    public static func == (a: ICYMetadata, b: ICYMetadata) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into h: inout Hasher) {
        for f in fields { h.combine(f.key); h.combine(f.value) }
    }
}

/// Strips the metadata blocks an ICY server interleaves with the audio when asked with
/// `Icy-MetaData: 1`: after every `metaInterval` audio bytes comes one length byte L and
/// L × 16 bytes of metadata. Feed the response body in any chunks; the audio comes out
/// byte-exact with no metadata byte in it, whatever the cut.
public struct ICYDemuxer: Sendable {
    /// Audio bytes between two metadata blocks (`icy-metaint`).
    public let metaInterval: Int
    /// How text that is not UTF-8 is decoded.
    public var fallback: LegacyTextEncoding = .automatic
    /// The largest interval accepted: servers use 8 KiB to 64 KiB.
    public static let maximumInterval = 1 << 20

    private enum State: Sendable {
        case audio(left: Int)
        case length
        case metadata(left: Int)
    }
    private var state: State
    private var block: [UInt8] = []
    /// Metadata bytes seen so far (length bytes included), for accounting.
    public private(set) var metadataBytes: Int64 = 0

    /// 'fmt?' for an interval outside 1 … `maximumInterval`.
    public init(metaInterval: Int) throws(AudioError) {
        guard metaInterval > 0 && metaInterval <= Self.maximumInterval else {
            throw AudioError(.unsupportedDataFormat, "icy-metaint \(metaInterval) is outside 1 to \(Self.maximumInterval)")
        }
        self.metaInterval = metaInterval
        state = .audio(left: metaInterval)
    }

    /// Splits `bytes`: runs of audio go to `audio` (slices of the input, in order), each whole
    /// metadata block that is not empty to `metadata`.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, audio: (UnsafeRawBufferPointer) -> Void,
                              metadata: (ICYMetadata) -> Void)
    {
        var at = 0
        while at < bytes.count {
            switch state {
            case .audio(let left):
                let n = min(left, bytes.count - at)
                audio(UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)]))
                at += n
                state = left == n ? .length : .audio(left: left - n)
            case .length:
                let length = Int(bytes[at]) * 16
                at += 1
                metadataBytes += 1
                block.removeAll(keepingCapacity: true)
                state = length == 0 ? .audio(left: metaInterval) : .metadata(left: length)
            case .metadata(let left):
                let n = min(left, bytes.count - at)
                block.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)]))
                at += n
                metadataBytes += Int64(n)
                if left == n {
                    let parsed = ICYMetadata(bytes: block, fallback: fallback)
                    if !parsed.fields.isEmpty { metadata(parsed) }
                    state = .audio(left: metaInterval)
                } else {
                    state = .metadata(left: left - n)
                }
            }
        }
    }

    /// The same for an array.
    public mutating func feed(_ bytes: [UInt8], audio: (UnsafeRawBufferPointer) -> Void, metadata: (ICYMetadata) -> Void) {
        bytes.withUnsafeBytes { feed($0, audio: audio, metadata: metadata) }
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeLast() }
        return String(s)
    }
}

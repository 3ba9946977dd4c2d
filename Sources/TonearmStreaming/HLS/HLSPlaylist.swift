import Foundation
import TonearmCore

/// An HTTP Live Streaming playlist (RFC 8216): a master playlist that lists variants and
/// renditions, or a media playlist that lists segments.
///
/// The parser keeps what an audio client needs and ignores every other tag, as the RFC asks
/// of clients. It never fails on an unknown tag or attribute; it fails on a text that
/// does not begin with `#EXTM3U` or a media playlist without `EXT-X-TARGETDURATION`
/// ('dta?'). At most ``maximumSegments`` segments and ``maximumVariants`` variants are read
/// ('insz' beyond).
public enum HLSPlaylist: Sendable, Equatable {
    case master(HLSMasterPlaylist)
    case media(HLSMediaPlaylist)

    /// Segments read from one media playlist, at most.
    public static let maximumSegments = 100_000
    /// Variants and renditions read from one master playlist, at most.
    public static let maximumVariants = 1000

    /// Parses a playlist fetched from `url` (relative URIs are resolved against it).
    public static func parse(_ bytes: [UInt8], url: String) throws(AudioError) -> HLSPlaylist {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        // RFC 8216 §4.1: UTF-8, no BOM; legacy bytes are read as Latin-1 rather than refused.
        let text = decodeText(body, fallback: .latin1)
        var lines: [Substring] = []
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
            if !trimmed.isEmpty { lines.append(trimmed) }
        }
        guard lines.first.map({ $0.hasPrefix("#EXTM3U") }) == true else {
            throw AudioError(.invalidFile, "\(url) is not an HLS playlist (no #EXTM3U)")
        }
        let isMaster = lines.contains { $0.hasPrefix("#EXT-X-STREAM-INF:") || $0.hasPrefix("#EXT-X-MEDIA:") }
        return isMaster ? .master(try parseMaster(lines, url: url)) : .media(try parseMedia(lines, url: url))
    }

    /// Whether a playlist's text is an HLS one (a media or master playlist), rather than an
    /// M3U that lists streams: it has a tag only HLS uses.
    public static func isHLS(_ bytes: [UInt8]) -> Bool {
        let text = decodeText(bytes.prefix(65536), fallback: .latin1)
        return ["#EXT-X-TARGETDURATION", "#EXT-X-STREAM-INF", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-MEDIA:"].contains { text.contains($0) }
    }

    // MARK: Master

    private static func parseMaster(_ lines: [Substring], url: String) throws(AudioError) -> HLSMasterPlaylist {
        var master = HLSMasterPlaylist()
        var pending: HLSAttributes?
        for line in lines {
            if line.hasPrefix("#") {
                if let value = tagValue(line, "#EXT-X-STREAM-INF:") {
                    pending = HLSAttributes(value)
                } else if let value = tagValue(line, "#EXT-X-MEDIA:") {
                    let a = HLSAttributes(value)
                    guard let type = a["TYPE"], let group = a["GROUP-ID"] else { continue }
                    guard master.renditions.count < maximumVariants else { throw tooMany("renditions", url) }
                    master.renditions.append(HLSRendition(
                        type: type, groupID: group, name: a["NAME"] ?? "", language: a["LANGUAGE"],
                        url: a["URI"].map { Playlist.resolve($0, against: url) },
                        isDefault: a["DEFAULT"] == "YES", autoselect: a["AUTOSELECT"] == "YES",
                        channels: a["CHANNELS"]))
                } else if line.hasPrefix("#EXT-X-INDEPENDENT-SEGMENTS") {
                    master.independentSegments = true
                }
                continue
            }
            // A URI line: the variant the last EXT-X-STREAM-INF described.
            guard let a = pending else { continue }
            pending = nil
            guard master.variants.count < maximumVariants else { throw tooMany("variants", url) }
            master.variants.append(HLSVariant(
                url: Playlist.resolve(String(line), against: url),
                bandwidth: a.integer("BANDWIDTH").map { Int(clamping: $0) } ?? 0,
                averageBandwidth: a.integer("AVERAGE-BANDWIDTH").map { Int(clamping: $0) },
                codecs: a["CODECS"].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: " ") }.filter { !$0.isEmpty } } ?? [],
                audioGroup: a["AUDIO"], hasVideo: a["RESOLUTION"] != nil || a["VIDEO"] != nil))
        }
        guard !master.variants.isEmpty || master.renditions.contains(where: { $0.url != nil }) else {
            throw AudioError(.invalidFile, "the HLS master playlist \(url) lists no variant")
        }
        return master
    }

    // MARK: Media

    private static func parseMedia(_ lines: [Substring], url: String) throws(AudioError) -> HLSMediaPlaylist {
        var playlist = HLSMediaPlaylist()
        var targetDuration: Double?
        var sequence: Int64 = 0
        var firstSequenceSet = false
        var discontinuitySequence = 0
        // What the tags before the next URI line say about it.
        var duration: Double?
        var title: String?
        var discontinuity = false
        var byteRange: (length: Int64, offset: Int64?)?
        var programDate: Double?
        var isGap = false
        // What carries on from segment to segment.
        var key: HLSKey?
        var map: HLSMap?
        var nextRangeStart: [String: Int64] = [:]
        for line in lines {
            if !line.hasPrefix("#") {
                guard let d = duration else { continue }  // a URI with no EXTINF is not a segment
                guard playlist.segments.count < maximumSegments else { throw tooMany("segments", url) }
                if !firstSequenceSet { firstSequenceSet = true; playlist.mediaSequence = sequence }
                let segmentURL = Playlist.resolve(String(line), against: url)
                var range: HLSByteRange?
                if let r = byteRange {
                    // Without an offset, the range follows the previous one of the same resource.
                    let start = r.offset ?? nextRangeStart[segmentURL] ?? 0
                    range = HLSByteRange(offset: start, length: r.length)
                    nextRangeStart[segmentURL] = start &+ r.length
                }
                playlist.segments.append(HLSSegment(
                    url: segmentURL, duration: d, title: title, sequence: sequence,
                    discontinuitySequence: discontinuitySequence, discontinuity: discontinuity, byteRange: range,
                    key: key, map: map, programDateTime: programDate, isGap: isGap))
                sequence &+= 1
                // PROGRAM-DATE-TIME runs on through the segments that do not restate it.
                programDate = programDate.map { $0 + d }
                duration = nil; title = nil; discontinuity = false; byteRange = nil; isGap = false
                continue
            }
            if let v = tagValue(line, "#EXTINF:") {
                let comma = v.firstIndex(of: ",")
                let number = v[..<(comma ?? v.endIndex)].trimmingCharacters(in: " ")
                guard let d = Double(number), d.isFinite, d >= 0 else { continue }
                duration = d
                title = comma.map { String(v[v.index(after: $0)...]).trimmingSpaces }.flatMap { $0.isEmpty ? nil : $0 }
            } else if let v = tagValue(line, "#EXT-X-TARGETDURATION:") {
                if let d = Double(v.trimmingCharacters(in: " ")), d.isFinite, d >= 0 { targetDuration = d }
            } else if let v = tagValue(line, "#EXT-X-MEDIA-SEQUENCE:") {
                if let n = Int64(v.trimmingCharacters(in: " ")), n >= 0, playlist.segments.isEmpty { sequence = n }
            } else if let v = tagValue(line, "#EXT-X-DISCONTINUITY-SEQUENCE:") {
                if let n = Int(v.trimmingCharacters(in: " ")), n >= 0, playlist.segments.isEmpty {
                    discontinuitySequence = n
                    playlist.discontinuitySequence = n
                }
            } else if line.hasPrefix("#EXT-X-DISCONTINUITY") {
                discontinuity = true
                if !playlist.segments.isEmpty || duration != nil { discontinuitySequence &+= 1 }
            } else if line.hasPrefix("#EXT-X-ENDLIST") {
                playlist.hasEndList = true
            } else if let v = tagValue(line, "#EXT-X-PLAYLIST-TYPE:") {
                playlist.playlistType = v.trimmingCharacters(in: " ").uppercased()
            } else if let v = tagValue(line, "#EXT-X-BYTERANGE:") {
                byteRange = parseByteRange(v)
            } else if let v = tagValue(line, "#EXT-X-PROGRAM-DATE-TIME:") {
                programDate = parseDate(v.trimmingCharacters(in: " "))
            } else if let v = tagValue(line, "#EXT-X-KEY:") {
                let a = HLSAttributes(v)
                let method = HLSKey.Method(a["METHOD"] ?? "NONE")
                key = method == .none ? nil : HLSKey(
                    method: method, url: a["URI"].map { Playlist.resolve($0, against: url) }, iv: a["IV"].flatMap(parseIV),
                    keyFormat: a["KEYFORMAT"] ?? "identity")
            } else if let v = tagValue(line, "#EXT-X-MAP:") {
                let a = HLSAttributes(v)
                map = a["URI"].map { uri in
                    HLSMap(url: Playlist.resolve(uri, against: url),
                           byteRange: a["BYTERANGE"].flatMap(parseByteRange).map { HLSByteRange(offset: $0.offset ?? 0, length: $0.length) })
                }
            } else if line.hasPrefix("#EXT-X-GAP") {
                isGap = true
            } else if let v = tagValue(line, "#EXT-X-VERSION:") {
                playlist.version = Int(v.trimmingCharacters(in: " ")) ?? 1
            }
        }
        guard let targetDuration else {
            throw AudioError(.invalidFile, "the HLS media playlist \(url) has no EXT-X-TARGETDURATION")
        }
        playlist.targetDuration = targetDuration
        if !firstSequenceSet { playlist.mediaSequence = sequence }
        return playlist
    }

    private static func tagValue(_ line: Substring, _ tag: String) -> Substring? {
        line.hasPrefix(tag) ? line.dropFirst(tag.count) : nil
    }

    private static func tooMany(_ what: String, _ url: String) -> AudioError {
        AudioError(.invalidInputSize, "the HLS playlist \(url) lists more \(what) than Tonearm reads", category: .limit)
    }

    /// `n[@o]`.
    static func parseByteRange<S: StringProtocol>(_ text: S) -> (length: Int64, offset: Int64?)? {
        let parts = text.trimmingCharacters(in: " ").split(separator: "@", maxSplits: 1)
        guard let first = parts.first, let length = Int64(first), length > 0 else { return nil }
        if parts.count == 2 {
            guard let offset = Int64(parts[1]), offset >= 0 else { return nil }
            return (length, offset)
        }
        return (length, nil)
    }

    /// `0x` and 32 hex digits (fewer are zero-extended on the left, as a number).
    static func parseIV(_ text: String) -> [UInt8]? {
        var hex = Substring(text)
        guard hex.lowercased().hasPrefix("0x") else { return nil }
        hex = hex.dropFirst(2)
        guard !hex.isEmpty, hex.count <= 32 else { return nil }
        let padded = String(repeating: "0", count: 32 - hex.count) + hex
        var out: [UInt8] = []
        var i = padded.startIndex
        while i < padded.endIndex {
            let j = padded.index(i, offsetBy: 2)
            guard let byte = UInt8(padded[i..<j], radix: 16) else { return nil }
            out.append(byte)
            i = j
        }
        return out
    }

    /// An ISO 8601 date-time (`2026-12-02T10:00:00.000Z`, `…+01:00`) as seconds since 1970.
    static func parseDate(_ text: String) -> Double? {
        let chars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= chars.count else { return nil }
            var n = 0
            for c in chars[range] {
                guard c >= 0x30 && c <= 0x39 else { return nil }
                n = n * 10 + Int(c - 0x30)
            }
            return n
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month),
              (1...31).contains(day), chars.count >= 19, chars[10] == UInt8(ascii: "T") || chars[10] == UInt8(ascii: " "),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < chars.count && chars[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            while i < chars.count, chars[i] >= 0x30 && chars[i] <= 0x39 {
                fraction += Double(chars[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
        }
        var offset = 0
        if i < chars.count && (chars[i] == UInt8(ascii: "+") || chars[i] == UInt8(ascii: "-")) {
            let sign = chars[i] == UInt8(ascii: "+") ? 1 : -1
            guard let h = number((i + 1)..<(i + 3)) else { return nil }
            let m = i + 3 < chars.count && chars[i + 3] == UInt8(ascii: ":") ? number((i + 4)..<(i + 6)) : number((i + 3)..<(i + 5))
            offset = sign * (h * 3600 + (m ?? 0) * 60)
        }
        // Days from the civil date (proleptic Gregorian).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }
}

/// A master playlist: the variants of one presentation and their alternative renditions.
public struct HLSMasterPlaylist: Sendable, Equatable {
    public var variants: [HLSVariant] = []
    public var renditions: [HLSRendition] = []
    /// `EXT-X-INDEPENDENT-SEGMENTS`: every segment starts where a decoder can.
    public var independentSegments = false
    public init() {}

    /// The variants Tonearm can play: those whose CODECS it decodes (a variant that names no
    /// codecs is kept), audio-only ones first when there are any, in the playlist's order.
    public var playableVariants: [HLSVariant] {
        let playable = variants.filter { $0.codecs.isEmpty || $0.codecs.contains(where: HLSCodecs.isDecodable) }
        let audioOnly = playable.filter { !$0.hasVideo && !$0.codecs.contains(where: HLSCodecs.isVideo) }
        return audioOnly.isEmpty ? playable : audioOnly
    }

    /// The audio rendition to play for a variant: in its AUDIO group, the DEFAULT one, else
    /// the first; nil when the group has none with a URI (the audio is in the variant).
    public func audioRendition(for variant: HLSVariant, language: String? = nil) -> HLSRendition? {
        guard let group = variant.audioGroup else { return nil }
        let candidates = renditions.filter { $0.type == "AUDIO" && $0.groupID == group && $0.url != nil }
        if let language, let match = candidates.first(where: { $0.language?.lowercased().hasPrefix(language.lowercased()) == true }) {
            return match
        }
        return candidates.first(where: \.isDefault) ?? candidates.first
    }
}

/// `EXT-X-STREAM-INF`: one variant stream.
public struct HLSVariant: Sendable, Equatable {
    public var url: String
    /// Peak bits per second.
    public var bandwidth: Int
    public var averageBandwidth: Int?
    /// RFC 6381 codec names (`mp4a.40.2`, `avc1.64001f`…).
    public var codecs: [String]
    /// The GROUP-ID of the `EXT-X-MEDIA TYPE=AUDIO` renditions that go with it.
    public var audioGroup: String?
    /// It names a RESOLUTION or a VIDEO group: it carries video.
    public var hasVideo: Bool

    public init(url: String, bandwidth: Int, averageBandwidth: Int? = nil, codecs: [String] = [], audioGroup: String? = nil,
                hasVideo: Bool = false)
    {
        self.url = url
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.codecs = codecs
        self.audioGroup = audioGroup
        self.hasVideo = hasVideo
    }
}

/// `EXT-X-MEDIA`: an alternative rendition.
public struct HLSRendition: Sendable, Equatable {
    /// AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS.
    public var type: String
    public var groupID: String
    public var name: String
    public var language: String?
    /// nil when the rendition is carried in the variant itself.
    public var url: String?
    public var isDefault: Bool
    public var autoselect: Bool
    public var channels: String?
}

/// A media playlist: the segments, in order, and what says how to follow them.
public struct HLSMediaPlaylist: Sendable, Equatable {
    /// `EXT-X-TARGETDURATION`, seconds.
    public var targetDuration: Double = 0
    /// The media sequence number of the first segment listed.
    public var mediaSequence: Int64 = 0
    /// `EXT-X-DISCONTINUITY-SEQUENCE`.
    public var discontinuitySequence = 0
    public var segments: [HLSSegment] = []
    /// `EXT-X-ENDLIST`: no segment will be added.
    public var hasEndList = false
    /// `EXT-X-PLAYLIST-TYPE`: VOD or EVENT.
    public var playlistType: String?
    public var version = 1
    public init() {}

    /// The sum of the segments' durations.
    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }
    /// Whether segments may still be added (no ENDLIST).
    public var isLive: Bool { !hasEndList }
}

/// One media segment.
public struct HLSSegment: Sendable, Equatable {
    public var url: String
    /// `EXTINF`, seconds.
    public var duration: Double
    public var title: String?
    /// Its media sequence number.
    public var sequence: Int64
    /// The discontinuity sequence number it belongs to.
    public var discontinuitySequence: Int
    /// `EXT-X-DISCONTINUITY` precedes it: its timestamps, and perhaps its format, start anew.
    public var discontinuity: Bool
    public var byteRange: HLSByteRange?
    /// The key its bytes are encrypted with (nil: in the clear).
    public var key: HLSKey?
    /// `EXT-X-MAP`: the initialisation section (an fMP4 segment's `moov`).
    public var map: HLSMap?
    /// `EXT-X-PROGRAM-DATE-TIME` (or the last one plus the durations since), seconds since 1970.
    public var programDateTime: Double?
    /// `EXT-X-GAP`: the segment is missing; its time is silence.
    public var isGap: Bool
}

/// `EXT-X-BYTERANGE`: the bytes of a resource a segment is.
public struct HLSByteRange: Sendable, Equatable, Hashable {
    public var offset: Int64
    public var length: Int64
    public init(offset: Int64, length: Int64) {
        self.offset = offset
        self.length = length
    }
}

/// `EXT-X-MAP`: the initialisation section the segments after it need.
public struct HLSMap: Sendable, Equatable, Hashable {
    public var url: String
    public var byteRange: HLSByteRange?
    public init(url: String, byteRange: HLSByteRange? = nil) {
        self.url = url
        self.byteRange = byteRange
    }
}

/// `EXT-X-KEY`.
public struct HLSKey: Sendable, Equatable, Hashable {
    public enum Method: Sendable, Equatable, Hashable {
        case none, aes128, sampleAES, other(String)
        init(_ text: String) {
            switch text.uppercased() {
            case "NONE": self = .none
            case "AES-128": self = .aes128
            case "SAMPLE-AES", "SAMPLE-AES-CTR", "SAMPLE-AES-CENC": self = .sampleAES
            default: self = .other(text)
            }
        }
    }
    public var method: Method
    public var url: String?
    /// 16 bytes; nil: the IV is the segment's media sequence number.
    public var iv: [UInt8]?
    public var keyFormat: String

    /// The IV for a segment: the tag's, or the media sequence number, big-endian in 16 bytes.
    public func iv(forSequence sequence: Int64) -> [UInt8] {
        if let iv { return iv }
        var out = [UInt8](repeating: 0, count: 16)
        var n = UInt64(bitPattern: sequence)
        for i in stride(from: 15, through: 8, by: -1) {
            out[i] = UInt8(n & 0xFF)
            n >>= 8
        }
        return out
    }
}

/// An attribute list: `NAME=value,NAME="quoted, value",NAME=0x1F`.
struct HLSAttributes {
    private var values: [String: String] = [:]

    init<S: StringProtocol>(_ text: S) {
        var i = text.startIndex
        while i < text.endIndex {
            while i < text.endIndex, text[i] == " " || text[i] == "," { i = text.index(after: i) }
            guard let eq = text[i...].firstIndex(of: "=") else { break }
            let name = text[i..<eq].trimmingCharacters(in: " ").uppercased()
            var j = text.index(after: eq)
            var value: String
            if j < text.endIndex, text[j] == "\"" {
                j = text.index(after: j)
                let close = text[j...].firstIndex(of: "\"") ?? text.endIndex
                value = String(text[j..<close])
                j = close < text.endIndex ? text.index(after: close) : close
                if let comma = text[j...].firstIndex(of: ",") { j = comma } else { j = text.endIndex }
            } else {
                let comma = text[j...].firstIndex(of: ",") ?? text.endIndex
                value = text[j..<comma].trimmingCharacters(in: " ")
                j = comma
            }
            if values[name] == nil { values[name] = value }
            i = j
        }
    }

    subscript(_ name: String) -> String? { values[name] }

    func integer(_ name: String) -> Int64? { values[name].flatMap { Int64($0) } }
}

/// The RFC 6381 codec names of HLS's CODECS attribute that Tonearm decodes.
public enum HLSCodecs {
    /// AAC (LC, HE, HE v2 and the other mp4a.40 object types the AAC decoder takes), MP3,
    /// MPEG audio layers 1 and 2, Opus, FLAC, ALAC, Vorbis.
    public static func isDecodable(_ codec: String) -> Bool {
        let c = codec.lowercased()
        if c.hasPrefix("mp4a.40.") {
            return ["2", "5", "29", "34", "32", "33"].contains(String(c.dropFirst(8)))
        }
        return ["mp4a.6b", "mp4a.69", "mp3", "opus", "flac", "fl32", "alac", "vorbis"].contains(c)
    }

    /// A video codec: a variant that names one carries video as well.
    public static func isVideo(_ codec: String) -> Bool {
        let c = codec.lowercased()
        return ["avc1", "avc3", "hvc1", "hev1", "av01", "vp09", "vp08", "dvh1", "dvhe", "mp4v"].contains { c.hasPrefix($0) }
    }
}

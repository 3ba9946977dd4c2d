import TonearmCore

/// One stream a playlist lists.
public struct PlaylistEntry: Sendable, Hashable {
    /// The URL, made absolute against the playlist's own when it was relative.
    public var url: String
    /// `TitleN=` or `#EXTINF`'s title.
    public var title: String?
    /// Seconds; nil when not given or given as -1 (a live stream).
    public var duration: Double?

    public init(url: String, title: String? = nil, duration: Double? = nil) {
        self.url = url
        self.title = title
        self.duration = duration
    }
}

/// The playlist types internet radio uses to point at its streams.
public enum PlaylistFormat: String, Sendable, Hashable {
    case pls, m3u, m3u8

    /// The type a Content-Type names (`audio/x-scpls`, `audio/x-mpegurl`,
    /// `application/vnd.apple.mpegurl`…), or failing that the URL's extension.
    public init?(contentType: String?, pathExtension: String?) {
        let type = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: " ").lowercased() }
        switch type {
        case "audio/x-scpls", "audio/scpls", "application/pls+xml": self = .pls
        case "audio/mpegurl", "audio/x-mpegurl": self = .m3u
        case "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl8": self = .m3u8
        default:
            switch pathExtension?.lowercased() {
            case "pls": self = .pls
            case "m3u": self = .m3u
            case "m3u8": self = .m3u8
            default: return nil
            }
        }
    }
}

/// PLS, M3U and M3U8 playlists that list stream URLs (an HLS playlist of media segments is
/// refused with 'typ?': ``HLSPlaylist`` reads it, and ``HLSStream`` plays it).
public enum Playlist {
    /// At most this many entries are read.
    public static let maximumEntries = 10_000

    /// Parses a playlist; `format` nil guesses from the text (`[playlist]` is PLS). Relative
    /// URLs are resolved against `baseURL`. 'dta?' when it lists nothing.
    public static func parse(_ bytes: [UInt8], format: PlaylistFormat? = nil, baseURL: String? = nil) throws(AudioError)
        -> [PlaylistEntry]
    {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        let text = decodeText(body, fallback: format == .m3u8 ? .latin1 : .automatic)
        let lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            .map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
        let isPLS = format == .pls || (format == nil && lines.first?.lowercased() == "[playlist]")
        var entries = isPLS ? parsePLS(lines) : try parseM3U(lines)
        guard !entries.isEmpty else {
            throw AudioError(.invalidFile, "the \(isPLS ? "PLS" : "M3U") playlist lists no stream")
        }
        if let baseURL {
            for i in entries.indices { entries[i].url = resolve(entries[i].url, against: baseURL) }
        }
        return entries
    }

    private static func parsePLS(_ lines: [String]) -> [PlaylistEntry] {
        var files: [Int: String] = [:], titles: [Int: String] = [:], lengths: [Int: Double] = [:]
        for line in lines {
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].lowercased().trimmingCharacters(in: " ")
            let value = String(line[line.index(after: eq)...]).trimmingSpaces
            for (prefix, _) in [("file", 0), ("title", 1), ("length", 2)] where key.hasPrefix(prefix) {
                guard let n = Int(key.dropFirst(prefix.count)), n >= 0, n <= maximumEntries else { continue }
                switch prefix {
                case "file": files[n] = value
                case "title": titles[n] = value
                default: if let d = Double(value), d >= 0 { lengths[n] = d }
                }
            }
        }
        return files.keys.sorted().filter { !files[$0]!.isEmpty }.map {
            PlaylistEntry(url: files[$0]!, title: titles[$0].flatMap { $0.isEmpty ? nil : $0 }, duration: lengths[$0])
        }
    }

    private static func parseM3U(_ lines: [String]) throws(AudioError) -> [PlaylistEntry] {
        var entries: [PlaylistEntry] = []
        var title: String?
        var duration: Double?
        for line in lines {
            if line.hasPrefix("#") {
                let upper = line.uppercased()
                if upper.hasPrefix("#EXT-X-TARGETDURATION") || upper.hasPrefix("#EXT-X-MEDIA-SEQUENCE")
                    || upper.hasPrefix("#EXT-X-STREAM-INF")
                {
                    throw AudioError(.unsupportedFileType, "an HLS playlist (\(line.prefix(40))): read it with HLSPlaylist and HLSStream")
                }
                if upper.hasPrefix("#EXTINF:") {
                    let info = line.dropFirst(8)
                    let comma = info.firstIndex(of: ",")
                    duration = Double(info[..<(comma ?? info.endIndex)].trimmingCharacters(in: " ")).flatMap { $0 >= 0 ? $0 : nil }
                    title = comma.map { String(info[info.index(after: $0)...]).trimmingSpaces }.flatMap { $0.isEmpty ? nil : $0 }
                }
                continue
            }
            entries.append(PlaylistEntry(url: line, title: title, duration: duration))
            title = nil
            duration = nil
            if entries.count == maximumEntries { break }
        }
        return entries
    }

    /// `reference` made absolute against `base`: kept when it has a scheme; from the host when
    /// it starts with `/`; otherwise beside the base's last path component.
    public static func resolve(_ reference: String, against base: String) -> String {
        if reference.contains("://") { return reference }
        guard let schemeEnd = base.firstRange(of: "://") else { return reference }
        let afterScheme = base[schemeEnd.upperBound...]
        let hostEnd = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        if reference.hasPrefix("//") { return base[..<schemeEnd.lowerBound] + ":" + reference }
        if reference.hasPrefix("/") { return base[..<hostEnd] + reference }
        var directory = base[..<(base.firstIndex(of: "?") ?? base.endIndex)]
        if hostEnd == afterScheme.endIndex { return directory + "/" + reference }
        directory = directory[...directory.lastIndex(of: "/")!]
        return directory + reference
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}

import TonearmCore
import TonearmFormats

/// What an HTTP response said about the body it carries.
public struct HTTPResponseInfo: Sendable {
    /// The status code: 200, 206 for a range, or ICY's 200.
    public var statusCode: Int
    /// The URL that answered, after redirects.
    public var url: String
    /// Every header, names in lower case.
    public var headers: [String: String]

    public init(statusCode: Int, url: String, headers: [String: String]) {
        self.statusCode = statusCode
        self.url = url
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
    }

    /// The MIME type without its parameters, in lower case (`audio/mpeg`).
    public var mimeType: String? {
        guard let raw = headers["content-type"] else { return nil }
        let type = raw.split(separator: ";").first.map { String($0).trimmingSpaces.lowercased() } ?? ""
        return type.isEmpty ? nil : type
    }

    /// The length of this response's body, when the server sent one.
    public var contentLength: Int64? { headers["content-length"].flatMap { Int64($0.trimmingSpaces) }.flatMap { $0 >= 0 ? $0 : nil } }

    /// `Content-Range: bytes first-last/total`, when the response is a range.
    public var contentRange: (first: Int64, last: Int64, total: Int64?)? {
        guard let raw = headers["content-range"]?.trimmingSpaces, raw.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = raw.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        let range = parts.first?.split(separator: "-", maxSplits: 1) ?? []
        guard range.count == 2, let first = Int64(range[0].trimmingSpaces), let last = Int64(range[1].trimmingSpaces),
              first >= 0, last >= first else { return nil }
        let total = parts.count == 2 ? Int64(parts[1].trimmingSpaces) : nil
        return (first, last, total)
    }

    /// The size of the whole resource: the total of a range, or the length of a whole body.
    public var resourceLength: Int64? {
        if statusCode == 206 { return contentRange?.total }
        return contentLength
    }

    /// True when the server says it serves byte ranges (`Accept-Ranges: bytes`, or a 206).
    public var acceptsRanges: Bool {
        statusCode == 206 || headers["accept-ranges"]?.lowercased().contains("bytes") == true
    }

    /// The SHOUTcast/Icecast fields (`icy-name`, `icy-metaint`…).
    public var icy: ICYHeaders { ICYHeaders(headers: headers) }

    /// The file name extension of the URL's path, lower case, when there is one.
    public var pathExtension: String? { URLParts.pathExtension(of: url) }

    /// The file type the response names: its Content-Type, failing that the URL's extension.
    /// A generic type (`application/octet-stream`, `text/html`…) names none, so the bytes decide.
    public var fileTypeHint: AudioFileTypeID? {
        if let mime = mimeType, let type = FormatRegistry.types(forMIMEType: mime).first { return type }
        if let ext = pathExtension, let type = FormatRegistry.types(forExtension: ext).first { return type }
        return nil
    }
}

/// Small URL helpers that need no Foundation.
package enum URLParts {
    /// `mp3` for `http://host/a/b.MP3?x=1`; nil when the last path component has no dot.
    static func pathExtension(of url: String) -> String? {
        var path = Substring(url)
        if let scheme = path.firstRange(of: "://") { path = path[scheme.upperBound...] }
        if let slash = path.firstIndex(of: "/") { path = path[slash...] } else { return nil }
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        return FileSource.pathExtension(of: String(path))
    }
}

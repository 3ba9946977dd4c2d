import TonearmCore

/// What Tonearm knows about one file type: its names, and how to parse and write it.
public struct FileTypeInfo: Sendable {
    public let type: AudioFileTypeID
    /// A display name, as Apple's FileTypeName ('ftnm').
    public let name: String
    public let extensions: [String]
    public let mimeTypes: [String]
    public let utis: [String]
    public let hfsTypeCodes: [FourCC]
    /// Data formats a writer of this type accepts, as afconvert -hf lists them.
    public let writableFormats: [AudioFormatID]
    /// Recognises the type from a file's first bytes (at most ``magicBytes``):
    /// `.match` (possibly of a sibling type, as RIFF answers RF64), `.noMatch`, or
    /// `.needMore` while too few bytes have arrived. Nil for a type without magic.
    public let magic: (@Sendable (_ head: [UInt8], _ isEndOfStream: Bool) -> ProbeResult)?
    /// True when the type's parser reads (or skips) ID3v2 tags in front of its data, as
    /// MP3, AAC ADTS, LOAS, AC-3 and FLAC files may have them: the probe looks past such
    /// tags and offers what follows only to these types.
    public let readsLeadingID3v2: Bool
    /// The most bytes the magic may ask for with `.needMore`: ``FormatRegistry/probeSize``,
    /// or up to ``FormatRegistry/longProbeSize`` for a magic that must see several packets
    /// (MPEG-TS).
    public let magicBytes: Int
    /// True for the types libavformat reads (with the FFmpeg trait), false for Tonearm's own.
    public let usesFFmpeg: Bool
    let makeParser: @Sendable () -> FormatParser
    let makeWriter: (@Sendable (StreamDescription) throws(AudioError) -> FormatWriter)?

    public var isReadable: Bool { true }
    public var isWritable: Bool { makeWriter != nil }

    public init(type: AudioFileTypeID, name: String, extensions: [String], mimeTypes: [String], utis: [String] = [],
                hfsTypeCodes: [FourCC] = [], writableFormats: [AudioFormatID] = [],
                magic: (@Sendable (_ head: [UInt8], _ isEndOfStream: Bool) -> ProbeResult)? = nil,
                readsLeadingID3v2: Bool = false, magicBytes: Int = FormatRegistry.probeSize, usesFFmpeg: Bool = false,
                parser: @escaping @Sendable () -> FormatParser,
                writer: (@Sendable (StreamDescription) throws(AudioError) -> FormatWriter)? = nil)
    {
        self.type = type
        self.name = name
        self.extensions = extensions
        self.mimeTypes = mimeTypes
        self.utis = utis
        self.hfsTypeCodes = hfsTypeCodes
        self.writableFormats = writableFormats
        self.magic = magic
        self.readsLeadingID3v2 = readsLeadingID3v2
        self.magicBytes = min(max(magicBytes, FormatRegistry.probeSize), FormatRegistry.longProbeSize)
        self.usesFFmpeg = usesFFmpeg
        makeParser = parser
        makeWriter = writer
    }
}

/// The result of looking at a file's first bytes.
public enum ProbeResult: Equatable, Sendable {
    case match(AudioFileTypeID)
    case noMatch
    /// Too few bytes to tell yet.
    case needMore
}

/// All the file types Tonearm reads and writes, and the probe that picks one.
/// This is the source of Apple's global info (seed 003).
public enum FormatRegistry {
    /// Every known type, readable ones first in Apple's order of preference.
    public static var all: [FileTypeInfo] { registered }

    public static func info(for type: AudioFileTypeID) -> FileTypeInfo? { registered.first { $0.type == type } }

    public static var readableTypes: [AudioFileTypeID] { registered.filter(\.isReadable).map(\.type) }
    public static var writableTypes: [AudioFileTypeID] { registered.filter(\.isWritable).map(\.type) }

    public static func types(forExtension ext: String) -> [AudioFileTypeID] {
        let e = ext.lowercased().trimmingPrefix(".")
        return registered.filter { $0.extensions.contains(String(e)) }.map(\.type)
    }

    public static func types(forMIMEType mime: String) -> [AudioFileTypeID] {
        let m = mime.lowercased().split(separator: ";").first.map { String($0).trimmingSpaces() } ?? ""
        return registered.filter { $0.mimeTypes.contains(m) }.map(\.type)
    }

    public static func types(forUTI uti: String) -> [AudioFileTypeID] {
        registered.filter { $0.utis.contains(uti) }.map(\.type)
    }

    public static func types(forHFSTypeCode code: FourCC) -> [AudioFileTypeID] {
        registered.filter { $0.hfsTypeCodes.contains(code) }.map(\.type)
    }

    /// Bytes the probe wants to see to be sure (after any leading ID3v2 tags).
    public static let probeSize = 64
    /// Bytes every probe sees before a stream is refused.
    public static let minimumProbeSize = 12
    /// The most bytes any magic may ask for (``FileTypeInfo/magicBytes``; MPEG-TS's sees
    /// four packets of up to 204 bytes): the random-access probe reads this many, and a push
    /// stream's probe waits for as many as a magic that says `.needMore` declared.
    public static let longProbeSize = 4 * 204 + 4
    /// The most bytes of leading ID3v2 tags a push stream holds while it probes what follows
    /// them (16 MiB, the largest tag the framed parsers read). A longer run of tags is
    /// dropped as it arrives, and the parser starts at the first byte after it.
    public static let maximumHeldTagBytes: Int64 = 16 << 20
    /// The most leading ID3v2 tags the random-access probe walks through.
    static let maximumLeadingTags = 1 << 16

    /// Identifies a file from its first bytes (magic numbers only), asking each registered
    /// type in order; the first match wins, but a type that needs more bytes to decide holds
    /// back a later type's match until ``probeSize`` bytes are there.
    ///
    /// ID3v2 tags at the start are skipped by their sizes, and the bytes after them are
    /// offered to the types that read such tags (``FileTypeInfo/readsLeadingID3v2``). While
    /// the tags or the bytes after them are not all in `head`, the answer is `.needMore`;
    /// tags that nothing recognisable follows are taken as MP3, their usual content.
    public static func probe(_ head: [UInt8], isEndOfStream: Bool = false) -> ProbeResult {
        switch contentStart(head, isEndOfStream: isEndOfStream) {
        case nil: return .needMore
        case let at?:
            let content = head[min(head.count, at)...]
            let r = probeContent(content, afterTags: at > 0, isEndOfStream: isEndOfStream || at > head.count)
            return r == .noMatch && at > 0 ? .match(.mp3) : r
        }
    }

    /// What a look at the start of the bytes finds.
    enum LeadingTag: Equatable {
        /// No ID3v2 tag begins here.
        case none
        /// Too few bytes to tell.
        case needMore
        /// An ID3v2 tag of this many bytes (header, body and footer).
        case tag(total: Int64)
    }

    /// Whether an ID3v2 tag begins at the start of `bytes` (ID3v2.4 §3.1: "ID3", two
    /// version bytes that are not 0xFF, flags, and a syncsafe size).
    static func leadingTag(_ bytes: ArraySlice<UInt8>, isEndOfStream: Bool) -> LeadingTag {
        let magic: [UInt8] = [0x49, 0x44, 0x33]
        let k = min(bytes.count, magic.count)
        guard bytes.prefix(k).elementsEqual(magic.prefix(k)) else { return .none }
        guard bytes.count >= ID3v2.headerSize else { return isEndOfStream ? .none : .needMore }
        let total = bytes.withUnsafeBytes { ID3v2.tagSize(UnsafeRawBufferPointer(rebasing: $0[0..<ID3v2.headerSize])) }
        return total.map { .tag(total: $0) } ?? .none
    }

    /// The offset of the first byte after the leading ID3v2 tags of `head`, which may lie
    /// past its end when the stream ends inside a tag; nil while more bytes are needed.
    static func contentStart(_ head: [UInt8], isEndOfStream: Bool) -> Int? {
        var at = 0
        while at < head.count || (at == 0 && !isEndOfStream) {
            switch leadingTag(head[at...], isEndOfStream: isEndOfStream) {
            case .none: return at
            case .needMore: return nil
            case .tag(let total):
                guard Int64(at) + total <= Int64(head.count) else { return isEndOfStream ? head.count + 1 : nil }
                at += Int(total)
            }
        }
        return at
    }

    /// Asks each type's magic about the bytes after the leading tags (all of them when there
    /// were none).
    static func probeContent(_ content: ArraySlice<UInt8>, afterTags: Bool, isEndOfStream: Bool) -> ProbeResult {
        probeContent(content, afterTags: afterTags, isEndOfStream: isEndOfStream, types: registered)
    }

    static func probeContent(_ content: ArraySlice<UInt8>, afterTags: Bool, isEndOfStream: Bool,
                             types: [FileTypeInfo]) -> ProbeResult
    {
        // Every magic gets at least this many bytes before anyone says no.
        if content.count < minimumProbeSize && !isEndOfStream { return .needMore }
        let head = Array(content)
        var wantsMore = false
        var holdUntil = probeSize
        for info in types where !afterTags || info.readsLeadingID3v2 {
            switch info.magic?(head, isEndOfStream) {
            case .match(let t):
                // An earlier type that cannot tell yet may still claim the bytes (FLAC after
                // a tag, before MPEG audio): its answer comes first.
                if wantsMore && !isEndOfStream && head.count < holdUntil { return .needMore }
                return .match(t)
            case .needMore:
                wantsMore = true
                holdUntil = max(holdUntil, info.magicBytes)
            case .noMatch, nil: break
            }
        }
        return wantsMore && !isEndOfStream && head.count < holdUntil ? .needMore : .noMatch
    }

    /// True when `head` has `text`'s bytes at `offset`.
    public static func bytes(_ head: [UInt8], at offset: Int, are text: String) -> Bool {
        let b = Array(text.utf8)
        return head.count >= offset + b.count && head[offset..<offset + b.count].elementsEqual(b)
    }

    /// The magic of a container whose first four bytes name it and whose bytes 8–11 name
    /// the form (RIFF/WAVE, FORM/AIFF): `.needMore` until 12 bytes are there.
    public static func formMagic(_ head: [UInt8], _ isEndOfStream: Bool, _ pairs: [(String, String, AudioFileTypeID)]) -> ProbeResult {
        for (container, form, type) in pairs where bytes(head, at: 0, are: container) {
            if head.count < 12 { return isEndOfStream ? .noMatch : .needMore }
            if bytes(head, at: 8, are: form) { return .match(type) }
        }
        return .noMatch
    }

    /// Picks a type from the first bytes, then from the hints.
    public static func identify(_ head: [UInt8], isEndOfStream: Bool, hint: AudioFileTypeID?, pathExtension: String?,
                                mimeType: String?) -> ProbeResult
    {
        guard let at = contentStart(head, isEndOfStream: isEndOfStream) else { return .needMore }
        return identify(content: head[min(head.count, at)...], afterTags: at > 0, isEndOfStream: isEndOfStream || at > head.count,
                        hint: hint, pathExtension: pathExtension, mimeType: mimeType)
    }

    /// Picks a type from the bytes after the leading ID3v2 tags, then from the hints; tags
    /// that nothing recognisable follows are taken as MP3.
    ///
    /// With the FFmpeg trait, libavformat's probe comes after the hints and before the MPEG
    /// sync scan: it looks at ``ffmpegProbeSize`` bytes (of `longContent` when the caller
    /// read more than `content`), and a push stream waits for them.
    static func identify(content: ArraySlice<UInt8>, afterTags: Bool, isEndOfStream: Bool, hint: AudioFileTypeID?,
                         pathExtension: String?, mimeType: String?, longContent: ArraySlice<UInt8>? = nil) -> ProbeResult
    {
        switch probeContent(content, afterTags: afterTags, isEndOfStream: isEndOfStream) {
        case .match(let t):
            // A hint of a sibling type (WAVE for RF64) does not override the magic.
            return .match(t)
        case .needMore:
            return .needMore
        case .noMatch:
            if let hint, info(for: hint) != nil { return .match(hint) }
            if let ext = pathExtension, let t = types(forExtension: ext).first { return .match(t) }
            if let mime = mimeType, let t = types(forMIMEType: mime).first { return .match(t) }
            if afterTags { return .match(.mp3) }
            #if FFmpeg
            let long = longContent ?? content
            if long.count < ffmpegProbeSize && !isEndOfStream { return .needMore }
            if let t = ffmpegProbe(long.prefix(ffmpegProbeSize), pathExtension: pathExtension) { return .match(t) }
            #endif
            // MPEG audio after junk: the magic sees only the first bytes.
            return mpegSyncScan(content, isEndOfStream: isEndOfStream)
        }
    }

    /// Identifies a seekable source: walks through the leading ID3v2 tags by their sizes
    /// (whatever their size), then probes the bytes after them. Nil for an empty source.
    static func identify(source: MediaSource, hint: AudioFileTypeID?) throws(AudioError) -> ProbeResult? {
        var at: Int64 = 0
        for _ in 0..<maximumLeadingTags {
            let header = try source.read(at: at, count: ID3v2.headerSize)
            guard case .tag(let total) = leadingTag(header[...], isEndOfStream: true) else { break }
            at += total
        }
        #if FFmpeg
        let long = try source.read(at: at, count: max(longProbeSize, ffmpegProbeSize))
        let head = Array(long.prefix(longProbeSize))
        #else
        let head = try source.read(at: at, count: longProbeSize)
        let long = head
        #endif
        if at == 0 && head.isEmpty { return nil }
        let r = identify(content: head[...], afterTags: at > 0, isEndOfStream: true, hint: hint,
                         pathExtension: source.pathExtension, mimeType: source.mimeType, longContent: long[...])
        guard r == .noMatch, head.count >= probeSize else { return r }
        // Nothing knew the first bytes: the MPEG sync scan looks further.
        return mpegSyncScan(try source.read(at: at, count: syncScanSize + 4 * 2881)[...], isEndOfStream: true)
    }

    /// A new parser for a type.
    public static func makeParser(for type: AudioFileTypeID) throws(AudioError) -> FormatParser {
        guard let i = info(for: type) else { throw AudioError(.unsupportedFileType, "file type \(type) is not supported") }
        return i.makeParser()
    }

    /// Behind `lock`: a parser thread may probe while the app registers a type. Readers take
    /// a copy of the list (a retain) and work on that, outside the lock.
    nonisolated(unsafe) private static var types: [FileTypeInfo] = builtinTypes()
    private static let lock = Lock()
    private static var registered: [FileTypeInfo] { lock.withLock { types } }

    /// Adds or replaces a file type. Safe from any thread; best done before files are opened
    /// (for instance at launch), so that every file sees the same types.
    public static func register(_ info: FileTypeInfo) {
        lock.withLock {
            types.removeAll { $0.type == info.type }
            types.append(info)
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

extension StringProtocol {
    func trimmingPrefix(_ p: Character) -> Substring {
        var s = Substring(self)
        if s.first == p { s.removeFirst() }
        return s
    }
}

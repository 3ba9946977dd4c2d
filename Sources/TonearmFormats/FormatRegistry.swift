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
    /// Recognises the type from a file's first bytes (at most ``FormatRegistry/probeSize``):
    /// `.match` (possibly of a sibling type, as RIFF answers RF64), `.noMatch`, or
    /// `.needMore` while too few bytes have arrived. Nil for a type without magic.
    public let magic: (@Sendable (_ head: [UInt8], _ isEndOfStream: Bool) -> ProbeResult)?
    let makeParser: @Sendable () -> FormatParser
    let makeWriter: (@Sendable (StreamDescription) throws(AudioError) -> FormatWriter)?

    public var isReadable: Bool { true }
    public var isWritable: Bool { makeWriter != nil }

    public init(type: AudioFileTypeID, name: String, extensions: [String], mimeTypes: [String], utis: [String] = [],
                hfsTypeCodes: [FourCC] = [], writableFormats: [AudioFormatID] = [],
                magic: (@Sendable (_ head: [UInt8], _ isEndOfStream: Bool) -> ProbeResult)? = nil,
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

    /// Bytes the probe wants to see to be sure.
    public static let probeSize = 64
    /// Bytes every probe sees before a stream is refused.
    public static let minimumProbeSize = 12

    /// Identifies a file from its first bytes (magic numbers only), asking each registered
    /// type in order; the first match wins.
    public static func probe(_ head: [UInt8], isEndOfStream: Bool = false) -> ProbeResult {
        // Every magic gets at least this many bytes before anyone says no.
        if head.count < minimumProbeSize && !isEndOfStream { return .needMore }
        var wantsMore = false
        for info in registered {
            switch info.magic?(head, isEndOfStream) {
            case .match(let t): return .match(t)
            case .needMore: wantsMore = true
            case .noMatch, nil: break
            }
        }
        return wantsMore && !isEndOfStream && head.count < probeSize ? .needMore : .noMatch
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
        switch probe(head, isEndOfStream: isEndOfStream) {
        case .match(let t):
            // A hint of a sibling type (WAVE for RF64) does not override the magic.
            return .match(t)
        case .needMore:
            return .needMore
        case .noMatch:
            if let hint, info(for: hint) != nil { return .match(hint) }
            if let ext = pathExtension, let t = types(forExtension: ext).first { return .match(t) }
            if let mime = mimeType, let t = types(forMIMEType: mime).first { return .match(t) }
            return .noMatch
        }
    }

    /// A new parser for a type.
    public static func makeParser(for type: AudioFileTypeID) throws(AudioError) -> FormatParser {
        guard let i = info(for: type) else { throw AudioError(.unsupportedFileType, "file type \(type) is not supported") }
        return i.makeParser()
    }

    nonisolated(unsafe) private static var registered: [FileTypeInfo] = builtinTypes()

    /// Adds or replaces a file type. Call before any file is opened (for instance at launch).
    public static func register(_ info: FileTypeInfo) {
        registered.removeAll { $0.type == info.type }
        registered.append(info)
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

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
    let makeParser: @Sendable () -> FormatParser
    let makeWriter: (@Sendable (StreamDescription) throws(AudioError) -> FormatWriter)?

    public var isReadable: Bool { true }
    public var isWritable: Bool { makeWriter != nil }

    public init(type: AudioFileTypeID, name: String, extensions: [String], mimeTypes: [String], utis: [String] = [],
                hfsTypeCodes: [FourCC] = [], writableFormats: [AudioFormatID] = [],
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

    /// Identifies a file from its first bytes (magic numbers only).
    public static func probe(_ head: [UInt8], isEndOfStream: Bool = false) -> ProbeResult {
        func at(_ i: Int, _ s: String) -> Bool {
            let b = Array(s.utf8)
            return head.count >= i + b.count && Array(head[i..<i + b.count]) == b
        }
        if head.count < 12 && !isEndOfStream { return .needMore }
        if at(0, "RIFF") || at(0, "RF64") || at(0, "BW64") {
            if at(8, "WAVE") { return .match(at(0, "RIFF") ? .wave : at(0, "RF64") ? .rf64 : .bw64) }
            return .noMatch
        }
        if at(0, "FORM") {
            if at(8, "AIFF") { return .match(.aiff) }
            if at(8, "AIFC") { return .match(.aifc) }
            return .noMatch
        }
        if at(0, "caff") { return .match(.caf) }
        if at(0, ".snd") { return .match(.next) }
        if head.count >= 16 && Array(head[0..<16]) == wave64RIFFGUID { return .match(.wave64) }
        if head.count < 16 && !isEndOfStream && Array(wave64RIFFGUID.prefix(head.count)) == head { return .needMore }
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

    static let wave64RIFFGUID: [UInt8] = [0x72, 0x69, 0x66, 0x66, 0x2E, 0x91, 0xCF, 0x11,
                                          0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]

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

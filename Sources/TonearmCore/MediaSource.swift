/// Where bytes come from: a file, memory, or (later) the network.
///
/// A source that is seekable answers `read(at:into:)` anywhere. One that is not (a live
/// stream) is fed to an ``AudioFileStream`` in order instead.
public protocol MediaSource: AnyObject {
    /// Total size in bytes, when known.
    var size: Int64? { get }
    /// True when `read(at:into:)` may be called at any offset.
    var isSeekable: Bool { get }
    /// The MIME type, when the transport gave one (a type hint for probing).
    var mimeType: String? { get }
    /// The file name extension without the dot, when there is one (a type hint for probing).
    var pathExtension: String? { get }
    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the data.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int
}

extension MediaSource {
    /// Reads up to `count` bytes at `offset` into a new array (shorter at the end of the data).
    public func read(at offset: Int64, count: Int) throws(AudioError) -> [UInt8] {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let n = try out.withMutableBytes { raw throws(AudioError) in try read(at: offset, into: raw) }
        if n < count { out.removeSubrange(n..<count) }
        return out
    }
}

/// A file read with `pread`, a block at a time, never whole.
public final class FileSource: MediaSource {
    public let handle: POSIXFile
    public let size: Int64?
    public var isSeekable: Bool { true }
    public let mimeType: String? = nil
    public let pathExtension: String?

    public init(path: String) throws(AudioError) {
        handle = try POSIXFile(path: path, mode: .read)
        size = try handle.size()
        pathExtension = FileSource.pathExtension(of: path)
    }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        guard offset >= 0 else { throw AudioError(.position, "negative read offset \(offset)") }
        return try handle.read(at: offset, into: buffer)
    }

    /// `wav` for `/a/b.WAV`; nil when the last path component has no dot.
    public static func pathExtension(of path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : ext.lowercased()
    }
}

/// Bytes held in memory.
public final class MemorySource: MediaSource {
    public let bytes: [UInt8]
    public var size: Int64? { Int64(bytes.count) }
    public var isSeekable: Bool { true }
    public let mimeType: String?
    public let pathExtension: String?

    public init(_ bytes: [UInt8], mimeType: String? = nil, pathExtension: String? = nil) {
        self.bytes = bytes
        self.mimeType = mimeType
        self.pathExtension = pathExtension
    }

    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        guard offset >= 0 else { throw AudioError(.position, "negative read offset \(offset)") }
        guard offset < Int64(bytes.count) else { return 0 }
        let start = Int(offset)
        let n = min(buffer.count, bytes.count - start)
        bytes.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + start, byteCount: n)
        }
        return n
    }
}

import TonearmCore

/// Writes a stream's bytes to a file as they are read (the ICY blocks already stripped), and
/// when asked starts a new file at each title change: `show.mp3` becomes `show-001.mp3`,
/// `show-002 Artist - Title.mp3`…
public final class StreamRecorder {
    public let path: String
    public let splitsAtTitles: Bool
    /// The files written so far, in order.
    public private(set) var files: [String] = []
    /// Bytes written, in all files.
    public private(set) var bytesWritten: Int64 = 0

    private var file: POSIXFile?
    private var fileOffset: Int64 = 0
    private var pendingTitles: [(offset: Int64, title: String)] = []
    private var part = 0

    /// Creates the first file at once (so a path that cannot be written fails here).
    public init(path: String, splitsAtTitles: Bool = false) throws(AudioError) {
        self.path = path
        self.splitsAtTitles = splitsAtTitles
        try startFile(title: nil)
    }

    /// A new title begins at this stream offset (the audio byte it precedes).
    public func noteTitle(_ title: String, at offset: Int64) {
        guard splitsAtTitles else { return }
        pendingTitles.append((offset, title))
    }

    /// Appends bytes that begin at stream offset `offset`, splitting at noted titles.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(AudioError) {
        var bytes = bytes
        var offset = offset
        while let next = pendingTitles.first, next.offset < offset + Int64(bytes.count) {
            pendingTitles.removeFirst()
            let cut = Int(max(0, next.offset - offset))
            try append(UnsafeRawBufferPointer(rebasing: bytes[..<cut]))
            bytes = UnsafeRawBufferPointer(rebasing: bytes[cut...])
            offset += Int64(cut)
            // The first title names the first file when nothing was written yet.
            if fileOffset == 0 && part == 1 { try renameFirst(to: next.title) } else { try startFile(title: next.title) }
        }
        try append(bytes)
    }

    public func close() {
        file?.closeNow()
        file = nil
    }

    deinit { close() }

    private func append(_ bytes: UnsafeRawBufferPointer) throws(AudioError) {
        guard !bytes.isEmpty, let file else { return }
        try file.write(bytes, at: fileOffset)
        fileOffset += Int64(bytes.count)
        bytesWritten += Int64(bytes.count)
    }

    private func startFile(title: String?) throws(AudioError) {
        file?.closeNow()
        part += 1
        let name = splitsAtTitles ? Self.partPath(path, part: part, title: title) : path
        file = try POSIXFile(path: name, mode: .create)
        fileOffset = 0
        files.append(name)
    }

    private func renameFirst(to title: String) throws(AudioError) {
        part = 0
        if let old = files.popLast() { file?.closeNow(); file = nil; removeFile(old) }
        try startFile(title: title)
    }

    /// `dir/show-002 Artist - Title.mp3` for part 2 of `dir/show.mp3`.
    static func partPath(_ path: String, part: Int, title: String?) -> String {
        let slash = path.lastIndex(of: "/")
        let nameStart = slash.map { path.index(after: $0) } ?? path.startIndex
        let dot = path[nameStart...].lastIndex(of: ".")
        let stem = String(path[..<(dot ?? path.endIndex)])
        let ext = dot.map { String(path[$0...]) } ?? ""
        let number = String(part)
        let padded = String(repeating: "0", count: max(0, 3 - number.count)) + number
        var cleaned = ""
        for c in (title ?? "").prefix(120) { cleaned.append(c == "/" || c == "\0" || c.isNewline ? "_" : c) }
        let trimmed = cleaned.trimmingSpaces
        return stem + "-" + padded + (trimmed.isEmpty ? "" : " " + trimmed) + ext
    }
}

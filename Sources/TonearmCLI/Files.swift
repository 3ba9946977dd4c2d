#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Tonearm

/// The regular files of a folder, sorted, skipping hidden ones.
func listFiles(_ dir: String) -> [String] {
    guard let d = opendir(dir) else { return [] }
    defer { closedir(d) }
    var names: [String] = []
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        guard !name.hasPrefix(".") else { continue }
        var st = stat()
        let path = dir + "/" + name
        if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { names.append(path) }
    }
    return names.sorted()
}

/// A new folder under /tmp.
func makeDirectory() -> String {
    var template = Array("/tmp/tonearm-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { p in
        guard let r = mkdtemp(p.baseAddress!) else { return "/tmp" }
        return String(cString: r)
    }
}

/// Makes a folder if it is missing (one level).
func ensureDirectory(_ path: String) {
    var st = stat()
    if stat(path, &st) != 0 { _ = mkdir(path, 0o755) }
}

/// Whether `path` exists and is not a regular file or folder: a device such as /dev/null
/// or /dev/stdout, or a FIFO, which is written in place rather than through a temporary file.
func isSpecialFile(_ path: String) -> Bool {
    var st = stat()
    guard stat(path, &st) == 0 else { return false }
    let type = st.st_mode & S_IFMT
    return type != S_IFREG && type != S_IFDIR
}

/// True for an `http:` or `https:` URL given where a file is expected.
func isRemote(_ path: String) -> Bool { URLParts.isHTTP(path) }

/// Opens a file or, for a URL, a remote file read with Range requests.
func openAudioFile(_ path: String) throws(AudioError) -> AudioFile {
    isRemote(path) ? try AudioFile(remote: path) : try AudioFile(path: path)
}

/// The properties of a file or URL. A URL whose server serves no ranges is read through
/// AudioFileStream instead: to its end, or for a live stream (no length) until the format is
/// known.
func audioFileProperties(_ path: String) throws(AudioError) -> FileProperties {
    guard isRemote(path) else {
        let file = try AudioFile(path: path)
        defer { try? file.close() }
        return try file.properties
    }
    do {
        let file = try AudioFile(remote: path)
        defer { try? file.close() }
        return try file.properties
    } catch where error.code == .rangeNotSupported {
        return try streamedProperties(path)
    }
}

/// Reads a URL through AudioFileStream and returns what it learnt.
private func streamedProperties(_ url: String) throws(AudioError) -> FileProperties {
    let stream = HTTPStream(url: url)
    defer { stream.close() }
    let info = try stream.open()
    let live = stream.isLive
    let parser = AudioFileStream(fileTypeHint: info.fileTypeHint, propertyListener: { _, _, _ in }, packets: { _, _, _, _ in })
    var chunk = [UInt8](repeating: 0, count: 32768)
    while true {
        let (n, discontinuity) = try chunk.withMutableBytes { raw throws(AudioError) in try stream.read(into: raw) }
        if n == 0 { try parser.parse(nil); break }
        try parser.parse(chunk[..<n], flags: discontinuity ? .discontinuity : [])
        if live && parser.isReadyToProducePackets { break }
    }
    guard let properties = parser.properties else { throw AudioError(.unsupportedFileType, "\(url) holds no audio Tonearm can read") }
    return properties
}

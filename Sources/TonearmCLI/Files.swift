#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

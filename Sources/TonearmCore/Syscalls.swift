// Every C call of TonearmCore's file I/O goes through this file.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open POSIX file descriptor, closed when the handle goes away.
///
/// `pread` and `pwrite` take an offset, so the handle keeps no position of its own
/// and a reader never loads the whole file.
public final class POSIXFile: @unchecked Sendable {
    public let fd: Int32
    public let path: String
    private var closed = false

    public enum Mode: Sendable { case read, readWrite, create }

    public init(path: String, mode: Mode) throws(AudioError) {
        self.path = path
        let flags: Int32
        switch mode {
        case .read: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .create: flags = O_RDWR | O_CREAT | O_TRUNC
        }
        let fd = open(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXFile.errnoError("cannot open", path: path) }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
            _ = close(fd)
            throw AudioError(.invalidFile, "\(path) is a directory", category: .io)
        }
        self.fd = fd
    }

    deinit { if !closed { _ = close(fd) } }

    public func closeNow() {
        if !closed { _ = close(fd); closed = true }
    }

    /// Current size of the file in bytes.
    public func size() throws(AudioError) -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw POSIXFile.errnoError("cannot stat", path: path) }
        return Int64(st.st_size)
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at end of file).
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        var total = 0
        while total < buffer.count {
            let n = pread(fd, buffer.baseAddress! + total, buffer.count - total, off_t(offset) + off_t(total))
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIXFile.errnoError("read failed", path: path)
            }
            if n == 0 { break }
            total += n
        }
        return total
    }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(AudioError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIXFile.errnoError("write failed", path: path)
            }
            done += n
        }
    }

    public func write(_ bytes: [UInt8], at offset: Int64) throws(AudioError) {
        try bytes.withBytes { raw throws(AudioError) in try write(raw, at: offset) }
    }

    /// Sets the file's length. A device or FIFO (/dev/null) has none to set: nothing happens.
    public func truncate(to size: Int64) throws(AudioError) {
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT != S_IFREG { return }
        guard ftruncate(fd, off_t(size)) == 0 else { throw POSIXFile.errnoError("truncate failed", path: path) }
    }

    static func errnoError(_ what: String, path: String) -> AudioError {
        let e = errno
        let text = strerror(e).map { String(cString: $0) } ?? "errno \(e)"
        switch e {
        case ENOENT: return AudioError(.fileNotFound, "\(what): \(text)", category: .io)
        case EACCES, EPERM, EROFS: return AudioError(.permissions, "\(what): \(text)", category: .io)
        default: return AudioError(.unspecified, "\(what): \(text)", category: .io)
        }
    }
}

/// Whether a path names an existing regular file or directory.
public func fileExists(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0
}

/// Removes a file, ignoring a missing one.
public func removeFile(_ path: String) { _ = unlink(path) }

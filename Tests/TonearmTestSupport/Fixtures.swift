import Tonearm
#if canImport(Glibc)
import Glibc
#endif

/// Where the committed fixtures live: `Tests/Fixtures` of this package.
public let fixturesDirectory: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(2)  // TonearmTestSupport/Fixtures.swift
    return parts.joined(separator: "/") + "/Fixtures"
}()

/// The package's root folder.
public let packageRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()

/// The bytes of a whole file (for tests only; the library never loads whole files).
public func readWholeFile(_ path: String) throws -> [UInt8] {
    let source = try FileSource(path: path)
    return try source.read(at: 0, count: Int(source.size ?? 0))
}

/// Writes bytes to a file (tests only).
public func writeWholeFile(_ path: String, _ bytes: [UInt8]) throws {
    let h = try POSIXFile(path: path, mode: .create)
    try h.write(bytes, at: 0)
    h.closeNow()
}

/// The fixture files of one family folder with the given extensions, sorted by name.
public func fixtureFiles(_ family: String, extensions: [String]? = nil) -> [String] {
    let dir = fixturesDirectory + "/" + family
    guard let d = opendir(dir) else { return [] }
    defer { closedir(d) }
    var names: [String] = []
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        guard !name.hasPrefix("."), !name.hasSuffix(".json") else { continue }
        if let extensions, !extensions.contains(where: { name.hasSuffix("." + $0) }) { continue }
        names.append(dir + "/" + name)
    }
    return names.sorted()
}

/// A fresh temporary directory for a test's output.
public func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/tonearm-test-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { p in
        guard let r = mkdtemp(p.baseAddress!) else { return "/tmp" }
        return String(cString: r)
    }
}

/// The path of a command on PATH, or nil: oracle tests skip when their tool is missing.
public func which(_ tool: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    for dir in path.split(separator: ":") {
        let candidate = "\(dir)/\(tool)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// All packet bytes of the first `count` packets of a file, through AudioFile.
public func readPacketBytes(_ path: String, count: Int) throws -> [UInt8] {
    let file = try AudioFile(path: path)
    return try file.readPacketData(startingAt: 0, count: count).data
}

/// Bytes from a hex string as the goldens store them ("0a1b…"); a stray odd digit is ignored.
public func hexBytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(hex.utf8.count / 2)
    var i = hex.startIndex
    while let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex), i < j {
        if let b = UInt8(hex[i..<j], radix: 16) { out.append(b) }
        i = j
    }
    return out
}

/// A whole file decoded by ExtAudioFile to interleaved samples of `type` (Float, Int16 or
/// Int32) at its own rate and channel count: what the converters and the player render.
public func decodeInterleaved<T: BinaryFloatingPoint & Sendable>(_ path: String, as type: T.Type) throws -> [T] {
    try decodeInterleaved(path, bits: UInt32(MemoryLayout<T>.size * 8), isFloat: true)
}

public func decodeInterleaved<T: FixedWidthInteger & SignedInteger>(_ path: String, as type: T.Type) throws -> [T] {
    try decodeInterleaved(path, bits: UInt32(T.bitWidth), isFloat: false)
}

private func decodeInterleaved<T>(_ path: String, bits: UInt32, isFloat: Bool) throws -> [T] {
    let file = try ExtAudioFile(path: path)
    try file.setClientDataFormat(.pcm(sampleRate: file.fileDataFormat.sampleRate, channels: file.fileDataFormat.channelsPerFrame,
                                      bits: bits, isFloat: isFloat))
    var bytes: [UInt8] = []
    while try file.read(frames: 1 << 16, into: &bytes) > 0 {}
    return bytes.withUnsafeBytes { Array($0.bindMemory(to: T.self)) }
}

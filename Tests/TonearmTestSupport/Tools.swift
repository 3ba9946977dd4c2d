import Foundation

/// Runs a tool and returns its stdout as bytes (tests only). stderr is discarded.
public func runToolData(_ tool: String, _ args: [String]) throws -> [UInt8] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = args
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = Foundation.FileHandle.nullDevice
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return [UInt8](data)
}

/// Runs a tool and returns its stdout as text, trimmed (tests only).
public func runTool(_ tool: String, _ args: [String]) throws -> String {
    String(decoding: try runToolData(tool, args), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A product of this package built beside the test runner (`tonearm`, `queue-player`): the
/// folder of the running executable, and the folders above the test bundle of `testClass`.
/// Nil when none holds an executable of that name.
public func builtExecutable(_ name: String, besideTestsOf testClass: AnyClass) -> String? {
    var dirs: [URL] = []
    if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        dirs.append(URL(fileURLWithPath: exe).deletingLastPathComponent())
    }
    var bundle = Bundle(for: testClass).bundleURL
    for _ in 0..<4 {
        dirs.append(bundle.deletingLastPathComponent())
        bundle = bundle.deletingLastPathComponent()
    }
    return dirs.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

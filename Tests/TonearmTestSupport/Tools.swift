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

import Foundation
import XCTest

/// True when the run promises every oracle tool, server and corpus a test may need: `.ci/run`
/// sets `TONEARM_REQUIRE_ALL=1` (and CI sets `CI=true`). There a missing requirement is a
/// failure, not a skip, so that a test cannot pass by not running.
public var requirementsAreMandatory: Bool {
    let env = ProcessInfo.processInfo.environment
    return env["TONEARM_REQUIRE_ALL"] == "1" || env["CI"] == "true"
}

/// Raised instead of `XCTSkip` when a requirement is missing where the run promised it.
public struct MissingRequirement: Error, CustomStringConvertible {
    public let description: String
}

/// Skips the test (or, on CI, fails it) because `reason` is missing. Every skip for something
/// CI provides goes through here, so that CI can tell a skip it must not allow. `required`
/// makes it a failure off CI too, for the older per-component switches (TONEARM_PULSE_REQUIRED,
/// TONEARM_ICECAST_REQUIRED, TONEARM_TLS_REQUIRED).
public func skipOrFail(_ reason: String, required: Bool = false, file: StaticString = #filePath, line: UInt = #line) -> Error {
    if requirementsAreMandatory || required {
        XCTFail("required on CI but missing: \(reason)", file: file, line: line)
        return MissingRequirement(description: "required on CI but missing: \(reason)")
    }
    return XCTSkip(reason, file: file, line: line)
}

/// The path of `tool` on PATH; skips the test when it is missing (fails on CI).
public func requireTool(_ tool: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    guard let path = which(tool) else { throw skipOrFail("\(tool) is not installed", file: file, line: line) }
    return path
}

/// The shared corpus folder (`../shared/corpus/NAME`); skips when absent (fails on CI).
public func requireCorpus(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let path = packageRoot + "/../shared/corpus/" + name
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw skipOrFail("the corpus \(path) is absent", file: file, line: line)
    }
    return path
}

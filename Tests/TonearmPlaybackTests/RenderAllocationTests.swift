import Foundation
import XCTest

/// The render paths and ExtAudioFile's steady-state reads never allocate: RenderAllocCheck
/// (Tests/RenderAllocCheck) interposes glibc's malloc family, plays each path into a sink that
/// counts the calls the device thread makes between two device writes (and counts the calls
/// a reading thread makes over its reads), and prints the counts. It runs in its own process,
/// so the interposer never touches this one.
final class RenderAllocationTests: XCTestCase {
    /// One line of the harness's output.
    struct Line: Decodable {
        var supported: Bool?
        var build: String?
        var scenario: String?
        var error: String?
        var expectedAllocationsPerRender: Int?
        var expectedFreesPerRender: Int?
        var renders: Int?
        var framesPerRender: Int?
        var audibleRenders: Int?
        var reads: Int?
        var allocations: Int?
        var frees: Int?
        var bytes: Int?
    }

    func testRenderPathsMakeNoHeapCalls() throws {
        #if !os(Linux)
        throw XCTSkip("RenderAllocCheck interposes glibc's malloc: Linux only")
        #else
        let lines = try runHarness()
        guard let header = lines.first, let supported = header.supported else {
            return XCTFail("no header line from RenderAllocCheck")
        }
        guard supported else { throw XCTSkip("the allocation counter interposes glibc's malloc; not available here") }
        let scenarios = lines.dropFirst()
        for s in scenarios {
            let name = s.scenario ?? "?"
            if let error = s.error { XCTFail("\(name): \(error)"); continue }
            if let reads = s.reads {
                // A read path: ExtAudioFile reads in steady state allocate and free nothing.
                XCTAssertGreaterThanOrEqual(reads, 50, name)
                XCTAssertEqual(s.allocations, 0, "\(name): heap allocations in \(reads) reads")
                XCTAssertEqual(s.frees, 0, "\(name): frees in \(reads) reads")
                continue
            }
            let renders = try XCTUnwrap(s.renders, name)
            XCTAssertEqual(renders, 200, name)
            XCTAssertEqual(s.framesPerRender, 512, name)
            let allocations = try XCTUnwrap(s.expectedAllocationsPerRender, name)
            let frees = try XCTUnwrap(s.expectedFreesPerRender, name)
            XCTAssertEqual(s.allocations, allocations * renders, "\(name): heap allocations in the render path")
            XCTAssertEqual(s.frees, frees * renders, "\(name): frees in the render path")
            if allocations == 0 {
                XCTAssertEqual(s.bytes, 0, name)
                // The path measured carried audio (a render that underran on a busy machine
                // may be silent on a real-time sink, so not necessarily every one).
                XCTAssertGreaterThan(s.audibleRenders ?? 0, 0, name)
            }
        }
        let names = Set(scenarios.compactMap(\.scenario))
        // The paths this test was written for; new ones only add lines.
        for required in ["outputunit-int16-interleaved", "outputunit-float32-planar", "outputunit-int16-to-float32-device",
                         "audioqueue-int16", "audioqueue-int16-realtime", "audioengine-player-node",
                         "audioengine-player-node-realtime", "audioplayer-two-wav-files",
                         "control-allocating-callback", "control-c-allocations",
                         "extaudiofile-read-wav-to-float32-planar", "extaudiofile-read-wav-resampled-48k",
                         "extaudiofile-read-flac-to-int16", "extaudiofile-read-mp3-to-float32-planar",
                         "extaudiofile-read-aac-to-float32-planar", "extaudiofile-read-fragmented-aac-to-int16",
                         "extaudiofile-read-vorbis-to-int16", "extaudiofile-read-opus-to-float32",
                         "extaudiofile-read-opus-stereo-to-int16", "extaudiofile-read-alac-to-float32-planar",
                         "extaudiofile-read-alac-24-to-int16"]
        {
            XCTAssertTrue(names.contains(required), "scenario \(required) did not run")
        }
        // OutputUnit's callbacks write a sine on every call: every render reached the device.
        for s in scenarios where s.scenario?.hasPrefix("outputunit-") == true {
            XCTAssertEqual(s.audibleRenders, 200, s.scenario ?? "?")
        }
        // The controls prove the counter sees what the render paths do not do.
        let control = scenarios.first { $0.scenario == "control-allocating-callback" }
        XCTAssertEqual(control?.allocations, 200)
        XCTAssertEqual(control?.frees, 200)
        #endif
    }

    /// Runs RenderAllocCheck, built beside this test bundle (or at $RENDER_ALLOC_CHECK), and
    /// decodes its lines.
    private func runHarness() throws -> [Line] {
        let path: String
        if let override = ProcessInfo.processInfo.environment["RENDER_ALLOC_CHECK"] {
            path = override
        } else {
            let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            path = me.deletingLastPathComponent().appendingPathComponent("RenderAllocCheck").path
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            XCTFail("RenderAllocCheck not found at \(path); `swift build` builds it")
            return []
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        var environment = ProcessInfo.processInfo.environment
        environment["RENDER_ALLOC_TRAP"] = nil
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertEqual(process.terminationReason, .exit, "RenderAllocCheck crashed:\n\(text)")
        XCTAssertEqual(process.terminationStatus, 0, "RenderAllocCheck failed:\n\(text)")
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
    }
}

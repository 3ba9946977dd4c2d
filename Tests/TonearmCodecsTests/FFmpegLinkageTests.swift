import Foundation
import XCTest
import TonearmCodecs

/// Issue 18: the default build stays pure Swift and links no FFmpeg library; the FFmpeg trait
/// links all four. Checked on what the dynamic loader really mapped into this test process,
/// which is the same binary as every other test of the package.
final class FFmpegLinkageTests: XCTestCase {
    private static let libraries = ["libavcodec", "libavformat", "libavutil", "libswresample"]

    /// The file names of the shared objects mapped into this process.
    private func mappedLibraries() throws -> Set<String> {
        #if os(Linux)
        // Read to the end: /proc files report a size of 0, which a sized read trusts.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps") else { throw XCTSkip("no /proc/self/maps") }
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var names = Set<String>()
        for line in maps.split(separator: "\n") {
            // "address perms offset dev inode path": only a mapped file's path has a slash.
            guard let slash = line.lastIndex(of: "/") else { continue }
            names.insert(String(line[line.index(after: slash)...]))
        }
        return names
        #else
        throw XCTSkip("/proc/self/maps is Linux's")
        #endif
    }

    private func mapped(_ library: String, in names: Set<String>) -> [String] {
        names.filter { $0.hasPrefix(library + ".so") || $0.hasPrefix(library + "-") }.sorted()
    }

    func testFFmpegLibrariesAreLinkedOnlyWithTheTrait() throws {
        // Reach the registry's FFmpeg side first (a no-op without the trait), so that a lazy
        // load (dlopen) would have happened by now too.
        XCTAssertFalse(CodecRegistry.decodableFormats.isEmpty)
        let names = try mappedLibraries()
        XCTAssertTrue(names.contains { $0.hasPrefix("libc.so") || $0.hasPrefix("libc-") }, "the maps name no libc: \(names.sorted())")
        for library in Self.libraries {
            let found = mapped(library, in: names)
            #if FFmpeg
            XCTAssertFalse(found.isEmpty, "\(library) is not mapped in the FFmpeg build")
            #else
            XCTAssertEqual(found, [], "the default build maps \(library)")
            #endif
        }
        #if FFmpeg
        XCTAssertFalse(CodecRegistry.ffmpegOnlyFormats.isEmpty, "the FFmpeg build decodes nothing beyond the native codecs")
        #else
        XCTAssertEqual(CodecRegistry.ffmpegOnlyFormats, [], "the default build offers FFmpeg's codecs")
        #endif
    }
}

import Foundation
import XCTest
import TonearmCore
import TonearmFormats

/// `FormatRegistry.register` while other threads probe and look types up. The list was a
/// plain static mutated without a lock; ThreadSanitizer's CI step runs this test and reports
/// such a race.
final class FormatRegistryThreadTests: XCTestCase {
    func testRegisterWhileTypesAreLookedUp() throws {
        let before = FormatRegistry.all.map(\.type)
        // Registering the last type again removes it and appends it: the list ends as it began.
        let last = try XCTUnwrap(FormatRegistry.all.last)
        let wavTypes = FormatRegistry.types(forExtension: "wav")
        XCTAssertFalse(wavTypes.contains(last.type))
        XCTAssertEqual(wavTypes.first, .wave)
        let registering = Thread {
            for _ in 0..<2000 { FormatRegistry.register(last) }
        }
        registering.start()
        // A WAVE header: "RIFF", a size, "WAVE".
        let head: [UInt8] = Array("RIFF".utf8) + [36, 0, 0, 0] + Array("WAVEfmt ".utf8) + [UInt8](repeating: 0, count: 56)
        var rounds = 0
        let deadline = Date().addingTimeInterval(60)
        repeat {
            XCTAssertEqual(FormatRegistry.probe(head, isEndOfStream: true), .match(.wave))
            XCTAssertEqual(FormatRegistry.types(forExtension: "wav"), wavTypes)
            rounds += 1
        } while (!registering.isFinished || rounds < 100) && Date() < deadline
        XCTAssertTrue(registering.isFinished)
        XCTAssertEqual(FormatRegistry.all.map(\.type), before)
    }
}

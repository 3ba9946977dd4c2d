import Foundation
import Synchronization
import XCTest
import TonearmCodecs
import TonearmCore

/// `CodecRegistry.register` while other threads make decoders. The list was a plain static
/// mutated without a lock: a lookup iterating it while `register` reallocated it could read
/// freed memory. ThreadSanitizer's CI step runs this test and reports such a race.
final class CodecRegistryThreadTests: XCTestCase {
    func testRegisterWhileDecodersAreMade() throws {
        let registrations = 200
        // Factories that decline every format, so the registry answers as before; each call
        // to one is counted.
        let calls = Counter()
        let format = StreamDescription.pcm(sampleRate: 44100, channels: 2, bits: 16)
        let registering = Thread {
            for _ in 0..<registrations {
                CodecRegistry.register { _, _, _ in calls.add(); return nil }
            }
        }
        let lookups = Counter()
        let lookingUp = Thread {
            for _ in 0..<2000 {
                guard let d = try? CodecRegistry.makeDecoder(for: format, output: .int16),
                      d.outputFormat.sampleRate == 44100, d.outputFormat.bitsPerChannel == 16 else { return }
                lookups.add()
            }
        }
        registering.start()
        lookingUp.start()
        for _ in 0..<2000 {
            let d = try CodecRegistry.makeDecoder(for: format, output: .float32)
            XCTAssertEqual(d.outputFormat.sampleRate, 44100)
            XCTAssertEqual(d.outputFormat.bitsPerChannel, 32)
        }
        let deadline = Date().addingTimeInterval(60)
        while !(registering.isFinished && lookingUp.isFinished) && Date() < deadline { usleep(1000) }
        XCTAssertTrue(registering.isFinished && lookingUp.isFinished)
        XCTAssertEqual(lookups.value, 2000, "a lookup on the second thread failed")

        // Every factory registered is in the list, tried before the built-in ones.
        calls.reset()
        _ = try CodecRegistry.makeDecoder(for: format)
        XCTAssertEqual(calls.value, registrations)
    }
}

private final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func add() { count.wrappingAdd(1, ordering: .acquiringAndReleasing) }
    func reset() { count.store(0, ordering: .releasing) }
}

import Foundation
import Synchronization
import XCTest
import Tonearm
@testable import TonearmPlayback

/// State that the control side of a unit, an engine or a queue keeps, read on one thread while
/// another changes it. These were plain fields of `@unchecked Sendable` classes (a closure or
/// an existential is two words or more: an unguarded read can see half of a new one).
/// ThreadSanitizer's CI step runs these tests and reported each race on the old code; the
/// assertions check that every value read was one of the values set.
final class ThreadSafetyTests: XCTestCase {
    func testOutputUnitStateReadWhileAnotherThreadStartsAndStopsIt() throws {
        let unit = OutputUnit(backend: NullOutputBackend(realtime: true), options: AudioOutputOptions(latency: 0.02))
        try unit.setStreamFormat(.int16(sampleRate: 8000, channels: 2))
        try unit.setRenderCallback { _, _, _, _ in }
        let done = AtomicFlag()
        let seen = Seen()
        let reader = Thread {
            while !done.value {
                seen.note(unit.backendName ?? "-")
                seen.note(unit.deviceFormat.map { "\(Int($0.sampleRate))/\($0.channelsPerFrame)" } ?? "-")
                seen.note("period \(unit.framesPerCall)")
                seen.note(unit.isRealtime ? "realtime" : "offline")
                seen.note(unit.onEnd == nil ? "no onEnd" : "onEnd")
                seen.note(unit.streamFormat.sampleRate == 8000 ? "8000" : "other rate")
                _ = unit.framesPlayed
                _ = unit.latency
            }
        }
        reader.start()
        for cycle in 0..<20 {
            unit.onEnd = cycle % 2 == 0 ? { _ in } : nil
            try unit.start()
            XCTAssertEqual(unit.backendName, "null")
            unit.stop()
            unit.uninitialize()
        }
        done.value = true
        while !reader.isFinished { usleep(1000) }
        XCTAssertNil(unit.backendName)
        XCTAssertEqual(unit.framesPerCall, 0)
        XCTAssertTrue(seen.values.isSubset(of: ["null", "-", "8000/2", "period 0", "period 64", "realtime",
                                               "no onEnd", "onEnd", "8000"]), "\(seen.values)")
    }

    func testEngineNodesReadWhileAnotherThreadAttaches() throws {
        let engine = AudioEngine(format: .float32(sampleRate: 8000, channels: 2), backend: NullOutputBackend())
        let done = AtomicFlag()
        let counts = Seen()
        let reader = Thread {
            var last = 0
            while !done.value {
                let n = engine.attachedNodes.count
                // The list only grows, one node at a time.
                if n < last { counts.note("shrank from \(last) to \(n)") }
                last = n
                _ = engine.underruns
                _ = engine.stopsWhenIdle
            }
        }
        reader.start()
        let nodes = (0..<16).map { _ in AudioPlayerNode() }
        for (i, node) in nodes.enumerated() {
            engine.attach(node)
            engine.stopsWhenIdle = i % 2 == 0
        }
        done.value = true
        while !reader.isFinished { usleep(1000) }
        XCTAssertEqual(counts.values, [])
        XCTAssertEqual(engine.attachedNodes.count, 16)
        XCTAssertTrue(zip(engine.attachedNodes, nodes).allSatisfy { $0 === $1 })
        XCTAssertFalse(engine.stopsWhenIdle)
    }

    func testQueueCurrentTimeReadWhileAnotherThreadStartsIt() throws {
        let queue = try AudioQueue.newOutput(format: .int16(sampleRate: 8000, channels: 1),
                                             backend: NullOutputBackend(realtime: true),
                                             options: AudioOutputOptions(latency: 0.02)) { _, _ in }
        let done = AtomicFlag()
        let times = Seen()
        let reader = Thread {
            // Nothing is ever enqueued: no frame plays.
            while !done.value { times.note("\(queue.currentFrame)") }
        }
        reader.start()
        for _ in 0..<10 {
            try queue.start()
            queue.stop(immediately: true)
        }
        done.value = true
        while !reader.isFinished { usleep(1000) }
        XCTAssertEqual(times.values, ["0"])
        XCTAssertEqual(queue.currentFrame, 0)
    }
}

/// The distinct values a reader thread saw.
private final class Seen: Sendable {
    private let storage = Mutex<Set<String>>([])
    func note(_ value: String) { storage.withLock { _ = $0.insert(value) } }
    var values: Set<String> { storage.withLock { $0 } }
}

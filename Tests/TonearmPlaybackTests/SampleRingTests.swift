import Foundation
import Synchronization
import XCTest
@testable import TonearmPlayback

final class SampleRingTests: XCTestCase {
    func testWrapsAroundAndKeepsOrder() {
        let ring = SampleRing(channels: 2, minimumFrames: 5)
        XCTAssertEqual(ring.capacity, 8)
        var next: Float = 0
        var expected: Float = 0
        var out = [Float](repeating: 0, count: 16)
        for round in 0..<50 {
            let n = round % 7 + 1
            let chunk = (0..<(n * 2)).map { _ in next += 1; return next }
            let wrote = chunk.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: n) }
            next -= Float((n - wrote) * 2)
            let m = round % 5 + 1
            let got = out.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, frames: m) }
            for i in 0..<(got * 2) { expected += 1; XCTAssertEqual(out[i], expected) }
        }
        XCTAssertEqual(ring.framesRead + ring.readableFrames, ring.framesWritten)
    }

    func testMixAddsWithGainAndDiscardSkipsToTheWritePosition() {
        let ring = SampleRing(channels: 1, minimumFrames: 16)
        let ones = [Float](repeating: 1, count: 10)
        ones.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: 10) }
        var out = [Float](repeating: 0.25, count: 4)
        XCTAssertEqual(out.withUnsafeMutableBufferPointer { ring.mix(into: $0.baseAddress!, frames: 4, gain: 0.5) }, 4)
        XCTAssertEqual(out, [0.75, 0.75, 0.75, 0.75])
        ring.discardWritten()
        XCTAssertEqual(ring.readableFrames, 0)
        XCTAssertEqual(ring.framesRead, 10)
        XCTAssertEqual(ring.writableFrames, 16)
    }

    /// A producer thread and a consumer thread, each moving runs of random length (from their
    /// own seeded generators, so a failure repeats), through a ring shorter than the longest
    /// run, which wraps every other call and is often full or empty. What comes out must be exactly what went in:
    /// sample `k` of the stream is `k` modulo 2^24 (exact in Float), so a lost, repeated or
    /// torn frame shows as the first sample out of place. The consumer alternates `read` and
    /// `mix` (into zeros at gain 1, which leaves each sample as it was).
    func testTwoThreadsMoveMillionsOfFramesExactlyInOrder() {
        let channels = 2
        let totalFrames = 3_000_000
        let ring = SampleRing(channels: channels, minimumFrames: 4000)
        XCTAssertEqual(ring.capacity, 4096)
        let maximumRun = 5000      // more than the ring holds: a write or read may be partial
        let sampleModulus = 1 << 24
        let giveUp = Clock.nanoseconds + 60_000_000_000
        let outcome = Guarded<(firstMismatch: String?, consumed: Int, produced: Int, timedOut: Bool)>((nil, 0, 0, false))

        let producer = PlaybackThread(name: "ring-producer") {
            var random = SplitMix64(seed: 0x5EED_0001)
            var chunk = [Float](repeating: 0, count: maximumRun * channels)
            var next = 0        // the next frame to write
            var timedOut = false
            chunk.withUnsafeMutableBufferPointer { chunk in
                while next < totalFrames {
                    let run = min(Int(random.next() % UInt64(maximumRun)) + 1, totalFrames - next)
                    for i in 0..<(run * channels) { chunk[i] = Float((next * channels + i) % sampleModulus) }
                    var done = 0
                    while done < run {
                        let wrote = ring.write(chunk.baseAddress! + done * channels, frames: run - done)
                        done += wrote
                        if wrote == 0 {
                            if Clock.nanoseconds > giveUp { timedOut = true; return }
                            sched_yield()
                        }
                    }
                    next += run
                }
            }
            outcome.withLock { $0.produced = next; $0.timedOut = $0.timedOut || timedOut }
        }
        let consumer = PlaybackThread(name: "ring-consumer") {
            var random = SplitMix64(seed: 0x5EED_0002)
            var out = [Float](repeating: 0, count: maximumRun * channels)
            var expected = 0    // the next sample due, counted over the whole stream
            var mismatch: String?
            var useMix = false
            var timedOut = false
            out.withUnsafeMutableBufferPointer { out in
                while expected < totalFrames * channels && mismatch == nil {
                    let run = Int(random.next() % UInt64(maximumRun)) + 1
                    let got: Int
                    if useMix {
                        out.baseAddress!.update(repeating: 0, count: run * channels)
                        got = ring.mix(into: out.baseAddress!, frames: run, gain: 1)
                    } else {
                        got = ring.read(into: out.baseAddress!, frames: run)
                    }
                    useMix.toggle()
                    if got == 0 {
                        if Clock.nanoseconds > giveUp { timedOut = true; return }
                        sched_yield()
                        continue
                    }
                    for i in 0..<(got * channels) where out[i] != Float((expected + i) % sampleModulus) {
                        let k = expected + i
                        mismatch = "sample \(k) (frame \(k / channels)) is \(out[i]), from a \(useMix ? "read" : "mix")"
                        break
                    }
                    expected += got * channels
                }
            }
            outcome.withLock {
                $0.firstMismatch = mismatch
                $0.consumed = expected / channels
                $0.timedOut = $0.timedOut || timedOut
            }
        }
        producer.join()
        consumer.join()

        let result = outcome.withLock { $0 }
        XCTAssertFalse(result.timedOut, "the threads stopped moving frames")
        XCTAssertNil(result.firstMismatch)
        XCTAssertEqual(result.produced, totalFrames)
        XCTAssertEqual(result.consumed, totalFrames)
        XCTAssertEqual(ring.framesWritten, totalFrames)
        XCTAssertEqual(ring.framesRead, totalFrames)
        XCTAssertEqual(ring.readableFrames, 0)
    }
}

/// A value two threads share, behind a lock.
private final class Guarded<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// A seeded generator (SplitMix64), so the run sizes repeat from run to run.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

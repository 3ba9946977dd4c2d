import XCTest
import Foundation
import Tonearm
import TonearmTestSupport
@testable import TonearmPlayback

final class AudioPlayerNodeTests: XCTestCase {
    /// Mono Float32 at 8 kHz: sample i is (i + 1) / frames, so any frame out of place shows.
    func ramp(_ frames: Int) -> PCMBuffer {
        let b = PCMBuffer(commonFormat: .float32, sampleRate: 8000, channels: 1, interleaved: true, frameCapacity: frames)
        b.withUnsafeMutableSamples(Float.self) { for i in 0..<frames { $0[i] = Float(i + 1) / Float(frames) } }
        b.frameLength = frames
        return b
    }

    func offlineEngine(_ capture: Capture) -> AudioEngine {
        let engine = AudioEngine(format: .float32(sampleRate: 8000, channels: 1), backend: NullOutputBackend(tap: capture.tap))
        engine.stopsWhenIdle = true
        return engine
    }

    /// The buffer is copied when scheduled, as its documentation says: refilling it and
    /// shortening it at once changes nothing that plays. 40,000 frames are five rings' worth,
    /// so most of it is still unread when the caller reuses it (before the copy, the node's
    /// thread read the new values, then trapped on the shorter `frameLength`).
    func testAScheduledBufferMayBeReusedAtOnce() throws {
        let capture = Capture()
        let engine = offlineEngine(capture)
        let node = AudioPlayerNode()
        engine.attach(node)
        let buffer = ramp(40000)
        let original = buffer.withUnsafeMutableSamples(Float.self) { Array($0.prefix(40000)) }
        try node.scheduleBuffer(buffer)
        buffer.withUnsafeMutableSamples(Float.self) { for i in 0..<40000 { $0[i] = -1 } }
        buffer.frameLength = 100
        let idle = expectation(description: "idle")
        engine.onIdle = { idle.fulfill() }
        node.play()
        try engine.start()
        wait(for: [idle], timeout: 30)
        engine.stop()
        assertSamples(capture.all, original, "the buffer as it was scheduled")
    }

    /// `stop()` calls the completion of every item still scheduled, each once, in order, as
    /// AVAudioPlayerNode does: the one playing, those read ahead and those not yet read.
    func testStopCallsEveryCompletionOnce() throws {
        let dir = makeTemporaryDirectory()
        let wav = dir + "/tone.wav"
        try FileManager.default.copyItem(atPath: packageRoot + "/Samples/tone-stereo.wav", toPath: wav)
        let stopAt = 4000
        let done = Recorder()
        let node = AudioPlayerNode()
        // The node is stopped from the device thread once 4,000 frames were written: the
        // virtual clock keeps it exact.
        let written = FrameTally()
        let engine = AudioEngine(format: .float32(sampleRate: 8000, channels: 1), backend: NullOutputBackend(tap: { _, frames in
            let (before, after) = written.add(frames)
            if before < stopAt && after >= stopAt { node.stop() }
        }), options: AudioOutputOptions(periodFrames: 1000))
        engine.attach(node)
        try node.scheduleBuffer(ramp(8000)) { done.add(0) }
        try node.scheduleBuffer(ramp(8000)) { done.add(1) }
        try node.scheduleSegment(wav, startingFrame: 100, frameCount: 1000) { done.add(2) }
        try node.scheduleFile(wav) { done.add(3) }
        node.play()
        try engine.start()
        let giveUp = Date().addingTimeInterval(3)
        while done.all.count < 4 && Date() < giveUp { Thread.sleep(forTimeInterval: 0.01) }
        Thread.sleep(forTimeInterval: 0.1)
        engine.stop()
        XCTAssertEqual(done.all, [0, 1, 2, 3])
        // And a node that never played: its items are called back too.
        let idleNode = AudioPlayerNode()
        engine.attach(idleNode)
        let later = Recorder()
        try idleNode.scheduleBuffer(ramp(10)) { later.add(7) }
        try idleNode.scheduleFile(wav) { later.add(8) }
        idleNode.stop()
        idleNode.stop()
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertEqual(later.all, [7, 8])
    }

    /// The node reads outside its lock: while a source takes half a second to deliver a
    /// chunk, the position, the time and scheduling answer at once.
    func testTheTimeDoesNotWaitForASlowRead() throws {
        let slow = SlowSource(delay: 0.5)
        let format = StreamDescription.float32(sampleRate: 8000, channels: 1)
        let player = try AudioPlayer(sources: [.stream(slow, path: "slow", title: "slow", format: format, duration: nil)],
                                     backend: NullOutputBackend())
        XCTAssertTrue(slow.waitUntilReading(timeout: 5))
        var longest = 0.0
        for _ in 0..<5 {
            let t0 = Date()
            _ = player.currentTime
            _ = player.node.playbackPosition
            _ = player.node.length(ofItem: 0)
            try player.node.scheduleBuffer(ramp(10))
            longest = max(longest, Date().timeIntervalSince(t0))
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertLessThan(longest, 0.1, "the calls waited for the read")
        // A stop while a read is in flight: what that read returns is not played afterwards.
        player.node.stop()
        let capture = Capture()
        let engine = offlineEngine(capture)
        let node = AudioPlayerNode()
        engine.attach(node)
        let slow2 = SlowSource(delay: 0.3)
        try node.scheduleStream(slow2)
        XCTAssertTrue(slow2.waitUntilReading(timeout: 5))
        node.stop()
        try node.scheduleBuffer(ramp(3000))
        let idle = expectation(description: "idle")
        engine.onIdle = { idle.fulfill() }
        Thread.sleep(forTimeInterval: 0.5)     // the read in flight has returned by now
        node.play()
        try engine.start()
        wait(for: [idle], timeout: 10)
        engine.stop()
        assertSamples(capture.all, (0..<3000).map { Float($0 + 1) / 3000 }, "only the buffer scheduled after the stop")
        player.stop()
    }
}

/// A stream whose every read takes `delay` seconds, then gives 2,048 frames of 0.5: a disk or
/// decoder far slower than the node.
final class SlowSource: StreamingFrameSource, @unchecked Sendable {
    let delay: Double
    private let lock = NSLock()
    private var reading = false
    private var channels = 1
    init(delay: Double) { self.delay = delay }

    func setClientFormat(_ format: StreamDescription) throws(AudioError) { channels = Int(format.channelsPerFrame) }
    var clientLengthFrames: Int64? { 80000 }
    func readAvailable(frames: Int, into bytes: inout [UInt8]) throws(AudioError) -> Int? {
        lock.lock(); reading = true; lock.unlock()
        Thread.sleep(forTimeInterval: delay)
        let n = min(frames, 2048)
        let samples = [Float](repeating: 0.5, count: n * channels)
        bytes = samples.withUnsafeBytes { Array($0) }
        return n
    }
    func seek(toFrame frame: Int64) throws(AudioError) {}

    func waitUntilReading(timeout: Double) -> Bool {
        let giveUp = Date().addingTimeInterval(timeout)
        while Date() < giveUp {
            lock.lock(); let r = reading; lock.unlock()
            if r { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }
}

final class FrameTally: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    /// Adds `k`; the total before and after.
    func add(_ k: Int) -> (Int, Int) { lock.lock(); defer { lock.unlock() }; n += k; return (n - k, n) }
}

import XCTest
import Foundation
import Tonearm
import TonearmTestSupport
@testable import TonearmPlayback

final class AudioEngineTests: XCTestCase {
    func constant(_ value: Float, frames: Int, channels: Int = 2, rate: Double = 8000) -> PCMBuffer {
        let b = PCMBuffer(commonFormat: .float32, sampleRate: rate, channels: channels, interleaved: true, frameCapacity: frames)
        b.withUnsafeMutableSamples(Float.self) { for i in 0..<(frames * channels) { $0[i] = value } }
        b.frameLength = frames
        return b
    }

    /// Two nodes mixed: their sum, each at its own volume, times the main mixer's volume;
    /// buffers of another format are converted; completions run in order.
    func testTwoNodesMixWithVolumesAndCompletions() throws {
        let capture = Capture()
        let engine = AudioEngine(format: .float32(sampleRate: 8000, channels: 2), backend: NullOutputBackend(tap: capture.tap))
        engine.stopsWhenIdle = true
        let a = AudioPlayerNode(), b = AudioPlayerNode()
        engine.attach(a)
        engine.connect(b, to: engine.mainMixerNode)
        let done = Recorder()
        try a.scheduleBuffer(constant(0.25, frames: 4000)) { done.add(1) }
        try a.scheduleBuffer(constant(0.5, frames: 2000)) { done.add(2) }
        // Mono Int16 at the same rate: converted to the engine's stereo Float32.
        let mono = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 1, interleaved: true, frameCapacity: 3000)
        mono.withUnsafeMutableSamples(Int16.self) { for i in 0..<3000 { $0[i] = 8192 } }
        mono.frameLength = 3000
        try b.scheduleBuffer(mono) { done.add(3) }
        b.volume = 0.5
        engine.mainMixerNode.outputVolume = 2
        let idle = expectation(description: "idle")
        engine.onIdle = { idle.fulfill() }
        a.play(); b.play()
        try engine.start()
        wait(for: [idle], timeout: 30)
        let got = capture.all
        func at(_ frame: Int) -> Float { got[frame * 2] }
        XCTAssertEqual(at(0), (0.25 + 0.25 * 0.5) * 2)       // a's first buffer + b (0.25 at half volume)
        XCTAssertEqual(at(2999), (0.25 + 0.125) * 2)
        XCTAssertEqual(at(3000), 0.25 * 2)                    // b has ended
        XCTAssertEqual(at(4000), 0.5 * 2)                     // a's second buffer, gapless
        XCTAssertEqual(at(5999), 1)
        XCTAssertTrue(got.dropFirst(6000 * 2).allSatisfy { $0 == 0 })
        XCTAssertEqual(got[1], got[0], "mono goes to both channels")
        Clock.sleep(seconds: 0.05)
        XCTAssertEqual(Set(done.all), [1, 2, 3])
        XCTAssertLessThan(done.all.firstIndex(of: 1)!, done.all.firstIndex(of: 2)!)
        engine.stop()
    }

    /// A real-time sink that the producer cannot keep up with counts underruns and reports
    /// them as events, without failing.
    func testUnderrunsAreCountedAndReported() throws {
        let events = EventSink()
        let engine = AudioEngine(format: .float32(sampleRate: 8000, channels: 1),
                                 backend: NullOutputBackend(realtime: true), options: AudioOutputOptions(latency: 0.02))
        let node = AudioPlayerNode()
        node.onEvent = events.add
        engine.attach(node)
        // A decoder slower than real time: 2048-frame chunks (a quarter second at 8 kHz)
        // every 0.4 s.
        node.chunkDelayForTesting = 0.4
        try node.scheduleBuffer(constant(0.1, frames: 8000, channels: 1))
        node.play()
        try engine.start()
        Clock.sleep(seconds: 1)
        engine.stop()
        XCTAssertGreaterThan(engine.underruns, 0)
        XCTAssertTrue(events.all.contains { if case .underrun = $0 { return true }; return false })
    }

    /// Pause holds the place; play goes on from it; the output between is silence.
    func testPauseAndResumeKeepThePlace() throws {
        let capture = Capture()
        let engine = AudioEngine(format: .float32(sampleRate: 8000, channels: 1),
                                 backend: NullOutputBackend(realtime: true, tap: capture.tap), options: AudioOutputOptions(latency: 0.02))
        let node = AudioPlayerNode()
        engine.attach(node)
        let ramp = PCMBuffer(commonFormat: .float32, sampleRate: 8000, channels: 1, interleaved: true, frameCapacity: 4000)
        ramp.withUnsafeMutableSamples(Float.self) { for i in 0..<4000 { $0[i] = Float(i + 1) / 4000 } }
        ramp.frameLength = 4000
        let ended = expectation(description: "ended")
        try node.scheduleBuffer(ramp) { ended.fulfill() }
        node.play()
        try engine.start()
        Clock.sleep(seconds: 0.1)
        node.pause()
        Clock.sleep(seconds: 0.1)
        node.play()
        wait(for: [ended], timeout: 10)
        engine.stop()
        // The ramp comes out whole and in order, with silence where it paused.
        let heard = capture.all.filter { $0 != 0 }
        XCTAssertEqual(heard, (0..<4000).map { Float($0 + 1) / 4000 })
        let firstSilence = capture.all.firstIndex(of: 0)!
        XCTAssertLessThan(firstSilence, 4000, "the pause shows as silence inside the ramp")
    }

    /// The README's example in Apple's order (start, then play), rendered to a file with 50 ms
    /// between the two calls: the file holds exactly the file and the segment scheduled, with
    /// no silence before (the engine used to render 0 to 730,000 silent frames there) and none
    /// after (the last period used to be padded).
    func testStartBeforePlayRendersExactlyWhatPlayed() throws {
        let wav = packageRoot + "/Samples/tone-stereo.wav", mp3 = packageRoot + "/Samples/tone-stereo.mp3"
        let out = makeTemporaryDirectory() + "/engine.wav"
        let engine = AudioEngine(format: .float32(sampleRate: 44100, channels: 2), backend: FileOutputBackend(path: out))
        let node = AudioPlayerNode()
        engine.attach(node)
        let done = Recorder()
        try node.scheduleFile(wav) { done.add(1) }
        try node.scheduleSegment(mp3, startingFrame: 4410, frameCount: 10000) { done.add(2) }
        try engine.start()
        Clock.sleep(seconds: 0.05)
        node.play()
        XCTAssertTrue(waitUntil(timeout: 30, { done.all.count == 2 }))
        engine.stop()
        let expected = try decodedFloats(wav) + Array(try decodedFloats(mp3)[(4410 * 2)..<(14410 * 2)])
        XCTAssertEqual(expected.count, (22050 + 10000) * 2)
        assertSamples(try decodedFloats(out), expected, "the file is what the node played")
        XCTAssertEqual(done.all, [1, 2])
    }

    /// Misuse that Apple answers with an error code is an error here too, not a trap; and a
    /// node attached while the engine runs plays, as AVAudioEngine allows.
    func testMisuseIsAnErrorAndAttachingWhileRunningWorks() throws {
        XCTAssertEqual(AudioError.Code.propertyNotWritable.rawValue, -10865)      // kAudioUnitErr_PropertyNotWritable
        XCTAssertEqual(AudioError.Code.cannotDoInCurrentContext.rawValue, -10863) // kAudioUnitErr_CannotDoInCurrentContext
        XCTAssertEqual(AudioError.Code.invalidRunState.rawValue, -66678)          // kAudioQueueErr_InvalidRunState
        let mono = StreamDescription.float32(sampleRate: 8000, channels: 1)
        let unit = OutputUnit(backend: NullOutputBackend())
        try unit.setStreamFormat(mono)
        try unit.initialize()
        XCTAssertThrowsError(try unit.setStreamFormat(.int16(sampleRate: 8000, channels: 2))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .propertyNotWritable)
        }
        XCTAssertEqual(unit.streamFormat, mono)
        try unit.setRenderCallback { _, _, _, _ in }
        try unit.start()
        XCTAssertThrowsError(try unit.setRenderCallback { _, _, _, _ in }) {
            XCTAssertEqual(($0 as? AudioError)?.code, .cannotDoInCurrentContext)
        }
        unit.stop()
        try unit.setRenderCallback { _, _, _, _ in }
        unit.uninitialize()
        try unit.setStreamFormat(.int16(sampleRate: 8000, channels: 2))

        let capture = Capture()
        let engine = AudioEngine(format: mono, backend: NullOutputBackend(tap: capture.tap))
        try engine.start()
        let node = AudioPlayerNode()
        engine.attach(node)
        let ramp = constant(0, frames: 3000, channels: 1)
        ramp.withUnsafeMutableSamples(Float.self) { for i in 0..<3000 { $0[i] = Float(i + 1) / 3000 } }
        let done = Recorder()
        try node.scheduleBuffer(ramp) { done.add(1) }
        node.play()
        XCTAssertTrue(waitUntil(timeout: 10, { done.all == [1] }))
        engine.stop()
        assertSamples(capture.all, (0..<3000).map { Float($0 + 1) / 3000 }, "the node attached while running")
    }

    /// More nodes than one block of the engine's node table (64, once a hard limit that
    /// trapped): every one is mixed, including those attached while the engine runs.
    func testManyNodesAreAllMixed() throws {
        let capture = Capture()
        let engine = AudioEngine(format: .float32(sampleRate: 8000, channels: 1), backend: NullOutputBackend(tap: capture.tap))
        engine.stopsWhenIdle = true
        let nodes = (0..<70).map { _ in AudioPlayerNode() }
        let done = Recorder()
        for (i, node) in nodes.enumerated() {
            engine.attach(node)
            try node.scheduleBuffer(constant(1 / 128, frames: 1000, channels: 1)) { done.add(i) }
            node.play()
        }
        XCTAssertEqual(engine.attachedNodes.count, 70)
        let idle = expectation(description: "idle")
        engine.onIdle = { idle.fulfill() }
        try engine.start()
        wait(for: [idle], timeout: 30)
        engine.stop()
        assertSamples(capture.all, [Float](repeating: 70 / 128, count: 1000), "70 nodes")
        XCTAssertTrue(waitUntil(timeout: 10, { done.all.count == 70 }))
    }

    func testSchedulingBeforeAttachingIsAnError() {
        let node = AudioPlayerNode()
        XCTAssertThrowsError(try node.scheduleBuffer(constant(0, frames: 1))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .uninitialized)
        }
        XCTAssertThrowsError(try AudioPlayer(paths: ["/nonexistent.wav"], backend: NullOutputBackend())) {
            XCTAssertEqual(($0 as? AudioError)?.code, .fileNotFound)
        }
    }
}

/// Polls `condition` until it holds (true) or `timeout` seconds pass (false).
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let giveUp = Clock.nanoseconds + UInt64(timeout * 1e9)
    while !condition() {
        if Clock.nanoseconds > giveUp { return false }
        Clock.sleep(seconds: 0.005)
    }
    return true
}

final class EventSink: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [AudioPlayerNode.Event] = []
    var add: @Sendable (AudioPlayerNode.Event) -> Void { { [self] e in lock.lock(); events.append(e); lock.unlock() } }
    var all: [AudioPlayerNode.Event] { lock.lock(); defer { lock.unlock() }; return events }
}

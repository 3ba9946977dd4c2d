import XCTest
import Foundation
import Tonearm
import TonearmTestSupport
@testable import TonearmPlayback

/// A file's audio as interleaved Float32 at its own rate, through ExtAudioFile.
func decodedFloats(_ path: String) throws -> [Float] { try decodeInterleaved(path, as: Float.self) }

final class AudioPlayerNullSinkTests: XCTestCase {
    let sample = packageRoot + "/Samples/tone-stereo.wav"

    func testPlaysAFileToTheNullSinkExactly() throws {
        let capture = Capture()
        let player = try AudioPlayer(paths: [sample], backend: NullOutputBackend(tap: capture.tap))
        let events = EventLog()
        player.onEvent = events.add
        try player.play()
        XCTAssertTrue(player.waitUntilEnded(timeout: 30))
        let source = try decodedFloats(sample)
        let got = capture.all
        XCTAssertGreaterThanOrEqual(got.count, source.count)
        assertSamples(Array(got.prefix(source.count)), source)
        XCTAssertTrue(got.dropFirst(source.count).allSatisfy { $0 == 0 })
        XCTAssertEqual(player.underruns, 0)
        XCTAssertEqual(events.all.first, .started)
        XCTAssertEqual(events.all.filter { if case .underrun = $0 { return false }; return true },
                       [.started, .trackStarted(0), .trackEnded(0), .ended])
    }
}

final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [AudioPlayer.Event] = []
    var add: @Sendable (AudioPlayer.Event) -> Void { { [self] e in lock.lock(); events.append(e); lock.unlock() } }
    var all: [AudioPlayer.Event] { lock.lock(); defer { lock.unlock() }; return events }
}

final class GaplessAndTransportTests: XCTestCase {
    /// Two files cut from one continuous sine, written with sox, queued back to back through the
    /// null sink: the join shows no step larger than the sine's own.
    func testTwoHalvesOfOneSineJoinWithoutAGap() throws {
        let sox = try requireTool("sox")
        let dir = NSTemporaryDirectory() + "tonearm-gapless-\(getpid())/"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 1 kHz at 44.1 kHz, 1.5 s; the cut at 33,333 frames is mid-cycle on purpose.
        XCTAssertEqual(runStatus(sox, ["-n", "-r", "44100", "-c", "2", "-b", "16", dir + "whole.wav", "synth", "1.5", "sine", "1000", "vol", "0.5"]), 0)
        XCTAssertEqual(runStatus(sox, [dir + "whole.wav", dir + "a.flac", "trim", "0s", "33333s"]), 0)
        XCTAssertEqual(runStatus(sox, [dir + "whole.wav", dir + "b.wav", "trim", "33333s"]), 0)
        let capture = Capture()
        let player = try AudioPlayer(paths: [dir + "a.flac", dir + "b.wav"], backend: NullOutputBackend(tap: capture.tap))
        let events = EventLog()
        player.onEvent = events.add
        try player.play()
        XCTAssertTrue(player.waitUntilEnded(timeout: 30))
        let whole = try decodedFloats(dir + "whole.wav")
        let got = Array(capture.all.prefix(whole.count))
        assertSamples(got, whole, "the two halves render as the whole, sample for sample")
        // And the largest step anywhere in the left channel is the sine's own.
        let left = stride(from: 0, to: got.count, by: 2).map { got[$0] }
        let steps = zip(left, left.dropFirst()).map { abs($1 - $0) }
        let sineStep = Float(0.5 * 2 * Double.pi * 1000 / 44100) * 1.01
        XCTAssertLessThanOrEqual(steps.max()!, sineStep)
        XCTAssertEqual(events.all.filter { if case .underrun = $0 { return false }; return true },
                       [.started, .trackStarted(0), .trackEnded(0), .trackStarted(1), .trackEnded(1), .ended])
    }

    /// Zero crossings in the first 20,000 frames of tone-stereo.wav's channels, counted with
    /// Python on the file's samples. Left is 440 Hz plus 660 Hz at half the amplitude, right
    /// 554.37 Hz plus 880 Hz at half: the stronger tone sets the crossings, 2 × 440 × 20000 /
    /// 44100 ≈ 399 and 2 × 554.37 × 20000 / 44100 ≈ 503.
    static let toneCrossings = (left: 398, right: 502)

    func testVolumeRateAndSeek() throws {
        let path = packageRoot + "/Samples/tone-stereo.wav"
        let source = try decodedFloats(path)
        // Volume: every sample halved.
        let quiet = Capture()
        let p1 = try AudioPlayer(paths: [path], backend: NullOutputBackend(tap: quiet.tap))
        p1.volume = 0.5
        try p1.play()
        XCTAssertTrue(p1.waitUntilEnded(timeout: 30))
        assertSamples(Array(quiet.all.prefix(source.count)), source.map { $0 * 0.5 }, "volume")
        // Rate 2: half the frames (within the filter's reach), the same tone an octave up.
        let fast = Capture()
        let p2 = try AudioPlayer(paths: [path], backend: NullOutputBackend(tap: fast.tap))
        p2.rate = 2
        try p2.play()
        XCTAssertTrue(p2.waitUntilEnded(timeout: 30))
        let nonSilent = fast.all.lastIndex { $0 != 0 }.map { $0 / 2 + 1 } ?? 0
        XCTAssertEqual(Double(nonSilent), Double(source.count / 2) / 2, accuracy: 200)
        // The pitch: each channel's tone crosses zero as often in 10,000 output frames as the
        // source does in 20,000 (one octave up), and the crossings count is the tone's own.
        func crossings(_ x: [Float], channel: Int, frames: Int) -> Int {
            (1..<frames).filter { (x[2 * ($0 - 1) + channel] < 0) != (x[2 * $0 + channel] < 0) }.count
        }
        for channel in 0..<2 {
            let original = crossings(source, channel: channel, frames: 20000)
            XCTAssertEqual(crossings(fast.all, channel: channel, frames: 10000), original, "channel \(channel)")
        }
        XCTAssertEqual(crossings(source, channel: 0, frames: 20000), Self.toneCrossings.left)
        XCTAssertEqual(crossings(source, channel: 1, frames: 20000), Self.toneCrossings.right)
        // As frequencies: 880 and 1108.7 Hz, within one crossing of 10,000 frames (0.5 %).
        let hz = { (c: Int) in Double(crossings(fast.all, channel: c, frames: 10000)) / 2 / (10000 / 44100) }
        XCTAssertEqual(hz(0), 880, accuracy: 880 * 0.005)
        XCTAssertEqual(hz(1), 1108.74, accuracy: 1108.74 * 0.005)
        // Seek before playing: starts exactly at the frame.
        let sought = Capture()
        let p3 = try AudioPlayer(paths: [path], backend: NullOutputBackend(tap: sought.tap))
        p3.seek(to: 0.2)
        try p3.play()
        XCTAssertTrue(p3.waitUntilEnded(timeout: 30))
        let from = Int(0.2 * p3.outputFormat.sampleRate) * 2
        assertSamples(Array(sought.all.prefix(source.count - from)), Array(source[from...]), "seek")
    }

    /// A seek while playing lands on its frame, and the time reported follows. On the null
    /// sink's virtual clock the seek is made from the device thread once 0.3 s were written, so
    /// nothing depends on how fast a loaded machine runs: the output is the file up to that
    /// period's end, then the file from 2.5 s, sample for sample.
    func testSeekWhilePlayingLandsOnTheFrame() throws {
        let sox = try requireTool("sox")
        let path = makeTemporaryDirectory() + "/noise.wav"
        XCTAssertEqual(runStatus(sox, ["-R", "-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "3", "whitenoise", "vol", "0.5"]), 0)
        let source = try decodedFloats(path)
        final class Probe: @unchecked Sendable {
            let lock = NSLock()
            var player: AudioPlayer?
            var written = 0
            var seekAt: Int?
            var timeBefore: Double?, timeAfter: Double?
        }
        let probe = Probe()
        let capture = Capture()
        let seekFrame = Int(0.3 * 44100)
        let backend = NullOutputBackend(tap: { raw, frames in
            capture.tap(raw, frames)
            probe.lock.lock(); defer { probe.lock.unlock() }
            guard let player = probe.player else { return }
            let before = probe.written
            probe.written += frames
            if before < seekFrame && probe.written >= seekFrame {
                probe.timeBefore = player.currentTime
                probe.seekAt = probe.written
                player.seek(to: 2.5)
            } else if probe.seekAt != nil && probe.timeAfter == nil {
                probe.timeAfter = player.currentTime
            }
        })
        let player = try AudioPlayer(paths: [path], backend: backend)
        probe.lock.withLock { probe.player = player }
        try player.play()
        XCTAssertTrue(player.waitUntilEnded(timeout: 30))
        // The tap holds the probe and the probe the player: break the cycle, so that the player
        // and its device thread go (ThreadSanitizer reports a thread never joined as a leak).
        defer { probe.lock.withLock { probe.player = nil } }
        let (seekAt, before, after) = probe.lock.withLock { (probe.seekAt, probe.timeBefore, probe.timeAfter) }
        let at = try XCTUnwrap(seekAt)
        // The time is what was heard: a period (the buffer being written) behind what was
        // rendered, so it may trail the frame by up to two periods here.
        let period = 2 * 1102.0 / 44100
        XCTAssertEqual(try XCTUnwrap(before), Double(at) / 44100, accuracy: period)
        XCTAssertEqual(try XCTUnwrap(after), 2.5, accuracy: period)
        let start = Int(2.5 * 44100) * 2
        assertSamples(capture.all, Array(source[..<(at * 2)]) + Array(source[start...]), "to the seek, then from 2.5 s")
    }

    /// Seed 004: raw s16le stereo 44.1 kHz from a file, pulled by a render callback that reads
    /// the file and stops the unit at its end.
    func testSeed004RawPCMThroughARenderCallback() throws {
        let path = NSTemporaryDirectory() + "tonearm-seed004-\(getpid()).pcm"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pcm = (0..<44100).flatMap { i -> [Int16] in
            let v = Int16(10000 * sin(Double(i) * 2 * .pi * 440 / 44100))
            return [v, v]
        }
        FileManager.default.createFile(atPath: path, contents: pcm.withUnsafeBytes { Data($0) })
        let out = NSTemporaryDirectory() + "tonearm-seed004-\(getpid()).wav"
        defer { try? FileManager.default.removeItem(atPath: out) }

        // The AudioStreamBasicDescription of seed 004, field by field.
        let channels: UInt32 = 2
        let format = StreamDescription(sampleRate: 44100, formatID: .linearPCM,
                                       formatFlags: [.isSignedInteger, .isPacked],
                                       bytesPerPacket: channels * 2, framesPerPacket: 1,
                                       bytesPerFrame: channels * 2, channelsPerFrame: channels, bitsPerChannel: 16)

        let unit = OutputUnit(backend: FileOutputBackend(path: out))
        try unit.setStreamFormat(format)
        let handle = FileHandle(forReadingAtPath: path)!
        let done = expectation(description: "played")
        nonisolated(unsafe) var finished = false
        try unit.setRenderCallback { _, _, _, data in
            memset(data[0].baseAddress!, 0, data[0].count)
            let chunk = handle.readData(ofLength: data[0].count)
            if chunk.count < data[0].count {
                try? handle.seek(toOffset: 0)
                unit.stop()
                if !finished { finished = true; done.fulfill() }
                return
            }
            chunk.withUnsafeBytes { data[0].baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: chunk.count) }
        }
        try unit.start()
        wait(for: [done], timeout: 30)
        let period = unit.framesPerCall
        unit.uninitialize()
        // Every whole period of the file, then the call that found the file short: silence.
        let whole = pcm.count / 2 / period
        let written = try AudioFile(path: out)
        let frames = Int(try written.audioDataPacketCount)
        XCTAssertEqual(frames, (whole + 1) * period)
        let (bytes, _) = try written.readPacketData(startingAt: 0, count: frames)
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        XCTAssertEqual(Array(samples.prefix(whole * period * 2)), Array(pcm.prefix(whole * period * 2)))
        XCTAssertTrue(samples.dropFirst(whole * period * 2).allSatisfy { $0 == 0 })
    }
}

private func runStatus(_ tool: String, _ args: [String]) -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = args
    p.standardError = FileHandle.nullDevice
    try? p.run()
    p.waitUntilExit()
    return p.terminationStatus
}

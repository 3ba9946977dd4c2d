import XCTest
import Tonearm
import TonearmTestSupport
@testable import TonearmPlayback

/// Collects what a null sink renders, on its device thread.
final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [Float] = []
    var tap: @Sendable (UnsafeRawBufferPointer, Int) -> Void {
        { [self] raw, _ in
            let floats = raw.bindMemory(to: Float.self)
            lock.lock(); samples.append(contentsOf: floats); lock.unlock()
        }
    }
    var all: [Float] { lock.lock(); defer { lock.unlock() }; return samples }
}

final class AudioPlayerTests: XCTestCase {
    let sample = packageRoot + "/Samples/tone-stereo.wav"

    func decoded(_ path: String) throws -> [Float] {
        let f = try ExtAudioFile.open(path: path)
        try f.setClientDataFormat(.float32(sampleRate: f.fileDataFormat.sampleRate,
                                           channels: f.fileDataFormat.channelsPerFrame, interleaved: true))
        var bytes: [UInt8] = []
        while try f.read(frames: 65536, into: &bytes) > 0 {}
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    func testPlaysAFileToTheNullSinkExactly() throws {
        let capture = Capture()
        let player = try AudioPlayer(paths: [sample], backend: NullOutputBackend(tap: capture.tap))
        let events = EventLog()
        player.onEvent = events.add
        try player.play()
        XCTAssertTrue(player.waitUntilEnded(timeout: 30))
        let source = try decoded(sample)
        let got = capture.all
        XCTAssertGreaterThanOrEqual(got.count, source.count)
        XCTAssertEqual(Array(got.prefix(source.count)), source)
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

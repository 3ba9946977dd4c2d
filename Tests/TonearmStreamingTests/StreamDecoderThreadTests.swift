import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// `StreamDecoder.recorder` and `fileDataFormat` while the decoder's thread runs. Both were
/// plain fields that the decoder's thread reads and writes under its lock and the app set
/// without it. ThreadSanitizer's CI step runs this test; it reported the recorder's race on
/// the old code. (`fileDataFormat` changes only at a new Ogg link or MP3 format change, which
/// this stream has not.)
final class StreamDecoderThreadTests: XCTestCase {
    /// A recorder set while a trickled MP3 is being decoded gets every byte from then on: what
    /// it wrote is exactly the file's tail.
    func testARecorderSetWhileDecodingGetsTheRestOfTheBytes() throws {
        let s = try HTTPStreamTests.server.require()
        let path = "mp3dec/lame_cbr320_stereo.mp3"
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixturesDirectory + "/" + path)))
        var options = HTTPStream.Options()
        options.connectTimeout = 5
        options.stallTimeout = 5
        options.reconnectsWhenLiveStreamCloses = false
        let d = StreamDecoder(stream: HTTPStream(url: s.url("files/\(path)?trickle=40000"), options: options))
        try d.open()
        let format = d.fileDataFormat
        try d.setClientFormat(.float32(sampleRate: format.sampleRate, channels: format.channelsPerFrame))
        var bytes: [UInt8] = []
        var frames = 0
        frames += try d.read(frames: 4096, into: &bytes)
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-recorder-\(getpid()).mp3").path
        defer { try? FileManager.default.removeItem(atPath: recording) }
        let recorder = try StreamRecorder(path: recording)
        d.recorder = recorder
        // The decoder's thread goes on reading, and writing to the recorder, while this thread
        // takes none of the decoder's locks: nothing but the recorder's own lock orders the two.
        usleep(200_000)
        while true {
            XCTAssertEqual(d.fileDataFormat, format)
            let n = try d.read(frames: 4096, into: &bytes)
            if n == 0 { break }
            frames += n
        }
        XCTAssertTrue(d.isAtEnd)
        XCTAssertTrue(d.recorder === recorder)
        d.close()
        recorder.close()
        let recorded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: recording)))
        XCTAssertGreaterThan(recorded.count, 0, "the recorder got nothing: set too late")
        XCTAssertLessThan(recorded.count, file.count, "the recorder got everything: set too early")
        XCTAssertEqual(recorded, Array(file.suffix(recorded.count)))
        XCTAssertEqual(Int64(recorded.count), recorder.bytesWritten)
    }
}

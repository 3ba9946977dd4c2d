import Tonearm
import TonearmTestSupport
import XCTest

/// A chunk after the audio data fed with `.discontinuity` (issue 16 §2): the bytes are
/// accepted and ignored, and every packet before them arrives once.
final class StreamTrailingBytesTests: XCTestCase {
    /// A WAVE with a LIST chunk after 'data' (as Tonearm's writer lays it out), fed one byte
    /// at a time with `.discontinuity` on every byte after the audio.
    func testDiscontinuityAfterTheAudioIsIgnored() throws {
        let dir = makeTemporaryDirectory()
        let path = dir + "/list-after-data.wav"
        let samples = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let f = try AudioFile.create(path: path, type: .wave, format: .pcm(sampleRate: 8000, channels: 1, bits: 16), flags: .eraseFile)
        try f.setProperty(.infoDictionary, .info(InfoDictionary([("title", "trailing"), ("artist", "tonearm")])))
        try f.writePackets(samples, count: 500, startingAt: 0)
        try f.close()
        let bytes = try readWholeFile(path)
        let file = try AudioFile(path: path)
        let dataEnd = Int(try file.dataOffset + file.audioDataByteCount)
        XCTAssertEqual(Array(bytes[dataEnd..<dataEnd + 4]), Array("LIST".utf8))

        for pattern in ["one byte", "rest at once"] {
            var got: [UInt8] = []
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, _ in got += data })
            for i in 0..<dataEnd { try stream.parse(bytes[i..<i + 1]) }
            if pattern == "one byte" {
                for i in dataEnd..<bytes.count { try stream.parse(bytes[i..<i + 1], flags: .discontinuity) }
            } else {
                try stream.parse(bytes[(dataEnd + 5)...], flags: .discontinuity)
            }
            try stream.parse(nil)
            XCTAssertEqual(got, samples, pattern)
        }
    }

    /// AU: bytes after the declared data size, fed with `.discontinuity`.
    func testDiscontinuityAfterAUDataIsIgnored() throws {
        var bytes: [UInt8] = Array(".snd".utf8) + [0, 0, 0, 24, 0, 0, 0, 8, 0, 0, 0, 2, 0, 0, 0x1F, 0x40, 0, 0, 0, 1]
        let audio: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        bytes += audio + [9, 9, 9, 9]
        var got: [UInt8] = []
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, _ in got += data })
        for i in 0..<32 { try stream.parse(bytes[i..<i + 1]) }
        for i in 32..<bytes.count { try stream.parse(bytes[i..<i + 1], flags: .discontinuity) }
        try stream.parse(nil)
        XCTAssertEqual(got, audio)
    }
}

import XCTest
import Tonearm
import TonearmTestSupport

/// One spelling per concept across AudioFile, ExtAudioFile and AudioFileStream (issue 16 §3):
/// `init(path:)` opens, `create` makes a new file with Apple's flags and the same default on
/// both classes, `fileType` is the file's type on both readers, and a value a file may lack is
/// optional on both.
final class ConsistentNamesTests: XCTestCase {
    /// Both creates refuse an existing file unless `.eraseFile`, as AudioFileCreateWithURL and
    /// ExtAudioFileCreateWithURL do. ExtAudioFile.create used to erase by default.
    func testBothCreatesTakeTheSameFlagsWithTheSameDefault() throws {
        let path = makeTemporaryDirectory() + "/exists.wav"
        let format = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 16)
        let first = try AudioFile.create(path: path, type: .wave, format: format)
        try first.writePackets(AudioConverterTests.bytes([1, 2, 3]), count: 3, startingAt: 0)
        try first.close()
        XCTAssertThrowsError(try AudioFile.create(path: path, type: .wave, format: format)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .permissions)
        }
        XCTAssertThrowsError(try ExtAudioFile.create(path: path, type: .wave, format: format)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .permissions)
        }
        // Refused without touching the file: its three frames are still there.
        XCTAssertEqual(try AudioFile(path: path).audioDataPacketCount, 3)
        let replaced = try ExtAudioFile.create(path: path, type: .wave, format: format, flags: .eraseFile)
        try replaced.write(AudioConverterTests.bytes([7, 8]), frames: 2)
        try replaced.close()
        XCTAssertEqual(try AudioFile(path: path).audioDataPacketCount, 2)
        let again = try AudioFile.create(path: path, type: .wave, format: format, flags: .eraseFile)
        try again.close()
        XCTAssertEqual(try AudioFile(path: path).audioDataPacketCount, 0)
    }

    /// Opening is an initializer on both classes.
    func testExtAudioFileOpensWithInitPath() throws {
        let path = fixturesDirectory + "/flac/flac_default.flac"
        let f = try ExtAudioFile(path: path)
        XCTAssertEqual(f.fileDataFormat, try AudioFile(path: path).dataFormat)
        XCTAssertEqual(f.fileLengthFrames, 11026)
        XCTAssertThrowsError(try ExtAudioFile(path: "/nonexistent/x.wav")) {
            XCTAssertEqual(($0 as? AudioError)?.code, .fileNotFound)
        }
    }

    /// `fileType` and the optional accessors answer alike on the file and the stream; the
    /// stream threw 'pty?' for a cookie or layout the file does not have, and had no `fileType`.
    func testStreamAndFileShareNamesAndOptionality() throws {
        for (name, type) in [("mpeg/lame_cbr128.mp3", AudioFileTypeID.mp3), ("flac/flac_default.flac", .flac),
                             ("ogg/opus_opusenc_stereo.opus", .ogg)] {
            let path = fixturesDirectory + "/" + name
            let file = try AudioFile(path: path)
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, _ in })
            XCTAssertThrowsError(try stream.magicCookie, "nothing parsed yet: 'unk?'") {
                XCTAssertEqual(($0 as? AudioError)?.code, .valueUnknown)
            }
            try stream.parse(try readWholeFile(path))
            XCTAssertEqual(try file.fileType, type, name)
            XCTAssertEqual(try stream.fileType, type, name)
            XCTAssertEqual(try stream.magicCookie, try file.magicCookie, name)
            XCTAssertEqual(try stream.channelLayout, try file.channelLayout, name)
        }
        // An MP3 has no cookie and no layout: nil on both, where the stream threw 'pty?'.
        let mp3 = fixturesDirectory + "/mpeg/lame_cbr128.mp3"
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, _ in })
        try stream.parse(try readWholeFile(mp3))
        XCTAssertNil(try stream.magicCookie)
        XCTAssertNil(try stream.channelLayout)
        XCTAssertNil(try AudioFile(path: mp3).magicCookie)
        XCTAssertEqual(try stream.packetTableInfo, try AudioFile(path: mp3).packetTableInfo)
        XCTAssertEqual(try stream.packetTableInfo?.primingFrames, 576 + 529, "LAME's delay plus the decoder's 529")
        // The same accessors on both: bit rate and duration. Both give the frames' 128 kbit/s
        // (ffprobe's stream bit_rate): the file from its scan, the stream from the first frame,
        // since LAME's 'Info' frame declares a constant bit rate. (The Xing totals' average,
        // 17,135 bytes less the Info frame's 417 over 40 frames of 1152, would be 127,997.)
        XCTAssertEqual(try AudioFile(path: mp3).bitRate, 128_000)
        XCTAssertEqual(try stream.bitRate, 128_000)
        XCTAssertEqual(try stream.estimatedDuration, 1.0)
        XCTAssertEqual(try AudioFile(path: mp3).estimatedDuration, 1.0)
    }
}

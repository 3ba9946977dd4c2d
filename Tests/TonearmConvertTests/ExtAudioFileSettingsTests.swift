import XCTest
import Tonearm
import TonearmTestSupport

/// ExtAudioFile's converter settings are set through throwing methods: a value that does
/// not fit is refused with Apple's code and leaves the setting, and the output, as they were.
/// (The property setters used to store any map with `try?` and convert without it.)
final class ExtAudioFileSettingsTests: XCTestCase {
    private static let frames = 4000

    /// A stereo 16-bit WAVE whose two channels differ, and its samples.
    private func makeStereo() throws -> (path: String, samples: [Int16]) {
        let path = makeTemporaryDirectory() + "/stereo.wav"
        let samples = AudioConverterTests.signal(frames: Self.frames, channels: 2)
        let w = try ExtAudioFile.create(path: path, type: .wave, format: .pcm(sampleRate: 44100, channels: 2, bits: 16))
        try w.write(AudioConverterTests.bytes(samples), frames: Self.frames)
        try w.close()
        return (path, samples)
    }

    private func readAll(_ f: ExtAudioFile) throws -> [UInt8] {
        var out: [UInt8] = []
        while try f.read(frames: 1000, into: &out) > 0 {}
        return out
    }

    func testABadChannelMapThrowsAndTheOldMapStays() throws {
        let (path, samples) = try makeStereo()
        let swapped = AudioConverterTests.bytes((0..<Self.frames).flatMap { [samples[$0 * 2 + 1], samples[$0 * 2]] })
        let f = try ExtAudioFile(path: path)
        try f.setChannelMap([1, 0])
        XCTAssertEqual(f.channelMap, [1, 0])
        // An entry naming a channel the file does not have, then a map of the wrong length.
        for bad in [[0, 5], [0, -2], [0], [1, 0, 0]] {
            XCTAssertThrowsError(try f.setChannelMap(bad), "\(bad)") {
                XCTAssertEqual(($0 as? AudioError)?.code, .invalidChannelMap, "\(bad)")
                XCTAssertEqual(($0 as? AudioError)?.code.rawValue, -66564, "kExtAudioFileError_InvalidChannelMap")
            }
            XCTAssertEqual(f.channelMap, [1, 0], "\(bad) is not stored")
        }
        try f.seek(toFrame: 0)
        XCTAssertTrue(try readAll(f) == swapped, "the map in force is still [1, 0]")
        // A client format that the map does not fit is refused too, and the old one stays.
        XCTAssertThrowsError(try f.setClientDataFormat(.pcm(sampleRate: 44100, channels: 1, bits: 16))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .invalidChannelMap)
        }
        XCTAssertEqual(f.clientDataFormat.channelsPerFrame, 2)
        // The format and a map that fits it, together: the right channel alone, then silence.
        try f.setClientDataFormat(.pcm(sampleRate: 44100, channels: 2, bits: 16), channelMap: [1, -1])
        try f.seek(toFrame: 0)
        XCTAssertTrue(try readAll(f) == AudioConverterTests.bytes((0..<Self.frames).flatMap { [samples[$0 * 2 + 1], 0] }))
        try f.setClientDataFormat(.pcm(sampleRate: 44100, channels: 1, bits: 16), channelMap: [1])
        try f.seek(toFrame: 0)
        XCTAssertTrue(try readAll(f) == AudioConverterTests.bytes((0..<Self.frames).map { samples[$0 * 2 + 1] }))
        try f.setChannelMap(nil)
        XCTAssertNil(f.channelMap)
    }

    func testWritingTheMapCountsTheFilesChannels() throws {
        let path = makeTemporaryDirectory() + "/mono.wav"
        let w = try ExtAudioFile.create(path: path, type: .wave, format: .pcm(sampleRate: 8000, channels: 1, bits: 16))
        try w.setClientDataFormat(.pcm(sampleRate: 8000, channels: 2, bits: 16))
        XCTAssertThrowsError(try w.setChannelMap([0, 1])) { XCTAssertEqual(($0 as? AudioError)?.code, .invalidChannelMap) }
        XCTAssertThrowsError(try w.setChannelMap([2])) { XCTAssertEqual(($0 as? AudioError)?.code, .invalidChannelMap) }
        try w.setChannelMap([1])
        let samples: [Int16] = [1, 100, 2, 200, 3, 300]
        try w.write(AudioConverterTests.bytes(samples), frames: 3)
        // Once frames are written the converter holds their state: no more changes.
        XCTAssertThrowsError(try w.setChannelMap([0])) { XCTAssertEqual(($0 as? AudioError)?.code, .illegalOperation) }
        XCTAssertThrowsError(try w.setDither(.tpdf)) { XCTAssertEqual(($0 as? AudioError)?.code, .illegalOperation) }
        XCTAssertEqual(w.channelMap, [1])
        XCTAssertEqual(w.dither, .none)
        try w.close()
        let r = try ExtAudioFile(path: path)
        XCTAssertTrue(try readAll(r) == AudioConverterTests.bytes([100, 200, 300]))
    }

    func testAQualityOutsideAppleRangeThrowsAndTheOldQualityStays() throws {
        let (path, _) = try makeStereo()
        let f = try ExtAudioFile(path: path)
        XCTAssertEqual(f.sampleRateConverterQuality, 0x60)
        try f.setSampleRateConverterQuality(0x7F)
        for bad in [-1, 128, 1000] {
            XCTAssertThrowsError(try f.setSampleRateConverterQuality(bad), "\(bad)") {
                XCTAssertEqual(($0 as? AudioError)?.code, .parameter)
            }
            XCTAssertEqual(f.sampleRateConverterQuality, 0x7F)
        }
        try f.setSampleRateConverterComplexity(.mastering)
        XCTAssertEqual(f.sampleRateConverterComplexity, .mastering)
        try f.setDither(.tpdf)
        XCTAssertEqual(f.dither, .tpdf)
    }

    /// Settings changed while reading keep the position, as a client format change does.
    func testAChangeKeepsTheReadPosition() throws {
        let (path, samples) = try makeStereo()
        let f = try ExtAudioFile(path: path)
        try f.seek(toFrame: 1234)
        try f.setChannelMap([1, 0])
        XCTAssertEqual(f.tell(), 1234)
        var got: [UInt8] = []
        XCTAssertEqual(try f.read(frames: 2, into: &got), 2)
        XCTAssertTrue(got == AudioConverterTests.bytes([samples[1234 * 2 + 1], samples[1234 * 2], samples[1235 * 2 + 1], samples[1235 * 2]]))
    }
}

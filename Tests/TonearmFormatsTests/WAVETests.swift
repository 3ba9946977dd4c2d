import XCTest
import Tonearm
import TonearmTestSupport

/// The formatID as the goldens write it: four characters, or 0xXXXXXXXX when not printable.
func goldenString(_ id: AudioFormatID) -> String {
    id.fourCC.isPrintable ? id.fourCC.string : "0x" + hex8(id.rawValue)
}

final class WAVETests: XCTestCase {
    var wavFixtures: [String] { fixtureFiles("pcm", extensions: ["wav"]) }

    func testEveryWAVFixtureMatchesItsGolden() throws {
        let files = wavFixtures
        guard !files.isEmpty else { return XCTFail("no fixtures in \(fixturesDirectory)/pcm") }
        for path in files {
            guard let g = Golden(fixture: path) else { continue }
            let file = try AudioFile(path: path)
            let p = try file.properties
            let f = try XCTUnwrap(p.dataFormat, path)
            XCTAssertEqual(p.fileType.fourCC.string, g.fileType, path)
            XCTAssertEqual(goldenString(f.formatID), g.formatID, path)
            XCTAssertEqual(Int(f.sampleRate), g.sampleRate, path)
            XCTAssertEqual(Int(f.channelsPerFrame), g.channels, path)
            // Frames: ffmpeg decodes whole blocks, so compare the packets' total frames.
            XCTAssertEqual(try file.audioDataPacketCount * Int64(f.framesPerPacket), Int64(g.frames), path)
            if let off = g.dataOffset { XCTAssertEqual(p.dataOffset, Int64(off), path) }
            if let size = g.dataSize, size != 0xFFFF_FFFF, size != 0 {
                XCTAssertEqual(p.audioDataByteCount, Int64(size), path)
            }
            if let mask = g.channelLayoutMask {
                XCTAssertEqual(p.channelLayout?.waveChannelMask, UInt32(mask), path)
            }
            if let info = g.info {
                // ffmpeg's metadata names, in Apple's InfoDictionary keys.
                let appleKey = ["comment": InfoDictionary.comments, "date": InfoDictionary.year]
                for (k, v) in info { XCTAssertEqual(p.info[appleKey[k] ?? k], v, "\(path): info \(k)") }
            }
        }
    }

    func testDripFeedEqualityForEveryWAVFixture() throws {
        let files = wavFixtures
        guard !files.isEmpty else { return XCTFail("no fixtures in \(fixturesDirectory)/pcm") }
        for path in files {
            let bytes = try readWholeFile(path)
            XCTAssertNil(dripFeedMismatch(bytes), path)
            let r = feed(bytes, pattern: .allAtOnce)
            XCTAssertNil(r.error, path)
            XCTAssertTrue(r.notifications.last == .readyToProducePackets || r.notifications.contains(.readyToProducePackets), path)
        }
    }

    /// AudioFile's packets and AudioFileStream's packets are the same bytes.
    func testFileAndStreamGiveTheSamePackets() throws {
        let files = wavFixtures
        guard !files.isEmpty else { return XCTFail("no fixtures in \(fixturesDirectory)/pcm") }
        for path in files {
            let file = try AudioFile(path: path)
            var fromFile: [UInt8] = []
            let total = try file.audioDataPacketCount
            var next: Int64 = 0
            while next < total {
                let (data, _) = try file.readPacketData(startingAt: next, count: 1000)
                fromFile += data
                next += min(1000, total - next)
            }
            XCTAssertThrowsError(try file.readPacketData(startingAt: total, count: 1)) {
                XCTAssertEqual(($0 as? AudioError)?.code, .endOfFile)
            }
            let r = feed(try readWholeFile(path), pattern: .randomChunks(seed: 9, maximum: 3000))
            XCTAssertEqual(r.packetData, fromFile, path)
            XCTAssertEqual(Int64(r.packetSizes.count), total, path)
        }
    }

    /// Seed 001: a 16 kHz mono s16le WAV through AudioFile and through AudioFileStream.
    func testSeed001SpeechWAVThroughBothPaths() throws {
        let path = fixturesDirectory + "/pcm/wav_s16le_mono_16k.wav"
        guard fileExists(path) else { return XCTFail("the fixture \(path) is missing") }
        let file = try AudioFile(path: path)
        let format = try file.dataFormat
        XCTAssertEqual(format, .pcm(sampleRate: 16000, channels: 1, bits: 16))
        XCTAssertEqual(try file.audioDataPacketCount, 16000)
        XCTAssertEqual(try file.maximumPacketSize, 2)
        let (fileBytes, descriptions) = try file.readPacketData(startingAt: 0, count: 16000)
        XCTAssertNil(descriptions)
        var streamFormat: StreamDescription?
        var streamBytes: [UInt8] = []
        var packetCount = 0
        let stream = AudioFileStream(fileTypeHint: .wave, propertyListener: { s, id, _ in
            if id == .dataFormat { streamFormat = try? s.dataFormat }
        }, packets: { bytes, packets, data, descriptions in
            XCTAssertNil(descriptions)
            XCTAssertEqual(bytes, packets * 2)
            streamBytes += data
            packetCount += packets
        })
        let all = try readWholeFile(path)
        for start in stride(from: 0, to: all.count, by: 4096) {
            try stream.parse(all[start..<min(all.count, start + 4096)])
        }
        try stream.parse(nil)
        XCTAssertEqual(streamFormat, format)
        XCTAssertEqual(packetCount, 16000)
        XCTAssertEqual(try stream.audioDataPacketCount, 16000)
        XCTAssertEqual(streamBytes, fileBytes)
    }

    /// Seed 000's AudioFileParser: create, parse in chunks, seek, parse with a discontinuity, close.
    func testSeed000ParserSeekAndDiscontinuity() throws {
        let path = fixturesDirectory + "/pcm/wav_s16le_mono_16k.wav"
        guard fileExists(path) else { return XCTFail("the fixture \(path) is missing") }
        let all = try readWholeFile(path)
        var received: [[UInt8]] = []
        var ids: [AudioFilePropertyID] = []
        let stream = AudioFileStream(propertyListener: { _, id, flags in
            ids.append(id)
            XCTAssertTrue(flags.contains(.propertyIsCached))
        }, packets: { _, _, data, _ in received.append(Array(data)) })
        XCTAssertThrowsError(try stream.dataFormat) { XCTAssertEqual(($0 as? AudioError)?.code, .valueUnknown) }
        try stream.parse(all[0..<1000])
        XCTAssertEqual(ids.last, .readyToProducePackets)
        XCTAssertEqual(ids.first, .fileFormat)
        let dataOffset = try stream.dataOffset
        XCTAssertEqual(dataOffset, 44)
        let (offset, flags) = try stream.seek(toPacket: 5000)
        XCTAssertEqual(offset, 5000 * 2)
        XCTAssertFalse(flags.contains(.offsetIsEstimated))
        received.removeAll()
        let from = Int(dataOffset + offset)
        try stream.parse(all[from..<from + 64], flags: .discontinuity)
        XCTAssertEqual(received.flatMap { $0 }, Array(all[from..<from + 64]))
        // An odd split: the half packet waits for its other half.
        received.removeAll()
        try stream.parse(all[from + 64..<from + 67])
        try stream.parse(all[from + 67..<from + 70])
        XCTAssertEqual(received.flatMap { $0 }, Array(all[from + 64..<from + 70]))
        XCTAssertThrowsError(try stream.setProperty(.dataFormat, .uint32(0))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .illegalOperation)
        }
        XCTAssertThrowsError(try stream.property(.packetTableInfo)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedProperty)
        }
        XCTAssertEqual(try stream.frame(forPacket: 10), 10)
        XCTAssertEqual(try stream.packet(forByte: 21).packet, 10)
        stream.close()
        XCTAssertThrowsError(try stream.parse(all[0..<10])) { XCTAssertEqual(($0 as? AudioError)?.code, .illegalOperation) }
    }

    func testPropertiesComeInAppleOrderAndReadyComesLast() throws {
        let path = fixturesDirectory + "/pcm/wav_list_info.wav"
        guard fileExists(path) else { return XCTFail("the fixture \(path) is missing") }
        let r = feed(try readWholeFile(path), pattern: .allAtOnce)
        let ready = try XCTUnwrap(r.notifications.firstIndex(of: .readyToProducePackets))
        let before = Array(r.notifications[..<ready])
        XCTAssertEqual(before.first, .fileFormat)
        XCTAssertEqual(before[1], .dataFormat)
        XCTAssertTrue(before.contains(.dataOffset))
        XCTAssertTrue(before.contains(.audioDataByteCount))
        XCTAssertEqual(r.info?[InfoDictionary.title], "Tonearm Test Tone")
    }

    func testUnknownTypeAndEmptyInput() {
        var r = feed(Array("hello, this is not audio at all".utf8), pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, .unsupportedFileType)
        r = feed([], pattern: .allAtOnce)
        XCTAssertEqual(r.error?.code, .unsupportedFileType)
        XCTAssertThrowsError(try AudioFile(source: MemorySource([]))) { XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedFileType) }
    }
}

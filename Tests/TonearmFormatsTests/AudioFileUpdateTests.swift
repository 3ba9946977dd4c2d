import Tonearm
import TonearmTestSupport
import XCTest

/// Existing files opened read-write (issue 16 §2): packets appended and rewritten, raw
/// bytes written, the info dictionary set; ffmpeg/ffprobe check the result.
final class AudioFileUpdateTests: XCTestCase {
    /// 16-bit samples for `frames` frames, a ramp from `seed`, in the file's byte order.
    func samples(_ frames: Int, channels: Int, seed: Int, bigEndian: Bool) -> (file: [UInt8], le: [UInt8]) {
        var file: [UInt8] = [], le: [UInt8] = []
        for i in 0..<frames * channels {
            let v = UInt16(truncatingIfNeeded: (seed + i * 37) &* 11)
            let lo = UInt8(v & 0xFF), hi = UInt8(v >> 8)
            file += bigEndian ? [hi, lo] : [lo, hi]
            le += [lo, hi]
        }
        return (file, le)
    }

    func be32(_ b: [UInt8], _ at: Int) -> Int64 { Int64(b[at]) << 24 | Int64(b[at + 1]) << 16 | Int64(b[at + 2]) << 8 | Int64(b[at + 3]) }
    func le32(_ b: [UInt8], _ at: Int) -> Int64 { Int64(b[at + 3]) << 24 | Int64(b[at + 2]) << 16 | Int64(b[at + 1]) << 8 | Int64(b[at]) }

    func testAppendRewriteAndTagInPlace() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let ffprobe = try requireTool("ffprobe")
        let dir = makeTemporaryDirectory()
        for name in ["wav_list_info.wav", "aiff_s16be.aiff", "caf_s16le.caf", "wav_s16le_mono_16k.wav"] {
            let original = fixturesDirectory + "/pcm/" + name
            let path = dir + "/" + name
            try writeWholeFile(path, try readWholeFile(original))
            var expected = try runToolData(ffmpeg, ["-v", "error", "-i", original, "-f", "s16le", "-"])

            let file = try AudioFile(path: path, permissions: .readWrite)
            let f = try file.dataFormat
            let channels = Int(f.channelsPerFrame), frameBytes = 2 * channels
            let before = try file.audioDataPacketCount
            XCTAssertEqual(Int(before) * frameBytes, expected.count, name)
            XCTAssertTrue(file.isWriting, name)
            // Append 1000 frames.
            let tail = samples(1000, channels: channels, seed: 1, bigEndian: f.isBigEndian)
            try file.writePackets(tail.file, count: 1000, startingAt: before)
            expected += tail.le
            // Rewrite frames 100 ..< 200.
            let middle = samples(100, channels: channels, seed: 7, bigEndian: f.isBigEndian)
            try file.writePackets(middle.file, count: 100, startingAt: 100)
            expected.replaceSubrange((100 * frameBytes)..<(200 * frameBytes), with: middle.le)
            // Raw bytes: frame 50 (AudioFileWriteBytes).
            let raw = samples(1, channels: channels, seed: 99, bigEndian: f.isBigEndian)
            try file.writeBytes(startingAt: Int64(50 * frameBytes), data: raw.file)
            expected.replaceSubrange((50 * frameBytes)..<(51 * frameBytes), with: raw.le)
            XCTAssertEqual(try file.audioDataPacketCount, before + 1000, name)
            try file.setProperty(.infoDictionary, .info(InfoDictionary([("title", "Updated in place"), ("artist", "Tonearm")])))
            // Variable-size rules do not apply; a packet past the end does.
            XCTAssertThrowsError(try file.writePackets(tail.file, count: 1000, startingAt: before + 1001)) {
                XCTAssertEqual(($0 as? AudioError)?.code, .invalidPacketOffset)
            }
            try file.close()

            let decoded = try runToolData(ffmpeg, ["-v", "error", "-i", path, "-f", "s16le", "-"])
            XCTAssertEqual(decoded.count, expected.count, name)
            XCTAssertTrue(decoded == expected, "\(name): samples differ")
            // ffmpeg reads AIFF's AUTH as "author". (Its CAF demuxer guesses duration_ts from
            // the file size, so the frame count is checked from the decode and the header.)
            let isAIFF = name.hasSuffix(".aiff")
            let probe = try runTool(ffprobe, ["-v", "error", "-show_entries", "stream=duration_ts:format_tags=title,artist,author,album",
                                              "-of", "compact=p=0:nk=0", path])
            let tags = "tag:title=Updated in place|tag:\(isAIFF ? "author" : "artist")=Tonearm"
            if name.hasSuffix(".caf") {
                XCTAssertTrue(probe.hasSuffix("\n" + tags), "\(name): \(probe)")
            } else {
                XCTAssertEqual(probe, "duration_ts=\(before + 1000)\n" + tags, name)
            }

            // The header's size fields, read directly.
            let bytes = try readWholeFile(path)
            let reread = try AudioFile(path: path)
            let dataBytes = Int64(before + 1000) * Int64(frameBytes)
            XCTAssertEqual(try reread.audioDataByteCount, dataBytes, name)
            XCTAssertEqual(try reread.infoDictionary["title"], "Updated in place", name)
            let dataOffset = Int(try reread.dataOffset)
            switch try reread.fileType {
            case .wave:
                XCTAssertEqual(le32(bytes, 4), Int64(bytes.count - 8), name)
                XCTAssertEqual(le32(bytes, dataOffset - 4), dataBytes, name)
            case .aiff:
                XCTAssertEqual(be32(bytes, 4), Int64(bytes.count - 8), name)
                XCTAssertEqual(be32(bytes, dataOffset - 12), 8 + dataBytes, name)  // SSND size
                XCTAssertEqual(be32(bytes, 12 + 8 + 2), before + 1000, name)  // COMM numSampleFrames
            default:
                XCTAssertEqual(be32(bytes, dataOffset - 12) << 32 | be32(bytes, dataOffset - 8), dataBytes + 4, name)
            }
        }
    }

    /// A CAF of variable-size packets whose 'pakt' precedes 'data': a packet appended, the
    /// old table freed and a new one written after the audio; ffprobe counts the packets.
    func testAppendVariableSizePackets() throws {
        let ffprobe = try requireTool("ffprobe")
        let dir = makeTemporaryDirectory()
        let path = dir + "/remux_flac.caf"
        try writeWholeFile(path, try readWholeFile(fixturesDirectory + "/caf/remux_flac.caf"))
        let file = try AudioFile(path: path, permissions: .readWrite)
        let (first, d) = try file.readPacketData(startingAt: 0, count: 1)
        XCTAssertThrowsError(try file.writePackets(first, count: 1, descriptions: d, startingAt: 1)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .invalidPacketOffset)
        }
        XCTAssertThrowsError(try file.writeBytes(startingAt: 0, data: first)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .operationNotSupported)
        }
        try file.writePackets(first, count: 1, descriptions: d, startingAt: 3)
        try file.close()
        let reread = try AudioFile(path: path)
        XCTAssertEqual(try reread.properties.packetTable?.map(\.dataByteSize), [10174, 10203, 4238, 10174])
        XCTAssertEqual(try reread.readPacketData(startingAt: 3, count: 1).data, first)
        XCTAssertEqual(try reread.properties.chunkIDs.filter { $0 == "pakt" }.count, 1)
        let probe = try runTool(ffprobe, ["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
        XCTAssertEqual(probe, "4")
    }

    /// kAudioFilePropertyDeferSizeUpdates: 1 by default (sizes at close); 0 makes the file
    /// complete after every write.
    func testDeferSizeUpdates() throws {
        let ffprobe = try requireTool("ffprobe")
        let dir = makeTemporaryDirectory()
        let path = dir + "/grow.wav"
        let file = try AudioFile.create(path: path, type: .wave, format: .pcm(sampleRate: 8000, channels: 1, bits: 16))
        XCTAssertEqual(try file.property(.deferSizeUpdates).uint32(), 1)
        XCTAssertEqual(try file.propertyInfo(.deferSizeUpdates).isWritable, true)
        let chunk = samples(100, channels: 1, seed: 3, bigEndian: false).file
        try file.writePackets(chunk, count: 100, startingAt: 0)
        let dataOffset = Int(try file.dataOffset)
        XCTAssertEqual(le32(try readWholeFile(path), dataOffset - 4), 0)  // deferred: not yet
        try file.setProperty(.deferSizeUpdates, .uint32(0))
        XCTAssertEqual(try file.property(.deferSizeUpdates).uint32(), 0)
        try file.writePackets(chunk, count: 100, startingAt: 100)
        let open = try readWholeFile(path)
        XCTAssertEqual(le32(open, dataOffset - 4), 400)
        XCTAssertEqual(le32(open, 4), Int64(open.count - 8))
        XCTAssertEqual(try runTool(ffprobe, ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path]), "200")
        try file.close()
        XCTAssertEqual(try readWholeFile(path), open)

        let au = try AudioFile.create(path: dir + "/x.au", type: .next, format: .pcm(sampleRate: 8000, channels: 1, bits: 16, isBigEndian: true))
        XCTAssertThrowsError(try au.setProperty(.deferSizeUpdates, .uint32(0))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .operationNotSupported)
        }
        try au.close()
    }

    /// Types Tonearm cannot update, and an AIFF whose COMM follows SSND, are refused.
    func testRefusals() throws {
        let dir = makeTemporaryDirectory()
        for (name, code) in [("au_s16be.au", AudioError.Code.permissions), ("aiff_comm_after_ssnd.aiff", .notOptimized)] {
            let path = dir + "/" + name
            try writeWholeFile(path, try readWholeFile(fixturesDirectory + "/pcm/" + name))
            XCTAssertThrowsError(try AudioFile(path: path, permissions: .readWrite), name) {
                XCTAssertEqual(($0 as? AudioError)?.code, code, name)
            }
            XCTAssertEqual(try readWholeFile(path), try readWholeFile(fixturesDirectory + "/pcm/" + name), name)
        }
    }
}

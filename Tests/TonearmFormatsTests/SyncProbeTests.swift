import Foundation
import XCTest
import Tonearm
@testable import TonearmFormats
import TonearmTestSupport

/// Probing past leading ID3v2 tags, on the push path (AudioFileStream, fed in any pieces)
/// and the random-access path (AudioFile): the tag's size says where the content begins,
/// whatever its size, and the content decides the type.
final class SyncProbeTests: XCTestCase {
    /// An ID3v2.3 tag with a title and `padding` bytes of a PRIV frame (its data full of
    /// MPEG and ADTS sync words, so that a probe that looked inside would be fooled).
    static func tag(title: String, padding: Int) -> [UInt8] {
        var body: [UInt8] = Array("x\0".utf8)
        while body.count < padding { body += [0xFF, 0xFB, 0x90, 0x64, 0xFF, 0xF1, 0x50, 0x80] }
        return FramedTests.id3v23(frames: [FramedTests.id3Frame("TIT2", [0] + Array(title.utf8)),
                                           FramedTests.id3Frame("PRIV", Array(body.prefix(padding)))])
    }

    static func fixture(_ path: String) throws -> [UInt8] { try readWholeFile(fixturesDirectory + "/" + path) }

    /// The type both paths pick, the same packets as the file without the tag, and the
    /// data offset moved by the tag.
    func assertBehindTag(_ plain: [UInt8], tag: [UInt8], type: AudioFileTypeID, file: StaticString = #filePath,
                         line: UInt = #line) throws
    {
        let bytes = tag + plain
        let reference = try AudioFile(source: MemorySource(plain))
        let tagged = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try tagged.fileType, type, file: file, line: line)
        XCTAssertEqual(try tagged.dataOffset, try reference.dataOffset + Int64(tag.count), file: file, line: line)
        XCTAssertEqual(try tagged.audioDataPacketCount, try reference.audioDataPacketCount, file: file, line: line)
        let expected = feed(plain, pattern: .allAtOnce)
        XCTAssertNil(expected.error, file: file, line: line)
        for pattern in [FeedPattern.oneByteAtATime, .randomChunks(seed: 11, maximum: 300), .allAtOnce] {
            let r = feed(bytes, pattern: pattern)
            XCTAssertNil(r.error, "\(pattern)", file: file, line: line)
            XCTAssertEqual(r.packetSizes, expected.packetSizes, "\(pattern)", file: file, line: line)
            XCTAssertEqual(r.packetData, expected.packetData, "\(pattern)", file: file, line: line)
            XCTAssertEqual(r.dataFormat, expected.dataFormat, "\(pattern)", file: file, line: line)
            XCTAssertEqual(r.dataOffset, expected.dataOffset.map { $0 + Int64(tag.count) }, "\(pattern)", file: file, line: line)
        }
    }

    /// The FLAC fixture with an ID3v2 tag in front, fed one byte at a time: FLAC needs 48
    /// bytes to see its marker behind the 44-byte tag, and MPEG's claim on the tag must
    /// not win meanwhile.
    func testFLACBehindASmallTagOneByteAtATime() throws {
        let bytes = try Self.fixture("flac/flac_id3v2.flac")
        for pattern in [FeedPattern.oneByteAtATime, .randomChunks(seed: 1, maximum: 7), .allAtOnce] {
            let r = feed(bytes, pattern: pattern)
            XCTAssertNil(r.error, "\(pattern)")
            XCTAssertEqual(r.dataFormat?.formatID, .flac, "\(pattern)")
            XCTAssertEqual(r.packetSizes.count, 10, "\(pattern)")
        }
        XCTAssertNil(dripFeedMismatch(bytes))
        XCTAssertEqual(try AudioFile(source: MemorySource(bytes)).fileType, .flac)
        // The tag is 44 bytes: the probe waits for it and for 12 bytes after it.
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(12))), .needMore)
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(55))), .needMore)
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(56))), .match(.flac))
    }

    /// A tag of any size: larger than the probe's 64 bytes and than AudioFile's first read.
    func testEveryFramedTypeBehindALargeTag() throws {
        let tag = Self.tag(title: "Behind", padding: 70_000)
        try assertBehindTag(try Self.fixture("flac/flac_b1152.flac"), tag: tag, type: .flac)
        try assertBehindTag(try Self.fixture("adts/aac_lc_mono_22k.aac"), tag: tag, type: .adts)
        try assertBehindTag(try Self.fixture("adts/latm.loas"), tag: tag, type: .loas)
        try assertBehindTag(try Self.fixture("ac3/ac3_stereo_48k.ac3"), tag: tag, type: .ac3)
        try assertBehindTag(try Self.fixture("ac3/eac3_stereo_48k.eac3"), tag: tag, type: .eac3)
        try assertBehindTag(try Self.fixture("mpeg/lame_mpeg2_22k.mp3"), tag: tag, type: .mp3)
        try assertBehindTag(try Self.fixture("mpeg/ffmpeg_layer2.mp2"), tag: tag, type: .mp2)
        // The tag is read by the parser the type picked.
        let loas = tag + (try Self.fixture("adts/latm.loas"))
        XCTAssertEqual(try AudioFile(source: MemorySource(loas)).infoDictionary[InfoDictionary.title], "Behind")
        XCTAssertEqual(feed(loas, pattern: .randomChunks(seed: 2, maximum: 5000)).info?[InfoDictionary.title], "Behind")
    }

    /// LOAS, AC-3 and ADTS behind a small tag (the case ffmpeg writes for HLS packed audio).
    func testSmallTags() throws {
        let tag = Self.tag(title: "Small", padding: 20)
        try assertBehindTag(try Self.fixture("adts/latm.loas"), tag: tag, type: .loas)
        try assertBehindTag(try Self.fixture("ac3/ac3_5.1_44k.ac3"), tag: tag, type: .ac3)
        try assertBehindTag(try Self.fixture("adts/aac_lc_stereo.aac"), tag: tag, type: .adts)
        // Two tags in a row.
        try assertBehindTag(try Self.fixture("flac/flac_b1152.flac"), tag: tag + Self.tag(title: "Second", padding: 3000), type: .flac)
    }

    /// A run of tags longer than a stream holds while it probes (16 MiB): dropped as it
    /// arrives, and the parser starts after it; AudioFile skips it too.
    func testTagLongerThanAStreamHolds() throws {
        let tag = Self.tag(title: "Huge", padding: Int(FormatRegistry.maximumHeldTagBytes) + 1000)
        for (path, type) in [("flac/flac_b1152.flac", AudioFileTypeID.flac), ("adts/aac_lc_mono_22k.aac", .adts)] {
            let plain = try Self.fixture(path)
            let bytes = tag + plain
            XCTAssertEqual(try AudioFile(source: MemorySource(bytes)).fileType, type, path)
            let expected = feed(plain, pattern: .allAtOnce)
            for pattern in [FeedPattern.allAtOnce, .randomChunks(seed: 4, maximum: 1 << 20)] {
                let r = feed(bytes, pattern: pattern)
                XCTAssertNil(r.error, "\(path) \(pattern)")
                XCTAssertEqual(r.packetData, expected.packetData, "\(path) \(pattern)")
                XCTAssertEqual(r.dataOffset, expected.dataOffset.map { $0 + Int64(tag.count) }, "\(path) \(pattern)")
            }
        }
    }

    /// Tags that nothing recognisable follows are MP3 (their usual content), unless a hint
    /// says otherwise; a stream that ends inside its tag is MP3 too, and fails cleanly.
    func testTagsWithoutRecognisableContent() throws {
        let tag = Self.tag(title: "Junk", padding: 200)
        let junk = (0..<3000).map { UInt8($0 % 200) }
        XCTAssertEqual(FormatRegistry.probe(tag + junk), .match(.mp3))
        XCTAssertEqual(FormatRegistry.identify(tag + junk, isEndOfStream: true, hint: .adts, pathExtension: nil, mimeType: nil),
                       .match(.adts))
        XCTAssertEqual(FormatRegistry.probe(Array(tag.prefix(100)), isEndOfStream: true), .match(.mp3))
        XCTAssertEqual(feed(Array(tag.prefix(100)), pattern: .oneByteAtATime).error?.code, .invalidFile)
        XCTAssertEqual(SyncKit.openError(Array(tag.prefix(100)))?.code, .invalidFile)
        // An MP3 with junk between the tag and the frames is still MP3.
        let mp3 = try Self.fixture("mpeg/lame_no_tag.mp3")
        let r = feed(tag + Array(repeating: 0, count: 100) + mp3, pattern: .randomChunks(seed: 5, maximum: 64))
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetData, feed(mp3, pattern: .allAtOnce).packetData)
        // A file that is only a tag header.
        XCTAssertEqual(FormatRegistry.probe(Array(tag.prefix(10)), isEndOfStream: false), .needMore)
        // An invalid tag header is not skipped: the bytes are what they are.
        var bad = tag + mp3
        bad[6] = 0x80
        XCTAssertEqual(FormatRegistry.probe(bad), .noMatch)
    }

    /// A type that needs more bytes holds back a later type's match, but only until the
    /// probe's 64 bytes are there (or the stream ends).
    func testHoldBackEndsAtTheProbeSize() throws {
        // "slow" decides at 40 bytes (it matches when byte 39 is 1); "eager" matches anything.
        let slow = FileTypeInfo(type: "slow", name: "slow", extensions: [], mimeTypes: [], magic: { head, end in
            head.count >= 40 ? (head[39] == 1 ? .match("slow") : .noMatch) : end ? .noMatch : .needMore
        }, parser: { FramedParser(format: AMRFormat(), fileType: "slow") })
        let eager = FileTypeInfo(type: "eagr", name: "eager", extensions: [], mimeTypes: [], magic: { _, _ in .match("eagr") },
                                 parser: { FramedParser(format: AMRFormat(), fileType: "eagr") })
        func probe(_ head: [UInt8], end: Bool = false) -> ProbeResult {
            FormatRegistry.probeContent(head[...], afterTags: false, isEndOfStream: end, types: [slow, eager])
        }
        var head = [UInt8](repeating: 0, count: 64)
        XCTAssertEqual(probe(Array(head.prefix(12))), .needMore)
        XCTAssertEqual(probe(Array(head.prefix(39))), .needMore)
        XCTAssertEqual(probe(Array(head.prefix(12)), end: true), .match("eagr"))
        XCTAssertEqual(probe(Array(head.prefix(40))), .match("eagr"))
        head[39] = 1
        XCTAssertEqual(probe(Array(head.prefix(40))), .match("slow"))
        // A type that still cannot tell at 64 bytes holds nothing back.
        let never = FileTypeInfo(type: "nevr", name: "never", extensions: [], mimeTypes: [], magic: { _, _ in .needMore },
                                 parser: { FramedParser(format: AMRFormat(), fileType: "nevr") })
        XCTAssertEqual(FormatRegistry.probeContent(head[...], afterTags: false, isEndOfStream: false, types: [never, eager]),
                       .match("eagr"))
        XCTAssertEqual(FormatRegistry.probeContent(head[..<63], afterTags: false, isEndOfStream: false, types: [never, eager]),
                       .needMore)
        // After tags, only the types that read them are asked.
        XCTAssertEqual(FormatRegistry.probeContent(head[...], afterTags: true, isEndOfStream: true, types: [slow, eager]), .noMatch)
    }
}

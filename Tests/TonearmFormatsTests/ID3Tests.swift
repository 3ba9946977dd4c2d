import Foundation
import XCTest
import Tonearm
@testable import TonearmFormats
import TonearmTestSupport

final class ID3Tests: XCTestCase {
    private func parse(_ bytes: [UInt8]) -> ID3v2.Tag? { bytes.withUnsafeBytes { ID3v2.parse($0) } }

    /// The three tagged fixtures (2.2, 2.3 and 2.4 with unsynchronisation, an extended
    /// header and a footer) give the info and artwork their goldens list.
    func testFixtureTags() throws {
        for name in ["tagged_id3v22_id3v1.mp3", "tagged_id3v23_ape_id3v1.mp3", "tagged_id3v24_unsync.mp3"] {
            let g = try XCTUnwrap(SyncKit.Golden(fixture: fixturesDirectory + "/mpeg/" + name))
            let bytes = try readWholeFile(g.path)
            let size = try XCTUnwrap(bytes.withUnsafeBytes { ID3v2.tagSize($0) })
            let tag = try XCTUnwrap(parse(Array(bytes[0..<Int(size)])), name)
            XCTAssertEqual(tag.majorVersion, Int(bytes[3]), name)
            XCTAssertEqual(tag.artwork.map(SHA256Hex.hash), g.artworkSHA256, name)
            let file = try AudioFile(path: g.path)
            XCTAssertEqual(try file.properties.id3Tag?.count, Int(size), name)
            XCTAssertEqual(try file.dataOffset, Int64(g.packetOffsets[0]), name)
            for (k, v) in try XCTUnwrap(g.info) { XCTAssertEqual(try file.infoDictionary[k], v, "\(name): \(k)") }
        }
    }

    func testTextEncodings() {
        let latin = ID3v2.decode([0x63, 0x61, 0x66, 0xE9][...], encoding: 0)
        XCTAssertEqual(latin, "café")
        XCTAssertEqual(ID3v2.decode([0xFF, 0xFE, 0x63, 0, 0xE9, 0][...], encoding: 1), "cé")
        XCTAssertEqual(ID3v2.decode([0xFE, 0xFF, 0, 0x63, 0, 0xE9][...], encoding: 1), "cé")
        XCTAssertEqual(ID3v2.decode([0, 0x63, 0x26, 0x13][...], encoding: 2), "c\u{2613}")
        XCTAssertEqual(ID3v2.decode(Array("é✓".utf8)[...], encoding: 3), "é✓")
        XCTAssertEqual(ID3v2.decodeStrings(Array("a\0b\0".utf8)[...], encoding: 3), ["a", "b"])
        XCTAssertEqual(ID3v2.decodeStrings([0xFF, 0xFE, 0x61, 0, 0, 0, 0xFF, 0xFE, 0x62, 0][...], encoding: 1), ["a", "b"])
    }

    func testGenres() {
        XCTAssertEqual(ID3v2.genreName("(13)"), "Pop")
        XCTAssertEqual(ID3v2.genreName("17"), "Rock")
        XCTAssertEqual(ID3v2.genreName("(4)Eurodisco"), "Eurodisco")
        XCTAssertEqual(ID3v2.genreName("(RX)"), "Remix")
        XCTAssertEqual(ID3v2.genreName("Shoegaze"), "Shoegaze")
        XCTAssertEqual(ID3v1.genre(79), "Hard Rock")
        XCTAssertEqual(ID3v1.genre(125), "Dance Hall")
        XCTAssertNil(ID3v1.genre(255))
    }

    func testUnsynchronisation() {
        XCTAssertEqual(ID3v2.removeUnsynchronisation([0xFF, 0x00, 0xE0, 0xFF, 0x00, 0x00, 0x12][...]), [0xFF, 0xE0, 0xFF, 0x00, 0x12])
        // A 2.3 tag unsynchronised as a whole.
        let text: [UInt8] = [0x00] + Array("x".utf8) + [0xFF, 0xE2]  // Latin-1 "xÿâ"
        var frame = Array("TIT2".utf8) + [0, 0, 0, UInt8(text.count), 0, 0] + text
        frame = [UInt8](ID3v2.removeUnsynchronisation(frame[...]))
        var body: [UInt8] = []
        for (i, b) in frame.enumerated() { body.append(b); if b == 0xFF && i + 1 < frame.count && frame[i + 1] >= 0xE0 { body.append(0) } }
        let tag = Array("ID3".utf8) + [3, 0, 0x80] + FramedTests.syncsafe(body.count) + body
        XCTAssertEqual(parse(tag)?.info[InfoDictionary.title], "xÿâ")
    }

    /// 2.4 frame sizes written as plain integers (old iTunes) are recognised.
    func testPlainSizesIn24() {
        let big = [UInt8](repeating: 0x61, count: 200)  // 200 = 0xC8: not syncsafe
        var body = Array("TIT2".utf8) + [0, 0, 0, 201, 0, 0, 3] + big
        body += Array("TPE1".utf8) + [0, 0, 0, 3, 0, 0, 3, 0x41, 0x42]
        let tag = Array("ID3".utf8) + [4, 0, 0] + FramedTests.syncsafe(body.count) + body
        let t = parse(tag)
        XCTAssertEqual(t?.info[InfoDictionary.title], String(repeating: "a", count: 200))
        XCTAssertEqual(t?.info[InfoDictionary.artist], "AB")
    }

    func testHeaderValidation() {
        func size(_ b: [UInt8]) -> Int64? { b.withUnsafeBytes { ID3v2.tagSize($0) } }
        XCTAssertEqual(size(Array("ID3".utf8) + [3, 0, 0, 0, 0, 1, 0]), 10 + 128)
        XCTAssertEqual(size(Array("ID3".utf8) + [4, 0, 0x10, 0, 0, 0, 5]), 10 + 5 + 10)  // footer
        XCTAssertNil(size(Array("ID3".utf8) + [3, 0, 0, 0x80, 0, 0, 0]))  // not syncsafe
        XCTAssertNil(size(Array("ID3".utf8) + [0xFF, 0, 0, 0, 0, 0, 0]))
        XCTAssertNil(size(Array("ID4".utf8) + [3, 0, 0, 0, 0, 0, 0]))
        // Malformed frames stop the reader without a crash.
        for cut in [11, 15, 20, 24] {
            var body = Array("TIT2".utf8) + [0, 0, 0x10, 0, 0, 0, 0]
            body += [UInt8](repeating: 0x41, count: 20)
            let tag = Array("ID3".utf8) + [3, 0, 0] + FramedTests.syncsafe(body.count) + body
            _ = parse(Array(tag.prefix(cut)))
            _ = parse(tag)
        }
    }

    func testID3v1AndAPE() throws {
        var v1 = Array("TAG".utf8) + [UInt8](repeating: 0, count: 125)
        for (i, c) in "Title".utf8.enumerated() { v1[3 + i] = c }
        for (i, c) in "2020".utf8.enumerated() { v1[93 + i] = c }
        v1[126] = 9
        v1[127] = 13
        let info = try XCTUnwrap(v1.withUnsafeBytes { ID3v1.parse($0) })
        XCTAssertEqual(info[InfoDictionary.title], "Title")
        XCTAssertEqual(info[InfoDictionary.year], "2020")
        XCTAssertEqual(info[InfoDictionary.trackNumber], "9")
        XCTAssertEqual(info[InfoDictionary.genre], "Pop")
        let ape = FramedTests.apeTag([("TITLE", "APE"), ("Track", "4/9"), ("Unknown", "x")])
        var p = FileProperties(fileType: .mp3)
        ape.withUnsafeBytes { APETag.read($0, into: &p) }
        XCTAssertEqual(p.info[InfoDictionary.title], "APE")
        XCTAssertEqual(p.info[InfoDictionary.trackNumber], "4/9")
        XCTAssertEqual(p.info.count, 2)
        // A footer alone (APEv1 style) is found at the end of the frames; the items are
        // fetched on the random-access path.
        let footerOnly = Array(ape[32...])
        let audio = FramedTests.frames(3)
        let file = try AudioFile(source: MemorySource(audio + footerOnly))
        XCTAssertEqual(try file.infoDictionary[InfoDictionary.title], "APE")
        XCTAssertEqual(try file.audioDataPacketCount, 3)
    }
}

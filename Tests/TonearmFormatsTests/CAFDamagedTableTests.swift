import Tonearm
import TonearmTestSupport
import XCTest

/// Damaged CAF files whose packet table places packets past the end of the file
/// (issue 16 §2): the whole packets are kept, the rest is reported in `missingPacketCount`.
final class CAFDamagedTableTests: XCTestCase {
    /// remux_flac.caf: 'pakt' (3 packets: 10174, 10203 and 4238 bytes; 11111 valid frames)
    /// before 'data' at 156, whose audio starts at 172.
    static let source = fixturesDirectory + "/caf/remux_flac.caf"

    /// The fixture with its 'data' size set to -1 ("to the end of the file") and the file cut
    /// 3000 bytes before its end, inside the third packet.
    static func sizeUnknownAndCut() throws -> [UInt8] {
        var bytes = try readWholeFile(source)
        XCTAssertEqual(Array(bytes[156..<160]), Array("data".utf8))
        for i in 160..<168 { bytes[i] = 0xFF }
        return Array(bytes.dropLast(3000))
    }

    /// The fixture cut inside the third packet with its 'data' size left as it was.
    static func truncated() throws -> [UInt8] { Array(try readWholeFile(source).dropLast(3000)) }

    func testPacketsPastTheEndAreDroppedAndCounted() throws {
        let dir = makeTemporaryDirectory()
        for (name, bytes) in [("size -1", try Self.sizeUnknownAndCut()), ("truncated", try Self.truncated())] {
            let path = dir + "/damaged.caf"
            try writeWholeFile(path, bytes)
            let file = try AudioFile(path: path)
            let p = try file.properties
            XCTAssertEqual(p.audioDataPacketCount, 2, name)
            XCTAssertEqual(p.missingPacketCount, 1, name)
            XCTAssertEqual(p.packetTable?.map(\.startOffset), [0, 10174], name)
            XCTAssertEqual(p.packetTable?.map(\.dataByteSize), [10174, 10203], name)
            // Every packet lies inside the file.
            for d in p.packetTable ?? [] {
                XCTAssertLessThanOrEqual(172 + d.startOffset + Int64(d.dataByteSize), Int64(bytes.count), name)
            }
            // 2 packets of 4608 frames: the valid frames shrink from 11111 to 9216.
            XCTAssertEqual(p.packetTableInfo, PacketTableInfo(numberValidFrames: 9216), name)
            XCTAssertEqual(try file.readPacketData(startingAt: 0, count: 3).data, Array(bytes[172..<(172 + 20377)]), name)
            XCTAssertThrowsError(try file.readPacketData(startingAt: 2, count: 1), name) {
                XCTAssertEqual(($0 as? AudioError)?.code, .endOfFile)
            }
            try file.close()
        }
        // A sound file has none missing.
        XCTAssertEqual(try AudioFile(path: Self.source).properties.missingPacketCount, 0)
    }
}

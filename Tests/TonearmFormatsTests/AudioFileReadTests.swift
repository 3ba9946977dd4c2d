import Tonearm
import TonearmTestSupport
import XCTest

/// `readPacketData` edge cases (issue 16 §2): zero packets, and a buffer too small for the
/// packets asked for, on constant- and variable-size files.
final class AudioFileReadTests: XCTestCase {
    let alac = fixturesDirectory + "/caf/remux_aac_stereo.caf"
    let wav = fixturesDirectory + "/pcm/wav_s16le_mono_16k.wav"

    /// Zero packets is a valid request: no data, and no trap on a variable-size file.
    func testZeroPacketsReadNothing() throws {
        let file = try AudioFile(path: alac)
        XCTAssertEqual(try file.dataFormat.bytesPerPacket, 0)
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: 0)
        XCTAssertEqual(data, [])
        XCTAssertEqual(descriptions, [])
        var buffer = [UInt8](repeating: 0, count: 64)
        let r = try buffer.withUnsafeMutableBytes { try file.readPacketData(startingAt: 3, count: 0, into: $0) }
        XCTAssertEqual(r.bytes, 0)
        XCTAssertEqual(r.packets, 0)
        XCTAssertEqual(r.descriptions, [])

        let pcm = try AudioFile(path: wav)
        let (d, p) = try pcm.readPacketData(startingAt: 0, count: 0)
        XCTAssertEqual(d, [])
        XCTAssertNil(p)
    }

    /// A buffer that holds only some of the packets: the packets that fit, their count and
    /// byte count, as Apple's AudioFileReadPacketData.
    func testSmallBufferReturnsThePacketsThatFit() throws {
        let file = try AudioFile(path: alac)
        let (all, allDescriptions) = try file.readPacketData(startingAt: 2, count: 4)
        let d = allDescriptions!
        XCTAssertEqual(d.count, 4)
        // Room for two and a half packets: two are read.
        let size = Int(d[0].dataByteSize + d[1].dataByteSize + d[2].dataByteSize / 2)
        var buffer = [UInt8](repeating: 0, count: size)
        let r = try buffer.withUnsafeMutableBytes { try file.readPacketData(startingAt: 2, count: 4, into: $0) }
        XCTAssertEqual(r.packets, 2)
        XCTAssertEqual(r.bytes, Int(d[0].dataByteSize + d[1].dataByteSize))
        XCTAssertEqual(r.descriptions, Array(d[0..<2]))
        XCTAssertEqual(Array(buffer[0..<r.bytes]), Array(all[0..<r.bytes]))

        // A buffer smaller than the first packet: Apple answers kAudio_ParamError (-50).
        var tiny = [UInt8](repeating: 0, count: Int(d[0].dataByteSize) - 1)
        XCTAssertThrowsError(try tiny.withUnsafeMutableBytes { try file.readPacketData(startingAt: 2, count: 4, into: $0) }) {
            XCTAssertEqual(($0 as? AudioError)?.code, .parameter)
            XCTAssertEqual(($0 as? AudioError)?.code.rawValue, -50)
        }
    }

    /// Constant-size packets: as many whole packets as fit; none (and no error) when even
    /// one does not, as Apple's CBR path.
    func testSmallBufferConstantSize() throws {
        let file = try AudioFile(path: wav)
        let all = try file.readPacketData(startingAt: 10, count: 8).data
        var buffer = [UInt8](repeating: 0, count: 7)
        let r = try buffer.withUnsafeMutableBytes { try file.readPacketData(startingAt: 10, count: 8, into: $0) }
        XCTAssertEqual(r.packets, 3)
        XCTAssertEqual(r.bytes, 6)
        XCTAssertNil(r.descriptions)
        XCTAssertEqual(Array(buffer[0..<6]), Array(all[0..<6]))
        var one = [UInt8](repeating: 0, count: 1)
        let none = try one.withUnsafeMutableBytes { try file.readPacketData(startingAt: 10, count: 8, into: $0) }
        XCTAssertEqual(none.packets, 0)
        XCTAssertEqual(none.bytes, 0)
    }
}

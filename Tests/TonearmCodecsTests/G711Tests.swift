import XCTest
@testable import TonearmCodecs
import TonearmCore

final class G711Tests: XCTestCase {
    private func decode(_ id: AudioFormatID, _ bytes: [UInt8], channels: UInt32 = 1,
                        as format: PCMBuffer.CommonFormat = .int16) throws -> PCMBuffer
    {
        let f = StreamDescription(sampleRate: 8000, formatID: id, bytesPerPacket: channels, framesPerPacket: 1,
                                  bytesPerFrame: channels, channelsPerFrame: channels, bitsPerChannel: 8)
        let d = try CodecRegistry.makeDecoder(for: f, output: format)
        let out = PCMBuffer(commonFormat: format, sampleRate: 8000, channels: Int(channels), interleaved: true,
                            frameCapacity: bytes.count / Int(channels))
        try bytes.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: bytes.count / Int(channels), descriptions: nil, into: out) }
        return out
    }

    func testMuLawKnownValues() throws {
        // G.711 Table 2a: 0xFF and 0x7F are the two zeros; 0x00 and 0x80 the extremes.
        let out = try decode(.uLaw, [0xFF, 0x7F, 0x00, 0x80, 0xFE, 0x7E, 0xEF, 0x6F, 0x8F])
        // 0xEF: inverted 0x10, segment 1 step 0: ((2·0 + 33)·2 − 33)·4 = 132; 0x8F: segment 7: (33·128 − 33)·4.
        XCTAssertEqual(out.int16Samples(channel: 0), [0, 0, -32124, 32124, 8, -8, 132, -132, 16764])
    }

    func testALawKnownValues() throws {
        // G.711 Table 1a, even bits inverted on the line: 0xD5 / 0x55 are ±1 step (±8).
        let out = try decode(.aLaw, [0xD5, 0x55, 0xAA, 0x2A, 0xD4, 0x54, 0xC5, 0x80])
        // 0x80: 0xD5 after the XOR, positive, segment 5 step 5: (2·5 + 33)·2^4·8 = 5504.
        XCTAssertEqual(out.int16Samples(channel: 0), [8, -8, 32256, -32256, 24, -24, 264, 5504])
    }

    func testTablesAreOddSymmetric() {
        for code in 0..<128 {
            XCTAssertEqual(G711Tables.uLaw[code], -G711Tables.uLaw[code + 128], "μ-law \(code)")
            XCTAssertEqual(G711Tables.aLaw[code], -G711Tables.aLaw[code + 128], "A-law \(code)")
        }
        // Monotonic within each half: the segments join without gaps or overlaps.
        for code in 0..<127 {
            XCTAssertGreaterThan(G711Tables.uLaw[code + 1], G711Tables.uLaw[code])
        }
    }

    func testFloatAndInt32FollowTheInt16() throws {
        let bytes = (0...255).map { UInt8($0) }
        let s16 = try decode(.uLaw, bytes).int16Samples(channel: 0)
        let f32 = try decode(.uLaw, bytes, as: .float32).floatSamples(channel: 0)
        let s32 = try decode(.uLaw, bytes, as: .int32).int32Samples(channel: 0)
        for i in 0..<256 {
            XCTAssertEqual(f32[i], Float(s16[i]) / 32768)
            XCTAssertEqual(s32[i], Int32(s16[i]) << 16)
        }
    }

    func testStereoPlanarOutput() throws {
        let f = StreamDescription(sampleRate: 8000, formatID: .aLaw, bytesPerPacket: 2, framesPerPacket: 1,
                                  bytesPerFrame: 2, channelsPerFrame: 2, bitsPerChannel: 8)
        let d = try G711Decoder(format: f, output: .int16)
        let out = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 2, interleaved: false, frameCapacity: 4)
        let bytes: [UInt8] = [0xD5, 0x55, 0xD4, 0x54]
        try bytes.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: 2, descriptions: nil, into: out) }
        XCTAssertEqual(out.int16Samples(channel: 0), [8, 24])
        XCTAssertEqual(out.int16Samples(channel: 1), [-8, -24])
    }
}

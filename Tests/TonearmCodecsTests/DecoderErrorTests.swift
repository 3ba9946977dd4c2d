import XCTest
@testable import TonearmCodecs
import TonearmCore

/// Damaged input and wrong buffers: each must throw its code and leave the output as it was.
final class DecoderErrorTests: XCTestCase {
    private func code(_ body: () throws -> Void) -> AudioError.Code? {
        do { try body(); return nil } catch let e as AudioError { return e.code } catch { return nil }
    }

    private func decode(_ d: AudioDecoder, _ bytes: [UInt8], packets: Int, descriptions: [PacketDescription]? = nil,
                        into out: PCMBuffer) throws
    {
        try bytes.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: packets, descriptions: descriptions, into: out) }
    }

    private let ima4 = StreamDescription(sampleRate: 8000, formatID: .appleIMA4, bytesPerPacket: 68, framesPerPacket: 64,
                                         bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)
    private let dvi = StreamDescription(sampleRate: 8000, formatID: .dviIntelIMA, bytesPerPacket: 72, framesPerPacket: 57,
                                        bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 4)
    private let ms = StreamDescription(sampleRate: 8000, formatID: .microsoftADPCM, bytesPerPacket: 70, framesPerPacket: 58,
                                       bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 4)

    func testRegistryKnowsEveryFormat() throws {
        for id in [AudioFormatID.linearPCM, .uLaw, .aLaw, .appleIMA4, .dviIntelIMA, .microsoftADPCM] {
            XCTAssertTrue(CodecRegistry.canDecode(id), "\(id)")
        }
        XCTAssertTrue(try CodecRegistry.makeDecoder(for: ima4) is AppleIMA4Decoder)
        XCTAssertTrue(try CodecRegistry.makeDecoder(for: dvi) is DVIIntelIMADecoder)
        XCTAssertTrue(try CodecRegistry.makeDecoder(for: ms) is MSADPCMDecoder)
        XCTAssertEqual(code { _ = try CodecRegistry.makeDecoder(for: .pcm(sampleRate: 8000, channels: 1, bits: 24, isFloat: true)) },
                       .unsupportedDataFormat)
        var badIMA = ima4
        badIMA.bytesPerPacket = 35
        XCTAssertEqual(code { _ = try CodecRegistry.makeDecoder(for: badIMA) }, .unsupportedDataFormat)
        var badMS = ms
        badMS.framesPerPacket = 1000
        XCTAssertEqual(code { _ = try CodecRegistry.makeDecoder(for: badMS) }, .unsupportedDataFormat)
    }

    func testShortPacketsThrow() throws {
        let out = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 2, interleaved: true, frameCapacity: 1000)
        let ima = try AppleIMA4Decoder(format: ima4, output: .int16)
        // Without descriptions IMA4 data must hold whole packets; a described short packet is bad data.
        XCTAssertEqual(code { try self.decode(ima, [UInt8](repeating: 0, count: 67), packets: 1, into: out) }, .invalidInputSize)
        XCTAssertEqual(code {
            try self.decode(ima, [UInt8](repeating: 0, count: 67), packets: 1,
                            descriptions: [PacketDescription(startOffset: 0, dataByteSize: 67)], into: out)
        }, .codecBadData)
        XCTAssertEqual(code { try self.decode(ima, [UInt8](repeating: 0, count: 68), packets: 2, into: out) }, .invalidInputSize)
        let d = try DVIIntelIMADecoder(format: dvi, output: .int16)
        XCTAssertEqual(code { try self.decode(d, [UInt8](repeating: 0, count: 7), packets: 1, into: out) }, .codecBadData)
        let m = try MSADPCMDecoder(format: ms, output: .int16)
        XCTAssertEqual(code { try self.decode(m, [UInt8](repeating: 0, count: 13), packets: 1, into: out) }, .codecBadData)
        let pcm = try PCMDecoder(format: .pcm(sampleRate: 8000, channels: 2, bits: 16), output: .int16)
        XCTAssertEqual(code { try self.decode(pcm, [UInt8](repeating: 0, count: 7), packets: 2, into: out) }, .invalidInputSize)
        XCTAssertEqual(code { try self.decode(pcm, [], packets: -1, into: out) }, .invalidInputSize)
        XCTAssertEqual(code {
            try self.decode(pcm, [UInt8](repeating: 0, count: 8), packets: 1,
                            descriptions: [PacketDescription(startOffset: 6, dataByteSize: 4)], into: out)
        }, .invalidInputSize)
        XCTAssertEqual(out.frameLength, 0)
    }

    func testBadHeadersThrowBeforeWriting() throws {
        let out = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 2, interleaved: true, frameCapacity: 1000)
        var packet = [UInt8](repeating: 0, count: 68)
        packet[34 + 1] = 89  // channel 1's step index
        let ima = try AppleIMA4Decoder(format: ima4, output: .int16)
        XCTAssertEqual(code { try self.decode(ima, [UInt8](repeating: 0, count: 68) + packet, packets: 2, into: out) }, .codecBadData)
        var block = [UInt8](repeating: 0, count: 72)
        block[7] = 1  // the reserved byte of channel 1's header
        XCTAssertEqual(code { try self.decode(try DVIIntelIMADecoder(format: self.dvi, output: .int16), block, packets: 1, into: out) },
                       .codecBadData)
        var msBlock = [UInt8](repeating: 0, count: 70)
        msBlock[1] = 7  // channel 1's predictor index
        XCTAssertEqual(code { try self.decode(try MSADPCMDecoder(format: self.ms, output: .int16), msBlock, packets: 1, into: out) },
                       .codecBadData)
        XCTAssertEqual(out.frameLength, 0)
    }

    func testWrongOutputBuffersThrowOtsz() throws {
        let d = try AppleIMA4Decoder(format: ima4, output: .int16)
        let packet = [UInt8](repeating: 0, count: 68)
        let small = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 2, interleaved: true, frameCapacity: 63)
        XCTAssertEqual(code { try self.decode(d, packet, packets: 1, into: small) }, .invalidOutputSize)
        let mono = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 1, interleaved: true, frameCapacity: 64)
        XCTAssertEqual(code { try self.decode(d, packet, packets: 1, into: mono) }, .invalidOutputSize)
        let float = PCMBuffer(commonFormat: .float32, sampleRate: 8000, channels: 2, interleaved: true, frameCapacity: 64)
        XCTAssertEqual(code { try self.decode(d, packet, packets: 1, into: float) }, .invalidOutputSize)
        let right = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 2, interleaved: false, frameCapacity: 64)
        try decode(d, packet, packets: 1, into: right)
        XCTAssertEqual(right.frameLength, 64)
        XCTAssertEqual(code { try self.decode(d, packet, packets: 1, into: right) }, .invalidOutputSize)
    }

    func testIMA4KeepsItsPredictorUntilReset() throws {
        let f = StreamDescription(sampleRate: 8000, formatID: .appleIMA4, bytesPerPacket: 34, framesPerPacket: 64,
                                  bytesPerFrame: 0, channelsPerFrame: 1, bitsPerChannel: 0)
        let d = try AppleIMA4Decoder(format: f, output: .int16)
        // Header: predictor 0, step index 0. Two codes of 1 at step 7 add 7>>3 + 7>>2 = 1 each.
        var p = [UInt8](repeating: 0, count: 34)
        p[2] = 0x11
        let out = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 1, interleaved: true, frameCapacity: 128)
        try decode(d, p, packets: 1, into: out)
        XCTAssertEqual(Array(out.int16Samples(channel: 0).prefix(3)), [1, 2, 2])
        // The next header says predictor 0, step 0: same step index and within 127 of the
        // state's 2, so the state's full-precision predictor is kept.
        let q = [UInt8](repeating: 0, count: 34)
        try decode(d, q, packets: 1, into: out)
        XCTAssertEqual(out.int16Samples(channel: 0)[64], 2)
        // After a reset the header is taken as it is.
        d.reset()
        out.frameLength = 0
        try decode(d, q, packets: 1, into: out)
        XCTAssertEqual(out.int16Samples(channel: 0)[0], 0)
    }
}

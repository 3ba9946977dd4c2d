import XCTest
@testable import TonearmCodecs
import TonearmCore

final class PCMDecoderTests: XCTestCase {
    private func decode(_ format: StreamDescription, _ bytes: [UInt8], frames: Int,
                        as common: PCMBuffer.CommonFormat, interleaved: Bool = true) throws -> PCMBuffer
    {
        let d = try CodecRegistry.makeDecoder(for: format, output: common)
        let out = PCMBuffer(commonFormat: common, sampleRate: format.sampleRate, channels: Int(format.channelsPerFrame),
                            interleaved: interleaved, frameCapacity: frames)
        try bytes.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: frames, descriptions: nil, into: out) }
        XCTAssertEqual(out.frameLength, frames)
        return out
    }

    func testS16Extremes() throws {
        let f = StreamDescription.pcm(sampleRate: 44100, channels: 1, bits: 16)
        let bytes: [UInt8] = [0x00, 0x80, 0xFF, 0x7F, 0x00, 0x00, 0x01, 0x00, 0xFF, 0xFF]
        XCTAssertEqual(try decode(f, bytes, frames: 5, as: .float32).floatSamples(channel: 0),
                       [-1.0, 32767.0 / 32768, 0, 1.0 / 32768, -1.0 / 32768])
        XCTAssertEqual(try decode(f, bytes, frames: 5, as: .int32).int32Samples(channel: 0),
                       [Int32.min, 32767 << 16, 0, 1 << 16, -1 << 16])
        XCTAssertEqual(try decode(f, bytes, frames: 5, as: .int16).int16Samples(channel: 0), [-32768, 32767, 0, 1, -1])
    }

    func testU8AndS8() throws {
        let u8 = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 8, isSigned: false)
        XCTAssertEqual(try decode(u8, [0, 128, 255, 1], frames: 4, as: .float32).floatSamples(channel: 0),
                       [-1.0, 0, 127.0 / 128, -127.0 / 128])
        XCTAssertEqual(try decode(u8, [0, 128, 255], frames: 3, as: .int16).int16Samples(channel: 0), [-32768, 0, 32512])
        let s8 = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 8)
        XCTAssertEqual(try decode(s8, [0x80, 0, 0x7F], frames: 3, as: .int16).int16Samples(channel: 0), [-32768, 0, 32512])
    }

    func testS24Extremes() throws {
        let le = StreamDescription.pcm(sampleRate: 48000, channels: 1, bits: 24)
        let bytes: [UInt8] = [0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x80, 0x80, 0xFF, 0xFF]
        XCTAssertEqual(try decode(le, bytes, frames: 3, as: .float32).floatSamples(channel: 0),
                       [8388607.0 / 8388608, -1.0, -128.0 / 8388608])
        // Narrowing keeps the high bits: >> 8, rounding toward −∞ as FFmpeg's does.
        XCTAssertEqual(try decode(le, bytes, frames: 3, as: .int16).int16Samples(channel: 0), [32767, -32768, -1])
        XCTAssertEqual(try decode(le, bytes, frames: 3, as: .int32).int32Samples(channel: 0),
                       [0x7FFF_FF00, Int32.min, -128 << 8])
        let be = StreamDescription.pcm(sampleRate: 48000, channels: 1, bits: 24, isBigEndian: true)
        XCTAssertEqual(try decode(be, [0x7F, 0xFF, 0xFF, 0x80, 0x00, 0x00], frames: 2, as: .int32).int32Samples(channel: 0),
                       [0x7FFF_FF00, Int32.min])
    }

    func testUnpackedContainers() throws {
        // 24 bits in 4 bytes, aligned high (WAV's way): the low byte is padding.
        let high = StreamDescription.pcm(sampleRate: 48000, channels: 1, bits: 24, bytesPerSample: 4)
        XCTAssertTrue(high.formatFlags.contains(.isAlignedHigh))
        XCTAssertEqual(try decode(high, [0x00, 0xFF, 0xFF, 0x7F], frames: 1, as: .int32).int32Samples(channel: 0), [0x7FFF_FF00])
        // Aligned low: the top byte is ignored and the 24-bit sample sign-extended.
        var low = high
        low.formatFlags.remove(.isAlignedHigh)
        XCTAssertEqual(try decode(low, [0xFF, 0xFF, 0x7F, 0xAB, 0x00, 0x00, 0x80, 0x00], frames: 2, as: .int32).int32Samples(channel: 0),
                       [0x7FFF_FF00, Int32.min])
        XCTAssertEqual(try decode(low, [0xFF, 0xFF, 0x7F, 0xAB], frames: 1, as: .float32).floatSamples(channel: 0),
                       [8388607.0 / 8388608])
        // 20 bits in 3 bytes, aligned high.
        let twenty = StreamDescription.pcm(sampleRate: 48000, channels: 1, bits: 20, bytesPerSample: 3)
        XCTAssertEqual(try decode(twenty, [0xF0, 0xFF, 0x7F], frames: 1, as: .float32).floatSamples(channel: 0), [524287.0 / 524288])
    }

    func testFloatToIntegerRoundsHalfToEvenAndSaturates() throws {
        let f = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 32, isFloat: true)
        let values: [Float] = [0.5 / 32768, 1.5 / 32768, 2.5 / 32768, -1.5 / 32768, 1.0, -1.0, 2.0, -2.0, .infinity, -.infinity, .nan]
        let bytes = values.flatMap { v in le32(Int(v.bitPattern)) }
        XCTAssertEqual(try decode(f, bytes, frames: values.count, as: .int16).int16Samples(channel: 0),
                       [0, 2, 2, -2, 32767, -32768, 32767, -32768, 32767, -32768, 0])
        XCTAssertEqual(try decode(f, bytes, frames: values.count, as: .int32).int32Samples(channel: 0),
                       [32768, 98304, 163840, -98304, .max, .min, .max, .min, .max, .min, 0])
        let f64 = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 64, isFloat: true, isBigEndian: true)
        let doubles: [Double] = [0.1, -0.5 / 2147483648, 1.5 / 2147483648, 1e300]
        let dBytes = doubles.flatMap { be64($0.bitPattern) }
        XCTAssertEqual(try decode(f64, dBytes, frames: 4, as: .float32).floatSamples(channel: 0), [Float(0.1), -0x1p-32, 1.5 * 0x1p-31, .infinity])
        XCTAssertEqual(try decode(f64, dBytes, frames: 4, as: .int32).int32Samples(channel: 0), [214748365, 0, 2, .max])
    }

    func testInt64() throws {
        let f = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 64)
        let v: Int64 = 0x1234_5678_9ABC_DEF0
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
        XCTAssertEqual(try decode(f, bytes, frames: 1, as: .int32).int32Samples(channel: 0), [0x1234_5678])
        XCTAssertEqual(try decode(f, bytes, frames: 1, as: .int16).int16Samples(channel: 0), [0x1234])
        XCTAssertEqual(try decode(f, bytes, frames: 1, as: .float32).floatSamples(channel: 0), [Float(v) * 0x1p-63])
    }

    func testNonInterleavedInputToEitherOutput() throws {
        let f = StreamDescription.pcm(sampleRate: 8000, channels: 2, bits: 16, interleaved: false)
        // Channel 0's plane (1, 2, 3), then channel 1's (-1, -2, -3).
        let bytes: [UInt8] = [1, 0, 2, 0, 3, 0, 0xFF, 0xFF, 0xFE, 0xFF, 0xFD, 0xFF]
        for interleaved in [true, false] {
            let out = try decode(f, bytes, frames: 3, as: .int16, interleaved: interleaved)
            XCTAssertEqual(out.int16Samples(channel: 0), [1, 2, 3])
            XCTAssertEqual(out.int16Samples(channel: 1), [-1, -2, -3])
        }
    }

    func testSIMDPathMatchesScalarForEveryLength() throws {
        var rng = SplitMix64(seed: 7)
        let f = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 16)
        for n in 0..<40 {
            let bytes = rng.bytes(2 * n)
            let out = try decode(f, bytes, frames: n, as: .float32)
            let expected = (0..<n).map { Float(Int16(bitPattern: UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8)) / 32768 }
            XCTAssertEqual(out.floatSamples(channel: 0), expected)
        }
    }

    /// Interleaved s16 stereo into two Float planes takes a SIMD path eight frames at a
    /// time: every length, with both extremes in each channel, gives the scalar values.
    func testStereoSIMDPathIntoPlanesMatchesScalarForEveryLength() throws {
        var rng = SplitMix64(seed: 11)
        let f = StreamDescription.pcm(sampleRate: 8000, channels: 2, bits: 16)
        for n in 0..<40 {
            var bytes = rng.bytes(4 * n)
            if n >= 2 { bytes.replaceSubrange(0..<8, with: [0x00, 0x80, 0xFF, 0x7F, 0xFF, 0x7F, 0x00, 0x80]) }
            let out = try decode(f, bytes, frames: n, as: .float32, interleaved: false)
            for c in 0..<2 {
                let expected = (0..<n).map { i -> Float in
                    let k = 4 * i + 2 * c
                    return Float(Int16(bitPattern: UInt16(bytes[k]) | UInt16(bytes[k + 1]) << 8)) / 32768
                }
                XCTAssertEqual(out.floatSamples(channel: c), expected, "channel \(c) of \(n) frames")
            }
        }
    }

    func testAppendsAfterFrameLengthAndHonoursDescriptions() throws {
        let f = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 16)
        let d = try PCMDecoder(format: f, output: .int16)
        let out = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 1, interleaved: true, frameCapacity: 4)
        let bytes: [UInt8] = [1, 0, 2, 0, 3, 0]
        try bytes.withBytes { (raw) throws(AudioError) in
            try d.decode(raw, packetCount: 1, descriptions: nil, into: out)
            // Out of order through descriptions: frames 2 then 0.
            try d.decode(raw, packetCount: 2, descriptions: [PacketDescription(startOffset: 4, dataByteSize: 2),
                                                            PacketDescription(startOffset: 0, dataByteSize: 2)], into: out)
        }
        XCTAssertEqual(out.int16Samples(channel: 0), [1, 3, 1])
    }
}

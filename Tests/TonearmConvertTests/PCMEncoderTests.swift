import XCTest
import Tonearm
import TonearmTestSupport

/// Float32 samples written as integers and floats of every width and byte order: rounded to
/// nearest (ties to even), clipped, NaN to the top, whatever the buffer's layout.
final class PCMEncoderTests: XCTestCase {
    static let values: [Float] = [0, 0.5 / 32768, 1.5 / 32768, 2.5 / 32768, -1.5 / 32768, 0.25, -0.75, 1.0, -1.0, 2.0, -2.0,
                                  .infinity, -.infinity, .nan, 0x1p-24, -0x1p-23 * 1.5, 0.999_999_9]

    /// What a sample becomes at `bits`, computed in Double.
    static func expected(_ x: Float, bits: Int) -> Int64 {
        let scale = Double(sign: .plus, exponent: bits - 1, significand: 1)
        if x.isNaN { return Int64(scale) - 1 }
        let r = (Double(x) * scale).rounded(.toNearestOrEven)
        return Int64(max(-scale, min(scale - 1, r)))
    }

    func testFloatToEveryIntegerWidthAndOrder() throws {
        let n = PCMEncoderTests.values.count
        for interleaved in [true, false] {
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 44100, channels: 2, interleaved: interleaved, frameCapacity: n)
            buffer.withUnsafeMutableSamples(Float.self) { p in
                for (i, v) in PCMEncoderTests.values.enumerated() {
                    p[buffer.channelStart(0) + i * buffer.stride] = v
                    p[buffer.channelStart(1) + i * buffer.stride] = -v
                }
            }
            buffer.frameLength = n
            for bits in [16, 24, 32] {
                for big in [false, true] {
                    var out: [UInt8] = []
                    try PCMEncoder.encode(buffer, as: .pcm(sampleRate: 44100, channels: 2, bits: UInt32(bits), isBigEndian: big), into: &out)
                    let width = bits / 8
                    XCTAssertEqual(out.count, n * 2 * width)
                    for i in 0..<n * 2 {
                        let bytes = Array(out[i * width..<(i + 1) * width])
                        var v: Int64 = 0
                        for b in (big ? bytes : bytes.reversed()) { v = v << 8 | Int64(b) }
                        v = (v << (64 - bits)) >> (64 - bits)
                        let x = i % 2 == 0 ? PCMEncoderTests.values[i / 2] : -PCMEncoderTests.values[i / 2]
                        XCTAssertEqual(v, PCMEncoderTests.expected(x, bits: bits), "\(x) at \(bits) bits, big-endian \(big), interleaved \(interleaved)")
                    }
                }
            }
            var be: [UInt8] = []
            try PCMEncoder.encode(buffer, as: .pcm(sampleRate: 44100, channels: 2, bits: 32, isFloat: true, isBigEndian: true), into: &be)
            for i in 0..<n {
                let word = UInt32(be[i * 8]) << 24 | UInt32(be[i * 8 + 1]) << 16 | UInt32(be[i * 8 + 2]) << 8 | UInt32(be[i * 8 + 3])
                XCTAssertEqual(word, PCMEncoderTests.values[i].bitPattern)
            }
        }
    }
    /// Planar Float32 to 16 bits goes eight samples at a time: every lane and the tail after
    /// the last whole eight give the scalar's values, specials included (NaN, ±inf, ties to
    /// even at both ends of the range, values just past the clip points).
    func testSixteenBitsEightAtATimeEqualTheScalarValues() throws {
        let specials: [Float] = PCMEncoderTests.values + [32766.5 / 32768, 32767.5 / 32768, -32767.5 / 32768, -32768.5 / 32768,
                                                          -32769 / 32768, 0.5 / 32768 * 3, -2.5 / 32768, 1 - 0x1p-24, -1 - 0x1p-23,
                                                          .greatestFiniteMagnitude, -.greatestFiniteMagnitude, -0.0]
        var rng = SeededGenerator(seed: 21)
        for n in [1, 7, 8, 9, 16, 23, 61, 1003] {
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: false, frameCapacity: n)
            var inputs = [[Float]](repeating: [], count: 2)
            for c in 0..<2 {
                inputs[c] = (0..<n).map { _ in
                    Bool.random(using: &rng) ? specials.randomElement(using: &rng)! : Float.random(in: -1.1...1.1, using: &rng)
                }
            }
            buffer.withUnsafeMutableSamples(Float.self) { p in
                for c in 0..<2 { for i in 0..<n { p[buffer.channelStart(c) + i * buffer.stride] = inputs[c][i] } }
            }
            buffer.frameLength = n
            for big in [false, true] {
                var out: [UInt8] = []
                try PCMEncoder.encode(buffer, as: .pcm(sampleRate: 48000, channels: 2, bits: 16, isBigEndian: big), into: &out)
                XCTAssertEqual(out.count, n * 4)
                for i in 0..<n * 2 {
                    let hi = big ? out[2 * i] : out[2 * i + 1], lo = big ? out[2 * i + 1] : out[2 * i]
                    let v = Int64(Int16(bitPattern: UInt16(hi) << 8 | UInt16(lo)))
                    let x = inputs[i % 2][i / 2]
                    XCTAssertEqual(v, PCMEncoderTests.expected(x, bits: 16), "\(x) at frame \(i / 2) of \(n), big-endian \(big)")
                }
            }
        }
    }
}

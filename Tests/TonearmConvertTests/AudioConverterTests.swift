import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// The converter pipeline: exact PCM paths, trimming, channels, dither, and the same output
/// whatever the chunking, through every shape (packets, PCM buffers, the pull callback).
final class AudioConverterTests: XCTestCase {
    /// A deterministic test signal: two tones and a little noise, 16-bit, interleaved.
    static func signal(frames: Int, channels: Int, seed: UInt32 = 1) -> [Int16] {
        var x = seed
        var out: [Int16] = []
        out.reserveCapacity(frames * channels)
        for f in 0..<frames {
            for c in 0..<channels {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5
                let t = Double(f)
                let v = 0.4 * sin(t * 0.031 * Double(c + 1)) + 0.3 * sin(t * 0.29) + Double(Int32(bitPattern: x) >> 20) / 20000
                out.append(Int16(max(-32768, min(32767, (v * 32767).rounded()))))
            }
        }
        return out
    }

    static func bytes(_ samples: [Int16]) -> [UInt8] {
        samples.withUnsafeBytes { Array($0) }
    }

    static func s16(_ rate: Double, _ channels: UInt32) -> StreamDescription {
        .pcm(sampleRate: rate, channels: channels, bits: 16)
    }

    /// Converts all packets in one call, then `finish`.
    func convertWhole(_ c: AudioConverter, _ input: [UInt8], frames: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        try c.convert(packets: input, count: frames, descriptions: nil, into: &out)
        try c.finish(into: &out)
        return out
    }

    /// Converts in chunks of the given sizes (cycled), then `finish`.
    func convertChunked(_ c: AudioConverter, _ input: [UInt8], frames: Int, bytesPerFrame: Int, sizes: [Int]) throws -> [UInt8] {
        var out: [UInt8] = []
        var at = 0, i = 0
        while at < frames {
            let n = min(sizes[i % sizes.count], frames - at)
            try c.convert(packets: Array(input[at * bytesPerFrame..<(at + n) * bytesPerFrame]), count: n, descriptions: nil, into: &out)
            at += n
            i += 1
        }
        try c.finish(into: &out)
        return out
    }

    /// Converters worth checking for chunk invariance: each stage alone and together.
    func pipelines() throws -> [(String, () throws -> AudioConverter)] {
        let stereo = AudioConverterTests.s16(44100, 2)
        return [
            ("s16 → f32", { try AudioConverter(from: stereo, to: .pcm(sampleRate: 0, channels: 2, bits: 32, isFloat: true)) }),
            ("s16 → BE s24", { try AudioConverter(from: stereo, to: .pcm(sampleRate: 0, channels: 2, bits: 24, isBigEndian: true)) }),
            ("stereo → mono", { try AudioConverter(from: stereo, to: AudioConverterTests.s16(44100, 1)) }),
            ("44.1 → 48 kHz", { try AudioConverter(from: stereo, to: AudioConverterTests.s16(48000, 2)) }),
            ("44.1 → 16 kHz mono f32", { try AudioConverter(from: stereo, to: .pcm(sampleRate: 16000, channels: 1, bits: 32, isFloat: true)) }),
            ("mono-map 44.1 → 96 kHz", {
                let c = try AudioConverter(from: stereo, to: AudioConverterTests.s16(96000, 3))
                c.channelMap = [1, -1, 0]
                return c
            }),
            ("dither to 8 bits", {
                let c = try AudioConverter(from: stereo, to: .pcm(sampleRate: 0, channels: 2, bits: 8, isSigned: false))
                c.dither = .tpdf
                return c
            }),
            ("trimmed 'line' 44.1 → 22.05", {
                let c = try AudioConverter(from: stereo, to: AudioConverterTests.s16(22050, 2))
                c.sampleRateConverterComplexity = .linear
                c.packetTableInfo = PacketTableInfo(numberValidFrames: 7000, primingFrames: 1111, remainderFrames: 0)
                return c
            }),
        ]
    }

    func testEveryPipelineGivesTheSameBytesWhateverTheChunking() throws {
        let frames = 10007
        let input = AudioConverterTests.bytes(AudioConverterTests.signal(frames: frames, channels: 2))
        for (name, make) in try pipelines() {
            let whole = try convertWhole(make(), input, frames: frames)
            XCTAssertFalse(whole.isEmpty, name)
            for sizes in [[1], [7, 300, 4099], [8192], [frames]] {
                let chunked = try convertChunked(make(), input, frames: frames, bytesPerFrame: 4, sizes: sizes)
                XCTAssertTrue(chunked == whole, "\(name), chunks \(sizes): \(chunked.count) bytes against \(whole.count)")
            }
            // The pull shape, asked for odd frame counts, with the callback giving odd packet counts.
            let c = try make()
            var at = 0, ask = 0
            var pulled: [UInt8] = []
            let counts = [3, 1000, 17, 5000]
            while true {
                let n = try c.fillComplexBuffer(frames: [5, 333, 4096][ask % 3], into: &pulled) { _ throws(AudioError) in
                    guard at < frames else { return nil }
                    let n = min(counts[at % counts.count], frames - at)
                    defer { at += n }
                    return .init(data: Array(input[at * 4..<(at + n) * 4]), packetCount: n)
                }
                ask += 1
                if n == 0 { break }
            }
            XCTAssertTrue(pulled == whole, "\(name), pulled: \(pulled.count) bytes against \(whole.count)")
            // PCM buffers in random sizes.
            let b = try make()
            var viaBuffers: [UInt8] = []
            var f = 0
            for size in [1, 2048, 3, 9000, 100_000] where f < frames {
                let n = min(size, frames - f)
                let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 44100, channels: 2, interleaved: false, frameCapacity: n)
                buffer.withUnsafeMutableSamples(Int16.self) { p in
                    input.withUnsafeBytes { raw in
                        let s = raw.bindMemory(to: Int16.self)
                        for i in 0..<n { p[i] = s[(f + i) * 2]; p[n + i] = s[(f + i) * 2 + 1] }
                    }
                }
                buffer.frameLength = n
                try b.convert(buffer, into: &viaBuffers)
                f += n
            }
            try b.finish(into: &viaBuffers)
            XCTAssertTrue(viaBuffers == whole, "\(name), planar buffers")
        }
    }

    /// A planar output format: the PCMBuffer calls give planar buffers, the byte calls
    /// interleaved bytes, the same samples.
    func testPlanarOutputFormat() throws {
        let frames = 3000
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let planar = StreamDescription.pcm(sampleRate: 0, channels: 2, bits: 32, isFloat: true, interleaved: false)
        let input = PCMBuffer(commonFormat: .int16, sampleRate: 44100, channels: 2, interleaved: true, frameCapacity: frames)
        input.withUnsafeMutableSamples(Int16.self) { p in for i in 0..<frames * 2 { p[i] = samples[i] } }
        input.frameLength = frames
        let out = try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: planar).convert(input)
        XCTAssertFalse(out.isInterleaved)
        XCTAssertEqual(out.frameLength, frames)
        XCTAssertEqual(out.floatSamples(channel: 1)[1234], Float(samples[1234 * 2 + 1]) / 32768)
        let c = try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: planar)
        XCTAssertTrue(c.outputBytesFormat.isInterleaved)
        var done = false
        let pulled = PCMBuffer(commonFormat: .float32, sampleRate: 44100, channels: 2, interleaved: false, frameCapacity: frames + 10)
        XCTAssertEqual(try c.fillComplexBuffer(pulled) { _ throws(AudioError) in
            defer { done = true }
            return done ? nil : .init(data: AudioConverterTests.bytes(samples), packetCount: frames)
        }, frames)
        XCTAssertEqual(pulled.floatSamples(channel: 0), out.floatSamples(channel: 0))
        XCTAssertEqual(pulled.floatSamples(channel: 1), out.floatSamples(channel: 1))
    }

    /// Buffers in chunks through a resampler, then `finish()`: the same samples as the byte
    /// calls, in planar buffers written in place.
    func testResampledBuffersInChunksEqualTheByteCalls() throws {
        let frames = 10_000
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let planar = StreamDescription.pcm(sampleRate: 48000, channels: 2, bits: 32, isFloat: true, interleaved: false)
        var expected: [UInt8] = []
        let byteConverter = try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: planar)
        try byteConverter.convert(packets: AudioConverterTests.bytes(samples), count: frames, descriptions: nil, into: &expected)
        try byteConverter.finish(into: &expected)
        let c = try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: planar)
        var left: [Float] = [], right: [Float] = []
        var at = 0
        for chunk in [1001, 1, 0, 4096, 4902] {
            let input = PCMBuffer(commonFormat: .int16, sampleRate: 44100, channels: 2, interleaved: true, frameCapacity: chunk)
            input.withUnsafeMutableSamples(Int16.self) { p in for i in 0..<chunk * 2 { p[i] = samples[at * 2 + i] } }
            input.frameLength = chunk
            at += chunk
            let out = try c.convert(input)
            XCTAssertFalse(out.isInterleaved)
            left += out.floatSamples(channel: 0)
            right += out.floatSamples(channel: 1)
        }
        XCTAssertEqual(at, frames)
        let tail = try c.finish()
        left += tail.floatSamples(channel: 0)
        right += tail.floatSamples(channel: 1)
        let interleaved = expected.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(left.count, 10_885)
        XCTAssertEqual(left.count * 2, interleaved.count)
        XCTAssertEqual(left, stride(from: 0, to: interleaved.count, by: 2).map { interleaved[$0] })
        XCTAssertEqual(right, stride(from: 1, to: interleaved.count, by: 2).map { interleaved[$0] })
    }

    func testResampledLengthIsTheCeilingOfTheRatio() throws {
        for (from, to, frames) in [(44100.0, 48000.0, 44100), (48000, 44100, 1000), (44100, 16000, 12345), (8000, 44100, 777), (48000, 16000, 3)] {
            let c = try AudioConverter(from: AudioConverterTests.s16(from, 1), to: AudioConverterTests.s16(to, 1))
            let input = AudioConverterTests.bytes(AudioConverterTests.signal(frames: frames, channels: 1))
            let out = try convertWhole(c, input, frames: frames)
            let expected = (Int64(frames) * Int64(to) + Int64(from) - 1) / Int64(from)
            XCTAssertEqual(Int64(out.count / 2), expected, "\(from) → \(to), \(frames) frames")
        }
    }

    func testIntegerPathsAreExact() throws {
        let frames = 5000
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let input = AudioConverterTests.bytes(samples)
        // s16 → s32 → s16 gives the input back; to 24-bit big-endian the top bytes.
        let wide = try convertWhole(AudioConverter(from: AudioConverterTests.s16(44100, 2), to: .pcm(sampleRate: 0, channels: 2, bits: 32)), input, frames: frames)
        let back = try convertWhole(AudioConverter(from: .pcm(sampleRate: 44100, channels: 2, bits: 32), to: AudioConverterTests.s16(44100, 2)), wide, frames: frames)
        XCTAssertEqual(back, input)
        let be24 = try convertWhole(AudioConverter(from: AudioConverterTests.s16(44100, 2), to: .pcm(sampleRate: 0, channels: 2, bits: 24, isBigEndian: true)), input, frames: frames)
        XCTAssertEqual(be24.count, frames * 6)
        for i in [0, 1, 777, frames * 2 - 1] {
            let v = UInt16(bitPattern: samples[i])
            XCTAssertEqual([be24[i * 3], be24[i * 3 + 1], be24[i * 3 + 2]], [UInt8(v >> 8), UInt8(v & 0xFF), 0])
        }
    }

    func testChannelStages() throws {
        let frames = 4000
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let input = AudioConverterTests.bytes(samples)
        // A channel map swapping left and right is exact.
        let swap = try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: AudioConverterTests.s16(44100, 2))
        swap.channelMap = [1, 0]
        let swapped = try convertWhole(swap, input, frames: frames)
        let expected = (0..<frames).flatMap { [samples[$0 * 2 + 1], samples[$0 * 2]] }
        XCTAssertEqual(swapped, AudioConverterTests.bytes(expected))
        // Stereo to mono averages the two sides (rounded to nearest).
        let mono = try convertWhole(AudioConverter(from: AudioConverterTests.s16(44100, 2), to: AudioConverterTests.s16(44100, 1)), input, frames: frames)
        mono.withUnsafeBytes { raw in
            let m = raw.bindMemory(to: Int16.self)
            for f in stride(from: 0, to: frames, by: 97) {
                let avg = (Double(samples[f * 2]) + Double(samples[f * 2 + 1])) / 2
                XCTAssertLessThanOrEqual(abs(Double(m[f]) - avg), 0.5, "frame \(f)")
            }
        }
        // Mono to stereo copies the channel to both sides.
        let one = AudioConverterTests.bytes(Array(samples.prefix(frames)))
        let both = try convertWhole(AudioConverter(from: AudioConverterTests.s16(44100, 1), to: AudioConverterTests.s16(44100, 2)), one, frames: frames)
        XCTAssertEqual(both, AudioConverterTests.bytes(samples.prefix(frames).flatMap { [$0, $0] }))
        // WAV 5.1 order (L R C LFE Ls Rs) to a CAF/AIFF-style order (L C R Ls Rs LFE) is a reorder.
        let six = AudioConverterTests.signal(frames: 100, channels: 6)
        let reorder = try AudioConverter(from: AudioConverterTests.s16(48000, 6), to: AudioConverterTests.s16(48000, 6))
        reorder.inputChannelLayout = ChannelLayout(tag: .mpeg5_1_A)
        reorder.outputChannelLayout = ChannelLayout(tag: .mpeg5_1_C)
        let out = try convertWhole(reorder, AudioConverterTests.bytes(six), frames: 100)
        let inLabels = try XCTUnwrap(ChannelLayout(tag: .mpeg5_1_A).channelLabels)
        let outLabels = try XCTUnwrap(ChannelLayout(tag: .mpeg5_1_C).channelLabels)
        let map = outLabels.map { inLabels.firstIndex(of: $0)! }
        XCTAssertNotEqual(map, Array(0..<6))
        XCTAssertEqual(out, AudioConverterTests.bytes((0..<100).flatMap { f in map.map { six[f * 6 + $0] } }))
    }

    func testChannelErrorsAreCleanAndEarly() throws {
        XCTAssertThrowsError(try AudioConverter(from: AudioConverterTests.s16(44100, 9), to: AudioConverterTests.s16(44100, 2))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat)
        }
        let c = try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: AudioConverterTests.s16(44100, 2))
        c.channelMap = [0, 1, 1]
        XCTAssertThrowsError(try c.prepare()) { XCTAssertEqual(($0 as? AudioError)?.code, .propertyNotSupported) }
        c.channelMap = [0, 5]
        XCTAssertThrowsError(try c.prepare()) { XCTAssertEqual(($0 as? AudioError)?.code, .propertyNotSupported) }
        XCTAssertThrowsError(try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: StreamDescription(sampleRate: 44100, formatID: "aac ", bytesPerPacket: 0, framesPerPacket: 1024, bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat)
        }
    }

    func testTrimmingDropsPrimingAndKeepsTheValidFrames() throws {
        let frames = 10000
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let c = try AudioConverter(from: AudioConverterTests.s16(44100, 2), to: AudioConverterTests.s16(44100, 2))
        c.packetTableInfo = PacketTableInfo(numberValidFrames: 6000, primingFrames: 2112, remainderFrames: 1888)
        let out = try convertChunked(c, AudioConverterTests.bytes(samples), frames: frames, bytesPerFrame: 4, sizes: [1024])
        XCTAssertEqual(out, AudioConverterTests.bytes(Array(samples[2112 * 2..<(2112 + 6000) * 2])))
    }

    func testTPDFDitherIsTriangularAndUnbiased() throws {
        // A constant a quarter of an 8-bit step above 0: plain rounding always gives 0; TPDF
        // dither of ±1 LSB spreads it over codes −1, 0 and 1 with the mean at the value.
        let frames = 40000
        let value: Int16 = 0x0040
        let input = AudioConverterTests.bytes([Int16](repeating: value, count: frames))
        let plain = try convertWhole(AudioConverter(from: AudioConverterTests.s16(44100, 1), to: .pcm(sampleRate: 0, channels: 1, bits: 8)), input, frames: frames)
        XCTAssertEqual(Set(plain), [0])
        let c = try AudioConverter(from: AudioConverterTests.s16(44100, 1), to: .pcm(sampleRate: 0, channels: 1, bits: 8))
        c.dither = .tpdf
        let dithered = try convertWhole(c, input, frames: frames).map { Int(Int8(bitPattern: $0)) }
        XCTAssertEqual(Set(dithered), [-1, 0, 1])
        let mean = Double(dithered.reduce(0, +)) / Double(frames)
        XCTAssertEqual(mean, 0.25, accuracy: 0.01)
        // Value + triangular(−1, 1) rounded: −1 below −0.5 (d < −0.75, 1/32), 1 from 0.5 (d ≥ 0.25, 9/32).
        let share = { (code: Int) in Double(dithered.filter { $0 == code }.count) / Double(frames) }
        XCTAssertEqual(share(-1), 1.0 / 32, accuracy: 0.006)
        XCTAssertEqual(share(1), 9.0 / 32, accuracy: 0.01)
        XCTAssertEqual(share(0), 22.0 / 32, accuracy: 0.01)
        // No dither where no bits are lost: 16 → 16 stays exact with dither on.
        let same = try AudioConverter(from: AudioConverterTests.s16(44100, 1), to: AudioConverterTests.s16(44100, 1))
        same.dither = .tpdf
        XCTAssertEqual(try convertWhole(same, input, frames: frames), input)
    }

    func testDecodingThroughTheRegistryMatchesTheFLACStreamMD5() throws {
        let path = fixturesDirectory + "/flac/flac_5.1.flac"
        let file = try AudioFile(path: path)
        let p = try file.properties
        let c = try AudioConverter(from: XCTUnwrap(p.dataFormat), to: AudioConverterTests.s16(0, 6), magicCookie: p.magicCookie)
        var out: [UInt8] = []
        var next: Int64 = 0
        while try c.fillComplexBuffer(frames: 1000, into: &out, input: { n throws(AudioError) in
            guard next < p.audioDataPacketCount ?? 0 else { return nil }
            let (data, d) = try file.readPacketData(startingAt: next, count: 1)
            next += 1
            return .init(data: data, packetCount: 1, descriptions: d)
        }) > 0 {}
        let info = try XCTUnwrap(p.magicCookie)
        XCTAssertEqual(MD5.digest(out), Array(info.suffix(16)))
        XCTAssertEqual(out.count, 11025 * 12)
    }
}

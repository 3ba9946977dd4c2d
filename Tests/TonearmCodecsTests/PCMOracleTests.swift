import XCTest
@testable import TonearmCodecs
import TonearmCore

/// Linear PCM and G.711 decoded by Tonearm and by ffmpeg, compared byte for byte.
final class PCMOracleTests: XCTestCase {
    private let outputs: [PCMBuffer.CommonFormat] = [.int16, .float32, .int32]

    /// ffmpeg's decode of raw bytes in one of its PCM demuxer formats.
    private func reference(raw: [UInt8], ffmpegFormat: String, channels: Int, output: PCMBuffer.CommonFormat,
                           in dir: String) throws -> [UInt8]
    {
        let path = dir + "/in-\(ffmpegFormat).raw"
        try writeFile(path, raw)
        return try ffmpeg(["-f", ffmpegFormat, "-ar", "8000", "-ac", String(channels), "-i", path, "-f", output.ffmpegFormat, "-"])
    }

    private func check(_ format: StreamDescription, raw: [UInt8], ffmpegFormat: String, ourBytes: [UInt8]? = nil,
                       in dir: String, layouts: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws
    {
        let channels = Int(format.channelsPerFrame)
        for output in outputs {
            let expected = try reference(raw: raw, ffmpegFormat: ffmpegFormat, channels: channels, output: output, in: dir)
            XCTAssertFalse(expected.isEmpty, file: file, line: line)
            let decoder = try CodecRegistry.makeDecoder(for: format, output: output)
            let data = ourBytes ?? raw
            if format.isInterleaved {
                let bpf = Int(format.bytesPerFrame)
                let ours = try decodeStream(decoder, data, bytesPerPacket: bpf, sampleFormat: output)
                assertSameBytes(ours, expected, bytesPerSample: output.bytesPerSample, "\(format) → \(output)", file: file, line: line)
                if layouts {
                    let planar = try decodeStream(decoder, data, bytesPerPacket: bpf, sampleFormat: output, interleaved: false,
                                                  packetsPerCall: 7)
                    assertSameBytes(planar, expected, bytesPerSample: output.bytesPerSample, "\(format) → planar \(output)", file: file, line: line)
                    let described = try decodeStream(decoder, data, bytesPerPacket: bpf, sampleFormat: output, packetsPerCall: 13,
                                                     useDescriptions: true)
                    assertSameBytes(described, expected, bytesPerSample: output.bytesPerSample, "\(format) with descriptions → \(output)", file: file, line: line)
                }
            } else {
                // One call: the planes span the whole data.
                let frames = data.count / Int(format.bytesPerFrame) / channels
                for interleavedOut in [true, false] {
                    let out = PCMBuffer(commonFormat: output, sampleRate: 8000, channels: channels, interleaved: interleavedOut,
                                        frameCapacity: frames)
                    try data.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: frames, descriptions: nil, into: out) }
                    assertSameBytes(out.interleavedBytes(), expected, bytesPerSample: output.bytesPerSample,
                                    "\(format) → \(output)", file: file, line: line)
                }
            }
        }
    }

    func testIntegerLayoutsAgainstFFmpeg() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        var rng = SplitMix64(seed: 0x5EED)
        let channels: UInt32 = 3, frames = 1001
        let cases: [(String, UInt32, Bool, Bool)] = [  // ffmpeg name, bits, signed, big-endian
            ("u8", 8, false, false), ("s8", 8, true, false),
            ("s16le", 16, true, false), ("s16be", 16, true, true), ("u16le", 16, false, false), ("u16be", 16, false, true),
            ("s24le", 24, true, false), ("s24be", 24, true, true), ("u24le", 24, false, false), ("u24be", 24, false, true),
            ("s32le", 32, true, false), ("s32be", 32, true, true), ("u32le", 32, false, false), ("u32be", 32, false, true),
        ]
        for (name, bits, signed, bigEndian) in cases {
            var raw = rng.bytes(frames * Int(channels * bits / 8))
            // Make sure the extremes are there.
            for i in 0..<Int(bits / 8) { raw[i] = 0x00; raw[Int(bits / 8) + i] = 0xFF }
            let f = StreamDescription.pcm(sampleRate: 8000, channels: channels, bits: bits, isBigEndian: bigEndian, isSigned: signed)
            try check(f, raw: raw, ffmpegFormat: name, in: dir, layouts: name == "s16le" || name == "s24be" || name == "u8")
        }
    }

    func testFloatLayoutsAgainstFFmpeg() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        var rng = SplitMix64(seed: 42)
        // Random values past full scale, plus the ties that show the rounding rule.
        var values: [Double] = (0..<3000).map { _ in Double.random(in: -1.3...1.3, using: &rng) }
        for k in [-32769, -32768, -5, -2, -1, 0, 1, 2, 3, 100, 32766, 32767] { values.append((Double(k) + 0.5) / 32768) }
        for k in [-3, -2, -1, 0, 1, 2, 5] { values.append((Double(k) + 0.5) / 2147483648) }
        values += [1, -1, 0, -0.0, 0x1p-149, 1.0000001, -1.0000001, 0.99999994, 40000, -40000]
        while values.count % 2 != 0 { values.append(0.25) }
        let floats = values.map { Float($0) }
        for (name, bigEndian) in [("f32le", false), ("f32be", true)] {
            let raw = floats.flatMap { bigEndian ? be32(Int($0.bitPattern)) : le32(Int($0.bitPattern)) }
            try check(.pcm(sampleRate: 8000, channels: 2, bits: 32, isFloat: true, isBigEndian: bigEndian), raw: raw,
                      ffmpegFormat: name, in: dir, layouts: !bigEndian)
        }
        for (name, bigEndian) in [("f64le", false), ("f64be", true)] {
            let raw = values.flatMap { bigEndian ? be64($0.bitPattern) : Array(be64($0.bitPattern).reversed()) }
            try check(.pcm(sampleRate: 8000, channels: 2, bits: 64, isFloat: true, isBigEndian: bigEndian), raw: raw,
                      ffmpegFormat: name, in: dir, layouts: !bigEndian)
        }
    }

    /// Layouts ffmpeg has no raw demuxer for, checked against the equivalent layout it has.
    func testUnpackedAndNonInterleavedAgainstFFmpeg() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        var rng = SplitMix64(seed: 99)
        let frames = 777, channels = 2
        let s24 = rng.bytes(frames * channels * 3)
        // 24 bits aligned low in 4 bytes, with garbage above: must equal s24le.
        var low: [UInt8] = []
        for i in 0..<frames * channels { low += s24[3 * i..<3 * i + 3] + [UInt8.random(in: 0...255, using: &rng)] }
        var lowFormat = StreamDescription.pcm(sampleRate: 8000, channels: 2, bits: 24, bytesPerSample: 4)
        lowFormat.formatFlags.remove(.isAlignedHigh)
        try check(lowFormat, raw: s24, ffmpegFormat: "s24le", ourBytes: low, in: dir)
        // 24 bits aligned high in 4 bytes: the container is an s32.
        let s32 = rng.bytes(frames * channels * 4)
        try check(.pcm(sampleRate: 8000, channels: 2, bits: 24, bytesPerSample: 4), raw: s32, ffmpegFormat: "s32le", in: dir)
        // 20 bits aligned high in 3 bytes (WAV's 20-bit): read as FFmpeg does, the whole container.
        try check(.pcm(sampleRate: 8000, channels: 2, bits: 20, bytesPerSample: 3), raw: s24, ffmpegFormat: "s24le", in: dir)
        // Non-interleaved big-endian 16-bit: planes of the interleaved s16be data.
        let s16 = rng.bytes(frames * channels * 2)
        var planes: [UInt8] = []
        for c in 0..<channels { for f in 0..<frames { planes += s16[(f * channels + c) * 2..<(f * channels + c) * 2 + 2] } }
        try check(.pcm(sampleRate: 8000, channels: 2, bits: 16, isBigEndian: true, interleaved: false), raw: s16,
                  ffmpegFormat: "s16be", ourBytes: planes, in: dir)
    }

    func testG711AllCodesAgainstFFmpeg() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        let raw = (0..<1024).map { UInt8($0 & 0xFF) }
        for (name, id) in [("mulaw", AudioFormatID.uLaw), ("alaw", .aLaw)] {
            let f = StreamDescription(sampleRate: 8000, formatID: id, bytesPerPacket: 2, framesPerPacket: 1, bytesPerFrame: 2,
                                      channelsPerFrame: 2, bitsPerChannel: 8)
            try check(f, raw: raw, ffmpegFormat: name, in: dir, layouts: true)
        }
    }

    /// Files that ffmpeg encodes, read with the test's own chunk walker.
    func testEncodedFilesAgainstFFmpeg() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        let hot = "aevalsrc=1.25*sin(440*2*PI*t)|0.9*sin(555*2*PI*t)+0.2*random(0):s=22050:d=0.4"
        let noise = "anoisesrc=d=0.4:c=white:a=0.8:r=22050:seed=5"
        let cases: [(String, String, String)] = [  // source, codec, file
            (hot, "pcm_u8", "u8.wav"), (noise, "pcm_s16le", "s16.wav"), (noise, "pcm_s24le", "s24.wav"),
            (hot, "pcm_s32le", "s32.wav"), (hot, "pcm_f32le", "f32.wav"), (hot, "pcm_f64le", "f64.wav"),
            (noise, "pcm_mulaw", "ulaw.wav"), (noise, "pcm_alaw", "alaw.wav"),
            (noise, "pcm_s16be", "s16.aiff"), (noise, "pcm_s24be", "s24.aiff"), (hot, "pcm_f32be", "f32.aifc"),
            (noise, "pcm_s16le", "s16.caf"), (hot, "pcm_f64be", "f64.caf"), (noise, "pcm_mulaw", "ulaw.caf"),
        ]
        for (source, codec, name) in cases {
            let path = dir + "/" + name
            try ffmpeg(["-f", "lavfi", "-i", source, "-ac", "2", "-c:a", codec, path])
            let payload: AudioPayload
            if name.hasSuffix(".wav") { payload = try readWAV(path) }
            else if name.hasSuffix(".caf") { payload = try readCAF(path) }
            else { payload = try readAIFF(path) }
            for output in outputs {
                let expected = try ffmpeg(["-i", path, "-f", output.ffmpegFormat, "-"])
                let decoder = try CodecRegistry.makeDecoder(for: payload.format, magicCookie: payload.cookie, output: output)
                let ours = try decodeStream(decoder, payload.data, bytesPerPacket: Int(payload.format.bytesPerPacket), sampleFormat: output,
                                            packetsPerCall: 4096)
                assertSameBytes(ours, expected, bytesPerSample: output.bytesPerSample, "\(name) → \(output)")
            }
        }
    }

    func testInt64WAVAgainstFFmpeg() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        var rng = SplitMix64(seed: 64)
        let data = rng.bytes(300 * 2 * 8)
        let fmt = le16(1) + le16(2) + le32(8000) + le32(8000 * 16) + le16(16) + le16(64)
        let path = dir + "/s64.wav"
        try writeFile(path, makeWAV(fmt: fmt, data: data))
        let payload = try readWAV(path)
        for output in outputs {
            let expected = try ffmpeg(["-i", path, "-f", output.ffmpegFormat, "-"])
            let decoder = try CodecRegistry.makeDecoder(for: payload.format, output: output)
            let ours = try decodeStream(decoder, payload.data, bytesPerPacket: 16, sampleFormat: output)
            assertSameBytes(ours, expected, bytesPerSample: output.bytesPerSample, "s64 → \(output)")
        }
    }
}

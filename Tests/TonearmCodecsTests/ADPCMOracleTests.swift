import XCTest
@testable import TonearmCodecs
import TonearmCore

/// The ADPCM decoders against ffmpeg: files ffmpeg encodes, blocks of random codes with
/// random (valid) headers, and files whose last block is cut short.
final class ADPCMOracleTests: XCTestCase {
    /// Decodes `payload` several ways (each output type; one big call, calls of a few
    /// packets into a planar buffer with descriptions, one packet a call) and compares each
    /// with ffmpeg's decode of `path`.
    private func compare(_ path: String, _ payload: AudioPayload, _ what: String, allWays: Bool = true,
                         file: StaticString = #filePath, line: UInt = #line) throws
    {
        let bpp = Int(payload.format.bytesPerPacket)
        for output in [PCMBuffer.CommonFormat.int16, .float32, .int32] {
            let expected = try ffmpeg(["-i", path, "-f", output.ffmpegFormat, "-"])
            XCTAssertFalse(expected.isEmpty, "\(what): ffmpeg decoded nothing", file: file, line: line)
            var ways: [(Int, Bool, Bool)] = [(100_000, true, false)]
            if allWays && output == .int16 { ways += [(3, false, true), (1, true, false)] }
            for (perCall, interleaved, descriptions) in ways {
                let decoder = try CodecRegistry.makeDecoder(for: payload.format, magicCookie: payload.cookie, output: output)
                let ours = try decodeStream(decoder, payload.data, bytesPerPacket: bpp, sampleFormat: output,
                                            interleaved: interleaved, packetsPerCall: perCall, useDescriptions: descriptions)
                assertSameBytes(ours, expected, bytesPerSample: output.bytesPerSample,
                                "\(what) → \(output), \(perCall) packets a call\(interleaved ? "" : ", planar")\(descriptions ? ", described" : "")",
                                file: file, line: line)
            }
        }
    }

    private let sources = [
        ("sine", "sine=f=440:d=0.5:r=22050,volume=2"),
        ("noise", "anoisesrc=d=0.5:c=pink:a=1:r=22050:seed=11"),
        ("square", "aevalsrc=if(lt(mod(t*300\\,1)\\,0.5)\\,0.99\\,-0.99)|0.7*sin(6000*2*PI*t):s=22050:d=0.5"),
    ]

    func testFFmpegEncodedIMAWAV() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        for (name, source) in sources {
            for channels in [1, 2] {
                for block in [256, 1024, 2048] {
                    let path = "\(dir)/ima-\(name)-\(channels)-\(block).wav"
                    try ffmpeg(["-f", "lavfi", "-i", source, "-ac", String(channels), "-c:a", "adpcm_ima_wav", "-block_size", String(block), path])
                    let payload = try readWAV(path)
                    XCTAssertEqual(payload.format.formatID, .dviIntelIMA)
                    try compare(path, payload, "IMA WAV \(name) \(channels) ch, \(block)-byte blocks", allWays: block == 256)
                }
            }
        }
    }

    func testFFmpegEncodedMSADPCM() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        for (name, source) in sources {
            for channels in [1, 2] {
                for block in [256, 1024, 2048] {
                    let path = "\(dir)/ms-\(name)-\(channels)-\(block).wav"
                    try ffmpeg(["-f", "lavfi", "-i", source, "-ac", String(channels), "-c:a", "adpcm_ms", "-block_size", String(block), path])
                    let payload = try readWAV(path)
                    XCTAssertEqual(payload.format.formatID, .microsoftADPCM)
                    try compare(path, payload, "MS ADPCM \(name) \(channels) ch, \(block)-byte blocks", allWays: block == 256)
                }
            }
        }
    }

    func testFFmpegEncodedIMA4() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        for (name, source) in sources {
            for channels in [1, 2] {
                for ext in ["caf", "aifc"] {
                    let path = "\(dir)/ima4-\(name)-\(channels).\(ext)"
                    try ffmpeg(["-f", "lavfi", "-i", source, "-ac", String(channels), "-c:a", "adpcm_ima_qt", path])
                    let payload = ext == "caf" ? try readCAF(path) : try readAIFF(path)
                    XCTAssertEqual(payload.format.formatID, .appleIMA4)
                    try compare(path, payload, "IMA4 \(name) \(channels) ch in \(ext)")
                }
            }
        }
    }

    // MARK: Random codes

    private func imaFmt(channels: Int, blockAlign: Int) -> [UInt8] {
        let spb = 1 + (blockAlign - 4 * channels) / (4 * channels) * 8
        return le16(0x11) + le16(channels) + le32(22050) + le32(22050 * blockAlign / spb) + le16(blockAlign) + le16(4)
            + le16(2) + le16(spb)
    }

    private func msFmt(channels: Int, blockAlign: Int, samplesPerBlock spb: Int) -> [UInt8] {
        var fmt = le16(2) + le16(channels) + le32(22050) + le32(22050 * blockAlign / spb) + le16(blockAlign) + le16(4)
        fmt += le16(32) + le16(spb) + le16(7)
        for (c1, c2) in MSADPCMDecoder.standardCoefficients { fmt += le16(c1) + le16(c2) }
        return fmt
    }

    func testRandomIMAWAVBlocks() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        var rng = SplitMix64(seed: 0x1A4)
        for channels in [1, 2] {
            let block = 4 * channels * 33
            var data: [UInt8] = []
            for _ in 0..<60 {
                for _ in 0..<channels {
                    data += rng.bytes(2) + [UInt8.random(in: 0...88, using: &rng), 0]
                }
                data += rng.bytes(block - 4 * channels)
            }
            let path = "\(dir)/ima-random-\(channels).wav"
            try writeFile(path, makeWAV(fmt: imaFmt(channels: channels, blockAlign: block), data: data))
            try compare(path, try readWAV(path), "random IMA WAV \(channels) ch")
        }
    }

    func testRandomMSADPCMBlocks() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        var rng = SplitMix64(seed: 0x3502)
        for channels in [1, 2, 3, 4, 6] {
            let perChannel = 40
            let block = channels * (7 + perChannel)
            var data: [UInt8] = []
            for _ in 0..<50 {
                func delta() -> [UInt8] {
                    // Small, large and negative deltas all occur in damaged or odd files.
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0: return le16(Int.random(in: 0...40, using: &rng))
                    case 1: return le16(Int.random(in: -300...(-1), using: &rng))
                    default: return rng.bytes(2)
                    }
                }
                if channels <= 2 {
                    for _ in 0..<channels { data.append(UInt8.random(in: 0...6, using: &rng)) }
                    for _ in 0..<channels { data += delta() }
                    data += rng.bytes(4 * channels)
                    data += rng.bytes(block - 7 * channels)
                } else {
                    // FFmpeg's layout beyond stereo: each channel's header and codes in one run.
                    for _ in 0..<channels {
                        data.append(UInt8.random(in: 0...6, using: &rng))
                        data += delta() + rng.bytes(4) + rng.bytes(perChannel)
                    }
                }
            }
            let spb = channels <= 2 ? (block - 7 * channels) * 2 / channels + 2 : 2 + 2 * perChannel
            let path = "\(dir)/ms-random-\(channels).wav"
            // Beyond stereo, nBlockAlign is one channel's run, as FFmpeg reads these files.
            let align = channels <= 2 ? block : block / channels
            let fmt = msFmt(channels: channels, blockAlign: align, samplesPerBlock: spb)
            try writeFile(path, makeWAV(fmt: fmt, data: data))
            // Tonearm's WAVE parser reads nBlockAlign as the whole block, as the WAVE spec has
            // it; FFmpeg's per-channel reading beyond stereo is described here directly.
            let payload = channels <= 2 ? try readWAV(path) : AudioPayload(
                format: StreamDescription(sampleRate: 22050, formatID: .microsoftADPCM, bytesPerPacket: UInt32(block),
                                          framesPerPacket: UInt32(spb), bytesPerFrame: 0,
                                          channelsPerFrame: UInt32(channels), bitsPerChannel: 4),
                cookie: fmt, data: data)
            try compare(path, payload, "random MS ADPCM \(channels) ch")
        }
    }

    func testRandomIMA4Packets() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        var rng = SplitMix64(seed: 0x1AA4)
        for channels in [1, 2] {
            var data: [UInt8] = []
            var previous = [Int](repeating: 0, count: channels)
            for packet in 0..<80 {
                for c in 0..<channels {
                    // Now and then a header near the last one, so that the kept predictor matters.
                    var header = Int(UInt16.random(in: 0...UInt16.max, using: &rng)) & 0xFF80 | Int.random(in: 0...88, using: &rng)
                    if packet % 3 == 1 { header = previous[c] }
                    previous[c] = header
                    data += be16(header) + rng.bytes(32)
                }
            }
            let f = StreamDescription(sampleRate: 22050, formatID: .appleIMA4, bytesPerPacket: UInt32(34 * channels), framesPerPacket: 64,
                                      bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
            let path = "\(dir)/ima4-random-\(channels).caf"
            try writeFile(path, makeCAF(format: f, data: data))
            try compare(path, try readCAF(path), "random IMA4 \(channels) ch")
        }
    }

    // MARK: The last block cut short

    /// Rewrites a WAV file with its data chunk shortened by `cut` bytes and no fact chunk.
    private func truncated(_ path: String, cut: Int, into out: String) throws -> AudioPayload {
        var payload = try readWAV(path)
        payload.data.removeLast(cut)
        try writeFile(out, makeWAV(fmt: payload.cookie!, data: payload.data))
        return payload
    }

    func testShortLastBlockDecodesWhatItHolds() throws {
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        for codec in ["adpcm_ima_wav", "adpcm_ms"] {
            for channels in [1, 2] {
                let path = "\(dir)/\(codec)-\(channels).wav"
                try ffmpeg(["-f", "lavfi", "-i", sources[1].1, "-ac", String(channels), "-c:a", codec, "-block_size", "512", path])
                // Leaves the last block with: a few groups and a stray byte; its header and
                // one byte; its header only (then MS's two samples / IMA's one).
                let header = codec == "adpcm_ms" ? 7 * channels : 4 * channels
                for keep in [header + 4 * channels * 5 + 3, header + 1, header] {
                    let out = "\(dir)/\(codec)-\(channels)-\(keep).wav"
                    let payload = try truncated(path, cut: 512 - keep, into: out)
                    try compare(out, payload, "\(codec) \(channels) ch, last block of \(keep) bytes")
                }
            }
        }
    }
}

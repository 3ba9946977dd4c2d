import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmFormats
import TonearmTestSupport

/// The native ALAC decoder against ffmpeg's decode of the fixtures in alac/ (ffmpeg's
/// encoder, M4A and CAF) and caf/, and of the 20- and 32-bit files alac/alac_forge.py builds:
/// the committed SHA-256 always, and ffmpeg live when it is installed.
final class ALACDecoderTests: XCTestCase {
    struct Golden: Decodable {
        var path: String
        var bits: Int
        var channels: Int
        var format: String
        var frames: Int
        var sha256: String
    }

    static let goldens: [String: Golden] = {
        let url = URL(fileURLWithPath: fixturesDirectory + "/alac/goldens.json")
        guard let data = try? Data(contentsOf: url) else { return [:] }
        return (try? JSONDecoder().decode([String: Golden].self, from: data)) ?? [:]
    }()

    static func path(_ g: Golden) -> String { fixturesDirectory + "/alac/" + g.path }

    struct Decoded {
        var decoder: ALACDecoder
        /// Interleaved little-endian output bytes, in the stream's (ALAC's) channel order.
        var pcm: [UInt8]
        var frames: Int
    }

    /// Reads a file's packets and cookie through AudioFile and decodes them, `perCall`
    /// packets a call.
    private func decode(_ path: String, as common: PCMBuffer.CommonFormat, interleaved: Bool = true,
                        perCall: Int = 7) throws -> Decoded
    {
        let file = try AudioFile(path: path)
        let p = try file.properties
        let format = try XCTUnwrap(p.dataFormat)
        XCTAssertEqual(format.formatID, .appleLossless, path)
        let decoder = try ALACDecoder(format: format, magicCookie: p.magicCookie, output: common)
        let (pcm, frames) = try decodePackets(of: file, with: decoder, as: common, interleaved: interleaved, perCall: perCall)
        return Decoded(decoder: decoder, pcm: pcm, frames: frames)
    }

    /// Where ffmpeg puts each of ALAC's channels (its `ff_alac_channel_layout_offsets`):
    /// ALAC orders channels C L R …, ffmpeg L R C ….
    static func ffmpegChannel(_ c: Int, of channels: Int) -> Int {
        let table: [[Int]] = [[0], [0, 1], [2, 0, 1], [2, 0, 1, 3], [2, 0, 1, 3, 4], [2, 0, 1, 4, 5, 3],
                              [2, 0, 1, 4, 5, 6, 3], [2, 6, 7, 0, 1, 4, 5, 3]]
        return table[channels - 1][c]
    }

    /// Interleaved samples of `width` bytes moved from ALAC's channel order to ffmpeg's.
    static func inFFmpegOrder(_ pcm: [UInt8], channels: Int, width: Int) -> [UInt8] {
        guard channels > 2 else { return pcm }
        var out = pcm
        let frame = channels * width
        for f in 0..<pcm.count / frame {
            for c in 0..<channels {
                let from = f * frame + c * width, to = f * frame + ffmpegChannel(c, of: channels) * width
                for k in 0..<width { out[to + k] = pcm[from + k] }
            }
        }
        return out
    }

    private func commonFormat(_ g: Golden) -> PCMBuffer.CommonFormat { g.format == "s16le" ? .int16 : .int32 }

    /// Every fixture decodes to the SHA-256 of ffmpeg's PCM, with ffmpeg's frame count.
    func testFixturesMatchGoldens() throws {
        XCTAssertGreaterThanOrEqual(Self.goldens.count, 15)
        for (name, g) in Self.goldens.sorted(by: { $0.key < $1.key }) {
            let d = try decode(Self.path(g), as: commonFormat(g))
            XCTAssertEqual(d.frames, g.frames, name)
            XCTAssertEqual(Int(d.decoder.inputFormat.channelsPerFrame), g.channels, name)
            let ordered = Self.inFFmpegOrder(d.pcm, channels: g.channels, width: g.format == "s16le" ? 2 : 4)
            XCTAssertEqual(SHA256.hex(ordered), g.sha256, name)
        }
    }

    /// 16-bit files also decode to Int32 whose top half is the golden's Int16, and every
    /// file, whatever its depth, to ffmpeg's s16le through Int16 output.
    func testFixturesAgainstFFmpegLive() throws {
        _ = try requireFFmpeg()
        for (name, g) in Self.goldens.sorted(by: { $0.key < $1.key }) {
            let path = Self.path(g)
            for common in [PCMBuffer.CommonFormat.int16, .int32] {
                let d = try decode(path, as: common)
                let reference = try ffmpeg(["-i", path, "-f", common.ffmpegFormat, "-"])
                let width = common == .int16 ? 2 : 4
                assertSameBytes(Self.inFFmpegOrder(d.pcm, channels: g.channels, width: width), reference,
                                bytesPerSample: width, "\(name) as \(common)")
            }
        }
    }

    /// Interleaved and planar buffers, and one or many packets a call, give the same
    /// samples; Int16 and Float32 are Int32's top bits and Int32 scaled by 2^-31.
    func testOutputFormatsAgree() throws {
        for name in ["alac_16_5.1.m4a", "alac_24_stereo.caf", "alac_16_mono.m4a", "alac_20_stereo.caf", "alac_32_stereo.caf"] {
            guard let g = Self.goldens[name] else { XCTFail("no golden for \(name)"); continue }
            let path = Self.path(g)
            let i32 = try decode(path, as: .int32).pcm
            XCTAssertEqual(try decode(path, as: .int32, interleaved: false, perCall: 1).pcm, i32, name)
            let i16 = try decode(path, as: .int16, interleaved: false).pcm
            XCTAssertEqual(try decode(path, as: .int16, interleaved: true, perCall: 3).pcm, i16, name)
            let f32 = try decode(path, as: .float32).pcm
            XCTAssertEqual(try decode(path, as: .float32, interleaved: false).pcm, f32, name)
            let n = i32.count / 4
            XCTAssertEqual(i16.count, 2 * n)
            XCTAssertEqual(f32.count, 4 * n)
            for k in 0..<n {
                let v = Int32(bitPattern: UInt32(i32[4 * k]) | UInt32(i32[4 * k + 1]) << 8 | UInt32(i32[4 * k + 2]) << 16 | UInt32(i32[4 * k + 3]) << 24)
                let s = Int16(bitPattern: UInt16(i16[2 * k]) | UInt16(i16[2 * k + 1]) << 8)
                let f = Float(bitPattern: UInt32(f32[4 * k]) | UInt32(f32[4 * k + 1]) << 8 | UInt32(f32[4 * k + 2]) << 16 | UInt32(f32[4 * k + 3]) << 24)
                if s != Int16(truncatingIfNeeded: v >> 16) || f != Float(v) * 0x1p-31 {
                    XCTFail("\(name): sample \(k) is \(v) as Int32, \(s) as Int16, \(f) as Float32")
                    break
                }
            }
        }
    }

    /// The packets and cookie of a file, for the tests that alter them.
    private func packets(_ name: String) throws -> (format: StreamDescription, cookie: [UInt8], packets: [[UInt8]]) {
        let file = try AudioFile(path: fixturesDirectory + "/alac/" + name)
        let p = try file.properties
        let n = Int(p.audioDataPacketCount ?? 0)
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: n)
        let list = try XCTUnwrap(descriptions).map { Array(data[Int($0.startOffset)..<Int($0.startOffset) + Int($0.dataByteSize)]) }
        return (try XCTUnwrap(p.dataFormat), try XCTUnwrap(p.magicCookie), list)
    }

    private func decodeOne(_ decoder: ALACDecoder, _ packet: [UInt8], into buffer: PCMBuffer) throws(AudioError) {
        try packet.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
    }

    /// The cookie decodes in each of its forms: the 24 bytes, behind an 'alac' atom header,
    /// behind 'frma' and 'alac', and with a channel layout atom after it.
    func testCookieForms() throws {
        let (format, cookie, list) = try packets("alac_16_stereo.m4a")
        XCTAssertEqual(cookie.count, 24)
        let alacAtom: [UInt8] = [0, 0, 0, 36] + Array("alac".utf8) + [0, 0, 0, 0]
        let frma: [UInt8] = [0, 0, 0, 12] + Array("frmaalac".utf8)
        let chan: [UInt8] = [0, 0, 0, 24] + Array("chan".utf8) + [0, 0, 0, 0] + [0, 0x65, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 0]
        var outputs: [[UInt8]] = []
        for form in [cookie, alacAtom + cookie, frma + alacAtom + cookie + [0, 0, 0, 8, 0, 0, 0, 0], cookie + chan] {
            let decoder = try ALACDecoder(format: format, magicCookie: form, output: .int16)
            let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 22050, channels: 2, interleaved: true, frameCapacity: 4096)
            try decodeOne(decoder, list[0], into: buffer)
            outputs.append(buffer.interleavedBytes())
        }
        XCTAssertEqual(outputs[0].count, 4096 * 4)
        XCTAssertTrue(outputs.allSatisfy { $0 == outputs[0] })
    }

    /// Cookies the decoder cannot honour are refused with 'fmt?', and so is a missing one.
    func testHostileCookiesAreRefused() throws {
        let (format, cookie, _) = try packets("alac_16_stereo.m4a")
        func with(_ i: Int, _ bytes: [UInt8]) -> [UInt8] {
            var c = cookie
            c.replaceSubrange(i..<i + bytes.count, with: bytes)
            return c
        }
        let hostile: [[UInt8]?] = [
            nil, [], Array(cookie.prefix(23)),
            with(0, [0, 0, 0, 0]),            // frameLength 0
            with(0, [0xFF, 0xFF, 0xFF, 0xFF]), // frameLength 4 Gi
            with(0, [0, 1, 0, 1]),            // 65537, over the bound
            with(5, [17]), with(5, [0]), with(5, [255]),  // bit depths
            with(9, [0]), with(9, [9]), with(9, [255]),   // channels
            [0, 0, 0, 36] + Array("alac".utf8) + [0, 0, 0, 0] + Array(cookie.prefix(20)),
        ]
        for (i, c) in hostile.enumerated() {
            XCTAssertThrowsError(try ALACDecoder(format: format, magicCookie: c, output: .int16), "cookie \(i)") { error in
                XCTAssertEqual((error as? AudioError)?.code, .unsupportedDataFormat, "cookie \(i)")
            }
        }
        // The registry hands the same refusal on.
        XCTAssertThrowsError(try CodecRegistry.makeDecoder(for: format, magicCookie: with(5, [12]), output: .int16)) { error in
            XCTAssertEqual((error as? AudioError)?.code, .unsupportedDataFormat)
        }
        XCTAssertTrue(CodecRegistry.canDecode(.appleLossless))
        XCTAssertTrue(try CodecRegistry.makeDecoder(for: format, magicCookie: cookie, output: .int16) is ALACDecoder)
    }

    /// Damaged packets (flipped bits, cut short, garbage) throw 'bada' with the output
    /// untouched, or decode; they never trap. A bad packet among good ones in one call
    /// leaves the output untouched too.
    func testDamagedPacketsNeverCrash() throws {
        var rng = SeededGenerator(seed: 0xA1AC)
        for name in ["alac_16_stereo.m4a", "alac_24_stereo.m4a", "alac_16_5.1.m4a", "alac_32_stereo.caf", "alac_16_stereo_escape.m4a"] {
            let (format, cookie, list) = try packets(name)
            let decoder = try ALACDecoder(format: format, magicCookie: cookie, output: .int32)
            let channels = Int(decoder.inputFormat.channelsPerFrame)
            let buffer = PCMBuffer(commonFormat: .int32, sampleRate: 8000, channels: channels, interleaved: false,
                                   frameCapacity: 2 * decoder.maximumFramesPerPacket)
            var thrown = 0, decoded = 0
            for trial in 0..<300 {
                var bad = list[trial % list.count]
                switch trial % 4 {
                case 0: bad[Int.random(in: 0..<bad.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                case 1: bad = Array(bad.prefix(Int.random(in: 0..<bad.count, using: &rng)))
                case 2: bad = rng.bytes(Int.random(in: 0..<64, using: &rng))
                default:
                    for _ in 0..<4 { bad[Int.random(in: 0..<bad.count, using: &rng)] ^= 1 << UInt8.random(in: 0...7, using: &rng) }
                }
                buffer.frameLength = 0
                do {
                    try decodeOne(decoder, bad, into: buffer)
                    XCTAssertLessThanOrEqual(buffer.frameLength, decoder.maximumFramesPerPacket)
                    decoded += 1
                } catch {
                    XCTAssertEqual(error.code, .codecBadData, "\(name) trial \(trial): \(error)")
                    XCTAssertEqual(buffer.frameLength, 0)
                    thrown += 1
                }
            }
            XCTAssertGreaterThan(thrown, 50, name)
            // A good packet then a cut one, in one call: nothing is written.
            let good = list[0], cut = Array(list[list.count - 1].prefix(list[list.count - 1].count / 2))
            let both = good + cut
            let descriptions = [PacketDescription(startOffset: 0, dataByteSize: UInt32(good.count)),
                                PacketDescription(startOffset: Int64(good.count), dataByteSize: UInt32(cut.count))]
            buffer.frameLength = 0
            XCTAssertThrowsError(try both.withBytes { (raw) throws(AudioError) in
                try decoder.decode(raw, packetCount: 2, descriptions: descriptions, into: buffer)
            })
            XCTAssertEqual(buffer.frameLength, 0)
            _ = decoded
        }
    }

    /// Fill and data stream elements before the audio are skipped (Apple's decoder skips
    /// them; ffmpeg 5.1 refuses them, so this is checked against the plain packet).
    func testFillAndDataStreamElementsAreSkipped() throws {
        let (format, cookie, list) = try packets("alac_16_stereo.m4a")
        let decoder = try ALACDecoder(format: format, magicCookie: cookie, output: .int16)
        let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 22050, channels: 2, interleaved: true, frameCapacity: 4096)
        try decodeOne(decoder, list[0], into: buffer)
        let plain = buffer.interleavedBytes()
        // FIL: tag 6, count 2, two bytes. DSE: tag 4, instance 0, aligned, count 3, then to
        // the byte and three bytes. FIL with the long count: 15, then 8 more bits (15 + 1 - 1 bytes).
        let prefixes: [[(UInt64, Int)]] = [
            [(6, 3), (2, 4), (0xBEEF, 16)],
            [(4, 3), (0, 4), (1, 1), (3, 8), (0xABCDEF, 24)],  // 16 bits: aligned already
            [(6, 3), (15, 4), (1, 8), (0, 15 * 8)],
            [(6, 3), (1, 4), (0, 8), (4, 3), (0, 4), (1, 1), (3, 8), (0, 1), (0xABCDEF, 24)],  // a FIL, then a DSE padded to the byte
            [(4, 3), (5, 4), (0, 1), (255, 8), (2, 8), (0, 257 * 8), (6, 3), (0, 4)],
        ]
        for (i, fields) in prefixes.enumerated() {
            var bits: [Bool] = []
            for (v, n) in fields { for k in stride(from: n - 1, through: 0, by: -1) { bits.append((v >> UInt64(k)) & 1 == 1) } }
            for b in list[0] { for k in stride(from: 7, through: 0, by: -1) { bits.append((b >> UInt8(k)) & 1 == 1) } }
            var packet = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
            for (j, b) in bits.enumerated() where b { packet[j / 8] |= 0x80 >> UInt8(j % 8) }
            buffer.frameLength = 0
            try decodeOne(decoder, packet, into: buffer)
            XCTAssertEqual(buffer.interleavedBytes(), plain, "prefix \(i)")
        }
    }
}

import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmFormats
import TonearmTestSupport

/// Layers I and II (MPEGLayer12) against ffmpeg's float decoders (mp1float, mp2float), to
/// ISO/IEC 11172-4's "full accuracy": RMS difference < 2^-15/√12 and no difference above
/// 2^-14. Fixtures: mp3dec/layer1_*.mp1 (make-mp1.py; no encoder here writes layer I),
/// mpeg/*_layer2.mp2, and, when twolame is installed, layer II files it encodes on the fly
/// in every mode, allocation table and CRC setting. Without ffmpeg the committed probes of
/// its output (mp3dec/layer1_goldens.json) stand in.
final class MPEGLayer12Tests: XCTestCase {
    // MARK: A reference synthesis (test only)

    /// The standard's synthesis filter bank written out as in ISO/IEC 11172-3 Annex A
    /// (Figure A.2): matrixing into V, the 1024-sample FIFO, windowing by D, summing — in
    /// Double, slowly, for checking the dequantised subband samples.
    struct ReferenceSynthesis {
        var v = [Double](repeating: 0, count: 1024)

        /// Table B.3's window D[0...256] in units of 2^-16, before the sign of each 64-tap
        /// block; D[i] = ±half[min(i, 512 − i)], negative in the odd blocks (i / 64 odd).
        static let half: [Int32] = [
        0, -1, -1, -1, -1, -1, -1, -2, -2, -2, -2, -3, -3, -4,
        -4, -5, -5, -6, -7, -7, -8, -9, -10, -11, -13, -14, -16, -17,
        -19, -21, -24, -26, -29, -31, -35, -38, -41, -45, -49, -53, -58, -63,
        -68, -73, -79, -85, -91, -97, -104, -111, -117, -125, -132, -139, -147, -154,
        -161, -169, -176, -183, -190, -196, -202, -208, -213, -218, -222, -225, -227, -228,
        -228, -227, -224, -221, -215, -208, -200, -189, -177, -163, -146, -127, -106, -83,
        -57, -29, 2, 36, 72, 111, 153, 197, 244, 294, 347, 401, 459, 519,
        581, 645, 711, 779, 848, 919, 991, 1064, 1137, 1210, 1283, 1356, 1428, 1498,
        1567, 1634, 1698, 1759, 1817, 1870, 1919, 1962, 2001, 2032, 2057, 2075, 2085, 2087,
        2080, 2063, 2037, 2000, 1952, 1893, 1822, 1739, 1644, 1535, 1414, 1280, 1131, 970,
        794, 605, 402, 185, -45, -288, -545, -814, -1095, -1388, -1692, -2006, -2330, -2663,
        -3004, -3351, -3705, -4063, -4425, -4788, -5153, -5517, -5879, -6237, -6589, -6935, -7271, -7597,
        -7910, -8209, -8491, -8755, -8998, -9219, -9416, -9585, -9727, -9838, -9916, -9959, -9966, -9935,
        -9863, -9750, -9592, -9389, -9139, -8840, -8492, -8092, -7640, -7134, -6574, -5959, -5288, -4561,
        -3776, -2935, -2037, -1082, -70, 998, 2122, 3300, 4533, 5818, 7154, 8540, 9975, 11455,
        12980, 14548, 16155, 17799, 19478, 21189, 22929, 24694, 26482, 28289, 30112, 31947, 33791, 35640,
        37489, 39336, 41176, 43006, 44821, 46617, 48390, 50137, 51853, 53534, 55178, 56778, 58333, 59838,
        61289, 62684, 64019, 65290, 66494, 67629, 68692, 69679, 70590, 71420, 72169, 72835, 73415, 73908,
        74313, 74630, 74856, 74992, 75038,
        ]
        static let window: [Double] = (0..<512).map { i in
            let d = Double(half[min(i, 512 - i)]) / 65536
            return (i / 64) % 2 == 1 ? -d : d
        }
        static let matrix: [Double] = (0..<64).flatMap { i in
            (0..<32).map { k in cos(Double((16 + i) * (2 * k + 1)) * Double.pi / 64) }
        }

        mutating func synthesize(_ s: UnsafePointer<Float>, into out: inout [Float]) {
            for i in stride(from: 1023, through: 64, by: -1) { v[i] = v[i - 64] }
            for i in 0..<64 {
                var sum = 0.0
                for k in 0..<32 { sum += Self.matrix[i * 32 + k] * Double(s[k]) }
                v[i] = sum
            }
            for j in 0..<32 {
                var sum = 0.0
                for i in 0..<8 {
                    sum += v[i * 128 + j] * Self.window[i * 64 + j]
                    sum += v[i * 128 + 96 + j] * Self.window[i * 64 + 32 + j]
                }
                out.append(Float(sum))
            }
        }
    }

    // MARK: Decoding a file

    struct Decoded {
        var channels: Int
        var sampleRate: Int
        /// Interleaved, as ffmpeg's f32le.
        var pcm: [Float]
        var headers: [MPEGAudioHeader]
    }

    static func header(_ bytes: UnsafeRawBufferPointer) -> MPEGAudioHeader? {
        guard bytes.count >= 4 else { return nil }
        return MPEGAudioHeader(UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
    }

    /// Reads the packets through AudioFile and decodes each frame: MPEGLayer12 to subband
    /// samples, then the reference synthesis per channel.
    func decode(_ path: String) throws -> Decoded {
        let file = try AudioFile(path: path)
        let total = Int(try file.properties.audioDataPacketCount ?? 0)
        XCTAssertGreaterThan(total, 0, path)
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: total)
        var channels = 0, rate = 0
        var synth: [ReferenceSynthesis] = []
        var planes: [[Float]] = []
        var headers: [MPEGAudioHeader] = []
        var subbands = [Float](repeating: .nan, count: 2 * 36 * 32)
        for p in 0..<total {
            let start = descriptions.map { Int($0[p].startOffset) } ?? 0
            let size = descriptions.map { Int($0[p].dataByteSize) } ?? data.count
            try data.withUnsafeBytes { raw in
                let frame = UnsafeRawBufferPointer(rebasing: raw[start..<start + size])
                let h = try XCTUnwrap(Self.header(frame), path)
                if synth.isEmpty {
                    channels = h.channels
                    rate = h.sampleRate
                    synth = Array(repeating: ReferenceSynthesis(), count: channels)
                    planes = Array(repeating: [], count: channels)
                }
                headers.append(h)
                try subbands.withUnsafeMutableBufferPointer { s in
                    try MPEGLayer12.decode(frame, header: h, into: s.baseAddress!)
                }
                let slots = MPEGLayer12.slots(layer: h.layer)
                subbands.withUnsafeBufferPointer { s in
                    for ch in 0..<channels {
                        for slot in 0..<slots {
                            synth[ch].synthesize(s.baseAddress! + (ch * slots + slot) * 32, into: &planes[ch])
                        }
                    }
                }
            }
        }
        var pcm = [Float](repeating: 0, count: channels * (planes.first?.count ?? 0))
        for ch in 0..<channels { for (i, x) in planes[ch].enumerated() { pcm[i * channels + ch] = x } }
        return Decoded(channels: channels, sampleRate: rate, pcm: pcm, headers: headers)
    }

    // MARK: Comparing

    static let rmsLimit = 1.0 / 32768 / 12.0.squareRoot()
    static let maxLimit = 1.0 / 16384

    /// RMS and largest difference between two runs of samples, asserted within full accuracy.
    @discardableResult
    func assertFullAccuracy(_ ours: [Float], _ reference: [Float], _ what: String,
                            file: StaticString = #filePath, line: UInt = #line) -> (rms: Double, max: Double)
    {
        XCTAssertEqual(ours.count, reference.count, "\(what): sample count", file: file, line: line)
        let n = min(ours.count, reference.count)
        var sum = 0.0, largest = 0.0, energy = 0.0
        for i in 0..<n {
            let d = Double(ours[i]) - Double(reference[i])
            sum += d * d
            largest = max(largest, abs(d))
            energy += Double(reference[i]) * Double(reference[i])
        }
        let rms = n > 0 ? (sum / Double(n)).squareRoot() : 0
        XCTAssertLessThan(rms, Self.rmsLimit, "\(what): RMS difference", file: file, line: line)
        XCTAssertLessThanOrEqual(largest, Self.maxLimit, "\(what): largest difference", file: file, line: line)
        // Not silence: the comparison means something.
        XCTAssertGreaterThan(n > 0 ? (energy / Double(n)).squareRoot() : 0, 0.01, "\(what): signal RMS", file: file, line: line)
        return (rms, largest)
    }

    /// ffmpeg's float decode of a layer I or II file, interleaved.
    func ffmpegDecode(_ path: String, layer: Int) throws -> [Float] {
        let bytes = try ffmpeg(["-c:a", layer == 1 ? "mp1float" : "mp2float", "-i", path, "-f", "f32le", "-"])
        return bytes.withUnsafeBytes { raw in
            (0..<bytes.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
    }

    struct Golden: Decodable {
        var channels: Int
        var frames: Int
        var f32leSHA256: String
        var stride: Int
        /// Doubles: JSONDecoder refuses a Float that the decimal does not give exactly.
        var probe: [Double]
    }

    static let mp3dec = fixturesDirectory + "/mp3dec/"
    static let goldens: [String: Golden] = {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: mp3dec + "layer1_goldens.json")) else { return [:] }
        return (try? JSONDecoder().decode([String: Golden].self, from: data)) ?? [:]
    }()

    static let layer1Fixtures = ["layer1_44k_stereo_384_crc.mp1", "layer1_48k_joint_192.mp1", "layer1_32k_mono_128.mp1",
                                 "layer1_lsf_22k_stereo_128.mp1", "layer1_mpeg25_11k_joint_64.mp1"]

    // MARK: Tests

    func testSlots() {
        XCTAssertEqual(MPEGLayer12.slots(layer: 1), 12)
        XCTAssertEqual(MPEGLayer12.slots(layer: 2), 36)
    }

    /// The fixtures are what their names say (so each test below covers what it claims).
    func testFixtureHeaders() throws {
        let expect: [String: (version: MPEGAudioHeader.Version, layer: Int, rate: Int, kbps: Int, mode: Int, crc: Bool)] = [
            "layer1_44k_stereo_384_crc.mp1": (.mpeg1, 1, 44100, 384, 0, true),
            "layer1_48k_joint_192.mp1": (.mpeg1, 1, 48000, 192, 1, false),
            "layer1_32k_mono_128.mp1": (.mpeg1, 1, 32000, 128, 3, false),
            "layer1_lsf_22k_stereo_128.mp1": (.mpeg2, 1, 22050, 128, 0, false),
            "layer1_mpeg25_11k_joint_64.mp1": (.mpeg25, 1, 11025, 64, 1, true),
        ]
        for (name, e) in expect {
            let bytes = try readWholeFile(Self.mp3dec + name)
            let h = try XCTUnwrap(bytes.withUnsafeBytes { Self.header($0) }, name)
            XCTAssertEqual(h.version, e.version, name)
            XCTAssertEqual(h.layer, e.layer, name)
            XCTAssertEqual(h.sampleRate, e.rate, name)
            XCTAssertEqual(h.bitRate, e.kbps * 1000, name)
            XCTAssertEqual(h.channelMode, e.mode, name)
            XCTAssertEqual(h.hasCRC, e.crc, name)
            if e.mode == 1 { XCTAssertEqual(h.modeExtension, e.rate == 48000 ? 1 : 2, name) }  // bound 8 or 12
        }
    }

    /// Every fixture against the committed probes of ffmpeg's float decode (works without ffmpeg).
    func testFixturesMatchGoldenProbes() throws {
        XCTAssertEqual(Self.goldens.count, 7)
        for (name, g) in Self.goldens.sorted(by: { $0.key < $1.key }) {
            let d = try decode(Self.mp3dec + name)
            XCTAssertEqual(d.channels, g.channels, name)
            XCTAssertEqual(d.pcm.count, g.frames * g.channels, name)
            let ours = (0..<g.probe.count).map { $0 * g.stride < d.pcm.count ? d.pcm[$0 * g.stride] : .nan }
            assertFullAccuracy(ours, g.probe.map { Float($0) }, name)
        }
    }

    /// Layer I fixtures (CRC, joint stereo with intensity bound 8, mono, MPEG-2 LSF, MPEG-2.5
    /// joint stereo with bound 12 and CRC) against ffmpeg's mp1float.
    func testLayer1MatchesFFmpeg() throws {
        _ = try requireFFmpeg()
        for name in Self.layer1Fixtures {
            let path = Self.mp3dec + name
            let d = try decode(path)
            let r = assertFullAccuracy(d.pcm, try ffmpegDecode(path, layer: 1), name)
            XCTAssertLessThan(r.rms, Self.rmsLimit / 4, "\(name): float decoders agree far inside the limit")
        }
    }

    /// The same files through the codec registry's decoder (MPEGDecoder: MPEGLayer12 and the
    /// library's synthesis filter bank), packets as AudioFile hands them over: ffmpeg's frame
    /// count, and full accuracy against the committed probes.
    func testRegistryDecoderMatchesGoldenProbes() throws {
        for name in Self.layer1Fixtures + ["../mpeg/twolame_layer2.mp2"] {
            let g = try XCTUnwrap(Self.goldens[name], name)
            let file = try AudioFile(path: Self.mp3dec + name)
            let format = try XCTUnwrap(try file.properties.dataFormat, name)
            let decoder = try CodecRegistry.makeDecoder(for: format, output: .float32)
            let (bytes, frames) = try decodePackets(of: file, with: decoder, as: .float32, perCall: 5)
            XCTAssertEqual(frames, g.frames, name)
            let pcm = bytes.withUnsafeBytes { raw in
                (0..<bytes.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
            }
            let ours = (0..<g.probe.count).map { $0 * g.stride < pcm.count ? pcm[$0 * g.stride] : .nan }
            assertFullAccuracy(ours, g.probe.map { Float($0) }, "\(name) through CodecRegistry")
        }
    }

    /// The committed layer II files (twolame and ffmpeg's encoders, 48 and 44.1 kHz stereo).
    func testLayer2FixturesMatchFFmpeg() throws {
        _ = try requireFFmpeg()
        for name in ["twolame_layer2.mp2", "ffmpeg_layer2.mp2"] {
            let path = fixturesDirectory + "/mpeg/" + name
            assertFullAccuracy(try decode(path).pcm, try ffmpegDecode(path, layer: 2), name)
        }
    }

    /// twolame encodes a second of tones and noise in each mode, at rates and bit rates that
    /// pick each of the five allocation tables, with and without CRC; each decodes to
    /// ffmpeg's mp2float output within full accuracy.
    func testLayer2TwolameMatrixMatchesFFmpeg() throws {
        _ = try requireFFmpeg()
        let twolame = try requireTool("twolame")
        let dir = try temporaryDirectory()
        // (rate, channels, mode, kbit/s, CRC, expected table): B.2a 0, B.2b 1, B.2c 2, B.2d 3, LSF 4.
        let cases: [(Int, Int, String, Int, Bool, Int)] = [
            (48000, 2, "s", 192, true, 0),    // 96 per channel at 48 kHz: B.2a
            (44100, 2, "j", 128, false, 0),   // 64 per channel: B.2a, intensity stereo
            (44100, 2, "d", 256, true, 1),    // 128 per channel: B.2b, dual channel
            (32000, 1, "m", 192, false, 1),   // B.2b at 32 kHz
            (48000, 1, "m", 48, false, 2),    // 48 per channel: B.2c
            (44100, 2, "j", 64, true, 2),     // 32 per channel: B.2c, intensity stereo
            (32000, 1, "m", 32, true, 3),     // B.2d
            (32000, 2, "s", 96, false, 3),    // 48 per channel at 32 kHz: B.2d
            (24000, 2, "j", 96, true, 4),     // MPEG-2 LSF
            (22050, 2, "s", 160, false, 4),
            (16000, 1, "m", 32, true, 4),
        ]
        var tablesSeen = Set<Int>(), modesSeen = Set<Int>(), boundsSeen = Set<Int>()
        for (i, c) in cases.enumerated() {
            let (rate, channels, mode, kbps, crc, table) = c
            let wav = "\(dir)/in\(i).wav", mp2 = "\(dir)/out\(i).mp2"
            let expr = channels == 1 ? "0.4*sin(2*PI*523*t)+0.1*sin(2*PI*3100*t)+0.05*(random(0)-0.5)"
                : "0.4*sin(2*PI*440*t)+0.05*(random(0)-0.5)|0.3*sin(2*PI*660*t)+0.2*sin(2*PI*4100*t)+0.05*(random(1)-0.5)"
            try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=\(expr):s=\(rate):d=1", "-c:a", "pcm_s16le", wav])
            var args = ["-b", "\(kbps)", "-m", mode, "--quiet"]
            if crc { args.append("-p") }
            _ = try runTool(twolame, args + [wav, mp2])
            let what = "twolame \(rate) Hz -m \(mode) -b \(kbps)\(crc ? " -p" : "")"
            let d = try decode(mp2)
            let h = try XCTUnwrap(d.headers.first, what)
            XCTAssertEqual(h.hasCRC, crc, what)
            XCTAssertEqual(MPEGLayer12.allocationTableIndex(h), table, what)
            tablesSeen.insert(table)
            for h in d.headers { modesSeen.insert(h.channelMode); if h.channelMode == 1 { boundsSeen.insert(h.modeExtension) } }
            assertFullAccuracy(d.pcm, try ffmpegDecode(mp2, layer: 2), what)
        }
        XCTAssertEqual(tablesSeen, [0, 1, 2, 3, 4])
        XCTAssertEqual(modesSeen, [0, 1, 2, 3])
        XCTAssertFalse(boundsSeen.isEmpty, "joint stereo frames")
    }

    // MARK: Damaged input

    /// The first frame of a file, as bytes.
    func firstFrame(_ path: String) throws -> [UInt8] {
        let bytes = try readWholeFile(path)
        let h = try XCTUnwrap(bytes.withUnsafeBytes { Self.header($0) })
        return Array(bytes.prefix(h.frameLength))
    }

    func assertBadData(_ frame: [UInt8], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        var out = [Float](repeating: 0, count: 2 * 36 * 32)
        let h = frame.withUnsafeBytes { Self.header($0) }!
        do {
            try frame.withUnsafeBytes { raw in
                try out.withUnsafeMutableBufferPointer { o in try MPEGLayer12.decode(raw, header: h, into: o.baseAddress!) }
            }
            XCTFail("\(what): decoded", file: file, line: line)
        } catch {
            XCTAssertEqual((error as? AudioError)?.code, .codecBadData, what, file: file, line: line)
        }
    }

    /// A flipped bit in the allocation (layer I) or in the allocation or scfsi (layer II),
    /// or in the stored CRC, fails the check; flips in the samples are not covered and decode.
    func testCRCMismatchThrowsBadData() throws {
        let frame = try firstFrame(Self.mp3dec + "layer1_44k_stereo_384_crc.mp1")
        var out = [Float](repeating: 0, count: 2 * 12 * 32)
        let h = frame.withUnsafeBytes { Self.header($0) }!
        XCTAssertTrue(h.hasCRC)
        try frame.withUnsafeBytes { raw in try MPEGLayer12.decode(raw, header: h, into: &out) }
        for (byte, bit) in [(6, 0), (10, 3), (37, 7), (4, 2), (5, 0)] {
            var bad = frame
            bad[byte] ^= 1 << bit
            assertBadData(bad, "layer I, byte \(byte) bit \(bit)")
        }
        // Allocation ends at bit 48 + 4 × 64 = 304 (no joint stereo); byte 40 on holds scale factors and samples.
        var sampleFlip = frame
        sampleFlip[200] ^= 0x10
        try sampleFlip.withUnsafeBytes { raw in try MPEGLayer12.decode(raw, header: h, into: &out) }
    }

    /// Layer II with CRC: twolame -p, a bit flipped in the allocation and one in the scfsi.
    func testLayer2CRCMismatchThrowsBadData() throws {
        let twolame = try requireTool("twolame")
        _ = try requireFFmpeg()
        let dir = try temporaryDirectory()
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*3000*t):s=48000:d=0.2", "-c:a", "pcm_s16le", "\(dir)/in.wav"])
        _ = try runTool(twolame, ["-b", "192", "-p", "--quiet", "\(dir)/in.wav", "\(dir)/out.mp2"])
        let frame = try firstFrame("\(dir)/out.mp2")
        let h = frame.withUnsafeBytes { Self.header($0) }!
        XCTAssertTrue(h.hasCRC)
        var out = [Float](repeating: 0, count: 2 * 36 * 32)
        try frame.withUnsafeBytes { raw in try MPEGLayer12.decode(raw, header: h, into: &out) }
        // Table B.2a: allocation of 27 subbands × 2 channels takes 4·3·2 + 4·8·2 + 3·12·2 + 2·4·2 = 176 bits (bytes 6–27).
        for (byte, bit) in [(6, 7), (20, 1), (4, 0)] {
            var bad = frame
            bad[byte] ^= 1 << bit
            assertBadData(bad, "layer II, byte \(byte) bit \(bit)")
        }
    }

    /// Frames cut short throw 'bada'; random bytes behind valid headers of every version,
    /// layer, mode and rate decode or throw, and never trap or write outside the samples.
    func testTruncatedAndRandomFramesNeverTrap() throws {
        for name in Self.layer1Fixtures {
            let frame = try firstFrame(Self.mp3dec + name)
            for cut in [4, 5, 6, 7, 20, frame.count / 2, frame.count - 1] {
                assertBadData(Array(frame.prefix(cut)), "\(name) cut to \(cut)")
            }
        }
        var rng = SeededGenerator(seed: 12)
        let guardValue: Float = 12345
        var decoded = 0, refused = 0
        for _ in 0..<3000 {
            // sync, version (0 2.5, 2 MPEG-2, 3 MPEG-1), layer (3 I, 2 II), protection, bit rate 1–14, rate 0–2, padding, mode, extension.
            let version = [0, 2, 3][Int.random(in: 0..<3, using: &rng)]
            let layerBits = UInt32.random(in: 2...3, using: &rng)
            var word: UInt32 = 0xFFE0_0000 | UInt32(version) << 19 | layerBits << 17
            word |= UInt32.random(in: 0...1, using: &rng) << 16 | UInt32.random(in: 1...14, using: &rng) << 12
            word |= UInt32.random(in: 0...2, using: &rng) << 10 | UInt32.random(in: 0...1, using: &rng) << 9
            word |= UInt32.random(in: 0...3, using: &rng) << 6 | UInt32.random(in: 0...3, using: &rng) << 4
            let h = try XCTUnwrap(MPEGAudioHeader(word))
            // Mostly the full length; sometimes short, sometimes longer (ancillary data).
            let length = max(0, h.frameLength + [0, 0, 0, -1, -h.frameLength / 2, 17][Int.random(in: 0..<6, using: &rng)])
            var frame = rng.bytes(length)
            for k in 0..<min(4, length) { frame[k] = UInt8(truncatingIfNeeded: word >> (24 - 8 * k)) }
            // Sparse allocations now and then, so that sample data is read far into the frame.
            if Bool.random(using: &rng) { for k in 4..<min(length, 30) { frame[k] &= 0x11 } }
            let count = h.channels * MPEGLayer12.slots(layer: h.layer) * 32
            var out = [Float](repeating: guardValue, count: count + 64)
            do {
                try frame.withUnsafeBytes { raw in
                    try out.withUnsafeMutableBufferPointer { o in try MPEGLayer12.decode(raw, header: h, into: o.baseAddress!) }
                }
                decoded += 1
                XCTAssertTrue(out[..<count].allSatisfy { $0.isFinite && abs($0) <= 4.01 }, "samples within 2 × scale factor 0")
            } catch {
                XCTAssertEqual((error as? AudioError)?.code, .codecBadData)
                refused += 1
            }
            XCTAssertTrue(out[count...].allSatisfy { $0 == guardValue }, "nothing written past the frame's samples")
        }
        XCTAssertGreaterThan(decoded, 100)
        XCTAssertGreaterThan(refused, 100)
    }

    /// Intensity stereo (joint stereo, bound 8): above the bound both channels carry the
    /// same samples up to their scale factors; below it they differ.
    func testIntensityStereoSharesSamplesAboveTheBound() throws {
        let frame = try firstFrame(Self.mp3dec + "layer1_48k_joint_192.mp1")
        let h = frame.withUnsafeBytes { Self.header($0) }!
        XCTAssertEqual(h.channelMode, 1)
        var s = [Float](repeating: 0, count: 2 * 12 * 32)
        try frame.withUnsafeBytes { raw in try MPEGLayer12.decode(raw, header: h, into: &s) }
        var sharedBands = 0
        for sb in 8..<32 {
            let l = (0..<12).map { s[$0 * 32 + sb] }, r = (0..<12).map { s[(12 + $0) * 32 + sb] }
            guard let k = l.indices.first(where: { l[$0] != 0 }) else { XCTAssertTrue(r.allSatisfy { $0 == 0 }); continue }
            let ratio = r[k] / l[k]
            for i in 0..<12 { XCTAssertEqual(r[i], l[i] * ratio, accuracy: 1e-5 * max(abs(r[i]), 1e-3), "subband \(sb)") }
            sharedBands += 1
        }
        XCTAssertGreaterThan(sharedBands, 3)
    }
}

import Tonearm
import TonearmTestSupport
import XCTest

/// What the MPEG decoder does with damaged frames and after a seek: it mutes and counts
/// what it cannot decode, never throws or makes noise, and a preroll of
/// `seekPrerollPackets` frames makes the frames after a seek exact.
final class MPEGConcealmentTests: XCTestCase {
    struct Stream {
        let format: StreamDescription
        var packets: [[UInt8]]
    }

    func stream(_ name: String) throws -> Stream {
        let file = try AudioFile(path: fixturesDirectory + "/mpeg/" + name)
        let count = Int(try file.properties.audioDataPacketCount ?? 0)
        var packets: [[UInt8]] = []
        for i in 0..<count {
            let (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
            packets.append(try data.withBytes { Array($0) })
        }
        return Stream(format: try file.properties.dataFormat!, packets: packets)
    }

    /// Decodes packets one by one; returns the interleaved Float samples of each.
    func decode(_ packets: ArraySlice<[UInt8]>, with decoder: AudioDecoder) throws -> [[Float]] {
        let channels = Int(decoder.outputFormat.channelsPerFrame)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: decoder.outputFormat.sampleRate, channels: channels,
                               interleaved: true, frameCapacity: decoder.maximumFramesPerPacket)
        return try packets.map { p in
            buffer.frameLength = 0
            try p.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
            return buffer.withUnsafeMutableSamples(Float.self) { Array($0.prefix(buffer.frameLength * channels)) }
        }
    }

    func peak(_ frames: [[Float]]) -> Float { frames.joined().map { abs($0) }.max() ?? 0 }

    func testDamagedFramesAreMutedCountedAndTheStreamRecovers() throws {
        let s = try stream("lame_cbr128.mp3")
        let clean = try decode(s.packets[...], with: try CodecRegistry.makeDecoder(for: s.format))
        var damaged = s.packets
        for i in 4..<36 { damaged[5][i] = 0xFF }  // side information: big_values 511 > 288
        damaged[12][1] = 0xFF  // a layer I header in a layer III stream
        damaged[18] = Array(damaged[18].prefix(3))  // cut short
        let decoder = try CodecRegistry.makeDecoder(for: s.format)
        let out = try decode(damaged[...], with: decoder)
        XCTAssertEqual(decoder.concealedPackets, 3)
        XCTAssertEqual(out.map(\.count), clean.map(\.count), "every frame keeps its length")
        XCTAssertEqual(Array(out[..<5]), Array(clean[..<5]), "frames before the damage are untouched")
        // Muted frames fade out, no burst: an IMDCT half without its partner keeps some
        // time-domain aliasing, which may overshoot the clean peak by a few percent.
        XCTAssertLessThanOrEqual(peak(out), peak(clean) * 1.1)
        // The muted frame's second granule gets nothing new: its last slots, whose filter
        // history lies wholly in that granule, are exactly silent.
        XCTAssertEqual(peak([Array(out[5].suffix(2 * 64))]), 0)
        // Once the reservoir has refilled, the output is the clean stream's again.
        let settled = 18 + decoder.seekPrerollPackets + 1
        XCTAssertLessThan(settled, s.packets.count)
        XCTAssertEqual(Array(out[settled...]), Array(clean[settled...]))
    }

    func testCRCMismatchConcealsTheFrame() throws {
        let s = try stream("lame_crc.mp3")
        let intact = try CodecRegistry.makeDecoder(for: s.format)
        let clean = try decode(s.packets[...], with: intact)
        XCTAssertEqual(intact.concealedPackets, 0, "every CRC of the lame -p fixture matches")
        var damaged = s.packets
        XCTAssertEqual(damaged[7][1] & 1, 0, "the frames carry a CRC")
        damaged[7][6 + 10] ^= 0x01  // a bit of the side information
        let decoder = try CodecRegistry.makeDecoder(for: s.format)
        let out = try decode(damaged[...], with: decoder)
        XCTAssertEqual(decoder.concealedPackets, 1)
        XCTAssertEqual(Array(out[..<7]), Array(clean[..<7]))
        XCTAssertLessThanOrEqual(peak(out), peak(clean) * 1.1)
    }

    /// After a reset (a seek), decoding `seekPrerollPackets` frames before the target and
    /// dropping them gives the target frames exactly as a decode from the start: the
    /// reservoir, the IMDCT overlap and the filter bank are all refilled.
    func testPrerollMakesSeeksExact() throws {
        // The reservoir's reach (511 bytes, 255 in LSF) over the main data of the stream's
        // smallest frame (bit rate index 1, with a CRC), plus one frame for the overlap:
        // 44.1 kHz stereo 104 − 6 − 32 = 66 bytes → 8 + 1; 22.05 kHz mono 26 − 6 − 9 = 11 →
        // 24 + 1; 11.025 kHz mono 52 − 6 − 9 = 37 → 7 + 1. Layer II: the filter bank's history.
        let prerolls = ["lame_cbr128.mp3": 9, "lame_vbr_v4.mp3": 9, "lame_mpeg2_22k.mp3": 25, "lame_mpeg25_11k.mp3": 8,
                        "twolame_layer2.mp2": 1]
        for (name, expected) in prerolls.sorted(by: { $0.key < $1.key }) {
            let s = try stream(name)
            let decoder = try CodecRegistry.makeDecoder(for: s.format)
            let clean = try decode(s.packets[...], with: decoder)
            let preroll = decoder.seekPrerollPackets
            XCTAssertEqual(preroll, expected, name)
            for target in [preroll, s.packets.count / 2, s.packets.count - 3] where target >= preroll {
                decoder.reset()
                let out = try decode(s.packets[(target - preroll)...], with: decoder)
                XCTAssertEqual(Array(out[preroll...]), Array(clean[target...]), "\(name) from packet \(target)")
            }
            // Without the preroll the first frames are muted, not noise.
            decoder.reset()
            let cold = try decode(s.packets[(s.packets.count / 2)...], with: decoder)
            XCTAssertLessThanOrEqual(peak(cold), peak(clean) * 1.1, name)
            XCTAssertEqual(decoder.concealedPackets, 0, "\(name): a cold start is not damage")
        }
    }

    /// Random damage never traps, and what is concealed is exactly what the rules say: a
    /// packet cut before its side information ends (4 + 32 bytes in this MPEG-1 stereo
    /// stream without CRC) or whose header is not the stream's (layer II here) is concealed
    /// and counted; random bytes in the main data are decoded as they are, uncounted. Every
    /// packet gives its 1152 frames either way.
    func testRandomBytesNeverTrap() throws {
        let s = try stream("lame_cbr128.mp3")
        var rng = SeededGenerator(seed: 5)
        let decoder = try CodecRegistry.makeDecoder(for: s.format)
        XCTAssertEqual(s.format.channelsPerFrame, 2)
        var frames = 0, expectedConcealed = 0, cutShort = 0
        for round in 0..<200 {
            var p = s.packets[round % s.packets.count]
            let n = Int.random(in: 0..<p.count, using: &rng)
            for _ in 0..<n / 8 + 1 { p[Int.random(in: 36..<p.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            var damaged = false
            if round % 3 == 0 {
                p = Array(p.prefix(n))
                damaged = n < 36
            }
            if round % 10 == 7 && p.count >= 2 {
                p[1] = p[1] & 0xF9 | 0x04  // layer II
                damaged = true
            }
            if damaged { expectedConcealed += 1 }
            if round % 3 == 0 && n < 36 { cutShort += 1 }
            let out = try decode([p][...], with: decoder)
            XCTAssertEqual(out.map(\.count), [2 * 1152], "round \(round): one packet, 1152 stereo frames")
            frames += out.joined().count / 2
            XCTAssertEqual(decoder.concealedPackets, expectedConcealed, "round \(round)")
        }
        XCTAssertEqual(frames, 200 * 1152)
        // 200 rounds with this seed: 67 cut, 3 of them before the side information ends;
        // 20 relabelled as layer II, one of which was also cut short.
        XCTAssertEqual(cutShort, 3)
        XCTAssertEqual(expectedConcealed, 22)
        XCTAssertEqual(decoder.concealedPackets, 22)
    }
}

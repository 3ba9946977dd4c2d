import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// The ISO/IEC 11172-4 and 13818-4 compliance bitstreams of layers I, II and III
/// (`../shared/corpus/mpeg-compliance`, as lieff/minimp3 distributes them, with the
/// reference decoder's output as s16le `.pcm`).
///
/// The rule (the corpus README, minimp3's): PSNR = 10·log10(32767² / MSE) ≥ 96 dB over the
/// common length; layer III output as long as the reference or longer by exactly 1152 or
/// 2304 samples; layer I and II references are padded, so only the common length counts.
///
/// Each `.bit` goes through Tonearm's public path, unhinted: `AudioFile(path:)` (the probe
/// and the framed parser's scan) and the MPEG decoder, packet by packet. The decoder's Float32
/// output is scaled by 32768 (the reference decoder's scale) and clipped to Int16's range, and
/// compared with the reference unrounded, so the figure measures the decoder rather than
/// our own rounding.
///
/// The reference decoder writes each frame with the frame's own channel count
/// (`l3-he_mode.bit` switches between mono and stereo), while Tonearm keeps the stream's
/// declared count (the first frame's) and mixes the others to it (``MPEGDecoder``): for such
/// a stream the reference is brought to the declared count frame by frame the same way
/// (a stereo frame's two channels averaged, a mono frame repeated).
final class MPEGComplianceTests: XCTestCase {
    struct Result {
        var name: String
        var psnr: Double
        var ours: Int
        var reference: Int
        var passes: Bool
    }

    /// Decodes one vector and measures it against its reference.
    static func measure(_ bitPath: String) throws -> Result {
        let name = String(bitPath.split(separator: "/").last!.dropLast(4))
        let pcmPath = String(bitPath.dropLast(4)) + ".pcm"
        let file = try AudioFile(path: bitPath)
        let format = try XCTUnwrap(file.properties.dataFormat)
        let decoder = try CodecRegistry.makeDecoder(for: format, output: .float32)
        let channels = Int(decoder.outputFormat.channelsPerFrame)
        let packets = Int(try file.properties.audioDataPacketCount ?? 0)
        // Each packet's channel count, as the reference decoder wrote it.
        var frameChannels: [Int] = []
        /// The leading frames whose reservoir bytes the stream never held (`sin1k0db` begins
        /// with two): Tonearm decodes them to silence, as every packet gives its frames; the
        /// reference decoder writes nothing for them, so they are left out of the comparison.
        var missingReservoir = 0, reservoir = 0
        frameChannels.reserveCapacity(packets)
        var ours: [Float] = []
        let perCall = 64
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: format.sampleRate, channels: channels, interleaved: true,
                               frameCapacity: perCall * decoder.maximumFramesPerPacket)
        var first = 0
        while first < packets {
            let count = min(perCall, packets - first)
            let (data, descriptions) = try file.readPacketData(startingAt: Int64(first), count: count)
            for d in descriptions ?? [] {
                let at = Int(d.startOffset)
                frameChannels.append(data[at + 3] >> 6 == 3 ? 1 : 2)
                // Layer III: whether the bit reservoir holds the bytes main_data_begin points
                // back to, while no frame has been decoded yet.
                guard format.formatID == .mpegLayer3, missingReservoir == frameChannels.count - 1 else { continue }
                let mpeg1 = data[at + 1] >> 3 & 3 == 3, crc = data[at + 1] & 1 == 0, mono = data[at + 3] >> 6 == 3
                let side = at + 4 + (crc ? 2 : 0)
                let mainDataBegin = mpeg1 ? Int(data[side]) << 1 | Int(data[side + 1]) >> 7 : Int(data[side])
                if mainDataBegin > reservoir { missingReservoir += 1 }
                reservoir += Int(d.dataByteSize) - (side - at) - (mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17))
            }
            buffer.frameLength = 0
            try data.withBytes { (raw) throws(AudioError) in
                try decoder.decode(raw, packetCount: count, descriptions: descriptions, into: buffer)
            }
            let planes = (0..<channels).map { buffer.floatSamples(channel: $0) }
            for i in 0..<buffer.frameLength {
                for c in 0..<channels { ours.append(planes[c][i]) }
            }
            first += count
        }

        let raw = try readFile(pcmPath)
        var reference = raw.withUnsafeBytes { b in
            (0..<raw.count / 2).map { Float(Int16(littleEndian: b.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self))) }
        }
        let samplesPerFrame = decoder.maximumFramesPerPacket
        ours.removeFirst(min(ours.count, missingReservoir * samplesPerFrame * channels))
        frameChannels.removeFirst(missingReservoir)
        if frameChannels.contains(where: { $0 != channels }) {
            // Per frame, the reference's own channel count, brought to the declared one.
            var mixed: [Float] = []
            var at = 0
            for n in frameChannels where at < reference.count {
                let take = min(n * samplesPerFrame, reference.count - at)
                let frame = reference[at..<at + take]
                at += take
                if n == channels {
                    mixed += frame
                } else if n == 2 {
                    var i = frame.startIndex
                    while i + 1 < frame.endIndex { mixed.append((frame[i] + frame[i + 1]) / 2); i += 2 }
                } else {
                    for v in frame { mixed.append(v); mixed.append(v) }
                }
            }
            reference = mixed
        }
        let common = min(ours.count, reference.count)
        var sum = 0.0
        for i in 0..<common {
            let v = Double(min(32767, max(-32768, ours[i] * 32768)))
            let d = v - Double(reference[i])
            sum += d * d
        }
        let mse = common > 0 ? sum / Double(common) : .infinity
        let psnr = mse == 0 ? 999 : 10 * log10(32767.0 * 32767.0 / mse)
        // Samples (all channels), as the rule counts them.
        let excess = ours.count - reference.count
        let layer3 = format.formatID == .mpegLayer3
        let lengthOK = layer3 ? [0, 1152, 2304].contains(excess) : common > 0
        return Result(name: name, psnr: psnr, ours: ours.count, reference: reference.count,
                      passes: psnr >= 96 && lengthOK && common > 0)
    }

    /// Measures the named vectors (all when `names` is nil), prints a table, and asserts
    /// that each passes.
    func check(_ names: [String]? = nil) throws {
        let folder = try requireCorpus("mpeg-compliance")
        let all = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".bit") }.sorted()
        if names == nil { XCTAssertEqual(all.count, 34, "the corpus holds 34 compliance bitstreams") }
        let chosen = names.map { $0.map { $0 + ".bit" } } ?? all
        var table = "vector                   PSNR dB    samples   reference\n"
        var passed = 0
        for name in chosen {
            do {
                let r = try Self.measure(folder + "/" + name)
                table += name.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(format: " %7.2f %10d %11d", r.psnr, r.ours, r.reference) + (r.passes ? "" : "  FAIL") + "\n"
                XCTAssertTrue(r.passes, "\(name): PSNR \(r.psnr) dB, \(r.ours) samples for the reference's \(r.reference)")
                if r.passes { passed += 1 }
            } catch {
                table += name.padding(toLength: 24, withPad: " ", startingAt: 0) + " error \(error)\n"
                XCTFail("\(name): \(error)")
            }
        }
        print(table + "\(passed) of \(chosen.count) pass")
    }

    func testEveryComplianceBitstreamPasses() throws { try check() }

    /// The push path (AudioFileStream, unhinted, fed in the drip-feed patterns, one byte at
    /// a time included) hands out the packets the random-access scan finds.
    func assertPushPathAgrees(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let path = try requireCorpus("mpeg-compliance") + "/" + name + ".bit"
        let bytes = try readFile(path)
        let sizes = try XCTUnwrap(try AudioFile(path: path).properties.packetTable).map { Int($0.dataByteSize) }
        for pattern in FeedPattern.standard {
            let r = feed(bytes, pattern: pattern)
            XCTAssertNil(r.error, "\(name), \(pattern)", file: file, line: line)
            XCTAssertEqual(r.packetSizes, sizes, "\(name), \(pattern)", file: file, line: line)
        }
    }

    /// Mono, dual-channel, stereo and joint-stereo frames in one stream: every frame is
    /// decoded (the parser once dropped the frames whose mode differed from the first).
    func testChannelModeChanges() throws {
        try check(["l3-he_mode"])
        try assertPushPathAgrees("l3-he_mode")
    }

    /// Free format (bit rate index 0): the frame length is learnt from the distance
    /// between the first headers.
    func testFreeFormat() throws {
        try check(["l3-he_free"])
        try assertPushPathAgrees("l3-he_free")
    }

    /// Start and stop blocks with the mixed-block flag set: their two lowest subbands use
    /// the normal window.
    func testMixedFlagOnStartAndStopBlocks() throws { try check(["l3-si_block"]) }

    /// MPEG-2 LSF intensity stereo, with long and short blocks: illegal positions fall back
    /// to mid/side or plain stereo.
    func testLSFIntensityStereo() throws { try check(["l3-test45", "l3-test46"]) }

    /// A stream that begins with zeros and a cut frame before its first whole frame.
    func testJunkBeforeTheFirstFrame() throws {
        try check(["l3-sin1k0db"])
        try assertPushPathAgrees("l3-sin1k0db")
    }
}

import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmFormats
import TonearmTestSupport

/// The Opus decoder against libopus's float decoder (ffmpeg -request_sample_fmt flt -c:a
/// libopus), on the fixtures of make-opus.sh.
final class OpusDecoderTests: XCTestCase {
    struct Fixture {
        var name: String
        /// The modes its packets use (from their TOC bytes).
        var modes: Set<String>
        /// Frames per packet code (§3.2) seen in the file.
        var codes: Set<Int>
    }

    static let fixtures: [Fixture] = [
        Fixture(name: "celt-2.5ms-stereo-cbr", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-5ms-mono-vbr", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-10ms-stereo-vbr", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-20ms-stereo-cbr-low", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-20ms-stereo-vbr-high", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-20ms-mono-low", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-20ms-transients-low", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-20ms-transients-high", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-40ms-stereo-cbr", modes: ["celt"], codes: [3]),
        Fixture(name: "celt-60ms-mono-cvbr", modes: ["celt"], codes: [3]),
        Fixture(name: "celt-5.1-family1", modes: ["celt"], codes: [0]),
        Fixture(name: "celt-5.1-family255", modes: ["celt"], codes: [0]),
        Fixture(name: "opusenc-celt-2.5ms-mono", modes: ["celt"], codes: [0]),
        Fixture(name: "silk-nb", modes: ["silk"], codes: [0]),
        Fixture(name: "silk-wb", modes: ["silk"], codes: [0]),
        Fixture(name: "silk-lbrr", modes: ["silk"], codes: [0]),
        Fixture(name: "hybrid-swb", modes: ["hybrid"], codes: [0]),
        Fixture(name: "hybrid-60ms", modes: ["hybrid"], codes: [2, 3]),
        Fixture(name: "mixed-modes", modes: ["hybrid", "celt"], codes: [0]),
    ]

    static func path(_ name: String) -> String { "\(fixturesDirectory)/opus/\(name).opus" }

    /// The packets' TOC modes and framing codes, as the script's comments claim.
    func testFixtureModes() throws {
        for f in Self.fixtures {
            let file = try AudioFile(path: Self.path(f.name))
            let n = Int(try file.properties.audioDataPacketCount ?? 0)
            let (data, descriptions) = try file.readPacketData(startingAt: 0, count: n)
            var modes = Set<String>(), codes = Set<Int>()
            for d in descriptions ?? [] where d.dataByteSize > 0 {
                let toc = data[Int(d.startOffset)]
                let (mode, _, _) = OpusPacket.configuration(toc)
                modes.insert(mode == .silk ? "silk" : mode == .hybrid ? "hybrid" : "celt")
                codes.insert(Int(toc & 3))
            }
            XCTAssertEqual(modes, f.modes, f.name)
            XCTAssertEqual(codes, f.codes, f.name)
        }
    }

    /// libopus's float output, interleaved, in the decoder's channel order: ffmpeg's libopus
    /// wrapper reorders 3 to 8 channels from Vorbis order to its own, for mapping family 1
    /// and (seen with ffmpeg 5.1) family 255 too; this undoes it.
    static func oracle(_ name: String, channels: Int, family1: Bool = true) throws -> [Float] {
        let bytes = try ffmpeg(["-request_sample_fmt", "flt", "-c:a", "libopus", "-i", path(name), "-f", "f32le", "-"])
        var samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        if family1 && channels > 2 {
            // ffmpeg's order for Vorbis-order channel v is the inverse of this table.
            let ffmpegFromVorbis: [Int: [Int]] = [3: [0, 2, 1], 4: [0, 1, 2, 3], 5: [0, 2, 1, 3, 4], 6: [0, 2, 1, 5, 3, 4],
                                                  7: [0, 2, 1, 6, 5, 3, 4], 8: [0, 2, 1, 7, 5, 6, 3, 4]]
            if let order = ffmpegFromVorbis[channels] {
                // order[i] = the Vorbis channel that ffmpeg's channel i is.
                var out = samples
                for f in 0..<(samples.count / channels) {
                    for i in 0..<channels { out[f * channels + order[i]] = samples[f * channels + i] }
                }
                samples = out
            }
        }
        return samples
    }

    struct Accuracy: CustomStringConvertible {
        var rms: Double
        var maxDiff: Double
        var compare: OpusCompareResult?
        var description: String {
            String(format: "rms %.3g (goal < %.3g), max %.3g (goal ≤ %.3g), ", rms, OpusDecoderTests.rmsGoal, maxDiff,
                   OpusDecoderTests.maxGoal) + (compare?.description ?? "opus_compare n/a")
        }
    }
    static let rmsGoal: Double = 1.0 / 32768 / 12.0.squareRoot()
    static let maxGoal: Double = 1.0 / 16384

    static func accuracy(_ ours: [Float], _ reference: [Float], channels: Int) -> Accuracy {
        var sum = 0.0, worst = 0.0
        for i in 0..<min(ours.count, reference.count) {
            let d = Double(ours[i]) - Double(reference[i])
            sum += d * d
            worst = max(worst, abs(d))
        }
        let rms = (sum / Double(max(1, ours.count))).squareRoot()
        // opus_compare takes mono or stereo: compare channel pairs (or single channels) and keep the worst.
        var worstCompare: OpusCompareResult?
        var c = 0
        while c < channels {
            let width = channels - c >= 2 ? 2 : 1
            let frames = ours.count / channels
            var a = [Float](), b = [Float]()
            a.reserveCapacity(frames * width); b.reserveCapacity(frames * width)
            for f in 0..<frames {
                for k in 0..<width {
                    a.append(reference[f * channels + c + k])
                    b.append(ours[f * channels + c + k])
                }
            }
            if let r = OpusCompare.compare(reference: a, tested: b, channels: width),
               worstCompare == nil || r.quality < worstCompare!.quality
            {
                worstCompare = r
            }
            c += width
        }
        return Accuracy(rms: rms, maxDiff: worst, compare: worstCompare)
    }

    /// Every fixture through AudioFile/ExtAudioFile (pre-skip and end trimming by the Ogg
    /// layer) against the oracle: the same length, the RMS and peak goals, opus_compare.
    func testFixturesAgainstLibopus() throws {
        _ = try requireFFmpeg()
        var report: [String] = []
        for f in Self.fixtures {
            let path = Self.path(f.name)
            let file = try AudioFile(path: path)
            let format = try file.dataFormat
            let channels = Int(format.channelsPerFrame)
            let reference = try Self.oracle(f.name, channels: channels)
            let ours = try decodeInterleaved(path, as: Float.self)
            let a = Self.accuracy(ours, reference, channels: channels)
            let line = "\(f.name): \(ours.count / channels) frames (oracle \(reference.count / channels)), \(a)"
            report.append(line)
            XCTAssertEqual(ours.count, reference.count, "\(f.name): length")
            XCTAssertLessThan(a.rms, Self.rmsGoal, line)
            XCTAssertLessThanOrEqual(a.maxDiff, Self.maxGoal, line)
            XCTAssertTrue(a.compare?.passes ?? false, line)
        }
        print("Opus accuracy against libopus (float):\n  " + report.joined(separator: "\n  "))
    }

    /// The decoder called directly with every output format and both layouts: the same
    /// samples (Int16 and Int32 are the Float output converted).
    func testOutputFormats() throws {
        let path = Self.path("celt-20ms-stereo-vbr-high")
        let file = try AudioFile(path: path)
        let p = try file.properties
        var outputs: [PCMBuffer.CommonFormat: [UInt8]] = [:]
        for common in [PCMBuffer.CommonFormat.float32, .int16, .int32] {
            for interleaved in [true, false] {
                let d = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie, output: common)
                XCTAssertEqual(d.backend, .native)
                let (pcm, frames) = try decodePackets(of: file, with: d, as: common, interleaved: interleaved, perCall: 7)
                XCTAssertEqual(frames, Int(p.audioDataPacketCount ?? 0) * 960)
                if let previous = outputs[common] { XCTAssertEqual(previous, pcm, "\(common) interleaved \(interleaved)") }
                outputs[common] = pcm
            }
        }
    }

    /// The fixtures reach CELT's tools: transient frames with anti-collapse, the post-filter,
    /// intensity and dual stereo (the counts per fixture are printed).
    func testFixturesExerciseCELTTools() throws {
        var total = CELTDecoder.Statistics()
        for f in Self.fixtures {
            let file = try AudioFile(path: Self.path(f.name))
            let p = try file.properties
            let d = try XCTUnwrap(try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie) as? OpusDecoder)
            _ = try decodePackets(of: file, with: d, as: .float32, perCall: 20, keepPCM: false)
            let s = d.celtStatistics
            print("\(f.name): \(s)")
            total.transient += s.transient; total.antiCollapse += s.antiCollapse; total.postfilter += s.postfilter
            total.intensity += s.intensity; total.dualStereo += s.dualStereo
        }
        XCTAssertGreaterThan(total.transient, 0)
        XCTAssertGreaterThan(total.antiCollapse, 0)
        XCTAssertGreaterThan(total.postfilter, 0)
        XCTAssertGreaterThan(total.intensity, 0)
        XCTAssertGreaterThan(total.dualStereo, 0)
    }

    /// Mono packets in a stereo stream play in both channels, as the mono decode; stereo
    /// packets in a mono stream are downmixed (CELT's two cross-channel paths).
    func testChannelCountMismatch() throws {
        let mono = try AudioFile(path: Self.path("celt-20ms-mono-low"))
        let mp = try mono.properties
        let monoDecoder = try CodecRegistry.makeDecoder(for: mp.dataFormat!, magicCookie: mp.magicCookie)
        let reference = try decodePackets(of: mono, with: monoDecoder, as: .float32, perCall: 10).pcm
            .withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        var stereoHead = try XCTUnwrap(mp.magicCookie)
        stereoHead[9] = 2
        let up = try OpusDecoder(format: Self.stereoFormat, magicCookie: stereoHead, output: .float32)
        let both = try decodePackets(of: mono, with: up, as: .float32, perCall: 10).pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(both.count, 2 * reference.count)
        var worst: Float = 0
        for i in 0..<reference.count {
            XCTAssertEqual(both[2 * i], both[2 * i + 1])
            worst = max(worst, abs(both[2 * i] - reference[i]))
        }
        XCTAssertLessThan(worst, 1e-4)

        let stereo = try AudioFile(path: Self.path("celt-20ms-stereo-cbr-low"))
        let sp = try stereo.properties
        var monoHead = try XCTUnwrap(sp.magicCookie)
        monoHead[9] = 1
        var monoFormat = Self.stereoFormat
        monoFormat.channelsPerFrame = 1
        let down = try OpusDecoder(format: monoFormat, magicCookie: monoHead, output: .float32)
        let mixed = try decodePackets(of: stereo, with: down, as: .float32, perCall: 10).pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let full = try Self.oracle("celt-20ms-stereo-cbr-low", channels: 2)
        let skip = try OpusHead.parse(sp.magicCookie!).preSkip
        // Close to the average of libopus's two channels, not equal: a mono decoder ignores
        // the phase inversion of intensity-coded bands (RFC 8251 §7), so those bands add
        // instead of cancelling.
        var diff = 0.0, energy = 0.0
        for i in skip..<(mixed.count - 960) where i - skip < full.count / 2 {
            let avg = 0.5 * (full[2 * (i - skip)] + full[2 * (i - skip) + 1])
            diff += Double((mixed[i] - avg) * (mixed[i] - avg))
            energy += Double(avg * avg)
        }
        print(String(format: "stereo packets downmixed by a mono decoder: %.1f dB below the signal", 10 * Foundation.log10(energy / max(diff, 1e-30))))
        XCTAssertGreaterThan(energy / diff, 100)
    }

    /// Framing codes 1, 2 and 3 (with padding, CBR and VBR; RFC 6716 §3.2): pairs of a file's
    /// 20 ms frames repacked into 40 ms packets decode as the single-frame packets do.
    func testFramingCodes() throws {
        for name in ["celt-20ms-stereo-cbr-low", "celt-20ms-stereo-vbr-high"] {
            let file = try AudioFile(path: Self.path(name))
            let p = try file.properties
            let n = Int(p.audioDataPacketCount ?? 0) & ~1
            let (data, descriptions) = try file.readPacketData(startingAt: 0, count: n)
            let packets = (descriptions ?? []).map { Array(data[Int($0.startOffset)..<(Int($0.startOffset) + Int($0.dataByteSize))]) }
            let single = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)
            let expected = try Self.decodeAll(packets, single)
            func length(_ l: Int) -> [UInt8] { l < 252 ? [UInt8(l)] : [UInt8(252 + (l - 252) % 4), UInt8((l - 252) / 4)] }
            var variants: [String: [[UInt8]]] = [:]
            for k in stride(from: 0, to: n, by: 2) {
                let a = packets[k], b = packets[k + 1]
                let toc = a[0] & 0xFC
                XCTAssertEqual(a[0], b[0])
                let fa = Array(a.dropFirst()), fb = Array(b.dropFirst())
                if name.contains("cbr") {
                    XCTAssertEqual(fa.count, fb.count)
                    variants["code 1", default: []].append([toc | 1] + fa + fb)
                    variants["code 3 CBR padded", default: []].append([toc | 3, 0xC2 & ~0x80 | 0x40, 2] + fa + fb + [0, 0])
                }
                variants["code 2", default: []].append([toc | 2] + length(fa.count) + fa + fb)
                variants["code 3 VBR padded", default: []].append([toc | 3, 0x80 | 0x40 | 2, 255, 1] + length(fa.count) + fa + fb
                                                                     + [UInt8](repeating: 0, count: 255))
            }
            XCTAssertFalse(variants.isEmpty)
            for (what, repacked) in variants {
                XCTAssertEqual(repacked.count, n / 2, "\(name) \(what)")
                let d = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)
                let got = try Self.decodeAll(repacked, d)
                XCTAssertTrue(got == expected, "\(name) \(what): the output differs")
            }
        }
    }

    /// Each packet decoded in its own call, the output concatenated (interleaved Float).
    static func decodeAll(_ packets: [[UInt8]], _ d: AudioDecoder) throws -> [Float] {
        let channels = Int(d.outputFormat.channelsPerFrame)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: channels, interleaved: true, frameCapacity: 5760)
        var out: [Float] = []
        for pk in packets {
            buffer.frameLength = 0
            if let code = decodeOne(pk, d, buffer) { throw AudioError(code, "decode") }
            out += buffer.interleavedBytes().withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        }
        return out
    }

    /// The 5.1 file's layout is Vorbis order; family 255 has none.
    func testChannelLayouts() throws {
        for (name, expected) in [("celt-5.1-family1", ChannelLayout.vorbisOrder(channels: 6)), ("celt-5.1-family255", nil),
                                 ("celt-20ms-stereo-cbr-low", nil)]
        {
            let file = try AudioFile(path: Self.path(name))
            let p = try file.properties
            let d = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)
            XCTAssertEqual(d.outputChannelLayout, expected, name)
        }
    }

    /// A lost packet (a zero-length packet) is concealed: same length, finite, counted; the
    /// decoder is back on the oracle's track soon after.
    func testLostPacketIsConcealed() throws {
        _ = try requireFFmpeg()
        let path = Self.path("celt-20ms-stereo-vbr-high")
        let file = try AudioFile(path: path)
        let p = try file.properties
        let n = Int(p.audioDataPacketCount ?? 0)
        var (data, descriptions) = try file.readPacketData(startingAt: 0, count: n)
        let lost = 30
        descriptions![lost].dataByteSize = 0
        let d = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: true,
                               frameCapacity: n * d.maximumFramesPerPacket)
        try data.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: n, descriptions: descriptions, into: buffer) }
        XCTAssertEqual(buffer.frameLength, n * 960)
        XCTAssertEqual(d.concealedPackets, 1)
        let ours = buffer.interleavedBytes().withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssert(ours.allSatisfy { $0.isFinite })
        // The oracle without the loss, untrimmed: ffmpeg drops the 312 pre-skip samples.
        let reference = try Self.oracle("celt-20ms-stereo-vbr-high", channels: 2, family1: false)
        let skip = try OpusHead.parse(p.magicCookie!).preSkip
        func rmsDiff(packets r: Range<Int>) -> Double {
            var s = 0.0, c = 0
            for i in (r.lowerBound * 960 * 2)..<(r.upperBound * 960 * 2) where i - 2 * skip >= 0 && i - 2 * skip < reference.count {
                let e = Double(ours[i]) - Double(reference[i - 2 * skip])
                s += e * e
                c += 1
            }
            return (s / Double(max(1, c))).squareRoot()
        }
        let before = rmsDiff(packets: 5..<lost), during = rmsDiff(packets: lost..<(lost + 1)), after = rmsDiff(packets: (lost + 20)..<n)
        print(String(format: "Opus loss of packet %d: rms difference before %.3g, in the lost packet %.3g, 20+ packets after %.3g",
                     lost, before, during, after))
        XCTAssertLessThan(before, Self.rmsGoal)
        XCTAssertLessThan(after, 1e-3)
    }

    /// A burst of seven lost packets (pitch-based concealment for five, then noise), in
    /// mono, 2.5 ms and 5.1 streams: the right length, finite, bounded, counted.
    func testBurstLoss() throws {
        for name in ["celt-20ms-mono-low", "celt-2.5ms-stereo-cbr", "celt-5.1-family1"] {
            let file = try AudioFile(path: Self.path(name))
            let p = try file.properties
            let n = Int(p.audioDataPacketCount ?? 0)
            var (data, descriptions) = try file.readPacketData(startingAt: 0, count: n)
            for k in 10..<17 { descriptions![k].dataByteSize = 0 }
            let d = try XCTUnwrap(try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie) as? OpusDecoder)
            let channels = Int(d.outputFormat.channelsPerFrame)
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: channels, interleaved: true,
                                   frameCapacity: n * d.maximumFramesPerPacket)
            try data.withBytes { (raw) throws(AudioError) in try d.decode(raw, packetCount: n, descriptions: descriptions, into: buffer) }
            let perPacket = OpusPacket.configuration(data[Int(descriptions![0].startOffset)]).2
            XCTAssertEqual(buffer.frameLength, n * perPacket, name)
            XCTAssertEqual(d.concealedPackets, 7, name)
            XCTAssertEqual(d.celtStatistics.concealed, 7 * d.head.streams, name)
            let s = buffer.interleavedBytes().withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            XCTAssert(s.allSatisfy { $0.isFinite && abs($0) < 4 }, name)
        }
    }

    // MARK: Damaged input

    func testMalformedPacketsThrowBadData() throws {
        let d = try OpusDecoder(format: Self.stereoFormat, magicCookie: Self.stereoHead, output: .float32)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: true, frameCapacity: 5760)
        let bad: [[UInt8]] = [
            [0xFC | 1, 1, 2, 3],                 // code 1 with an odd payload
            [0xFC | 2, 252],                     // code 2, a two-byte length cut short
            [0xFC | 2, 10, 1, 2],                // code 2, the first frame longer than the packet
            [0xFC | 3],                          // code 3 without a count
            [0xFC | 3, 0],                       // code 3 with 0 frames
            [0xFC | 3, 49],                      // 49 frames of 20 ms
            [0xFC | 3, 0x40 | 2, 255],           // padding running past the end
            [0xFC | 3, 3, 1, 2, 3, 4],           // CBR: 4 bytes for 3 frames
            [0xFC | 3, 0x80 | 2, 9, 1],          // VBR: a frame past the end
            [0x18 | 3, 4],                       // 4 × 60 ms SILK: 240 ms
        ]
        for b in bad {
            buffer.frameLength = 0
            XCTAssertEqual(Self.decodeOne(b, d, buffer), .codecBadData, "\(b)")
            XCTAssertEqual(buffer.frameLength, 0)
        }
    }

    static let stereoFormat = StreamDescription(sampleRate: 48000, formatID: .opus, bytesPerPacket: 0, framesPerPacket: 0,
                                                bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)
    static let stereoHead: [UInt8] = Array("OpusHead".utf8) + [1, 2, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 0]

    /// Random TOCs and bytes, truncations and bit flips of real packets: never a crash;
    /// each packet decodes or throws 'bada', and decoded output is finite.
    func testDamagedPacketsNeverCrash() throws {
        let file = try AudioFile(path: Self.path("celt-10ms-stereo-vbr"))
        let p = try file.properties
        let n = Int(p.audioDataPacketCount ?? 0)
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: n)
        var packets: [[UInt8]] = (descriptions ?? []).map { Array(data[Int($0.startOffset)..<(Int($0.startOffset) + Int($0.dataByteSize))]) }
        var g = SeededGenerator(seed: 7845)
        var damaged: [[UInt8]] = []
        for (i, pk) in packets.enumerated() where i % 3 == 0 {
            damaged.append(Array(pk.prefix(Int.random(in: 1...max(1, pk.count), using: &g))))
            var flipped = pk
            for _ in 0..<3 { let k = Int.random(in: 0..<flipped.count, using: &g); flipped[k] ^= UInt8(1 << Int.random(in: 0..<8, using: &g)) }
            damaged.append(flipped)
            damaged.append([UInt8.random(in: 0...255, using: &g)] + g.bytes(Int.random(in: 0...300, using: &g)))
        }
        packets += damaged
        let d = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: true, frameCapacity: 5760)
        var decoded = 0, rejected = 0
        for pk in packets {
            buffer.frameLength = 0
            if let code = Self.decodeOne(pk, d, buffer) {
                XCTAssertEqual(code, .codecBadData)
                rejected += 1
            } else {
                decoded += 1
                let s = buffer.interleavedBytes().withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                XCTAssert(s.allSatisfy { $0.isFinite })
            }
        }
        XCTAssertGreaterThan(decoded, 0)
        print("Opus damaged packets: \(decoded) decoded, \(rejected) rejected")
    }

    /// Decodes one packet; the error's code when it throws.
    static func decodeOne(_ packet: [UInt8], _ d: AudioDecoder, _ buffer: PCMBuffer) -> AudioError.Code? {
        let r: Result<Void, AudioError> = packet.withUnsafeBytes { raw in
            Result { () throws(AudioError) in try d.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
        }
        if case .failure(let e) = r { return e.code }
        return nil
    }

    /// The RFC 8251 test vectors, when the shared corpus has them (it does not yet).
    func testRFC8251VectorsIfPresent() throws {
        let dir = "\(packageRoot)/../shared/corpus/opus_testvectors"
        guard FileManager.default.fileExists(atPath: dir) else {
            throw XCTSkip("no Opus test vectors in ../shared/corpus (see its README)")
        }
    }
}

extension OpusDecoderTests {
    /// The header's output gain (Q7.8 dB) scales the output: +6.02 dB about doubles it.
    func testOutputGain() throws {
        let file = try AudioFile(path: Self.path("celt-20ms-mono-low"))
        let p = try file.properties
        var cookie = try XCTUnwrap(p.magicCookie)
        let plain = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: cookie)
        let gain = Int16(6.0206 * 256)
        cookie[16] = UInt8(truncatingIfNeeded: gain)
        cookie[17] = UInt8(truncatingIfNeeded: gain >> 8)
        let louder = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: cookie)
        let a = try decodePackets(of: file, with: plain, as: .float32, perCall: 10).pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let b = try decodePackets(of: file, with: louder, as: .float32, perCall: 10).pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(a.count, b.count)
        let factor = Float(Foundation.exp(Double(gain) / 5120 * Foundation.log(10.0)))
        XCTAssertEqual(factor, 2, accuracy: 1e-3)
        for i in stride(from: 0, to: a.count, by: 97) { XCTAssertEqual(b[i], factor * a[i], accuracy: 1e-5, "sample \(i)") }
    }

    /// opus_compare's measure: a signal against itself is 100 %; a little noise lowers it
    /// but passes; a very different signal fails.
    func testOpusCompareMeasure() {
        var g = SeededGenerator(seed: 8251)
        let n = 48000
        let x = (0..<n).map { i in Float(0.3 * sin(2 * Double.pi * 440 * Double(i) / 48000)) + Float.random(in: -0.01...0.01, using: &g) }
        XCTAssertEqual(OpusCompare.compare(reference: x, tested: x, channels: 1)?.quality ?? 0, 100, accuracy: 1e-9)
        let slightly = x.map { $0 + Float.random(in: -1e-4...1e-4, using: &g) }
        let s = try! XCTUnwrap(OpusCompare.compare(reference: x, tested: slightly, channels: 1))
        XCTAssertTrue(s.passes, "\(s)")
        XCTAssertLessThan(s.quality, 100)
        let other = (0..<n).map { i in Float(0.3 * sin(2 * Double.pi * 3000 * Double(i) / 48000)) }
        let o = try! XCTUnwrap(OpusCompare.compare(reference: x, tested: other, channels: 1))
        XCTAssertFalse(o.passes, "\(o)")
    }

    /// Random CELT packets, for one, two, 5.1 (family 1) and family-255 decoders with silent
    /// channels: each decodes to finite samples or throws 'bada'.
    func testRandomPacketsNeverCrash() throws {
        var g = SeededGenerator(seed: 99)
        let heads: [[UInt8]] = [
            OpusDecoderTests.stereoHead,
            Array("OpusHead".utf8) + [1, 1, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 0],
            Array("OpusHead".utf8) + [1, 6, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 1, 4, 2, 0, 4, 1, 2, 3, 5],
            Array("OpusHead".utf8) + [1, 3, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 255, 2, 1, 0, 255, 2],
        ]
        for head in heads {
            let ch = Int(head[9])
            let fmt = StreamDescription(sampleRate: 48000, formatID: .opus, bytesPerPacket: 0, framesPerPacket: 0,
                                        bytesPerFrame: 0, channelsPerFrame: UInt32(ch), bitsPerChannel: 0)
            let d = try OpusDecoder(format: fmt, magicCookie: head, output: .float32)
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: ch, interleaved: true, frameCapacity: 5760)
            for i in 0..<800 {
                var p = g.bytes(Int.random(in: 0...400, using: &g))
                if !p.isEmpty { p[0] = (p[0] | 0x80) }   // CELT configurations
                if i % 7 == 0, p.count > 2 { p[1] |= 0x80 }
                buffer.frameLength = 0
                if let code = OpusDecoderTests.decodeOne(p, d, buffer) {
                    XCTAssertEqual(code, .codecBadData)
                } else {
                    let s = buffer.interleavedBytes().withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                    if !s.allSatisfy({ $0.isFinite }) { XCTFail("non-finite output, head \(ch) packet \(i)"); break }
                }
            }
        }
    }
}

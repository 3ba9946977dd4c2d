import Foundation
import XCTest
@testable import TonearmCodecs
import Tonearm
import TonearmTestSupport

/// The native AAC decoder against ffmpeg's float decoder, on the fixtures in aacdec/
/// (ffmpeg's encoder in ADTS, LATM, M4A, 3GP and fragmented MP4; make-aac.sh) and the AAC
/// CAFs of caf/ (make-caf.sh).
///
/// The measure is the one ISO/IEC 14496-26 conformance and FFmpeg's FATE apply: per channel,
/// the RMS of the difference below 2^-15/√12 and no sample more than 2^-14 away (full
/// scale 1.0), over the decode through AudioFile and ExtAudioFile, as applications use it.
/// The frame count is exact: every packet's 1024 frames for ADTS and LATM (ffmpeg's), the
/// edit list's for MP4 (the source's length: ffmpeg 5.1 drops the priming but keeps the
/// end's padding, so there it is compared over the frames both give).
final class AACDecoderTests: XCTestCase {
    struct Golden: Decodable {
        var container: String
        var sampleRate: Int
        var channels: Int
        var frames: Int
        var ffmpegFrames: Int
        var ffmpegDecoder: String
        var goldenFrames: Int
        var sourceFrames: Int
        var gapless: Bool
        var packets: Int
        var windowSequences: [String: Int]?
        var channelLayout: String?
        var features: [String]
    }

    static var fixtures: [String] { fixtureFiles("aacdec", extensions: ["aac", "m4a", "mp4", "3gp", "loas"]) }
    static func base(_ path: String) -> String { String(path[..<path.lastIndex(of: ".")!]) }
    static func name(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

    static func golden(_ path: String) throws -> Golden {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: base(path) + ".json"), "\(path): no golden")
        return try JSONDecoder().decode(Golden.self, from: data)
    }

    /// Where ffmpeg's channel c of an AAC stream is in the decoder's (AAC) order: ffmpeg
    /// puts them in WAV's order (FL FR FC LFE BL BR for configuration 6). For configuration
    /// 7, ffmpeg 5.1 (encoder and decoder alike) departs from Table 1.19: it takes the
    /// first pair for L R, the second for the side pair, the third for the back pair,
    /// where the standard (and Apple's AAC_7_1) has Lc Rc, L R, then Ls Rs. The channels
    /// are compared element by element.
    static func aacOrder(channels: Int) -> [Int] {
        switch channels {
        case 6: return [2, 0, 1, 4, 5, 3]
        case 8: return [2, 0, 1, 6, 7, 4, 5, 3]
        default: return Array(0..<channels)
        }
    }

    /// ffmpeg's interleaved samples put into the decoder's channel order. ffmpeg names no
    /// layout for a program config element's channels (the golden's `channelLayout` is
    /// null) and keeps the elements' order, as the decoder does.
    static func reordered(_ x: [Float], channels: Int, layout: String?) -> [Float] {
        guard layout != nil else { return x }
        let order = aacOrder(channels: channels)
        guard order != Array(0..<channels) else { return x }
        var out = x
        for f in 0..<x.count / channels {
            for c in 0..<channels { out[f * channels + c] = x[f * channels + order[c]] }
        }
        return out
    }

    static func ffmpegF32(_ path: String, decoder: String = "aac") throws -> [Float] {
        MPEGDecoderTests.floats(try ffmpeg(["-c:a", decoder, "-i", path, "-f", "f32le", "-"]))
    }

    static func decode(_ path: String) throws -> (samples: [Float], channels: Int) {
        let (bytes, channels) = try MPEGDecoderTests.decode(path)
        return (MPEGDecoderTests.floats(bytes), channels)
    }

    // MARK: Accuracy

    /// Every fixture: the frame count Tonearm must give (the golden's), and ffmpeg's first
    /// frames (the committed golden) to full accuracy. Needs no tools.
    func testFixturesMatchGoldens() throws {
        var rows: [(String, MPEGDecoderTests.Accuracy)] = []
        for path in Self.fixtures {
            let g = try Self.golden(path), name = Self.name(path)
            let (ours, channels) = try Self.decode(path)
            XCTAssertEqual(channels, g.channels, name)
            XCTAssertEqual(ours.count / channels, g.frames, "\(name): frames")
            if g.gapless { XCTAssertEqual(ours.count / channels, g.sourceFrames, "\(name): gapless") }
            let golden = Self.reordered(MPEGDecoderTests.floats(try MPEGDecoderTests.decode(Self.base(path) + ".golden.flac").bytes),
                                        channels: channels, layout: g.channelLayout)
            XCTAssertEqual(golden.count / channels, g.goldenFrames, name)
            rows.append((name, MPEGDecoderTests.assertAccurate(Array(ours.prefix(golden.count)), golden, channels: channels,
                                                               frames: g.goldenFrames, name)))
        }
        XCTAssertEqual(rows.count, 27)
        MPEGDecoderTests.report("AAC decoder against the goldens (ffmpeg's first frames)", rows)
    }

    /// Every fixture, and the AAC CAFs of caf/, against ffmpeg live over the whole file.
    func testFixturesMatchFFmpeg() throws {
        _ = try requireFFmpeg()
        var rows: [(String, MPEGDecoderTests.Accuracy)] = []
        for path in Self.fixtures {
            let g = try Self.golden(path), name = Self.name(path)
            let (ours, channels) = try Self.decode(path)
            let reference = Self.reordered(try Self.ffmpegF32(path, decoder: g.ffmpegDecoder), channels: channels,
                                           layout: g.channelLayout)
            XCTAssertEqual(reference.count / channels, g.ffmpegFrames, "\(name): ffmpeg's frames")
            let common = min(ours.count, reference.count)
            rows.append((name, MPEGDecoderTests.assertAccurate(Array(ours.prefix(common)), Array(reference.prefix(common)),
                                                               channels: channels, frames: common / channels, name)))
            XCTAssertEqual(ours.count / channels, g.frames, "\(name): frames")
        }
        // CAF (ffmpeg does not write AAC into CAF; make-caf.sh remuxes its ADTS): pakt trims
        // the priming and the remainder, ffmpeg neither.
        for name in ["remux_aac_stereo.caf", "remux_aac_mono.caf"] {
            let path = fixturesDirectory + "/caf/" + name
            let (ours, channels) = try Self.decode(path)
            let file = try AudioFile(path: path)
            let pakt = try XCTUnwrap(try file.properties.packetTableInfo)
            XCTAssertEqual(Int64(ours.count / channels), pakt.numberValidFrames, name)
            // ffmpeg's CAF reader keeps the priming.
            let reference = Array(try Self.ffmpegF32(path).dropFirst(Int(pakt.primingFrames) * channels))
            let common = min(ours.count, reference.count)
            rows.append((name, MPEGDecoderTests.assertAccurate(Array(ours.prefix(common)), Array(reference.prefix(common)),
                                                               channels: channels, frames: common / channels, name)))
        }
        MPEGDecoderTests.report("AAC decoder against ffmpeg (whole files)", rows)
    }

    /// The goldens are ffmpeg's decode (to 24-bit rounding): checks the oracle command.
    func testGoldensAreFFmpegsDecode() throws {
        _ = try requireFFmpeg()
        for path in Self.fixtures {
            let g = try Self.golden(path), name = Self.name(path)
            let reference = try Self.ffmpegF32(path, decoder: g.ffmpegDecoder)
            let golden = MPEGDecoderTests.floats(try MPEGDecoderTests.decode(Self.base(path) + ".golden.flac").bytes)
            let a = MPEGDecoderTests.accuracy(golden, reference, channels: g.channels)
            XCTAssertLessThanOrEqual(a.max.max() ?? 1, 0x1p-24 * 1.0001, "\(name): the golden is not ffmpeg's decode")
        }
    }

    // MARK: What the fixtures exercise

    /// Decodes a file's packets with the decoder itself; returns it (for its statistics).
    static func decodePackets(_ path: String) throws -> AACDecoder {
        let file = try AudioFile(path: path)
        let format = try XCTUnwrap(try file.properties.dataFormat)
        let decoder = try XCTUnwrap(try CodecRegistry.makeDecoder(for: format, magicCookie: try file.magicCookie) as? AACDecoder)
        let count = Int(try file.properties.audioDataPacketCount ?? 0)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: format.sampleRate, channels: Int(format.channelsPerFrame),
                               interleaved: false, frameCapacity: 1024)
        for i in 0..<count {
            let (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
            buffer.frameLength = 0
            try data.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
        }
        return decoder
    }

    /// Each fixture made for a tool uses it (the decoder's counts), the window sequences the
    /// golden's own reader found are there, and no fixture frame is concealed.
    func testFixturesExerciseWhatTheyClaim() throws {
        var seen = Set<String>()
        for path in Self.fixtures {
            let g = try Self.golden(path), name = Self.name(path)
            let d = try Self.decodePackets(path)
            let s = d.statistics
            XCTAssertEqual(d.concealedPackets, 0, name)
            for (k, sequence) in ["onlyLong", "longStart", "eightShort", "longStop"].enumerated() {
                // The golden counts the first channel element of each frame; the decoder all.
                XCTAssertGreaterThanOrEqual(s.windowSequences[k], g.windowSequences?[sequence] ?? 0, "\(name): \(sequence)")
            }
            if s.windowSequences[2] > 0 { seen.insert("eightShort") }
            for feature in g.features {
                let count = ["pns": s.noiseBands, "intensity": s.intensityBands, "ms": s.midSideBands, "tns": s.tnsFilters,
                             "prediction": s.predictedBands, "ltp": s.longTermPredictedBands, "cce": s.couplingElements,
                             "pulse": s.pulseChannels, "dse": s.dataStreamElements, "pce": s.programConfigElements][feature]
                XCTAssertGreaterThan(try XCTUnwrap(count, "\(name): \(feature)"), 0, "\(name): no \(feature)")
                seen.insert(feature)
            }
        }
        XCTAssertEqual(seen, ["eightShort", "pns", "intensity", "ms", "tns", "prediction", "ltp", "cce", "pulse", "dse", "pce"])
    }

    // MARK: Layout

    func testChannelLayoutsAreAACOrder() throws {
        let cases: [(String, ChannelLayout.Tag)] = [
            ("lc_mono_8k.aac", .mono), ("lc_intensity_44k.aac", .stereo), ("lc_5.1_48k.m4a", .mpeg5_1_D), ("lc_7.1_48k.aac", .aac7_1),
        ]
        for (name, tag) in cases {
            let d = try Self.decodePackets(fixturesDirectory + "/aacdec/" + name)
            XCTAssertEqual(d.outputChannelLayout?.tag, tag, name)
        }
        XCTAssertEqual(ChannelLayout(tag: .mpeg5_1_D).waveOrdered?.tag, .mpeg5_1_A)
        // ffmpeg's program for 5.1: front L R pair and C, a side single channel (its LFE),
        // a back pair.
        let pce = try Self.decodePackets(fixturesDirectory + "/aacdec/lc_pce_5.1_48k.m4a")
        XCTAssertEqual(pce.outputChannelLayout?.channelLabels,
                       [.left, .right, .center, .centerSurround, .leftSurround, .rightSurround])
    }

    // MARK: Seeking

    /// ExtAudioFile's seek is sample-accurate in M4A (edit list) and LATM: a read after a
    /// seek gives the frames of a read from the start. (In files without PNS: its noise is
    /// random, FFmpeg's generator running on from frame to frame, so after a seek a noise
    /// band holds other noise of the same energy, in Tonearm as in FFmpeg.)
    func testSeekIsSampleAccurate() throws {
        for name in ["lc_lowrate_44k.m4a", "lc_stereo_48k.loas", "lc_intensity_44k.aac", "main_stereo_44k.aac"] {
            let path = fixturesDirectory + "/aacdec/" + name
            let (all, channels) = try Self.decode(path)
            let f = try ExtAudioFile(path: path)
            try f.setClientDataFormat(.pcm(sampleRate: f.fileDataFormat.sampleRate, channels: UInt32(channels), bits: 32, isFloat: true))
            for target in [5000, 1023, 2048, 7777, 100] {
                try f.seek(toFrame: Int64(target))
                var out: [UInt8] = []
                _ = try f.read(frames: 1500, into: &out)
                let got = MPEGDecoderTests.floats(out)
                let want = Array(all[(target * channels)..<min(all.count, (target + 1500) * channels)])
                XCTAssertEqual(got.count, want.count, "\(name): seek to \(target)")
                XCTAssert(got == want, "\(name): seek to \(target): the frames differ from a read from the start")
            }
        }
    }

    /// After reset(), decoding `seekPrerollPackets` packets before the target and dropping
    /// them gives the target's frames exactly.
    func testResetAndPrerollGiveTheSameFrames() throws {
        let file = try AudioFile(path: fixturesDirectory + "/aacdec/lc_intensity_44k.aac")
        let format = try XCTUnwrap(try file.properties.dataFormat)
        let decoder = try CodecRegistry.makeDecoder(for: format, magicCookie: try file.magicCookie)
        XCTAssertEqual(decoder.seekPrerollPackets, 1)
        let count = Int(try file.properties.audioDataPacketCount ?? 0)
        func run(_ range: Range<Int>) throws -> [[Float]] {
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: format.sampleRate, channels: 2, interleaved: true, frameCapacity: 1024)
            return try range.map { i in
                let (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
                buffer.frameLength = 0
                try data.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
                return buffer.withUnsafeMutableSamples(Float.self) { Array($0.prefix(2048)) }
            }
        }
        let clean = try run(0..<count)
        decoder.reset()
        let again = try run(6..<count)
        XCTAssert(Array(again.dropFirst()) == Array(clean[7...]), "the frames after the preroll differ")
        XCTAssert(again[0] != clean[6], "the first frame after a reset lacks its overlap")
    }

    // MARK: Transforms

    /// The FFT-based IMDCT (2048 and 256) and forward MDCT (AAC LTP's) against the sums
    /// that define them (§4.6.11.3.1), on pseudo-random input.
    func testTransformsMatchTheirDefinitions() {
        var seed: UInt32 = 99
        func next() -> Float {
            seed = seed &* 1664525 &+ 1013904223
            return Float(Int32(bitPattern: seed)) / 0x1p31
        }
        for n in [256, 2048] {
            let m = n / 2, n0 = Double(n) / 4 + 0.5
            let t = AACIMDCT(length: n, scale: 1)
            let x = (0..<m).map { _ in next() }
            var y = [Float](repeating: 0, count: n)
            x.withUnsafeBufferPointer { xp in y.withUnsafeMutableBufferPointer { t.transform(xp.baseAddress!, into: $0.baseAddress!) } }
            var worst = 0.0
            for i in 0..<n {
                var sum = 0.0
                for k in 0..<m { sum += Double(x[k]) * cos(2 * Double.pi / Double(n) * (Double(i) + n0) * (Double(k) + 0.5)) }
                worst = max(worst, abs(sum - Double(y[i])))
            }
            XCTAssertLessThan(worst, 1e-4 * Double(m).squareRoot(), "IMDCT \(n)")
            let time = (0..<n).map { _ in next() }
            var spectrum = [Float](repeating: 0, count: m)
            time.withUnsafeBufferPointer { tp in spectrum.withUnsafeMutableBufferPointer { t.forward(tp.baseAddress!, into: $0.baseAddress!) } }
            worst = 0
            for k in 0..<m {
                var sum = 0.0
                for i in 0..<n { sum += Double(time[i]) * cos(2 * Double.pi / Double(n) * (Double(i) + n0) * (Double(k) + 0.5)) }
                worst = max(worst, abs(sum - Double(spectrum[k])))
            }
            XCTAssertLessThan(worst, 1e-4 * Double(n).squareRoot(), "MDCT \(n)")
        }
    }

    // MARK: Damage

    /// Damaged ADTS frames (garbage in the spectrum, a frame cut short, a frame of noise)
    /// are concealed and counted, every frame keeps its 1024 frames, and the stream is the
    /// clean one again two frames later. (A file without PNS, whose noise would differ.)
    func testDamagedFramesAreConcealed() throws {
        let file = try AudioFile(path: fixturesDirectory + "/aacdec/lc_intensity_44k.aac")
        let format = try XCTUnwrap(try file.properties.dataFormat)
        let cookie = try file.magicCookie
        let count = Int(try file.properties.audioDataPacketCount ?? 0)
        var packets: [[UInt8]] = try (0..<count).map { i in try file.readPacketData(startingAt: Int64(i), count: 1).data }
        func run(_ packets: [[UInt8]], _ decoder: AudioDecoder) throws -> [[Float]] {
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: format.sampleRate, channels: 2, interleaved: true, frameCapacity: 1024)
            return try packets.map { p in
                buffer.frameLength = 0
                try p.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
                return buffer.withUnsafeMutableSamples(Float.self) { Array($0.prefix(buffer.frameLength * 2)) }
            }
        }
        let clean = try run(packets, try CodecRegistry.makeDecoder(for: format, magicCookie: cookie))
        packets[3] = Array(packets[3].prefix(20))  // cut short
        var seed: UInt32 = 12345
        for i in 0..<packets[7].count {  // noise
            seed = seed &* 1103515245 &+ 12345
            packets[7][i] = UInt8(truncatingIfNeeded: seed >> 16)
        }
        packets[10] = []  // empty
        let decoder = try CodecRegistry.makeDecoder(for: format, magicCookie: cookie)
        let out = try run(packets, decoder)
        XCTAssertEqual(decoder.concealedPackets, 3)
        XCTAssertEqual(out.map(\.count), clean.map(\.count), "every frame keeps its length")
        XCTAssert(Array(out[..<3]) == Array(clean[..<3]), "frames before the damage")
        XCTAssert(Array(out[5..<7]) == Array(clean[5..<7]), "frames between")
        XCTAssert(Array(out[12...]) == Array(clean[12...]), "frames after")
        let peak = { (x: [[Float]]) in x.joined().map { abs($0) }.max() ?? 0 }
        XCTAssertLessThanOrEqual(peak(out), peak(clean) * 1.1)
    }

    /// Every byte of a frame replaced in turn, and random garbage: no crash, no throw, always
    /// 1024 frames.
    func testNoInputCrashes() throws {
        let file = try AudioFile(path: fixturesDirectory + "/aacdec/lc_transients_44k.aac")
        let format = try XCTUnwrap(try file.properties.dataFormat)
        let decoder = try CodecRegistry.makeDecoder(for: format, magicCookie: try file.magicCookie)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: format.sampleRate, channels: 2, interleaved: true, frameCapacity: 1024)
        let frame = try file.readPacketData(startingAt: 4, count: 1).data
        for i in 0..<frame.count {
            for v: UInt8 in [0x00, 0xFF, frame[i] ^ 0x10] {
                var p = frame
                p[i] = v
                buffer.frameLength = 0
                try p.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
                XCTAssertEqual(buffer.frameLength, 1024)
            }
        }
    }
}

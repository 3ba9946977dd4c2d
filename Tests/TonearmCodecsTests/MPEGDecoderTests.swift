import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// The native MPEG audio decoder (Layers I, II and III) against ffmpeg's float decoders and
/// mpg123, on the fixtures in mp3dec/ (LAME, TwoLAME and ffmpeg encodes; make-mp3dec.sh).
///
/// Lossy decoders are not bit-exact with each other, so the measure is ISO/IEC 11172-4's
/// "full accuracy" test: per channel, the RMS of the difference to the reference below
/// 2^-15/√12 and no sample more than 2^-14 away (full scale 1.0). The frame count must be
/// exactly the oracle's after gapless trimming (LAME tag: encoder delay + 529 and padding − 529).
/// Decoding goes through ExtAudioFile, as applications use it, so the parser's packets,
/// the trimming and the converter are tested with the decoder.
final class MPEGDecoderTests: XCTestCase {
    static let rmsLimit = 0x1p-15 / 12.0.squareRoot()
    static let maxLimit = 0x1p-14

    struct Golden: Decodable {
        struct MPG123: Decodable {
            var frames: Int
            var agreesWithFFmpeg: Bool
        }
        var sampleRate: Int
        var channels: Int
        /// ffmpeg's frames after gapless trimming.
        var frames: Int
        /// Frames in NAME.golden.flac: ffmpeg's first ones.
        var goldenFrames: Int
        /// ffmpeg's float decoder for the layer (mp1float, mp2float, mp3float).
        var ffmpegDecoder: String
        var mpg123: MPG123
    }

    /// Every .mp1/.mp2/.mp3 in mp3dec/ (the Layer I files of make-mp1.py included).
    static var fixtures: [String] { fixtureFiles("mp3dec", extensions: ["mp1", "mp2", "mp3"]) }

    static func base(_ path: String) -> String { String(path[..<path.lastIndex(of: ".")!]) }
    static func name(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

    /// The file's golden, when it has one in make-mp3dec.sh's form.
    static func golden(_ path: String) -> Golden? {
        guard let data = FileManager.default.contents(atPath: base(path) + ".json") else { return nil }
        return try? JSONDecoder().decode(Golden.self, from: data)
    }

    /// ffmpeg's float decoder for a file (by extension when there is no golden).
    static func ffmpegDecoder(_ path: String) -> String {
        if let g = golden(path) { return g.ffmpegDecoder }
        return path.hasSuffix(".mp1") ? "mp1float" : path.hasSuffix(".mp2") ? "mp2float" : "mp3float"
    }

    // MARK: Decoding

    /// The whole file through ExtAudioFile in a client format of the file's rate and
    /// channels: Float32 or Int16, interleaved, little-endian bytes.
    static func decode(_ path: String, int16: Bool = false, chunk: Int = 4000) throws -> (bytes: [UInt8], channels: Int) {
        let f = try ExtAudioFile(path: path)
        let channels = f.fileDataFormat.channelsPerFrame
        try f.setClientDataFormat(.pcm(sampleRate: f.fileDataFormat.sampleRate, channels: channels, bits: int16 ? 16 : 32,
                                       isFloat: !int16))
        var out: [UInt8] = []
        while try f.read(frames: chunk, into: &out) > 0 {}
        return (out, Int(channels))
    }

    static func floats(_ bytes: [UInt8]) -> [Float] {
        bytes.withUnsafeBytes { raw in
            (0..<bytes.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
    }

    static func int16s(_ bytes: [UInt8]) -> [Int16] {
        bytes.withUnsafeBytes { raw in
            (0..<bytes.count / 2).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
    }

    /// NAME.golden.flac (24-bit) as floats, through Tonearm's FLAC decoder.
    static func goldenPCM(_ path: String) throws -> [Float] {
        floats(try decode(base(path) + ".golden.flac").bytes)
    }

    static func ffmpegF32(_ path: String) throws -> [Float] {
        floats(try ffmpeg(["-c:a", ffmpegDecoder(path), "-i", path, "-f", "f32le", "-"]))
    }

    static func mpg123F32(_ path: String) throws -> [Float] {
        let tool = try requireTool("mpg123")
        return floats(try runToolData(tool, ["-q", "--float", "-e", "f32", "-s", path]))
    }

    // MARK: Accuracy

    /// ISO/IEC 11172-4 full accuracy, per channel, over the samples both have.
    struct Accuracy: CustomStringConvertible {
        var rms: [Double]
        var max: [Double]
        var passes: Bool { rms.allSatisfy { $0 < MPEGDecoderTests.rmsLimit } && max.allSatisfy { $0 <= MPEGDecoderTests.maxLimit } }
        var description: String {
            "RMS " + rms.map { String(format: "%.3g", $0) }.joined(separator: "/")
                + ", max " + max.map { String(format: "%.3g", $0) }.joined(separator: "/")
                + String(format: " (limits %.3g, %.3g)", MPEGDecoderTests.rmsLimit, MPEGDecoderTests.maxLimit)
        }
    }

    static func accuracy(_ ours: [Float], _ reference: [Float], channels: Int) -> Accuracy {
        let n = min(ours.count, reference.count) / channels
        var rms = [Double](repeating: 0, count: channels), peak = [Double](repeating: 0, count: channels)
        for c in 0..<channels {
            var sum = 0.0
            for i in 0..<n {
                let d = Double(ours[i * channels + c]) - Double(reference[i * channels + c])
                sum += d * d
                peak[c] = Swift.max(peak[c], abs(d))
            }
            rms[c] = n > 0 ? (sum / Double(n)).squareRoot() : 0
        }
        return Accuracy(rms: rms, max: peak)
    }

    /// Compares a decode with a reference: the frame count exactly and ISO accuracy; returns
    /// the measurement (for the printed table).
    @discardableResult
    static func assertAccurate(_ ours: [Float], _ reference: [Float], channels: Int, frames: Int? = nil, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) -> Accuracy
    {
        let expected = frames ?? reference.count / channels
        XCTAssertEqual(ours.count / channels, expected, "\(what): frame count", file: file, line: line)
        let a = accuracy(ours, reference, channels: channels)
        if let bound = isoOverOracles[what] {
            // Measured 2.75e-05 RMS and 3.8e-04 at most on the second channel.
            XCTAssertTrue(a.rms.allSatisfy { $0 < bound.rms } && a.max.allSatisfy { $0 <= bound.max },
                          "\(what): further from the oracle than the illegal positions explain: \(a)", file: file, line: line)
            return a
        }
        XCTAssertTrue(a.passes, "\(what): not ISO/IEC 11172-4 full accuracy: \(a)", file: file, line: line)
        return a
    }

    /// Files where the decoder follows the standard and the compliance streams rather than
    /// ffmpeg and mpg123, with the distance to them that this explains.
    /// `forged_is_lsf.mp3`: an LSF intensity position that is the largest its scale factor
    /// can hold is illegal (13818-3), and the band falls back to mid/side or plain stereo;
    /// ffmpeg and mpg123 use it as a position. The compliance streams `l3-test45` and
    /// `l3-test46` (MPEGComplianceTests) decode at 45 and 33 dB their way and pass this way.
    static let isoOverOracles: [String: (rms: Double, max: Double)] = ["forged_is_lsf.mp3": (1e-4, 1e-3)]

    static func report(_ title: String, _ rows: [(String, Accuracy)]) {
        guard !rows.isEmpty else { return }
        print("\(title):")
        for (name, a) in rows { print("  " + name.padding(toLength: 36, withPad: " ", startingAt: 0) + a.description) }
    }

    // MARK: The harness itself (needs no MPEG decoder)

    /// The goldens are ffmpeg's decode (to 24-bit rounding); mpg123 gives ffmpeg's frame
    /// count and, where the golden says so, ffmpeg's samples to ISO accuracy. This checks
    /// the tolerance and the oracle commands the other tests use.
    func testOraclesAndGoldensAgree() throws {
        _ = try requireFFmpeg()
        let files = Self.fixtures.filter { Self.golden($0) != nil }
        XCTAssertGreaterThanOrEqual(files.count, 26)
        var rows: [(String, Accuracy)] = []
        for path in files {
            let g = try XCTUnwrap(Self.golden(path)), name = Self.name(path)
            let reference = try Self.ffmpegF32(path)
            XCTAssertEqual(reference.count / g.channels, g.frames, name)
            let golden = try Self.goldenPCM(path)
            XCTAssertEqual(golden.count / g.channels, g.goldenFrames, name)
            let a = Self.accuracy(golden, reference, channels: g.channels)
            XCTAssertLessThanOrEqual(a.max.max() ?? 1, 0x1p-24 * 1.0001, "\(name): the golden is not ffmpeg's decode")
            let other = try Self.mpg123F32(path)
            XCTAssertEqual(other.count / g.channels, g.frames, "\(name): mpg123's gapless frame count")
            let m = Self.accuracy(other, reference, channels: g.channels)
            XCTAssertEqual(m.passes, g.mpg123.agreesWithFFmpeg, "\(name): mpg123 against ffmpeg: \(m)")
            rows.append((name, m))
        }
        Self.report("mpg123 against ffmpeg", rows)
    }

    // MARK: The decoder

    /// Every fixture: ffmpeg's frame count after trimming, and its first frames (the
    /// committed golden) to ISO accuracy. Needs no tools.
    func testFixturesMatchGoldens() throws {
        var rows: [(String, Accuracy)] = []
        for path in Self.fixtures {
            guard let g = Self.golden(path) else { continue }
            let name = Self.name(path)
            let (bytes, channels) = try Self.decode(path)
            XCTAssertEqual(channels, g.channels, name)
            let ours = Self.floats(bytes)
            XCTAssertEqual(ours.count / channels, g.frames, "\(name): frames after gapless trimming")
            let golden = try Self.goldenPCM(path)
            rows.append((name, Self.assertAccurate(Array(ours.prefix(golden.count)), golden, channels: channels, name)))
        }
        XCTAssertGreaterThanOrEqual(rows.count, 26)
        Self.report("MPEG decoder against the goldens (ffmpeg's first frames)", rows)
    }

    /// Whether ffmpeg and mpg123 decode a file alike (the golden says; files without one are
    /// taken to agree).
    static func oraclesAgree(_ path: String) -> Bool { golden(path)?.mpg123.agreesWithFFmpeg ?? true }

    /// Every fixture against ffmpeg's float decoder, live, over the whole file. Where ffmpeg
    /// and mpg123 disagree (`lame_mpeg2_24k`: the last three granules of the second
    /// channel; LAME's own `--decode` sides with mpg123), the decode must match one of them:
    /// the frame count ffmpeg's (both give it) and ISO accuracy against either.
    func testFixturesMatchFFmpeg() throws {
        _ = try requireFFmpeg()
        var rows: [(String, Accuracy)] = []
        for path in Self.fixtures {
            let name = Self.name(path)
            let (bytes, channels) = try Self.decode(path)
            let ours = Self.floats(bytes), reference = try Self.ffmpegF32(path)
            if Self.oraclesAgree(path) {
                rows.append((name, Self.assertAccurate(ours, reference, channels: channels, name)))
                continue
            }
            XCTAssertEqual(ours.count, reference.count, "\(name): frame count")
            let a = Self.accuracy(ours, reference, channels: channels)
            rows.append((name + " (ffmpeg)", a))
            guard !a.passes else { continue }
            let m = Self.accuracy(ours, try Self.mpg123F32(path), channels: channels)
            rows.append((name + " (mpg123)", m))
            XCTAssertTrue(m.passes, "\(name): matches neither ffmpeg (\(a)) nor mpg123 (\(m))")
        }
        Self.report("MPEG decoder against ffmpeg (whole files)", rows)
    }

    /// Every fixture against mpg123 (which trims LAME's gapless information by default too),
    /// where mpg123 and ffmpeg agree with each other (see the goldens' `mpg123`; the other
    /// file is testFixturesMatchFFmpeg's).
    func testFixturesMatchMPG123() throws {
        _ = try requireTool("mpg123")
        var rows: [(String, Accuracy)] = []
        for path in Self.fixtures where Self.oraclesAgree(path) {
            let name = Self.name(path)
            let (bytes, channels) = try Self.decode(path)
            rows.append((name, Self.assertAccurate(Self.floats(bytes), try Self.mpg123F32(path), channels: channels, name)))
        }
        Self.report("MPEG decoder against mpg123 (whole files)", rows)
    }

    /// Int16 output (client LEI16, through the converter) is ffmpeg's `-f s16le` within one
    /// LSB: ffmpeg rounds the float output to the nearest integer (lrintf, ties to even) and
    /// clips; no dither on either side. Where ffmpeg and mpg123 disagree, mpg123's
    /// `-e s16` (also within one LSB of ffmpeg's on the other files) when the float decode
    /// sides with mpg123.
    func testInt16MatchesFFmpeg() throws {
        _ = try requireFFmpeg()
        for path in Self.fixtures {
            let name = Self.name(path)
            let (bytes, channels) = try Self.decode(path, int16: true)
            let ours = Self.int16s(bytes)
            var theirs = Self.int16s(try ffmpeg(["-c:a", Self.ffmpegDecoder(path), "-i", path, "-f", "s16le", "-"]))
            if !Self.oraclesAgree(path) {
                let floats = Self.floats(try Self.decode(path).bytes)
                if !Self.accuracy(floats, try Self.ffmpegF32(path), channels: channels).passes {
                    let tool = try requireTool("mpg123")
                    theirs = Self.int16s(try runToolData(tool, ["-q", "-e", "s16", "-s", path]))
                }
            }
            XCTAssertEqual(ours.count, theirs.count, name)
            var worst = 0, at = -1
            for i in 0..<min(ours.count, theirs.count) where abs(Int(ours[i]) - Int(theirs[i])) > worst {
                worst = abs(Int(ours[i]) - Int(theirs[i]))
                at = i
            }
            // 1e-3 of full scale where the decoder follows the standard over ffmpeg (isoOverOracles).
            XCTAssertLessThanOrEqual(worst, Self.isoOverOracles[name] == nil ? 1 : 33, "\(name): sample \(at) differs by \(worst) LSB")
        }
    }

    /// Seeking is exact: the frames read after seek(toFrame:) are those a read from the start
    /// gives there (the decoder pre-rolls frames for the bit reservoir and the overlap).
    func testSeekIsSampleExact() throws {
        for name in ["lame_cbr128_js.mp3", "lame_vbr_v2.mp3", "lame_cbr32_reservoir.mp3", "lame_transients.mp3",
                     "lame_mpeg2_22k_64k.mp3", "lame_mpeg25_8k.mp3", "twolame_joint.mp2", "ffmpeg_mp2.mp2"]
        {
            let path = fixturesDirectory + "/mp3dec/" + name
            let (whole, channels) = try Self.decode(path)
            let bytesPerFrame = 4 * channels
            let total = whole.count / bytesPerFrame
            let f = try ExtAudioFile(path: path)
            try f.setClientDataFormat(.pcm(sampleRate: f.fileDataFormat.sampleRate, channels: UInt32(channels), bits: 32,
                                           isFloat: true))
            XCTAssertEqual(f.fileLengthFrames, Int64(total), name)
            for target in [0, 1, 1151, 1152, 1153, 20000, total - 1500, total - 1, 7, 576] where target >= 0 && target < total {
                try f.seek(toFrame: Int64(target))
                var out: [UInt8] = []
                let n = 2500
                while out.count < n * bytesPerFrame, try f.read(frames: n - out.count / bytesPerFrame, into: &out) > 0 {}
                let expected = Array(whole[(target * bytesPerFrame)..<min(whole.count, (target + n) * bytesPerFrame)])
                XCTAssertTrue(out == expected, "\(name): \(out.count / bytesPerFrame) frames read after seek(toFrame: \(target)) "
                    + "differ from a decode from the start (\(expected.count / bytesPerFrame) frames)")
            }
        }
    }

    /// LAME's --nogap pair (one signal cut in two, one LAME run): each half decodes to
    /// ffmpeg's frames, and the join of our two decodes steps no more than ffmpeg's join
    /// does. ffmpeg's own join is not seamless: LAME's --nogaptags give the second file a
    /// delay of 576 that its frames do not hold (they continue the first file's), and the
    /// first a padding of 0, less than the 529 of the decoder delay, so 1105 frames are lost
    /// at the join (see Tests/Fixtures/README.md, "mp3dec/").
    func testNogapPairJoins() throws {
        let a = fixturesDirectory + "/mp3dec/lame_nogap_a.mp3", b = fixturesDirectory + "/mp3dec/lame_nogap_b.mp3"
        let ga = try XCTUnwrap(Self.golden(a)), gb = try XCTUnwrap(Self.golden(b))
        let ours = Self.floats(try Self.decode(a).bytes) + Self.floats(try Self.decode(b).bytes)
        XCTAssertEqual(ours.count / 2, ga.frames + gb.frames)
        let join = ga.frames
        func steps(_ x: [Float], channel: Int) -> (join: Double, around: Double) {
            func step(_ i: Int) -> Double { abs(Double(x[(i + 1) * 2 + channel]) - Double(x[i * 2 + channel])) }
            let around = ((join - 64)..<(join + 64)).filter { $0 != join - 1 }.map(step).max() ?? 0
            return (step(join - 1), around)
        }
        let reference = try Self.ffmpegF32(a) + Self.ffmpegF32(b)
        for c in 0..<2 {
            let s = steps(ours, channel: c)
            print(String(format: "nogap join, channel %d: step %.4g, largest step within 64 frames %.4g", c, s.join, s.around))
            let r = steps(reference, channel: c)
            print(String(format: "  ffmpeg's join: step %.4g, largest within 64 frames %.4g", r.join, r.around))
            XCTAssertLessThanOrEqual(s.join, r.join + Self.maxLimit, "channel \(c): our join steps further than ffmpeg's")
        }
        Self.assertAccurate(ours, reference, channels: 2, "nogap pair")
    }

    /// A 60-s 44.1 kHz tone encoded by LAME (mono, 64 kbit/s: the smallest rate whose frames
    /// have room for LAME's Info tag) decodes to exactly 2,646,000 frames, aligned with the
    /// source: the source shifted by any lag but 0 is further from our output. Made here
    /// (needs lame) rather than committed, to keep the fixtures small.
    func testSixtySecondsAreGapless() throws {
        let lame = try requireTool("lame")
        let frames = 2_646_000
        // 440 Hz plus noise from a fixed seed, so that only lag 0 lines up (a pure tone
        // would line up every period).
        var rng = SeededGenerator(seed: 60)
        var source = [Float](repeating: 0, count: frames)
        var pcm = [UInt8]()
        pcm.reserveCapacity(frames * 2)
        for i in 0..<frames {
            let noise = Float.random(in: -0.1...0.1, using: &rng)
            let v = 0.3 * sin(2 * Float.pi * 440 * Float(i) / 44100) + noise
            let s = Int16((v * 32767).rounded())
            source[i] = Float(s) / 32768
            pcm += le16(Int(s))
        }
        let dir = makeTemporaryDirectory()
        let fmt = le16(1) + le16(1) + le32(44100) + le32(88200) + le16(2) + le16(16)
        try writeFile(dir + "/tone.wav", makeWAV(fmt: fmt, data: pcm))
        _ = try runToolData(lame, ["--quiet", "-b", "64", "-m", "m", dir + "/tone.wav", dir + "/tone.mp3"])
        let (bytes, channels) = try Self.decode(dir + "/tone.mp3", chunk: 65536)
        XCTAssertEqual(channels, 1)
        let ours = Self.floats(bytes)
        XCTAssertEqual(ours.count, frames, "frames after gapless trimming")
        guard ours.count == frames else { return }
        // Squared distance to the source at lags -1200...1200 over 2 s in the middle.
        let window = 20 * 44100..<22 * 44100
        func distance(_ lag: Int) -> Double {
            var sum = 0.0
            for i in window { let d = Double(ours[i]) - Double(source[i + lag]); sum += d * d }
            return sum
        }
        let atZero = distance(0)
        var best = (lag: 0, value: atZero)
        for lag in stride(from: -1200, through: 1200, by: 1) where lag != 0 {
            let v = distance(lag)
            if v < best.value { best = (lag, v) }
        }
        XCTAssertEqual(best.lag, 0, "our output lines up with the source at lag \(best.lag), not 0")
        // And ffmpeg's decode over the whole file: a trimming off by one shows at the ends.
        Self.assertAccurate(ours, try Self.ffmpegF32(dir + "/tone.mp3"), channels: 1, frames: frames, "60-s tone")
        try? FileManager.default.removeItem(atPath: dir)
    }
}

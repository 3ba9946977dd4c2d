#if FFmpeg
import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmFormats
import TonearmTestSupport

/// libavcodec's decoders behind Tonearm's codec registry (the FFmpeg trait only): at fallback
/// rank for the codecs Tonearm has no decoder for, bit-exact against the ffmpeg tool; under
/// ``CodecRegistry/preference``; and as an in-process oracle for the native decoders.
///
/// Files are read by Tonearm's own parsers (AudioFile), so FFmpeg's decoders get the cookies
/// and packets the native containers hand over, mapped by FFmpegCodecParameters.
final class FFmpegDecoderTests: XCTestCase {
    // The preference is global: every test here leaves it as it found it. (`swift test`
    // runs the tests one at a time: .ci/run does not pass --parallel.)
    private var savedPreference = DecoderPreference.automatic
    override func setUp() { savedPreference = CodecRegistry.preference }
    override func tearDown() { CodecRegistry.preference = savedPreference }

    private func fixture(_ name: String) -> String { fixturesDirectory + "/" + name }

    // MARK: Fallback rank, against the ffmpeg tool

    /// Decodes every packet of `name` through the registry under `preference` (`.ffmpeg` for
    /// the codecs Tonearm also decodes natively), checks that FFmpeg's `codec` decoder was
    /// picked, and returns the decode and the tool's.
    private func decodeAgainstTool(_ name: String, codec: String, preference: DecoderPreference = .automatic,
                                   file: StaticString = #filePath, line: UInt = #line)
        throws -> (ours: FFmpegFixtureDecode, tool: [Float])
    {
        CodecRegistry.preference = preference
        let path = fixture(name)
        let tool = try ffmpegFloat32(path)
        let ours = try FFmpegFixtureDecode(path)
        XCTAssertEqual(ours.backend, .ffmpeg(codec: codec), name, file: file, line: line)
        XCTAssertFalse(tool.isEmpty, "\(name): ffmpeg decoded nothing", file: file, line: line)
        return (ours, tool)
    }

    /// Every packet decoded, nothing trimmed, equals the tool's output: for the containers
    /// whose priming and padding ffmpeg does not trim either.
    private func assertBitExact(_ name: String, codec: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (ours, tool) = try decodeAgainstTool(name, codec: codec, file: file, line: line)
        XCTAssertEqual(ours.frames, tool.count / ours.channels, "\(name): frames", file: file, line: line)
        assertSamples(ours.samples, tool, name, file: file, line: line)
    }

    func testAC3StereoDecodesAsTheFFmpegToolDoes() throws {
        try assertBitExact("ac3/ac3_stereo_48k.ac3", codec: "ac3")
    }

    func testAC3FivePointOneDecodesAsTheFFmpegToolDoes() throws {
        try assertBitExact("ac3/ac3_5.1_44k.ac3", codec: "ac3")
    }

    func testEAC3FivePointOneDecodesAsTheFFmpegToolDoes() throws {
        try assertBitExact("ac3/eac3_5.1_48k.eac3", codec: "eac3")
    }

    func testAMRNBDecodesAsTheFFmpegToolDoes() throws {
        try assertBitExact("amr/amrnb_122.amr", codec: "amrnb")
    }

    func testAMRWBDecodesAsTheFFmpegToolDoes() throws {
        try assertBitExact("ffmpeg/amrwb_1265_16k.awb", codec: "amrwb")
    }

    /// The Ogg granules say 143 frames of priming, which ffmpeg's tool keeps (its Speex
    /// demuxer sets no skip): the whole decode equals the tool's, and ExtAudioFile, which
    /// trims the priming, gives the same samples from frame 143 on.
    func testSpeexDecodesAsTheFFmpegToolDoes() throws {
        let name = "ogg/speex_ffmpeg_mono.spx"
        try assertBitExact(name, codec: "speex")
        let trim = try XCTUnwrap(try AudioFile(path: fixture(name)).packetTableInfo)
        XCTAssertEqual(trim.primingFrames, 143)
        let trimmed = try decodeInterleaved(fixture(name), as: Float.self)
        let (ours, _) = try decodeAgainstTool(name, codec: "speex")
        assertSamples(trimmed, Array(ours.samples.dropFirst(Int(trim.primingFrames) * ours.channels)), "\(name) through ExtAudioFile")
    }

    /// ffmpeg's Ogg demuxer cuts the last packet to the final granule, as Tonearm's packet
    /// table does (60 frames of padding here): the whole decode is the tool's plus those
    /// frames, and ExtAudioFile, which trims them, equals the tool.
    func testVorbisDecodesAsTheFFmpegToolDoes() throws {
        let name = "ogg/vorbis_oggenc_stereo.ogg"
        let (ours, tool) = try decodeAgainstTool(name, codec: "vorbis", preference: .ffmpeg)
        let trim = try XCTUnwrap(try AudioFile(path: fixture(name)).packetTableInfo)
        XCTAssertEqual(trim.primingFrames, 0)
        XCTAssertGreaterThan(trim.remainderFrames, 0)
        XCTAssertEqual(ours.frames, tool.count / ours.channels + Int(trim.remainderFrames), "\(name): frames")
        assertSamples(Array(ours.samples.prefix(tool.count)), tool, "\(name), all but the padding")
        assertSamples(try decodeInterleaved(fixture(name), as: Float.self), tool, "\(name) through ExtAudioFile")
    }

    /// ffmpeg's tool drops the OpusHead's pre-skip (312 frames) and the end padding the last
    /// granule states. FFmpegDecoder gets an OpusHead with the pre-skip zeroed, so that the
    /// decoder drops nothing and Tonearm's readers trim the container's priming as they do
    /// for every codec. Compared both ways: ExtAudioFile (which trims priming and padding)
    /// equals the tool, which is what a user gets; and the untrimmed decode, shifted by the
    /// pre-skip, equals it too, which shows that the decoder itself trimmed nothing.
    func testOpusDecodesAsTheFFmpegToolDoes() throws {
        let name = "ogg/opus_opusenc_stereo.opus"
        let (ours, tool) = try decodeAgainstTool(name, codec: "opus", preference: .ffmpeg)
        let trim = try XCTUnwrap(try AudioFile(path: fixture(name)).packetTableInfo)
        XCTAssertEqual(trim.primingFrames, 312)
        let priming = Int(trim.primingFrames), padding = Int(trim.remainderFrames)
        XCTAssertEqual(ours.frames, priming + tool.count / ours.channels + padding, "\(name): frames")
        assertSamples(Array(ours.samples.dropFirst(priming * ours.channels).prefix(tool.count)), tool,
                      "\(name), from the pre-skip on")
        assertSamples(try decodeInterleaved(fixture(name), as: Float.self), tool, "\(name) through ExtAudioFile")
    }

    func testNativeDecodersWinUnderAutomatic() throws {
        CodecRegistry.preference = .automatic
        for (name, backend) in [("flac/flac_default.flac", DecoderBackend.native), ("pcm/wav_s16le_mono_16k.wav", .native),
                                ("pcm/wav_ima_adpcm.wav", .native), ("alac/alac_16_stereo.caf", .native),
                                ("mpeg/lame_cbr128.mp3", .native), ("adts/aac_lc_stereo.aac", .native),
                                ("ogg/opus_opusenc_stereo.opus", .native), ("ogg/vorbis_oggenc_stereo.ogg", .native),
                                ("ac3/ac3_stereo_48k.ac3", .ffmpeg(codec: "ac3"))] {
            let p = try AudioFile(path: fixture(name)).properties
            let decoder = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)
            XCTAssertEqual(decoder.backend, backend, name)
        }
        XCTAssertTrue(CodecRegistry.canDecode(.flac))
        XCTAssertTrue(CodecRegistry.canDecode(.ac3))
        XCTAssertTrue(CodecRegistry.ffmpegOnlyFormats.contains(.ac3))
        XCTAssertFalse(CodecRegistry.ffmpegOnlyFormats.contains(.flac))
        XCTAssertTrue(CodecRegistry.ffmpegOnlyFormats.contains("wma2"))
        XCTAssertFalse(CodecRegistry.ffmpegOnlyFormats.contains(.opus))
        XCTAssertFalse(CodecRegistry.ffmpegOnlyFormats.contains(.vorbis))
    }

    // MARK: Preference

    func testNativePreferenceRefusesWhatOnlyFFmpegDecodes() throws {
        CodecRegistry.preference = .native
        let p = try AudioFile(path: fixture("ac3/ac3_stereo_48k.ac3")).properties
        XCTAssertThrowsError(try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)) { error in
            XCTAssertEqual((error as? AudioError)?.code, .unsupportedDataFormat, "\(error)")
        }
        XCTAssertFalse(CodecRegistry.canDecode(.ac3))
        XCTAssertTrue(CodecRegistry.canDecode(.flac))
        // The native decoders are unaffected.
        let flac = try AudioFile(path: fixture("flac/flac_default.flac")).properties
        XCTAssertEqual(try CodecRegistry.makeDecoder(for: flac.dataFormat!, magicCookie: flac.magicCookie).backend, .native)
    }

    func testFFmpegPreferenceDecodesNativeFormatsThroughFFmpeg() throws {
        for (name, codec) in [("flac/flac_default.flac", "flac"), ("pcm/wav_s16le_mono_16k.wav", "pcm_s16le"),
                              ("pcm/aiff_s24be.aiff", "pcm_s24be"), ("pcm/wav_ulaw.wav", "pcm_mulaw")] {
            CodecRegistry.preference = .native
            let native = try FFmpegFixtureDecode(fixture(name))
            CodecRegistry.preference = .ffmpeg
            let ff = try FFmpegFixtureDecode(fixture(name))
            XCTAssertEqual(native.backend, .native, name)
            XCTAssertEqual(ff.backend, .ffmpeg(codec: codec), name)
            XCTAssertGreaterThan(ff.frames, 0, name)
            assertSamples(ff.samples, native.samples, name)
        }
        CodecRegistry.preference = .ffmpeg
        XCTAssertTrue(CodecRegistry.canDecode(.flac))
        XCTAssertTrue(CodecRegistry.canDecode(.ac3))
    }

    /// 'aac ' at the core rate is the core alone, for FFmpeg's decoder too, though the frames
    /// carry SBR (implicit signalling); 'aach' is SBR without PS, so a mono stream stays mono
    /// (FFmpeg assumes PS unless the config rules it out). FFmpegCodecParameters says so in
    /// the config it hands over.
    func testFFmpegDecodesTheAACLayerTheFormatNames() throws {
        for name in ["aache/he_stereo_24k.aac", "aache/he_mono_16k.aac"] {
            let path = fixture(name)
            let file = try AudioFile(path: path)
            let format = try file.dataFormat
            XCTAssertEqual(format.formatID, .mpeg4AAC, name)
            let packets = Int(try file.audioDataPacketCount)
            CodecRegistry.preference = .native
            let native = try FFmpegFixtureDecode(path)
            CodecRegistry.preference = .ffmpeg
            let ff = try FFmpegFixtureDecode(path)
            XCTAssertEqual(ff.frames, packets * 1024, "\(name): the core's frames")
            XCTAssertEqual(ff.channels, Int(format.channelsPerFrame), name)
            let c = OracleComparison(native, ff)
            XCTAssertTrue(c.snr > 125, "\(name): \(c.snr) dB against the native core decode")
        }
        // Mono 'aach', with SBR and without PS: one channel on both sides.
        let name = "aache/he_mono_22k_aot5.m4a"
        let p = try AudioFile(path: fixture(name)).properties
        CodecRegistry.preference = .ffmpeg
        let decoder = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie)
        XCTAssertEqual(p.dataFormat!.formatID, .mpeg4AAC_HE, name)
        let ff = try FFmpegFixtureDecode(fixture(name))
        XCTAssertEqual(ff.channels, 1, name)
        XCTAssertEqual(ff.frames, Int(try AudioFile(path: fixture(name)).audioDataPacketCount) * 2048, name)
        XCTAssertEqual(decoder.outputFormat.channelsPerFrame, 1)
    }

    /// A call whose last packet FFmpeg refuses throws with a four-char code and writes
    /// nothing (the good packets' frames are dropped with it, as with every decoder), and
    /// after a reset the decoder decodes the good packets as before.
    func testAFailedCallWritesNothing() throws {
        CodecRegistry.preference = .ffmpeg
        let file = try AudioFile(path: fixture("ac3/ac3_stereo_48k.ac3"))
        let p = try file.properties
        let decoder = try CodecRegistry.makeDecoder(for: p.dataFormat!, magicCookie: p.magicCookie, output: .float32)
        let (data, d) = try file.readPacketData(startingAt: 0, count: 3)
        let good = try XCTUnwrap(d)
        XCTAssertEqual(good.count, 3)
        // A fourth packet: an AC-3 sync word and then bytes no frame has (FFmpeg: invalid data).
        let garbage = [0x0B, 0x77] + [UInt8](repeating: 0xFF, count: 1534)
        let bad = good + [PacketDescription(startOffset: Int64(data.count), dataByteSize: UInt32(garbage.count))]
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: true,
                               frameCapacity: 4 * decoder.maximumFramesPerPacket)
        buffer.frameLength = 7
        XCTAssertThrowsError(try (data + garbage).withBytes { (raw) throws(AudioError) in
            try decoder.decode(raw, packetCount: 4, descriptions: bad, into: buffer)
        }) { e in
            let e = e as? AudioError
            XCTAssertNotNil(e?.code.fourCC, "\(String(describing: e))")
            XCTAssertTrue(e?.message.contains("ac3") ?? false, "\(String(describing: e))")
        }
        XCTAssertEqual(buffer.frameLength, 7, "the failed call wrote frames")
        decoder.reset()
        buffer.frameLength = 0
        try data.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 3, descriptions: good, into: buffer) }
        XCTAssertEqual(buffer.frameLength, 3 * 1536)
    }

    /// A stream that declares fewer frames per packet than its packets hold (1000 for AC-3's
    /// 1536): a call fills the buffer to `packetCount × maximumFramesPerPacket` frames and
    /// no further, even when the buffer has more room, and the rest comes on later calls
    /// and the drain, in order. (FuzzDecoders-FFmpeg found a call that wrote more.)
    func testACallWritesNoMoreThanItsPacketsPromise() throws {
        CodecRegistry.preference = .ffmpeg
        let file = try AudioFile(path: fixture("ac3/ac3_stereo_48k.ac3"))
        let p = try file.properties
        var format = try XCTUnwrap(p.dataFormat)
        let (data, d) = try file.readPacketData(startingAt: 0, count: 4)
        let packets = try XCTUnwrap(d)
        func decode(_ format: StreamDescription, calls: [Range<Int>]) throws -> [UInt8] {
            let decoder = try CodecRegistry.makeDecoder(for: format, magicCookie: p.magicCookie, output: .float32)
            var out: [UInt8] = []
            let buffer = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: true,
                                   frameCapacity: 8192)
            for range in calls {
                buffer.frameLength = 0
                let slice = Array(packets[range])
                try data.withBytes { (raw) throws(AudioError) in
                    try decoder.decode(raw, packetCount: range.count, descriptions: slice, into: buffer)
                }
                XCTAssertLessThanOrEqual(buffer.frameLength, range.count * decoder.maximumFramesPerPacket, "\(range)")
                out += buffer.interleavedBytes()
            }
            buffer.frameLength = 0
            try decoder.drain(into: buffer)
            return out + buffer.interleavedBytes()
        }
        let whole = try decode(format, calls: [0..<4])
        XCTAssertEqual(whole.count, 4 * 1536 * 2 * 4)
        format.framesPerPacket = 1000
        let short = try decode(format, calls: [0..<3, 3..<4])
        XCTAssertEqual(short, whole)
    }

    func testPreferenceIsRestoredBetweenTests() {
        // setUp saw what the previous test left, after its tearDown.
        XCTAssertEqual(savedPreference, .automatic)
        XCTAssertEqual(CodecRegistry.preference, .automatic)
    }

    // MARK: In-process oracle (issue 18)

    /// The families whose files the native decoders read (PCM, G.711, ADPCM, FLAC, ALAC,
    /// MPEG audio, AAC and HE-AAC, Vorbis), every file in them. Files whose codec has no
    /// native decoder (Speex, AC-3 in caf/, mp4/ and ogg/) are passed over, and so is Opus
    /// (``notComparedWithFFmpeg``).
    static let oracleFamilies = ["pcm", "flac", "alac", "caf", "mp4", "ogg", "mpeg", "mp3dec", "adts", "aacdec", "aache"]

    /// Codecs whose reference is not FFmpeg's own decoder. Opus's is libopus
    /// (OpusDecoderTests and SILKDecoderTests compare with it, bit-exact for SILK): FFmpeg's
    /// native `opus` decoder has SILK and resampling of its own, 15–18 dB from libopus's on
    /// the SILK fixtures, 66 dB on CELT ones.
    static let notComparedWithFFmpeg: [AudioFormatID: String] = [
        .opus: "libopus, not FFmpeg's opus decoder, is the reference (OpusDecoderTests, SILKDecoderTests)",
    ]

    static let losslessFormats: Set<AudioFormatID> = [.linearPCM, .uLaw, .aLaw, .appleIMA4, .dviIntelIMA, .microsoftADPCM,
                                                      .flac, .appleLossless]

    /// Files the oracle cannot compare yet, with the reason (see the report of issue 18's
    /// test work). FFmpegDecoder hands LOAS frames, which the native AAC decoder unwraps
    /// itself, to FFmpeg's `aac` decoder, which wants raw access units ('bada'): FFmpeg
    /// has `aac_latm` for them.
    static let oracleGaps: [String: String] = [
        "adts/latm.loas": "LOAS frames reach FFmpeg's aac decoder, which wants raw access units",
        "aacdec/lc_stereo_48k.loas": "LOAS frames reach FFmpeg's aac decoder, which wants raw access units",
        "aache/ps_switch_44k.loas": "LOAS frames reach FFmpeg's aac decoder, which wants raw access units",
    ]

    /// The largest difference and lowest SNR allowed for a lossy codec, with what was
    /// measured (FFmpeg 5.1's decoders on Debian 12; SNR is the native decode's power over
    /// the difference's, both decodes untrimmed, channels matched).
    struct Bound {
        var maxDifference: Float
        var snr: Double
        var why: String
    }

    static func bound(for format: AudioFormatID, file: String) -> Bound {
        switch (format, file) {
        case (_, "mp3dec/lame_mpeg2_24k.mp3"), (_, "mp3dec/forged_mixed_lsf.mp3"):
            // ffmpeg and mpg123 differ in the second channel of the last three granules;
            // Tonearm sides with mpg123 and LAME's decoder (Tests/Fixtures/README.md,
            // mp3dec). Measured: max 0.0523, 29.3 and 29.6 dB.
            return Bound(maxDifference: 0.06, snr: 25, why: "ffmpeg's LSF start/short/stop granules, where mpg123 differs too")
        case (_, "mp3dec/forged_is_lsf.mp3"):
            // The largest LSF intensity position is illegal (ISO/IEC 13818-3); Tonearm falls
            // back to M/S as the compliance streams want, FFmpeg uses it as a position
            // (MPEGDecoderTests.isoOverOracles). Measured: max 3.8e-4, 59.3 dB.
            return Bound(maxDifference: 1e-3, snr: 50, why: "illegal LSF intensity positions")
        case (.mpegLayer3, _):
            // Both decode in float: rounding only. Measured over 32 files: max 6.5e-6 and
            // 113.9 dB at worst (forged_mixed_mpeg1's mixed blocks), about 1e-6 and 122-125 dB
            // typically.
            return Bound(maxDifference: 1e-5, snr: 105, why: "float rounding (mp3float)")
        case (.mpegLayer1, _), (.mpegLayer2, _):
            // FFmpeg's default mp1/mp2 decoders are fixed-point and round to 16 bits: about
            // one LSB (2^-15 = 3.05e-5). Measured over 15 files: max 3.27e-5, SNR 79.8 dB at
            // worst (its noise is 16-bit rounding, so a quiet file scores lower).
            return Bound(maxDifference: 4e-5, snr: 75, why: "FFmpeg's fixed-point Layer I/II, 16-bit output")
        case (.vorbis, _):
            // Both float. Measured over 4 files: max 3.6e-7, SNR 136.0 dB at worst.
            return Bound(maxDifference: 1e-6, snr: 125, why: "float rounding")
        case (.mpeg4AAC, _):
            // Both float. Measured over 37 files: max 3.6e-7, SNR 134.8 dB at worst.
            return Bound(maxDifference: 1e-6, snr: 125, why: "float rounding")
        default:
            // HE-AAC and HE-AAC v2 (SBR and PS in float on both sides), in the format
            // DecodedFormatProbe finds. Measured over 10 files: max 3.6e-6
            // (he_mono_32k_compat), SNR 107.5 dB at worst (he_mono_22k_aot5).
            return Bound(maxDifference: 1e-5, snr: 100, why: "float rounding through SBR and PS")
        }
    }

    func testNativeDecodersAgreeWithFFmpegs() throws {
        var lossless = 0, lossy = 0, report: [String] = [], skipped: [String] = []
        var measured: [String: (max: Float, snr: Double, files: Int)] = [:]
        for family in Self.oracleFamilies {
            for path in fixtureFiles(family) where !path.contains(".golden.") && !path.hasSuffix(".py") {
                let name = family + "/" + path.split(separator: "/").last!
                if Self.oracleGaps[name] != nil { continue }
                guard let file = try? AudioFile(path: path), var format = try? file.dataFormat else { continue }
                if let why = Self.notComparedWithFFmpeg[format.formatID] {
                    skipped.append("\(name): \(why)")
                    continue
                }
                let cookie = try file.magicCookie
                CodecRegistry.preference = .native
                do { _ = try CodecRegistry.makeDecoder(for: format, magicCookie: cookie) } catch {
                    skipped.append("\(name): \(error)")
                    continue
                }
                // The format a reader decodes to (HE-AAC found in an LC stream's packets),
                // as ExtAudioFile asks for it.
                if let probe = DecodedFormatProbe(format: format, magicCookie: cookie) {
                    let count = min(Int(try file.audioDataPacketCount), DecodedFormatProbe.packetLimit)
                    let (data, descriptions) = try file.readPacketData(startingAt: 0, count: count)
                    data.withUnsafeBytes { _ = probe.examine($0, descriptions: descriptions ?? []) }
                    format = probe.format
                }
                let native: FFmpegFixtureDecode, ff: FFmpegFixtureDecode
                do {
                    native = try FFmpegFixtureDecode(path, format: format)
                    CodecRegistry.preference = .ffmpeg
                    ff = try FFmpegFixtureDecode(path, format: format)
                } catch {
                    XCTFail("\(name) (\(format.formatID)): \(error)")
                    continue
                }
                XCTAssertEqual(native.backend, .native, name)
                guard case .ffmpeg = ff.backend else { XCTFail("\(name): \(ff.backend)"); continue }
                let c = OracleComparison(native, ff)
                XCTAssertEqual(ff.frames, native.frames, "\(name): frames")
                XCTAssertEqual(ff.channels, native.channels, "\(name): channels")
                let line = "\(name) \(format.formatID) \(ff.backend): \(native.frames) frames, max \(c.maxDifference), "
                    + String(format: "%.1f dB", c.snr) + (c.labelsDisagree ? ", channels matched by content (native=FFmpeg): \(c.labels)" : "")
                if Self.losslessFormats.contains(format.formatID) {
                    XCTAssertTrue(c.identical, "\(name): not bit-exact: \(line)")
                    lossless += 1
                } else {
                    let b = Self.bound(for: format.formatID, file: name)
                    XCTAssertLessThanOrEqual(c.maxDifference, b.maxDifference, "\(name) (\(b.why)): \(line)")
                    XCTAssertGreaterThanOrEqual(c.snr, b.snr, "\(name) (\(b.why)): \(line)")
                    lossy += 1
                    let key = "\(format.formatID) \(ff.backend)"
                    let m = measured[key] ?? (0, .infinity, 0)
                    measured[key] = (max(m.max, c.maxDifference), min(m.snr, c.snr), m.files + 1)
                }
                report.append(line)
            }
        }
        print("FFmpeg oracle, native against FFmpeg's decoders:\n  " + report.joined(separator: "\n  "))
        print("FFmpeg oracle, files no native decoder reads:\n  " + skipped.joined(separator: "\n  "))
        for (key, m) in measured.sorted(by: { $0.key < $1.key }) {
            print(String(format: "FFmpeg oracle: %@: %d files, max difference %.3g, lowest SNR %.1f dB", key, m.files, m.max, m.snr))
        }
        // Every family took part, so that a parser change cannot empty the oracle quietly.
        XCTAssertGreaterThanOrEqual(lossless, 80, "lossless files compared")
        XCTAssertGreaterThanOrEqual(lossy, 80, "lossy files compared")
    }
}

/// A whole file's packets, read by Tonearm's own parser (AudioFile) and decoded by the
/// decoder the registry picks under the current preference: every frame, none trimmed.
struct FFmpegFixtureDecode {
    var samples: [Float]
    var channels: Int
    var backend: DecoderBackend
    /// The decoder's channel order (its own, else the file's, else Tonearm's default).
    var labels: [ChannelLabel]?
    var frames: Int { samples.count / max(1, channels) }

    /// `format` replaces the file's (the format a probe found).
    init(_ path: String, format: StreamDescription? = nil) throws {
        let file = try AudioFile(path: path)
        let p = try file.properties
        let decoder = try CodecRegistry.makeDecoder(for: format ?? p.dataFormat!, magicCookie: p.magicCookie, output: .float32)
        backend = decoder.backend
        channels = Int(decoder.outputFormat.channelsPerFrame)
        labels = (decoder.outputChannelLayout ?? p.channelLayout ?? ChannelLayout.defaultLayout(channels: channels))?.channelLabels
        let pcm = try decodePackets(of: file, with: decoder, as: .float32, perCall: 16).pcm
        samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}

/// Native against FFmpeg, over the frames both decoded, with FFmpeg's channels put in the
/// native decoder's order: by label when both name the same channels, else by content
/// (AAC 7.1 and PCE layouts, which Tonearm labels as Apple does and FFmpeg its own way).
struct OracleComparison {
    var identical = true
    var maxDifference: Float = 0
    /// The native decode's power over the difference's, in dB; infinity when identical.
    var snr = Double.infinity
    var labelsDisagree = false
    var labels = ""

    init(_ native: FFmpegFixtureDecode, _ ff: FFmpegFixtureDecode) {
        let ch = native.channels
        let frames = min(native.frames, ff.frames)
        guard ff.channels == ch, frames > 0 else { identical = false; snr = -.infinity; maxDifference = .infinity; return }
        var map = Array(0..<ch)
        let a = native.labels, b = ff.labels
        if let a, let b, a.count == ch, b.count == ch, Set(a) == Set(b) {
            map = a.map { b.firstIndex(of: $0)! }
        } else if ch > 1 {
            labelsDisagree = a != nil && b != nil && a != b
            labels = "\((a ?? []).map(\.abbreviation)) / \((b ?? []).map(\.abbreviation))"
            // Each native channel takes the closest FFmpeg channel not taken yet.
            var free = Set(0..<ch)
            for c in 0..<ch {
                let best = free.min { x, y in
                    OracleComparison.distance(native, c, ff, x, frames) < OracleComparison.distance(native, c, ff, y, frames)
                }!
                map[c] = best
                free.remove(best)
            }
            if let a, let b, a.count == ch, b.count == ch {
                labels = (0..<ch).map { "\(a[$0].abbreviation)=\(b[map[$0]].abbreviation)" }.joined(separator: " ")
            }
        }
        var signal = 0.0, noise = 0.0
        native.samples.withUnsafeBufferPointer { x in
            ff.samples.withUnsafeBufferPointer { y in
                for i in 0..<frames {
                    for c in 0..<ch {
                        let u = x[i * ch + c], v = y[i * ch + map[c]]
                        if u != v { identical = false }
                        let d = abs(u - v)
                        maxDifference = max(maxDifference, d)
                        signal += Double(u) * Double(u)
                        noise += Double(d) * Double(d)
                    }
                }
            }
        }
        if native.frames != ff.frames { identical = false }
        snr = noise == 0 ? .infinity : 10 * log10(signal / noise)
    }

    private static func distance(_ a: FFmpegFixtureDecode, _ ca: Int, _ b: FFmpegFixtureDecode, _ cb: Int, _ frames: Int) -> Double {
        var sum = 0.0
        for i in 0..<frames {
            let d = Double(a.samples[i * a.channels + ca]) - Double(b.samples[i * b.channels + cb])
            sum += d * d
        }
        return sum
    }
}

/// `ffmpeg -bitexact -i PATH -f f32le -`: the tool's decode of the first audio stream,
/// interleaved, in FFmpeg's channel order, nothing resampled.
func ffmpegFloat32(_ path: String) throws -> [Float] {
    let bytes = try ffmpeg(["-bitexact", "-i", path, "-map", "0:a:0", "-f", "f32le", "-"])
    return bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}
#endif

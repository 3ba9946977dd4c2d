import Foundation
import XCTest
@testable import TonearmCodecs
import Tonearm
import TonearmTestSupport

/// HE-AAC and HE-AAC v2 as users read them: every `aache/` fixture through ``AudioFile`` and
/// ``ExtAudioFile`` (the decoder the codec registry makes, SBR and PS found as the file's
/// format and first packets say), against ffmpeg's float decoder.
final class HEAACDecoderTests: XCTestCase {
    static let rmsLimit = 0x1p-15 / 12.0.squareRoot(), maxLimit = 0x1p-14

    static func fixtures() throws -> [String] {
        let files = fixtureFiles("aache", extensions: ["aac", "m4a", "loas"])
        guard !files.isEmpty else { throw skipOrFail("the HE-AAC fixtures are not here: they are committed", required: true) }
        return files
    }

    static func name(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

    static func facts(_ path: String) throws -> [String: Any] {
        let json = String(path[..<path.lastIndex(of: ".")!]) + ".json"
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(readWholeFile(json))) as? [String: Any])
    }

    /// ffmpeg's channels reduced to ours: ffmpeg decodes a mono SBR stream that does not
    /// rule PS out as stereo (two equal channels); Tonearm decodes it as mono.
    static func reference(_ samples: [Float], channels theirs: Int, ours: Int) -> [Float] {
        guard theirs == 2 && ours == 1 else { return samples }
        return stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
    }

    /// Every fixture against its golden (ffmpeg's first frames, 24-bit) and against ffmpeg's
    /// whole decode: within the accuracy gate, with ffmpeg's frame count.
    func testFixturesMatchFFmpeg() throws {
        try requireTool("ffmpeg")
        for path in try Self.fixtures() {
            let name = Self.name(path)
            let facts = try Self.facts(path)
            let (ours, channels) = try AACDecoderTests.decode(path)
            let ffmpegChannels = try XCTUnwrap(facts["channels"] as? Int)
            let golden = Self.reference(MPEGDecoderTests.floats(try MPEGDecoderTests.decode(
                String(path[..<path.lastIndex(of: ".")!]) + ".golden.flac").bytes), channels: ffmpegChannels, ours: channels)
            let full = try AACDecoderTests.ffmpegF32(path, decoder: path.hasSuffix(".loas") ? "aac_latm" : "aac")
            let live = Self.reference(full, channels: ffmpegChannels, ours: channels)
            XCTAssertEqual(ours.count / channels, try XCTUnwrap(facts["frames"] as? Int), name)
            XCTAssertEqual(ours.count, live.count, name)
            let g = MPEGDecoderTests.accuracy(ours, golden, channels: channels)
            let a = MPEGDecoderTests.accuracy(ours, live, channels: channels)
            print(String(format: "HE-AAC %@: %d ch, %d frames; against ffmpeg rms %@ max %@; golden rms %.2e max %.2e", name,
                         channels, ours.count / channels, a.rms.map { String(format: "%.2e", $0) }.joined(separator: " "),
                         a.max.map { String(format: "%.2e", $0) }.joined(separator: " "), g.rms.max()!, g.max.max()!))
            XCTAssertLessThan(a.rms.max()!, Self.rmsLimit, name)
            XCTAssertLessThanOrEqual(a.max.max()!, Self.maxLimit, name)
            // The golden is ffmpeg's decode rounded to 24 bits: the rounding adds 2^-24 at most.
            XCTAssertLessThan(g.rms.max()!, Self.rmsLimit, name)
            XCTAssertLessThanOrEqual(g.max.max()!, Self.maxLimit + 0x1p-24, name)
        }
    }

    /// What a file reports: the container's format and format list (``AudioFile``), and the
    /// format it decodes to (``ExtAudioFile``), for implicit signalling and each explicit form.
    func testReportedFormats() throws {
        // file: (container's ID, rate, channels; decoded ID, rate, channels; the format list's IDs)
        let expected: [String: (AudioFormatID, Double, UInt32, AudioFormatID, Double, UInt32, [AudioFormatID])] = [
            "he_stereo_48k.aac": (.mpeg4AAC, 24000, 2, .mpeg4AAC_HE, 48000, 2, [.mpeg4AAC_HE, .mpeg4AAC]),
            "he_stereo_24k.aac": (.mpeg4AAC, 12000, 2, .mpeg4AAC_HE, 24000, 2, [.mpeg4AAC_HE, .mpeg4AAC]),
            "he_mono_16k.aac": (.mpeg4AAC, 8000, 1, .mpeg4AAC_HE, 16000, 1, [.mpeg4AAC_HE, .mpeg4AAC]),
            "ps_baseline_48k.aac": (.mpeg4AAC, 24000, 1, .mpeg4AAC_HE_V2, 48000, 2, [.mpeg4AAC_HE, .mpeg4AAC]),
            "ps_switch_44k.loas": (.mpeg4AAC, 22050, 1, .mpeg4AAC_HE_V2, 44100, 2, [.mpeg4AAC_HE, .mpeg4AAC]),
            "he_coupled_44k_aot5.m4a": (.mpeg4AAC_HE, 44100, 2, .mpeg4AAC_HE, 44100, 2, [.mpeg4AAC_HE, .mpeg4AAC]),
            "he_mono_22k_aot5.m4a": (.mpeg4AAC_HE, 22050, 1, .mpeg4AAC_HE, 22050, 1, [.mpeg4AAC_HE, .mpeg4AAC]),
            "he_mono_32k_compat.m4a": (.mpeg4AAC_HE, 32000, 1, .mpeg4AAC_HE, 32000, 1, [.mpeg4AAC_HE, .mpeg4AAC]),
            "he_stereo_96k_compat.m4a": (.mpeg4AAC_HE, 96000, 2, .mpeg4AAC_HE, 96000, 2, [.mpeg4AAC_HE, .mpeg4AAC]),
            "ps_20_44k_aot29.m4a": (.mpeg4AAC_HE_V2, 44100, 2, .mpeg4AAC_HE_V2, 44100, 2,
                                    [.mpeg4AAC_HE_V2, .mpeg4AAC_HE, .mpeg4AAC]),
            "ps_34_48k_compat.m4a": (.mpeg4AAC_HE_V2, 48000, 2, .mpeg4AAC_HE_V2, 48000, 2,
                                     [.mpeg4AAC_HE_V2, .mpeg4AAC_HE, .mpeg4AAC]),
        ]
        for path in try Self.fixtures() {
            let name = Self.name(path)
            let e = try XCTUnwrap(expected[name], name)
            let file = try AudioFile(path: path)
            let format = try XCTUnwrap(try file.properties.dataFormat)
            XCTAssertEqual([format.formatID.description, "\(format.sampleRate)", "\(format.channelsPerFrame)"],
                           [e.0.description, "\(e.1)", "\(e.2)"], name)
            let list = try XCTUnwrap(try file.properties.formatList, name)
            XCTAssertEqual(list.map(\.format.formatID), e.6, name)
            // Each layer's rate: the HE ones at the output rate, LC at half of it.
            let outputRate = try XCTUnwrap(try Self.facts(path)["sampleRate"] as? Int)
            XCTAssertEqual(list.map(\.format.sampleRate),
                           list.map { $0.format.formatID == .mpeg4AAC ? Double(outputRate / 2) : Double(outputRate) }, name)
            let ext = try ExtAudioFile(reading: file)
            let d = ext.fileDataFormat
            XCTAssertEqual([d.formatID.description, "\(d.sampleRate)", "\(d.channelsPerFrame)", "\(d.framesPerPacket)"],
                           [e.3.description, "\(e.4)", "\(e.5)", "2048"], name)
            XCTAssertEqual(ext.fileLengthFrames, Int64(try XCTUnwrap(try Self.facts(path)["frames"] as? Int)), name)
        }
    }

    /// HE-AAC and HE-AAC v2 in CAF, as afconvert writes them ('aach' and 'aacp' at the
    /// output rate, 2048 frames per packet, the AudioSpecificConfig in an ES_Descriptor):
    /// the M4A fixtures' packets, cookie and trimming written to CAF through AudioFile read
    /// back as the same format and decode to the same samples, bit for bit.
    func testHEAACInCAF() throws {
        let dir = makeTemporaryDirectory()
        for (name, id) in [("he_coupled_44k_aot5.m4a", AudioFormatID.mpeg4AAC_HE), ("ps_20_44k_aot29.m4a", .mpeg4AAC_HE_V2)] {
            let path = fixturesDirectory + "/aache/" + name
            let r = try AudioFile(path: path)
            let format = try r.dataFormat
            XCTAssertEqual(format.formatID, id, name)
            let count = Int(try r.audioDataPacketCount)
            let (data, descriptions) = try r.readPacketData(startingAt: 0, count: count)
            let out = dir + "/" + name + ".caf"
            let w = try AudioFile.create(path: out, type: .caf, format: format)
            try w.setProperty(.magicCookieData, .data(try XCTUnwrap(try r.magicCookie)))
            try w.setProperty(.packetTableInfo, .packetTableInfo(try XCTUnwrap(try r.packetTableInfo, name)))
            try w.writePackets(data, count: count, descriptions: descriptions, startingAt: 0)
            try w.close()
            let caf = try AudioFile(path: out)
            XCTAssertEqual(try caf.dataFormat, format, name)
            XCTAssertEqual(try caf.properties.formatList?.map(\.format.formatID), try r.properties.formatList?.map(\.format.formatID), name)
            let (ours, channels) = try AACDecoderTests.decode(out)
            let (theirs, _) = try AACDecoderTests.decode(path)
            XCTAssertEqual(channels, 2, name)
            XCTAssertEqual(ours.count, theirs.count, name)
            XCTAssertTrue(ours == theirs, "\(name): the CAF decodes differently")
        }
    }

    /// An LC file at 22.05 kHz or below (no SBR in its frames) stays LC at its own rate.
    func testPlainLCStaysLC() throws {
        let path = fixturesDirectory + "/aacdec/lc_mono_22k.aac"
        guard FileManager.default.fileExists(atPath: path) else { throw skipOrFail("no aacdec fixtures: they are committed", required: true) }
        let ext = try ExtAudioFile(path: path)
        XCTAssertEqual(ext.fileDataFormat.formatID, .mpeg4AAC)
        XCTAssertEqual(ext.fileDataFormat.sampleRate, 22050)
        XCTAssertEqual(ext.fileDataFormat.framesPerPacket, 1024)
        XCTAssertEqual(try AudioFile(path: path).properties.formatList?.first?.format.formatID, .mpeg4AAC_HE)
    }

    /// Sample-accurate seeks in the M4A and LATM fixtures: the frames read after
    /// `seek(toFrame:)` are exactly those a read from the start gives there. (These files are
    /// 8 to 16 packets long, so SBR's 40-packet preroll reaches back to their first packet,
    /// whose header a fresh decoder can always read.)
    func testSeekIsSampleAccurate() throws {
        // On the generator's long file (make-aache.sh --long) the output converges exactly too,
        // but only after the first header a fresh decoder can read, which may lie past the target.
        for path in try Self.fixtures() where !path.hasSuffix(".aac") {
            let name = Self.name(path)
            let (whole, channels) = try AACDecoderTests.decode(path)
            let frames = whole.count / channels
            for target in [frames / 2 + 777, frames - 3000] {
                let f = try ExtAudioFile(path: path)
                try f.setClientDataFormat(.pcm(sampleRate: f.fileDataFormat.sampleRate, channels: UInt32(channels), bits: 32,
                                               isFloat: true))
                try f.seek(toFrame: Int64(target))
                var bytes: [UInt8] = []
                while try f.read(frames: 4096, into: &bytes) > 0 {}
                let got = MPEGDecoderTests.floats(bytes)
                XCTAssertEqual(got.count, (frames - target) * channels, "\(name) at \(target)")
                let expected = Array(whole[(target * channels)...])
                let a = MPEGDecoderTests.accuracy(got, expected, channels: channels)
                print(String(format: "HE-AAC seek %@ to %d: rms %.2e max %.2e", name, target, a.rms.max()!, a.max.max()!))
                XCTAssertEqual(a.max.max()!, 0, "\(name) at \(target)")
            }
        }
    }
}

extension HEAACDecoderTests {
    /// Damage: bytes flipped near the end of every packet (where the fill element with the
    /// SBR and PS payloads sits, before ID_END) and elsewhere, and packets cut short. Nothing
    /// traps, every packet still gives 2048 frames of finite samples, refused SBR payloads are
    /// counted, and a damaged core frame is concealed as the LC decoder conceals it.
    func testDamagedPayloadsAreDroppedNotFatal() throws {
        for path in try Self.fixtures() {
            let name = Self.name(path)
            let file = try AudioFile(path: path)
            let ext = try ExtAudioFile(reading: file)
            let format = ext.fileDataFormat
            let count = Int(try file.properties.audioDataPacketCount ?? 0)
            for mode in 0..<3 {
                let decoder = try XCTUnwrap(try CodecRegistry.makeDecoder(for: format, magicCookie: try file.magicCookie)
                    as? AACDecoder)
                let buffer = PCMBuffer(commonFormat: .float32, sampleRate: format.sampleRate, channels: Int(format.channelsPerFrame),
                                       interleaved: true, frameCapacity: 2048)
                var seed: UInt32 = 12345
                for i in 0..<count {
                    var (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
                    seed = seed &* 1_103_515_245 &+ 12345
                    let loas = data.first == 0x56
                    switch mode {
                    case 0: data[data.count - 2 - Int(seed >> 16) % min(8, data.count - 2)] ^= UInt8(1 << (seed % 8))
                    case 1: if !loas { data[Int(seed >> 16) % data.count] ^= 0xFF }
                    default: if !loas { data = Array(data[0..<max(1, data.count * Int(seed % 4 + 5) / 10)]) }
                    }
                    buffer.frameLength = 0
                    try data.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
                    XCTAssertEqual(buffer.frameLength, 2048, "\(name) mode \(mode) packet \(i)")
                    buffer.withUnsafeMutableSamples(Float.self) { s in
                        XCTAssertTrue(s.prefix(2048 * buffer.channelCount).allSatisfy { $0.isFinite }, "\(name) mode \(mode) packet \(i)")
                    }
                }
                let refused = decoder.heaac?.refusedPayloads ?? 0, refusedPS = decoder.heaac?.refusedPSPayloads ?? 0
                print("HE-AAC damage \(name) mode \(mode): \(refused) SBR and \(refusedPS) PS payloads refused, \(decoder.concealedPackets) core frames concealed")
                // (A LOAS frame is damaged only at its end: its header must stay whole.)
                if !(path.hasSuffix(".loas") && mode > 0) {
                    XCTAssertGreaterThan(refused + refusedPS + decoder.concealedPackets, 0, "\(name) mode \(mode)")
                }
            }
        }
    }

    /// 5.1 HE-AAC: one SBR decoder per channel element (C, L/R, Ls/Rs, LFE). The LC 5.1
    /// fixture decoded as 'aach' (no SBR in its frames) comes out at twice the rate with its
    /// six channels, each the core upsampled through the QMF banks: against the LC decode,
    /// resampled by the same filter banks' passband, each channel's level is kept.
    func testSurroundGetsAnSBRDecoderPerElement() throws {
        let path = fixturesDirectory + "/aacdec/lc_5.1_48k.m4a"
        guard FileManager.default.fileExists(atPath: path) else { throw skipOrFail("no aacdec fixtures: they are committed", required: true) }
        let file = try AudioFile(path: path)
        var format = try XCTUnwrap(try file.properties.dataFormat)
        let lc = try XCTUnwrap(try CodecRegistry.makeDecoder(for: format, magicCookie: try file.magicCookie) as? AACDecoder)
        format.formatID = .mpeg4AAC_HE
        let he = try XCTUnwrap(try CodecRegistry.makeDecoder(for: format, magicCookie: try file.magicCookie) as? AACDecoder)
        XCTAssertEqual(he.outputFormat.sampleRate, 96000)
        XCTAssertEqual(he.outputFormat.channelsPerFrame, 6)
        XCTAssertEqual(he.maximumFramesPerPacket, 2048)
        XCTAssertEqual(he.heaac?.elements.map { $0.decoder.channels.count }, [1, 2, 2, 1])
        let a = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 6, interleaved: true, frameCapacity: 1024)
        let b = PCMBuffer(commonFormat: .float32, sampleRate: 96000, channels: 6, interleaved: true, frameCapacity: 2048)
        var energyLC = [Double](repeating: 0, count: 6), energyHE = [Double](repeating: 0, count: 6)
        let count = Int(try file.properties.audioDataPacketCount ?? 0)
        for i in 0..<count {
            let (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
            a.frameLength = 0
            b.frameLength = 0
            try data.withBytes { (raw) throws(AudioError) in
                try lc.decode(raw, packetCount: 1, descriptions: nil, into: a)
                try he.decode(raw, packetCount: 1, descriptions: nil, into: b)
            }
            a.withUnsafeMutableSamples(Float.self) { s in for k in 0..<6 * 1024 { energyLC[k % 6] += Double(s[k] * s[k]) } }
            b.withUnsafeMutableSamples(Float.self) { s in for k in 0..<6 * 2048 { energyHE[k % 6] += Double(s[k] * s[k]) / 2 } }
        }
        for c in 0..<6 {
            XCTAssertGreaterThan(energyLC[c], 0, "channel \(c)")
            // The last 481 core frames are still in the banks' delay: a little less energy.
            XCTAssertEqual(energyHE[c] / energyLC[c], 1, accuracy: 0.1, "channel \(c)")
        }
    }
}

extension HEAACDecoderTests {
    /// Other HE-AAC files, named in HEAAC_EXTRA (comma-separated paths: real encoders' files,
    /// such as libfdk_aac's in strongcourage/fuzzing-corpus, which are not committed), against
    /// ffmpeg's decode without the edit list (`-ignore_editlist 1`) from the priming on: the
    /// accuracy gate over the frames the edit list keeps. (ffmpeg 5.1's own trimming of these
    /// files is not the edit list's: it gives 4220 frames of hev2.m4a's 11025.)
    func testOtherFilesMatchFFmpeg() throws {
        guard let list = ProcessInfo.processInfo.environment["HEAAC_EXTRA"] else { throw XCTSkip("HEAAC_EXTRA is not set") }
        try requireTool("ffmpeg")
        for path in list.split(separator: ",").map(String.init) {
            let (ours, channels) = try AACDecoderTests.decode(path)
            let ext = try ExtAudioFile(path: path)
            let priming = Int(try ext.file.properties.packetTableInfo?.primingFrames ?? 0)
            let editList = path.hasSuffix(".m4a") || path.hasSuffix(".mp4") ? ["-ignore_editlist", "1"] : []
            let full = MPEGDecoderTests.floats(try ffmpeg(editList + ["-c:a", "aac", "-i", path, "-f", "f32le", "-"]))
            // Without the edit list ffmpeg gives every packet's 2048 frames, in one or two channels.
            let packets = Int(try ext.file.properties.audioDataPacketCount ?? 1)
            let ffmpegChannels = full.count / (packets * Int(ext.fileDataFormat.framesPerPacket))
            let all = Self.reference(full, channels: ffmpegChannels, ours: channels)
            let theirs = Array(all[min(all.count, priming * channels)..<min(all.count, priming * channels + ours.count)])
            let format = ext.fileDataFormat
            let a = MPEGDecoderTests.accuracy(ours, theirs, channels: channels)
            print(String(format: "HE-AAC %@ ('%@', %.0f Hz, %d ch): %d frames, priming %d; rms %.2e, max %.2e", Self.name(path),
                         format.formatID.fourCC.string, format.sampleRate, channels, ours.count / channels, priming,
                         a.rms.max()!, a.max.max()!))
            XCTAssertEqual(ours.count, theirs.count, path)
            XCTAssertLessThan(a.rms.max()!, Self.rmsLimit, path)
            XCTAssertLessThanOrEqual(a.max.max()!, Self.maxLimit, path)
        }
    }
}

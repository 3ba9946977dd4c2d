import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmFormats
import TonearmTestSupport

/// The native FLAC decoder against STREAMINFO's MD5, the reference `flac` tool and ffmpeg,
/// over the IETF decoder testbench (../shared/corpus/flac-test-files) and the fixtures.
final class FLACDecoderTests: XCTestCase {
    static let corpus = packageRoot + "/../shared/corpus/flac-test-files"

    private func corpusFiles(_ group: String) throws -> [String] {
        let dir = FLACDecoderTests.corpus + "/" + group
        _ = try requireCorpus("flac-test-files")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else {
            throw skipOrFail("the FLAC test corpus has no \(dir)")
        }
        return names.filter { $0.hasSuffix(".flac") }.sorted().map { dir + "/" + $0 }
    }

    struct Decoded {
        var decoder: FLACDecoder
        /// Interleaved little-endian output bytes.
        var pcm: [UInt8]
        var frames: Int
    }

    /// Reads a file's packets through AudioFile and decodes them, `perCall` packets a call,
    /// at most `maximumPackets` of them.
    private func decode(_ path: String, as common: PCMBuffer.CommonFormat = .int32, interleaved: Bool = true,
                        perCall: Int = 37, maximumPackets: Int = .max, keepPCM: Bool = true) throws -> Decoded
    {
        let file = try AudioFile(path: path)
        let p = try file.properties
        let format = try XCTUnwrap(p.dataFormat)
        let decoder = try FLACDecoder(format: format, magicCookie: p.magicCookie, output: common)
        decoder.verifiesMD5 = true
        let (pcm, frames) = try decodePackets(of: file, with: decoder, as: common, interleaved: interleaved, perCall: perCall,
                                              maximumPackets: maximumPackets, keepPCM: keepPCM)
        return Decoded(decoder: decoder, pcm: pcm, frames: frames)
    }

    /// The MD5 of `flac -d`'s raw output, which is the form STREAMINFO's MD5 hashes; nil
    /// when flac refuses the file; skips without the tool (fails on CI).
    private func referenceMD5(_ path: String) throws -> [UInt8]? {
        let flac = try requireTool("flac")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: flac)
        p.arguments = ["-s", "-d", "-f", "-o", "-", "--force-raw-format", "--endian=little", "--sign=signed", path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return nil }
        return MD5.digest([UInt8](data))
    }

    /// Files decoded whole in debug builds; the rest only in part (their first packets), to
    /// keep the suite quick. Release builds decode everything.
    private var fullDecode: Bool {
        #if DEBUG
        ProcessInfo.processInfo.environment["TONEARM_FULL_CORPUS"] != nil
        #else
        true
        #endif
    }

    /// Every file of `subset` and `uncommon` that the parser accepts decodes to its
    /// STREAMINFO MD5, or to `flac -d`'s output where STREAMINFO has none, or to ffmpeg's
    /// where flac refuses a file without STREAMINFO.
    func testCorpusSubsetAndUncommonMatchMD5() throws {
        var summary: [String] = []
        var passed = 0, partial = 0, skipped: [String] = []
        for group in ["subset", "uncommon"] {
            for path in try corpusFiles(group) {
                let name = group + "/" + (path.split(separator: "/").last.map(String.init) ?? path)
                // Format changes mid-stream: testCorpusFormatChangesStopOrFollowAsFlacDoes.
                if group == "uncommon", ["01", "02", "03", "04"].contains(where: { name.hasPrefix("uncommon/" + $0) }) { continue }
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                guard let file = try? AudioFile(path: path), (try? file.properties.dataFormat) != nil else {
                    skipped.append("\(name) (the parser rejects it)")
                    continue
                }
                // In debug builds, files over 1 MB are decoded for their first 20 packets only.
                let whole = fullDecode || size <= 1 << 20
                let d: Decoded
                do {
                    d = try decode(path, maximumPackets: whole ? .max : 20, keepPCM: false)
                } catch {
                    XCTFail("\(name): \(error)")
                    continue
                }
                guard whole else { partial += 1; continue }
                if let match = d.decoder.md5Matches {
                    XCTAssertTrue(match, "\(name): the decoded MD5 differs from STREAMINFO's")
                    if match { passed += 1 }
                } else if let reference = try referenceMD5(path) {
                    XCTAssertEqual(d.decoder.decodedMD5, reference, "\(name): differs from flac -d")
                    if d.decoder.decodedMD5 == reference { passed += 1 }
                } else if d.decoder.inputFormat.bitsPerChannel == 16 {
                    // No STREAMINFO for flac -d (uncommon/11 starts with junk): ffmpeg's s16le.
                    let reference = MD5.digest(try ffmpeg(["-i", path, "-f", "s16le", "-"]))
                    XCTAssertEqual(d.decoder.decodedMD5, reference, "\(name): differs from ffmpeg")
                    if d.decoder.decodedMD5 == reference { passed += 1 }
                } else {
                    skipped.append("\(name) (no MD5 in STREAMINFO, and flac -d refuses it)")
                }
            }
        }
        summary.append("\(passed) match, \(partial) partly decoded, skipped: \(skipped)")
        print("FLAC corpus: " + summary.joined(separator: "; "))
    }

    /// uncommon/01–04 change the sample rate, the channel count or the bit depth mid-stream,
    /// and have no MD5. `flac -d` decodes each up to the change and stops with an error. Ours
    /// gives the same samples up to there; then a change of rate or channels throws 'fmt?'
    /// (one stream description cannot follow it), and a change of depth is followed.
    func testCorpusFormatChangesStopOrFollowAsFlacDoes() throws {
        let flac = try requireTool("flac")
        for (prefix, refuses) in [("01", true), ("02", true), ("03", true), ("04", false)] {
            guard let path = try corpusFiles("uncommon").first(where: { $0.split(separator: "/").last!.hasPrefix(prefix) }) else { continue }
            let reference = try runToolData(flac, ["-s", "-d", "-f", "-o", "-", "--force-raw-format", "--endian=little", "--sign=signed", path])
            XCTAssertFalse(reference.isEmpty, prefix)
            let file = try AudioFile(path: path)
            let p = try file.properties
            let decoder = try FLACDecoder(format: XCTUnwrap(p.dataFormat), magicCookie: p.magicCookie, output: .int16)
            let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 0, channels: Int(decoder.inputFormat.channelsPerFrame),
                                   interleaved: true, frameCapacity: decoder.maximumFramesPerPacket)
            var pcm: [UInt8] = []
            var refused: AudioError?
            for i in 0..<(p.audioDataPacketCount ?? 0) {
                let (data, d) = try file.readPacketData(startingAt: i, count: 1)
                buffer.frameLength = 0
                do {
                    try decoder.decode(data.withUnsafeBytes { $0 }, packetCount: 1, descriptions: d, into: buffer)
                } catch {
                    refused = error
                    break
                }
                pcm += buffer.interleavedBytes()
            }
            if refuses {
                XCTAssertEqual(refused?.code, .unsupportedDataFormat, prefix)
                XCTAssertTrue(pcm == reference, "\(prefix): \(pcm.count) bytes before the change, flac -d gives \(reference.count)")
            } else {
                XCTAssertNil(refused, prefix)
                XCTAssertGreaterThan(pcm.count, reference.count, prefix)
                XCTAssertTrue(Array(pcm.prefix(reference.count)) == reference, "\(prefix): the samples before the change differ")
            }
        }
    }

    /// Every `faulty` file is rejected with an AudioError or decodes; 02, 05 and 10 (a wrong
    /// frame size bound, a wrong total, a bad Vorbis comment) decode to their MD5 (05's last
    /// frame ends in a CRC-16 whose low byte is 0, which the parser must not take for padding).
    func testCorpusFaultyNeverCrashes() throws {
        for path in try corpusFiles("faulty") {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            do {
                let d = try decode(path, keepPCM: false)
                if ["02", "05", "10"].contains(where: name.hasPrefix), let match = d.decoder.md5Matches {
                    XCTAssertTrue(match, name)
                }
            } catch let error as AudioError {
                XCTAssertFalse(["02", "05", "10"].contains(where: name.hasPrefix), "\(name) should decode: \(error)")
            }
        }
    }

    /// The FLAC fixtures decode to their STREAMINFO MD5 and, with ffmpeg, to its s16le output.
    func testFixturesMatchMD5AndFFmpeg() throws {
        let paths = fixtureFiles("flac", extensions: ["flac"])
        XCTAssertFalse(paths.isEmpty)
        for path in paths {
            let d = try decode(path, as: .int16)
            if let match = d.decoder.md5Matches { XCTAssertTrue(match, path) }
            let reference = try ffmpeg(["-i", path, "-f", "s16le", "-"])
            assertSameBytes(d.pcm, reference, path)
        }
    }

    /// Int16, Int32 and Float32, interleaved and planar, are the same samples.
    func testOutputFormatsAgree() throws {
        for name in ["flac_24bit_24k.flac", "flac_5.1.flac", "flac_default.flac"] {
            let path = fixturesDirectory + "/flac/" + name
            let i32 = try decode(path, as: .int32).pcm
            XCTAssertEqual(try decode(path, as: .int32, interleaved: false, perCall: 1).pcm, i32, name)
            let i16 = try decode(path, as: .int16, interleaved: false).pcm
            let f32 = try decode(path, as: .float32).pcm
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

    /// Damaged frames throw 'bada' and leave the output untouched; they never trap.
    func testDamagedFramesThrowBadData() throws {
        let path = fixturesDirectory + "/flac/flac_default.flac"
        let file = try AudioFile(path: path)
        let p = try file.properties
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: 1)
        let d0 = try XCTUnwrap(descriptions?.first)
        var frame = Array(data[Int(d0.startOffset)..<Int(d0.startOffset) + Int(d0.dataByteSize)])
        let decoder = try FLACDecoder(format: p.dataFormat!, magicCookie: p.magicCookie, output: .int16)
        let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 22050, channels: 2, interleaved: true, frameCapacity: 4096)
        try frame.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
        XCTAssertEqual(buffer.frameLength, 4096)
        var rng = SeededGenerator(seed: 9639)
        for trial in 0..<300 {
            var bad = frame
            switch trial % 3 {
            case 0: bad[Int.random(in: 0..<bad.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            case 1: bad = Array(bad.prefix(Int.random(in: 0..<bad.count, using: &rng)))
            default: bad[Int.random(in: 6..<bad.count, using: &rng)] ^= 0x10
            }
            buffer.frameLength = 0
            do {
                try bad.withBytes { (raw) throws(AudioError) in try decoder.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
                XCTFail("trial \(trial): a damaged frame decoded")
            } catch {
                XCTAssertEqual(error.code, .codecBadData, "trial \(trial)")
                XCTAssertEqual(buffer.frameLength, 0)
            }
        }
        frame.removeAll()
    }
}

import Foundation
import XCTest
@testable import TonearmCodecs
import Tonearm
import TonearmTestSupport

/// The HE-AAC v2 fixtures (Tests/Fixtures/aache/ps_*) end to end: the AAC decoder's core, the
/// SBR decoder, and ``PSDecoder`` between SBR's HF adjustment and two synthesis banks (as the
/// SBR decoder of a mono element calls it for 'aacp'), against ffmpeg's float decoder (the
/// goldens, and ffmpeg's whole decode where it is installed).
final class PSFixtureTests: XCTestCase {
    /// A fixture decoded as 'aacp', interleaved stereo, and the PS payloads refused.
    static func decode(_ path: String) throws -> (samples: [Float], refused: Int) {
        let stream = try XCTUnwrap(try PSParameterTests.facts(path)["stream"] as? [String: Any])
        return try decode(path, coreRate: try XCTUnwrap(stream["coreRate"] as? Int))
    }

    static func decode(_ path: String, coreRate: Int) throws -> (samples: [Float], refused: Int) {
        let file = try AudioFile(path: path)
        var format = try XCTUnwrap(try file.properties.dataFormat)
        format.formatID = .mpeg4AAC_HE_V2
        format.sampleRate = Double(2 * coreRate)
        format.channelsPerFrame = 2
        let aac = try AACDecoder(format: format, magicCookie: try file.magicCookie, output: .float32)
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: format.sampleRate, channels: 2, interleaved: true,
                               frameCapacity: 2048)
        let count = Int(try file.properties.audioDataPacketCount ?? 0)
        var output = [Float]()
        for i in 0..<count {
            let (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
            buffer.frameLength = 0
            try data.withBytes { (raw) throws(AudioError) in try aac.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
            buffer.withUnsafeMutableSamples(Float.self) { output += $0.prefix(2 * buffer.frameLength) }
        }
        return (output, aac.heaac?.refusedPSPayloads ?? 0)
    }

    static let rmsLimit = 0x1p-15 / 12.0.squareRoot(), maxLimit = 0x1p-14

    /// Against the committed goldens (ffmpeg's first 8192 frames) and ffmpeg's whole decode,
    /// live; prints the measures per channel and 2048-sample block.
    func testFixturesMatchFFmpeg() throws {
        for path in try PSParameterTests.psFixtures() {
            let name = String(path.split(separator: "/").last ?? "")
            let (ours, refused) = try Self.decode(path)
            XCTAssertEqual(refused, 0, name)
            let golden = MPEGDecoderTests.floats(try MPEGDecoderTests.decode(String(path[..<path.lastIndex(of: ".")!]) + ".golden.flac").bytes)
            let g = MPEGDecoderTests.accuracy(Array(ours.prefix(golden.count)), golden, channels: 2)
            XCTAssertLessThan(g.rms.max() ?? 1, Self.rmsLimit, "\(name) against its golden")
            XCTAssertLessThanOrEqual(g.max.max() ?? 1, Self.maxLimit, "\(name) against its golden")
            // ffmpeg's whole decode, live: the golden holds only its first 16384 samples.
            _ = try requireTool("ffmpeg")
            let reference = try AACDecoderTests.ffmpegF32(path, decoder: path.hasSuffix(".loas") ? "aac_latm" : "aac")
            XCTAssertGreaterThan(reference.count, golden.count, name)
            let a = MPEGDecoderTests.accuracy(ours, reference, channels: 2)
            var blocks = [String]()
            for b in 0..<min(ours.count, reference.count) / 4096 {
                let o = Array(ours[b * 4096..<(b + 1) * 4096]), r = Array(reference[b * 4096..<(b + 1) * 4096])
                let x = MPEGDecoderTests.accuracy(o, r, channels: 2)
                if x.rms.max()! > Self.rmsLimit || x.max.max()! > Self.maxLimit {
                    blocks.append(String(format: "%d:%.1e/%.1e", b, x.rms.max()!, x.max.max()!))
                }
            }
            // The stereo image PS makes: the RMS of L − R in the reference, far above the gate.
            var side = 0.0
            for i in 0..<reference.count / 2 { side += pow(Double(reference[2 * i] - reference[2 * i + 1]), 2) }
            side = (side / Double(reference.count / 2)).squareRoot()
            XCTAssertGreaterThan(side, 100 * Self.rmsLimit, name)
            print(String(format: "PS %@: rms %.2e %.2e, max %.2e %.2e over %d frames (L-R rms %.2e); blocks beyond the gate: %@", name,
                         a.rms[0], a.rms[1], a.max[0], a.max[1], min(ours.count, reference.count) / 2, side,
                         blocks.isEmpty ? "none" : blocks.joined(separator: " ")))
            XCTAssertEqual(ours.count, reference.count, name)
            XCTAssertLessThan(a.rms.max() ?? 1, Self.rmsLimit, name)
            XCTAssertLessThanOrEqual(a.max.max() ?? 1, Self.maxLimit, name)
        }
    }

}

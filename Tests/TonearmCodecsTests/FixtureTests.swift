import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// The committed fixtures (Tests/Fixtures/pcm), read through AudioFile, decoded to s16le
/// and f32le, and hashed against the sha256 of ffmpeg's decode recorded in each fixture's
/// golden JSON: every container of the PCM family, every decoder.
final class FixtureTests: XCTestCase {
    private var fixtureDirectory: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/Fixtures/pcm"
    }

    private func payload(_ path: String) throws -> AudioPayload? { try readPayload(path) }

    func testFixturesMatchTheirGoldenHashes() throws {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: fixtureDirectory)) ?? [])
            .filter { !$0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
        guard !names.isEmpty else { return XCTFail("no fixtures in \(fixtureDirectory)") }
        var checked: [String] = []
        for name in names {
            let path = fixtureDirectory + "/" + name
            let stem = path[..<(path.lastIndex(of: ".") ?? path.endIndex)]
            guard let json = FileManager.default.contents(atPath: stem + ".json"),
                  let golden = try JSONSerialization.jsonObject(with: json) as? [String: Any],
                  let payload = try payload(path) else { continue }
            for (format, key) in [(PCMBuffer.CommonFormat.int16, "s16leSHA256"), (.float32, "f32leSHA256")] {
                guard let expected = golden[key] as? String else { continue }
                let decoder = try CodecRegistry.makeDecoder(for: payload.format, magicCookie: payload.cookie, output: format)
                let bytes = try decodeStream(decoder, payload.data, bytesPerPacket: Int(payload.format.bytesPerPacket),
                                             sampleFormat: format, packetsPerCall: 4096)
                XCTAssertEqual(SHA256.hex(bytes), expected, "\(name) → \(key)")
                if let frames = golden["frames"] as? Int, let channels = golden["channels"] as? Int {
                    XCTAssertEqual(bytes.count, frames * channels * format.bytesPerSample, "\(name): frames")
                }
            }
            checked.append(name)
        }
        XCTAssertTrue(checked.contains { $0.hasPrefix("wav_") }, "no WAV fixture was checked")
        for name in ["wav_ima_adpcm.wav", "wav_ms_adpcm.wav", "caf_ima4.caf", "aifc_ima4.aifc", "wav_ulaw.wav",
                     "au_ulaw.au", "w64_s16le.w64", "rf64_s16le.wav", "au_f32be.au"] where names.contains(name) {
            XCTAssertTrue(checked.contains(name), "\(name) was not checked")
        }
    }
}

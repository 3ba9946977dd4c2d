import Foundation
import TonearmCore
import TonearmTestSupport
import XCTest

/// TonearmCore's AES-128-CBC against OpenSSL, and on the encrypted HLS fixtures (ffmpeg's own
/// encryption in hls/aes, OpenSSL's with two keys and implicit IVs in hls/aes-rotate).
final class AES128OracleTests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// `openssl enc -aes-128-cbc` (PKCS#7 padding, its default) encrypts random data of
    /// lengths around the block size and larger to the bytes `encryptCBC` gives, and
    /// `decryptCBC` gives the data back from OpenSSL's output.
    func testMatchesOpenSSLOnRandomData() throws {
        let openssl = try requireTool("openssl")
        let dir = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var rng = SeededGenerator(seed: 20)
        for length in [0, 1, 15, 16, 17, 31, 32, 33, 188, 1000, 18236, 65_541] {
            let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let iv = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let path = dir + "/plain-\(length)"
            try writeWholeFile(path, data)
            let expected = try runToolData(openssl, ["enc", "-aes-128-cbc", "-K", hex(key), "-iv", hex(iv), "-in", path])
            XCTAssertEqual(expected.count, (length / 16 + 1) * 16, "openssl's output for \(length) bytes")
            let aes = try AES128(key: key)
            XCTAssertEqual(try aes.encryptCBC(data, iv: iv), expected, "encrypt \(length) bytes")
            XCTAssertEqual(try aes.decryptCBC(expected, iv: iv), data, "decrypt \(length) bytes")
        }
    }

    /// Each encrypted fixture segment decrypts, with the key file beside the playlist and the
    /// IV the golden says the segment uses, to the plaintext OpenSSL gave (size and SHA-256);
    /// aes-rotate's plaintexts are ts-64k's segments byte for byte.
    func testDecryptsTheEncryptedHLSFixtures() throws {
        for name in ["aes", "aes-rotate"] {
            let golden = try readGolden("hls/\(name).json")
            let segments = try XCTUnwrap(golden["segments"] as? [[String: Any]])
            XCTAssertEqual(segments.count, 5, name)
            var keysSeen: Set<String> = []
            for (index, segment) in segments.enumerated() {
                let uri = try XCTUnwrap(segment["uri"] as? String)
                let key = try XCTUnwrap(segment["key"] as? [String: Any])
                let keyURI = try XCTUnwrap(key["uri"] as? String)
                keysSeen.insert(keyURI)
                let keyBytes = try readWholeFile("\(fixturesDirectory)/hls/\(name)/\(keyURI)")
                XCTAssertEqual(hex(keyBytes), key["keyHex"] as? String)
                let iv = hexBytes(try XCTUnwrap(key["effectiveIV"] as? String))
                let cipher = try readWholeFile("\(fixturesDirectory)/hls/\(name)/\(uri)")
                let plain = try AES128(key: keyBytes).decryptCBC(cipher, iv: iv)
                XCTAssertEqual(plain.count, segment["plainSize"] as? Int, "\(name)/\(uri)")
                XCTAssertEqual(SHA256.hex(plain), segment["plainSHA256"] as? String, "\(name)/\(uri)")
                XCTAssertEqual(plain.first, 0x47, "\(name)/\(uri) decrypts to TS packets")
                if name == "aes-rotate" {
                    // RFC 8216 §5.2: no IV attribute, so the IV is the media sequence number.
                    XCTAssertEqual(iv, [UInt8](repeating: 0, count: 15) + [UInt8(7 + index)])
                    XCTAssertEqual(plain, try readWholeFile("\(fixturesDirectory)/hls/ts-64k/\(uri)"), uri)
                }
            }
            XCTAssertEqual(keysSeen, name == "aes" ? ["key.bin"] : ["key1.bin", "key2.bin"])
        }
    }

    private func readGolden(_ path: String) throws -> [String: Any] {
        let data = Data(try readWholeFile(fixturesDirectory + "/" + path))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

import XCTest
import TonearmCore

final class AES128Tests: XCTestCase {
    private func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    private func block(_ hex: String) -> SIMD16<UInt8> { SIMD16(bytes(hex)) }

    /// FIPS-197 Appendix C.1: the AES-128 example.
    func testFIPS197AppendixC1() throws {
        let aes = try AES128(key: bytes("000102030405060708090a0b0c0d0e0f"))
        var b = block("00112233445566778899aabbccddeeff")
        aes.encryptBlock(&b)
        XCTAssertEqual(b, block("69c4e0d86a7b0430d8cdb78070b4c55a"))
        aes.decryptBlock(&b)
        XCTAssertEqual(b, block("00112233445566778899aabbccddeeff"))
    }

    /// NIST SP 800-38A F.2.1 (CBC-AES128.Encrypt) and F.2.2 (CBC-AES128.Decrypt).
    func testSP800_38A_CBC() throws {
        let aes = try AES128(key: bytes("2b7e151628aed2a6abf7158809cf4f3c"))
        let iv = bytes("000102030405060708090a0b0c0d0e0f")
        let plain = bytes("6bc1bee22e409f96e93d7e117393172a" + "ae2d8a571e03ac9c9eb76fac45af8e51"
                          + "30c81c46a35ce411e5fbc1191a0a52ef" + "f69f2445df4f9b17ad2b417be66c3710")
        let cipher = bytes("7649abac8119b246cee98e9b12e9197d" + "5086cb9b507219ee95db113a917678b2"
                           + "73bed6b8e3c1743b7116e69e22229516" + "3ff1caa1681fac09120eca307586e1a7")
        XCTAssertEqual(try aes.encryptCBC(plain, iv: iv, padding: false), cipher)
        XCTAssertEqual(try aes.decryptCBC(cipher, iv: iv, padding: false), plain)
        // Each block alone decrypts with the previous ciphertext block as its IV.
        XCTAssertEqual(try aes.decryptCBC(Array(cipher[32..<48]), iv: Array(cipher[16..<32]), padding: false),
                       Array(plain[32..<48]))
    }

    /// PKCS#7: 1 to 16 bytes of padding, a whole block of 16 when the data fills its blocks.
    func testPKCS7RoundTripAtEveryLength() throws {
        let aes = try AES128(key: [UInt8](repeating: 0x42, count: 16))
        let iv = (0..<16).map { UInt8($0 * 7) }
        for length in 0...49 {
            let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let cipher = try aes.encryptCBC(data, iv: iv)
            XCTAssertEqual(cipher.count, (length / 16 + 1) * 16, "length \(length)")
            XCTAssertEqual(try aes.decryptCBC(cipher, iv: iv), data, "length \(length)")
            // Without padding removal, the padding bytes are there to see.
            let raw = try aes.decryptCBC(cipher, iv: iv, padding: false)
            let n = 16 - length % 16
            XCTAssertEqual(Array(raw.suffix(n)), [UInt8](repeating: UInt8(n), count: n), "length \(length)")
        }
    }

    /// Bad padding, partial blocks and wrong sizes are errors, never a crash.
    func testMalformedInputsThrow() throws {
        let key = [UInt8](repeating: 1, count: 16), iv = [UInt8](repeating: 2, count: 16)
        let aes = try AES128(key: key)
        func category(_ body: () throws -> Void) -> AudioError.Category? {
            do { try body() } catch { return (error as? AudioError)?.category }
            return nil
        }
        // A length that is not a multiple of 16, with and without padding; no data at all.
        for length in [1, 15, 17, 31] {
            let data = [UInt8](repeating: 0, count: length)
            XCTAssertEqual(category { _ = try aes.decryptCBC(data, iv: iv) }, .malformed, "length \(length)")
            XCTAssertEqual(category { _ = try aes.decryptCBC(data, iv: iv, padding: false) }, .malformed)
            XCTAssertEqual(category { _ = try aes.encryptCBC(data, iv: iv, padding: false) }, .usage)
        }
        XCTAssertEqual(category { _ = try aes.decryptCBC([], iv: iv) }, .malformed)
        XCTAssertEqual(try aes.decryptCBC([], iv: iv, padding: false), [])
        // Plaintexts whose last block ends in each kind of bad padding, encrypted without padding.
        let goodStart = [UInt8](repeating: 9, count: 16)
        let badTails: [[UInt8]] = [
            [UInt8](repeating: 0xAA, count: 15) + [0],             // a pad length of 0
            [UInt8](repeating: 0xAA, count: 15) + [17],            // longer than a block
            [UInt8](repeating: 0xAA, count: 15) + [0xFF],
            [UInt8](repeating: 0xAA, count: 13) + [3, 2, 3],       // one byte differs
            [UInt8](repeating: 0xAA, count: 16 - 1) + [16],        // 16, but the block is not all 16s
        ]
        for tail in badTails {
            let cipher = try aes.encryptCBC(goodStart + tail, iv: iv, padding: false)
            XCTAssertEqual(category { _ = try aes.decryptCBC(cipher, iv: iv) }, .malformed, "\(tail)")
        }
        // A whole block of 16s is valid padding and leaves the block before it.
        let full = try aes.encryptCBC(goodStart + [UInt8](repeating: 16, count: 16), iv: iv, padding: false)
        XCTAssertEqual(try aes.decryptCBC(full, iv: iv), goodStart)
        // A wrong key almost never leaves valid padding; here it does not.
        let cipher = try aes.encryptCBC(Array("a segment".utf8), iv: iv)
        let other = try AES128(key: [UInt8](repeating: 3, count: 16))
        XCTAssertEqual(category { _ = try other.decryptCBC(cipher, iv: iv) }, .malformed)
        // Keys and IVs of the wrong size.
        for size in [0, 15, 17, 32] {
            let wrong = [UInt8](repeating: 0, count: size)
            XCTAssertEqual(category { _ = try AES128(key: wrong) }, .usage, "key of \(size)")
            XCTAssertEqual(category { _ = try aes.decryptCBC(cipher, iv: wrong) }, .usage, "IV of \(size)")
            XCTAssertEqual(category { _ = try aes.encryptCBC(cipher, iv: wrong) }, .usage, "IV of \(size)")
        }
    }

    /// Release-build throughput of CBC decryption; `TONEARM_AES_BENCH=1` prints it (MB/s).
    func testDecryptThroughput() throws {
        let aes = try AES128(key: (0..<16).map { UInt8($0) })
        let iv = [UInt8](repeating: 0, count: 16)
        let data = try aes.encryptCBC((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) }, iv: iv)
        let start = ContinuousClock.now
        let plain = try aes.decryptCBC(data, iv: iv)
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        XCTAssertEqual(plain.count, 1 << 20)
        XCTAssertEqual(plain[12345], UInt8(truncatingIfNeeded: 12345))
        if ProcessInfo.processInfo.environment["TONEARM_AES_BENCH"] != nil {
            print("AES-128-CBC decrypt: \(Double(data.count) / 1e6 / seconds) MB/s")
        }
    }
}

import XCTest
import TonearmCore

final class MD5Tests: XCTestCase {
    private func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    /// RFC 1321 appendix A.5.
    func testRFC1321Suite() {
        let cases: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (text, digest) in cases { XCTAssertEqual(hex(MD5.digest(Array(text.utf8))), digest, text) }
    }

    /// Feeding in pieces of every size gives the one-shot digest, across block edges.
    func testIncrementalMatchesOneShot() {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        let whole = MD5.digest(data)
        for piece in [1, 3, 63, 64, 65, 200] {
            var h = MD5()
            var i = 0
            while i < data.count {
                let n = min(piece, data.count - i)
                h.update(Array(data[i..<i + n]))
                i += n
            }
            XCTAssertEqual(h.finalize(), whole, "pieces of \(piece)")
        }
        // 55, 56 and 64 bytes straddle the padding boundary.
        XCTAssertEqual(hex(MD5.digest([UInt8](repeating: 0x61, count: 56))), "3b0c8ac703f828b04c6c197006d17218")
    }
}

import XCTest
@testable import TonearmCodecs

final class ADPCMTableTests: XCTestCase {
    func testIMADifferencesFollowBothForms() {
        let t = IMAADPCM.tables
        // Step 7 (index 0), code 7: 7/8 + 7 + 7/2 + 7/4 = 0 + 7 + 3 + 1 = 11 bit by bit,
        // but (2·7 + 1)·7 / 8 = 13 multiplied; code 15 is the same, negative.
        XCTAssertEqual(t.bitwise[7], 11)
        XCTAssertEqual(t.multiply[7], 13)
        XCTAssertEqual(t.bitwise[15], -11)
        XCTAssertEqual(t.multiply[15], -13)
        // Step 32767 (index 88), code 0: 32767 >> 3.
        XCTAssertEqual(t.bitwise[88 * 16], 4095)
        // Index changes: −1 for 0–3 (clamped at 0), +8 for 7 (clamped at 88).
        XCTAssertEqual(t.nextRow[3], 0)
        XCTAssertEqual(t.nextRow[7], 8 * 16)
        XCTAssertEqual(t.nextRow[10 * 16 + 12], 12 * 16)  // code 12 = magnitude 4: +2
        XCTAssertEqual(t.nextRow[85 * 16 + 7], 88 * 16)
    }

    func testMSDeltaAdaptsAndClamps() {
        var s = MSChannelState(coefficient1: 256, coefficient2: 0, delta: 16, sample1: 100, sample2: 0)
        MSADPCMDecoder.adaptation.withUnsafeBufferPointer { a in
            // Code 0: prediction 100·256/256 = 100; delta 16·230/256 = 14 → clamped to 16.
            XCTAssertEqual(s.expand(0, a), 100)
            XCTAssertEqual(s.delta, 16)
            // Code 7: 100 + 7·16 = 212; delta 16·614/256 = 38.
            XCTAssertEqual(s.expand(7, a), 212)
            XCTAssertEqual(s.delta, 38)
            // Code 8 (−8): 212 − 8·38 = −92, truncating division of a negative prediction.
            XCTAssertEqual(s.expand(8, a), -92)
            var negative = MSChannelState(coefficient1: 460, coefficient2: -208, delta: 16, sample1: -3, sample2: 0)
            // (−3·460)/256 = −5.39 → −5 (toward zero, not −6).
            XCTAssertEqual(negative.expand(0, a), -5)
        }
    }
}

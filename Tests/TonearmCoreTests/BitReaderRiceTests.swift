import XCTest
import TonearmCore

final class BitReaderRiceTests: XCTestCase {
    /// Writes values MSB first, as the reader expects.
    private struct Writer {
        var bytes: [UInt8] = []
        var bits = 0
        mutating func put(_ v: UInt64, _ n: Int) {
            for k in stride(from: n - 1, through: 0, by: -1) {
                if bits % 8 == 0 { bytes.append(0) }
                if (v >> UInt64(k)) & 1 == 1 { bytes[bits / 8] |= 0x80 >> UInt8(bits % 8) }
                bits += 1
            }
        }
        mutating func rice(_ s: Int32, _ k: Int) {
            let u = s >= 0 ? UInt64(s) << 1 : (UInt64(-Int64(s)) << 1) - 1
            let q = Int(u >> UInt64(k))
            for _ in 0..<q { put(0, 1) }
            put(1, 1)
            if k > 0 { put(u & ((1 << UInt64(k)) - 1), k) }
        }
    }

    func testRiceRunsMatchAWriter() {
        var rng = SystemRandomNumberGenerator()
        for k in [0, 1, 5, 14, 20, 30] {
            var w = Writer()
            w.put(5, 3)  // start off the byte boundary
            let values: [Int32] = (0..<500).map { i in
                let span = Int32(min(Int64(Int32.max) / 2, (Int64(1) << Int64(k + 3))))
                return i % 50 == 0 ? Int32(i * 3) : Int32.random(in: -span...span, using: &rng)
            }
            for v in values { w.rice(v, k) }
            var r = BitReader(w.bytes)
            XCTAssertEqual(r.read(3), 5)
            var out = [Int32](repeating: 0, count: values.count)
            XCTAssertTrue(out.withUnsafeMutableBufferPointer { r.readRiceSigned(into: $0.baseAddress!, count: values.count, parameter: k) })
            XCTAssertEqual(out, values, "k = \(k)")
            XCTAssertEqual(r.bitPosition, w.bits)
            // One code more than there is fails and leaves the position alone.
            XCTAssertFalse(out.withUnsafeMutableBufferPointer { r.readRiceSigned(into: $0.baseAddress!, count: 1, parameter: k) || r.bitsRemaining > 7 })
        }
    }

    /// The block Rice writer codes exactly as one writeRiceSigned per value: every parameter
    /// FLAC uses, codes longer than 32 bits (small parameters, big values), runs long enough to
    /// fill its word buffer several times, and a start off the byte boundary.
    func testRiceBlockWriterMatchesSingleWrites() {
        var state: UInt32 = 12345
        func next() -> UInt32 {
            state = state &* 1_664_525 &+ 1_013_904_223
            return state
        }
        for k in [0, 1, 2, 5, 12, 14, 15, 20, 30] {
            let values: [Int32] = (0..<3000).map { i in
                // Quotients around 70 (codes past 32 bits), at k = 30 the extremes; else below 16.
                let far = Int32(min(Int64(Int32.max), Int64(35 + i % 7) << Int64(k)))
                switch i % 97 {
                case 0: return far
                case 1: return -far
                default: return Int32(bitPattern: next()) >> Int32(31 - min(31, k + 3))
                }
            }
            var single = BitWriter(), block = BitWriter()
            single.write(5, bits: 3)
            block.write(5, bits: 3)
            for v in values { single.writeRiceSigned(v, parameter: k) }
            values.withUnsafeBufferPointer { block.writeRiceSignedBlock($0.baseAddress!, count: 1000, parameter: k) }
            values.withUnsafeBufferPointer { block.writeRiceSignedBlock($0.baseAddress! + 1000, count: 2000, parameter: k) }
            XCTAssertEqual(block.bitCount, single.bitCount, "k = \(k)")
            XCTAssertEqual(block.takeBytes(), single.takeBytes(), "k = \(k)")
        }
    }

    func testUnaryAndWideReads() {
        var w = Writer()
        w.put(0, 100)
        w.put(1, 1)
        w.put(0x1234_5678_9ABC_DEF0, 64)
        w.put(0x5A, 7)
        var r = BitReader(w.bytes)
        XCTAssertEqual(r.readUnary(), 100)
        XCTAssertEqual(r.read(64), 0x1234_5678_9ABC_DEF0)
        XCTAssertEqual(r.readSigned(7), -38)
        XCTAssertNil(r.readUnary())
        var short = BitReader([0, 0, 0])
        XCTAssertNil(short.readUnary())
        XCTAssertEqual(short.bitPosition, 0)
    }
}

import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmTestSupport

/// A range encoder written from RFC 6716 §5.1 (test only), to check the decoder symbol by
/// symbol: every call kind, random symbols, decoded back, with tell() agreeing.
private struct RangeEncoder {
    var front: [UInt8] = []
    var back: [UInt8] = []
    var low: UInt32 = 0
    var range: UInt32 = 1 << 31
    var rem = -1
    var ext = 0
    var endWindow: UInt32 = 0
    var endBits = 0
    var totalBits = 33

    mutating func carryOut(_ c: Int) {
        if c != 255 {
            let carry = c >> 8
            if rem >= 0 { front.append(UInt8(truncatingIfNeeded: rem + carry)) }
            while ext > 0 {
                front.append(UInt8(truncatingIfNeeded: 255 + carry))
                ext -= 1
            }
            rem = c & 255
        } else {
            ext += 1
        }
    }

    mutating func normalize() {
        while range <= 1 << 23 {
            carryOut(Int(low >> 23))
            low = (low << 8) & ((1 << 31) - 1)
            range <<= 8
            totalBits += 8
        }
    }

    mutating func encode(_ fl: UInt32, _ fh: UInt32, _ ft: UInt32) {
        let r = range / ft
        if fl > 0 {
            low += range - r * (ft - fl)
            range = r * (fh - fl)
        } else {
            range -= r * (ft - fh)
        }
        normalize()
    }

    mutating func bit(_ b: Bool, logp: Int) {
        let s = range >> UInt32(logp)
        let r = range - s
        if b { low += r }
        range = b ? s : r
        normalize()
    }

    mutating func icdf(_ s: Int, _ table: [UInt8], bits: Int) {
        let r = range >> UInt32(bits)
        if s > 0 {
            low += range - r * UInt32(table[s - 1])
            range = r * UInt32(table[s - 1] - table[s])
        } else {
            range -= r * UInt32(table[s])
        }
        normalize()
    }

    mutating func bits(_ v: UInt32, _ n: Int) {
        var window = endWindow, used = endBits
        if used + n > 32 {
            repeat {
                back.append(UInt8(window & 255))
                window >>= 8
                used -= 8
            } while used >= 8
        }
        window |= v << UInt32(used)
        used += n
        endWindow = window
        endBits = used
        totalBits += n
    }

    mutating func uint(_ v: UInt32, _ total: UInt32) {
        let ft = total - 1
        var b = 32 - ft.leadingZeroBitCount
        if b > 8 {
            b -= 8
            let top = (ft >> UInt32(b)) + 1
            encode(v >> UInt32(b), (v >> UInt32(b)) + 1, top)
            bits(v & ((1 << UInt32(b)) - 1), b)
        } else {
            encode(v, v + 1, total)
        }
    }

    func tell() -> Int { totalBits - (32 - range.leadingZeroBitCount) }

    /// Flushes into a frame of `size` bytes (front bytes, zeros, then the raw bits reversed).
    mutating func finish(size: Int) -> [UInt8] {
        var l = 32 - (32 - range.leadingZeroBitCount)
        var mask: UInt32 = ((1 << 31) - 1) >> UInt32(l)
        var end = (low &+ mask) & ~mask
        if (end | mask) >= low &+ range {
            l += 1
            mask >>= 1
            end = (low &+ mask) & ~mask
        }
        while l > 0 {
            carryOut(Int(end >> 23))
            end = (end << 8) & ((1 << 31) - 1)
            l -= 8
        }
        if rem >= 0 || ext > 0 { carryOut(0) }
        var window = endWindow, used = endBits
        while used >= 8 {
            back.append(UInt8(window & 255))
            window >>= 8
            used -= 8
        }
        var out = front + [UInt8](repeating: 0, count: max(0, size - front.count - back.count)) + back.reversed()
        if used > 0 {
            let at = out.count - back.count - 1
            out[at] |= UInt8(window & 255)
        }
        return out
    }
}

final class OpusRangeCoderTests: XCTestCase {
    private enum Symbol {
        case freq(UInt32, UInt32, UInt32), bin(UInt32, Int), bit(Bool, Int), icdf(Int), bits(UInt32, Int), uint(UInt32, UInt32)
    }

    private static let table: [UInt8] = [200, 150, 90, 40, 10, 0]

    func testRoundTripEveryCallKind() throws {
        var g = SeededGenerator(seed: 6716)
        for round in 0..<200 {
            var symbols: [Symbol] = []
            var enc = RangeEncoder()
            var tells: [Int] = []
            for _ in 0..<Int.random(in: 1...300, using: &g) {
                let s: Symbol
                switch Int.random(in: 0..<6, using: &g) {
                case 0:
                    let ft = UInt32.random(in: 2...60000, using: &g)
                    let fl = UInt32.random(in: 0..<ft, using: &g)
                    s = .freq(fl, UInt32.random(in: (fl + 1)...ft, using: &g), ft)
                case 1:
                    let b = Int.random(in: 1...15, using: &g)
                    s = .bin(UInt32.random(in: 0..<(1 << UInt32(b)), using: &g), b)
                case 2: s = .bit(Bool.random(using: &g), Int.random(in: 1...15, using: &g))
                case 3: s = .icdf(Int.random(in: 0..<Self.table.count, using: &g))
                case 4:
                    let n = Int.random(in: 0...25, using: &g)
                    s = .bits(n == 0 ? 0 : UInt32.random(in: 0...(UInt32.max >> UInt32(32 - n)), using: &g), n)
                default:
                    let t = UInt32.random(in: 2...UInt32.max, using: &g)
                    s = .uint(UInt32.random(in: 0..<t, using: &g), t)
                }
                switch s {
                case let .freq(fl, fh, ft): enc.encode(fl, fh, ft)
                case let .bin(v, b): enc.encode(v, v + 1, 1 << UInt32(b))
                case let .bit(v, p): enc.bit(v, logp: p)
                case let .icdf(v): enc.icdf(v, Self.table, bits: 8)
                case let .bits(v, n): enc.bits(v, n)
                case let .uint(v, t): enc.uint(v, t)
                }
                symbols.append(s)
                tells.append(enc.tell())
            }
            let size = (enc.tell() + 7) / 8 + Int.random(in: 0...3, using: &g)
            let frame = enc.finish(size: size)
            XCTAssertLessThanOrEqual(frame.count, max(size, frame.count))
            try frame.withUnsafeBytes { bytes in
                var rd = OpusRangeDecoder(bytes)
                for (i, s) in symbols.enumerated() {
                    switch s {
                    case let .freq(fl, fh, ft):
                        let f = rd.decode(ft)
                        XCTAssert(f >= fl && f < fh, "round \(round) symbol \(i): \(f) not in \(fl)..<\(fh) after \(symbols[max(0, i - 3)..<i])")
                        if !(f >= fl && f < fh) { throw FirstMismatch() }
                        rd.update(fl, fh, ft)
                    case let .bin(v, b):
                        XCTAssertEqual(rd.decodeBin(b), v, "round \(round) symbol \(i)")
                        rd.update(v, v + 1, 1 << UInt32(b))
                    case let .bit(v, p): XCTAssertEqual(rd.decodeBit(logp: p), v, "round \(round) symbol \(i)")
                    case let .icdf(v): XCTAssertEqual(rd.decodeICDF(Self.table, bits: 8), v, "round \(round) symbol \(i)")
                    case let .bits(v, n): XCTAssertEqual(rd.decodeBits(n), v, "round \(round) symbol \(i)")
                    case let .uint(v, t): XCTAssertEqual(rd.decodeUInt(t), v, "round \(round) symbol \(i)")
                    }
                    XCTAssertEqual(rd.tell(), tells[i], "round \(round) symbol \(i): tell")
                    if rd.tell() != tells[i] { throw FirstMismatch() }
                }
                XCTAssertFalse(rd.hasError)
            }
        }
    }

    /// tellFraction() is within an eighth-bit step of tell() (§4.1.6.2).
    func testTellFraction() {
        let bytes: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        bytes.withUnsafeBytes { b in
            var rd = OpusRangeDecoder(b)
            for i in 0..<100 {
                let whole = rd.tell(), frac = rd.tellFraction()
                XCTAssertLessThanOrEqual(frac, whole * 8, "step \(i)")
                XCTAssertGreaterThan(frac, (whole - 1) * 8, "step \(i)")
                _ = rd.decodeBit(logp: 1 + i % 7)
            }
        }
    }
}

/// Ends a round trip at its first failed assertion (the rest would only repeat it); the
/// failure is already recorded, so this is not a skip.
private struct FirstMismatch: Error {}

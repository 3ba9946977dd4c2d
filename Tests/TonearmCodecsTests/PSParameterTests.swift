import Foundation
import XCTest
@testable import TonearmCodecs
import Tonearm
import TonearmTestSupport

/// ps_data parsing (ISO/IEC 14496-3 §8.4, §8.6.4): payloads written here bit by bit with the
/// standard's Huffman tables, and the PS payloads of the HE-AAC v2 fixtures (Tests/Fixtures/
/// aache/ps_*, by tools/aac_sbr_forge.py), counted as the generator's inventory counts what it
/// wrote.
final class PSParameterTests: XCTestCase {
    /// An MSB-first bit writer with the Annex 8.B codes.
    struct Writer {
        var bits: [Int] = []
        mutating func put(_ v: Int, _ n: Int) { for i in stride(from: n - 1, through: 0, by: -1) { bits.append(v >> i & 1) } }
        /// The code of `value` in a table whose first entry is `offset`.
        mutating func code(_ table: [UInt32], _ value: Int, offset: Int) {
            let entry = table[value - offset]
            put(Int(entry & 0xFFFFF), Int(entry >> 20))
        }
        var bytes: [UInt8] {
            stride(from: 0, to: bits.count, by: 8).map { i in
                UInt8((0..<8).reduce(0) { $0 << 1 | (i + $1 < bits.count ? bits[i + $1] : 0) })
            }
        }
    }

    func parse(_ w: Writer, into d: PSDecoder, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        d.parse(w.bytes, bitCount: w.bits.count)
    }

    /// A header (iid_mode 1, icc_mode 0, extension), frame class 0 with 2 envelopes: IID in
    /// frequency then time direction, ICC in frequency direction, IPD/OPD with wrap-around.
    func testFrequencyAndTimeDeltas() {
        var w = Writer()
        w.put(1, 1)                 // enable_ps_header
        w.put(1, 1); w.put(1, 3)    // enable_iid, iid_mode 1: 20 bands, default quantisation
        w.put(1, 1); w.put(0, 3)    // enable_icc, icc_mode 0: 10 bands
        w.put(1, 1)                 // enable_ext
        w.put(0, 1); w.put(2, 2)    // frame_class 0, 2 envelopes
        let iid0 = (0..<20).map { [0, 3, -2, 7, -7][$0 % 5] }
        let iid1 = iid0.map { -$0 }
        w.put(0, 1)
        var prev = 0
        for v in iid0 { w.code(PSTables.iidDefaultFrequency, v - prev, offset: -14); prev = v }
        w.put(1, 1)
        for (a, b) in zip(iid0, iid1) { w.code(PSTables.iidDefaultTime, b - a, offset: -14) }
        let icc = [0, 1, 2, 3, 4, 5, 6, 7, 7, 0]
        for _ in 0..<2 {
            w.put(0, 1)
            prev = 0
            for v in icc { w.code(PSTables.iccFrequency, v - prev, offset: -7); prev = v }
        }
        // ps_extension: 11 IPD/OPD bands (iid_mode 1).
        var x = Writer()
        x.put(0, 2)                 // ps_extension_id 0
        x.put(1, 1)                 // enable_ipdopd
        let ipd = (0..<11).map { ($0 * 3) & 7 }
        for e in 0..<2 {
            x.put(e, 1)             // ipd: frequency, then time direction
            prev = 0
            for v in ipd {
                x.code(e == 0 ? PSTables.ipdFrequency : PSTables.ipdTime, e == 0 ? (v - prev) & 7 : 1, offset: 0)
                prev = v
            }
            x.put(0, 1)             // opd: frequency direction, all 5
            for b in 0..<11 { x.code(PSTables.opdFrequency, b == 0 ? 5 : 0, offset: 0) }
        }
        x.put(0, 1)                 // reserved_ps
        let size = (x.bits.count + 7) / 8
        w.put(size, 4)
        w.bits += x.bits + [Int](repeating: 0, count: size * 8 - x.bits.count)

        let d = PSDecoder()
        XCTAssertTrue(parse(w, into: d), "\(String(describing: d.lastError))")
        let p = d.parameters
        XCTAssertEqual(p.envelopeCount, 2)
        XCTAssertEqual(p.borders[0...2], [-1, 15, 31])
        XCTAssertEqual(p.iid[0..<20].map(Int.init), iid0)
        XCTAssertEqual(p.iid[34..<54].map(Int.init), iid1)
        XCTAssertEqual(p.icc[0..<10].map(Int.init), icc)
        XCTAssertEqual(p.icc[34..<44].map(Int.init), icc)
        XCTAssertEqual(p.ipd[0..<11].map(Int.init), ipd)
        XCTAssertEqual(p.ipd[34..<45].map(Int.init), ipd.map { ($0 + 1) & 7 })
        XCTAssertEqual(p.opd[0..<11].map(Int.init), [Int](repeating: 5, count: 11))
        XCTAssertEqual(p.timeCoded, [0b10, 0, 0b10, 0])
        XCTAssertTrue(p.enableIPDOPD)
        XCTAssertFalse(p.is34)

        // The next frame: no header, frame class 1 with one envelope ending at slot 20, IID
        // in time direction from the last envelope; the decoder adds an envelope to slot 31.
        var n = Writer()
        n.put(0, 1); n.put(1, 1); n.put(0, 2); n.put(20, 5)
        n.put(1, 1)
        for _ in 0..<20 { n.code(PSTables.iidDefaultTime, 1, offset: -14) }
        n.put(1, 1)
        for _ in 0..<10 { n.code(PSTables.iccTime, -1, offset: -7) }
        var y = Writer()
        y.put(0, 2); y.put(0, 1); y.put(0, 1)  // IPD/OPD off
        n.put(1, 4)
        n.bits += y.bits + [Int](repeating: 0, count: 8 - y.bits.count)
        // ICC index 0 − 1 is out of range: the payload is refused and the last values hold.
        XCTAssertFalse(parse(n, into: d))
        XCTAssertEqual(d.lastError, .indexOutOfRange)
        XCTAssertEqual(d.parameters.envelopeCount, 1)
        XCTAssertEqual(d.parameters.borders[0...1], [-1, 31])
        XCTAssertEqual(d.parameters.iid[0..<20].map(Int.init), iid1)
        XCTAssertEqual(d.parameters.previousEnvelopeCount, 2)
        XCTAssertTrue(d.parameters.enableIPDOPD)

        // The same with ICC in frequency direction is valid.
        var m = Writer()
        m.put(0, 1); m.put(1, 1); m.put(0, 2); m.put(20, 5)
        m.put(1, 1)
        let step = iid1.map { $0 < 7 ? 1 : -1 }
        for b in 0..<20 { m.code(PSTables.iidDefaultTime, step[b], offset: -14) }
        m.put(0, 1)
        for _ in 0..<10 { m.code(PSTables.iccFrequency, 0, offset: -7) }
        m.put(1, 4)
        m.bits += y.bits + [Int](repeating: 0, count: 8 - y.bits.count)
        XCTAssertTrue(parse(m, into: d), "\(String(describing: d.lastError))")
        let q = d.parameters
        XCTAssertEqual(q.codedEnvelopeCount, 1)
        XCTAssertEqual(q.envelopeCount, 2)
        XCTAssertEqual(q.borders[0...2], [-1, 20, 31])
        // Time deltas from the kept envelope (iid1), the added envelope repeating envelope 0.
        let expected = zip(iid1, step).map { $0 + $1 }
        XCTAssertEqual(q.iid[0..<20].map(Int.init), expected)
        XCTAssertEqual(q.iid[34..<54].map(Int.init), expected)
        XCTAssertEqual(q.icc[0..<10].map(Int.init), [Int](repeating: 0, count: 10))
        XCTAssertFalse(q.enableIPDOPD)
        XCTAssertEqual(q.ipd, [Int8](repeating: 0, count: 5 * 34))
    }

    /// Frame class 0 with 0 envelopes keeps the last values; the fixed borders split 32 slots
    /// evenly; a reserved mode, borders that go back and a payload cut short are refused.
    func testEnvelopesAndRefusals() {
        let d = PSDecoder()
        for (index, borders) in [(1, [31]), (0, [31]), (2, [15, 31]), (3, [7, 15, 23, 31])] {
            var w = Writer()
            w.put(1, 1); w.put(1, 1); w.put(0, 3); w.put(0, 1); w.put(0, 1)  // IID at 10 bands only
            w.put(0, 1); w.put(index, 2)
            for _ in 0..<max(0, borders.count - (index == 0 ? 1 : 0)) {
                w.put(0, 1)
                for b in 0..<10 { w.code(PSTables.iidDefaultFrequency, b == 0 ? 4 : 0, offset: -14) }
            }
            XCTAssertTrue(parse(w, into: d))
            XCTAssertEqual(Array(d.parameters.borders[1...borders.count]), borders)
            XCTAssertEqual(d.parameters.iid[0..<10].map(Int.init), [Int](repeating: 4, count: 10))
        }

        var reserved = Writer()
        reserved.put(1, 1); reserved.put(1, 1); reserved.put(6, 3)
        reserved.put(0, 8)
        XCTAssertFalse(parse(reserved, into: d))
        XCTAssertEqual(d.lastError, .reservedMode)

        var back = Writer()
        back.put(0, 1); back.put(1, 1); back.put(1, 2); back.put(20, 5); back.put(10, 5)
        back.put(0, 16)
        XCTAssertFalse(parse(back, into: d))
        XCTAssertEqual(d.lastError, .bordersNotIncreasing)

        var short = Writer()
        short.put(0, 1); short.put(0, 1); short.put(1, 2); short.put(0, 1)
        XCTAssertFalse(parse(short, into: d))
        XCTAssertEqual(d.lastError, .truncated)
        // The last valid values still hold.
        XCTAssertEqual(d.parameters.iid[0..<10].map(Int.init), [Int](repeating: 4, count: 10))
        XCTAssertEqual(d.parameters.envelopeCount, 1)
    }

    /// Index mapping between resolutions (the index mapping of §8.6.4): means truncated toward zero.
    func testParameterBandMapping() {
        var values = [Int8](repeating: 0, count: 5 * 34)
        for b in 0..<34 { values[b] = Int8(b % 7 - 3) }
        var out = [Int](repeating: 99, count: 5 * 34)
        PSDecoder.map(values, from: 34, is34: false, full: true, envelopes: 1, into: &out)
        let v = values.map(Int.init)
        XCTAssertEqual(out[0], (2 * v[0] + v[1]) / 3)
        XCTAssertEqual(out[1], (v[1] + 2 * v[2]) / 3)
        XCTAssertEqual(out[4], (v[6] + v[7]) / 2)
        XCTAssertEqual(out[18], (v[28] + v[29] + v[30] + v[31]) / 4)
        XCTAssertEqual(out[19], (v[32] + v[33]) / 2)
        XCTAssertEqual(out[9], (v[14] + v[15]) / 2)
        XCTAssertEqual(out[10], v[16])

        PSDecoder.map(values, from: 10, is34: false, full: true, envelopes: 1, into: &out)
        XCTAssertEqual(Array(out[0..<20]), (0..<20).map { v[$0 / 2] })
        PSDecoder.map(values, from: 5, is34: false, full: false, envelopes: 1, into: &out)
        XCTAssertEqual(Array(out[0..<11]), (0..<10).map { v[$0 / 2] } + [0])
        PSDecoder.map(values, from: 20, is34: true, full: true, envelopes: 1, into: &out)
        XCTAssertEqual(out[1], (v[0] + v[1]) / 2)
        XCTAssertEqual(out[4], (v[2] + v[3]) / 2)
        XCTAssertEqual(Array(out[28..<34]), [v[18], v[18], v[18], v[18], v[19], v[19]])
        PSDecoder.map(values, from: 5, is34: true, full: false, envelopes: 1, into: &out)
        XCTAssertEqual(Array(out[0..<17]), [v[0], v[0], v[0], v[1], v[1], v[1], v[2], v[2], v[2], v[2], v[3], v[3],
                                            v[4], v[4], v[4], v[4], 0])
    }

    // MARK: The fixtures

    /// Collects the PS payload of each frame: the AAC decoder hands each fill element's
    /// extension to the SBR decoder's parser, which keeps the EXTENSION_ID_PS bits.
    final class Collector: AACExtensionDecoder {
        let sbr: SBRDecoder
        var payloads: [(bytes: [UInt8], bits: Int)] = []
        var sbrFailures = 0
        init(rate: Int) { sbr = SBRDecoder(outputSampleRate: rate, channels: 1) }
        func payload(type: Int, bits: AACBits, bitCount: Int, after: AACElementReference?) {
            guard type == 13 || type == 14 else { return }
            if !sbr.parse(bits.base, bitPosition: bits.position, bitCount: bitCount, crc: type == 14, elementIsPair: false) {
                sbrFailures += 1
            }
            payloads.append((Array(sbr.psBytes[0..<(sbr.psBitCount + 7) / 8]), sbr.psBitCount))
        }
        func process(core: UnsafeMutablePointer<Float>, channels: Int, frameLength: Int) {}
    }

    static func psFixtures() throws -> [String] {
        let files = fixtureFiles("aache").filter { ($0.split(separator: "/").last ?? "").hasPrefix("ps_") && !$0.hasSuffix(".json") && !$0.hasSuffix(".flac") }
        guard !files.isEmpty else { throw skipOrFail("the HE-AAC v2 fixtures are not here: they are committed", required: true) }
        return files
    }

    static func facts(_ path: String) throws -> [String: Any] {
        let json = String(path[..<path.lastIndex(of: ".")!]) + ".json"
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(readWholeFile(json))) as? [String: Any])
    }

    /// Each frame's PS payload, through the AAC decoder's extension hook.
    static func payloads(_ path: String) throws -> [(bytes: [UInt8], bits: Int)] {
        let stream = try XCTUnwrap(try facts(path)["stream"] as? [String: Any])
        return try payloads(path, coreRate: try XCTUnwrap(stream["coreRate"] as? Int))
    }

    static func payloads(_ path: String, coreRate: Int) throws -> [(bytes: [UInt8], bits: Int)] {
        let file = try AudioFile(path: path)
        var format = try XCTUnwrap(try file.properties.dataFormat)
        format.formatID = .mpeg4AAC
        format.sampleRate = Double(coreRate)
        format.channelsPerFrame = 1
        let aac = try AACDecoder(format: format, magicCookie: try file.magicCookie, output: .float32)
        let collector = Collector(rate: 2 * coreRate)
        aac.extensionDecoder = collector
        let buffer = try XCTUnwrap(PCMBuffer(format: aac.outputFormat, frameCapacity: 1024))
        let count = Int(try file.properties.audioDataPacketCount ?? 0)
        for i in 0..<count {
            let (data, _) = try file.readPacketData(startingAt: Int64(i), count: 1)
            buffer.frameLength = 0
            try data.withBytes { (raw) throws(AudioError) in try aac.decode(raw, packetCount: 1, descriptions: nil, into: buffer) }
        }
        XCTAssertEqual(collector.sbrFailures, 0, path)
        return collector.payloads
    }

    /// Every frame's payload parses, and what the payloads hold, counted per frame and per
    /// envelope, is what the generator's inventory says it wrote.
    func testFixturePayloadsMatchTheGeneratorsInventory() throws {
        for path in try Self.psFixtures() {
            let name = String(path.split(separator: "/").last ?? "")
            let stream = try XCTUnwrap(try Self.facts(path)["stream"] as? [String: Any])
            let features = try XCTUnwrap(stream["features"] as? [String: [String: Int]])
            let expected = try XCTUnwrap(features["ps"])
            let payloads = try Self.payloads(path)
            XCTAssertEqual(payloads.count, stream["frames"] as? Int, name)
            let d = PSDecoder()
            var counts = [String: Int]()
            func add(_ key: String, _ n: Int = 1) { if n > 0 { counts[key, default: 0] += n } }
            var seen34 = false
            for (i, payload) in payloads.enumerated() {
                let header = payload.bits > 0 && payload.bytes[0] & 0x80 != 0
                XCTAssertTrue(d.parse(payload.bytes, bitCount: payload.bits), "\(name) frame \(i): \(String(describing: d.lastError))")
                let p = d.parameters
                if header { add("headers") }
                add("frameClass\(p.frameClass)")
                add("envelopes\(p.codedEnvelopeCount)")
                if p.frameClass == 1 && p.borders[p.codedEnvelopeCount] < 31 { add("lastBorderBeforeFrameEnd") }
                let coded = p.codedEnvelopeCount
                if p.enableIID {
                    add("iidMode\(p.iidMode)")
                    add("iidDt", p.timeCoded[0].nonzeroBitCount)
                    add("iidDf", coded - p.timeCoded[0].nonzeroBitCount)
                }
                if p.enableICC {
                    add("iccMode\(p.iccMode)")
                    add("iccDt", p.timeCoded[1].nonzeroBitCount)
                    add("iccDf", coded - p.timeCoded[1].nonzeroBitCount)
                }
                if p.enableIPDOPD && p.enableExtension {
                    add("ipdopdFrames")
                    add("ipdDt", p.timeCoded[2].nonzeroBitCount)
                    add("ipdDf", coded - p.timeCoded[2].nonzeroBitCount)
                    add("opdDt", p.timeCoded[3].nonzeroBitCount)
                    add("opdDf", coded - p.timeCoded[3].nonzeroBitCount)
                }
                if (p.enableIID && p.iidBands == 34) || (p.enableICC && p.iccBands == 34) { add("frames34Bands") }
                seen34 = seen34 || p.is34
                // Every index is in its range.
                for e in 0..<p.envelopeCount {
                    for b in 0..<34 {
                        XCTAssertLessThanOrEqual(abs(Int(p.iid[e * 34 + b])), p.fineIID ? 15 : 7)
                        XCTAssertTrue((0...7).contains(p.icc[e * 34 + b]) && (0...7).contains(p.ipd[e * 34 + b]))
                    }
                }
            }
            XCTAssertEqual(counts, expected, name)
            XCTAssertEqual(seen34, name.contains("34") || name.contains("switch"), name)
        }
    }
}

extension PSParameterTests {
    /// The fixtures' payloads with bits flipped, cut short or run long: no trap, and a refused
    /// payload leaves exactly the last parameters held over the frame (``PSParameters/keep()``).
    func testMutatedPayloadsAreRefusedCleanly() throws {
        var state: UInt64 = 0x2545F4914F6CDD1D
        func next(_ n: Int) -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % UInt64(max(1, n)))
        }
        var refused = 0, read = 0
        var lr = [Float](repeating: 0, count: 32 * 64), li = lr, rr = lr, ri = lr
        var xr = [Float](repeating: 0, count: 38 * 64), xi = xr
        for i in xr.indices { xr[i] = Float(next(2001) - 1000) / 1000; xi[i] = Float(next(2001) - 1000) / 1000 }
        for path in try Self.psFixtures() {
            let payloads = try Self.payloads(path)
            let d = PSDecoder()
            for round in 0..<60 {
                for payload in payloads {
                    var bytes = payload.bytes
                    var bits = payload.bits
                    switch round % 3 {
                    case 0: for _ in 0..<1 + next(4) where !bytes.isEmpty { bytes[next(bytes.count)] ^= UInt8(1 << next(8)) }
                    case 1: bits = next(bits + 1)
                    default: bytes += (0..<next(8)).map { _ in UInt8(next(256)) }; bits = bytes.count * 8 - next(8)
                    }
                    let before = d.parameters
                    if d.parse(bytes, bitCount: bits) {
                        read += 1
                    } else {
                        refused += 1
                        var expected = before
                        expected.keep()
                        XCTAssertEqual(d.parameters, expected)
                    }
                    d.process(inputReal: xr, inputImag: xi, bandLimit: 20 + next(45),
                              leftReal: &lr, leftImag: &li, rightReal: &rr, rightImag: &ri)
                }
                XCTAssertTrue((lr + li + rr + ri).allSatisfy { $0.isFinite })
            }
        }
        XCTAssertGreaterThan(refused, 100)
        XCTAssertGreaterThan(read, 100)
    }
}

import Foundation
import XCTest
import Tonearm
@testable import TonearmFormats
import TonearmTestSupport

final class AC3Tests: XCTestCase {
    static var goldens: [SyncKit.Golden] { SyncKit.goldens("ac3", extensions: ["ac3", "eac3"]) }

    func testEveryAC3Fixture() throws {
        let goldens = AC3Tests.goldens
        XCTAssertEqual(goldens.count, 5)
        // The spliced 7.1 stream decodes with errors in ffmpeg (see the fixtures README), so
        // its decoded frame count is no oracle: it has its own test below.
        for g in goldens where !g.name.contains("dependent") { try SyncKit.check(g) }
    }

    /// E-AC-3 with dependent substreams (tools/eac3_dependent.py: 5.1 independent frames,
    /// each followed by a dependent frame that adds Lrs/Rrs, every third by a second one):
    /// an independent frame and the dependent frames after it are one packet, as ffmpeg's
    /// parser hands them out, on both paths; the channels are those of the whole unit.
    func testDependentSubstreamsMergeIntoOnePacket() throws {
        let g = try XCTUnwrap(AC3Tests.goldens.first { $0.name == "eac3_7.1_dependent.eac3" })
        let bytes = try readWholeFile(g.path)
        XCTAssertEqual(g.packets, 16)
        XCTAssertEqual(g.channels, 8)
        XCTAssertEqual(Set(g.packetSizes), [1536 + 516, 1536 + 516 + 516])
        let file = try AudioFile(path: g.path)
        let f = try file.dataFormat
        XCTAssertEqual(try file.fileType, .eac3)
        XCTAssertEqual(f.formatID, .enhancedAC3)
        XCTAssertEqual(Int(f.channelsPerFrame), g.channels)
        XCTAssertEqual(f.sampleRate, Double(g.sampleRate))
        XCTAssertEqual(f.framesPerPacket, 1536)
        XCTAssertEqual(try file.audioDataPacketCount, Int64(g.packets))
        let table = try XCTUnwrap(try file.properties.packetTable)
        XCTAssertEqual(table.map { Int($0.dataByteSize) }, g.packetSizes)
        XCTAssertEqual(table.map { Int($0.startOffset) }, g.packetOffsets)
        XCTAssertEqual(try file.maximumPacketSize, UInt32(g.packetSizes.max()!))
        XCTAssertEqual(try file.audioDataByteCount, Int64(bytes.count))
        // The stream hands out the same packets, whatever the pieces.
        let fromFile = try SyncKit.filePackets(file)
        XCTAssertEqual(fromFile.data, bytes)
        let (fromStream, stream) = try SyncKit.streamPackets(bytes, chunk: 1000)
        XCTAssertEqual(fromStream, fromFile)
        XCTAssertEqual(try stream.dataFormat, f)
        XCTAssertGreaterThanOrEqual(try stream.maximumPacketSize, UInt32(g.packetSizes.max()!))
        XCTAssertNil(dripFeedMismatch(bytes))
        XCTAssertEqual(feed(bytes, pattern: .oneByteAtATime).packetSizes, g.packetSizes)
        // Seek offsets are the units' starts.
        let parser = try XCTUnwrap(try SyncKit.scannedParser(bytes, type: .eac3) as? SeekableFramedParser)
        for (i, o) in g.packetOffsets.enumerated() { XCTAssertEqual(try parser.framedByteOffset(ofPacket: Int64(i)).offset, Int64(o)) }
        // Cut after the first independent frame: its dependent frame begins no packet and is
        // passed over; the audio starts at the next unit.
        let cut = Array(bytes[1536...])
        let cutFile = try AudioFile(source: MemorySource(cut))
        XCTAssertEqual(try cutFile.dataOffset, Int64(g.packetOffsets[1] - 1536))
        XCTAssertEqual(try cutFile.audioDataPacketCount, Int64(g.packets - 1))
        XCTAssertEqual(feed(cut, pattern: .randomChunks(seed: 6, maximum: 900)).packetSizes, Array(g.packetSizes.dropFirst()))
        // A stream that ends inside a dependent frame drops it, and keeps the unit before it.
        let short = Array(bytes[..<(g.packetOffsets[1] + 1536 + 100)])
        XCTAssertEqual(try AudioFile(source: MemorySource(short)).audioDataPacketCount, 2)
        XCTAssertEqual(feed(short, pattern: .allAtOnce).packetSizes, [g.packetSizes[0], 1536])
        XCTAssertEqual(exerciseDamaged(bytes).problems, [])
    }

    func testLiveFFprobe() throws {
        _ = try requireTool("ffprobe")
        for g in AC3Tests.goldens {
            let live = try XCTUnwrap(SyncKit.liveFFprobe(g.path), g.name)
            XCTAssertEqual(live.sizes, g.packetSizes, g.name)
            XCTAssertEqual(live.offsets, g.packetOffsets, g.name)
        }
    }

    func testProbeAndFormats() throws {
        for g in AC3Tests.goldens {
            let bytes = try readWholeFile(g.path)
            XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .match(AudioFileTypeID(FourCC(g.fileType))), g.name)
            let f = try AudioFile(path: g.path).dataFormat
            XCTAssertEqual(f.framesPerPacket, 1536, g.name)  // ffmpeg's E-AC-3 uses 6 blocks
            let r = feed(bytes, pattern: .allAtOnce)
            XCTAssertEqual(r.notifications, [.fileFormat, .dataFormat, .bitRate, .dataOffset, .maximumPacketSize, .readyToProducePackets])
        }
        // An 'ec-3' file opened as 'ac-3' (by extension, say) still names itself.
        let e = try XCTUnwrap(AC3Tests.goldens.first { $0.fileType == "ec-3" })
        XCTAssertEqual(try AudioFile(source: MemorySource(try readWholeFile(e.path)), fileTypeHint: .ac3).fileType, .eac3)
        XCTAssertEqual(FormatRegistry.types(forExtension: "eac3"), [.eac3])
    }

    /// Frame sizes from the tables: every AC-3 code at each rate, and E-AC-3 fields.
    func testHeaderTables() throws {
        func ac3(_ fscod: UInt8, _ code: UInt8, acmod: UInt8 = 2, lfe: Bool = false) -> AC3Format.Header? {
            // bsid 8, bsmod 0; acmod 2 has a 2-bit dsurmod before lfeon.
            var b: [UInt8] = [0x0B, 0x77, 0, 0, fscod << 6 | code, 8 << 3, acmod << 5, 0]
            var bit = 3
            if acmod & 1 != 0 && acmod != 1 { bit += 2 }
            if acmod & 4 != 0 { bit += 2 }
            if acmod == 2 { bit += 2 }
            if lfe { let word = UInt16(b[6]) << 8 | UInt16(b[7]) | UInt16(1) << (15 - bit); b[6] = UInt8(word >> 8); b[7] = UInt8(word & 0xFF) }
            return b.withUnsafeBytes { AC3Format.Header($0.baseAddress!) }
        }
        // A/52 Table 5.18 at three points per rate: 32 and 640 kbit/s, and the 44.1 kHz odd codes.
        XCTAssertEqual(ac3(0, 0)?.length, 128)
        XCTAssertEqual(ac3(0, 37)?.length, 2560)
        XCTAssertEqual(ac3(2, 0)?.length, 192)
        XCTAssertEqual(ac3(2, 37)?.length, 3840)
        XCTAssertEqual(ac3(1, 0)?.length, 138)
        XCTAssertEqual(ac3(1, 1)?.length, 140)
        XCTAssertEqual(ac3(1, 36)?.length, 2786)
        XCTAssertEqual(ac3(1, 37)?.length, 2788)
        XCTAssertEqual(ac3(1, 20)?.length, 834)  // 192 kbit/s
        XCTAssertEqual(ac3(1, 21)?.length, 836)
        XCTAssertNil(ac3(3, 0))
        XCTAssertNil(ac3(0, 38))
        XCTAssertEqual(ac3(0, 20, acmod: 7, lfe: true)?.channels, 6)
        XCTAssertEqual(ac3(0, 20, acmod: 2, lfe: true)?.channels, 3)
        XCTAssertEqual(ac3(0, 20, acmod: 1, lfe: false)?.channels, 1)
        XCTAssertEqual(ac3(0, 20, acmod: 0)?.channels, 2)
        // E-AC-3: frmsiz 383 → 768 bytes; fscod 3 with fscod2 1: 22.05 kHz, 6 blocks.
        let e: [UInt8] = [0x0B, 0x77, 0x01, 0x7F, 0xD4 | 1, 16 << 3, 0, 0]
        let h = try XCTUnwrap(e.withUnsafeBytes { AC3Format.Header($0.baseAddress!) })
        XCTAssertTrue(h.isEnhanced)
        XCTAssertEqual(h.length, 768)
        XCTAssertEqual(h.sampleRate, 22050)
        XCTAssertEqual(h.framesPerFrame, 1536)
        XCTAssertEqual(h.acmod, 2)
        XCTAssertTrue(h.lfe)
        // numblkscod 0: one block of 256 frames.
        let one: [UInt8] = [0x0B, 0x77, 0x00, 0x3F, 0x04, 16 << 3, 0, 0]
        XCTAssertEqual(one.withUnsafeBytes { AC3Format.Header($0.baseAddress!) }?.framesPerFrame, 256)
    }
}

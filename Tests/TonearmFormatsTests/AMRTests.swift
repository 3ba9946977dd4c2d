import Foundation
import XCTest
import Tonearm
@testable import TonearmFormats
import TonearmTestSupport

/// AMR: real AMR-NB files from SoX (amr/, made by make-sync.sh), and, since nothing here
/// encodes AMR-WB, files built by hand: the signature, then frames of the sizes RFC 4867
/// gives, with payload bytes that do not matter here.
final class AMRTests: XCTestCase {
    /// Frame types in order, their header bytes and sizes.
    static func file(wideband: Bool, types: [Int]) -> (bytes: [UInt8], sizes: [Int]) {
        var bytes = Array((wideband ? "#!AMR-WB\n" : "#!AMR\n").utf8)
        var sizes: [Int] = []
        for (n, t) in types.enumerated() {
            let size = wideband ? AMRFormat.widebandSizes[t] : AMRFormat.narrowbandSizes[t]
            bytes.append(UInt8(t << 3 | 0x04))  // Q = 1
            for i in 1..<size { bytes.append(UInt8((n * 7 + i * 13) % 256)) }
            sizes.append(size)
        }
        return (bytes, sizes)
    }

    static let narrowTypes = [7, 7, 7, 0, 1, 2, 3, 4, 5, 6, 8, 15, 15, 7, 7, 7, 7, 7, 7, 7]
    static let wideTypes = [8, 8, 8, 0, 1, 2, 3, 4, 5, 6, 7, 9, 15, 14, 8, 8, 8, 8]

    func testNarrowband() throws {
        let (bytes, sizes) = AMRTests.file(wideband: false, types: AMRTests.narrowTypes)
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .match(.amr))
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.fileType, .amr)
        XCTAssertEqual(try file.dataFormat, StreamDescription(sampleRate: 8000, formatID: .amr, bytesPerPacket: 0, framesPerPacket: 160,
                                                               bytesPerFrame: 0, channelsPerFrame: 1, bitsPerChannel: 0))
        XCTAssertEqual(try file.dataOffset, 6)
        XCTAssertEqual(try file.audioDataPacketCount, Int64(sizes.count))
        XCTAssertEqual(try file.properties.packetTable?.map { Int($0.dataByteSize) }, sizes)
        XCTAssertEqual(try SyncKit.filePackets(try AudioFile(source: MemorySource(bytes))).data, Array(bytes[6...]))
        let r = feed(bytes, pattern: .oneByteAtATime)
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetSizes, sizes)
        XCTAssertEqual(r.notifications, [.fileFormat, .dataFormat, .bitRate, .dataOffset, .maximumPacketSize, .readyToProducePackets])
        XCTAssertNil(dripFeedMismatch(bytes))
        try compareWithFFprobe(bytes, sizes: sizes, offset: 6, ext: "amr")
    }

    func testWideband() throws {
        let (bytes, sizes) = AMRTests.file(wideband: true, types: AMRTests.wideTypes)
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .match(.amr))
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.dataFormat.formatID, .amrWB)
        XCTAssertEqual(try file.dataFormat.sampleRate, 16000)
        XCTAssertEqual(try file.dataFormat.framesPerPacket, 320)
        XCTAssertEqual(try file.dataOffset, 9)
        XCTAssertEqual(try file.properties.packetTable?.map { Int($0.dataByteSize) }, sizes)
        XCTAssertEqual(try file.maximumPacketSize, 61)
        XCTAssertNil(dripFeedMismatch(bytes))
        try compareWithFFprobe(bytes, sizes: sizes, offset: 9, ext: "awb")
    }

    private func compareWithFFprobe(_ bytes: [UInt8], sizes: [Int], offset: Int, ext: String) throws {
        _ = try requireTool("ffprobe")
        let path = try SyncKit.temporaryFile(bytes, name: "hand." + ext)
        let live = try XCTUnwrap(SyncKit.liveFFprobe(path))
        XCTAssertEqual(live.sizes, sizes)
        var o = offset
        XCTAssertEqual(live.offsets, sizes.map { s in defer { o += s }; return o })
    }

    /// Real AMR-NB from SoX (libopencore-amrnb), at 12.2 and 4.75 kbit/s and with a mode
    /// change mid-stream, against ffprobe's packets.
    func testSoXFixtures() throws {
        let goldens = SyncKit.goldens("amr", extensions: ["amr"])
        XCTAssertEqual(goldens.map(\.name), ["amrnb_122.amr", "amrnb_475.amr", "amrnb_mixed.amr"])
        for g in goldens {
            try SyncKit.check(g)
            XCTAssertEqual(try AudioFile(path: g.path).dataFormat.formatID, .amr, g.name)
            _ = try requireTool("ffprobe")
            let live = try XCTUnwrap(SyncKit.liveFFprobe(g.path), g.name)
            XCTAssertEqual(live.sizes, g.packetSizes, g.name)
            XCTAssertEqual(live.offsets, g.packetOffsets, g.name)
        }
    }

    /// The same frames remuxed into 3GP by ffmpeg (`-c copy`, a 'samr' sample entry): the
    /// MP4 parser gives the packets the raw AMR file gives, with the same format.
    func test3GPRemuxGivesTheRawFilesPackets() throws {
        for name in ["amrnb_122", "amrnb_mixed"] {
            let raw = try AudioFile(path: fixturesDirectory + "/amr/\(name).amr")
            let path = fixturesDirectory + "/amr/\(name)_remux.3gp"
            let g = try XCTUnwrap(SyncKit.Golden(fixture: path))
            let mp4 = try AudioFile(path: path)
            XCTAssertEqual(try mp4.fileType, .threeGP, name)
            let f = try mp4.dataFormat
            XCTAssertEqual(f.formatID, .amr, name)
            XCTAssertEqual(f.sampleRate, 8000, name)
            XCTAssertEqual(f.channelsPerFrame, 1, name)
            XCTAssertEqual(f.framesPerPacket, 160, name)
            XCTAssertEqual(try mp4.audioDataPacketCount, Int64(g.packets), name)
            let packets = try SyncKit.filePackets(mp4)
            XCTAssertEqual(packets.sizes, g.packetSizes, name)
            XCTAssertEqual(packets, try SyncKit.filePackets(raw), name)
            // The push path, which reaches the moov after the mdat with a range fetcher.
            let bytes = try readWholeFile(path)
            var sizes: [Int] = [], data: [UInt8] = []
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, d, descriptions in
                for x in descriptions ?? [] {
                    sizes.append(Int(x.dataByteSize))
                    data += d[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)]
                }
            })
            stream.byteRangeFetcher = { o, n throws(AudioError) in Array(bytes[Int(o)..<min(bytes.count, Int(o) + n)]) }
            try stream.parse(bytes)
            try stream.parse(nil)
            XCTAssertEqual(sizes, packets.sizes, name)
            XCTAssertEqual(data, packets.data, name)
        }
    }

    func testRefusals() throws {
        XCTAssertEqual(SyncKit.openError(Array("#!AMR_MC1.0\n".utf8) + [0x3C], hint: .amr)?.code, .unsupportedDataFormat)
        XCTAssertEqual(feed(Array("#!AMR-WB_MC1.0\n".utf8) + [0x3C], pattern: .oneByteAtATime, hint: .amr).error?.code,
                       .unsupportedDataFormat)
        XCTAssertEqual(SyncKit.openError(Array("#!AMX\n".utf8) + [0x3C], hint: .amr)?.code, .unsupportedFileType)
        // Frame types 9–14 are not narrowband frames; a bad frame is skipped by the search.
        var (bytes, sizes) = AMRTests.file(wideband: false, types: AMRTests.narrowTypes)
        bytes.insert(0x4C, at: 6 + sizes[0])  // type 9 between the first two frames
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.audioDataPacketCount, Int64(sizes.count))
        sizes.removeAll()
        let damaged = exerciseDamaged(bytes, hint: .amr)
        XCTAssertEqual(damaged.problems, [])
    }
}

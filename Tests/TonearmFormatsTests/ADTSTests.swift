import Foundation
import XCTest
import Tonearm
@testable import TonearmFormats
import TonearmTestSupport

final class ADTSTests: XCTestCase {
    static var goldens: [SyncKit.Golden] { SyncKit.goldens("adts", extensions: ["aac", "loas"]) }

    private func golden(_ name: String) throws -> SyncKit.Golden {
        try XCTUnwrap(SyncKit.Golden(fixture: fixturesDirectory + "/adts/" + name))
    }

    func testEveryADTSAndLOASFixture() throws {
        let goldens = ADTSTests.goldens
        XCTAssertEqual(goldens.count, 5)
        for g in goldens { try SyncKit.check(g) }
    }

    func testLiveFFprobe() throws {
        _ = try requireTool("ffprobe")
        for g in ADTSTests.goldens {
            let live = try XCTUnwrap(SyncKit.liveFFprobe(g.path), g.name)
            XCTAssertEqual(live.sizes, g.packetSizes, g.name)
            XCTAssertEqual(live.offsets, g.packetOffsets, g.name)
        }
    }

    func testProbe() throws {
        for g in ADTSTests.goldens {
            let head = Array(try readWholeFile(g.path).prefix(FormatRegistry.probeSize))
            XCTAssertEqual(FormatRegistry.probe(head), .match(AudioFileTypeID(FourCC(g.fileType))), g.name)
        }
        XCTAssertEqual(FormatRegistry.types(forExtension: "aac"), [.adts])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/aac"), [.adts])
    }

    /// The magic cookie is the AudioSpecificConfig built from the header, and the format
    /// list offers HE-AAC at twice the rate before AAC, announced first, as Apple does.
    func testCookieAndFormatList() throws {
        for (name, cookie, rate, channels) in [("aac_lc_stereo.aac", [0x12, 0x10], 44100.0, 2), ("aac_lc_mono_22k.aac", [0x13, 0x88], 22050, 1),
                                               ("aac_lc_5.1.aac", [0x11, 0xB0], 48000, 6), ("aac_lc_crc.aac", [0x12, 0x10], 44100, 2)] as [(String, [UInt8], Double, Int)]
        {
            let g = try golden(name)
            let file = try AudioFile(path: g.path)
            XCTAssertEqual(try file.magicCookie, cookie, name)
            let f = try file.dataFormat
            XCTAssertEqual(f, StreamDescription(sampleRate: rate, formatID: .mpeg4AAC, bytesPerPacket: 0, framesPerPacket: 1024,
                                                bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0))
            let list = try file.property(.formatList).formatList()
            XCTAssertEqual(list.map(\.format.formatID), [.mpeg4AAC_HE, .mpeg4AAC], name)
            XCTAssertEqual(list.map(\.format.sampleRate), [rate * 2, rate], name)
            XCTAssertEqual(list.map(\.format.framesPerPacket), [2048, 1024], name)
            XCTAssertEqual(list[1].format, f)
            let r = feed(try readWholeFile(g.path), pattern: .randomChunks(seed: 2, maximum: 100))
            XCTAssertEqual(r.notifications.first, .formatList, name)
            XCTAssertEqual(r.notifications, [.formatList, .fileFormat, .dataFormat, .magicCookieData, .bitRate, .dataOffset,
                                             .maximumPacketSize, .readyToProducePackets], name)
            // The cookie parses back to the header's values.
            var br = BitReader(cookie)
            let c = try AACAudioConfig.read(&br)
            XCTAssertEqual(c.objectType, 2)
            XCTAssertEqual(Double(c.sampleRate), rate)
            XCTAssertEqual(c.channels, channels)
        }
    }

    /// CRC-protected frames: 9-byte headers, packets after them.
    func testCRCHeaders() throws {
        let g = try golden("aac_lc_crc.aac"), plain = try golden("aac_lc_stereo.aac")
        let a = try SyncKit.filePackets(try AudioFile(path: g.path)), b = try SyncKit.filePackets(try AudioFile(path: plain.path))
        XCTAssertEqual(a, b)  // the same access units
        XCTAssertEqual(g.packetSizes, plain.packetSizes.map { $0 + 2 })
    }

    /// Channel configuration 0 without the program config element that must open the first
    /// frame, and frames with several raw data blocks, are refused cleanly. (A first frame
    /// alone with configuration 0 differs from the next: it is skipped as damage.)
    func testUnsupportedADTS() throws {
        var bytes = try readWholeFile(try golden("aac_lc_stereo.aac").path)
        var pce = bytes
        var at = 0
        while at + 7 <= pce.count {  // channel configuration 0 in every frame
            pce[at + 2] &= 0xFE; pce[at + 3] &= 0x3F
            at += Int(pce[at + 3] & 3) << 11 | Int(pce[at + 4]) << 3 | Int(pce[at + 5] >> 5)
        }
        XCTAssertEqual(SyncKit.openError(pce)?.code, .unsupportedDataFormat)
        XCTAssertEqual(feed(pce, pattern: .allAtOnce).error?.code, .unsupportedDataFormat)
        var first = bytes
        first[2] &= 0xFE; first[3] &= 0x3F
        let all = try SyncKit.filePackets(try AudioFile(source: MemorySource(bytes))).sizes
        XCTAssertEqual(try SyncKit.filePackets(try AudioFile(source: MemorySource(first))).sizes, Array(all.dropFirst()))
        bytes[6] |= 1  // two raw data blocks
        XCTAssertEqual(SyncKit.openError(bytes)?.code, .unsupportedDataFormat)
    }

    /// Channel configuration 0: the first frame's program config element goes into the
    /// cookie, as ffmpeg's aac_adtstoasc puts it (the same bytes ffmpeg's M4A holds), and
    /// gives the channels. The decode is checked in AACDecoderTests.
    func testProgramConfigElementInTheCookie() throws {
        let path = fixturesDirectory + "/aacdec/forged_dse-pce_mono_22k.aac"
        let file = try AudioFile(path: path)
        XCTAssertEqual(try file.dataFormat.channelsPerFrame, 1)
        XCTAssertEqual(try file.dataFormat.sampleRate, 22050)
        // LC (2), 22.05 kHz (7), configuration 0, three zero flags; the PCE: tag 0, LC (1),
        // index 7, one front element, nothing else, the SCE of tag 0; alignment; no comment.
        XCTAssertEqual(try file.magicCookie, [0x13, 0x80, 0x05, 0xC4, 0x00, 0x00, 0x00, 0x00])
        let bytes = try readWholeFile(path)
        XCTAssertEqual(feed(bytes, pattern: .oneByteAtATime).error, nil)
        XCTAssertNil(dripFeedMismatch(bytes))
        let ffmpeg = try requireTool("ffmpeg")
        let m4a = FileManager.default.temporaryDirectory.appendingPathComponent("pce-\(getpid()).m4a").path
        defer { try? FileManager.default.removeItem(atPath: m4a) }
        _ = try runTool(ffmpeg, ["-v", "error", "-y", "-i", path, "-c", "copy", m4a])
        XCTAssertEqual(try AudioFile(path: m4a).magicCookie, try file.magicCookie)
    }

    /// ADTS after an ID3 tag (HLS packed audio, ffmpeg's `-write_id3v2 1`): the probe looks
    /// past the tag and picks ADTS; with an MP3 hint and junk in front of the frames, the MPEG
    /// parser still finds ADTS frames and reads them as such.
    func testADTSAfterAnID3Tag() throws {
        let g = try golden("aac_lc_stereo.aac")
        let adts = try readWholeFile(g.path)
        let tag = FramedTests.id3v23(frames: [FramedTests.id3Frame("PRIV", Array("com.apple.streaming.transportStreamTimestamp\0".utf8) + [0, 0, 0, 0, 0, 0, 0x1F, 0xFF]),
                                              FramedTests.id3Frame("TIT2", [0] + Array("Packed audio".utf8))])
        let bytes = tag + adts
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .needMore)
        XCTAssertEqual(FormatRegistry.probe(bytes), .match(.adts))
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.fileType, .adts)
        XCTAssertEqual(try file.dataFormat, try AudioFile(path: g.path).dataFormat)
        XCTAssertEqual(try file.magicCookie, [0x12, 0x10])
        XCTAssertEqual(try file.dataOffset, Int64(tag.count))
        XCTAssertEqual(try file.infoDictionary[InfoDictionary.title], "Packed audio")
        XCTAssertEqual(try SyncKit.filePackets(file), try SyncKit.filePackets(try AudioFile(path: g.path)))
        let r = feed(bytes, pattern: .randomChunks(seed: 3, maximum: 64))
        XCTAssertEqual(r.notifications.first, .formatList)
        XCTAssertEqual(r.packetSizes, g.packetSizes.map { $0 - 7 })
        XCTAssertNil(dripFeedMismatch(bytes))
        _ = try requireTool("ffprobe")
        let live = try XCTUnwrap(SyncKit.liveFFprobe(try SyncKit.temporaryFile(bytes, name: "id3.aac")))
        XCTAssertEqual(live.sizes, g.packetSizes)
        XCTAssertEqual(live.offsets, g.packetOffsets.map { $0 + tag.count })
    }

    /// LOAS: the configuration comes from the StreamMuxConfig (ffmpeg repeats it every 20
    /// frames); frames before the first one are dropped.
    func testLOAS() throws {
        let g = try golden("latm.loas")
        let bytes = try readWholeFile(g.path)
        let file = try AudioFile(path: g.path)
        XCTAssertEqual(try file.magicCookie, [0x12, 0x10])
        XCTAssertEqual(try file.dataFormat.formatID, .mpeg4AAC)
        XCTAssertEqual(try file.dataFormat.framesPerPacket, 1024)
        // The element of frame 0 begins with useSameStreamMux 0; frame 1's with 1.
        XCTAssertEqual(bytes[3] >> 7, 0)
        XCTAssertEqual(bytes[g.packetOffsets[1] + 3] >> 7, 1)
        let cut = Array(bytes[g.packetOffsets[1]...])
        let configured = try XCTUnwrap((1..<g.packets).first { bytes[g.packetOffsets[$0] + 3] >> 7 == 0 })
        XCTAssertEqual(configured, 20)
        let f = try AudioFile(source: MemorySource(cut))
        XCTAssertEqual(try f.dataOffset, Int64(g.packetOffsets[configured] - g.packetOffsets[1]))
        XCTAssertEqual(try f.audioDataPacketCount, Int64(g.packets - configured))
        let r = feed(cut, pattern: .randomChunks(seed: 1, maximum: 500))
        XCTAssertEqual(r.packetSizes, Array(g.packetSizes[configured...]))
        XCTAssertNil(dripFeedMismatch(cut))
    }

    /// LATM forms other than the one LOAS uses are refused with 'fmt?'.
    func testLOASUnsupportedForms() throws {
        let bytes = try readWholeFile(try golden("latm.loas").path)
        // audioMuxVersion 1 with audioMuxVersionA 1.
        var versionA = bytes
        versionA[3] |= 0x60
        XCTAssertEqual(SyncKit.openError(versionA)?.code, .unsupportedDataFormat)
        // numSubFrames ≠ 0 (the six bits after useSameStreamMux, audioMuxVersion, allStreamsSameTimeFraming).
        var subframes = bytes
        subframes[3] |= 0x01
        XCTAssertEqual(SyncKit.openError(subframes)?.code, .unsupportedDataFormat)
        XCTAssertEqual(feed(subframes, pattern: .oneByteAtATime).error?.code, .unsupportedDataFormat)
    }

    /// The StreamMuxConfig reader on a hand-built element: audioMuxVersion 1 with an
    /// explicit ASC length, and HE-AAC signalled explicitly (object type 5).
    func testStreamMuxConfigVersion1() throws {
        var w = BitWriterForTests()
        w.put(0, 1)  // useSameStreamMux
        w.put(1, 1)  // audioMuxVersion
        w.put(0, 1)  // audioMuxVersionA
        w.put(0, 2); w.put(0xFF, 8)  // taraBufferFullness (LatmGetValue, one byte)
        w.put(1, 1)  // allStreamsSameTimeFraming
        w.put(0, 6); w.put(0, 4); w.put(0, 3)  // subframes, programs, layers
        w.put(0, 2); w.put(32, 8)  // ASC length in bits
        // ASC: SBR (5), 24 kHz (6), stereo, extension rate 48 kHz (3), core AAC LC (2), GA config.
        w.put(5, 5); w.put(6, 4); w.put(2, 4); w.put(3, 4); w.put(2, 5); w.put(0, 3)
        w.put(0, 7)  // the rest of the 32 bits
        w.put(0, 3)  // frameLengthType
        w.put(0xFF, 8)  // latmBufferFullness
        w.put(0, 1)  // otherDataPresent
        w.put(0, 1)  // crcCheckPresent
        let (c, asc) = try XCTUnwrap(try LOASFormat.streamMuxConfig(w.bytes))
        XCTAssertEqual(c.objectType, 5)
        XCTAssertEqual(c.coreObjectType, 2)
        XCTAssertEqual(c.sampleRate, 24000)
        XCTAssertEqual(c.extensionSampleRate, 48000)
        XCTAssertEqual(asc.count, 4)
        let f = try XCTUnwrap(c.streamDescription)
        XCTAssertEqual(f.formatID, .mpeg4AAC_HE)
        XCTAssertEqual(f.sampleRate, 48000)
        XCTAssertEqual(f.framesPerPacket, 2048)
    }
}

/// Bits, most significant first (tests only).
struct BitWriterForTests {
    var bytes: [UInt8] = []
    var used = 0
    mutating func put(_ value: UInt64, _ count: Int) {
        for i in stride(from: count - 1, through: 0, by: -1) {
            if used % 8 == 0 { bytes.append(0) }
            if value >> UInt64(i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (used % 8)) }
            used += 1
        }
    }
}

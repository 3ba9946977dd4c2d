import Foundation
import XCTest
import Tonearm
@testable import TonearmFormats
import TonearmTestSupport

final class MPEGTests: XCTestCase {
    static var goldens: [SyncKit.Golden] { SyncKit.goldens("mpeg", extensions: ["mp3", "mp2"]) }

    func testEveryMPEGFixture() throws {
        let goldens = MPEGTests.goldens
        XCTAssertEqual(goldens.count, 13)
        for g in goldens { try SyncKit.check(g) }
    }

    /// The goldens agree with the installed ffprobe, and so does the parser.
    func testLiveFFprobe() throws {
        _ = try requireTool("ffprobe")
        for g in MPEGTests.goldens {
            let live = try XCTUnwrap(SyncKit.liveFFprobe(g.path), g.name)
            XCTAssertEqual(live.sizes, g.packetSizes, g.name)
            XCTAssertEqual(live.offsets, g.packetOffsets, g.name)
        }
    }

    func testProbeNamesTheLayer() throws {
        for g in MPEGTests.goldens {
            let bytes = try readWholeFile(g.path)
            let expected = ProbeResult.match(AudioFileTypeID(FourCC(g.fileType)))
            // After a leading ID3v2 tag, the probe wants the bytes after it.
            let tagged = bytes.starts(with: Array("ID3".utf8))
            let head = Array(bytes.prefix(FormatRegistry.probeSize))
            XCTAssertEqual(FormatRegistry.probe(head, isEndOfStream: false), tagged ? .needMore : expected, g.name)
            XCTAssertEqual(FormatRegistry.probe(bytes, isEndOfStream: false), expected, g.name)
        }
        // Cut before the probe can tell: MPEG says "more" on a prefix of an ID3 header.
        XCTAssertEqual(FormatRegistry.probe(Array("ID3".utf8) + [3, 0, 0, 0, 0, 0], isEndOfStream: false), .needMore)
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/mpeg").first, .mp3)
        XCTAssertEqual(FormatRegistry.types(forExtension: "mp2"), [.mp2])
        XCTAssertEqual(FormatRegistry.types(forExtension: "mpga"), [.mp3])
    }

    private func golden(_ name: String) throws -> SyncKit.Golden {
        try XCTUnwrap(SyncKit.Golden(fixture: fixturesDirectory + "/mpeg/" + name))
    }

    /// What a stream learns from a Xing/Info frame and the LAME tag, in Apple's order.
    func testXingOnTheStream() throws {
        for name in ["lame_vbr_v4.mp3", "lame_cbr128.mp3", "lame_crc.mp3", "lame_mpeg2_22k.mp3", "lame_mpeg25_11k.mp3", "ffmpeg_xing_vbr.mp3"] {
            let g = try golden(name)
            let bytes = try readWholeFile(g.path)
            let r = feed(bytes, pattern: .randomChunks(seed: 11, maximum: 333))
            XCTAssertNil(r.error, name)
            XCTAssertEqual(r.notifications, [.bitRate, .audioDataByteCount, .audioDataPacketCount, .packetTableInfo, .fileFormat,
                                             .dataFormat, .dataOffset, .readyToProducePackets], name)
            XCTAssertEqual(r.audioDataPacketCount, Int64(try XCTUnwrap(g.xingFrames)), name)
            XCTAssertEqual(r.audioDataPacketCount, Int64(g.packets), name)
            let file = try AudioFile(path: g.path)
            let (_, stream) = try SyncKit.streamPackets(bytes)
            XCTAssertEqual(try stream.packetTableInfo, try file.packetTableInfo, name)
            XCTAssertEqual(try stream.packetTableInfo?.numberValidFrames, Int64(g.decodedFrames), name)
            XCTAssertFalse(try XCTUnwrap(stream.properties).isEstimated, name)
            // 'pkby' and 'bypk' on a stream: no table, so estimated from the Xing totals.
            let average = Double(try stream.audioDataByteCount) / Double(try stream.audioDataPacketCount)
            // 'pkby' comes from the parser's own estimate (the Xing TOC), as seek does.
            let byte = try stream.byte(forPacket: 10)
            XCTAssertTrue(byte.isEstimated, name)
            XCTAssertEqual(byte.byte, try stream.seekOffset(toPacket: 10).byteOffset, name)
            let packet = try stream.packet(forByte: Int64((average * 10).rounded(.down)) + 1)
            XCTAssertTrue(packet.isEstimated, name)
            XCTAssertEqual(packet.packet, 10, name)
            // The Xing byte count includes the Xing frame; the data starts after it.
            XCTAssertEqual(r.audioDataByteCount, try file.audioDataByteCount, name)
            // A CBR stream ('Info') has its frames' bit rate on both paths (the Xing totals'
            // average gave 127,997); a VBR stream ('Xing') the average of its totals.
            if let cbr = ["lame_cbr128.mp3": UInt32(128_000), "lame_crc.mp3": 160_000][name] {
                XCTAssertEqual(try stream.bitRate, cbr, name)
                XCTAssertEqual(try file.bitRate, cbr, name)
            }
        }
        // MPEG-2 and 2.5 layer III: 576 frames per packet.
        XCTAssertEqual(try AudioFile(path: try golden("lame_mpeg25_11k.mp3").path).dataFormat.framesPerPacket, 576)
        XCTAssertEqual(try AudioFile(path: try golden("lame_mpeg2_22k.mp3").path).dataFormat.framesPerPacket, 576)
        XCTAssertEqual(try AudioFile(path: try golden("ffmpeg_layer2.mp2").path).dataFormat.framesPerPacket, 1152)
    }

    /// ID3v1 and APEv2 tags at the end of a push stream are read when the parser reaches
    /// them, after 'redy': the info dictionary is updated and announced again ('info'), so
    /// that the stream ends with what AudioFile reports; the tags are never packets.
    func testTrailingTagsAreAnnouncedOnTheStream() throws {
        for (name, changes) in [("tagged_id3v23_ape_id3v1.mp3", 1), ("tagged_id3v22_id3v1.mp3", 1)] {
            let g = try golden(name)
            let bytes = try readWholeFile(g.path)
            let file = try AudioFile(path: g.path)
            for pattern in [FeedPattern.allAtOnce, .oneByteAtATime, .randomChunks(seed: 8, maximum: 777)] {
                var infos: [InfoDictionary] = []
                var notifications: [AudioFilePropertyID] = []
                var sizes: [Int] = []
                let stream = AudioFileStream(propertyListener: { stream, id, _ in
                    notifications.append(id)
                    if id == .infoDictionary, let info = try? stream.infoDictionary { infos.append(info) }
                }, packets: { _, _, _, d in sizes += d!.map { Int($0.dataByteSize) } })
                if case .oneByteAtATime = pattern {
                    for i in bytes.indices { try stream.parse(bytes[i..<i + 1]) }
                } else if case .randomChunks = pattern {
                    var i = 0
                    while i < bytes.count { try stream.parse(bytes[i..<min(bytes.count, i + 777)]); i += 777 }
                } else {
                    try stream.parse(bytes)
                }
                try stream.parse(nil)
                let ready = try XCTUnwrap(notifications.firstIndex(of: .readyToProducePackets), name)
                let after = notifications[(ready + 1)...].filter { $0 == .infoDictionary }
                XCTAssertEqual(after.count, changes, "\(name) \(pattern): \(notifications)")
                XCTAssertEqual(infos.last, try file.infoDictionary, "\(name) \(pattern)")
                XCTAssertEqual(try stream.infoDictionary, try file.infoDictionary, "\(name) \(pattern)")
                // The packets are ffprobe's: no tag byte is a packet.
                XCTAssertEqual(sizes, g.packetSizes, "\(name) \(pattern)")
            }
            for (k, v) in try XCTUnwrap(g.info) { XCTAssertEqual(try file.infoDictionary[k], v, "\(name): \(k)") }
        }
        // What the end tags add: APE's composer, ID3v1's album where ID3v2.2 has none.
        let v23 = feed(try readWholeFile(try golden("tagged_id3v23_ape_id3v1.mp3").path), pattern: .randomChunks(seed: 1, maximum: 100))
        XCTAssertEqual(v23.info?[InfoDictionary.composer], "APE Composer")
        let v22 = feed(try readWholeFile(try golden("tagged_id3v22_id3v1.mp3").path), pattern: .randomChunks(seed: 1, maximum: 100))
        XCTAssertEqual(v22.info?[InfoDictionary.album], "v1 album")
        // A stream without end tags announces the info dictionary only before 'redy'.
        let plain = feed(try readWholeFile(try golden("tagged_id3v24_unsync.mp3").path), pattern: .allAtOnce)
        XCTAssertEqual(plain.notifications.last, .readyToProducePackets)
    }

    /// Free-format MPEG audio (bit rate index 0: the frame length is not in the header) is
    /// read on both paths: the length is the distance from the first header to the next, and
    /// the padding bit still adds its slot, so the packets are exactly the frames.
    func testFreeFormat() throws {
        // A real LAME stream (128 kbit/s, padded frames among unpadded ones) whose every frame
        // header is patched to bit rate index 0.
        let g = try golden("lame_no_tag.mp3")
        var bytes = try readWholeFile(g.path)
        for o in g.packetOffsets { bytes[o + 2] &= 0x0F }
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .match(.mp3))
        XCTAssertEqual(Set(g.packetSizes), [417, 418])
        let file = try AudioFile(source: MemorySource(bytes))
        let table = try XCTUnwrap(try file.properties.packetTable)
        XCTAssertEqual(table.map { Int($0.dataByteSize) }, g.packetSizes)
        let dataOffset = Int(try file.dataOffset)
        XCTAssertEqual(table.map { Int($0.startOffset) + dataOffset }, g.packetOffsets)
        // The bit rate that the learnt length implies: 417 bytes × 8 × 44100 / 1152.
        XCTAssertEqual(try file.property(.bitRate).uint32(), 127_706)
        for pattern in FeedPattern.standard {
            let r = feed(bytes, pattern: pattern)
            XCTAssertNil(r.error, "\(pattern)")
            XCTAssertEqual(r.packetSizes, g.packetSizes, "\(pattern)")
        }
        // Behind an ID3v2 tag too.
        let tagged = FramedTests.id3v23(frames: [FramedTests.id3Frame("TIT2", [0] + Array("Free".utf8))]) + bytes
        XCTAssertEqual(feed(tagged, pattern: .oneByteAtATime).packetSizes, g.packetSizes)
        XCTAssertEqual(try AudioFile(source: MemorySource(tagged)).properties.packetTable?.count, g.packetSizes.count)
        // The decoder reads the patched frames as the original ones.
        let original = try AudioFile(path: g.path)
        let a = try original.readPacketData(startingAt: 0, count: g.packetSizes.count)
        let b = try file.readPacketData(startingAt: 0, count: g.packetSizes.count)
        func decode(_ p: (data: [UInt8], descriptions: [PacketDescription]?), _ f: AudioFile) throws -> [Float] {
            let d = try CodecRegistry.makeDecoder(for: try f.dataFormat)
            let out = PCMBuffer(commonFormat: .float32, sampleRate: 44100, channels: Int(try f.dataFormat.channelsPerFrame),
                                interleaved: false, frameCapacity: g.packetSizes.count * 1152)
            try p.data.withBytes { (raw) throws(AudioError) in
                try d.decode(raw, packetCount: g.packetSizes.count, descriptions: p.descriptions, into: out)
            }
            XCTAssertEqual(d.concealedPackets, 0)
            return out.floatSamples(channel: 0)
        }
        let pcm = try decode(b, file)
        XCTAssertEqual(pcm.count, g.packetSizes.count * 1152)
        XCTAssertEqual(pcm, try decode(a, original))
        // LAME writes true free-format streams with --freeformat (ffmpeg's mp3 demuxer cannot
        // read them): 96 kbit/s at 44.1 kHz is 313 bytes a frame, 314 with padding.
        let lame = try requireTool("lame")
        let dir = makeTemporaryDirectory()
        var wav = Array("RIFF".utf8) + le32(36 + 8820) + Array("WAVEfmt ".utf8) + le32(16) + [1, 0, 1, 0] + le32(44100)
        wav += le32(88200) + [2, 0, 16, 0] + Array("data".utf8) + le32(8820)
        wav += (0..<4410).flatMap { i -> [UInt8] in
            let v = Int16(8000 * sin(Double(i) * 2 * .pi * 440 / 44100))
            return [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
        }
        try writeWholeFile(dir + "/in.wav", wav)
        _ = try runToolData(lame, ["--quiet", "--freeformat", "-b", "96", dir + "/in.wav", dir + "/free.mp3"])
        let free = try readWholeFile(dir + "/free.mp3")
        XCTAssertTrue(MPEGAudioHeader.isFreeFormat(UInt32(free[0]) << 24 | UInt32(free[1]) << 16 | UInt32(free[2]) << 8 | UInt32(free[3])))
        let freeFile = try AudioFile(source: MemorySource(free))
        let sizes = try XCTUnwrap(try freeFile.properties.packetTable).map { Int($0.dataByteSize) }
        XCTAssertTrue(Set(sizes).isSubset(of: [313, 314]), "\(Set(sizes))")
        XCTAssertEqual(feed(free, pattern: .randomChunks(seed: 3, maximum: 100)).packetSizes, sizes)
    }

    /// MPEG audio after junk that the 64-byte magic cannot see past (zeros and the tail of a
    /// cut frame, as the compliance stream sin1k0db begins) is found without a hint by the
    /// sync scan, on both paths; junk full of sync words that do not chain is still refused.
    func testJunkBeforeTheFirstFrameWithoutAHint() throws {
        let g = try golden("lame_no_tag.mp3")
        let mp3 = try readWholeFile(g.path)
        let bytes = [UInt8](repeating: 0, count: 136) + Array(mp3[100..<179]) + mp3
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .noMatch)
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.fileType, .mp3)
        XCTAssertEqual(try file.dataOffset, 215)
        XCTAssertEqual(try file.audioDataPacketCount, Int64(g.packetSizes.count))
        for pattern in FeedPattern.standard {
            let r = feed(bytes, pattern: pattern)
            XCTAssertNil(r.error, "\(pattern)")
            XCTAssertEqual(r.packetSizes, g.packetSizes, "\(pattern)")
        }
        // Valid 417-byte frame headers every 834 bytes, with a broken one between them:
        // never two frames in a row.
        var junk = (0..<40000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        for at in stride(from: 3, to: junk.count - 4, by: 417) {
            junk.replaceSubrange(at..<at + 4, with: (at - 3) % 834 == 0 ? [0xFF, 0xFB, 0x90, 0x64] : [0xFF, 0x12, 0x90, 0x64])
        }
        XCTAssertEqual(SyncKit.openError(junk)?.code, .unsupportedFileType)
        XCTAssertEqual(feed(junk, pattern: .randomChunks(seed: 4, maximum: 1000)).error?.code, .unsupportedFileType)
        // A lone frame after junk is not enough either.
        XCTAssertEqual(SyncKit.openError([UInt8](repeating: 0, count: 100) + Array(mp3.prefix(418)))?.code, .unsupportedFileType)
    }

    private func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }

    /// Without a Xing frame a stream knows no totals; a file scans them.
    func testNoXing() throws {
        for name in ["lame_no_tag.mp3", "ffmpeg_no_xing.mp3", "ffmpeg_layer2.mp2", "twolame_layer2.mp2"] {
            let g = try golden(name)
            let r = feed(try readWholeFile(g.path), pattern: .allAtOnce)
            XCTAssertNil(r.error, name)
            XCTAssertNil(r.audioDataPacketCount, name)
            XCTAssertEqual(r.notifications, [.bitRate, .fileFormat, .dataFormat, .dataOffset, .readyToProducePackets], name)
            XCTAssertEqual(r.packetSizes, g.packetSizes, name)
            let file = try AudioFile(path: g.path)
            XCTAssertEqual(try file.property(.bitRate).uint32(), UInt32(name.contains("layer2") ? 192_000 : 128_000), name)
        }
    }

    /// A stream seeks with an estimate (flagged), then resynchronises; the packets after
    /// the jump are the file's, from the first whole frame at or after the offset.
    func testStreamSeek() throws {
        for name in ["lame_vbr_v4.mp3", "tagged_id3v23_ape_id3v1.mp3"] {
            let g = try golden(name)
            let bytes = try readWholeFile(g.path)
            let file = try AudioFile(path: g.path)
            let table = try XCTUnwrap(try file.properties.packetTable)
            let dataOffset = Int(try file.dataOffset)
            var sizes: [Int] = []
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, d in
                sizes += d!.map { Int($0.dataByteSize) }
            })
            try stream.parse(Array(bytes[0..<(dataOffset + 3000)]))
            let target = g.packets * 5 / 8
            let (offset, flags) = try stream.seek(toPacket: Int64(target))
            XCTAssertEqual(flags, .offsetIsEstimated, name)
            sizes = []
            try stream.parse(Array(bytes[(dataOffset + Int(offset))...]), flags: .discontinuity)
            try stream.parse(nil)
            let first = try XCTUnwrap(table.firstIndex { $0.startOffset >= offset }, name)
            XCTAssertEqual(sizes, table[first...].map { Int($0.dataByteSize) }, name)
            XCTAssertLessThanOrEqual(abs(first - target), 2, name)
        }
    }

    /// The Xing table of contents gives estimated offsets close to the exact ones.
    func testXingTableOfContents() throws {
        let g = try golden("lame_vbr_v4.mp3")
        let bytes = try readWholeFile(g.path)
        let (_, stream) = try SyncKit.streamPackets(bytes)
        let parser = try XCTUnwrap(stream.parser as? FramedParser<MPEGFormat>)
        XCTAssertEqual(parser.format.vbr?.toc?.count, 100)
        let exact = try XCTUnwrap(try AudioFile(path: g.path).properties.packetTable)
        var previous: Int64 = -1
        for i in stride(from: 0, to: exact.count, by: 3) {
            let (offset, estimated) = try parser.byteOffset(ofPacket: Int64(i))
            XCTAssertTrue(estimated)
            XCTAssertGreaterThanOrEqual(offset, previous)
            previous = offset
            XCTAssertLessThan(abs(offset - exact[i].startOffset), Int64(bytes.count / 20), "packet \(i)")
        }
    }

    /// LAME's 60-second tone at 44.1 kHz: exactly 2,646,000 valid frames, on both paths.
    func testGaplessSixtySeconds() throws {
        let lame = try requireTool("lame")
        let dir = makeTemporaryDirectory()
        let frames = 2_646_000
        var w = ByteWriter()
        w.write(FourCC("RIFF")); w.write(UInt32(36 + frames * 4), .little); w.write(FourCC("WAVE"))
        w.write(FourCC("fmt ")); w.write(UInt32(16), .little); w.write(UInt16(1), .little); w.write(UInt16(2), .little)
        w.write(UInt32(44100), .little); w.write(UInt32(44100 * 4), .little); w.write(UInt16(4), .little); w.write(UInt16(16), .little)
        w.write(FourCC("data")); w.write(UInt32(frames * 4), .little)
        var pcm = [UInt8](repeating: 0, count: frames * 4)
        for i in 0..<frames {
            let s = Int16(8000 * sin(2 * Double.pi * 440 * Double(i) / 44100))
            let u = UInt16(bitPattern: s)
            pcm[4 * i] = UInt8(u & 0xFF); pcm[4 * i + 1] = UInt8(u >> 8); pcm[4 * i + 2] = UInt8(u & 0xFF); pcm[4 * i + 3] = UInt8(u >> 8)
        }
        try writeWholeFile(dir + "/tone.wav", w.bytes + pcm)
        _ = try runTool(lame, ["--quiet", "-b", "128", dir + "/tone.wav", dir + "/tone.mp3"])
        let file = try AudioFile(path: dir + "/tone.mp3")
        let t = try XCTUnwrap(try file.packetTableInfo)
        XCTAssertEqual(t.numberValidFrames, 2_646_000)
        XCTAssertEqual(t.primingFrames, 576 + 529)
        XCTAssertEqual(t.totalFrames, try file.audioDataPacketCount * 1152)
        XCTAssertEqual(try file.estimatedDuration, 60)
        let r = feed(try readWholeFile(dir + "/tone.mp3"), pattern: .randomChunks(seed: 6, maximum: 65536))
        XCTAssertEqual(r.audioDataPacketCount, try file.audioDataPacketCount)
        let (_, stream) = try SyncKit.streamPackets(try readWholeFile(dir + "/tone.mp3"), chunk: 65536)
        XCTAssertEqual(try stream.packetTableInfo?.numberValidFrames, 2_646_000)
    }

    /// Layer I: no encoder here writes it, so silent frames are built by hand (all bit
    /// allocations zero): MPEG-1, 48 kHz, 128 kbit/s, 128 bytes, 384 frames each.
    func testLayerI() throws {
        let header: [UInt8] = [0xFF, 0xFF, 0x44, 0x00]
        XCTAssertEqual(MPEGAudioHeader(0xFFFF_4400)?.frameLength, 128)
        let bytes = (0..<25).flatMap { _ in header + [UInt8](repeating: 0, count: 124) }
        XCTAssertEqual(FormatRegistry.probe(Array(bytes.prefix(64))), .match(.mp1))
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.fileType, .mp1)
        XCTAssertEqual(try file.dataFormat.formatID, .mpegLayer1)
        XCTAssertEqual(try file.dataFormat.framesPerPacket, 384)
        XCTAssertEqual(try file.dataFormat.sampleRate, 48000)
        XCTAssertEqual(try file.audioDataPacketCount, 25)
        XCTAssertNil(dripFeedMismatch(bytes))
        _ = try requireTool("ffprobe")
        let path = try SyncKit.temporaryFile(bytes, name: "layer1.mp1")
        let live = try XCTUnwrap(SyncKit.liveFFprobe(path))
        XCTAssertEqual(live.sizes, [Int](repeating: 128, count: 25))
        XCTAssertEqual(live.offsets, (0..<25).map { $0 * 128 })
    }

    /// Headers: every bit rate, rate and layer gives the frame length the standard's
    /// formula gives, and invalid fields are refused.
    func testHeaderFields() throws {
        // MPEG-1 layer III 44.1 kHz 128 kbit/s: 417 bytes, 418 with padding.
        XCTAssertEqual(MPEGAudioHeader(0xFFFB_9064)?.frameLength, 417)
        XCTAssertEqual(MPEGAudioHeader(0xFFFB_9264)?.frameLength, 418)
        // MPEG-1 layer III 32 kHz 320 kbit/s padded: the largest layer III frame, 1441 bytes.
        XCTAssertEqual(MPEGAudioHeader(0xFFFB_EA00)?.frameLength, 1441)
        XCTAssertEqual(MPEGAudioHeader(0xFFFB_9064)?.largestFrameLength, 1045)
        // MPEG-2 layer III 22.05 kHz 64 kbit/s: 72 × 64000 / 22050 = 208.
        XCTAssertEqual(MPEGAudioHeader(0xFFF3_8064)?.frameLength, 208)
        XCTAssertEqual(MPEGAudioHeader(0xFFF3_8064)?.samplesPerFrame, 576)
        // MPEG-2.5 layer III 8 kHz 8 kbit/s: 72 bytes.
        XCTAssertEqual(MPEGAudioHeader(0xFFE3_18C4)?.frameLength, 72)
        XCTAssertEqual(MPEGAudioHeader(0xFFE3_18C4)?.sampleRate, 8000)
        // MPEG-1 layer II 48 kHz 192 kbit/s: 576 bytes.
        XCTAssertEqual(MPEGAudioHeader(0xFFFD_A400)?.frameLength, 576)
        // Rates index the standards' per-rate tables: MPEG-1, MPEG-2, MPEG-2.5.
        XCTAssertEqual(MPEGAudioHeader(0xFFFB_9064)?.sampleRateIndex, 0)
        XCTAssertEqual(MPEGAudioHeader(0xFFF3_8064)?.sampleRateIndex, 3)
        XCTAssertEqual(MPEGAudioHeader(0xFFE3_18C4)?.sampleRateIndex, 8)
        // The smallest layer III frames: 32 kbit/s at 48 kHz is 96 bytes, 8 kbit/s at
        // 22.05 kHz 26; both with a CRC, stereo and mono as asked.
        let small = MPEGAudioHeader.smallestLayer3Frame(sampleRate: 48000, channels: 2)
        XCTAssertEqual(small?.frameLength, 96)
        XCTAssertEqual(small?.hasCRC, true)
        XCTAssertEqual(small?.channels, 2)
        XCTAssertEqual(MPEGAudioHeader.smallestLayer3Frame(sampleRate: 22050, channels: 1)?.frameLength, 26)
        XCTAssertEqual(MPEGAudioHeader.smallestLayer3Frame(sampleRate: 22050, channels: 1)?.channels, 1)
        XCTAssertNil(MPEGAudioHeader.smallestLayer3Frame(sampleRate: 44000, channels: 2))
        // Invalid: version 01, layer 00, bit rate 15, rate 3; free format is not a header.
        for word: UInt32 in [0xFFEB_9064, 0xFFF9_9064, 0xFFFB_F064, 0xFFFB_9C64, 0xFFFB_0064, 0x7FFB_9064] {
            XCTAssertNil(MPEGAudioHeader(word), String(word, radix: 16))
        }
        XCTAssertTrue(MPEGAudioHeader.isFreeFormat(0xFFFB_0064))
    }

    /// The raw ID3v2 tag, the info and the artwork on both paths.
    func testTagsOnBothPaths() throws {
        let g = try golden("tagged_id3v23_ape_id3v1.mp3")
        let bytes = try readWholeFile(g.path)
        let file = try AudioFile(path: g.path)
        let tag = try XCTUnwrap(try file.properties.id3Tag)
        XCTAssertEqual(tag, Array(bytes[0..<tag.count]))
        XCTAssertEqual(bytes[tag.count], 0xFF)  // the Info frame follows the tag
        XCTAssertLessThan(Int64(tag.count), try file.dataOffset)
        XCTAssertEqual(try file.property(.id3Tag).data(), tag)
        XCTAssertEqual(try file.property(.albumArtwork).data().count, 20000)
        let r = feed(bytes, pattern: .randomChunks(seed: 8, maximum: 2000))
        for (k, v) in try XCTUnwrap(g.info) { XCTAssertEqual(r.info?[k], v, k) }
        XCTAssertEqual(try XCTUnwrap(try file.infoDictionary[InfoDictionary.composer]), "APE Composer")
        // ffprobe reads the same ID3v2 fields.
        let ffprobe = try requireTool("ffprobe")
        let out = try runToolData(ffprobe, ["-v", "fatal", "-of", "json", "-show_format", g.path])
        let tags = ((try JSONSerialization.jsonObject(with: Data(out)) as? [String: Any])?["format"] as? [String: Any])?["tags"] as? [String: String]
        XCTAssertEqual(tags?["title"], g.info?[InfoDictionary.title])
        XCTAssertEqual(tags?["artist"], g.info?[InfoDictionary.artist])
        XCTAssertEqual(tags?["album"], g.info?[InfoDictionary.album])
    }
}

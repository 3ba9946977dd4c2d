import Foundation
import TonearmCodecs
import TonearmCore
@testable import TonearmFormats
import TonearmTestSupport
import XCTest

/// The FLAC writer: files made from the native encoder's packets read back through our
/// parser (STREAMINFO, tags, SEEKTABLE, packets, drip-fed) and pass `flac -t`, `flac -d`
/// and ffprobe when those are installed.
final class FLACWriterTests: XCTestCase {
    /// 35 s of mono 8 kHz, 12-bit: a chord with a slow beat and a little pseudo-random
    /// noise, so the predictors have something to do. Interleaved Int32, justified.
    static func synthetic(seconds: Int = 35, rate: Int = 8000, channels: Int = 1, bits: Int = 12) -> PCMBuffer {
        let n = seconds * rate
        let b = PCMBuffer(commonFormat: .int32, sampleRate: Double(rate), channels: channels, interleaved: true, frameCapacity: n)
        var seed: UInt32 = 12345
        let amplitude = Double(1 << (bits - 2))
        b.withUnsafeMutableSamples(Int32.self) { p in
            for i in 0..<n {
                let t = Double(i) / Double(rate)
                for c in 0..<channels {
                    seed = seed &* 1_103_515_245 &+ 12345
                    let noise = Double(Int(seed >> 16 & 0xFF) - 128) / 64
                    let v = amplitude * (0.5 * sin(2 * .pi * 220 * t + Double(c)) + 0.3 * sin(2 * .pi * 331 * t) * sin(2 * .pi * 0.5 * t))
                    p[i * channels + c] = Int32(v + noise) << Int32(32 - bits)
                }
            }
        }
        b.frameLength = n
        return b
    }

    struct Written {
        var path: String
        var packets: [UInt8]
        var descriptions: [PacketDescription]
        var cookie: [UInt8]
        var format: StreamDescription
    }

    /// Encodes `pcm` and writes it with AudioFile, packets in batches as they come, the
    /// final cookie set after them.
    func write(_ pcm: PCMBuffer, bits: Int, to path: String, info: InfoDictionary = InfoDictionary(),
               settings: EncoderSettings = .init()) throws -> Written
    {
        let target = StreamDescription(sampleRate: pcm.format.sampleRate, formatID: .flac, bytesPerPacket: 0, framesPerPacket: 0,
                                       bytesPerFrame: 0, channelsPerFrame: UInt32(pcm.channelCount), bitsPerChannel: UInt32(bits))
        let encoder = try CodecRegistry.makeEncoder(for: target, settings: settings)
        let file = try AudioFile.create(path: path, type: .flac, format: encoder.outputFormat, flags: .eraseFile)
        try file.setProperty(.magicCookieData, .data(encoder.magicCookie))
        try file.setProperty(.infoDictionary, .info(info))
        var all: [UInt8] = [], allDescriptions: [PacketDescription] = []
        var packets: [UInt8] = [], descriptions: [PacketDescription] = []
        func flush() throws {
            guard !descriptions.isEmpty else { return }
            try file.writePackets(packets, count: descriptions.count, descriptions: descriptions,
                                  startingAt: Int64(allDescriptions.count))
            let base = Int64(all.count)
            all += packets
            allDescriptions += descriptions.map {
                PacketDescription(startOffset: base + $0.startOffset, variableFramesInPacket: $0.variableFramesInPacket,
                                  dataByteSize: $0.dataByteSize)
            }
            packets.removeAll()
            descriptions.removeAll()
        }
        try encoder.encode(pcm, into: &packets, descriptions: &descriptions)
        try flush()
        try encoder.finish(into: &packets, descriptions: &descriptions)
        try flush()
        try file.setProperty(.magicCookieData, .data(encoder.magicCookie))
        try file.close()
        return Written(path: path, packets: all, descriptions: allDescriptions, cookie: encoder.magicCookie,
                       format: encoder.outputFormat)
    }

    static let tags = InfoDictionary([
        (InfoDictionary.title, "A Title"), (InfoDictionary.artist, "Some Artist"), (InfoDictionary.album, "An Album"),
        (InfoDictionary.year, "2024"), (InfoDictionary.genre, "Ambient"), (InfoDictionary.trackNumber, "3"),
        (InfoDictionary.comments, "made by the FLAC writer test"),
    ])

    func testWrittenFileReadsBackWithTagsAndSeekTable() throws {
        let dir = makeTemporaryDirectory()
        let pcm = FLACWriterTests.synthetic()
        let w = try write(pcm, bits: 12, to: dir + "/synthetic.flac", info: FLACWriterTests.tags,
                          settings: EncoderSettings(blockSize: 1024))
        let bytes = try readWholeFile(w.path)
        XCTAssertEqual(Array(bytes[0..<4]), Array("fLaC".utf8))

        let file = try AudioFile(path: w.path)
        let p = try file.properties
        XCTAssertEqual(p.fileType, .flac)
        XCTAssertEqual(p.dataFormat, w.format)
        XCTAssertEqual(p.magicCookie, w.cookie)
        XCTAssertEqual(p.audioDataPacketCount, Int64(w.descriptions.count))
        XCTAssertEqual(p.packetTableInfo?.numberValidFrames, Int64(pcm.frameLength))
        // The header: fLaC, STREAMINFO (4 + 34), VORBIS_COMMENT, then 8196 bytes of SEEKTABLE and PADDING.
        let vendor = "Tonearm"
        let comment = VorbisComment(vendor: vendor, info: FLACWriterTests.tags).bytes
        XCTAssertEqual(p.dataOffset, Int64(4 + 38 + 4 + comment.count + 4 + FLACWriter.reservedBytes))
        for (key, value) in FLACWriterTests.tags { XCTAssertEqual(p.info[key], value, key) }

        // Packets as written.
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: w.descriptions.count)
        XCTAssertEqual(data, w.packets)
        XCTAssertEqual(descriptions?.map(\.dataByteSize), w.descriptions.map(\.dataByteSize))

        // One seek point per 10 s at the frame holding each multiple of 80000 samples.
        let parser = FLACParser()
        try ParserDriver(parser: parser).pull(from: MemorySource(bytes), wantsPackets: false)
        let expected: [UInt64] = [0, 79872, 159744, 239616]
        XCTAssertEqual(parser.seekTable.map(\.sampleNumber), expected)
        XCTAssertEqual(parser.seekTable.map(\.offset), expected.map { UInt64(w.descriptions[Int($0 / 1024)].startOffset) })
        XCTAssertEqual(parser.seekTable.map(\.samples), [1024, 1024, 1024, 1024])

        // A stream without a byte-range fetcher seeks to each point's packet exactly, and the
        // packets from there on are the file's.
        for point in parser.seekTable {
            let packet = Int64(point.sampleNumber / 1024)
            var got: [[UInt8]] = []
            var armed = false
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, d in
                guard armed else { return }
                for x in d! { got.append(Array(data[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)])) }
            })
            var i = 0
            while !stream.isReadyToProducePackets && i < bytes.count { try stream.parse(bytes[i..<min(bytes.count, i + 512)]); i += 512 }
            let (offset, estimated) = try stream.seekOffset(toPacket: packet)
            XCTAssertEqual(offset, Int64(point.offset))
            XCTAssertFalse(estimated)
            armed = true
            try stream.parse(bytes[Int(try stream.dataOffset + offset)...], flags: .discontinuity)
            try stream.parse(nil)
            let first = w.descriptions[Int(packet)]
            XCTAssertEqual(got.first, Array(w.packets[Int(first.startOffset)..<Int(first.startOffset) + Int(first.dataByteSize)]))
            XCTAssertEqual(got.count, w.descriptions.count - Int(packet))
        }

        // The parser reads the file the same in any pieces.
        XCTAssertNil(dripFeedMismatch(bytes))
        // Damaged copies fail with errors, never a crash.
        XCTAssertEqual(exerciseDamaged(bytes).problems, [])

        // And the decoded samples are the source's.
        let decoder = try FLACDecoder(format: p.dataFormat!, magicCookie: p.magicCookie, output: .int32)
        decoder.verifiesMD5 = true
        let out = PCMBuffer(commonFormat: .int32, sampleRate: 8000, channels: 1, interleaved: true, frameCapacity: pcm.frameLength)
        try data.withBytes { (raw) throws(AudioError) in
            try decoder.decode(raw, packetCount: descriptions!.count, descriptions: descriptions, into: out)
        }
        XCTAssertEqual(out.interleavedBytes(), pcm.interleavedBytes())
        XCTAssertEqual(decoder.md5Matches, true)
    }

    func testReferenceToolsAcceptWrittenFiles() throws {
        let flac = try requireTool("flac")
        let dir = makeTemporaryDirectory()
        var cases: [(String, PCMBuffer, Int)] = [
            ("mono12", FLACWriterTests.synthetic(seconds: 12), 12),
            ("stereo16", FLACWriterTests.synthetic(seconds: 3, rate: 44100, channels: 2, bits: 16), 16),
            ("six24", FLACWriterTests.synthetic(seconds: 1, rate: 48000, channels: 6, bits: 24), 24),
            ("stereo32", FLACWriterTests.synthetic(seconds: 1, rate: 96000, channels: 2, bits: 32), 32),
            ("odd20", FLACWriterTests.synthetic(seconds: 1, rate: 35467, channels: 3, bits: 20), 20),
            // A rate no frame header can code (STREAMINFO's then), and the smallest depth.
            ("rate100003", FLACWriterTests.synthetic(seconds: 1, rate: 100_003, channels: 1, bits: 4), 4),
            ("eight8", FLACWriterTests.synthetic(seconds: 1, rate: 1000, channels: 8, bits: 8), 8),
        ]
        let empty = PCMBuffer(commonFormat: .int32, sampleRate: 44100, channels: 2, interleaved: true, frameCapacity: 0)
        cases.append(("empty", empty, 16))
        for (name, pcm, bits) in cases {
            let w = try write(pcm, bits: bits, to: dir + "/\(name).flac", info: FLACWriterTests.tags)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: flac)
            p.arguments = ["-s", "-t", w.path]
            try p.run()
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, "\(name): flac -t")
            let raw = bits % 8 != 0 ? [] : try runToolData(flac, ["-s", "-d", "-c", "--force-raw-format", "--endian=little",
                                                                  "--sign=signed", w.path])
            let width = (bits + 7) / 8
            var expected: [UInt8] = []
            pcm.withUnsafeMutableSamples(Int32.self) { s in
                for i in 0..<(pcm.frameLength * pcm.channelCount) {
                    let v = s[i] >> Int32(32 - bits)
                    for k in 0..<width { expected.append(UInt8(truncatingIfNeeded: v >> Int32(8 * k))) }
                }
            }
            // flac -t checked the samples against STREAMINFO's MD5, which must be the source's.
            XCTAssertEqual(Array(w.cookie.suffix(16)), MD5.digest(expected), name)
            // flac writes raw samples only at whole-byte depths.
            if bits % 8 == 0 { XCTAssertTrue(raw == expected, "\(name): flac -d gives the source's samples") }
        }
        let ffprobe = try requireTool("ffprobe")
        let tags = try runTool(ffprobe, ["-v", "error", "-show_entries", "format_tags", "-of", "default=nw=1", dir + "/mono12.flac"])
        for line in ["TAG:TITLE=A Title", "TAG:ARTIST=Some Artist", "TAG:ALBUM=An Album", "TAG:DATE=2024", "TAG:GENRE=Ambient",
                     "TAG:track=3", "TAG:COMMENT=made by the FLAC writer test"] {
            XCTAssertTrue(tags.lowercased().contains(line.lowercased()), "ffprobe: \(line) in \(tags)")
        }
    }

    func testCookieRulesAndRefusals() throws {
        let dir = makeTemporaryDirectory()
        let format = StreamDescription(sampleRate: 44100, formatID: .flac, bytesPerPacket: 0, framesPerPacket: 4096,
                                       bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 16)
        // No cookie: the header cannot be written.
        let bare = try AudioFile.create(path: dir + "/bare.flac", type: .flac, format: format, flags: .eraseFile)
        XCTAssertThrowsError(try bare.writePackets([1, 2, 3], count: 1, descriptions: [PacketDescription(startOffset: 0, dataByteSize: 3)],
                                                   startingAt: 0)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat)
        }
        // Only FLAC data.
        XCTAssertThrowsError(try AudioFile.create(path: dir + "/pcm.flac", type: .flac, format: .pcm(sampleRate: 44100, channels: 2, bits: 16),
                                                  flags: .eraseFile)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat)
        }
        // Other writers still refuse a cookie after the packets.
        let caf = try AudioFile.create(path: dir + "/late.caf", type: .caf, format: format, flags: .eraseFile)
        try caf.setProperty(.magicCookieData, .data([1, 2, 3]))
        try caf.writePackets([0, 0], count: 1, descriptions: [PacketDescription(startOffset: 0, dataByteSize: 2)], startingAt: 0)
        XCTAssertThrowsError(try caf.setProperty(.magicCookieData, .data([4, 5, 6]))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .illegalOperation)
        }
        try caf.close()
    }

    func testSeekPointsWidenToFitThePadding() {
        // Two hours at 48 kHz in 4096-sample frames: a point per 10 s would need 720.
        var s = WriterState(fileType: .flac, format: StreamDescription(sampleRate: 48000, formatID: .flac, bytesPerPacket: 0,
                                                                       framesPerPacket: 4096, bytesPerFrame: 0,
                                                                       channelsPerFrame: 2, bitsPerChannel: 16))
        let frames = 2 * 3600 * 48000 / 4096
        s.packetDescriptions = (0..<frames).map { PacketDescription(startOffset: Int64($0) * 9000, dataByteSize: 9000) }
        let points = FLACWriter.seekPoints(s, sampleRate: 48000)
        XCTAssertEqual(points.count, 360)  // every 20 s
        XCTAssertLessThanOrEqual(points.count * 18, FLACWriter.reservedBytes)
        XCTAssertTrue(points.allSatisfy { $0.sampleNumber % 4096 == 0 && $0.offset == $0.sampleNumber / 4096 * 9000 })
        XCTAssertEqual(FLACWriter.seekPoints(WriterState(fileType: .flac, format: s.format), sampleRate: 48000), [])
    }
}

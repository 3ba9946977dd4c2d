import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// AU file bytes built by hand.
enum AUBuilder {
    static func file(offset: UInt32? = nil, size: UInt32? = nil, encoding: UInt32 = 3, rate: UInt32 = 8000, channels: UInt32 = 1,
                     annotation: [UInt8] = [], data: [UInt8]) -> [UInt8]
    {
        var w = ByteWriter()
        w.write(FourCC(".snd"))
        w.write(offset ?? UInt32(24 + annotation.count))
        w.write(size ?? UInt32(data.count))
        w.write(encoding)
        w.write(rate)
        w.write(channels)
        w.write(annotation)
        w.write(data)
        return w.bytes
    }

    static let samples: [UInt8] = (0..<300).map { UInt8(($0 * 7) % 256) }
}

final class AUTests: XCTestCase {
    typealias Kit = AIFFAUTestKit

    func testEveryAUFixture() throws {
        let cases = try Kit.cases(extensions: ["au", "snd"], generate: generatedAUs)
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            try Kit.check(c)
            let file = try AudioFile(path: c.path)
            if let size = (c.header["dataSize"] as? NSNumber)?.int64Value {
                XCTAssertEqual(try file.audioDataByteCount, size, c.name)
            }
            if let annotation = c.header["annotation"] as? String {
                let text = annotation.isEmpty ? nil : annotation
                XCTAssertEqual(try file.infoDictionary[InfoDictionary.comments], text, c.name)
            }
        }
    }

    /// The files the fallback makes (more encodings than the fixtures), checked the same way.
    func testFilesMadeByFFmpeg() throws {
        _ = try requireTool("ffmpeg")
        for c in try generatedAUs() { try Kit.check(c) }
    }

    private func generatedAUs() throws -> [Kit.Case] {
        let dir = makeTemporaryDirectory()
        let frames = 5513, rate = 22050
        let s = Kit.signal(frames: frames, channels: 2)
        var cases: [Kit.Case] = []
        for (name, codec, format) in [("au_s16be.au", "pcm_s16be", "lpcm"), ("au_s8.au", "pcm_s8", "lpcm"), ("au_s24be.au", "pcm_s24be", "lpcm"),
                                      ("au_s32be.au", "pcm_s32be", "lpcm"), ("au_f32be.au", "pcm_f32be", "lpcm"),
                                      ("au_f64be.snd", "pcm_f64be", "lpcm"), ("au_ulaw.au", "pcm_mulaw", "ulaw"), ("au_alaw.au", "pcm_alaw", "alaw")] {
            let path = dir + "/" + name
            try Kit.encode(s, rate: rate, channels: 2, codec: codec, format: "au", to: path)
            cases.append(Kit.Case(path: path, sampleRate: Double(rate), channels: 2, frames: frames, fileType: "NeXT", formatID: format))
        }
        // Written to a pipe: the data size stays 0xFFFFFFFF.
        let src = try Kit.writeSignal(s, in: dir)
        let piped = try Kit.run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-f", "s16le", "-ar", "\(rate)", "-ac", "2", "-i", src,
                                           "-c:a", "pcm_s16be", "-f", "au", "-"])
        XCTAssertEqual(Array(piped[8..<12]), [0xFF, 0xFF, 0xFF, 0xFF])
        try writeWholeFile(dir + "/au_unknown_size.au", Array(piped))
        cases.append(Kit.Case(path: dir + "/au_unknown_size.au", sampleRate: Double(rate), channels: 2, frames: frames,
                              fileType: "NeXT", formatID: "lpcm"))
        return cases
    }

    func testEncodingsGiveTheirFormats() throws {
        func format(_ encoding: UInt32, channels: UInt32 = 2) throws -> (StreamDescription, Int64) {
            let f = try AudioFile(source: MemorySource(AUBuilder.file(encoding: encoding, rate: 11025, channels: channels, data: AUBuilder.samples)))
            return (try f.dataFormat, try f.audioDataPacketCount)
        }
        func pcm(_ bits: UInt32, float: Bool = false) -> StreamDescription {
            var f = StreamDescription.pcm(sampleRate: 11025, channels: 2, bits: bits, isFloat: float, isBigEndian: true)
            f.formatFlags.insert(.isBigEndian)
            return f
        }
        XCTAssertEqual(try format(2).0, pcm(8))
        XCTAssertEqual(try format(2).0.formatFlags.rawValue, 0xE)
        XCTAssertEqual(try format(2).1, 150)
        XCTAssertEqual(try format(3).0, pcm(16))
        XCTAssertEqual(try format(3).1, 75)
        XCTAssertEqual(try format(4).0, pcm(24))
        XCTAssertEqual(try format(4).1, 50)
        XCTAssertEqual(try format(5).0, pcm(32))
        XCTAssertEqual(try format(6).0, pcm(32, float: true))
        XCTAssertEqual(try format(6).0.formatFlags.rawValue, 0xB)
        XCTAssertEqual(try format(7).0, pcm(64, float: true))
        XCTAssertEqual(try format(7).1, 18)
        for (encoding, id) in [(UInt32(1), AudioFormatID.uLaw), (27, .aLaw)] {
            let (f, n) = try format(encoding)
            XCTAssertEqual(f, StreamDescription(sampleRate: 11025, formatID: id, bytesPerPacket: 2, framesPerPacket: 1, bytesPerFrame: 2,
                                                channelsPerFrame: 2, bitsPerChannel: 8))
            XCTAssertEqual(n, 150)
        }
        for encoding: UInt32 in [0, 8, 23, 26, 28, 0xFFFF_FFFF] {
            XCTAssertThrowsError(try format(encoding), "\(encoding)") { e in
                XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat)
                XCTAssertTrue((e as? AudioError)?.message.contains("\(encoding)") ?? false)
            }
        }
    }

    func testAnnotationBecomesComments() throws {
        let text = AUBuilder.file(annotation: Array("Processed by SoX\0\0\0\0".utf8), data: AUBuilder.samples)
        let file = try AudioFile(source: MemorySource(text))
        XCTAssertEqual(try file.infoDictionary[InfoDictionary.comments], "Processed by SoX")
        XCTAssertEqual(try file.dataOffset, 44)
        XCTAssertEqual(try Kit.allPackets(file), AUBuilder.samples)
        let r = feed(text, pattern: .oneByteAtATime)
        XCTAssertEqual(r.info?[InfoDictionary.comments], "Processed by SoX")
        XCTAssertEqual(r.notifications, [.fileFormat, .dataFormat, .infoDictionary, .audioDataByteCount, .audioDataPacketCount,
                                         .bitRate, .dataOffset, .maximumPacketSize, .readyToProducePackets])
        XCTAssertNil(dripFeedMismatch(text))

        // Not text, all zeros, or none at all: no comments.
        for annotation in [[0x01, 0x02, 0xFF, 0x00], [0, 0, 0, 0, 0, 0, 0, 0], []] as [[UInt8]] {
            let bytes = AUBuilder.file(annotation: annotation, data: AUBuilder.samples)
            let f = try AudioFile(source: MemorySource(bytes))
            XCTAssertTrue(try f.infoDictionary.isEmpty, "\(annotation)")
            XCTAssertEqual(try f.dataOffset, Int64(24 + annotation.count))
            XCTAssertEqual(feed(bytes, pattern: .allAtOnce).notifications,
                           [.fileFormat, .dataFormat, .audioDataByteCount, .audioDataPacketCount, .bitRate, .dataOffset,
                            .maximumPacketSize, .readyToProducePackets])
        }
        // An annotation larger than 64 KiB is skipped, not read.
        let huge = AUBuilder.file(annotation: [UInt8](repeating: 0x41, count: 70_000), data: AUBuilder.samples)
        let f = try AudioFile(source: MemorySource(huge))
        XCTAssertTrue(try f.infoDictionary.isEmpty)
        XCTAssertEqual(try Kit.allPackets(f), AUBuilder.samples)
        XCTAssertEqual(feed(huge, pattern: .randomChunks(seed: 8, maximum: 4000)).packetData, AUBuilder.samples)
        XCTAssertNil(dripFeedMismatch(huge, patterns: [.allAtOnce, .randomChunks(seed: 1, maximum: 1000)]))
    }

    /// A data size of 0xFFFFFFFF means "to the end": AudioFile knows the end, a stream does not.
    func testUnknownDataSizeRunsToTheEnd() throws {
        let bytes = AUBuilder.file(size: 0xFFFF_FFFF, data: AUBuilder.samples + [9])  // a half packet at the end
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.audioDataByteCount, 301)
        XCTAssertEqual(try file.audioDataPacketCount, 150)
        XCTAssertEqual(try Kit.allPackets(file), AUBuilder.samples)
        let r = feed(bytes, pattern: .randomChunks(seed: 2, maximum: 7))
        XCTAssertNil(r.error)
        XCTAssertNil(r.audioDataByteCount)
        XCTAssertNil(r.audioDataPacketCount)
        XCTAssertEqual(r.packetData, AUBuilder.samples)
        XCTAssertEqual(r.notifications, [.fileFormat, .dataFormat, .bitRate, .dataOffset, .maximumPacketSize, .readyToProducePackets])
        XCTAssertNil(dripFeedMismatch(bytes))
    }

    func testDataSizeLargerThanTheFileIsCutToTheFile() throws {
        let bytes = AUBuilder.file(size: 0xFFFF_FFF0, data: AUBuilder.samples)
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.audioDataPacketCount, 150)
        XCTAssertEqual(try Kit.allPackets(file), AUBuilder.samples)
        let r = feed(bytes, pattern: .allAtOnce)
        XCTAssertNil(r.error)
        XCTAssertEqual(r.packetData, AUBuilder.samples)
        XCTAssertNil(dripFeedMismatch(bytes))
        // A data size smaller than the data: the rest is not audio.
        let short = AUBuilder.file(size: 100, data: AUBuilder.samples)
        XCTAssertEqual(try AudioFile(source: MemorySource(short)).audioDataPacketCount, 50)
        XCTAssertEqual(feed(short, pattern: .oneByteAtATime).packetData, Array(AUBuilder.samples[..<100]))
    }

    func testDamagedInput() {
        let good = AUBuilder.file(annotation: Array("note\0\0\0\0".utf8), data: AUBuilder.samples)
        func fileError(_ bytes: [UInt8]) -> AudioError.Code? {
            do { _ = try AudioFile(source: MemorySource(bytes)); return nil } catch { return error.code }
        }
        let cases: [(String, [UInt8], AudioError.Code)] = [
            ("empty", [], .unsupportedFileType),
            ("3 bytes", Array(good[..<3]), .unsupportedFileType),
            ("magic only", Array(good[..<4]), .invalidFile),
            ("23 bytes", Array(good[..<23]), .invalidFile),
            ("inside the annotation", Array(good[..<28]), .invalidFile),
            ("offset inside the header", AUBuilder.file(offset: 16, data: AUBuilder.samples), .invalidFile),
            ("offset past the end", AUBuilder.file(offset: 1000, data: AUBuilder.samples), .invalidFile),
            ("0 channels", AUBuilder.file(channels: 0, data: AUBuilder.samples), .unsupportedDataFormat),
            ("2^31 channels", AUBuilder.file(channels: 1 << 31, data: AUBuilder.samples), .unsupportedDataFormat),
            ("0 Hz", AUBuilder.file(rate: 0, data: AUBuilder.samples), .unsupportedDataFormat),
            ("G.721", AUBuilder.file(encoding: 23, data: AUBuilder.samples), .unsupportedDataFormat),
        ]
        for (name, bytes, code) in cases {
            XCTAssertEqual(fileError(bytes), code, name)
            let r = feed(bytes, pattern: .allAtOnce)
            XCTAssertEqual(r.error?.code, code, name)
            XCTAssertTrue(r.packetData.isEmpty, name)
            XCTAssertNil(dripFeedMismatch(bytes), name)
        }
        // Cut inside the data: what is there is read.
        let cut = Array(good[..<(32 + 101)])
        XCTAssertEqual(try AudioFile(source: MemorySource(cut)).audioDataPacketCount, 50)
        XCTAssertEqual(feed(cut, pattern: .allAtOnce).packetData, Array(AUBuilder.samples[..<100]))
    }

    func testStreamSeekResumesAtThePacket() throws {
        let bytes = AUBuilder.file(annotation: Array("12345678".utf8), data: AUBuilder.samples)
        var got: [UInt8] = []
        let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, _ in got += data })
        try stream.parse(Array(bytes[..<40]))
        XCTAssertTrue(stream.isReadyToProducePackets)
        XCTAssertEqual(try stream.dataOffset, 32)
        let (offset, flags) = try stream.seek(toPacket: 100)
        XCTAssertEqual(offset, 200)
        XCTAssertEqual(flags, [])
        got = []
        try stream.parse(Array(bytes[232...]), flags: .discontinuity)
        try stream.parse(nil)
        XCTAssertEqual(got, Array(AUBuilder.samples[200...]))
        XCTAssertThrowsError(try stream.seek(toPacket: 151)) { XCTAssertEqual(($0 as? AudioError)?.code, .invalidPacketOffset) }
    }

    // MARK: Writing

    static func pcm(_ bits: UInt32, channels: UInt32 = 2, rate: Double = 22050, float: Bool = false) -> StreamDescription {
        var f = StreamDescription.pcm(sampleRate: rate, channels: channels, bits: bits, isFloat: float, isBigEndian: true)
        f.formatFlags.insert(.isBigEndian)
        return f
    }

    static func g711(_ id: AudioFormatID, channels: UInt32) -> StreamDescription {
        StreamDescription(sampleRate: 8000, formatID: id, bytesPerPacket: channels, framesPerPacket: 1, bytesPerFrame: channels,
                          channelsPerFrame: channels, bitsPerChannel: 8)
    }

    func testWriterRoundTrips() throws {
        let dir = makeTemporaryDirectory()
        let cases: [(String, StreamDescription, String)] = [
            ("s8", AUTests.pcm(8, channels: 1), "pcm_s8"), ("s16", AUTests.pcm(16), "pcm_s16be"), ("s24", AUTests.pcm(24), "pcm_s24be"),
            ("s32", AUTests.pcm(32, rate: 48000), "pcm_s32be"), ("f32", AUTests.pcm(32, float: true), "pcm_f32be"),
            ("f64", AUTests.pcm(64, channels: 1, float: true), "pcm_f64be"),
            ("ulaw", AUTests.g711(.uLaw, channels: 1), "pcm_mulaw"), ("alaw", AUTests.g711(.aLaw, channels: 2), "pcm_alaw"),
        ]
        for (name, format, codec) in cases {
            for comments in [nil, "made by Tonearm"] as [String?] {
                let path = dir + "/\(name).au"
                var g = SeededGenerator(seed: 12)
                let data = (0..<(257 * Int(format.bytesPerPacket))).map { _ in UInt8(truncatingIfNeeded: g.next()) }
                let w = try AudioFile.create(path: path, type: .next, format: format, flags: .eraseFile)
                var info = InfoDictionary()
                info[InfoDictionary.comments] = comments
                try w.setProperty(.infoDictionary, .info(info))
                try w.writePackets(data, count: 257, startingAt: 0)
                try w.close()

                let bytes = try readWholeFile(path)
                let header = ByteReader(bytes)
                let offset = Int(header.getInteger(at: 4, as: UInt32.self)!)
                XCTAssertEqual(offset, comments == nil ? 32 : 40, name)
                XCTAssertEqual(header.getInteger(at: 8, as: UInt32.self), UInt32(data.count), name)
                XCTAssertEqual(bytes.count, offset + data.count, name)
                let r = try AudioFile(path: path)
                XCTAssertEqual(try r.fileType, .next)
                XCTAssertEqual(try r.dataFormat, format, name)
                XCTAssertEqual(try r.audioDataPacketCount, 257, name)
                XCTAssertEqual(try Kit.allPackets(r), data, name)
                XCTAssertEqual(try r.infoDictionary, info, name)
                XCTAssertNil(dripFeedMismatch(bytes), name)
                XCTAssertEqual(feed(bytes, pattern: .randomChunks(seed: 6, maximum: 50)).packetData, data, name)
                _ = try requireTool("ffprobe")
                let probe = try Kit.probe(path)
                XCTAssertEqual(probe.codec, codec, name)
                XCTAssertEqual(probe.rate, Int(format.sampleRate), name)
                XCTAssertEqual(probe.channels, Int(format.channelsPerFrame), name)
            }
        }
    }

    func testFFmpegDecodesWrittenFilesToTheSource() throws {
        _ = try requireTool("ffmpeg")
        let dir = makeTemporaryDirectory()
        let source = Kit.signal(frames: 2001, channels: 2)
        func be(_ v: Int32, bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: v >> (8 * (bytes - 1 - $0))) } }
        func write(_ name: String, _ format: StreamDescription, _ data: [UInt8]) throws -> String {
            let path = dir + "/" + name
            let w = try AudioFile.create(path: path, type: .next, format: format, flags: .eraseFile)
            try w.writePackets(data, count: data.count / Int(format.bytesPerPacket), startingAt: 0)
            try w.close()
            return path
        }
        let lossless: [(String, StreamDescription, [UInt8], [Int16])] = [
            ("s16.au", AUTests.pcm(16), source.flatMap { be(Int32($0), bytes: 2) }, source),
            ("s24.au", AUTests.pcm(24), source.flatMap { be(Int32($0) << 8, bytes: 3) }, source),
            ("s32.au", AUTests.pcm(32), source.flatMap { be(Int32($0) << 16, bytes: 4) }, source),
            ("s8.au", AUTests.pcm(8), source.flatMap { be(Int32($0) >> 8, bytes: 1) }, source.map { ($0 >> 8) << 8 }),
            ("f32.au", AUTests.pcm(32, float: true), source.flatMap { be(Int32(bitPattern: (Float($0) / 32768).bitPattern), bytes: 4) }, source),
        ]
        for (name, format, data, expected) in lossless {
            XCTAssertEqual(try Kit.decodeS16(try write(name, format, data)), expected, name)
        }
        for (codec, ext) in [("pcm_mulaw", "mulaw"), ("pcm_alaw", "alaw")] {
            let raw = dir + "/ffmpeg.\(ext)"
            try Kit.encode(source, rate: 8000, channels: 2, codec: codec, format: ext, to: raw)
            let packets = try readWholeFile(raw)
            XCTAssertEqual(packets.count, source.count)
            let ours = try write("tonearm_\(ext).au", AUTests.g711(ext == "mulaw" ? .uLaw : .aLaw, channels: 2), packets)
            XCTAssertEqual(try Kit.decodeS16(ours), try Kit.decodeS16(raw, inputFormat: ["-f", ext, "-ar", "8000", "-ac", "2"]), ext)
        }
    }

    func testWriterRejectsWhatAUCannotHold() {
        let path = makeTemporaryDirectory() + "/reject.au"
        let cases: [StreamDescription] = [
            .pcm(sampleRate: 8000, channels: 1, bits: 16),  // little-endian
            .pcm(sampleRate: 8000, channels: 1, bits: 8, isSigned: false),
            .pcm(sampleRate: 8000, channels: 1, bits: 32, isFloat: true),
            .pcm(sampleRate: 8000.5, channels: 1, bits: 16, isBigEndian: true),
            .pcm(sampleRate: 8000, channels: 1, bits: 20, isBigEndian: true),
            StreamDescription(sampleRate: 8000, formatID: .appleIMA4, bytesPerPacket: 34, framesPerPacket: 64, bytesPerFrame: 0,
                              channelsPerFrame: 1, bitsPerChannel: 0),
        ]
        for format in cases {
            XCTAssertThrowsError(try AudioFile.create(path: path, type: .next, format: format, flags: .eraseFile), "\(format)") {
                XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat, "\(format)")
            }
        }
    }

    func testRegistry() throws {
        let info = try XCTUnwrap(FormatRegistry.info(for: .next))
        XCTAssertEqual(info.name, "NeXT/Sun")
        XCTAssertEqual(info.extensions, ["au", "snd"])
        XCTAssertEqual(info.mimeTypes, ["audio/basic"])
        XCTAssertEqual(info.hfsTypeCodes, ["NeXT"])
        XCTAssertEqual(info.utis, ["public.ulaw-audio"])
        XCTAssertEqual(Set(info.writableFormats), [.linearPCM, .uLaw, .aLaw])
        XCTAssertEqual(FormatRegistry.types(forExtension: "snd"), [.next])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/basic"), [.next])
        XCTAssertEqual(FormatRegistry.probe(AUBuilder.file(data: [0, 0])), .match(.next))
    }
}


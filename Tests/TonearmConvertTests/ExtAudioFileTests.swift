import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// ExtAudioFile: reading in a client format, sample-accurate seeking, and writing through
/// every writer.
final class ExtAudioFileTests: XCTestCase {
    func readAll(_ f: ExtAudioFile, chunk: Int = 1000) throws -> [UInt8] {
        var out: [UInt8] = []
        while try f.read(frames: chunk, into: &out) > 0 {}
        return out
    }

    func testReadsFLACInTheClientFormatMatchingTheStreamMD5() throws {
        for name in ["flac_default", "flac_5.1", "flac_variable", "flac_24bit_24k"] {
            let f = try ExtAudioFile(path: fixturesDirectory + "/flac/\(name).flac")
            let bits = f.fileDataFormat.bitsPerChannel
            let cookie = try XCTUnwrap(f.file.magicCookie)
            if bits == 16 {
                try f.setClientDataFormat(.pcm(sampleRate: 0, channels: f.fileDataFormat.channelsPerFrame, bits: 16))
            } else {
                try f.setClientDataFormat(.pcm(sampleRate: 0, channels: f.fileDataFormat.channelsPerFrame, bits: bits))
            }
            let pcm = try readAll(f, chunk: 333)
            XCTAssertEqual(MD5.digest(pcm), Array(cookie.suffix(16)), name)
            XCTAssertEqual(Int64(pcm.count) / Int64(f.clientDataFormat.bytesPerFrame), f.fileLengthFrames, name)
            XCTAssertEqual(f.tell(), f.fileLengthFrames, name)
        }
    }

    func testDefaultClientFormatOfCompressedFilesIsFloat32() throws {
        let f = try ExtAudioFile(path: fixturesDirectory + "/flac/flac_default.flac")
        XCTAssertTrue(f.clientDataFormat.isFloat)
        XCTAssertEqual(f.clientDataFormat.bitsPerChannel, 32)
        let buffer = try XCTUnwrap(PCMBuffer(format: f.clientDataFormat, frameCapacity: 20000))
        XCTAssertEqual(try f.read(into: buffer), 11026)
        XCTAssertEqual(buffer.frameLength, 11026)
    }

    /// Every (file, client format) pair: a seek then a read gives exactly the frames a read
    /// from the start gives there.
    func testSeekIsSampleAccurate() throws {
        let files = [fixturesDirectory + "/flac/flac_default.flac", fixturesDirectory + "/flac/flac_variable.flac",
                     fixturesDirectory + "/pcm/caf_ima4.caf", packageRoot + "/Samples/tone-stereo.wav",
                     fixturesDirectory + "/alac/alac_16_stereo.m4a", fixturesDirectory + "/alac/alac_24_stereo.m4a"]
        for path in files {
            let probe = try ExtAudioFile(path: path)
            let rate = probe.fileDataFormat.sampleRate
            let clients: [StreamDescription] = [
                .pcm(sampleRate: 0, channels: probe.fileDataFormat.channelsPerFrame, bits: 16),
                .pcm(sampleRate: 16000, channels: 1, bits: 32, isFloat: true),
                .pcm(sampleRate: rate == 48000 ? 44100 : 48000, channels: 2, bits: 32, isFloat: true),
            ]
            for client in clients {
                let f = try ExtAudioFile(path: path)
                try f.setClientDataFormat(client)
                let bpf = Int(f.clientDataFormat.bytesPerFrame)
                let whole = try readAll(f)
                let total = whole.count / bpf
                XCTAssertEqual(Int64(total), f.clientLengthFrames, "\(path) as \(client)")
                for target in [0, 1, 63, 64, 1000, 4095, 4096, 4097, total / 2, total - 5] where target >= 0 && target < total {
                    try f.seek(toFrame: Int64(target))
                    XCTAssertEqual(f.tell(), Int64(target))
                    var got: [UInt8] = []
                    let n = try f.read(frames: 777, into: &got)
                    XCTAssertEqual(n, min(777, total - target), "\(path) as \(client) at \(target)")
                    let expected = Array(whole[target * bpf..<(target + n) * bpf])
                    if path.hasSuffix("ima4.caf") && client.bitsPerChannel == 16 {
                        // IMA4's predictor keeps low bits from every packet before, which a
                        // seek cannot know: the samples land in place, a few LSBs apart.
                        let a = got.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                        let b = expected.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                        let worst = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
                        XCTAssertLessThanOrEqual(worst, 128, "\(path) at \(target)")
                    } else {
                        XCTAssertTrue(got == expected, "\(path) as \(client): frames at \(target) differ after a seek")
                    }
                    XCTAssertEqual(f.tell(), Int64(target + n))
                }
            }
        }
    }

    /// Far into a long file, a resampled seek starts the resampler part-way (where the two
    /// rates' sample grids meet) and still gives the frames of a read from the start, bit for
    /// bit.
    func testResampledSeekFarIntoALongFile() throws {
        let path = makeTemporaryDirectory() + "/long.wav"
        let frames = 200_000
        let w = try ExtAudioFile.create(path: path, type: .wave, format: .pcm(sampleRate: 44100, channels: 2, bits: 16))
        try w.write(AudioConverterTests.bytes(AudioConverterTests.signal(frames: frames, channels: 2)), frames: frames)
        try w.close()
        // 44.1 → 48 and → 32 kHz run in two stages at 'norm' and 'bats': a seek places their FFT
        // blocks as a read from the start does.
        for (rate, complexity) in [(48000.0, SampleRateConverterComplexity.normal), (48000, .mastering), (32000, .normal),
                                   (32000, .mastering), (16000, .mastering), (22050, .linear)] {
            let f = try ExtAudioFile(path: path)
            try f.setSampleRateConverterComplexity(complexity)
            try f.setClientDataFormat(.pcm(sampleRate: rate, channels: 1, bits: 32, isFloat: true))
            let whole = try readAll(f, chunk: 4096)
            let total = whole.count / 4
            XCTAssertEqual(Int64(total), f.clientLengthFrames)
            for target in [total - 1, total / 2 + 1, 150_001 * Int(rate) / 44100] {
                try f.seek(toFrame: Int64(target))
                var got: [UInt8] = []
                let n = try f.read(frames: 3000, into: &got)
                XCTAssertEqual(n, min(3000, total - target))
                XCTAssertTrue(got == Array(whole[target * 4..<(target + n) * 4]), "\(rate) Hz \(complexity) at \(target)")
            }
        }
    }

    /// A planar Float32 client (AVAudioPCMBuffer's usual shape) reads and writes through
    /// PCMBuffers; its bytes are interleaved.
    func testPlanarClientFormat() throws {
        let planar = StreamDescription.float32(sampleRate: 0, channels: 2)
        XCTAssertFalse(planar.isInterleaved)
        let r = try ExtAudioFile(path: fixturesDirectory + "/flac/flac_default.flac")
        try r.setClientDataFormat(planar)
        XCTAssertEqual(r.clientBytesFormat.bytesPerFrame, 8)
        let buffer = try XCTUnwrap(PCMBuffer(format: r.clientDataFormat, frameCapacity: 20000))
        XCTAssertEqual(try r.read(into: buffer), 11026)
        let w = try ExtAudioFile.create(path: makeTemporaryDirectory() + "/p.wav", type: .wave,
                                        format: .pcm(sampleRate: 22050, channels: 2, bits: 16))
        try w.setClientDataFormat(planar)
        try w.write(buffer)
        try w.close()
        let back = try ExtAudioFile(path: w.file.path ?? "")
        let s16 = try readAll(back)
        try r.seek(toFrame: 0)
        try r.setClientDataFormat(.pcm(sampleRate: 0, channels: 2, bits: 16))
        XCTAssertTrue(try readAll(r) == s16)
    }

    /// The converter writes straight into the caller's memory: a planar PCMBuffer, an
    /// AudioBufferList of one buffer per channel, and one interleaved buffer give the same
    /// samples as the byte reads, block by block of odd sizes, with and without resampling.
    func testReadsIntoBuffersAndBufferListsMatchTheByteReads() throws {
        let path = fixturesDirectory + "/mp3dec/lame_cbr320_stereo.mp3"
        for rate in [0.0, 48000] {
            for interleaved in [false, true] {
                let client = StreamDescription.float32(sampleRate: rate, channels: 2, interleaved: interleaved)
                let reference = try ExtAudioFile(path: path)
                try reference.setClientDataFormat(.float32(sampleRate: rate, channels: 2, interleaved: true))
                let bytes = try readAll(reference, chunk: 4096)
                let expected = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                let frames = expected.count / 2
                XCTAssertEqual(Int64(frames), reference.clientLengthFrames)

                // A PCMBuffer, refilled from frame 0 each time.
                let viaBuffer = try ExtAudioFile(path: path)
                try viaBuffer.setClientDataFormat(client)
                let buffer = try XCTUnwrap(PCMBuffer(format: viaBuffer.clientDataFormat, frameCapacity: 1001))
                var got: [Float] = []
                while true {
                    buffer.frameLength = 0
                    let n = try viaBuffer.read(into: buffer)
                    if n == 0 { break }
                    XCTAssertEqual(n, buffer.frameLength)
                    let l = buffer.floatSamples(channel: 0), r = buffer.floatSamples(channel: 1)
                    for i in 0..<n { got += [l[i], r[i]] }
                }
                XCTAssertEqual(got, expected, "PCMBuffer, rate \(rate), interleaved \(interleaved)")

                // The caller's own memory, as an AudioBufferList.
                let viaList = try ExtAudioFile(path: path)
                try viaList.setClientDataFormat(client)
                let block = 777
                var left = [Float](repeating: .nan, count: block * 2), right = left
                got = []
                while true {
                    let n = try left.withUnsafeMutableBytes { l in
                        try right.withUnsafeMutableBytes { r in
                            var buffers = interleaved ? [l] : [UnsafeMutableRawBufferPointer(rebasing: l[0..<block * 4]), r]
                            return try buffers.withUnsafeMutableBufferPointer { try viaList.read(frames: block, into: AudioBufferList($0)) }
                        }
                    }
                    if n == 0 { break }
                    for i in 0..<n { got += interleaved ? [left[2 * i], left[2 * i + 1]] : [left[i], right[i]] }
                }
                XCTAssertEqual(got, expected, "AudioBufferList, rate \(rate), interleaved \(interleaved)")
                XCTAssertEqual(viaList.tell(), Int64(frames))
            }
        }
    }

    /// Asking for more frames than the file holds (Int.max, even) reads them all, and the
    /// array grows only as far as they go.
    func testByteReadsOfMoreThanTheFileHold() throws {
        let f = try ExtAudioFile(path: fixturesDirectory + "/flac/flac_default.flac")
        var out: [UInt8] = []
        XCTAssertEqual(try f.read(frames: .max, into: &out), 11026)
        XCTAssertEqual(out.count, 11026 * Int(f.clientBytesFormat.bytesPerFrame))
        XCTAssertLessThan(out.capacity, 4 << 20)
        XCTAssertEqual(try f.read(frames: .max, into: &out), 0)
    }

    func testBufferListReadsCheckTheList() throws {
        let f = try ExtAudioFile(path: fixturesDirectory + "/flac/flac_default.flac")
        try f.setClientDataFormat(.float32(sampleRate: 0, channels: 2))    // planar: two buffers
        var memory = [UInt8](repeating: 0, count: 4096)
        try memory.withUnsafeMutableBytes { raw in
            var one = [raw]
            try one.withUnsafeMutableBufferPointer { list in
                XCTAssertThrowsError(try f.read(frames: 100, into: AudioBufferList(list))) {
                    XCTAssertEqual(($0 as? AudioError)?.code, .parameter)
                }
            }
            var two = [UnsafeMutableRawBufferPointer(rebasing: raw[0..<2048]), UnsafeMutableRawBufferPointer(rebasing: raw[2048..<2400])]
            try two.withUnsafeMutableBufferPointer { list in
                // 100 Float32 frames need 400 bytes per channel; the second buffer holds 352.
                XCTAssertThrowsError(try f.read(frames: 100, into: AudioBufferList(list))) {
                    XCTAssertEqual(($0 as? AudioError)?.code, .invalidOutputSize)
                }
                XCTAssertEqual(try f.read(frames: 88, into: AudioBufferList(list)), 88)
            }
        }
        XCTAssertEqual(f.tell(), 88)
    }

    func testResamplingToSpeechFormatGivesTheRatioLength() throws {
        let f = try ExtAudioFile(path: packageRoot + "/Samples/tone-stereo.wav")
        try f.setClientDataFormat(.pcm(sampleRate: 16000, channels: 1, bits: 32, isFloat: true))
        let frames = try readAll(f).count / 4
        let n = f.fileLengthFrames
        XCTAssertEqual(Int64(frames), (n * 16000 + Int64(f.fileDataFormat.sampleRate) - 1) / Int64(f.fileDataFormat.sampleRate))
    }

    /// Writes a signal through each PCM writer with a 16-bit client and reads it back.
    func testRoundTripThroughEveryWriter() throws {
        let dir = makeTemporaryDirectory()
        let frames = 20000
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let bytes = AudioConverterTests.bytes(samples)
        let cases: [(AudioFileTypeID, String, StreamDescription)] = [
            (.wave, "wav", .pcm(sampleRate: 44100, channels: 2, bits: 24)),
            (.rf64, "rf64", .pcm(sampleRate: 44100, channels: 2, bits: 16)),
            (.wave64, "w64", .pcm(sampleRate: 44100, channels: 2, bits: 32, isFloat: true)),
            (.aiff, "aiff", .pcm(sampleRate: 44100, channels: 2, bits: 16, isBigEndian: true)),
            (.aifc, "aifc", .pcm(sampleRate: 44100, channels: 2, bits: 24, isBigEndian: true)),
            (.caf, "caf", .pcm(sampleRate: 44100, channels: 2, bits: 32, isBigEndian: true)),
            (.next, "au", .pcm(sampleRate: 44100, channels: 2, bits: 16, isBigEndian: true)),
        ]
        for (type, ext, format) in cases {
            let path = dir + "/out." + ext
            let w = try ExtAudioFile.create(path: path, type: type, format: format)
            try w.setClientDataFormat(.pcm(sampleRate: 44100, channels: 2, bits: 16))
            var at = 0
            for size in [1, 4095, 10000, 100_000] where at < frames {
                let n = min(size, frames - at)
                try w.write(Array(bytes[at * 4..<(at + n) * 4]), frames: n)
                at += n
            }
            try w.close()
            let r = try ExtAudioFile(path: path)
            XCTAssertEqual(try r.file.fileType, type, ext)
            XCTAssertEqual(r.fileDataFormat.bitsPerChannel, format.bitsPerChannel, ext)
            try r.setClientDataFormat(.pcm(sampleRate: 0, channels: 2, bits: 16))
            XCTAssertEqual(r.fileLengthFrames, Int64(frames), ext)
            XCTAssertTrue(try readAll(r) == bytes, "\(ext): the samples read back differ")
        }
    }

    /// FLAC through ExtAudioFile: the encoder behind the converter, the final STREAMINFO
    /// (MD5 of the samples), tags; read back exactly, and decoded alike by `flac -d`.
    func testWritesFLACThroughTheEncoder() throws {
        let dir = makeTemporaryDirectory()
        let frames = 30000
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let bytes = AudioConverterTests.bytes(samples)
        let flac = StreamDescription(sampleRate: 44100, formatID: .flac, bytesPerPacket: 0, framesPerPacket: 0, bytesPerFrame: 0,
                                     channelsPerFrame: 2, bitsPerChannel: 16)
        let w = try ExtAudioFile.create(path: dir + "/x.flac", type: .flac, format: flac)
        try w.setClientDataFormat(.pcm(sampleRate: 44100, channels: 2, bits: 16))
        var info = InfoDictionary()
        info[InfoDictionary.title] = "Tonearm test"
        try w.setInfo(info)
        for start in stride(from: 0, to: frames, by: 7000) {
            let n = min(7000, frames - start)
            try w.write(Array(bytes[start * 4..<(start + n) * 4]), frames: n)
        }
        try w.close()
        let r = try ExtAudioFile(path: dir + "/x.flac")
        XCTAssertEqual(r.fileDataFormat.formatID, .flac)
        XCTAssertEqual(r.fileLengthFrames, Int64(frames))
        XCTAssertEqual(try r.file.infoDictionary[InfoDictionary.title], "Tonearm test")
        try r.setClientDataFormat(.pcm(sampleRate: 0, channels: 2, bits: 16))
        XCTAssertTrue(try readAll(r) == bytes)
        XCTAssertEqual(Array(try XCTUnwrap(r.file.magicCookie).suffix(16)), MD5.digest(bytes))
        let tool = try requireTool("flac")
        let decoded = try runToolData(tool, ["-d", "-c", "-s", "--force-raw-format", "--endian=little", "--sign=signed", dir + "/x.flac"])
        XCTAssertTrue(decoded == bytes, "flac -d disagrees")
    }

    func testWritingResamplesAndMixesTheClientFormat() throws {
        let dir = makeTemporaryDirectory()
        let frames = 44100
        let samples = AudioConverterTests.signal(frames: frames, channels: 2)
        let w = try ExtAudioFile.create(path: dir + "/m.wav", type: .wave, format: .pcm(sampleRate: 48000, channels: 1, bits: 16))
        try w.setClientDataFormat(.pcm(sampleRate: 44100, channels: 2, bits: 16))
        try w.write(AudioConverterTests.bytes(samples), frames: frames)
        try w.close()
        let r = try ExtAudioFile(path: dir + "/m.wav")
        XCTAssertEqual(r.fileLengthFrames, 48000)
        XCTAssertEqual(r.fileDataFormat.channelsPerFrame, 1)
    }

    func testClientFormatErrors() throws {
        let f = try ExtAudioFile(path: packageRoot + "/Samples/tone-stereo.wav")
        let aac = StreamDescription(sampleRate: 44100, formatID: "aac ", bytesPerPacket: 0, framesPerPacket: 1024, bytesPerFrame: 0,
                                    channelsPerFrame: 2, bitsPerChannel: 0)
        XCTAssertThrowsError(try f.setClientDataFormat(aac)) { XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat) }
        XCTAssertThrowsError(try f.setClientDataFormat(.pcm(sampleRate: 0, channels: 9, bits: 16))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat)
        }
        // The old client format still works after a refused one.
        var out: [UInt8] = []
        XCTAssertEqual(try f.read(frames: 10, into: &out), 10)
        // A format Tonearm parses but does not decode natively (AC-3; AAC decodes since issue
        // 17). With the FFmpeg trait FFmpeg decodes it, unless only native decoders may.
        let ac3 = fixturesDirectory + "/ac3/" + (fixtureFiles("ac3", extensions: ["ac3"]).first.map { ($0 as NSString).lastPathComponent } ?? "x")
        #if FFmpeg
        XCTAssertNoThrow(try ExtAudioFile(path: ac3))
        CodecRegistry.preference = .native
        defer { CodecRegistry.preference = .automatic }
        #endif
        XCTAssertThrowsError(try ExtAudioFile(path: ac3)) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat)
        }
    }
}

#if FFmpeg
import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// A golden of `Tests/Fixtures/ffmpeg` (tools/ffmpeg_golden.py): ffprobe's stream and
/// packets, ffmpeg's decode. Keys are listed at the end of Tests/Fixtures/README.md.
struct FFmpegDemuxGolden {
    let raw: [String: Any]
    let path: String

    init(fixture path: String) throws {
        raw = try XCTUnwrap(Golden(fixture: path), "no golden for \(path)").raw
        self.path = path
    }

    var name: String { (path as NSString).lastPathComponent }
    var sampleRate: Int { (raw["sampleRate"] as! NSNumber).intValue }
    var channels: Int { (raw["channels"] as! NSNumber).intValue }
    var packetCount: Int { (raw["packetCount"] as! NSNumber).intValue }
    var decodedFrames: Int { (raw["decodedFrames"] as! NSNumber).intValue }
    var f32leSHA256: String { raw["f32leSHA256"] as! String }
    var durationTs: Int? { (raw["durationTs"] as? NSNumber)?.intValue }
    /// ffprobe's `[pts, duration, size, pos]` per packet, nil where it printed N/A.
    var packets: [(pts: Int?, duration: Int?, size: Int, position: Int?)] {
        (raw["packets"] as! [[Any]]).map { p in
            ((p[0] as? NSNumber)?.intValue, (p[1] as? NSNumber)?.intValue, (p[2] as! NSNumber).intValue, (p[3] as? NSNumber)?.intValue)
        }
    }
    /// The stream's time base, "1/1000".
    var timeBase: (num: Int, den: Int) {
        let parts = (raw["timeBase"] as! String).split(separator: "/").map { Int($0)! }
        return (parts[0], parts[1])
    }
    /// The container's tags with lower-case keys (Matroska spells `ARTIST`).
    var tags: [String: String] {
        var out: [String: String] = [:]
        for (k, v) in raw["tags"] as? [String: String] ?? [:] { out[k.lowercased()] = v }
        return out
    }
    var chapters: [(start: Double, title: String)] {
        (raw["chapters"] as? [[String: Any]] ?? []).map { (Double($0["startTime"] as! String)!, $0["title"] as! String) }
    }

    /// Ticks of the stream's time base in frames at the sample rate, rounded.
    func frames(ofTicks t: Int) -> Int {
        Int((Double(t) * Double(timeBase.num) * Double(sampleRate) / Double(timeBase.den)).rounded())
    }
}

/// One fixture whose container only libavformat reads, and what Tonearm should make of it.
struct FFmpegDemuxCase {
    let file: String
    let fileType: AudioFileTypeID
    let formatID: AudioFormatID
    /// Tonearm decodes it with its own decoder (not bit-exact with FFmpeg's).
    var nativeDecoder = false
    /// The frames of the codec's frames where libavformat states them (AAC's 1024): the last
    /// packet of an ASF file has that many; without it, its rounded millisecond duration.
    var blockFrames: Int? = nil

    var path: String { fixturesDirectory + "/ffmpeg/" + file }
    var isASF: Bool { fileType == .asf }
}

enum FFmpegDemuxKit {
    static let cases: [FFmpegDemuxCase] = [
        FFmpegDemuxCase(file: "aac_in_asf.asf", fileType: .asf, formatID: .mpeg4AAC, nativeDecoder: true, blockFrames: 1024),
        FFmpegDemuxCase(file: "ac3_in_rm.rm", fileType: .realMedia, formatID: .ac3),
        FFmpegDemuxCase(file: "apelike_stereo.ape", fileType: .ape, formatID: "APE "),
        FFmpegDemuxCase(file: "dts_5.1_48k.dts", fileType: .dts, formatID: "dts "),
        FFmpegDemuxCase(file: "ra144_in_rm.rm", fileType: .realMedia, formatID: "FF\u{0}\u{0}"),
        FFmpegDemuxCase(file: "tta_stereo_44k.tta", fileType: .tta, formatID: "tta1"),
        FFmpegDemuxCase(file: "wavpack_cli_stereo_44k.wv", fileType: .wavPack, formatID: "wvpk"),
        FFmpegDemuxCase(file: "wavpack_stereo_44k.wv", fileType: .wavPack, formatID: "wvpk"),
        FFmpegDemuxCase(file: "wmav1_stereo_44k.wma", fileType: .asf, formatID: "wma1"),
        FFmpegDemuxCase(file: "wmav2_mono_22k.wma", fileType: .asf, formatID: "wma2"),
        FFmpegDemuxCase(file: "wmav2_stereo_44k.wma", fileType: .asf, formatID: "wma2"),
    ]

    /// Fixtures of the folder in a container Tonearm parses itself (AMR-WB's .awb, and the
    /// Matroska and MPEG-TS files, which its own demuxers read): the codec, Matroska and
    /// MPEG-TS tests cover them.
    static let nativelyParsed: Set<String> = ["amrwb_1265_16k.awb", "ac3_in_mkv.mka", "eac3_5.1_in_mkv.mka", "mp2_in_ts.ts"]

    /// Every packet through AudioFile, read `chunk` packets at a time.
    static func readAllPackets(_ file: AudioFile, chunk: Int) throws -> [[UInt8]] {
        let n = try file.audioDataPacketCount
        var out: [[UInt8]] = []
        var k: Int64 = 0
        while k < n {
            let (data, descriptions) = try file.readPacketData(startingAt: k, count: chunk)
            let d = try XCTUnwrap(descriptions, "variable-size packets come with descriptions")
            XCTAssertFalse(d.isEmpty)
            for p in d { out.append(Array(data[Int(p.startOffset)..<Int(p.startOffset) + Int(p.dataByteSize)])) }
            k += Int64(d.count)
        }
        return out
    }

    /// The f32le bytes of a Float array (little-endian on every platform Tonearm runs on).
    static func bytes(_ samples: [Float]) -> [UInt8] {
        samples.withUnsafeBytes { Array($0) }
    }

    /// `ffmpeg -bitexact -i F -map 0:a:0 -f f32le -`, as samples.
    static func ffmpegDecode(_ ffmpeg: String, _ path: String) throws -> [Float] {
        let bytes = try runToolData(ffmpeg, ["-v", "quiet", "-bitexact", "-i", path, "-map", "0:a:0", "-f", "f32le", "-"])
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}

/// What an AudioFileStream made of pushed bytes.
struct FFmpegPushRun: CustomStringConvertible {
    var packets: [[UInt8]] = []
    var frames: [UInt32] = []
    var fileType: AudioFileTypeID?
    var dataFormat: StreamDescription?
    var magicCookie: [UInt8]?
    var info: InfoDictionary?
    var error: AudioError?
    var seconds = 0.0

    var description: String {
        "\(packets.count) packets, type \(fileType.map { "\($0)" } ?? "-"), error \(error.map { "\($0)" } ?? "none")"
    }

    /// Pushes `bytes` in pieces of `chunk` bytes (the last one shorter), then the end of the stream.
    static func push(_ bytes: [UInt8], chunk: Int, hint: AudioFileTypeID?) -> FFmpegPushRun {
        var run = FFmpegPushRun()
        let start = DispatchTime.now()
        let stream = AudioFileStream(fileTypeHint: hint, propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
            for d in descriptions ?? [] {
                run.packets.append(Array(UnsafeRawBufferPointer(rebasing: data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)])))
                run.frames.append(d.variableFramesInPacket)
            }
        })
        do {
            var i = 0
            while i < bytes.count {
                let n = min(chunk, bytes.count - i)
                try stream.parse(bytes[i..<i + n])
                i += n
            }
            try stream.parse(nil)
        } catch {
            run.error = error
        }
        run.fileType = try? stream.fileType
        run.dataFormat = try? stream.dataFormat
        run.magicCookie = try? stream.magicCookie
        run.info = stream.properties?.info
        run.seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        return run
    }

    /// ``push(_:chunk:hint:)`` on a thread of its own, nil (and a failure) when it takes longer than `seconds`.
    static func pushWithDeadline(_ bytes: [UInt8], chunk: Int, hint: AudioFileTypeID?, seconds: Double = 60,
                                 _ what: String, file: StaticString = #filePath, line: UInt = #line) -> FFmpegPushRun?
    {
        let r = runWithDeadline(seconds: seconds) { push(bytes, chunk: chunk, hint: hint) }
        if r == nil { XCTFail("\(what): the push did not end within \(seconds) s", file: file, line: line) }
        return r
    }
}

final class FFmpegDemuxTests: XCTestCase {
    /// Every fixture of the folder is either tested here or parsed natively, so that a new
    /// one cannot go untested.
    func testEveryFixtureIsCovered() {
        let names = Set(fixtureFiles("ffmpeg").map { ($0 as NSString).lastPathComponent })
        XCTAssertEqual(names, Set(FFmpegDemuxKit.cases.map(\.file)).union(FFmpegDemuxKit.nativelyParsed), "run Tests/Fixtures/make-ffmpeg.sh")
        for name in FFmpegDemuxKit.nativelyParsed {
            let type = try? AudioFile(path: fixturesDirectory + "/ffmpeg/" + name).fileType
            XCTAssertEqual(type.flatMap { FormatRegistry.info(for: $0)?.usesFFmpeg }, false, name)
        }
    }

    /// AudioFile: type, format, packet count, every packet's size (read in chunks and in the
    /// packet table) and frames against ffprobe's packets.
    ///
    /// Frames: where the time base is exact (1/90000, the
    /// sample rate, RealMedia's ms for RA 14.4's 20 ms) each packet's frames are ffprobe's
    /// duration in frames. ffprobe's stream duration for MPEG-TS is an estimate, so only the
    /// per-packet durations count there. APE's one packet has no duration: the total is the
    /// stream's (durationTs). ASF's millisecond time base rounds every duration down (46 ms
    /// for 2048 frames), and the adapter takes the frames from the packet times instead:
    /// each packet but the last has the difference of ffprobe's times of it and the next in
    /// frames (so they add up to the last packet's time), and the last has the codec's frame
    /// count where libavformat states one (AAC's 1024), else its rounded duration (WMA: 46 ms,
    /// 2029 frames at 44.1 kHz). The total is then within a frame of
    /// round((lastPts + lastDuration - firstPts) × rate × timeBase), plus, for AAC, the last
    /// duration's rounding (10 frames).
    func testOpenAndPacketTable() throws {
        for c in FFmpegDemuxKit.cases {
            let g = try FFmpegDemuxGolden(fixture: c.path)
            let file = try AudioFile(path: c.path)
            let p = try file.properties
            XCTAssertEqual(p.fileType, c.fileType, c.file)
            XCTAssertEqual(FormatRegistry.info(for: c.fileType)?.usesFFmpeg, true, c.file)
            let f = try file.dataFormat
            if c.formatID.rawValue >> 16 == FourCC("FF\u{0}\u{0}").rawValue >> 16 {
                // A codec Tonearm has no name for: 'FF' and libavcodec's codec ID.
                XCTAssertEqual(f.formatID.rawValue >> 16, c.formatID.rawValue >> 16, "\(c.file): \(f.formatID)")
            } else {
                XCTAssertEqual(f.formatID, c.formatID, c.file)
            }
            XCTAssertEqual(f.sampleRate, Double(g.sampleRate), c.file)
            XCTAssertEqual(Int(f.channelsPerFrame), g.channels, c.file)

            let n = g.packetCount
            XCTAssertEqual(try file.audioDataPacketCount, Int64(n), c.file)
            let golden = g.packets
            XCTAssertEqual(golden.count, n, "\(c.file): the golden lists every packet")
            let sizes = golden.map(\.size)
            let table = try XCTUnwrap(p.packetTable, c.file)
            XCTAssertEqual(table.map { Int($0.dataByteSize) }, sizes, c.file)
            XCTAssertEqual(table.map(\.startOffset), sizes.indices.map { Int64(sizes[..<$0].reduce(0, +)) }, c.file)
            XCTAssertEqual(try file.audioDataByteCount, Int64(sizes.reduce(0, +)), c.file)
            XCTAssertEqual(try file.maximumPacketSize, UInt32(sizes.max()!), c.file)
            for chunk in [1, 5, 256] {
                let packets = try FFmpegDemuxKit.readAllPackets(file, chunk: chunk)
                XCTAssertEqual(packets.map(\.count), sizes, "\(c.file), \(chunk) at a time")
            }

            // Raw DTS: each packet is the file's bytes at ffprobe's position.
            if c.fileType == .dts {
                let bytes = try readWholeFile(c.path)
                let packets = try FFmpegDemuxKit.readAllPackets(file, chunk: 16)
                for (k, e) in golden.enumerated() {
                    let at = try XCTUnwrap(e.position)
                    XCTAssertEqual(packets[k], Array(bytes[at..<at + e.size]), "\(c.file) packet \(k)")
                }
            }

            let frames = table.map { Int($0.variableFramesInPacket) }
            let total = frames.reduce(0, +)
            if c.isASF {
                let pts = try golden.map { try XCTUnwrap($0.pts) }
                let first = pts[0], last = pts[n - 1]
                for k in 0..<n - 1 {
                    XCTAssertEqual(frames[k], g.frames(ofTicks: pts[k + 1] - first) - g.frames(ofTicks: pts[k] - first), "\(c.file) packet \(k)")
                }
                XCTAssertEqual(frames.dropLast().reduce(0, +), g.frames(ofTicks: last - first), c.file)
                let lastDuration = try XCTUnwrap(golden[n - 1].duration)
                XCTAssertEqual(frames[n - 1], c.blockFrames ?? g.frames(ofTicks: lastDuration), c.file)
                let probed = g.frames(ofTicks: last + lastDuration - first)
                let slack = c.blockFrames.map { abs($0 - g.frames(ofTicks: lastDuration)) } ?? 0
                XCTAssertLessThanOrEqual(abs(total - probed), slack + 1, "\(c.file): \(total) frames, ffprobe's times say \(probed)")
            } else {
                for (k, e) in golden.enumerated() {
                    guard let d = e.duration else { continue }
                    XCTAssertEqual(frames[k], g.frames(ofTicks: d), "\(c.file) packet \(k)")
                }
                if golden.contains(where: { $0.duration == nil }) {
                    XCTAssertEqual(total, g.frames(ofTicks: try XCTUnwrap(g.durationTs)), c.file)
                }
            }
        }
    }

    /// Tags and chapters: the golden's title and artist appear in the info dictionary, with
    /// the chapters of each file (none here: the Matroska files' are MatroskaTests').
    func testMetadataAndChapters() throws {
        var tagged = 0
        for c in FFmpegDemuxKit.cases {
            let g = try FFmpegDemuxGolden(fixture: c.path)
            let p = try AudioFile(path: c.path).properties
            for key in ["title", "artist"] {
                guard let value = g.tags[key] else { continue }
                XCTAssertEqual(p.info[key], value, "\(c.file): \(key)")
                tagged += 1
            }
            let chapters = g.chapters
            XCTAssertEqual(p.chapters.count, chapters.count, c.file)
            for (got, want) in zip(p.chapters, chapters) {
                XCTAssertEqual(got.title, want.title, c.file)
                XCTAssertEqual(got.start, want.start, accuracy: 0.001, c.file)
            }
        }
        // wmav2_stereo_44k carries both (the Matroska files are parsed natively now).
        XCTAssertEqual(tagged, 2)
    }

    /// ExtAudioFile to Float32: the SHA-256 of the interleaved little-endian samples is the
    /// golden's (ffmpeg -bitexact's f32le) where libavcodec decodes; Tonearm's own MP2 and AAC
    /// decoders give as many frames, within 1e-4 of the golden decode (checked live below).
    func testDecodeMatchesGoldenHash() throws {
        for c in FFmpegDemuxKit.cases {
            let g = try FFmpegDemuxGolden(fixture: c.path)
            let samples = try decodeInterleaved(c.path, as: Float.self)
            XCTAssertEqual(samples.count, g.decodedFrames * g.channels, c.file)
            if !c.nativeDecoder {
                XCTAssertEqual(SHA256.hex(FFmpegDemuxKit.bytes(samples)), g.f32leSHA256, c.file)
            }
        }
    }

    /// The same decode against the ffmpeg tool, live: equal samples where libavcodec decodes,
    /// max abs difference below 1e-4 for the native decoders.
    func testDecodeMatchesLiveFFmpeg() throws {
        let ffmpeg = try requireTool("ffmpeg")
        for c in FFmpegDemuxKit.cases {
            let g = try FFmpegDemuxGolden(fixture: c.path)
            let expected = try FFmpegDemuxKit.ffmpegDecode(ffmpeg, c.path)
            XCTAssertEqual(SHA256.hex(FFmpegDemuxKit.bytes(expected)), g.f32leSHA256, "\(c.file): the golden is stale for this ffmpeg")
            let samples = try decodeInterleaved(c.path, as: Float.self)
            XCTAssertEqual(samples.count, expected.count, c.file)
            if c.nativeDecoder {
                let diff = zip(samples, expected).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
                XCTAssertLessThan(diff, 1e-4, c.file)
            } else {
                XCTAssertTrue(samples == expected, c.file)
            }
        }
    }

    /// Random access: packets read at k in the middle, then earlier, then 0, then the last,
    /// then just ahead, are the bytes of a sequential read. Backwards reads seek libavformat
    /// (or open the container again: ra144_in_rm's packets all have pts 0).
    func testRandomAccessMatchesSequentialRead() throws {
        for c in FFmpegDemuxKit.cases {
            let sequential = try FFmpegDemuxKit.readAllPackets(AudioFile(path: c.path), chunk: 1000)
            let n = sequential.count
            let file = try AudioFile(path: c.path)
            for k in [n / 2, n / 4, 0, n - 1, n / 2 + 1, n / 2, 0] where k < n {
                let count = min(3, n - k)
                let (data, descriptions) = try file.readPacketData(startingAt: Int64(k), count: count)
                XCTAssertEqual(descriptions?.count, count, "\(c.file) at \(k)")
                XCTAssertEqual(data, Array(sequential[k..<k + count].joined()), "\(c.file) at \(k)")
            }
            XCTAssertThrowsError(try file.readPacketData(startingAt: Int64(n), count: 1), c.file) { e in
                XCTAssertEqual((e as? AudioError)?.code, .endOfFile, c.file)
            }
        }
    }

    /// The push path: each file through AudioFileStream in pieces of 7 and 4096 bytes (and
    /// one byte at a time for the files under 8 KB: a thread handoff per push makes that
    /// about 15–45 µs a byte), with and without a type hint, gives
    /// AudioFile's packets (count, sizes, bytes), format and magic cookie. Raw DTS without a
    /// hint is the exception (see below).
    func testPushPathMatchesAudioFile() throws {
        var timings: [String] = []
        for c in FFmpegDemuxKit.cases {
            let bytes = try readWholeFile(c.path)
            let file = try AudioFile(path: c.path)
            let packets = try FFmpegDemuxKit.readAllPackets(file, chunk: 1000)
            let format = try file.dataFormat
            let cookie = try file.magicCookie
            let frames = try XCTUnwrap(file.properties.packetTable, c.file).map(\.variableFramesInPacket)
            var runs: [(Int, AudioFileTypeID?)] = [(7, nil), (4096, nil), (7, c.fileType), (4096, c.fileType)]
            if bytes.count < 8000 { runs.append((1, nil)) }
            for (chunk, hint) in runs {
                let what = "\(c.file) in \(chunk)-byte pieces, hint \(hint.map { "\($0)" } ?? "none")"
                guard let run = FFmpegPushRun.pushWithDeadline(bytes, chunk: chunk, hint: hint, what) else { continue }
                timings.append(String(format: "%@: %.3f s", what, run.seconds))
                XCTAssertNil(run.error, what)
                XCTAssertEqual(run.fileType, c.fileType, what)
                XCTAssertEqual(run.dataFormat, format, what)
                XCTAssertEqual(run.magicCookie, cookie, what)
                XCTAssertEqual(run.packets.count, packets.count, what)
                XCTAssertEqual(run.packets.map(\.count), packets.map(\.count), what)
                XCTAssertTrue(run.packets == packets, "\(what): packet bytes differ")
                // Each packet's frames are the packet table's, the last one's too (APE's has no
                // duration: it is held back until the end says it is the last). ASF's table is
                // re-timed from the packet times, which the push path does not wait for.
                if !c.isASF { XCTAssertEqual(run.frames, frames, what) }
            }
        }
        print("FFmpegDemuxTests push timings:\n" + timings.joined(separator: "\n"))
    }

    /// 10 KB of noise pushed without a hint: 'typ?', cleanly and in time.
    func testPushGarbageIsUnsupportedFileType() throws {
        var g = SeededGenerator(seed: 18)
        let noise = (0..<10_240).map { _ in UInt8.random(in: 0...255, using: &g) }
        for chunk in [7, 4096] {
            guard let run = FFmpegPushRun.pushWithDeadline(noise, chunk: chunk, hint: nil, "noise in \(chunk)-byte pieces") else { continue }
            XCTAssertEqual(run.error?.code, .unsupportedFileType, "\(run)")
            XCTAssertTrue(run.packets.isEmpty)
        }
    }

    /// A truncated ASF pushed (its first 3000 bytes, then the end of the stream; and a cut
    /// in the middle of its data) ends in time with a prefix of the whole file's packets
    /// (the last one perhaps short), or with a clean AudioError.
    func testPushTruncatedASF() throws {
        let c = FFmpegDemuxKit.cases.first { $0.file == "wmav2_stereo_44k.wma" }!
        let bytes = try readWholeFile(c.path)
        let packets = try FFmpegDemuxKit.readAllPackets(AudioFile(path: c.path), chunk: 1000)
        for cut in [3000, 10_000] {
            for hint in [nil, c.fileType] {
                let what = "the first \(cut) bytes, hint \(hint.map { "\($0)" } ?? "none")"
                guard let run = FFmpegPushRun.pushWithDeadline(Array(bytes[..<cut]), chunk: 4096, hint: hint, what) else { continue }
                print("FFmpegDemuxTests: \(what): \(run)")
                XCTAssertLessThan(run.packets.count, packets.count, what)
                for (k, p) in run.packets.enumerated() {
                    if k < run.packets.count - 1 {
                        XCTAssertEqual(p, packets[k], "\(what): packet \(k)")
                    } else {
                        XCTAssertEqual(p, Array(packets[k].prefix(p.count)), "\(what): last packet \(k)")
                    }
                }
                if run.error == nil { XCTAssertEqual(run.fileType, .asf, what) }
            }
        }
    }

    /// An ASF whose header object is damaged in its middle (the size field of the object
    /// there, flipped): AudioFile gives an AudioError with a four-char code ('dta?': the
    /// probe knew the type, and FFmpeg's asf demuxer refused the data) and FFmpeg's message. libavformat skips objects it does
    /// not need, so flipping bytes inside one (the extended content description here) would
    /// not be noticed.
    func testCorruptASFHeaderIsAnFFmpegError() throws {
        let c = FFmpegDemuxKit.cases.first { $0.file == "wmav2_stereo_44k.wma" }!
        var bytes = try readWholeFile(c.path)
        func le64(_ at: Int) -> Int { bytes[at..<at + 8].reversed().reduce(0) { $0 << 8 | Int($1) } }
        // The header object: GUID, 64-bit size, object count, 2 reserved bytes, its objects
        // (each a GUID and a 64-bit size).
        let headerSize = le64(16)
        XCTAssertEqual(headerSize, 640)
        var at = 30
        while at + le64(at + 16) <= headerSize / 2 { at += le64(at + 16) }
        XCTAssertEqual(at, 288, "the object across the middle")
        for i in at + 16..<at + 24 { bytes[i] ^= 0xFF }
        let dir = makeTemporaryDirectory()
        let path = dir + "/damaged.wma"
        try writeWholeFile(path, bytes)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        XCTAssertThrowsError(try AudioFile(path: path)) { e in
            guard let e = e as? AudioError else { return XCTFail("\(e) is not an AudioError") }
            print("FFmpegDemuxTests: damaged ASF header: \(e) code \(e.code)")
            XCTAssertNotNil(e.code.fourCC, "\(e)")
            // The open failed with AVERROR_INVALIDDATA after the type was known: 'dta?'.
            XCTAssertEqual(e.code, .invalidFile, "\(e)")
            XCTAssertTrue(e.message.contains("(FFmpeg)"), e.message)
        }
        // Pushed, the same bytes end in the same error, in time.
        if let run = FFmpegPushRun.pushWithDeadline(bytes, chunk: 4096, hint: nil, "the damaged ASF pushed") {
            XCTAssertEqual(run.error?.code, .invalidFile, "\(run)")
            XCTAssertTrue(run.error?.message.contains("(FFmpeg)") ?? false, "\(run)")
            XCTAssertTrue(run.packets.isEmpty)
        }
    }

    /// A pushed stream seeks (seed 000's AudioFileStreamSeek, then `.discontinuity`): the
    /// parser answers the position libavformat reported for the packet, a new demuxer reads
    /// the kept header and then the bytes from there, and the packets that come out are the
    /// file's from that packet on, or from the one whose container packet holds it (ASF puts
    /// several audio packets in one), to the end. Three seeks in a row: back to the middle
    /// (a position seen before), then ahead to three quarters (seen only after the first
    /// seek, which the parser goes on recording once the first packet's position names it),
    /// then back to a quarter. Each offset is exact (not estimated) where libavformat gives
    /// the packet a position.
    func testPushedStreamSeeksToAPacket() throws {
        for name in ["wmav2_stereo_44k.wma", "aac_in_asf.asf"] {
            let c = FFmpegDemuxKit.cases.first { $0.file == name }!
            let bytes = try readWholeFile(c.path)
            let file = try AudioFile(path: c.path)
            let all = try FFmpegDemuxKit.readAllPackets(file, chunk: 1000)
            let targets = [all.count / 2, all.count * 3 / 4, all.count / 4].map(Int64.init)
            let result = runWithDeadline(seconds: 60) { () -> ([(Int64, Bool, [[UInt8]])], AudioError?) in
                var packets: [[UInt8]] = []
                let stream = AudioFileStream(fileTypeHint: nil, propertyListener: { _, _, _ in }, packets: { _, _, data, d in
                    for d in d ?? [] {
                        packets.append(Array(UnsafeRawBufferPointer(rebasing: data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)])))
                    }
                })
                var seeks: [(Int64, Bool, [[UInt8]])] = []
                do {
                    // Up to the packet after the first target, then the seeks.
                    var i = 0
                    while i < bytes.count && packets.count <= Int(targets[0]) + 1 {
                        let n = min(4096, bytes.count - i)
                        try stream.parse(bytes[i..<i + n])
                        i += n
                    }
                    for target in targets {
                        let (offset, flags) = try stream.seek(toPacket: target)
                        packets.removeAll()
                        let at = Int(offset + (try stream.dataOffset))
                        try stream.parse(bytes[at...], flags: .discontinuity)
                        seeks.append((offset, flags.contains(.offsetIsEstimated), packets))
                    }
                    try stream.parse(nil)
                    seeks[seeks.count - 1].2 = packets
                    return (seeks, nil)
                } catch {
                    return (seeks, error as? AudioError)
                }
            }
            guard let (seeks, error) = result else { XCTFail("\(name): the seeks did not end in time"); continue }
            XCTAssertNil(error, name)
            XCTAssertEqual(seeks.count, targets.count, name)
            for (n, ((offset, estimated, after), target)) in zip(seeks, targets).enumerated() {
                let what = "\(name), the seek to packet \(target) (offset \(offset))"
                XCTAssertFalse(estimated, "\(what): every target has been passed")
                guard let first = after.first, let k = all.firstIndex(of: first) else {
                    XCTFail("\(what): \(after.count) packets, the first not one of the file's")
                    continue
                }
                XCTAssertLessThanOrEqual(k, Int(target), what)
                XCTAssertGreaterThanOrEqual(k, Int(target) - 8, what)
                if n == seeks.count - 1 {
                    XCTAssertTrue(Array(all[k...]) == after, "\(what): the packets from \(k) on differ (\(after.count))")
                } else {
                    // The demuxer waits for more bytes before it hands on the last packets.
                    XCTAssertGreaterThanOrEqual(after.count, all.count - k - 4, what)
                    XCTAssertTrue(Array(all[k..<min(all.count, k + after.count)]) == after, "\(what): the packets from \(k) on differ")
                }
            }
        }
    }
}
#endif

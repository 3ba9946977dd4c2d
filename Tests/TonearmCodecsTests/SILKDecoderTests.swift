import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmFormats
import TonearmTestSupport

/// The SILK layer (RFC 6716 §4.2) on its own, against libopus (through ffmpeg's libopus
/// decoder) on the SILK-only files of silk/ (make-silk.sh). The Opus framework is not
/// used: a small driver below splits the Ogg Opus packets into frames (TOC and code 0–3
/// framing, RFC 6716 §3.2) and hands each to ``SILKDecoder``.
final class SILKDecoderTests: XCTestCase {
    /// One Opus packet's frames (RFC 6716 §3.1–3.2), for SILK-only packets.
    struct Packet {
        var config: Int
        var stereo: Bool
        var frames: [[UInt8]]
        var bandwidth: OpusBandwidth { OpusBandwidth(rawValue: config / 4) ?? .wide }
        var frameSize: Int { [480, 960, 1920, 2880][config % 4] }

        init?(_ p: [UInt8]) {
            guard let toc = p.first else { return nil }
            config = Int(toc >> 3)
            stereo = toc & 4 != 0
            var at = 1
            func length() -> Int? {
                guard at < p.count else { return nil }
                let b = Int(p[at]); at += 1
                if b < 252 { return b }
                guard at < p.count else { return nil }
                let c = Int(p[at]); at += 1
                return b + 4 * c
            }
            switch toc & 3 {
            case 0: frames = [Array(p[1...])]
            case 1:
                guard (p.count - 1) % 2 == 0 else { return nil }
                let n = (p.count - 1) / 2
                frames = [Array(p[1..<(1 + n)]), Array(p[(1 + n)...])]
            case 2:
                guard let n = length(), at + n <= p.count else { return nil }
                frames = [Array(p[at..<(at + n)]), Array(p[(at + n)...])]
            default:
                guard at < p.count else { return nil }
                let m = Int(p[at] & 63), vbr = p[at] & 128 != 0, padded = p[at] & 64 != 0
                at += 1
                var padding = 0
                if padded {
                    while true {
                        guard at < p.count else { return nil }
                        let b = Int(p[at]); at += 1
                        padding += b == 255 ? 254 : b
                        if b != 255 { break }
                    }
                }
                var lengths: [Int] = []
                if vbr {
                    for _ in 0..<max(m - 1, 0) { guard let n = length() else { return nil }; lengths.append(n) }
                    lengths.append(p.count - padding - at - lengths.reduce(0, +))
                } else {
                    guard m > 0 else { return nil }
                    lengths = Array(repeating: (p.count - padding - at) / m, count: m)
                }
                frames = []
                for n in lengths {
                    guard n >= 0, at + n <= p.count else { return nil }
                    frames.append(Array(p[at..<(at + n)])); at += n
                }
            }
        }
    }

    /// The Ogg Opus file's packets, channel count and pre-skip.
    static func readOpus(_ path: String) throws -> (packets: [[UInt8]], channels: Int, preSkip: Int) {
        let file = try AudioFile(path: path)
        let cookie = try file.magicCookie ?? []
        XCTAssertGreaterThanOrEqual(cookie.count, 19)
        let channels = Int(cookie[9])
        let preSkip = Int(cookie[10]) | Int(cookie[11]) << 8
        let count = Int(try file.audioDataPacketCount)
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: count)
        var packets: [[UInt8]] = []
        for d in descriptions ?? [] {
            let start = Int(d.startOffset)
            packets.append(Array(data[start..<(start + Int(d.dataByteSize))]))
        }
        return (packets, channels, preSkip)
    }

    /// Decodes every SILK-only frame of `path` with ``SILKDecoder``: interleaved 48 kHz
    /// samples with the pre-skip removed.
    /// Packets whose index is in `lost` are concealed instead (with the previous packet's
    /// bandwidth and channels, as a player would).
    /// Several paths joined by + are decoded one after another by one decoder (with the
    /// most channels of any): a stream that switches bandwidth or channels.
    /// Packets in `recovered` are lost too, and decoded from the next packet's LBRR data
    /// (packets of the same duration only).
    static func decodeWithSILK(_ path: String, lost: Set<Int> = [], recovered: Set<Int> = [], libopus13: Bool = false)
        throws -> (samples: [Float], channels: Int)
    {
        let (samples, channels, _) = try decodeWithSILKCountingMidOnly(path, lost: lost, recovered: recovered,
                                                                       libopus13: libopus13)
        return (samples, channels)
    }

    /// `channels`: the decoder's (default: the stream's).
    static func decodeWithSILKCountingMidOnly(_ path: String, lost: Set<Int> = [], recovered: Set<Int> = [],
                                              libopus13: Bool = false, channels decoderChannels: Int? = nil) throws
        -> (samples: [Float], channels: Int, midOnlyFrames: Int)
    {
        let files = try path.split(separator: "+").map { try readOpus(String($0)) }
        let packets = files.flatMap(\.packets)
        let channels = decoderChannels ?? files.map(\.channels).max() ?? 1
        let preSkip = files.first?.preSkip ?? 0
        let decoder = SILKDecoder(channels: channels)
        decoder.libopus13Concealment = libopus13
        decoder.fillsBothChannelsOfMonoFrames = true
        var out: [Float] = []
        var planar = [Float](repeating: 0, count: 2 * 2880)
        var previous: Packet?
        for (index, bytes) in packets.enumerated() {
            guard var packet = Packet(bytes) else { XCTFail("bad packet framing"); continue }
            XCTAssertLessThan(packet.config, 12, "not a SILK-only packet")
            let isLost = lost.contains(index)
            if isLost, let previous {
                packet.config = previous.config / 4 * 4 + packet.config % 4
                packet.stereo = previous.stereo
            }
            previous = packet
            if recovered.contains(index), index + 1 < packets.count, let next = Packet(packets[index + 1]),
               let nextFrame = next.frames.first
            {
                XCTAssertEqual(next.frameSize * next.frames.count, packet.frameSize * packet.frames.count)
                previous = next
                for _ in next.frames {
                    let streamChannels = next.stereo ? 2 : 1
                    try nextFrame.withUnsafeBytes { raw in
                        var rd = OpusRangeDecoder(raw)
                        try planar.withUnsafeMutableBufferPointer { buf in
                            try decoder.decodeFEC(&rd, frameSize: next.frameSize, bandwidth: next.bandwidth,
                                                  streamChannels: streamChannels, output: buf.baseAddress!)
                        }
                    }
                    for i in 0..<next.frameSize {
                        for c in 0..<channels { out.append(planar[c * next.frameSize + i]) }
                    }
                }
                continue
            }
            for frame in packet.frames {
                let streamChannels = packet.stereo ? 2 : 1
                try frame.withUnsafeBytes { raw in
                    var rd = OpusRangeDecoder(raw)
                    try planar.withUnsafeMutableBufferPointer { buf in
                        try decoder.decode(&rd, frameSize: packet.frameSize, bandwidth: packet.bandwidth,
                                           streamChannels: streamChannels, lost: isLost, output: buf.baseAddress!)
                    }
                }
                for i in 0..<packet.frameSize {
                    for c in 0..<channels { out.append(planar[c * packet.frameSize + i]) }
                }
            }
        }
        if !recovered.isEmpty {
            XCTAssertGreaterThan(decoder.redundantFrameCount, recovered.count / 2, "few frames had LBRR copies")
        }
        return (Array(out.dropFirst(preSkip * channels)), channels, decoder.midOnlyFrameCount)
    }

    static func decodeWithLibopus(_ path: String, ffmpeg: String) throws -> [Float] {
        let bytes = try runToolData(ffmpeg, ["-hide_banner", "-nostdin", "-v", "error", "-c:a", "libopus", "-i", path,
                                             "-f", "f32le", "-"])
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    static var fixtures: [String] { fixtureFiles("silk", extensions: ["opus"]) }

    /// `SILKTables.prepare()` builds every table (so none is first built mid-stream): each
    /// `static let` of SILKTables.swift is named in it.
    func testPrepareNamesEveryTable() throws {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)    // Tests/TonearmCodecsTests/SILKDecoderTests.swift
        let source = try String(contentsOfFile: parts.joined(separator: "/") + "/Sources/TonearmCodecs/Opus/SILK/SILKTables.swift",
                                encoding: .utf8)
        let prepare = try XCTUnwrap(source.range(of: "static func prepare()"))
        let body = source[prepare.upperBound...].prefix { $0 != "}" }
        let names = source.split(separator: "\n").compactMap { line -> Substring? in
            guard let r = line.range(of: "static let ") else { return nil }
            return line[r.upperBound...].prefix { $0.isLetter || $0.isNumber }
        }
        XCTAssertEqual(names.count, 59)
        for name in names { XCTAssertTrue(body.contains(name + ".count"), String(name)) }
        XCTAssertGreaterThan(SILKTables.prepare(), 0)
    }

    func testFixturesAreSILKOnlyWithTheirConfigs() throws {
        XCTAssertEqual(Self.fixtures.count, 15)
        for path in Self.fixtures {
            let expected = try String(contentsOfFile: String(path.dropLast(5)) + ".toc", encoding: .utf8)
            var counts: [String: Int] = [:]
            for bytes in try Self.readOpus(path).packets {
                let toc = bytes[0]
                counts["\(toc >> 3) \(toc >> 2 & 1) \(toc & 3)", default: 0] += 1
            }
            let actual = counts.keys.sorted { $0.localizedStandardCompare($1) == .orderedAscending }
                .map { "\($0) \(counts[$0]!)\n" }.joined()
            XCTAssertEqual(actual, expected, path)
            for key in counts.keys { XCTAssertLessThan(Int(key.split(separator: " ")[0])!, 12, path) }
        }
    }

    func testMatchesLibopus() throws {
        let ffmpeg = try requireTool("ffmpeg")
        var report: [String] = []
        var paths = Self.fixtures
        if let extra = ProcessInfo.processInfo.environment["SILK_EXTRA_FIXTURES"] {
            paths = extra.split(separator: ":").map(String.init)
        }
        for path in paths {
            let name = (path as NSString).lastPathComponent
            let (ours, channels) = try Self.decodeWithSILK(path)
            let theirs = try Self.decodeWithLibopus(path, ffmpeg: ffmpeg)
            // ffmpeg also trims the end to the last granule position.
            XCTAssertGreaterThan(theirs.count, 48000 * channels, name)
            XCTAssertLessThanOrEqual(theirs.count, ours.count, name)
            XCTAssertGreaterThan(theirs.count, ours.count - 2880 * channels, name)
            let n = min(ours.count, theirs.count)
            var maxDiff: Float = 0
            var sum: Double = 0
            var firstBad = -1
            for i in 0..<n {
                let d = abs(ours[i] - theirs[i])
                if d > maxDiff { maxDiff = d }
                if d > 1.0 / 32768 && firstBad < 0 { firstBad = i }
                sum += Double(d * d)
            }
            let rms = (sum / Double(max(n, 1))).squareRoot()
            report.append("\(name): max \(maxDiff * 32768) LSB, rms \(rms * 32768) LSB, first > 1 LSB at \(firstBad)")
            XCTAssertLessThanOrEqual(maxDiff, 1.0 / 32768 + 1e-9, "\(name): first > 1 LSB at sample \(firstBad / channels)")
        }
        print(report.joined(separator: "\n"))
    }

    /// Concealment of lost packets against libopus's (called through ctypes by
    /// tools/opus_loss_oracle.py): single losses, a burst of three, and the good frames
    /// after each (where the concealed and decoded signals are glued).
    func testConcealmentMatchesLibopus() throws {
        let python = try requireTool("python3")
        let oracle = fixturesDirectory + "/tools/opus_loss_oracle.py"
        // Concealment is not normative, and libopus 1.4 changed two details of it.
        let version = try runTool(python, [oracle, "--version"])
        let libopus13 = version.contains("libopus 1.3") || version.contains("libopus 1.2")
        var report: [String] = ["oracle: \(version)"]
        var paths = Self.fixtures
        if let extra = ProcessInfo.processInfo.environment["SILK_EXTRA_FIXTURES"] {
            paths = extra.split(separator: ":").map(String.init)
        }
        for path in paths {
            let name = (path as NSString).lastPathComponent
            let count = try Self.readOpus(path).packets.count
            let lost = [3, 9, 10, 11, 20, count / 2, count - 3].filter { $0 < count }
            let (ours, channels) = try Self.decodeWithSILK(path, lost: Set(lost), libopus13: libopus13)
            let bytes = try runToolData(python, [oracle, path, lost.map(String.init).joined(separator: ",")])
            let theirs = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            XCTAssertEqual(ours.count, theirs.count, name)
            let n = min(ours.count, theirs.count)
            var maxDiff: Float = 0
            var sum: Double = 0
            var firstBad = -1
            for i in 0..<n {
                let d = abs(ours[i] - theirs[i])
                if d > maxDiff { maxDiff = d }
                if d > 1.0 / 32768 && firstBad < 0 { firstBad = i }
                sum += Double(d * d)
            }
            let rms = (sum / Double(max(n, 1))).squareRoot()
            report.append("\(name) lost \(lost): max \(maxDiff * 32768) LSB, rms \(rms * 32768) LSB, first > 1 LSB at \(firstBad)")
            XCTAssertLessThanOrEqual(maxDiff, 1.0 / 32768 + 1e-9, "\(name): first > 1 LSB at sample \(firstBad / channels)")
        }
        print(report.joined(separator: "\n"))
    }

    /// Forward error correction: lost packets decoded from the LBRR copies in the packets
    /// after them (the -fec fixtures), against libopus's decode_fec, with ordinary losses
    /// around them.
    func testRedundancyMatchesLibopus() throws {
        let python = try requireTool("python3")
        let oracle = fixturesDirectory + "/tools/opus_loss_oracle.py"
        let version = try runTool(python, [oracle, "--version"])
        let libopus13 = version.contains("libopus 1.3") || version.contains("libopus 1.2")
        for name in ["wb-mono-20-fec", "nb-mono-60-fec", "wb-stereo-20-fec"] {
            let path = fixturesDirectory + "/silk/\(name).opus"
            let count = try Self.readOpus(path).packets.count
            let recovered = [4, 8, 9, 15, 16, 17, count / 2, count - 4].filter { $0 < count - 1 }
            let lost = [12, count / 2 + 2].filter { $0 < count }
            let (ours, channels) = try Self.decodeWithSILK(path, lost: Set(lost), recovered: Set(recovered),
                                                           libopus13: libopus13)
            let spec = (recovered.map { "\($0)f" } + lost.map(String.init)).joined(separator: ",")
            let bytes = try runToolData(python, [oracle, path, spec])
            let theirs = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            XCTAssertEqual(ours.count, theirs.count, name)
            var firstBad = -1
            var maxDiff: Float = 0
            for i in 0..<min(ours.count, theirs.count) {
                let d = abs(ours[i] - theirs[i])
                maxDiff = max(maxDiff, d)
                if d > 1.0 / 32768 && firstBad < 0 { firstBad = i }
            }
            print("\(name) FEC \(spec): max \(maxDiff * 32768) LSB")
            XCTAssertEqual(firstBad, -1, "\(name): first > 1 LSB at sample \(firstBad / channels)")
        }
    }

    /// A stereo stream decoded to mono: libopus outputs the mid channel (it still decodes
    /// the side, whose state later frames need).
    func testStereoStreamToMonoMatchesLibopus() throws {
        let python = try requireTool("python3")
        let oracle = fixturesDirectory + "/tools/opus_loss_oracle.py"
        for name in ["nb-stereo-20", "mb-stereo-60", "wb-stereo-20-fec"] {
            let path = fixturesDirectory + "/silk/\(name).opus"
            let ours = try Self.decodeWithSILKCountingMidOnly(path, lost: [7], channels: 1).samples
            let bytes = try runToolData(python, [oracle, path, "7", "1"])
            let theirs = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            XCTAssertEqual(ours.count, theirs.count, name)
            XCTAssertEqual(zip(ours, theirs).map { abs($0 - $1) }.max() ?? 1, 0, name)
        }
    }

    /// Streams that change bandwidth (the internal rate, so the resampler and the LPC
    /// order) and channel count (mono frames in a stereo stream, both ways) between
    /// packets, with losses across the switches, against libopus.
    func testSwitchesMatchLibopus() throws {
        let python = try requireTool("python3")
        let oracle = fixturesDirectory + "/tools/opus_loss_oracle.py"
        let version = try runTool(python, [oracle, "--version"])
        let libopus13 = version.contains("libopus 1.3") || version.contains("libopus 1.2")
        let dir = fixturesDirectory + "/silk/"
        let sequences = [
            ["nb-mono-20", "wb-mono-20", "mb-mono-40", "wb-mono-10", "nb-mono-60"],
            ["wb-stereo-20", "wb-mono-20", "wb-stereo-40", "nb-mono-20", "nb-stereo-20"],
            ["nb-mono-20", "mb-stereo-60", "mb-mono-20", "wb-stereo-20-fec"],
        ]
        for names in sequences {
            let path = names.map { dir + $0 + ".opus" }.joined(separator: "+")
            let counts = try names.map { try Self.readOpus(dir + $0 + ".opus").packets.count }
            // A loss on each side of every switch.
            var lost: [Int] = []
            var start = 0
            for count in counts.dropLast() {
                start += count
                lost += [start - 1, start + 1]
            }
            for (label, losses) in [("no loss", [Int]()), ("lost \(lost)", lost)] {
                let (ours, channels) = try Self.decodeWithSILK(path, lost: Set(losses), libopus13: libopus13)
                let bytes = try runToolData(python, [oracle, path, losses.map(String.init).joined(separator: ",")])
                let theirs = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                XCTAssertEqual(ours.count, theirs.count, "\(names) \(label)")
                var firstBad = -1
                var maxDiff: Float = 0
                for i in 0..<min(ours.count, theirs.count) {
                    let d = abs(ours[i] - theirs[i])
                    maxDiff = max(maxDiff, d)
                    if d > 1.0 / 32768 && firstBad < 0 { firstBad = i }
                }
                print("\(names.joined(separator: "+")) \(label): max \(maxDiff * 32768) LSB")
                XCTAssertEqual(firstBad, -1, "\(names) \(label): first > 1 LSB at sample \(firstBad / channels)")
            }
        }
    }

    /// The stereo fixtures exercise mid-only frames and the switches between them and
    /// frames with a side channel (which restart the side's prediction).
    func testStereoFixturesHaveMidOnlyFrames() throws {
        let counts = try ["nb-stereo-20", "wb-stereo-20-fec", "wb-stereo-40"].map {
            try Self.decodeWithSILKCountingMidOnly(fixturesDirectory + "/silk/\($0).opus").midOnlyFrames
        }
        XCTAssertEqual(counts, [0, 78, 102])
    }

    /// Random bytes as SILK frames of every size, bandwidth and channel count, and
    /// truncated real frames: no crash, output within ±1.
    func testDamagedFramesDoNotCrash() throws {
        var rng = SystemRandomNumberGenerator()
        var planar = [Float](repeating: 0, count: 2 * 2880)
        for channels in 1...2 {
            let decoder = SILKDecoder(channels: channels)
            for trial in 0..<600 {
                let size = Int.random(in: 0..<120, using: &rng)
                let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let frameSize = [480, 960, 1920, 2880][trial % 4]
                let bandwidth = OpusBandwidth(rawValue: (trial / 4) % 5)!
                let streamChannels = 1 + (trial / 20) % channels
                let lost = trial % 7 == 6
                let redundancy = trial % 11 == 5
                try bytes.withUnsafeBytes { raw in
                    var rd = OpusRangeDecoder(raw)
                    try planar.withUnsafeMutableBufferPointer { buf in
                        if redundancy {
                            try decoder.decodeFEC(&rd, frameSize: frameSize, bandwidth: bandwidth,
                                                  streamChannels: streamChannels, output: buf.baseAddress!)
                        } else {
                            try decoder.decode(&rd, frameSize: frameSize, bandwidth: bandwidth,
                                               streamChannels: streamChannels, lost: lost, output: buf.baseAddress!)
                        }
                    }
                }
                for v in planar.prefix(frameSize * streamChannels) { XCTAssertTrue(abs(v) <= 1, "trial \(trial)") }
            }
        }
        for path in Self.fixtures {
            let (packets, channels, _) = try Self.readOpus(path)
            let decoder = SILKDecoder(channels: channels)
            for (index, bytes) in packets.enumerated() {
                guard let packet = Packet(bytes), let frame = packet.frames.first else { continue }
                let cut = Array(frame.prefix(index % max(frame.count, 1)))
                try cut.withUnsafeBytes { raw in
                    var rd = OpusRangeDecoder(raw)
                    try planar.withUnsafeMutableBufferPointer { buf in
                        try decoder.decode(&rd, frameSize: packet.frameSize, bandwidth: packet.bandwidth,
                                           streamChannels: packet.stereo ? 2 : 1, lost: false, output: buf.baseAddress!)
                    }
                }
            }
        }
    }

    func testRejectsBadFrameSizes() {
        let decoder = SILKDecoder(channels: 1)
        var planar = [Float](repeating: 0, count: 2 * 2880)
        let bytes: [UInt8] = [1, 2, 3]
        for (frameSize, channels) in [(240, 1), (960, 3)] {
            var threw = false
            bytes.withUnsafeBytes { raw in
                var rd = OpusRangeDecoder(raw)
                planar.withUnsafeMutableBufferPointer { buf in
                    do {
                        try decoder.decode(&rd, frameSize: frameSize, bandwidth: .wide, streamChannels: channels,
                                           lost: false, output: buf.baseAddress!)
                    } catch {
                        threw = true
                    }
                }
            }
            XCTAssertTrue(threw, "\(frameSize) samples, \(channels) channels")
        }
    }
}

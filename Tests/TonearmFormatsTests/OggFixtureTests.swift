import Foundation
import XCTest
import Tonearm
import TonearmTestSupport
@testable import TonearmFormats

/// A fixture's golden JSON, written by make-ogg.sh: ffprobe's packets and stream, ffmpeg's
/// decode length, and facts the script read from the pages itself.
struct OggGolden {
    let raw: [String: Any]
    let path: String

    init(fixture path: String) throws {
        raw = try XCTUnwrap(Golden(fixture: path), "no golden for \(path)").raw
        self.path = path
    }

    var name: String { (path as NSString).lastPathComponent }
    func int(_ key: String) -> Int { (raw[key] as! NSNumber).intValue }
    func ints(_ key: String) -> [Int] { (raw[key] as! [NSNumber]).map(\.intValue) }
    var codec: String { raw["codec"] as! String }
    var sampleRate: Int { int("sampleRate") }
    var channels: Int { int("channels") }
    var packets: Int { int("packets") }
    var packetSizes: [Int] { ints("packetSizes") }
    var packetPts: [Int] { ints("packetPts") }
    var packetDurations: [Int] { ints("packetDurations") }
    var packetHashes: [String] { raw["packetHashes"] as! [String] }
    var skipSamples: [Int] { ints("skipSamples") }
    var discardPadding: [Int] { ints("discardPadding") }
    var validFrames: Int { int("validFrames") }
    var preSkip: Int { int("preSkip") }
    var formatID: String { (raw["expected"] as! [String: Any])["formatID"] as! String }
    var info: [String: String] { raw["info"] as? [String: String] ?? [:] }
    var pictures: [[String: Any]] { raw["pictures"] as? [[String: Any]] ?? [] }
    var audioStreams: Int { int("audioStreams") }
    /// Packets per link, for a chained file; one link otherwise.
    var linkPackets: [Int] { (raw["linkPackets"] as? [NSNumber])?.map(\.intValue) ?? [packets] }
    var pages: [[Int]] { (raw["pages"] as! [[NSNumber]]).map { $0.map(\.intValue) } }
    var isVorbis: Bool { codec == "vorbis" }

    /// Where each link's packets begin in ffprobe's list.
    var linkStarts: [Int] { linkPackets.indices.map { linkPackets[..<$0].reduce(0, +) } }

    /// The golden whose packets' timing applies: a re-paged file's original (ffprobe times
    /// the same Vorbis packets differently once they are re-paged).
    func timing() throws -> OggGolden {
        guard let other = raw["samePacketsAs"] as? String else { return self }
        return try OggGolden(fixture: (path as NSString).deletingLastPathComponent + "/" + other)
    }
}

/// What the parser saw on the push path, driven exactly as AudioFileStream drives it.
struct OggStreamRun {
    var events: [String] = []
    var notifications: [AudioFilePropertyID] = []
    /// Every packet the parser put together, with its bytes (including those that continue
    /// across pages, which the driver cannot deliver yet).
    var observed: [(entry: OggPacketEntry, data: [UInt8])] = []
    /// The packets the driver handed on, with their descriptions.
    var delivered: [(data: [UInt8], description: PacketDescription)] = []
    var formats: [StreamDescription] = []
    var error: AudioError?
    var parser: OggParser!
}

enum OggKit {
    static var fixtures: [String] { fixtureFiles("ogg", extensions: ["ogg", "oga", "opus", "spx"]) }

    static func formatID(_ s: String) -> AudioFormatID { AudioFormatID(FourCC(s)) }

    /// Pushes `bytes` through a ParserDriver and an OggParser in chunks, as AudioFileStream does.
    static func stream(_ bytes: [UInt8], chunk: Int = 4096, parser: OggParser = OggParser(),
                       startOffset: Int64 = 0) -> OggStreamRun
    {
        var run = OggStreamRun()
        run.parser = parser
        let driver = ParserDriver(parser: parser)
        if startOffset > 0 { driver.restart(at: startOffset) }
        parser.packetObserver = { entry, data in run.observed.append((entry, data)) }
        driver.onProperty = { id in
            run.notifications.append(id)
            run.events.append(id.fourCC.string)
            if id == .dataFormat, let f = parser.properties.dataFormat { run.formats.append(f) }
        }
        driver.onPackets = { raw, count, descriptions in
            run.events.append("packets \(count)")
            for d in descriptions ?? [] {
                let slice = UnsafeRawBufferPointer(rebasing: raw[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)])
                run.delivered.append((Array(slice), d))
            }
        }
        do {
            var i = 0
            while i < bytes.count {
                let n = min(chunk, bytes.count - i)
                try bytes[i..<i + n].withBytes { raw throws(AudioError) in try driver.push(raw, endOfStream: false) }
                i += n
            }
            try driver.push(UnsafeRawBufferPointer(start: nil, count: 0), endOfStream: true)
        } catch {
            run.error = error
        }
        return run
    }

    /// Scans a file as AudioFile does (the random-access path), keeping the parser.
    static func index(_ bytes: [UInt8]) throws -> OggParser {
        let parser = OggParser()
        let driver = ParserDriver(parser: parser)
        try driver.pull(from: MemorySource(bytes), wantsPackets: false)
        return parser
    }

    /// Reads a packet's bytes from its pieces (or its one range).
    static func bytes(of e: OggPacketEntry, in file: [UInt8]) -> [UInt8] {
        let ranges = e.pieces ?? [e.offset..<e.offset + Int64(e.size)]
        return ranges.flatMap { file[Int($0.lowerBound)..<Int($0.upperBound)] }
    }
}

final class OggFixtureTests: XCTestCase {
    func testFixturesExist() {
        XCTAssertEqual(OggKit.fixtures.count, 12, "run Tests/Fixtures/make-ogg.sh")
    }

    /// AudioFile: type, format, rate, channels, every packet's size and bytes (ffprobe's
    /// SHA-256), frames and pts, and the gapless numbers against the goldens.
    func testEveryFixtureThroughAudioFile() throws {
        for path in OggKit.fixtures {
            let g = try OggGolden(fixture: path)
            let bytes = try readWholeFile(path)
            let file = try AudioFile(path: path)
            let p = try file.properties
            XCTAssertEqual(p.fileType, .ogg, g.name)
            let f = try file.dataFormat
            XCTAssertEqual(f.formatID, OggKit.formatID(g.formatID), g.name)
            XCTAssertEqual(f.sampleRate, Double(g.sampleRate), g.name)
            XCTAssertEqual(Int(f.channelsPerFrame), g.channels, g.name)
            XCTAssertEqual(p.trackCount, g.audioStreams, g.name)

            // AudioFile reports the first link of a chain.
            let n = g.linkPackets[0]
            XCTAssertEqual(try file.audioDataPacketCount, Int64(n), g.name)
            let parser = try OggKit.index(bytes)
            let index = parser.packetIndex
            XCTAssertEqual(index.map { Int($0.size) }, Array(g.packetSizes[..<n]), g.name)
            XCTAssertEqual(index.map { SHA256Digest.hex(OggKit.bytes(of: $0, in: bytes)) }, Array(g.packetHashes[..<n]), g.name)
            XCTAssertEqual(p.packetTimestamps, index.map(\.pts), g.name)
            XCTAssertEqual(try file.maximumPacketSize, UInt32(g.packetSizes[..<n].max()!), g.name)

            checkTiming(index, golden: try g.timing(), range: 0..<n)

            let info = try XCTUnwrap(p.packetTableInfo, g.name)
            XCTAssertEqual(info.numberValidFrames, Int64(g.validFrames), g.name)
            let sum = index.reduce(0) { $0 + Int64($1.frames) }
            // With a constant frame count (FLAC's fixed blocks, Speex) every packet counts whole.
            XCTAssertEqual(info.totalFrames, f.framesPerPacket > 0 ? Int64(n) * Int64(f.framesPerPacket) : sum, g.name)
            XCTAssertEqual(try file.estimatedDuration, Double(g.validFrames) / f.sampleRate, accuracy: 1e-9, g.name)
            switch g.codec {
            case "opus":
                XCTAssertEqual(Int(info.primingFrames), g.preSkip, g.name)
                XCTAssertEqual(Int(info.primingFrames), g.skipSamples[0], g.name)
                if g.linkPackets.count == 1 { XCTAssertEqual(Int(info.remainderFrames), g.discardPadding[n - 1], g.name) }
            case "vorbis":
                XCTAssertEqual(info.primingFrames, 0, g.name)
                XCTAssertEqual(Int(info.remainderFrames), g.discardPadding[n - 1], g.name)
            case "speex":
                XCTAssertEqual(Int(info.primingFrames), -g.packetPts[0], g.name)
            default:
                XCTAssertEqual(info.primingFrames, 0, g.name)
                XCTAssertEqual(Int64(info.remainderFrames), Int64(n) * Int64(f.framesPerPacket) - Int64(g.validFrames), g.name)
                XCTAssertEqual(sum, Int64(g.validFrames), g.name)
            }

            // The tags and the cover.
            for (key, value) in g.info { XCTAssertEqual(p.info[key], value, "\(g.name): \(key)") }
            if let picture = g.pictures.first {
                XCTAssertEqual(p.albumArtwork, hexBytes(picture["hex"] as! String), g.name)
            } else {
                XCTAssertNil(p.albumArtwork, g.name)
            }

            // The parser's own reader puts every packet together, across pages too.
            let read: ByteRangeReader = { o, buffer throws(AudioError) in
                let n = max(0, min(buffer.count, bytes.count - Int(o)))
                bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(o)..<Int(o) + n])) }
                return n
            }
            // Whatever the arrays held is replaced.
            var all: [UInt8] = [1, 2, 3], allDescriptions = [PacketDescription(startOffset: 9, variableFramesInPacket: 9, dataByteSize: 9)]
            XCTAssertTrue(try parser.readPackets(startingAt: 0, count: n + 5, into: &all, descriptions: &allDescriptions, read: read))
            XCTAssertEqual(allDescriptions.count, n, g.name)
            XCTAssertEqual(allDescriptions.map { SHA256Digest.hex(Array(all[Int($0.startOffset)..<Int($0.startOffset) + Int($0.dataByteSize)])) },
                           Array(g.packetHashes[..<n]), g.name)
            var tail: [UInt8] = [], tailDescriptions: [PacketDescription] = []
            XCTAssertTrue(try parser.readPackets(startingAt: Int64(n - 2), count: 2, into: &tail, descriptions: &tailDescriptions, read: read))
            XCTAssertEqual(tail, Array(all[Int(allDescriptions[n - 2].startOffset)...]), g.name)
            var untouched: [UInt8] = [7], untouchedDescriptions: [PacketDescription] = []
            XCTAssertFalse(try OggKit.stream(bytes).parser.readPackets(startingAt: 0, count: 1, into: &untouched,
                                                                       descriptions: &untouchedDescriptions, read: read))
            XCTAssertEqual(untouched, [7])
            XCTAssertThrowsError(try parser.readPackets(startingAt: Int64(n), count: 1, into: &tail, descriptions: &tailDescriptions, read: read))

            // AudioFile reads every packet, also those that span pages, through the parser.
            let spanning = index.contains { $0.pieces != nil }
            XCTAssertEqual(spanning, g.name.contains("small_pages"), g.name)
            do {
                let (data, descriptions) = try file.readPacketData(startingAt: 0, count: n)
                let d = try XCTUnwrap(descriptions, g.name)
                XCTAssertEqual(d.count, n, g.name)
                for (i, desc) in d.enumerated() {
                    let packet = Array(data[Int(desc.startOffset)..<Int(desc.startOffset) + Int(desc.dataByteSize)])
                    XCTAssertEqual(SHA256Digest.hex(packet), g.packetHashes[i], "\(g.name) packet \(i)")
                    XCTAssertEqual(desc.variableFramesInPacket, index[i].frames, "\(g.name) packet \(i)")
                }
                XCTAssertEqual(try XCTUnwrap(p.packetTable).map(\.startOffset), index.map { $0.offset - p.dataOffset! }, g.name)
                XCTAssertEqual(try PropertyValue.packetToFrame(Int64(n), properties: p), info.totalFrames, g.name)
            }
        }
    }

    /// Frames and pts of packets `range` of the golden: a packet's frames are ffprobe's
    /// duration plus what ffprobe trims from it, and its pts is ffprobe's, except for Vorbis's
    /// first packet of a stream, which decodes to nothing (Vorbis I §4.3.8) where ffprobe gives
    /// it half a block before 0.
    func checkTiming(_ entries: [OggPacketEntry], golden g: OggGolden, range: Range<Int>, file: StaticString = #filePath,
                     line: UInt = #line)
    {
        XCTAssertEqual(entries.count, range.count, g.name, file: file, line: line)
        for (k, i) in range.enumerated() where k < entries.count {
            let e = entries[k]
            let first = g.linkStarts.contains(i)
            if g.isVorbis && first {
                XCTAssertEqual(e.frames, 0, "\(g.name) packet \(i)", file: file, line: line)
                XCTAssertEqual(e.pts, Int64(g.packetPts[i] + g.packetDurations[i]), "\(g.name) packet \(i)", file: file, line: line)
                continue
            }
            XCTAssertEqual(e.pts, Int64(g.packetPts[i]), "\(g.name) packet \(i)", file: file, line: line)
            let last = i == range.upperBound - 1
            if !last {
                XCTAssertEqual(Int(e.frames), g.packetDurations[i] + g.discardPadding[i], "\(g.name) packet \(i)", file: file, line: line)
            }
        }
    }

    /// The push path: every packet put together equals ffprobe's (all links of a chain), the
    /// ones the driver delivers are byte-exact, and only packets continued across pages wait.
    func testEveryFixtureThroughTheStreamPath() throws {
        for path in OggKit.fixtures {
            let g = try OggGolden(fixture: path)
            let bytes = try readWholeFile(path)
            let run = OggKit.stream(bytes, chunk: 777)
            XCTAssertNil(run.error, g.name)
            XCTAssertEqual(run.observed.map { $0.data.count }, g.packetSizes, g.name)
            XCTAssertEqual(run.observed.map { SHA256Digest.hex($0.data) }, g.packetHashes, g.name)
            for (l, start) in g.linkStarts.enumerated() {
                let range = start..<start + g.linkPackets[l]
                checkTiming(Array(run.observed[range].map(\.entry)), golden: try g.timing(), range: range)
            }
            // Every packet is delivered byte-exact, also those continued across pages.
            XCTAssertTrue(run.delivered.map(\.data) == run.observed.map(\.data), g.name)
            XCTAssertEqual(run.delivered.map(\.description.variableFramesInPacket), run.observed.map(\.entry.frames), g.name)
            XCTAssertEqual(run.parser.damagedPageCount, 0, g.name)
            XCTAssertEqual(run.parser.sequenceGapCount, 0, g.name)
            if g.name.contains("small_pages") {
                XCTAssertGreaterThan(run.observed.filter { $0.entry.pieces != nil }.count, 3, g.name)
            }

            // 'redy' once, after the format and before any packet. 'pnfo' before the packets
            // it applies to: each link's priming at its first audio page (but where that page
            // is also its last), and the whole table at its last page, before its packets.
            XCTAssertEqual(run.notifications.filter { $0 == .readyToProducePackets }.count, 1, g.name)
            let ready = run.events.firstIndex(of: "redy")!
            XCTAssertTrue(run.events[..<ready].contains("dfmt"), g.name)
            XCTAssertFalse(run.events[..<ready].contains { $0.hasPrefix("packets") }, g.name)
            let tables = run.notifications.filter { $0 == .packetTableInfo }.count
            XCTAssertTrue((g.linkPackets.count...2 * g.linkPackets.count).contains(tables), "\(g.name): \(tables) pnfo")
            let lastTable = try XCTUnwrap(run.events.lastIndex(of: "pnfo"), g.name)
            XCTAssertTrue(run.events[(lastTable + 1)...].allSatisfy { $0.hasPrefix("packets") }, "\(g.name): \(run.events.suffix(4))")
            XCTAssertLessThan(lastTable, run.events.count - 1, "\(g.name): the last page's packets follow its 'pnfo'")
            let info = try XCTUnwrap(run.parser.properties.packetTableInfo, g.name)
            if g.linkPackets.count == 1 { XCTAssertEqual(info.numberValidFrames, Int64(g.validFrames), g.name) }
        }
    }

    /// Feeding a file at once, a byte at a time or in random chunks gives the same
    /// properties, notifications and packets.
    func testDripFeedEquality() throws {
        for path in OggKit.fixtures {
            let bytes = try readWholeFile(path)
            XCTAssertNil(dripFeedMismatch(bytes), (path as NSString).lastPathComponent)
            // The packets the parser puts together also agree, continued ones included.
            let whole = OggKit.stream(bytes, chunk: bytes.count)
            for chunk in [13, 4096] + (path.contains("small_pages") ? [1] : []) {
                let other = OggKit.stream(bytes, chunk: chunk)
                XCTAssertEqual(other.observed.map(\.entry), whole.observed.map(\.entry), "\(path) in chunks of \(chunk)")
                XCTAssertTrue(other.observed.map(\.data) == whole.observed.map(\.data), "\(path) in chunks of \(chunk)")
                XCTAssertEqual(other.events, whole.events, "\(path) in chunks of \(chunk)")
            }
        }
    }

    /// What AudioFile and AudioFileStream both expose agrees: format, cookie, layout, info,
    /// data offset, and the packets the stream delivers are AudioFile's.
    func testFileAndStreamAgree() throws {
        for path in OggKit.fixtures {
            let g = try OggGolden(fixture: path)
            let bytes = try readWholeFile(path)
            let file = try AudioFile(path: path)
            let fp = try file.properties
            var streamPackets: [[UInt8]] = []
            var firstLinkDone = false
            var cookie: [UInt8]?
            var info: InfoDictionary?
            var layout: ChannelLayout??
            let stream = AudioFileStream(propertyListener: { s, id, _ in
                if id == .readyToProducePackets {
                    cookie = try? s.magicCookie
                    info = try? s.infoDictionary
                    layout = .some(try? s.channelLayout)
                }
                // The next link's format, after 'redy' (which set `layout`), ends the first link's packets.
                if id == .dataFormat && layout != nil { firstLinkDone = true }
            }, packets: { _, _, data, descriptions in
                guard !firstLinkDone else { return }
                for d in descriptions! {
                    streamPackets.append(Array(data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)]))
                }
            })
            try stream.parse(bytes)
            try stream.parse(nil)
            XCTAssertEqual(try stream.fileType, .ogg, g.name)
            if g.linkPackets.count == 1 {
                XCTAssertEqual(try stream.dataFormat, fp.dataFormat, g.name)
                XCTAssertEqual(try stream.infoDictionary, fp.info, g.name)
                XCTAssertEqual(try stream.packetTableInfo, fp.packetTableInfo, g.name)
            }
            XCTAssertEqual(cookie, fp.magicCookie, g.name)
            XCTAssertEqual(info, fp.info, g.name)
            XCTAssertEqual(layout ?? nil, fp.channelLayout, g.name)
            XCTAssertEqual(try stream.dataOffset, fp.dataOffset, g.name)
            if fp.packetTable != nil {
                let all = try file.readPacketData(startingAt: 0, count: Int(fp.audioDataPacketCount!))
                let fromFile = all.descriptions!.map { Array(all.data[Int($0.startOffset)..<Int($0.startOffset) + Int($0.dataByteSize)]) }
                XCTAssertTrue(streamPackets == fromFile, g.name)
            }
        }
    }

    /// The codec headers: cookies in their documented forms.
    func testMagicCookies() throws {
        for path in OggKit.fixtures {
            let g = try OggGolden(fixture: path)
            let bytes = try readWholeFile(path)
            let cookie = try XCTUnwrap(try AudioFile(path: path).magicCookie, g.name)
            let parser = try OggKit.index(bytes)
            let headers = try headerPackets(bytes, serial: XCTUnwrap(parser.selectedSerial), count: g.codec == "vorbis" ? 3 : 1)
            switch g.codec {
            case "vorbis":
                // Xiph lacing: 2, the sizes of the first two headers, then the three headers.
                var expected: [UInt8] = [2]
                for h in headers.prefix(2) {
                    expected += [UInt8](repeating: 255, count: h.count / 255) + [UInt8(h.count % 255)]
                }
                XCTAssertEqual(cookie, expected + headers.joined(), g.name)
            case "opus":
                XCTAssertEqual(cookie, headers[0], g.name)
                XCTAssertEqual(Array(cookie[0..<8]), Array("OpusHead".utf8))
            case "flac":
                XCTAssertEqual(cookie, [0, 0, 0, 0, 0x80, 0, 0, 34] + headers[0][17..<51], g.name)
            case "speex":
                XCTAssertEqual(cookie, Array(headers[0].prefix(80)), g.name)
            default:
                XCTFail(g.name)
            }
        }
    }

    /// The first `count` packets of one stream, read with the golden's page list.
    private func headerPackets(_ bytes: [UInt8], serial: UInt32, count: Int) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        var current: [UInt8] = []
        var at = 0
        while at < bytes.count && out.count < count {
            let segments = Int(bytes[at + 26])
            let lacing = bytes[at + 27..<at + 27 + segments]
            let s = UInt32(bytes[at + 14]) | UInt32(bytes[at + 15]) << 8 | UInt32(bytes[at + 16]) << 16 | UInt32(bytes[at + 17]) << 24
            var pos = at + 27 + segments
            for v in lacing {
                if s == serial {
                    current += bytes[pos..<pos + Int(v)]
                    if v < 255 { out.append(current); current = [] }
                }
                pos += Int(v)
            }
            at = pos
        }
        return out
    }

    /// A chained file raises a second 'dfmt' (and 'mgic', 'cmap' where the layout changes,
    /// 'info') after the first link's last packet and 'pnfo', before the second link's first
    /// packet; AudioFile reports the first link.
    func testChainedStreamRaisesASecondDataFormat() throws {
        let path = try XCTUnwrap(OggKit.fixtures.first { $0.contains("chained") })
        let g = try OggGolden(fixture: path)
        let bytes = try readWholeFile(path)
        var events: [String] = []
        var formats: [StreamDescription] = []
        var infos: [InfoDictionary] = []
        let stream = AudioFileStream(propertyListener: { s, id, _ in
            events.append(id.fourCC.string)
            if id == .dataFormat { formats.append(try! s.dataFormat) }
            if id == .infoDictionary { infos.append(try! s.infoDictionary) }
        }, packets: { _, n, _, _ in
            if events.last?.hasPrefix("packets") == true, let last = events.popLast() {
                events.append("packets \(Int(last.dropFirst(8))! + n)")
            } else {
                events.append("packets \(n)")
            }
        })
        for chunk in stride(from: 0, to: bytes.count, by: 1000) {
            try stream.parse(bytes[chunk..<min(bytes.count, chunk + 1000)])
        }
        try stream.parse(nil)
        XCTAssertEqual(formats.map(\.channelsPerFrame), [1, 2])
        XCTAssertEqual(formats.map(\.sampleRate), [48000, 48000])
        XCTAssertEqual(infos.last?[InfoDictionary.title], "Second Link")
        XCTAssertEqual(events.filter { $0 == "redy" }.count, 1)
        let second = try XCTUnwrap(events.lastIndex(of: "dfmt"))
        XCTAssertNotEqual(second, events.firstIndex(of: "dfmt"))
        // In between: the first link's table, then its last page's packets; then the new
        // link's properties, and its priming before its first packets. Its table ends it,
        // before its last page's packets.
        XCTAssertEqual(events[second - 2], "pnfo")
        XCTAssertTrue(events[second - 1].hasPrefix("packets"))
        XCTAssertEqual(Array(events[second...].prefix(4)), ["dfmt", "mgic", "info", "pnfo"])
        XCTAssertTrue(events[second + 4].hasPrefix("packets"))
        XCTAssertEqual(events[events.count - 2], "pnfo")
        XCTAssertTrue(events.last?.hasPrefix("packets") == true)
        XCTAssertEqual(try stream.packetTableInfo?.numberValidFrames, 36000)
        XCTAssertEqual(try stream.magicCookie?[9], 2)  // OpusHead's channel count

        let file = try AudioFile(path: path)
        XCTAssertEqual(try file.dataFormat.channelsPerFrame, 1)
        XCTAssertEqual(try file.audioDataPacketCount, Int64(g.linkPackets[0]))
        XCTAssertEqual(try file.packetTableInfo?.numberValidFrames, Int64(g.validFrames))
        XCTAssertTrue(try file.infoDictionary[InfoDictionary.title] == nil)
    }

    /// The first audio stream is reported; Theora, Skeleton and a second audio stream are skipped.
    func testOtherLogicalStreamsAreSkipped() throws {
        for (name, format, tracks) in [("multiplexed", AudioFormatID.vorbis, 2), ("skeleton", .speex, 1)] {
            let path = try XCTUnwrap(OggKit.fixtures.first { $0.contains(name) })
            let file = try AudioFile(path: path)
            XCTAssertEqual(try file.dataFormat.formatID, format, name)
            XCTAssertEqual(try file.properties.trackCount, tracks, name)
        }
    }

    /// Granule bisection finds, for any frame, a page from which the packet holding that
    /// frame comes out, with the right times, after a discontinuity.
    func testSeekByGranuleBisection() throws {
        for path in OggKit.fixtures where !path.contains("chained") {
            let g = try OggGolden(fixture: path)
            let bytes = try readWholeFile(path)
            let source = MemorySource(bytes)
            let fetch: ByteRangeFetcher = { offset, count throws(AudioError) in try source.read(at: offset, count: count) }
            let whole = OggKit.stream(bytes)
            let parser = whole.parser!
            let all = whole.observed.map(\.entry)
            let end = all.last!.pts + Int64(all.last!.frames)
            for target in [Int64(0), 1, end / 3, end / 2, end - 1] {
                let (offset, _) = try parser.seekOffset(toFrame: target, fetch: fetch, sourceSize: Int64(bytes.count))
                XCTAssertGreaterThanOrEqual(offset, try XCTUnwrap(parser.properties.dataOffset), g.name)
                // Resume there, as AudioFileStream does after a seek with .discontinuity.
                try parser.resume(at: offset)
                let run = OggKit.stream(Array(bytes[Int(offset)...]), parser: parser, startOffset: offset)
                XCTAssertNil(run.error, "\(g.name) at \(target)")
                let got = run.observed.map(\.entry)
                // A suffix of the packets, except that a Vorbis packet after a gap decodes to nothing.
                let first = try XCTUnwrap(all.firstIndex { $0.offset == got.first?.offset }, "\(g.name) at \(target)")
                XCTAssertEqual(got.count, all.count - first, "\(g.name) at \(target)")
                for (k, e) in got.enumerated().dropFirst(g.isVorbis ? 1 : 0) {
                    XCTAssertEqual(e, all[first + k], "\(g.name) at \(target), packet \(first + k)")
                }
                let holder = all.lastIndex { $0.pts <= target }!
                XCTAssertLessThanOrEqual(first, max(0, holder - (g.isVorbis ? 1 : 0)), "\(g.name) at \(target)")
                // Not far back: at most one page earlier than needed.
                XCTAssertLessThan(holder - first, 260, "\(g.name) at \(target)")
            }
            XCTAssertEqual(try parser.lastGranulePosition(fetch: fetch, sourceSize: Int64(bytes.count)),
                           Int64(g.validFrames + g.preSkip), g.name)
        }
    }

    /// AudioFileStream's seek(toPacket:): back to a packet already seen it is exact (the page
    /// where the packet begins; that page's earlier packets come first); ahead it is an estimate
    /// and says so. AudioFile's parser answers every packet's page exactly.
    func testSeekToPacketOnBothPaths() throws {
        for name in ["opus_ffmpeg_mono", "vorbis_ffmpeg_mono", "flac_flac_mono", "vorbis_small_pages", "opus_small_pages"] {
            let path = try XCTUnwrap(OggKit.fixtures.first { $0.contains(name) })
            let bytes = try readWholeFile(path)
            let all = OggKit.stream(bytes).observed
            var delivered: [[UInt8]] = []
            let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
                for d in descriptions! { delivered.append(Array(data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)])) }
            })
            // All but the last page: packets ahead of what was read are estimates.
            let lastPage = try OggGolden(fixture: path).pages.last![0]
            try stream.parse(bytes[..<lastPage])
            XCTAssertEqual(try stream.seekOffset(toPacket: Int64(all.count - 1)).isEstimated, all.last!.entry.page >= lastPage, name)
            XCTAssertFalse(try stream.seekOffset(toPacket: 0).isEstimated, name)
            try stream.parse(bytes[lastPage...])
            try stream.parse(nil)
            let dataOffset = try stream.dataOffset
            for target in [0, 1, all.count / 2, all.count - 1] {
                let (offset, estimated) = try stream.seekOffset(toPacket: Int64(target))
                XCTAssertFalse(estimated, "\(name) packet \(target)")
                XCTAssertEqual(dataOffset + offset, all[target].entry.page, "\(name) packet \(target)")
                delivered = []
                try stream.parse(bytes[Int(dataOffset + offset)...], flags: .discontinuity)
                try stream.parse(nil)
                // Exactly the packets that begin on that page or later.
                let expected = all.filter { $0.entry.page >= dataOffset + offset }
                XCTAssertTrue(expected.map(\.data) == delivered, "\(name) packet \(target)")
            }
            XCTAssertThrowsError(try stream.seekOffset(toPacket: -1))
            // The random-access path knows every packet's page.
            let parser = try OggKit.index(bytes)
            for (i, e) in parser.packetIndex.enumerated() {
                XCTAssertEqual(try parser.byteOffset(ofPacket: Int64(i)).offset, e.page - dataOffset, "\(name) packet \(i)")
            }
            XCTAssertEqual(try parser.byteOffset(ofPacket: Int64(parser.packetIndex.count)).offset, parser.properties.audioDataByteCount)
            XCTAssertThrowsError(try parser.byteOffset(ofPacket: Int64(parser.packetIndex.count + 1)))
        }
    }

    /// A flipped bit in one page: that page fails its CRC and is dropped, with the packets
    /// that have bytes in it; the parser finds the next page, and the packets after it keep
    /// their bytes and times (a Vorbis packet right after the gap decodes to nothing).
    func testCRCFailureDropsThePageAndResyncs() throws {
        for name in ["vorbis_small_pages", "opus_small_pages", "vorbis_oggenc_stereo"] {
            let path = try XCTUnwrap(OggKit.fixtures.first { $0.contains(name) })
            let g = try OggGolden(fixture: path)
            let whole = try readWholeFile(path)
            let pages = g.pages
            let k = pages.count / 2
            let damaged = Int64(pages[k][0])..<Int64(pages[k + 1][0])
            var bytes = whole
            bytes[Int(damaged.lowerBound) + 40] ^= 0x10
            let clean = OggKit.stream(whole)
            let run = OggKit.stream(bytes, chunk: 500)
            XCTAssertNil(run.error, name)
            XCTAssertEqual(run.parser.damagedPageCount, 1, name)
            XCTAssertEqual(run.parser.sequenceGapCount, 1, name)
            let kept = clean.observed.filter { p in
                !(p.entry.pieces ?? [p.entry.offset..<p.entry.offset + Int64(p.entry.size)]).contains { $0.overlaps(damaged) }
            }
            XCTAssertLessThan(kept.count, clean.observed.count, name)
            XCTAssertEqual(run.observed.count, kept.count, name)
            let gap = try XCTUnwrap(kept.firstIndex { $0.entry.offset >= damaged.upperBound }, name)
            for (i, (a, b)) in zip(run.observed, kept).enumerated() {
                XCTAssertTrue(a.data == b.data, "\(name) packet \(i)")
                if i == gap && g.isVorbis {
                    XCTAssertEqual(a.entry.frames, 0, name)
                } else {
                    XCTAssertEqual(a.entry, b.entry, "\(name) packet \(i)")
                }
            }
            // The same through AudioFile: the packets with bytes in the bad page are missing.
            let file = try AudioFile(source: MemorySource(bytes))
            XCTAssertEqual(try file.audioDataPacketCount, Int64(kept.count), name)
            XCTAssertNil(dripFeedMismatch(bytes, patterns: [.allAtOnce, .oneByteAtATime, .randomChunks(seed: 9, maximum: 300)]), name)
        }

        // Junk between pages, with a false capture pattern in it, is skipped.
        let path = try XCTUnwrap(OggKit.fixtures.first { $0.contains("vorbis_oggenc") })
        let whole = try readWholeFile(path)
        let next = try OggGolden(fixture: path).pages[3][0]
        var junk = Array(whole[..<next])
        junk += Array("OggS\0\0junk that is not a page".utf8) + [UInt8](repeating: 0x4F, count: 1000)
        junk += whole[next...]
        let resynced = OggKit.stream(junk, chunk: 333)
        XCTAssertNil(resynced.error)
        let clean = OggKit.stream(whole).observed
        XCTAssertTrue(resynced.observed.map(\.data) == clean.map(\.data))
        // Nothing of the stream was lost, so nothing was forgotten: the times go on.
        XCTAssertEqual(resynced.observed.map(\.entry.pts), clean.map(\.entry.pts))
        XCTAssertEqual(resynced.observed.map(\.entry.frames), clean.map(\.entry.frames))
        XCTAssertEqual(resynced.parser.damagedPageCount, 1)
        XCTAssertEqual(resynced.parser.sequenceGapCount, 0)
        XCTAssertEqual(try AudioFile(source: MemorySource(junk)).audioDataPacketCount, try AudioFile(path: path).audioDataPacketCount)
    }

}

/// SHA-256 (FIPS 180-4), to compare packets with ffprobe's `-show_data_hash SHA256`. The
/// constants are computed from their definition (the fractional parts of the square and cube
/// roots of the first primes) rather than typed in.
enum SHA256Digest {
    static let primes: [Int] = {
        var p: [Int] = []
        var n = 2
        while p.count < 64 {
            if !p.contains(where: { n % $0 == 0 }) { p.append(n) }
            n += 1
        }
        return p
    }()

    static func fraction(_ x: Double) -> UInt32 { UInt32((x - x.rounded(.down)) * 4_294_967_296) }
    static let k: [UInt32] = primes.map { fraction(cbrt(Double($0))) }
    static let h0: [UInt32] = primes.prefix(8).map { fraction(Double($0).squareRoot()) }

    static func hex(_ message: [UInt8]) -> String {
        var h = h0
        var m = message + [0x80]
        while m.count % 64 != 56 { m.append(0) }
        let bits = UInt64(message.count) * 8
        for i in (0..<8).reversed() { m.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(i)))) }
        var w = [UInt32](repeating: 0, count: 64)
        for chunk in stride(from: 0, to: m.count, by: 64) {
            for i in 0..<16 {
                w[i] = (0..<4).reduce(0) { $0 << 8 | UInt32(m[chunk + 4 * i + $1]) }
            }
            func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }
            for i in 16..<64 {
                let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
            for i in 0..<64 {
                let t1 = hh &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
                let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            for (i, v) in [a, b, c, d, e, f, g, hh].enumerated() { h[i] = h[i] &+ v }
        }
        return h.map { String($0, radix: 16).leftPadded(8) }.joined()
    }
}

extension String {
    fileprivate func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}

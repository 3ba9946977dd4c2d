import Foundation
import Tonearm
import TonearmTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Writes MP4 boxes by hand, for what no encoder here writes (HE-AAC, AMR, iTunSMPB, stss,
/// 64-bit sizes) and for damaged and hostile files.
enum MP4Build {
    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func u64(_ v: UInt64) -> [UInt8] { u32(UInt32(v >> 32)) + u32(UInt32(v & 0xFFFF_FFFF)) }
    /// A four-char type; "©nam" is written with the single byte 0xA9.
    static func type(_ s: String) -> [UInt8] {
        s.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
    }

    static func box(_ t: String, _ parts: [UInt8]...) -> [UInt8] {
        let body = parts.flatMap { $0 }
        return u32(UInt32(8 + body.count)) + type(t) + body
    }

    static func full(_ t: String, version: UInt8 = 0, flags: UInt32 = 0, _ parts: [UInt8]...) -> [UInt8] {
        box(t, [version] + Array(u32(flags).dropFirst()), parts.flatMap { $0 })
    }

    /// An AudioSampleEntry (ISO/IEC 14496-12 §12.2.3) with its codec boxes.
    static func audioEntry(_ t: String, channels: UInt16 = 2, rate: UInt32 = 44100, _ children: [UInt8]...) -> [UInt8] {
        box(t, [UInt8](repeating: 0, count: 6), u16(1), [UInt8](repeating: 0, count: 8), u16(channels), u16(16), u16(0), u16(0),
            u32(rate << 16), children.flatMap { $0 })
    }

    static func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] { [tag, UInt8(body.count)] + body }

    static func esds(_ asc: [UInt8], objectType: UInt8 = 0x40) -> [UInt8] {
        let config = descriptor(0x04, [objectType, 0x15, 0, 0x06, 0] + u32(128_000) + u32(96_000) + descriptor(0x05, asc))
        return full("esds", descriptor(0x03, u16(1) + [0] + config + descriptor(0x06, [2])))
    }

    static func mp4a(_ asc: [UInt8], channels: UInt16 = 2, rate: UInt32 = 44100) -> [UInt8] {
        audioEntry("mp4a", channels: channels, rate: rate, esds(asc))
    }

    struct Track {
        var entry: [UInt8] = MP4Build.mp4a([0x12, 0x10])
        var sizes: [Int] = [10, 20, 30, 40, 50, 60, 70]
        var timescale: UInt32 = 44100
        var delta: UInt32 = 1024
        var lastDelta: UInt32?
        var samplesPerChunk = 3
        var edits: [(duration: UInt32, mediaTime: Int32)] = []
        var stss: [UInt32]?
        var ctts: [(count: UInt32, offset: Int32)]?
        var co64 = false
        var handler = "soun"
        /// More stsd entries, and the description index of each chunk after the first.
        var moreEntries: [[UInt8]] = []
        var laterChunksDescription: UInt32 = 1
    }

    static func trak(_ t: Track, id: UInt32 = 1, dataStart: UInt64, tref: [UInt8] = []) -> [UInt8] {
        var chunks: [UInt64] = []
        var offset = dataStart
        for (i, s) in t.sizes.enumerated() {
            if i % t.samplesPerChunk == 0 { chunks.append(offset) }
            offset += UInt64(s)
        }
        var stts = [UInt8]()
        let n = UInt32(t.sizes.count)
        if let last = t.lastDelta, n > 0 {
            stts = u32(2) + u32(n - 1) + u32(t.delta) + u32(1) + u32(last)
        } else {
            stts = u32(1) + u32(n) + u32(t.delta)
        }
        let stsc = t.laterChunksDescription == 1
            ? u32(1) + u32(1) + u32(UInt32(t.samplesPerChunk)) + u32(1)
            : u32(2) + u32(1) + u32(UInt32(t.samplesPerChunk)) + u32(1) + u32(2) + u32(UInt32(t.samplesPerChunk)) + u32(t.laterChunksDescription)
        var stbl = full("stsd", u32(UInt32(1 + t.moreEntries.count)), t.entry + t.moreEntries.flatMap { $0 }) + full("stts", stts)
            + full("stsc", stsc)
            + full("stsz", u32(0), u32(n), t.sizes.flatMap { u32(UInt32($0)) })
        if t.co64 {
            stbl += full("co64", u32(UInt32(chunks.count)), chunks.flatMap { u64($0) })
        } else {
            stbl += full("stco", u32(UInt32(chunks.count)), chunks.flatMap { u32(UInt32($0)) })
        }
        if let stss = t.stss { stbl += full("stss", u32(UInt32(stss.count)), stss.flatMap { u32($0) }) }
        if let ctts = t.ctts { stbl += full("ctts", version: 1, u32(UInt32(ctts.count)), ctts.flatMap { u32($0.count) + u32(UInt32(bitPattern: $0.offset)) }) }
        let total = UInt32(t.sizes.count) * t.delta
        var trak = full("tkhd", flags: 3, u32(0), u32(0), u32(id), u32(0), u32(total))
        if !t.edits.isEmpty {
            trak += box("edts", full("elst", u32(UInt32(t.edits.count)), t.edits.flatMap { u32($0.duration) + u32(UInt32(bitPattern: $0.mediaTime)) + u32(0x10000) }))
        }
        trak += tref
        trak += box("mdia",
                    full("mdhd", u32(0), u32(0), u32(t.timescale), u32(total), u32(0x55C4_0000)),
                    full("hdlr", u32(0), type(t.handler), u32(0), u32(0), u32(0), [0]),
                    box("minf", box("stbl", stbl)))
        return box("trak", trak)
    }

    enum MdatHeader { case normal, large, toEnd }

    /// A whole file: ftyp, then moov and mdat in either order. Sample i is filled with the byte i.
    static func file(_ t: Track, brand: String? = "M4A ", moovFirst: Bool = true, mdat: MdatHeader = .normal,
                     largeMoov: Bool = false, extraMoov: [UInt8] = [], udta: [UInt8] = []) -> [UInt8]
    {
        let ftyp = brand.map { box("ftyp", type($0), u32(0), type($0), type("isom")) } ?? []
        var data: [UInt8] = []
        for (i, s) in t.sizes.enumerated() { data += [UInt8](repeating: UInt8(i & 0xFF), count: s) }
        let mdatHeader: [UInt8]
        switch mdat {
        case .normal: mdatHeader = u32(UInt32(8 + data.count)) + type("mdat")
        case .large: mdatHeader = u32(1) + type("mdat") + u64(UInt64(16 + data.count))
        case .toEnd: mdatHeader = u32(0) + type("mdat")
        }
        func moov(_ start: UInt64) -> [UInt8] {
            let m = box("moov", full("mvhd", u32(0), u32(0), u32(1000), u32(0), [UInt8](repeating: 0, count: 80)),
                        trak(t, dataStart: start), extraMoov, udta.isEmpty ? [] : box("udta", udta))
            guard largeMoov else { return m }
            return u32(1) + type("moov") + u64(UInt64(m.count + 8)) + m[8...]
        }
        if moovFirst {
            let size = moov(0).count
            let start = UInt64(ftyp.count + size + mdatHeader.count)
            return ftyp + moov(start) + mdatHeader + data
        }
        let start = UInt64(ftyp.count + mdatHeader.count)
        return ftyp + mdatHeader + data + moov(start)
    }

    /// An iTunes item with one data atom.
    static func item(_ t: String, type dataType: UInt32 = 1, _ payload: [UInt8]) -> [UInt8] {
        box(t, box("data", u32(dataType), u32(0), payload))
    }

    static func ilst(_ items: [UInt8]...) -> [UInt8] {
        full("meta", full("hdlr", u32(0), type("mdir"), type("appl"), u32(0), u32(0), [0]), box("ilst", items.flatMap { $0 }))
    }
}

/// Writes bits MSB first, for AudioSpecificConfigs.
struct BitWriter {
    var bytes: [UInt8] = []
    var used = 0
    mutating func put(_ value: Int, _ count: Int) {
        for i in stride(from: count - 1, through: 0, by: -1) {
            if used % 8 == 0 { bytes.append(0) }
            if value >> i & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (used % 8)) }
            used += 1
        }
    }
}

final class MP4BoxTests: XCTestCase {
    typealias B = MP4Build

    func props(_ bytes: [UInt8]) throws -> FileProperties { try AudioFile(source: MemorySource(bytes)).properties }

    func error(_ bytes: [UInt8]) -> AudioError? {
        MP4Kit.error { () throws(AudioError) in _ = try AudioFile(source: MemorySource(bytes)) }
    }

    /// Both paths agree on the packets of a hand-made file, and the bytes are the samples'.
    func assertBothPaths(_ bytes: [UInt8], _ t: B.Track, fetcher: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        let f = try AudioFile(source: MemorySource(bytes))
        let fromFile = try MP4Kit.filePackets(f)
        XCTAssertEqual(fromFile.sizes, t.sizes, file: file, line: line)
        var expected: [UInt8] = []
        for (i, s) in t.sizes.enumerated() { expected += [UInt8](repeating: UInt8(i & 0xFF), count: s) }
        XCTAssertEqual(fromFile.data, expected, file: file, line: line)
        for chunk in [1, 7, 4096] {
            let s = MP4Kit.stream(bytes, chunk: chunk, fetcher: fetcher)
            XCTAssertNil(s.error, file: file, line: line)
            XCTAssertEqual(s.packets, fromFile, "chunks of \(chunk)", file: file, line: line)
        }
        XCTAssertNil(dripFeedMismatch(bytes), file: file, line: line)
    }

    // MARK: Sample entries

    func asc(_ build: (inout BitWriter) -> Void) -> [UInt8] {
        var w = BitWriter()
        build(&w)
        return w.bytes
    }

    func format(_ entry: [UInt8]) throws -> FileProperties {
        var t = B.Track()
        t.entry = entry
        return try props(B.file(t))
    }

    func testAACConfigurations() throws {
        // AAC-LC, 44.1 kHz stereo.
        var p = try format(B.mp4a([0x12, 0x10]))
        XCTAssertEqual(p.dataFormat?.formatID, .mpeg4AAC)
        XCTAssertEqual(p.dataFormat?.framesPerPacket, 1024)
        XCTAssertNil(p.formatList)
        XCTAssertEqual(p.magicCookie, [0x12, 0x10])

        // HE-AAC, explicit: object type 5, core 24 kHz, extension 48 kHz, then AAC-LC.
        let he = asc { w in w.put(5, 5); w.put(6, 4); w.put(2, 4); w.put(3, 4); w.put(2, 5); w.put(0, 3) }
        p = try format(B.mp4a(he, rate: 48000))
        XCTAssertEqual(p.dataFormat, StreamDescription(sampleRate: 48000, formatID: .mpeg4AAC_HE, bytesPerPacket: 0, framesPerPacket: 2048,
                                                       bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0))
        XCTAssertEqual(p.formatList?.map(\.format.formatID), [.mpeg4AAC_HE, .mpeg4AAC])
        XCTAssertEqual(p.formatList?.map(\.format.sampleRate), [48000, 24000])
        XCTAssertEqual(p.formatList?.map(\.format.framesPerPacket), [2048, 1024])

        // HE-AAC v2, explicit: object type 29 over a mono core; PS makes it stereo.
        let v2 = asc { w in w.put(29, 5); w.put(6, 4); w.put(1, 4); w.put(3, 4); w.put(2, 5); w.put(0, 3) }
        p = try format(B.mp4a(v2, channels: 1, rate: 48000))
        XCTAssertEqual(p.dataFormat?.formatID, .mpeg4AAC_HE_V2)
        XCTAssertEqual(p.dataFormat?.channelsPerFrame, 2)
        XCTAssertEqual(p.formatList?.map(\.format.formatID), [.mpeg4AAC_HE_V2, .mpeg4AAC_HE, .mpeg4AAC])
        XCTAssertEqual(p.formatList?.map(\.format.channelsPerFrame), [2, 1, 1])

        // Backward-compatible signalling: AAC-LC, then the 0x2B7 sync extension with SBR, then 0x548 with PS.
        let implicitHE = asc { w in w.put(2, 5); w.put(6, 4); w.put(2, 4); w.put(0, 3); w.put(0x2B7, 11); w.put(5, 5); w.put(1, 1); w.put(3, 4) }
        XCTAssertEqual(try format(B.mp4a(implicitHE)).dataFormat?.formatID, .mpeg4AAC_HE)
        XCTAssertEqual(try format(B.mp4a(implicitHE)).dataFormat?.sampleRate, 48000)
        let implicitPS = asc { w in
            w.put(2, 5); w.put(6, 4); w.put(1, 4); w.put(0, 3); w.put(0x2B7, 11); w.put(5, 5); w.put(1, 1); w.put(3, 4); w.put(0x548, 11); w.put(1, 1)
        }
        XCTAssertEqual(try format(B.mp4a(implicitPS)).dataFormat?.formatID, .mpeg4AAC_HE_V2)
        // The extension says "no SBR" (ffmpeg writes this): plain AAC.
        let noSBR = asc { w in w.put(2, 5); w.put(4, 4); w.put(2, 4); w.put(0, 3); w.put(0x2B7, 11); w.put(5, 5); w.put(0, 1) }
        XCTAssertEqual(try format(B.mp4a(noSBR)).dataFormat?.formatID, .mpeg4AAC)
        XCTAssertNil(try format(B.mp4a(noSBR)).formatList)
        // AAC LC at 22.05 kHz that says nothing of SBR may carry it implicitly: the format
        // list offers HE-AAC at 44.1 kHz first; the data format stays AAC. ffmpeg says "no SBR".
        let implicit = try format(B.mp4a([0x13, 0x88], channels: 1, rate: 22050))
        XCTAssertEqual(implicit.dataFormat?.formatID, .mpeg4AAC)
        XCTAssertEqual(implicit.formatList?.map(\.format.formatID), [.mpeg4AAC_HE, .mpeg4AAC])
        XCTAssertEqual(implicit.formatList?.map(\.format.sampleRate), [44100, 22050])
        XCTAssertNil(try AudioFile(path: MP4Kit.path("aac_3gpp.3gp")).properties.formatList)

        // 960-sample frames; AAC-LD; an escaped sampling rate.
        let short = asc { w in w.put(2, 5); w.put(3, 4); w.put(1, 4); w.put(1, 1); w.put(0, 2) }
        XCTAssertEqual(try format(B.mp4a(short)).dataFormat?.framesPerPacket, 960)
        let ld = asc { w in w.put(23, 5); w.put(3, 4); w.put(1, 4); w.put(0, 3); w.put(0, 2) }
        XCTAssertEqual(try format(B.mp4a(ld)).dataFormat?.formatID, .mpeg4AAC_LD)
        XCTAssertEqual(try format(B.mp4a(ld)).dataFormat?.framesPerPacket, 512)
        let odd = asc { w in w.put(2, 5); w.put(15, 4); w.put(37_800, 24); w.put(1, 4); w.put(0, 3) }
        XCTAssertEqual(try format(B.mp4a(odd)).dataFormat?.sampleRate, 37_800)

        // Channel configuration 0: a program_config_element with a front SCE and CPE, a back CPE
        // and an LFE gives 6 channels.
        let pce = asc { w in
            w.put(2, 5); w.put(4, 4); w.put(0, 4); w.put(0, 3)
            w.put(0, 4); w.put(1, 2); w.put(4, 4)  // tag, object type, rate index
            w.put(2, 4); w.put(0, 4); w.put(1, 4); w.put(1, 2); w.put(0, 3); w.put(0, 4)  // front 2, side 0, back 1, lfe 1
            w.put(0, 1); w.put(0, 1); w.put(0, 1)  // no mixdowns
            w.put(0, 5); w.put(1 << 4 | 1, 5)  // front: SCE 0, CPE 1
            w.put(1 << 4 | 2, 5)  // back: CPE 2
            w.put(0, 4)  // LFE 0
            w.put(0, (8 - w.used % 8) % 8); w.put(0, 8)  // byte align, no comment
        }
        p = try format(B.mp4a(pce, channels: 6))
        XCTAssertEqual(p.dataFormat?.channelsPerFrame, 6)

        // MP3 in MP4 (object type 0x6B); unsupported object types and sample entries.
        p = try format(B.audioEntry("mp4a", B.esds([], objectType: 0x6B)))
        XCTAssertEqual(p.dataFormat?.formatID, .mpegLayer3)
        XCTAssertEqual(p.dataFormat?.framesPerPacket, 1152)
        XCTAssertNil(p.magicCookie)
        XCTAssertEqual(error(B.file(.init(entry: B.audioEntry("mp4a", B.esds([1, 2], objectType: 0xDD))))).map(\.code), .unsupportedDataFormat)
        XCTAssertEqual(error(B.file(.init(entry: B.audioEntry("mp4a")))).map(\.code), .unsupportedDataFormat, "mp4a without esds")
        XCTAssertEqual(error(B.file(.init(entry: B.audioEntry("xyzw")))).map(\.code), .unsupportedDataFormat)
        XCTAssertEqual(error(B.file(.init(entry: B.audioEntry("enca")))).map(\.code), .unsupportedDataFormat, "encrypted")
        XCTAssertEqual(error(B.file(.init(entry: B.mp4a([0x12])))).map(\.code), .unsupportedDataFormat, "a cut AudioSpecificConfig")
    }

    func testAMRAndAC3Entries() throws {
        var t = B.Track()
        t.entry = B.audioEntry("samr", channels: 1, rate: 8000, B.box("damr", B.type("FFMP"), [0], B.u16(0x81FF), [0], [1]))
        t.timescale = 8000
        t.delta = 160
        var p = try props(B.file(t, brand: "3gp4"))
        XCTAssertEqual(p.fileType, .threeGP)
        XCTAssertEqual(p.dataFormat, StreamDescription(sampleRate: 8000, formatID: .amr, bytesPerPacket: 0, framesPerPacket: 160,
                                                       bytesPerFrame: 0, channelsPerFrame: 1, bitsPerChannel: 0))
        XCTAssertEqual(p.packetTableInfo, PacketTableInfo(numberValidFrames: 7 * 160))
        t.entry = B.audioEntry("sawb", channels: 1, rate: 16000)
        t.timescale = 16000
        t.delta = 320
        p = try props(B.file(t, brand: "3g2a"))
        XCTAssertEqual(p.fileType, .threeGP2)
        XCTAssertEqual(p.dataFormat?.formatID, .amrWB)
        XCTAssertEqual(p.dataFormat?.sampleRate, 16000)
        XCTAssertEqual(p.dataFormat?.framesPerPacket, 320)
        // AC-3 5.1 at 48 kHz: dac3 fscod 0, acmod 7, lfeon 1, 448 kbit/s.
        var w = BitWriter()
        w.put(0, 2); w.put(8, 5); w.put(0, 3); w.put(7, 3); w.put(1, 1); w.put(15, 5); w.put(0, 5)
        t.entry = B.audioEntry("ac-3", channels: 6, rate: 48000, B.box("dac3", w.bytes))
        t.timescale = 48000
        t.delta = 1536
        p = try props(B.file(t, brand: "isom"))
        XCTAssertEqual(p.fileType, .mpeg4)
        XCTAssertEqual(p.dataFormat?.formatID, .ac3)
        XCTAssertEqual(p.dataFormat?.channelsPerFrame, 6)
        XCTAssertEqual(p.dataFormat?.sampleRate, 48000)
    }

    // MARK: Gapless

    func testITunSMPBOverridesTheEditList() throws {
        var t = B.Track()
        t.sizes = Array(repeating: 9, count: 10)
        t.edits = [(duration: 200, mediaTime: 1024)]
        let smpb = " 00000000 00000840 000001C0 0000000000001E00 00000000 00000000 00000000 00000000"
        let freeform = B.box("----", B.full("mean", Array("com.apple.iTunes".utf8)), B.full("name", Array("iTunSMPB".utf8)),
                             B.box("data", B.u32(1), B.u32(0), Array(smpb.utf8)))
        let p = try props(B.file(t, udta: B.ilst(freeform)))
        XCTAssertEqual(p.packetTableInfo, PacketTableInfo(numberValidFrames: 0x1E00, primingFrames: 0x840, remainderFrames: 0x1C0))
        // Without it, the edit list: priming 1024, and 200 ms of the media that follows.
        let q = try props(B.file(t))
        XCTAssertEqual(q.packetTableInfo, PacketTableInfo(numberValidFrames: 8820, primingFrames: 1024, remainderFrames: 10240 - 1024 - 8820))
        // No edit list: all the media is valid; the codec's frames beyond the last delta are the remainder.
        t.edits = []
        t.lastDelta = 100
        XCTAssertEqual(try props(B.file(t)).packetTableInfo, PacketTableInfo(numberValidFrames: 9 * 1024 + 100, primingFrames: 0, remainderFrames: 924))
        // An empty edit first (a delay) is not priming.
        t.edits = [(duration: 50, mediaTime: -1), (duration: 100, mediaTime: 0)]
        XCTAssertEqual(try props(B.file(t)).packetTableInfo?.primingFrames, 0)
    }

    // MARK: Tags

    func testTagTypes() throws {
        let items = B.ilst(
            B.item("©nam", Array("Title".utf8)),
            B.item("©ART", type: 2, [0, 0x41, 0x04, 0x10]),  // UTF-16BE "AА"
            B.item("gnre", type: 0, B.u16(18)),  // ID3v1 genre 17 + 1: Rock
            B.item("trkn", type: 0, [0, 0, 0, 7, 0, 0, 0, 0]),
            B.item("tmpo", type: 21, B.u16(120)),
            B.item("©day", Array("1999-05-01".utf8)),
            B.item("covr", type: 13, [0xFF, 0xD8, 0xFF, 0xE0]),
            B.item("covr", type: 14, [0x89, 0x50]),
            B.item("xxxx", Array("ignored".utf8)))
        let p = try props(B.file(B.Track(), udta: items))
        XCTAssertEqual(p.info, InfoDictionary([("title", "Title"), ("artist", "AА"), ("genre", "Rock"), ("track number", "7"),
                                               ("tempo", "120"), ("year", "1999-05-01")]))
        XCTAssertEqual(p.albumArtwork, [0xFF, 0xD8, 0xFF, 0xE0], "the first cover")
        // A damaged ilst loses the tags, not the file.
        var broken = items
        broken.replaceSubrange(broken.count - 20..<broken.count - 16, with: B.u32(0xFFFF))
        XCTAssertEqual(try props(B.file(B.Track(), udta: broken)).dataFormat?.formatID, .mpeg4AAC)
    }

    // MARK: Box sizes

    func testLargeSizesSizeZeroAndCo64() throws {
        var t = B.Track()
        t.sizes = [5, 300, 7, 1, 64, 2]
        t.co64 = true
        try assertBothPaths(B.file(t, mdat: .large), t)
        try assertBothPaths(B.file(t, mdat: .toEnd), t)
        let atEnd = B.file(t, moovFirst: false, mdat: .large)
        XCTAssertEqual(MP4Kit.stream(atEnd).error?.code, .notOptimized)
        try assertBothPaths(atEnd, t, fetcher: true)
        // A moov with a 64-bit size, after the data and before it.
        try assertBothPaths(B.file(t, moovFirst: false, largeMoov: true), t, fetcher: true)
        try assertBothPaths(B.file(t, largeMoov: true), t)
        // A box of size 0 other than mdat runs to the end too: a trailing 'free'.
        try assertBothPaths(B.file(t) + B.u32(0) + B.type("free") + [1, 2, 3], t)
    }

    // MARK: Random access restrictions

    /// Several sample descriptions: the same one repeated is read; another format within the
    /// track is refused with 'fmt?' rather than misread.
    func testSeveralSampleDescriptions() throws {
        var t = B.Track()
        t.moreEntries = [t.entry]
        t.laterChunksDescription = 2
        XCTAssertEqual(try props(B.file(t)).audioDataPacketCount, 7)
        t.moreEntries = [MP4Build.mp4a([0x11, 0x90])]  // AAC LC at 48 kHz, mono
        let error = MP4Kit.error { () throws(AudioError) in _ = try AudioFile(source: MemorySource(B.file(t))) }
        XCTAssertEqual(error?.code, .unsupportedDataFormat)
        XCTAssertEqual(error?.message.contains("chunk 2"), true, error?.message ?? "")
        t.laterChunksDescription = 1
        XCTAssertEqual(try props(B.file(t)).audioDataPacketCount, 7, "an unused second entry changes nothing")
    }

    func testSyncSamplesAndTimestamps() throws {
        var t = B.Track()
        t.sizes = [4, 4, 4, 4, 4]
        t.stss = [1, 4]
        t.ctts = [(count: 5, offset: 512)]
        let bytes = B.file(t)
        let p = try props(bytes)
        XCTAssertEqual(p.independentPackets, [0, 3])
        XCTAssertEqual(p.packetTimestamps, [512, 1536, 2560, 3584, 4608])
        let file = try AudioFile(source: MemorySource(bytes))
        XCTAssertEqual(try file.property(.restrictsRandomAccess).uint32(), 1)
        var stream: AudioFileStream!
        stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _, _ in })
        try stream.parse(bytes)
        XCTAssertEqual(try stream.property(.restrictsRandomAccess).uint32(), 1)
        XCTAssertEqual(try stream.previousIndependentPacket(2), 0)
        XCTAssertEqual(try stream.previousIndependentPacket(3), 3)
        XCTAssertEqual(try stream.nextIndependentPacket(0), 3)
        XCTAssertEqual(MP4Kit.error { () throws(AudioError) in _ = try stream.nextIndependentPacket(3) }?.code, .invalidPacketOffset)
        // Without stss, every packet is a sync sample.
        t.stss = nil
        let all = try AudioFile(source: MemorySource(B.file(t)))
        XCTAssertEqual(try all.property(.restrictsRandomAccess).uint32(), 0)
    }

    // MARK: Fragments

    /// A hand-made fragmented file: two fragments, each with a traf of another track first,
    /// implicit and explicit bases, tfdt, a non-sync sample, and composition offsets.
    func testHandMadeFragments() throws {
        let ftyp = B.box("ftyp", B.type("iso6"), B.u32(0), B.type("iso6"))
        var t = B.Track()
        t.sizes = []
        let moov = B.box("moov", B.full("mvhd", B.u32(0), B.u32(0), B.u32(1000), B.u32(0), [UInt8](repeating: 0, count: 80)),
                         B.trak(t, id: 2, dataStart: 0),
                         B.box("mvex", B.full("trex", B.u32(2), B.u32(1), B.u32(1024), B.u32(0), B.u32(0))))
        var file = ftyp + moov
        var expectedSizes: [Int] = []
        var expectedData: [UInt8] = []
        var sample = 0
        for fragment in 0..<2 {
            let sizes = fragment == 0 ? [11, 12, 13] : [21, 22]
            let other = [UInt8](repeating: 0xEE, count: 6)  // track 9's data comes first in mdat
            // traf for track 9 (ignored): tfhd with default size 6, one trun of one sample.
            let traf9 = B.box("traf", B.full("tfhd", flags: 0x10, B.u32(9), B.u32(6)),
                              B.full("trun", flags: 0x1, B.u32(1), B.u32(0)))
            func traf2(_ dataOffset: UInt32) -> [UInt8] {
                let flags: UInt32 = 0x1 | 0x4 | 0x200 | 0x800
                var trun = B.u32(UInt32(sizes.count)) + B.u32(dataOffset) + B.u32(0x10000)  // first sample: not a sync sample
                for s in sizes { trun += B.u32(UInt32(s)) + B.u32(100) }
                return B.box("traf", B.full("tfhd", flags: 0x20000, B.u32(2)),
                             B.full("tfdt", version: 1, B.u64(UInt64(fragment * 3 * 1024))),
                             B.full("trun", flags: flags, trun))
            }
            let moofSize = B.box("moof", B.full("mfhd", B.u32(UInt32(fragment + 1))), traf9, traf2(0)).count
            // Track 9's base is the moof (the first traf); its data starts right after the mdat header.
            let traf9Fixed = B.box("traf", B.full("tfhd", flags: 0x10, B.u32(9), B.u32(6)),
                                   B.full("trun", flags: 0x1, B.u32(1), B.u32(UInt32(moofSize + 8))))
            let moof = B.box("moof", B.full("mfhd", B.u32(UInt32(fragment + 1))), traf9Fixed, traf2(UInt32(moofSize + 8 + other.count)))
            var data = other
            for s in sizes { data += [UInt8](repeating: UInt8(sample), count: s); expectedSizes.append(s); sample += 1 }
            expectedData += data[other.count...]
            file += moof + B.box("mdat", data)
        }
        let f = try AudioFile(source: MemorySource(file))
        let p = try f.properties
        XCTAssertEqual(p.packetTable?.map { Int($0.dataByteSize) }, expectedSizes)
        XCTAssertEqual(p.independentPackets, [1, 2, 4])
        XCTAssertEqual(p.packetTimestamps, [100, 1124, 2148, 3172, 4196])
        XCTAssertEqual(try MP4Kit.filePackets(f).data, expectedData)
        XCTAssertEqual(p.packetTableInfo, PacketTableInfo(numberValidFrames: 5 * 1024))
        for chunk in [1, 5, 100_000] {
            let s = MP4Kit.stream(file, chunk: chunk)
            XCTAssertNil(s.error)
            XCTAssertEqual(s.packets.data, expectedData, "chunks of \(chunk)")
            XCTAssertEqual(s.packets.sizes, expectedSizes)
        }
        XCTAssertNil(dripFeedMismatch(file))
    }

    // MARK: Probe and registry

    func testRegistry() throws {
        func probe(_ brand: String) -> ProbeResult {
            FormatRegistry.probe(B.box("ftyp", B.type(brand), B.u32(0), B.type(brand)) + [UInt8](repeating: 0, count: 40))
        }
        XCTAssertEqual(probe("M4A "), .match(.m4a))
        XCTAssertEqual(probe("M4B "), .match(.m4b))
        XCTAssertEqual(probe("M4P "), .match(.m4a))
        XCTAssertEqual(probe("3gp4"), .match(.threeGP))
        XCTAssertEqual(probe("3gp6"), .match(.threeGP))
        XCTAssertEqual(probe("3g2a"), .match(.threeGP2))
        XCTAssertEqual(probe("isom"), .match(.mpeg4))
        XCTAssertEqual(probe("mp42"), .match(.mpeg4))
        XCTAssertEqual(probe("dash"), .match(.mpeg4))
        XCTAssertEqual(FormatRegistry.probe(Array("\0\0\0\u{18}ft".utf8)), .needMore)
        XCTAssertEqual(FormatRegistry.types(forExtension: "m4a"), [.m4a])
        XCTAssertEqual(FormatRegistry.types(forExtension: "M4B"), [.m4b])
        XCTAssertEqual(FormatRegistry.types(forExtension: "mp4"), [.mpeg4])
        XCTAssertEqual(FormatRegistry.types(forExtension: "3gp"), [.threeGP])
        XCTAssertEqual(FormatRegistry.types(forExtension: "3g2"), [.threeGP2])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/mp4"), [.mpeg4])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/x-m4a"), [.m4a])
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/3gpp").first, .threeGP, "before AMR, which shares the MIME type")
        XCTAssertEqual(FormatRegistry.types(forMIMEType: "audio/3gpp2"), [.threeGP2])
        XCTAssertEqual([AudioFileTypeID.mpeg4, .m4a, .m4b, .threeGP, .threeGP2].map { FormatRegistry.info(for: $0)?.name },
                       ["MPEG4", "M4A", "M4B", "3GPP", "3GPP2"])
        for name in MP4Kit.fixtures {
            let head = Array(try MP4Kit.bytes(name).prefix(FormatRegistry.probeSize))
            let expected = (try MP4Kit.golden(name)["expected"] as! [String: String])["fileType"]!
            XCTAssertEqual(FormatRegistry.probe(head), .match(AudioFileTypeID(stringLiteral: expected)), name)
        }
        // A file without ftyp (older QuickTime) has no magic; it is read when its extension
        // or a hint says MP4, and keeps the type it was opened as.
        var t = B.Track()
        t.sizes = [3, 3]
        let noFtyp = B.file(t, brand: nil)
        XCTAssertEqual(FormatRegistry.probe(Array(noFtyp.prefix(64))), .noMatch)
        let path = makeTemporaryDirectory() + "/noftyp.m4a"
        try writeWholeFile(path, noFtyp)
        XCTAssertEqual(try AudioFile(path: path).fileType, .m4a)
        XCTAssertEqual(try AudioFile(path: path).audioDataPacketCount, 2)
        XCTAssertEqual(try AudioFile(source: MemorySource(noFtyp), fileTypeHint: .mpeg4).fileType, .mpeg4)
        // With a hint, bytes that are not boxes are refused.
        let junk = MP4Kit.error { () throws(AudioError) in
            _ = try AudioFile(source: MemorySource(Array("not an mp4 file at all".utf8)), fileTypeHint: .m4a)
        }
        XCTAssertEqual(junk?.code, .unsupportedFileType)
    }

    // MARK: Damaged and hostile files

    func testDamagedFixtures() throws {
        for name in ["aac_faststart.m4a", "aac_moov_end.m4a", "aac_frag.mp4", "aac_dash.mp4", "alac.m4a", "chapters.m4b", "two_tracks.mp4"] {
            let (errors, problems) = exerciseDamaged(try MP4Kit.bytes(name))
            XCTAssertEqual(problems, [], name)
            XCTAssertFalse(errors.isEmpty, name)
        }
    }

    /// A file cut inside its audio: AudioFile keeps the samples that are wholly there, and a
    /// stream hands out the same and ends without an error.
    func testTruncatedAudio() throws {
        let bytes = try MP4Kit.bytes("aac_faststart.m4a")
        let full = try AudioFile(source: MemorySource(bytes))
        let table = try full.properties.packetTable!
        let cutAt = Int(try full.dataOffset + table[20].startOffset + 5)
        let cut = Array(bytes.prefix(cutAt))
        let file = try AudioFile(source: MemorySource(cut))
        XCTAssertEqual(try file.audioDataPacketCount, 20)
        let s = MP4Kit.stream(cut, chunk: 100)
        XCTAssertNil(s.error)
        XCTAssertEqual(s.packets, try MP4Kit.filePackets(file))
        XCTAssertEqual(file.packetTableInfoOrNil?.totalFrames, 20 * 1024)
    }

    /// Boxes that claim huge sizes or counts give a clean error before anything is allocated.
    func testHugeClaims() throws {
        let before = maxRSS()
        let good = B.file(B.Track())
        func replacing(_ needle: String, after skip: Int, with value: [UInt8]) -> [UInt8] {
            replacing(needle, after: skip, with: value, in: good)
        }
        func replacing(_ needle: String, after skip: Int, with value: [UInt8], in bytes: [UInt8]) -> [UInt8] {
            var b = bytes
            let n = Array(needle.utf8)
            let i = (0...(b.count - n.count)).first { Array(b[$0..<$0 + n.count]) == n }!
            b.replaceSubrange((i + skip)..<(i + skip + value.count), with: value)
            return b
        }
        // The stream must fail too, except where the claim only makes samples point past the
        // end of the data (a stream then ends where the data does).
        let cases: [(String, [UInt8], AudioError.Code)] = [
            ("moov of 2 GiB", replacing("moov", after: -4, with: B.u32(0x7FFF_FFF0)), .invalidFile),
            ("moov largesize 2^40", replacing("moov", after: -4, with: B.u32(1) + B.type("moov") + B.u64(1 << 40)), .invalidFile),
            ("largesize beyond 2^60", replacing("moov", after: -4, with: B.u32(1) + B.type("moov") + B.u64(UInt64.max)), .invalidChunk),
            ("box smaller than its header", replacing("moov", after: -4, with: B.u32(4)), .invalidChunk),
            ("ftyp of 1 GiB", replacing("ftyp", after: -4, with: B.u32(1 << 30)), .invalidFile),
            ("stsz counts", replacing("stsz", after: 12, with: B.u32(0xFFFF_FFFF)), .invalidChunk),
            ("stsz constant size", replacing("stsz", after: 8, with: B.u32(1) + B.u32(0xFFFF_FFFF)), .invalidFile),
            ("stsz constant size, in the limit but not the file", replacing("stsz", after: 8, with: B.u32(100) + B.u32(1 << 20)), .invalidChunk),
            ("stco count", replacing("stco", after: 8, with: B.u32(0xFFFF_FFFF)), .invalidChunk),
            ("stsc count", replacing("stsc", after: 8, with: B.u32(0x1000_0000)), .invalidChunk),
            ("stts count", replacing("stts", after: 8, with: B.u32(0x1000_0000)), .invalidChunk),
            ("stsd without entries", replacing("stsd", after: 8, with: B.u32(0)), .invalidChunk),
            ("child box overruns moov", replacing("trak", after: -4, with: B.u32(0x00FF_FFFF)), .invalidChunk),
            ("mdhd timescale 0", replacing("mdhd", after: 16, with: B.u32(0)), .invalidChunk),
        ]
        for (name, bytes, code) in cases {
            let e = error(bytes)
            XCTAssertEqual(e?.code, code, "\(name): \(e.map { "\($0)" } ?? "no error")")
            if name.contains("GiB") || name.contains("2^40") || name.contains("constant size") && code == .invalidFile {
                XCTAssertEqual(e?.category, .limit, name)
            }
            let s = feed(bytes, pattern: .randomChunks(seed: 3, maximum: 100))
            if !name.contains("not the file") { XCTAssertNotNil(s.error, name) }
        }
        // The elst claims more edits than it holds.
        var t = B.Track()
        t.edits = [(duration: 10, mediaTime: 0)]
        XCTAssertEqual(error(replacing("elst", after: 8, with: B.u32(0x0FFF_FFFF), in: B.file(t)))?.code, .invalidChunk)
        // A trun that claims 2^32 - 1 samples, with and without per-sample fields.
        var frag = try MP4Kit.bytes("aac_dash.mp4")
        frag = replacing("trun", after: 8, with: B.u32(0xFFFF_FFFF), in: frag)
        XCTAssertEqual(error(frag)?.code, .invalidChunk)
        XCTAssertNotNil(feed(frag, pattern: .allAtOnce).error)
        var bare = try MP4Kit.bytes("aac_dash.mp4")
        bare = replacing("trun", after: 4, with: [0, 0, 0, 0] + B.u32(0xFFFF_FFFF), in: bare)
        XCTAssertEqual(error(bare)?.category, .limit)
        // A moof of 1 GiB.
        XCTAssertEqual(error(replacing("moof", after: -4, with: B.u32(1 << 30), in: try MP4Kit.bytes("aac_dash.mp4")))?.category, .limit)
        // Nothing above allocated anything near what was claimed.
        XCTAssertLessThan(maxRSS() - before, 200 << 20, "peak memory grew by \(maxRSS() - before) bytes")
    }

    /// Chunks that go back in the file: refused (a run of packets is read as one byte range,
    /// and a stream cannot go back); found by fuzzing, where AudioFile's range trapped.
    func testSamplesOutOfFileOrder() throws {
        var t = B.Track()
        t.sizes = [3, 3, 3, 3, 3, 3]
        var bytes = B.file(t)
        let stco = (0...(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == Array("stco".utf8) }!
        let first = Array(bytes[(stco + 12)..<(stco + 16)]), second = Array(bytes[(stco + 16)..<(stco + 20)])
        bytes.replaceSubrange((stco + 12)..<(stco + 20), with: second + first)
        XCTAssertEqual(error(bytes)?.code, .invalidChunk)
        XCTAssertEqual(feed(bytes, pattern: .allAtOnce).error?.code, .invalidChunk)
    }

    /// Not MP4 at all, or MP4 without audio.
    func testNotAudio() throws {
        var t = B.Track()
        t.handler = "vide"
        XCTAssertEqual(error(B.file(t))?.code, .unsupportedDataFormat)
        let onlyFtyp = B.box("ftyp", B.type("M4A "), B.u32(0))
        XCTAssertEqual(error(onlyFtyp)?.code, .invalidFile)
        XCTAssertEqual(feed(onlyFtyp, pattern: .allAtOnce).error?.code, .invalidFile)
    }

    func maxRSS() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}

extension AudioFile {
    fileprivate var packetTableInfoOrNil: PacketTableInfo? { (try? properties)?.packetTableInfo }
}

import Foundation
import Tonearm
import TonearmTestSupport
import XCTest

/// The IETF FLAC decoder testbench in ../shared/corpus/flac-test-files.
final class FLACCorpusTests: XCTestCase {
    typealias Kit = FLACKit

    static let corpus = packageRoot + "/../shared/corpus/flac-test-files"

    func files(_ group: String) throws -> [String] {
        let dir = try requireCorpus("flac-test-files") + "/" + group
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else {
            throw skipOrFail("the FLAC test corpus has no \(dir)")
        }
        return names.filter { $0.hasSuffix(".flac") }.sorted().map { dir + "/" + $0 }
    }

    /// Every file of `subset` and `uncommon` parses on both paths with the same packets;
    /// the count is ffprobe's where ffprobe accepts the file, and the frames add up to
    /// STREAMINFO's total where it is set.
    func testSubsetAndUncommonParse() throws {
        var summary: [String] = []
        for group in ["subset", "uncommon"] {
            var matched = 0, ownOnly = 0
            let paths = try files(group)
            XCTAssertFalse(paths.isEmpty)
            for path in paths {
                let name = group + "/" + Kit.name(path)
                let file = try AudioFile(path: path)
                let p = try file.properties
                XCTAssertEqual(p.fileType, .flac, name)
                let table = try XCTUnwrap(p.packetTable, name)
                let dataOffset = try XCTUnwrap(p.dataOffset, name)
                // Both paths agree: the stream's packets have the table's sizes and frame
                // counts, and begin and end with the bytes at the table's offsets.
                let bytes = try readWholeFile(path)
                let (sizes, frames, mismatches, error) = streamPackets(bytes, table: table, dataOffset: dataOffset)
                XCTAssertNil(error, name)
                XCTAssertEqual(sizes, table.map { Int($0.dataByteSize) }, name)
                XCTAssertEqual(frames, table.map(\.variableFramesInPacket), name)
                XCTAssertEqual(mismatches, 0, name)
                // ffprobe's packets: from the recorded oracle (make-flac.sh), else live.
                if let entry = FLACCorpusTests.oracle[name] {
                    if entry.accepted {
                        XCTAssertEqual(table.count, entry.packets, name)
                        var lines = ""
                        for d in table { lines += "\(d.dataByteSize),\(dataOffset + d.startOffset)\n" }
                        XCTAssertEqual(FLACCorpusTests.crc32(Array(lines.utf8)), entry.crc32, "\(name): every packet's size and offset")
                        matched += 1
                    } else {
                        ownOnly += 1
                    }
                } else if let count = try Kit.ffprobeCount(path) {
                    XCTAssertEqual(table.count, count, name)
                    matched += 1
                } else {
                    ownOnly += 1
                }
                // The frames' samples against STREAMINFO's total.
                let info = try XCTUnwrap(p.packetTableInfo, name)
                if let total = streamInfoTotal(bytes), total > 0 {
                    XCTAssertEqual(info.numberValidFrames, total, name)
                }
                if let fpp = p.framesPerPacket {
                    XCTAssertEqual(info.totalFrames, fpp * Int64(table.count), name)
                    XCTAssertLessThan(Int64(info.remainderFrames), fpp, name)
                } else {
                    XCTAssertEqual(info.numberValidFrames, table.reduce(0) { $0 + Int64($1.variableFramesInPacket) }, name)
                }
            }
            summary.append("\(group): \(paths.count) files, \(matched) with ffprobe's packets, \(ownOnly) by their own frames")
        }
        print("FLAC corpus: " + summary.joined(separator: "; "))
    }

    /// Known values of a few corpus files.
    func testCorpusSpecifics() throws {
        let dir = try requireCorpus("flac-test-files")
        // Variable block size (flake): per-packet counts.
        let flake = try AudioFile(path: dir + "/subset/24 - variable blocksize file created with flake revision 264.flac")
        XCTAssertEqual(try flake.dataFormat.framesPerPacket, 0)
        XCTAssertEqual(try flake.audioDataPacketCount, 404)
        XCTAssertEqual(try flake.properties.packetTable?.first?.variableFramesInPacket, 2048)
        XCTAssertEqual(try flake.packetTableInfo, PacketTableInfo(numberValidFrames: 1_102_556))
        // No marker: the format comes from the first frame header; 163 frames (ffprobe agrees).
        let bare = try AudioFile(path: dir + "/uncommon/10 - file starting at frame header.flac")
        XCTAssertEqual(try bare.dataOffset, 0)
        XCTAssertEqual(try bare.audioDataPacketCount, 163)
        XCTAssertEqual(try bare.dataFormat.sampleRate, 44100)
        // Junk first: the first of 139 frames is at byte 895 (ffprobe counts the junk as a 140th packet).
        let junk = try AudioFile(path: dir + "/uncommon/11 - file starting with unparsable data.flac")
        XCTAssertEqual(try junk.dataOffset, 895)
        XCTAssertEqual(try junk.audioDataPacketCount, 139)
        XCTAssertEqual(try junk.packetTableInfo?.numberValidFrames, 568_394)
        // 32 bits per sample: Apple's flag 4.
        let b32 = try AudioFile(path: dir + "/uncommon/05 - 32bps audio.flac")
        XCTAssertEqual(try b32.dataFormat.formatFlags.rawValue, 4)
        XCTAssertEqual(try b32.audioDataPacketCount, 126)
        // 65535-sample blocks.
        XCTAssertEqual(try AudioFile(path: dir + "/uncommon/08 - blocksize 65535.flac").dataFormat.framesPerPacket, 65535)
        // 1000 repeated comments are all read; a picture becomes the artwork.
        let many = try AudioFile(path: dir + "/subset/54 - 1000x repeating VORBISCOMMENT.flac")
        XCTAssertFalse(try many.infoDictionary.isEmpty)
        let jpeg = try AudioFile(path: dir + "/subset/56 - JPG PICTURE.flac").property(.albumArtwork).data()
        XCTAssertEqual(Array(jpeg.prefix(3)), [0xFF, 0xD8, 0xFF])
    }

    /// Every file of `faulty` is refused with a clean error or read as its README allows.
    func testFaultyFiles() throws {
        let paths = try files("faulty")
        XCTAssertEqual(paths.count, 11)
        // nil: read; otherwise the code and a word of the message.
        let expected: [String: (AudioError.Code, String)?] = [
            "01": (.invalidFile, "maximum block size"),  // a 16384-sample frame, STREAMINFO says 4096
            "02": nil,  // STREAMINFO's maximum frame size is wrong: the real one is announced
            "03": (.invalidFile, "bits per sample"),  // 16-bit frames, STREAMINFO says 24
            "04": (.invalidFile, "channels"),  // 1 channel, STREAMINFO says 5
            "05": nil,  // STREAMINFO's total is wrong: the frames give 109487
            "06": (.invalidFile, "STREAMINFO"),  // no STREAMINFO
            "07": (.invalidFile, "STREAMINFO"),  // STREAMINFO not first
            "08": (.invalidFile, "block size"),  // 65536-sample blocks: STREAMINFO cannot say so (it says 0)
            "09": (.invalidFile, "block size"),  // 1-sample blocks
            "10": nil,  // a comment block that claims 10 fields but holds 1: dropped
            "11": (.invalidFile, "127"),  // a block length that runs into garbage (type 127)
        ]
        for path in paths {
            let name = Kit.name(path)
            let key = String(name.prefix(2))
            let bytes = try readWholeFile(path)
            let fileResult = Result<AudioFile, AudioError>(catching: { () throws(AudioError) in try AudioFile(path: path) })
            let stream = feed(bytes, pattern: .randomChunks(seed: 8, maximum: 5000))
            switch expected[key] {
            case .some(.some(let (code, word))):
                guard case .failure(let e) = fileResult else { XCTFail("\(name) was read"); continue }
                XCTAssertEqual(e.code, code, name)
                XCTAssertTrue(e.message.contains(word), "\(name): \(e.message)")
                XCTAssertEqual(stream.error?.code, code, name)
                XCTAssertTrue(stream.packetSizes.isEmpty, name)
            default:
                let file = try fileResult.get()
                XCTAssertNil(stream.error, name)
                XCTAssertEqual(stream.packetSizes, try Kit.filePackets(file, batch: 100).sizes, name)
            }
        }
        let dir = FLACCorpusTests.corpus + "/faulty/"
        // 02: the largest frame is 8846 bytes, not STREAMINFO's 654; the stream says so before handing it out.
        let f02 = dir + "02 - wrong maximum framesize.flac"
        XCTAssertEqual(try AudioFile(path: f02).maximumPacketSize, 8846)
        let r02 = feed(try readWholeFile(f02), pattern: .allAtOnce)
        XCTAssertGreaterThan(r02.notifications.filter { $0 == .maximumPacketSize }.count, 1)
        XCTAssertEqual(r02.packetSizes.count, 43)
        // 05: the frames decide.
        let f05 = try AudioFile(path: dir + "05 - wrong total number of samples.flac")
        XCTAssertEqual(try f05.packetTableInfo, PacketTableInfo(numberValidFrames: 109_487, remainderFrames: 27 * 4096 - 109_487))
        // 10: 30 frames and no tags.
        let f10 = try AudioFile(path: dir + "10 - invalid vorbis comment metadata block.flac")
        XCTAssertEqual(try f10.audioDataPacketCount, 30)
        XCTAssertTrue(try f10.infoDictionary.isEmpty)
    }

    /// ffprobe's packets for the corpus, recorded by make-flac.sh.
    struct OracleEntry { var accepted: Bool; var packets: Int; var crc32: UInt32 }
    static let oracle: [String: OracleEntry] = {
        guard let data = FileManager.default.contents(atPath: fixturesDirectory + "/flac/corpus-ffprobe.json"),
              let obj = (try? JSONSerialization.jsonObject(with: data)) as? [String: [String: Any]] else { return [:] }
        return obj.mapValues { e in
            OracleEntry(accepted: e["accepted"] as? Bool ?? false, packets: (e["packets"] as? NSNumber)?.intValue ?? -1,
                        crc32: (e["sizeOffsetCRC32"] as? NSNumber)?.uint32Value ?? 0)
        }
    }()

    /// zlib's CRC-32.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            table[i] = c
        }
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    /// Feeds a file to an AudioFileStream in 64 KiB pieces, recording each packet's size and
    /// frames, and counting packets whose first and last 4 bytes differ from the file's at
    /// the table's offsets (a light check of the bytes, quick in debug builds).
    private func streamPackets(_ bytes: [UInt8], table: [PacketDescription], dataOffset: Int64)
        -> (sizes: [Int], frames: [UInt32], mismatches: Int, error: AudioError?)
    {
        var sizes: [Int] = [], frames: [UInt32] = [], mismatches = 0
        let stream = AudioFileStream(fileTypeHint: .flac, propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
            for d in descriptions ?? [] {
                let i = sizes.count
                sizes.append(Int(d.dataByteSize))
                frames.append(d.variableFramesInPacket)
                guard i < table.count, d.dataByteSize >= 4 else { mismatches += 1; continue }
                let at = Int(dataOffset + table[i].startOffset), n = Int(d.dataByteSize), s = Int(d.startOffset)
                for k in [0, 1, 2, 3, n - 4, n - 3, n - 2, n - 1] where data[s + k] != bytes[at + k] {
                    mismatches += 1
                    break
                }
            }
        })
        do {
            var i = 0
            while i < bytes.count {
                let n = min(1 << 16, bytes.count - i)
                try stream.parse(bytes[i..<i + n])
                i += n
            }
            try stream.parse(nil)
        } catch {
            return (sizes, frames, mismatches, error)
        }
        return (sizes, frames, mismatches, nil)
    }

    private func streamInfoTotal(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count >= 42, bytes[0..<4].elementsEqual("fLaC".utf8), bytes[4] & 0x7F == 0 else { return nil }
        var packed: UInt64 = 0
        for i in 0..<8 { packed = packed << 8 | UInt64(bytes[8 + 10 + i]) }
        return Int64(packed & 0xF_FFFF_FFFF)
    }
}

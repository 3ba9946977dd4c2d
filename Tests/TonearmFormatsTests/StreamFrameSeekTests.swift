import TonearmCore
@testable import TonearmFormats
import TonearmTestSupport
import XCTest

/// AudioFileStream.seek(toFrame:): the packets that come out after the jump begin with the
/// packet that holds the frame (tables), or shortly before it (Ogg's granule bisection through
/// the byte-range fetcher), and are the file's own from there on.
final class StreamFrameSeekTests: XCTestCase {
    func testSeekToFrame() throws {
        for name in ["mp4/aac_faststart.m4a", "flac/flac_seektable.flac", "flac/flac_variable.flac", "flac/flac_b576.flac", "ogg/opus_opusenc_stereo.opus",
                     "ogg/vorbis_oggenc_stereo.ogg", "ogg/vorbis_small_pages.ogg", "ogg/flac_flac_mono.oga"] {
            let path = fixturesDirectory + "/" + name
            let bytes = try readWholeFile(path)
            let file = try AudioFile(path: path)
            let p = try file.properties
            let count = Int(try file.audioDataPacketCount)
            let (all, allDescriptions) = try file.readPacketData(startingAt: 0, count: count)
            let packets = try XCTUnwrap(allDescriptions).map { Array(all[Int($0.startOffset)..<Int($0.startOffset + Int64($0.dataByteSize))]) }
            // Each packet's first presentation frame.
            let priming = Int64(p.packetTableInfo?.primingFrames ?? 0)
            let starts: [Int64] = try p.packetTimestamps ?? (0..<count).map { try file.frame(forPacket: Int64($0)) - priming }
            let valid = try XCTUnwrap(p.packetTableInfo).numberValidFrames
            for target in [Int64(0), 1, valid / 3, valid - 1] {
                var got: [[UInt8]] = []
                var armed = false
                let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
                    guard armed else { return }
                    for d in descriptions! { got.append(Array(data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)])) }
                })
                stream.byteRangeFetcher = { o, n throws(AudioError) in Array(bytes[Int(o)..<min(bytes.count, Int(o) + n)]) }
                stream.sourceSize = Int64(bytes.count)
                var i = 0
                while !stream.isReadyToProducePackets && i < bytes.count { try stream.parse(bytes[i..<min(bytes.count, i + 64)]); i += 64 }
                let (offset, flags) = try stream.seek(toFrame: target)
                XCTAssertTrue(flags.isEmpty, "\(name) frame \(target): exact")
                armed = true
                try stream.parse(bytes[Int(try stream.dataOffset + offset)...], flags: .discontinuity)
                try stream.parse(nil)
                let label = "\(name) frame \(target)"
                let first = count - got.count
                XCTAssertTrue(got == Array(packets[first...]), "\(label): the file's packets from \(first) on")
                let holder = try XCTUnwrap(starts.lastIndex { $0 <= target }, label)
                XCTAssertLessThanOrEqual(first, holder, label)
                if p.packetTimestamps == nil {
                    XCTAssertEqual(first, holder, "\(label): exactly the packet that holds it")
                } else {
                    XCTAssertLessThan(holder - first, 80, "\(label): within a page or two")
                }
            }
        }
    }

    /// AudioFileStream.seek(toPacket:) on a constant-bit-rate MP3 (LAME's Info frame, or no
    /// Xing frame at all) has no table, so its offset is estimated; the packets that come
    /// out after the jump must still begin with the packet it names. (Packet 5 of
    /// lame_cbr128.mp3 once gave 2115 from the Info frame's table of contents, inside packet
    /// 5, whose start is 2089, so the stream resumed at packet 6.)
    func testEstimatedMP3SeekLandsOnThePacketItNames() throws {
        for name in ["mpeg/lame_cbr128.mp3", "mpeg/lame_no_tag.mp3", "mpeg/ffmpeg_no_xing.mp3", "mpeg/lame_mpeg2_22k.mp3",
                     "mpeg/tagged_id3v23_ape_id3v1.mp3", "mpeg/ffmpeg_layer2.mp2"] {
            let path = fixturesDirectory + "/" + name
            let bytes = try readWholeFile(path)
            let file = try AudioFile(path: path)
            let count = Int(try file.audioDataPacketCount)
            let (all, allDescriptions) = try file.readPacketData(startingAt: 0, count: count)
            let packets = try XCTUnwrap(allDescriptions).map { Array(all[Int($0.startOffset)..<Int($0.startOffset + Int64($0.dataByteSize))]) }
            for target in Set([0, 1, 5, count / 3, count / 2, count - 2, count - 1]) where target >= 0 {
                var got: [[UInt8]] = []
                var armed = false
                let stream = AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, data, descriptions in
                    guard armed else { return }
                    for d in descriptions! { got.append(Array(data[Int(d.startOffset)..<Int(d.startOffset) + Int(d.dataByteSize)])) }
                })
                try stream.parse(bytes[0..<min(bytes.count, Int(try file.dataOffset) + 2000)])
                let (offset, flags) = try stream.seek(toPacket: Int64(target))
                XCTAssertEqual(flags, .offsetIsEstimated, "\(name) packet \(target)")
                armed = true
                try stream.parse(bytes[Int(try stream.dataOffset + offset)...], flags: .discontinuity)
                try stream.parse(nil)
                XCTAssertEqual(count - got.count, target, "\(name) packet \(target): offset \(offset)")
                XCTAssertTrue(got == Array(packets[(count - got.count)...]), "\(name) packet \(target): the file's packets")
            }
        }
    }
}

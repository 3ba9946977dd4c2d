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
}

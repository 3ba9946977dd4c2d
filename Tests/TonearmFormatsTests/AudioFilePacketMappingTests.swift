import TonearmCore
@testable import TonearmFormats
import TonearmTestSupport
import XCTest

/// AudioFile's packet, frame and byte conversions ('pkfr', 'frpk', 'pkby', 'bypk') agree with
/// the packet table it read, for formats with constant and variable frames per packet.
final class AudioFilePacketMappingTests: XCTestCase {
    func testConversionsFollowThePacketTable() throws {
        let files = ["mpeg/lame_vbr_v4.mp3", "mp4/aac_moov_end.m4a", "mp4/alac.m4a", "flac/flac_variable.flac",
                     "ogg/vorbis_small_pages.ogg", "ogg/opus_opusenc_stereo.opus", "pcm/wav_s16le_mono_16k.wav"]
        for name in files {
            let file = try AudioFile(path: fixturesDirectory + "/" + name)
            let p = try file.properties
            let count = try XCTUnwrap(p.audioDataPacketCount, name)
            // Each packet's first frame is the sum of the frames before it, and back again.
            var frame: Int64 = 0
            for packet in [Int64(0), 1, count / 2, count - 1] {
                let fpp = Int64(try XCTUnwrap(p.dataFormat).framesPerPacket)
                var framesInPacket = fpp
                if let table = p.packetTable {
                    if fpp == 0 {
                        frame = table[..<Int(packet)].reduce(0) { $0 + Int64($1.variableFramesInPacket) }
                        framesInPacket = Int64(table[Int(packet)].variableFramesInPacket)
                    } else {
                        frame = packet * fpp
                    }
                    let (byte, estimated) = try file.byte(forPacket: packet)
                    XCTAssertFalse(estimated, name)
                    if p.packetTimestamps == nil {  // Ogg answers the page a packet begins on
                        XCTAssertEqual(byte, table[Int(packet)].startOffset, "\(name) packet \(packet)")
                        let back = try file.packet(forByte: byte + 1)
                        XCTAssertEqual(back.packet, packet, name)
                        XCTAssertEqual(back.byteOffsetInPacket, 1, name)
                    }
                } else {
                    frame = packet * fpp
                    XCTAssertEqual(try file.byte(forPacket: packet).byte, packet * Int64(p.dataFormat!.bytesPerPacket), name)
                }
                XCTAssertEqual(try file.frame(forPacket: packet), frame, "\(name) packet \(packet)")
                // (A Vorbis stream's first packet decodes to no frames.)
                guard framesInPacket > 0 else { continue }
                let (back, offset) = try file.packet(forFrame: frame)
                XCTAssertEqual(back, packet, "\(name) frame \(frame)")
                XCTAssertEqual(offset, 0, name)
            }
            XCTAssertThrowsError(try file.frame(forPacket: -1)) { e in
                XCTAssertEqual((e as? AudioError)?.code, .invalidPacketOffset)
            }
            XCTAssertGreaterThanOrEqual(try file.nextIndependentPacket(0), 1, name)
            try file.close()
            XCTAssertThrowsError(try file.frame(forPacket: 0)) { e in XCTAssertEqual((e as? AudioError)?.code, .notOpen) }
        }
    }
}

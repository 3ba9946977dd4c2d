import Foundation
import Tonearm
import TonearmStreaming
import XCTest

/// RFC 8216 playlists as HLSPlaylist reads them: master and media playlists, attribute lists,
/// byte ranges, keys and their IVs, dates, and what a client must ignore.
final class HLSPlaylistTests: XCTestCase {
    private func parse(_ text: String, url: String = "http://h/a/list.m3u8") throws -> HLSPlaylist {
        try HLSPlaylist.parse(Array(text.utf8), url: url)
    }

    private func media(_ text: String, url: String = "http://h/a/list.m3u8") throws -> HLSMediaPlaylist {
        let parsed = try parse(text, url: url)
        guard case .media(let p) = parsed else {
            XCTFail("not a media playlist: \(parsed)")
            throw AudioError(.invalidFile, "not a media playlist")
        }
        return p
    }

    func testMasterPlaylistKeepsTheVariantsTonearmDecodes() throws {
        let text = """
            #EXTM3U
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="en/index.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Français",LANGUAGE="fr",URI="fr/index.m3u8",CHANNELS="2"
            #EXT-X-STREAM-INF:BANDWIDTH=140800,AVERAGE-BANDWIDTH=128000,CODECS="mp4a.40.2"
            hi/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=70400,CODECS="mp4a.40.5"
            /lo/index.m3u8?token=a,b
            #EXT-X-STREAM-INF:BANDWIDTH=448000,CODECS="ac-3"
            ac3/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aud"
            video/index.m3u8
            """
        guard case .master(let m) = try parse(text) else { return XCTFail("not a master playlist") }
        XCTAssertTrue(m.independentSegments)
        XCTAssertEqual(m.variants.count, 4)
        XCTAssertEqual(m.variants[0], HLSVariant(url: "http://h/a/hi/index.m3u8", bandwidth: 140800, averageBandwidth: 128000,
                                                 codecs: ["mp4a.40.2"], audioGroup: nil, hasVideo: false))
        XCTAssertEqual(m.variants[1].url, "http://h/lo/index.m3u8?token=a,b")
        XCTAssertEqual(m.variants[1].codecs, ["mp4a.40.5"])
        XCTAssertEqual(m.variants[3].codecs, ["avc1.64001f", "mp4a.40.2"])
        XCTAssertEqual(m.variants[3].audioGroup, "aud")
        XCTAssertTrue(m.variants[3].hasVideo)
        // AC-3 goes; the video variant goes too while audio-only ones remain.
        XCTAssertEqual(m.playableVariants.map(\.bandwidth), [140800, 70400])
        XCTAssertEqual(m.renditions.count, 2)
        XCTAssertEqual(m.renditions[1].name, "Français")
        XCTAssertEqual(m.renditions[1].channels, "2")
        XCTAssertEqual(m.audioRendition(for: m.variants[3])?.url, "http://h/a/en/index.m3u8")
        XCTAssertEqual(m.audioRendition(for: m.variants[3], language: "fr")?.url, "http://h/a/fr/index.m3u8")
        XCTAssertNil(m.audioRendition(for: m.variants[0]))
    }

    func testMediaPlaylistSegmentsAndTheirTags() throws {
        let p = try media("""
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:41
            #EXT-X-DISCONTINUITY-SEQUENCE:3
            #EXT-X-PLAYLIST-TYPE:EVENT
            #EXT-X-PROGRAM-DATE-TIME:2026-12-02T10:00:00.500Z
            #EXT-X-KEY:METHOD=AES-128,URI="k1.key",IV=0x000102030405060708090A0B0C0D0E0F
            #EXTINF:5.994,Artist - Title
            s41.ts
            #EXT-X-FUTURE-TAG:WHATEVER=1
            #EXTINF:6.006,
            s42.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/k2"
            #EXT-X-PROGRAM-DATE-TIME:2026-12-02T11:00:00+01:00
            #EXTINF:4,
            s43.ts
            #EXT-X-KEY:METHOD=NONE
            #EXT-X-GAP
            #EXTINF:6,
            s44.ts
            #EXTINF:6,
            s45.ts
            """)
        XCTAssertEqual(p.version, 6)
        XCTAssertEqual(p.targetDuration, 6)
        XCTAssertEqual(p.mediaSequence, 41)
        XCTAssertEqual(p.discontinuitySequence, 3)
        XCTAssertEqual(p.playlistType, "EVENT")
        XCTAssertFalse(p.hasEndList)
        XCTAssertTrue(p.isLive)
        XCTAssertEqual(p.segments.map(\.sequence), [41, 42, 43, 44, 45])
        XCTAssertEqual(p.segments.map(\.url), ["s41", "s42", "s43", "s44", "s45"].map { "http://h/a/\($0).ts" })
        XCTAssertEqual(p.segments.map(\.duration), [5.994, 6.006, 4, 6, 6])
        XCTAssertEqual(p.duration, 28, accuracy: 1e-9)
        XCTAssertEqual(p.segments[0].title, "Artist - Title")
        XCTAssertNil(p.segments[1].title)
        XCTAssertEqual(p.segments.map(\.discontinuity), [false, false, true, false, false])
        XCTAssertEqual(p.segments.map(\.discontinuitySequence), [3, 3, 4, 4, 4])
        XCTAssertEqual(p.segments.map(\.isGap), [false, false, false, true, false])
        // 2026-12-02T10:00:00Z is 1_796_205_600 s after 1970.
        XCTAssertEqual(p.segments[0].programDateTime!, 1_796_205_600.5, accuracy: 1e-6)
        XCTAssertEqual(p.segments[1].programDateTime!, 1_796_205_600.5 + 5.994, accuracy: 1e-6)
        XCTAssertEqual(p.segments[2].programDateTime!, 1_796_205_600, accuracy: 1e-6)
        let k1 = p.segments[0].key!
        XCTAssertEqual(k1.method, .aes128)
        XCTAssertEqual(k1.url, "http://h/a/k1.key")
        XCTAssertEqual(k1.iv(forSequence: 41), Array(0...15))
        XCTAssertEqual(p.segments[1].key, k1)
        let k2 = p.segments[2].key!
        XCTAssertEqual(k2.url, "https://keys.example/k2")
        XCTAssertNil(k2.iv)
        // Without IV, the media sequence number, big-endian, in 16 bytes.
        XCTAssertEqual(k2.iv(forSequence: 43), [UInt8](repeating: 0, count: 15) + [43])
        XCTAssertEqual(k2.iv(forSequence: 0x0102_0304_0506), [UInt8](repeating: 0, count: 10) + [1, 2, 3, 4, 5, 6])
        XCTAssertNil(p.segments[3].key)
        XCTAssertNil(p.segments[4].key)
    }

    func testByteRangesMapsAndEndList() throws {
        let p = try media("""
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0"
            #EXTINF:2.0,
            #EXT-X-BYTERANGE:1000@720
            all.mp4
            #EXTINF:2.0,
            #EXT-X-BYTERANGE:500
            all.mp4
            #EXTINF:1.5,
            #EXT-X-BYTERANGE:300
            all.mp4
            #EXT-X-ENDLIST
            """, url: "https://cdn.example/v/list.m3u8?sig=1")
        XCTAssertTrue(p.hasEndList)
        XCTAssertEqual(p.mediaSequence, 0)
        XCTAssertEqual(p.segments.map(\.byteRange), [HLSByteRange(offset: 720, length: 1000), HLSByteRange(offset: 1720, length: 500),
                                                       HLSByteRange(offset: 2220, length: 300)])
        XCTAssertEqual(p.segments[0].map, HLSMap(url: "https://cdn.example/v/init.mp4", byteRange: HLSByteRange(offset: 0, length: 720)))
        XCTAssertEqual(p.segments[2].map, p.segments[0].map)
        XCTAssertEqual(p.segments[0].url, "https://cdn.example/v/all.mp4")
    }

    func testAttributeListsWithQuotesCommasAndOddSpacing() throws {
        guard case .master(let m) = try parse("""
            #EXTM3U
            #EXT-X-STREAM-INF: BANDWIDTH=64000 ,CODECS="mp4a.40.2, mp4a.40.5",NAME="a, \\"b\\"",FRAME-RATE=25.000
            a.m3u8
            """) else { return XCTFail("not a master playlist") }
        XCTAssertEqual(m.variants.first?.bandwidth, 64000)
        XCTAssertEqual(m.variants.first?.codecs, ["mp4a.40.2", "mp4a.40.5"])
    }

    func testWhatIsRefused() throws {
        for (text, code) in [("", AudioError.Code.invalidFile), ("#EXTINF:1,\na.ts\n", .invalidFile),
                             ("#EXTM3U\n#EXTINF:1,\na.ts\n", .invalidFile)] as [(String, AudioError.Code)]
        {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual(($0 as? AudioError)?.code, code, text) }
        }
        // A master playlist whose STREAM-INF has no URI line lists no variant.
        XCTAssertThrowsError(try parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n"))
        var huge = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n"
        for i in 0...HLSPlaylist.maximumSegments { huge += "#EXTINF:1,\n\(i).ts\n" }
        XCTAssertThrowsError(try parse(huge)) { XCTAssertEqual(($0 as? AudioError)?.category, .limit) }
    }

    func testTellsHLSFromAStreamList() {
        XCTAssertTrue(HLSPlaylist.isHLS(Array("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n".utf8)))
        XCTAssertTrue(HLSPlaylist.isHLS(Array("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n".utf8)))
        XCTAssertFalse(HLSPlaylist.isHLS(Array("#EXTM3U\n#EXTINF:-1,Radio\nhttp://h/stream.mp3\n".utf8)))
        XCTAssertTrue(HLSStream.handles(url: "http://h/a/Index.M3U8?x=1"))
        XCTAssertTrue(HLSStream.handles(url: "http://h/live", mimeType: "application/vnd.apple.mpegurl"))
        XCTAssertFalse(HLSStream.handles(url: "http://h/a.m3u"))
    }

    func testCodecNames() {
        for c in ["mp4a.40.2", "MP4A.40.5", "mp4a.40.29", "mp4a.40.34", "mp4a.6B", "opus", "fLaC", "alac"] {
            XCTAssertTrue(HLSCodecs.isDecodable(c), c)
        }
        for c in ["ac-3", "ec-3", "mp4a.a5", "avc1.64001f", "mp4a.40.42", "dtsc"] {
            XCTAssertFalse(HLSCodecs.isDecodable(c), c)
        }
        XCTAssertTrue(HLSCodecs.isVideo("hvc1.1.6.L93.90"))
    }

    /// Segments without an EXT-X-MAP: MPEG-TS by its sync bytes, packed audio by the frame
    /// after its ID3 tag.
    func testSegmentTypeSniffing() {
        var ts = [UInt8](repeating: 0, count: 376)
        ts[0] = 0x47; ts[188] = 0x47
        XCTAssertEqual(HLSStream.sniff(ts), "mp2t")
        var packed = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0x05] + [UInt8](repeating: 0, count: 5) + [0xFF, 0xF1, 0x50, 0x80]
        XCTAssertEqual(HLSStream.sniff(packed), .adts)
        packed[16] = 0xFB
        XCTAssertEqual(HLSStream.sniff(packed), .mp3)
        XCTAssertEqual(HLSStream.sniff([0x0B, 0x77, 0, 0]), .ac3)
        XCTAssertNil(HLSStream.sniff([1, 2, 3]))
    }

    /// The ADTS header a recording of HLS puts before each AAC packet (AAC LC, 44.1 kHz,
    /// stereo, 100 bytes of payload), and the LC core of an HE-AAC v2 config.
    func testADTSHeaderForRecordings() {
        XCTAssertEqual(ADTSHeaderWriter(magicCookie: [0x12, 0x10])?.header(payloadLength: 100), [0xFF, 0xF1, 0x50, 0x80, 0x0D, 0x7F, 0xFC])
        // Object type 29 (PS), 24 kHz core, mono, extension 48 kHz, core type 2: LC at 24 kHz.
        let hev2 = ADTSHeaderWriter(magicCookie: [0xEB, 0x09, 0x88, 0x00])
        XCTAssertEqual(hev2?.header(payloadLength: 0)[2], 0x40 | 6 << 2)
        XCTAssertNil(ADTSHeaderWriter(magicCookie: nil))
    }
}

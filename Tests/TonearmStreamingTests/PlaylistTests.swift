import XCTest
import TonearmCore
@testable import TonearmStreaming

final class PlaylistTests: XCTestCase {
    func testPLS() throws {
        // As SHOUTcast directories serve them: CRLF, keys in any case, entries out of order.
        let text = "[playlist]\r\nnumberofentries=3\r\nFile2=http://b.example:8000/stream\r\nTitle2=Backup\r\n"
            + "File1=http://a.example/live.mp3\r\nTitle1=(#1 - 12/500) Radio Tonearm\r\nLength1=-1\r\n"
            + "file3=relative.aac\r\nlength3=180\r\nVersion=2\r\n"
        let entries = try Playlist.parse(Array(text.utf8), baseURL: "http://list.example/dir/radio.pls")
        XCTAssertEqual(entries, [
            PlaylistEntry(url: "http://a.example/live.mp3", title: "(#1 - 12/500) Radio Tonearm"),
            PlaylistEntry(url: "http://b.example:8000/stream", title: "Backup"),
            PlaylistEntry(url: "http://list.example/dir/relative.aac", duration: 180),
        ])
    }

    func testM3UAndM3U8() throws {
        let m3u = "#EXTM3U\n#EXTINF:-1,Radio One\nhttp://one.example/stream\n\n# a comment\nhttp://two.example/stream\n"
        XCTAssertEqual(try Playlist.parse(Array(m3u.utf8)), [
            PlaylistEntry(url: "http://one.example/stream", title: "Radio One"),
            PlaylistEntry(url: "http://two.example/stream"),
        ])
        // A bare list of URLs, an M3U8 with a BOM and a UTF-8 title, a Latin-1 M3U title.
        XCTAssertEqual(try Playlist.parse(Array("http://x.example/a\r\nhttp://x.example/b".utf8)).map(\.url),
                       ["http://x.example/a", "http://x.example/b"])
        let m3u8 = [0xEF, 0xBB, 0xBF] + Array("#EXTM3U\n#EXTINF:245,Кино – Звезда\n/music/zvezda.mp3\n".utf8)
        XCTAssertEqual(try Playlist.parse(m3u8, format: .m3u8, baseURL: "https://r.example/lists/a.m3u8?x=1"),
                       [PlaylistEntry(url: "https://r.example/music/zvezda.mp3", title: "Кино – Звезда", duration: 245)])
        let latin: [UInt8] = Array("#EXTINF:10,Caf".utf8) + [0xE9] + Array("\nsong.mp3\n".utf8)
        XCTAssertEqual(try Playlist.parse(latin, format: .m3u).first?.title, "Café")
    }

    func testHLSAndEmptyAreRefused() {
        let hls = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nseg0.ts\n"
        XCTAssertThrowsError(try Playlist.parse(Array(hls.utf8))) {
            XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedFileType)
            XCTAssertTrue(($0 as? AudioError)?.message.contains("HLS") ?? false)
        }
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=128000\nlow.m3u8\n"
        XCTAssertThrowsError(try Playlist.parse(Array(master.utf8)))
        XCTAssertThrowsError(try Playlist.parse(Array("#EXTM3U\n".utf8))) { XCTAssertEqual(($0 as? AudioError)?.code, .invalidFile) }
        XCTAssertThrowsError(try Playlist.parse(Array("[playlist]\nNumberOfEntries=0\n".utf8)))
    }

    func testFormatFromContentTypeOrExtension() {
        XCTAssertEqual(PlaylistFormat(contentType: "audio/x-scpls", pathExtension: nil), .pls)
        XCTAssertEqual(PlaylistFormat(contentType: "audio/x-mpegurl; charset=utf-8", pathExtension: "mp3"), .m3u)
        XCTAssertEqual(PlaylistFormat(contentType: "application/vnd.apple.mpegurl", pathExtension: nil), .m3u8)
        XCTAssertEqual(PlaylistFormat(contentType: "text/plain", pathExtension: "PLS"), .pls)
        XCTAssertNil(PlaylistFormat(contentType: "audio/mpeg", pathExtension: "mp3"))
    }

    func testResolve() {
        XCTAssertEqual(Playlist.resolve("http://a/b", against: "http://x/y/z.pls"), "http://a/b")
        XCTAssertEqual(Playlist.resolve("/abs", against: "http://x:8000/y/z.pls"), "http://x:8000/abs")
        XCTAssertEqual(Playlist.resolve("rel", against: "http://x/y/z.pls"), "http://x/y/rel")
        XCTAssertEqual(Playlist.resolve("rel", against: "http://x"), "http://x/rel")
        XCTAssertEqual(Playlist.resolve("//cdn/s", against: "https://x/y"), "https://cdn/s")
    }
}

import XCTest
import TonearmCore
@testable import TonearmStreaming

final class ICYTests: XCTestCase {
    /// A body as an ICY server sends it: `interval` audio bytes, then a length byte and the
    /// padded block (length 0 when nothing changed), again and again.
    func serverBody(audio: [UInt8], interval: Int, titles: [String?]) -> [UInt8] {
        var body: [UInt8] = []
        var at = 0, block = 0
        while at < audio.count {
            let n = min(interval, audio.count - at)
            body += audio[at..<(at + n)]
            at += n
            guard n == interval else { break }
            let title = block < titles.count ? titles[block] : nil
            block += 1
            if let title {
                var text = Array("StreamTitle='\(title)';StreamUrl='http://example.org/\(block)';".utf8)
                text += [UInt8](repeating: 0, count: (16 - text.count % 16) % 16)
                body.append(UInt8(text.count / 16))
                body += text
            } else {
                body.append(0)
            }
        }
        return body
    }

    func testAudioComesOutExactWhateverTheCut() throws {
        var rng = SystemRandomNumberGenerator()
        let audio = (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let titles: [String?] = ["One", nil, "Guns N' Roses - Don't Cry", nil, nil, "Ünïcödé — ok", "Four"]
        for interval in [8192, 1000, 1] {
            let body = serverBody(audio: audio, interval: interval, titles: interval == 1 ? [] : titles)
            for cut in [1, 7, 1500, 16_000, body.count] {
                var demuxer = try ICYDemuxer(metaInterval: interval)
                var out: [UInt8] = []
                var seen: [String] = []
                var at = 0
                while at < body.count {
                    let n = min(cut, body.count - at)
                    demuxer.feed(Array(body[at..<(at + n)]), audio: { out += $0 }, metadata: { seen.append($0.streamTitle ?? "?") })
                    at += n
                }
                XCTAssertEqual(out, audio, "interval \(interval), cut \(cut)")
                XCTAssertEqual(seen, interval == 1 ? [] : titles.compactMap { $0 }, "interval \(interval), cut \(cut)")
                XCTAssertEqual(Int64(out.count) + demuxer.metadataBytes, Int64(body.count))
            }
        }
    }

    func testFieldsQuotesAndURL() {
        let m = ICYMetadata(bytes: Array("StreamTitle='Guns N' Roses - Don't Cry';StreamUrl='http://x/y?a=1;b=2';".utf8) + [0, 0, 0])
        XCTAssertEqual(m.streamTitle, "Guns N' Roses - Don't Cry")
        XCTAssertEqual(m.streamURL, "http://x/y?a=1;b=2")
        XCTAssertEqual(m.fields.map(\.key), ["StreamTitle", "StreamUrl"])
        // Unquoted, empty, and a block with nothing but padding.
        XCTAssertEqual(ICYMetadata(bytes: Array("StreamTitle=Plain;".utf8)).streamTitle, "Plain")
        XCTAssertEqual(ICYMetadata(bytes: Array("StreamTitle='';".utf8)).streamTitle, "")
        XCTAssertTrue(ICYMetadata(bytes: [0, 0, 0, 0]).fields.isEmpty)
        // A block cut short (no closing quote) keeps what it has.
        XCTAssertEqual(ICYMetadata(bytes: Array("StreamTitle='Cut sh".utf8)).streamTitle, "Cut sh")
    }

    /// Titles in Windows-1251 (Python's cp1251 codec made these bytes) are not lost.
    func testCyrillicLatinAndUTF8Titles() {
        func title(_ bytes: [UInt8], _ fallback: LegacyTextEncoding = .automatic) -> String? {
            ICYMetadata(bytes: Array("StreamTitle='".utf8) + bytes + Array("';".utf8), fallback: fallback).streamTitle
        }
        let kino: [UInt8] = [202, 232, 237, 238, 32, 45, 32, 195, 240, 243, 239, 239, 224, 32, 234, 240, 238, 226, 232]
        XCTAssertEqual(title(kino), "Кино - Группа крови")
        let yozhik: [UInt8] = [168, 230, 232, 234, 32, 226, 32, 242, 243, 236, 224, 237, 229, 32, 185, 53]
        XCTAssertEqual(title(yozhik), "Ёжик в тумане №5")
        XCTAssertEqual(title(Array("Кино - Группа крови".utf8)), "Кино - Группа крови")
        let cafe: [UInt8] = [67, 97, 102, 233, 32, 84, 97, 99, 118, 98, 97, 32, 45, 32, 69, 114, 101, 115]
        XCTAssertEqual(title(cafe), "Café Tacvba - Eres")
        XCTAssertEqual(title(kino, .latin1), "Êèíî - Ãðóïïà êðîâè")
        XCTAssertEqual(title(cafe, .windows1251), "Cafй Tacvba - Eres")
    }

    func testHeaders() {
        let h = ICYHeaders(headers: ["ICY-Name": "Radio Tonearm", "icy-genre": "Jazz", "Icy-Br": "128,128",
                                     "icy-description": " Smooth ", "icy-metaint": "16000", "icy-url": "http://t.example",
                                     "Content-Type": "audio/mpeg"])
        XCTAssertEqual(h.name, "Radio Tonearm")
        XCTAssertEqual(h.genre, "Jazz")
        XCTAssertEqual(h.bitRate, 128)
        XCTAssertEqual(h.description, "Smooth")
        XCTAssertEqual(h.url, "http://t.example")
        XCTAssertEqual(h.metaInterval, 16000)
        // A stream without icy-metaint has nothing to strip.
        XCTAssertNil(ICYHeaders(headers: ["icy-name": "x"]).metaInterval)
        XCTAssertNil(ICYHeaders(headers: ["icy-metaint": "0"]).metaInterval)
        // A name in Windows-1251, as raw header bytes.
        let raw = ICYHeaders(headers: [(name: "icy-name", value: [208, 224, 228, 232, 238])])
        XCTAssertEqual(raw.name, "Радио")
    }

    func testIntervalBounds() {
        XCTAssertThrowsError(try ICYDemuxer(metaInterval: 0)) { XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat) }
        XCTAssertThrowsError(try ICYDemuxer(metaInterval: ICYDemuxer.maximumInterval + 1))
        XCTAssertNoThrow(try ICYDemuxer(metaInterval: ICYDemuxer.maximumInterval))
    }
}

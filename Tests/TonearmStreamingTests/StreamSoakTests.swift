import Foundation
import XCTest
import Tonearm
import TonearmTestSupport

/// A radio stream played for a long time, quickly: the null sink runs on a virtual clock, so
/// ten minutes of a looping station play in seconds. Memory must stay flat (every buffer is
/// bounded: the HTTP buffer, the decoded audio, the ring, the title queue).
final class StreamSoakTests: XCTestCase {
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb * 1024
    }

    func testTenMinutesOfRadioKeepMemoryFlat() throws {
        let s = try HTTPStreamTests.server.require()
        var o = StreamPlayer.Options()
        o.http.maximumReconnects = 0
        let url = s.url("live/radio/radio.mp3?loops=100000&metaint=8000&titles=A%7CB%7CC")
        let player = try StreamPlayer(url: url, backend: NullOutputBackend(), options: o)
        let titles = Counter()
        player.onEvent = { if case .title = $0 { titles.increment() } }
        try player.play()
        func playUntil(_ seconds: Double) {
            while player.player.playedTime < seconds && player.state != .failed && player.state != .ended {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        playUntil(60)
        let early = Self.residentBytes()
        playUntil(600)
        let late = Self.residentBytes()
        let state = player.state
        let played = player.player.playedTime
        player.stop()
        XCTAssertNotEqual(state, .failed)
        XCTAssertGreaterThanOrEqual(played, 600)
        // About 120 loops of 5 s, a title a loop.
        XCTAssertGreaterThan(titles.value, 100)
        XCTAssertLessThan(late - early, 8 << 20, "RSS grew from \(early >> 20) MB to \(late >> 20) MB")
        print("soak: RSS \(early >> 10) kB at 60 s, \(late >> 10) kB at 600 s of audio, \(titles.value) titles")
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func increment() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }
}

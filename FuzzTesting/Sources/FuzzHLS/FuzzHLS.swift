import FuzzSupport
import Tonearm

// HLS playlists (RFC 8216): master and media playlists with their attribute lists, byte
// ranges, keys and IVs, maps and dates, then what the client reads from them (the playable
// variants and their renditions, each segment's IV, the durations); and the sniffing of a
// segment's type from its first bytes. Seeded with the HLS fixtures' playlists.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size <= InputLimit.hls else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = HLSPlaylist.isHLS(bytes)
    _ = HLSStream.sniff(bytes)
    switch try? HLSPlaylist.parse(bytes, url: "http://fuzz.example/a/b.m3u8?x=1") {
    case .master(let m)?:
        for v in m.playableVariants {
            precondition(v.codecs.isEmpty || v.codecs.contains(where: HLSCodecs.isDecodable))
            _ = m.audioRendition(for: v, language: "en")
        }
    case .media(let p)?:
        var sequence = p.mediaSequence
        for s in p.segments {
            precondition(s.sequence == sequence && s.duration >= 0)
            sequence += 1
            if let key = s.key { precondition(key.iv(forSequence: s.sequence).count == 16) }
            if let r = s.byteRange { precondition(r.length > 0) }
        }
        _ = p.duration
    case nil:
        break
    }
    return 0
}

@_cdecl("FuzzHLS_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

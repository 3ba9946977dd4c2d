import FuzzSupport
import Tonearm

// The network layer's parsers: ICY demuxing (byte 0 picks the interval, byte 1 the chunk size;
// the audio out plus the metadata bytes must add up to the input), ICY metadata text and
// headers, PLS/M3U playlists (byte 0's top bits pick the format hint), and whole HTTP
// responses through the socket client's reader (status line, headers, chunked bodies), with
// the range and length fields read from what it parsed.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 2, size <= InputLimit.streaming else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let body = Array(bytes[2...])
    // ICY: an interval from 1 to 256 (small, so blocks come often), chunks of 1 to 256 bytes.
    if var demuxer = try? ICYDemuxer(metaInterval: Int(bytes[0]) + 1) {
        let chunk = Int(bytes[1]) + 1
        var audio = 0
        var at = 0
        while at < body.count {
            let n = min(chunk, body.count - at)
            demuxer.feed(Array(body[at..<(at + n)]), audio: { audio += $0.count }, metadata: { m in
                _ = m.streamTitle
                _ = m.streamURL
            })
            at += n
        }
        precondition(Int64(audio) + demuxer.metadataBytes == Int64(body.count), "ICY bytes lost or duplicated")
    }
    _ = ICYMetadata(bytes: body).fields
    _ = ICYHeaders(headers: [(name: "icy-name", value: body), (name: "icy-metaint", value: body)])
    let formats: [PlaylistFormat?] = [nil, .pls, .m3u, .m3u8]
    _ = try? Playlist.parse(body, format: formats[Int(bytes[0] >> 6)], baseURL: "http://fuzz.example/a/b.pls")
    if let (info, _) = try? HTTPResponseParser.parse(Array(bytes.prefix(HTTPResponseParser.maximumInput))) {
        _ = info.contentRange
        _ = info.resourceLength
        _ = info.acceptsRanges
        _ = info.fileTypeHint
        _ = info.icy
    }
    return 0
}

@_cdecl("FuzzStreaming_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

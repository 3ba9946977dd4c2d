import TonearmCore

/// The SeekHead (RFC 9559 §5.1.1): where the top-level elements lie, as offsets from the
/// Segment's data.
struct MatroskaSeekHead {
    /// Element ID → positions relative to the Segment's data start, in the order listed.
    var positions: [UInt32: [Int64]] = [:]

    /// The most entries kept.
    static let maximumEntries = 4096

    mutating func read(_ b: [UInt8], _ range: Range<Int>) {
        var n = positions.values.reduce(0) { $0 + $1.count }
        for seek in EBML.children(b, range) where seek.id == MKV.seek {
            let c = EBML.children(b, seek.body)
            guard n < MatroskaSeekHead.maximumEntries, let idRange = EBML.child(MKV.seekID, in: c),
                  let posRange = EBML.child(MKV.seekPosition, in: c),
                  let id = EBML.uint(b[idRange]), id <= UInt64(UInt32.max),
                  let pos = EBML.uint(b[posRange]), pos < UInt64(Int64.max >> 2)
            else { continue }
            positions[UInt32(id), default: []].append(Int64(pos))
            n += 1
        }
    }
}

/// One CuePoint of the selected track (RFC 9559 §5.1.5): a time and the Cluster that holds it.
struct MatroskaCuePoint: Equatable {
    /// In TimestampScale units.
    var time: Int64
    /// The Cluster's offset from the Segment's data start.
    var cluster: Int64
}

enum MatroskaCues {
    /// The most CuePoints kept (a point every 0.5 s for about 6 days).
    static let maximumPoints = 1 << 20

    /// The CuePoints for `track` (or for any track, when none names it), sorted by time.
    static func read(_ b: [UInt8], _ range: Range<Int>, track: UInt64) -> [MatroskaCuePoint] {
        var mine: [MatroskaCuePoint] = [], any: [MatroskaCuePoint] = []
        for point in EBML.children(b, range) where point.id == MKV.cuePoint {
            guard mine.count < maximumPoints, any.count < maximumPoints else { break }
            let c = EBML.children(b, point.body)
            guard let t = EBML.child(MKV.cueTime, in: c), let time = EBML.uint(b[t]), time < UInt64(Int64.max >> 2) else { continue }
            for (id, body) in c where id == MKV.cueTrackPositions {
                let p = EBML.children(b, body)
                guard let cr = EBML.child(MKV.cueClusterPosition, in: p), let cluster = EBML.uint(b[cr]),
                      cluster < UInt64(Int64.max >> 2) else { continue }
                let point = MatroskaCuePoint(time: Int64(time), cluster: Int64(cluster))
                let named = EBML.child(MKV.cueTrack, in: p).flatMap { EBML.uint(b[$0]) }
                if named == track { mine.append(point) }
                if any.last != point { any.append(point) }
            }
        }
        let points = mine.isEmpty ? any : mine
        return points.sorted { ($0.time, $0.cluster) < ($1.time, $1.cluster) }
    }
}

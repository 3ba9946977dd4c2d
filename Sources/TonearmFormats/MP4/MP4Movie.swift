import TonearmCore

/// One edit of an edit list (`elst`, ISO/IEC 14496-12 §8.6.6).
struct MP4Edit: Sendable, Equatable {
    /// In the movie's timescale.
    var segmentDuration: UInt64
    /// In the media's timescale; -1 for an empty edit.
    var mediaTime: Int64
    var rate: Int32
}

/// Defaults for the samples of fragments (`trex`, §8.8.3).
struct MP4TrackExtends: Sendable {
    var defaultDuration: UInt32 = 0
    var defaultSize: UInt32 = 0
    var defaultFlags: UInt32 = 0
}

/// A track as `moov/trak` describes it: where its tables lie in the `moov` bytes, not yet read.
struct MP4Track: Sendable {
    var id: UInt32 = 0
    var handler = FourCC(rawValue: 0)
    var timescale: UInt32 = 0
    var edits: [MP4Edit] = []
    var chapterTrackIDs: [UInt32] = []
    /// The first entry of `stsd`.
    var sampleEntry: MP4Box?
    /// Every entry of `stsd` (at most ``MP4/maximumSampleEntries``).
    var sampleEntries: [MP4Box] = []
    var stts: Range<Int>?
    var ctts: Range<Int>?
    var stsc: Range<Int>?
    var stsz: Range<Int>?
    var stz2: Range<Int>?
    var stco: Range<Int>?
    var co64: Range<Int>?
    var stss: Range<Int>?
    var rollDescriptions: Range<Int>?

    var isAudio: Bool { handler == "soun" }

    /// The first chunk whose samples `stsc` gives a description other than the first, when
    /// that description differs from the first (a format change within the track, which
    /// Tonearm does not follow); nil when every sample uses the first or an identical one.
    func chunkWithAnotherDescription(_ p: UnsafeRawBufferPointer) -> UInt32? {
        guard sampleEntries.count > 1, let c = stsc, c.count >= 8 else { return nil }
        let count = min(Int(mp4be32(p, c.lowerBound + 4)), (c.count - 8) / 12)
        let first = sampleEntries[0]
        let firstBytes = UnsafeRawBufferPointer(rebasing: p[first.start..<first.body.upperBound])
        for k in 0..<count {
            let e = c.lowerBound + 8 + 12 * k
            let index = Int(mp4be32(p, e + 8))
            guard index != 1 else { continue }
            guard index >= 1, index <= sampleEntries.count else { return mp4be32(p, e) }
            let other = sampleEntries[index - 1]
            // The same entry repeated (some muxers write one per edit) is no change.
            let otherBytes = UnsafeRawBufferPointer(rebasing: p[other.start..<other.body.upperBound])
            if !otherBytes.elementsEqual(firstBytes) { return mp4be32(p, e) }
        }
        return nil
    }
}

/// What `moov` holds: the movie timescale, every track, fragment defaults and metadata.
struct MP4Movie: Sendable {
    var timescale: UInt32 = 0
    var tracks: [MP4Track] = []
    /// True when `mvex` announces movie fragments.
    var isFragmented = false
    var trackExtends: [UInt32: MP4TrackExtends] = [:]
    var metadata = MP4Metadata()

    /// Reads the boxes of a `moov` body held in `p`.
    static func parse(_ p: UnsafeRawBufferPointer) throws(AudioError) -> MP4Movie {
        var movie = MP4Movie()
        for box in try MP4Boxes.children(p, 0..<p.count) {
            switch box.type {
            case "mvhd":
                movie.timescale = try fullBoxField(p, box, "mvhd", version0: 12, version1: 20)
            case "trak":
                movie.tracks.append(try parseTrack(p, box.body))
            case "mvex":
                movie.isFragmented = true
                for t in try MP4Boxes.children(p, box.body) where t.type == "trex" && t.body.count >= 24 {
                    let b = t.body.lowerBound
                    movie.trackExtends[mp4be32(p, b + 4)] = MP4TrackExtends(
                        defaultDuration: mp4be32(p, b + 12), defaultSize: mp4be32(p, b + 16), defaultFlags: mp4be32(p, b + 20))
                }
            case "udta":
                // Metadata is optional: a damaged tag loses the tag, not the file.
                guard let children = try? MP4Boxes.children(p, box.body) else { break }
                for c in children {
                    if c.type == "meta" { try? movie.metadata.readMeta(p, c.body) }
                    if c.type == "chpl" { movie.metadata.readChpl(p, c.body) }
                }
            case "meta":
                try? movie.metadata.readMeta(p, box.body)
            default:
                break
            }
        }
        return movie
    }

    /// A 32-bit field of a full box whose offset depends on its version (0: 32-bit times
    /// before it, 1: 64-bit times).
    private static func fullBoxField(_ p: UnsafeRawBufferPointer, _ box: MP4Box, _ name: String, version0: Int, version1: Int) throws(AudioError) -> UInt32 {
        guard box.body.count >= 4 else { throw AudioError(.invalidChunk, "an \(name) of \(box.body.count) bytes") }
        let at = p[box.body.lowerBound] == 1 ? version1 : version0
        guard box.body.count >= at + 4 else { throw AudioError(.invalidChunk, "an \(name) of \(box.body.count) bytes") }
        return mp4be32(p, box.body.lowerBound + at)
    }

    private static func parseTrack(_ p: UnsafeRawBufferPointer, _ body: Range<Int>) throws(AudioError) -> MP4Track {
        var t = MP4Track()
        for box in try MP4Boxes.children(p, body) {
            switch box.type {
            case "tkhd":
                t.id = try fullBoxField(p, box, "tkhd", version0: 12, version1: 20)
            case "edts":
                if let elst = try MP4Boxes.first("elst", in: p, box.body) { t.edits = try parseEditList(p, elst.body) }
            case "tref":
                for r in try MP4Boxes.children(p, box.body) where r.type == "chap" {
                    var i = r.body.lowerBound
                    while i + 4 <= r.body.upperBound { t.chapterTrackIDs.append(mp4be32(p, i)); i += 4 }
                }
            case "mdia":
                try parseMedia(p, box.body, into: &t)
            default:
                break
            }
        }
        return t
    }

    private static func parseEditList(_ p: UnsafeRawBufferPointer, _ body: Range<Int>) throws(AudioError) -> [MP4Edit] {
        guard body.count >= 8 else { throw AudioError(.invalidChunk, "an elst of \(body.count) bytes") }
        let version = p[body.lowerBound]
        let count = Int(mp4be32(p, body.lowerBound + 4))
        let entrySize = version == 1 ? 20 : 12
        guard count <= (body.count - 8) / entrySize else {
            throw AudioError(.invalidChunk, "elst claims \(count) edits in \(body.count) bytes")
        }
        var edits: [MP4Edit] = []
        edits.reserveCapacity(count)
        var i = body.lowerBound + 8
        for _ in 0..<count {
            if version == 1 {
                edits.append(MP4Edit(segmentDuration: mp4be64(p, i), mediaTime: Int64(bitPattern: mp4be64(p, i + 8)),
                                     rate: Int32(bitPattern: mp4be32(p, i + 16))))
            } else {
                edits.append(MP4Edit(segmentDuration: UInt64(mp4be32(p, i)), mediaTime: Int64(Int32(bitPattern: mp4be32(p, i + 4))),
                                     rate: Int32(bitPattern: mp4be32(p, i + 8))))
            }
            i += entrySize
        }
        return edits
    }

    private static func parseMedia(_ p: UnsafeRawBufferPointer, _ body: Range<Int>, into t: inout MP4Track) throws(AudioError) {
        for box in try MP4Boxes.children(p, body) {
            switch box.type {
            case "mdhd":
                t.timescale = try fullBoxField(p, box, "mdhd", version0: 12, version1: 20)
            case "hdlr":
                guard box.body.count >= 12 else { throw AudioError(.invalidChunk, "an hdlr of \(box.body.count) bytes") }
                t.handler = FourCC(rawValue: mp4be32(p, box.body.lowerBound + 8))
            case "minf":
                guard let stbl = try MP4Boxes.first("stbl", in: p, box.body) else { continue }
                for s in try MP4Boxes.children(p, stbl.body) {
                    switch s.type {
                    case "stsd":
                        guard s.body.count >= 8, mp4be32(p, s.body.lowerBound + 4) >= 1 else {
                            throw AudioError(.invalidChunk, "an stsd without entries")
                        }
                        t.sampleEntries = Array(try MP4Boxes.children(p, (s.body.lowerBound + 8)..<s.body.upperBound)
                            .prefix(MP4.maximumSampleEntries))
                        t.sampleEntry = t.sampleEntries.first
                    case "stts": t.stts = s.body
                    case "ctts": t.ctts = s.body
                    case "stsc": t.stsc = s.body
                    case "stsz": t.stsz = s.body
                    case "stz2": t.stz2 = s.body
                    case "stco": t.stco = s.body
                    case "co64": t.co64 = s.body
                    case "stss": t.stss = s.body
                    case "sgpd":
                        if s.body.count >= 8, mp4be32(p, s.body.lowerBound + 4) == FourCC("roll").rawValue { t.rollDescriptions = s.body }
                    default: break
                    }
                }
            default:
                break
            }
        }
    }
}

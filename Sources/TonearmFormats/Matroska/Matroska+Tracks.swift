import TonearmCore

/// One TrackEntry (RFC 9559 §5.1.4.1), with what Tonearm uses of it.
struct MatroskaTrack: Sendable {
    var number: UInt64 = 0
    var uid: UInt64 = 0
    /// 1 video, 2 audio, 17 subtitle… (§5.1.4.1.3).
    var type: UInt64 = 0
    var isEnabled = true
    /// FlagDefault, whose default value is 1.
    var isDefault = true
    /// Nanoseconds per frame of the track, when constant (DefaultDuration).
    var defaultDuration: UInt64?
    var codecID = ""
    var codecPrivate: [UInt8]?
    /// Nanoseconds of built-in delay (Opus's pre-skip) and of decoding needed after a seek.
    var codecDelay: UInt64 = 0
    var seekPreRoll: UInt64 = 0
    var name: String?
    var language: String?
    var samplingFrequency: Double = 8000
    var outputSamplingFrequency: Double?
    var channels: UInt64 = 1
    var bitDepth: UInt64?
    /// ContentEncodings that Tonearm does not undo: zlib, bzip2 or LZO compression, encryption.
    var hasContentEncoding = false
    /// Header stripping (ContentCompAlgo 3, RFC 9559 §5.1.4.1.31.10): the bytes removed from
    /// the front of every frame, which the reader puts back.
    var strippedHeader: [UInt8]?

    /// The most bytes header stripping may remove from each frame.
    static let maximumStrippedHeader = 4096

    /// The largest CodecPrivate kept (a Vorbis setup header with large codebooks stays far below).
    static let maximumCodecPrivateSize = 1 << 20

    var kindName: String {
        switch type {
        case 1: "video"
        case 2: "audio"
        case 3: "complex"
        case 16: "logo"
        case 17: "subtitle"
        case 18: "buttons"
        case 32: "control"
        case 33: "metadata"
        default: "type \(type)"
        }
    }

    /// ContentEncodings (RFC 9559 §5.1.4.1.31): one encoding that strips a header from the
    /// frames is undone; any other makes the track unreadable.
    mutating func readContentEncodings(_ b: [UInt8], _ range: Range<Int>) {
        let encodings = EBML.children(b, range).filter { $0.id == MKV.contentEncoding }
        guard encodings.count == 1 else {
            hasContentEncoding = !encodings.isEmpty
            return
        }
        let c = EBML.children(b, encodings[0].body)
        let scope = EBML.child(MKV.contentEncodingScope, in: c).flatMap { EBML.uint(b[$0]) } ?? 1
        let type = EBML.child(MKV.contentEncodingType, in: c).flatMap { EBML.uint(b[$0]) } ?? 0
        if scope == 1, type == 0, let compression = EBML.child(MKV.contentCompression, in: c) {
            let cc = EBML.children(b, compression)
            let algo = EBML.child(MKV.contentCompAlgo, in: cc).flatMap { EBML.uint(b[$0]) } ?? 0
            if algo == 3, let settings = EBML.child(MKV.contentCompSettings, in: cc),
               settings.count <= MatroskaTrack.maximumStrippedHeader
            {
                strippedHeader = Array(b[settings])
                return
            }
        }
        hasContentEncoding = true
    }

    /// Reads the TrackEntry elements of a Tracks body.
    static func read(_ b: [UInt8], _ range: Range<Int>) throws(AudioError) -> [MatroskaTrack] {
        var out: [MatroskaTrack] = []
        for entry in EBML.children(b, range) where entry.id == MKV.trackEntry {
            var t = MatroskaTrack()
            for (id, body) in EBML.children(b, entry.body) {
                let v = b[body]
                switch id {
                case MKV.trackNumber: t.number = EBML.uint(v) ?? 0
                case MKV.trackUID: t.uid = EBML.uint(v) ?? 0
                case MKV.trackType: t.type = EBML.uint(v) ?? 0
                case MKV.flagEnabled: t.isEnabled = (EBML.uint(v) ?? 1) != 0
                case MKV.flagDefault: t.isDefault = (EBML.uint(v) ?? 1) != 0
                case MKV.defaultDuration: t.defaultDuration = EBML.uint(v).flatMap { $0 > 0 ? $0 : nil }
                case MKV.codecID: t.codecID = EBML.string(v)
                case MKV.codecPrivate:
                    guard v.count <= maximumCodecPrivateSize else {
                        throw AudioError.limit("a CodecPrivate of \(v.count) bytes; at most \(maximumCodecPrivateSize) are read")
                    }
                    t.codecPrivate = Array(v)
                case MKV.codecDelay: t.codecDelay = EBML.uint(v) ?? 0
                case MKV.seekPreRoll: t.seekPreRoll = EBML.uint(v) ?? 0
                case MKV.name: t.name = EBML.string(v)
                case MKV.language: t.language = EBML.string(v)
                case MKV.contentEncodings: t.readContentEncodings(b, body)
                case MKV.audio:
                    for (aid, abody) in EBML.children(b, body) {
                        let a = b[abody]
                        switch aid {
                        case MKV.samplingFrequency: if let f = EBML.float(a) { t.samplingFrequency = f }
                        case MKV.outputSamplingFrequency: t.outputSamplingFrequency = EBML.float(a)
                        case MKV.channels: t.channels = EBML.uint(a) ?? 1
                        case MKV.bitDepth: t.bitDepth = EBML.uint(a)
                        default: break
                        }
                    }
                default: break
                }
            }
            out.append(t)
        }
        return out
    }

    /// The audio track the file's properties describe: among the audio tracks whose codec
    /// Tonearm reads and whose frames are not encoded, the first that is enabled and marked
    /// default; else the first enabled one; else the first. Players choose the default
    /// track (RFC 9559 §20.5: FlagDefault marks the track to play when the user has not
    /// chosen), so this is the track a player would start with.
    static func select(_ tracks: [MatroskaTrack]) throws(AudioError) -> Int {
        let audio = tracks.indices.filter { tracks[$0].type == 2 }
        guard !audio.isEmpty else {
            let kinds = tracks.map { "\($0.kindName) \($0.codecID)" }
            throw AudioError(.unsupportedDataFormat, "the Matroska file has no audio track (it has: \(kinds.joined(separator: ", ")))")
        }
        let usable = audio.filter {
            let t = tracks[$0]
            return MatroskaAudio.isSupported(t.codecID) && !t.hasContentEncoding
                && !(t.strippedHeader != nil && MatroskaAudio.pcmIDs.contains(t.codecID))
        }
        guard !usable.isEmpty else {
            let t = tracks[audio[0]]
            if (t.hasContentEncoding || t.strippedHeader != nil) && MatroskaAudio.isSupported(t.codecID) {
                throw AudioError(.unsupportedDataFormat, "the Matroska audio track's frames are compressed or encrypted (ContentEncodings)")
            }
            throw AudioError(.unsupportedDataFormat, "Matroska codec \(audio.map { tracks[$0].codecID }.joined(separator: ", ")) is not supported")
        }
        return usable.first { tracks[$0].isEnabled && tracks[$0].isDefault }
            ?? usable.first { tracks[$0].isEnabled } ?? usable[0]
    }
}

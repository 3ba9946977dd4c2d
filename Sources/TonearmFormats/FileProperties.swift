import TonearmCore

/// The text metadata of a file, as Apple's InfoDictionary: keys such as `title`, `artist`
/// and `album` (Apple's kAFInfoDictionary_ keys), kept in the order the file gave them.
public struct InfoDictionary: Hashable, Sendable, Sequence {
    public private(set) var entries: [(key: String, value: String)] = []
    public init() {}
    public init(_ pairs: [(String, String)]) { for (k, v) in pairs { self[k] = v } }

    public subscript(key: String) -> String? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            if let i = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[i].value = newValue } else { entries.remove(at: i) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public func makeIterator() -> IndexingIterator<[(key: String, value: String)]> { entries.makeIterator() }

    public static func == (a: Self, b: Self) -> Bool {
        a.entries.count == b.entries.count && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
    public func hash(into h: inout Hasher) {
        for e in entries { h.combine(e.key); h.combine(e.value) }
    }

    // Apple's kAFInfoDictionary_ keys.
    public static let artist = "artist"
    public static let album = "album"
    public static let title = "title"
    public static let genre = "genre"
    public static let year = "year"
    public static let comments = "comments"
    public static let copyright = "copyright"
    public static let trackNumber = "track number"
    public static let encodingApplication = "encoding application"
    public static let recordedDate = "recorded date"
    public static let composer = "composer"
    public static let approximateDurationInSeconds = "approximate duration in seconds"
    public static let sourceBitDepth = "source bit depth"

    /// Apple's key for a container's own tag name ("ARTIST" in Matroska, "author" in ASF,
    /// "encoded_by"…), as FFmpeg's demuxers name them; the tag's name, lowercased, when
    /// Apple has no key for it.
    package static func key(forContainerTag tag: String) -> String {
        switch tag.lowercased() {
        case "title": title
        case "artist", "author": artist
        case "album": album
        case "genre": genre
        case "date", "year": year
        case "comment", "description": comments
        case "copyright": copyright
        case "track": trackNumber
        case "encoder", "encoded_by", "encoding_tool": encodingApplication
        case "composer": composer
        default: tag.lowercased()
        }
    }
}

/// A marker in the audio, as Apple's `AudioFileMarker`.
public struct AudioFileMarker: Hashable, Sendable {
    /// Position in frames from the start of the audio.
    public var framePosition: Double
    public var name: String
    public var markerID: Int32

    public init(framePosition: Double, name: String, markerID: Int32) {
        self.framePosition = framePosition
        self.name = name
        self.markerID = markerID
    }
}

/// A chapter: where it starts and its title.
public struct Chapter: Hashable, Sendable {
    /// Start, in seconds from the beginning of the audio.
    public var start: Double
    public var title: String
    public init(start: Double, title: String) {
        self.start = start
        self.title = title
    }
}

/// One entry of a format list ('flst'), as Apple's `AudioFormatListItem`.
public struct AudioFormatListItem: Hashable, Sendable {
    public var format: StreamDescription
    public var channelLayoutTag: ChannelLayout.Tag
    public init(format: StreamDescription, channelLayoutTag: ChannelLayout.Tag) {
        self.format = format
        self.channelLayoutTag = channelLayoutTag
    }
}

/// Everything a parser has learnt about a file. A value is nil until the parser knows it.
///
/// Parsers fill this in; ``AudioFileStream`` and ``AudioFile`` answer property requests
/// from it, so both paths report the same values.
public struct FileProperties: Sendable {
    public var fileType: AudioFileTypeID
    public var dataFormat: StreamDescription?
    public var formatList: [AudioFormatListItem]?
    public var magicCookie: [UInt8]?
    /// Bytes of audio data; nil while unknown (a stream whose size is given as "until the end").
    public var audioDataByteCount: Int64?
    public var audioDataPacketCount: Int64?
    public var maximumPacketSize: UInt32?
    /// Absolute file offset of the first byte of audio data.
    public var dataOffset: Int64?
    public var channelLayout: ChannelLayout?
    public var packetTableInfo: PacketTableInfo?
    /// Bits per second, when the format says or it can be computed.
    public var bitRate: UInt32?
    public var info = InfoDictionary()
    public var markers: [AudioFileMarker] = []
    public var chunkIDs: [FourCC] = []
    /// For formats whose packets vary: each packet's offset relative to `dataOffset`.
    public var packetTable: [PacketDescription]?
    /// Packets the file's own table lists whose bytes are not in the file (a truncated file,
    /// or a damaged CAF 'pakt' that places packets past its end). They are left out of
    /// `packetTable` and `audioDataPacketCount`, which keep only the whole packets before
    /// the first missing one; `packetTableInfo`'s valid frames shrink to match. 0 for a
    /// sound file.
    public var missingPacketCount: Int64 = 0
    public var sourceBitDepth: Int32?
    /// False when the file cannot be played from the front without seeking
    /// (Apple's IsOptimized), e.g. an AIFF whose COMM chunk follows SSND.
    public var isOptimized = true
    /// A short name of the data format, e.g. `16-bit little-endian signed integer PCM`.
    public var dataFormatName: String?
    /// Raw ID3v2 tag bytes, when the file has one.
    public var id3Tag: [UInt8]?
    public var albumArtwork: [UInt8]?
    /// Chapters (MP4 chpl or chapter tracks, CUE sheets), in order.
    public var chapters: [Chapter] = []
    /// True when the packet count, byte count or duration is an estimate (a stream with no
    /// table, e.g. an MP3 without a Xing header), so that callers can say so.
    public var isEstimated = false
    /// Packets a decoder can start at, when not every packet can ('rrap', 'pind', 'nind'):
    /// sorted packet indices. Nil when every packet is independent.
    public var independentPackets: [Int64]?
    /// Packets to decode before a seek target for the output to be right ('pkrl').
    public var rollDistance: Int64?
    /// Each packet's presentation time in frames, for formats that give one (MP4, Ogg),
    /// parallel to `packetTable`. 0 is the first frame played: MP4 applies the first edit's
    /// media time, Ogg subtracts Opus's pre-skip, so priming packets come before 0.
    public var packetTimestamps: [Int64]?
    /// Audio tracks in the file (MP4 may hold several); the properties describe the first.
    public var trackCount = 1
    /// Every track or logical stream of a multi-track container (MP4 tracks, Ogg logical
    /// streams), the one these properties describe marked; empty for other formats.
    public var tracks: [TrackSummary] = []

    public init(fileType: AudioFileTypeID) { self.fileType = fileType }

    /// Frames in one packet when constant.
    public var framesPerPacket: Int64? {
        guard let f = dataFormat, f.framesPerPacket > 0 else { return nil }
        return Int64(f.framesPerPacket)
    }

    /// Total frames the packets decode to (before trimming), when known.
    public var totalFrames: Int64? {
        if let t = packetTableInfo { return t.totalFrames }
        if let fpp = framesPerPacket, let n = audioDataPacketCount { return fpp * n }
        if let table = packetTable, table.contains(where: { $0.variableFramesInPacket > 0 }) {
            return table.reduce(0) { $0 + Int64($1.variableFramesInPacket) }
        }
        return nil
    }

    /// Frames a player should output: the valid frames of the packet table, or all.
    public var validFrames: Int64? { packetTableInfo?.numberValidFrames ?? totalFrames }
}

/// One track of a container, as `tonearm info` lists them.
public struct TrackSummary: Sendable, Equatable {
    /// The MP4 track ID or the Ogg stream's serial number.
    public var id: UInt32
    /// "audio", "video", "text", or the container's own word for it (an MP4 handler type).
    public var kind: String
    /// The codec: an MP4 sample entry type ('mp4a', 'alac'…) or an Ogg codec name.
    public var codec: String
    /// The stream description, for an audio track Tonearm can describe.
    public var format: StreamDescription?
    /// True for the track the file's properties and packets come from.
    public var isSelected: Bool

    public init(id: UInt32, kind: String, codec: String, format: StreamDescription? = nil, isSelected: Bool = false) {
        self.id = id
        self.kind = kind
        self.codec = codec
        self.format = format
        self.isSelected = isSelected
    }
}

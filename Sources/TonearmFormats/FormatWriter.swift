import TonearmCore

/// What a writer knows when it lays out a file.
public struct WriterState: Sendable {
    public var fileType: AudioFileTypeID
    public var format: StreamDescription
    public var channelLayout: ChannelLayout?
    public var magicCookie: [UInt8]?
    public var info = InfoDictionary()
    public var packetTableInfo: PacketTableInfo?
    public var markers: [AudioFileMarker] = []
    /// Absolute offset where the audio data begins (set after the header is written).
    public var dataOffset: Int64 = 0
    public var dataByteCount: Int64 = 0
    public var packetCount: Int64 = 0
    /// Each packet's size and frames, for formats whose packets vary.
    public var packetDescriptions: [PacketDescription] = []

    public init(fileType: AudioFileTypeID, format: StreamDescription) {
        self.fileType = fileType
        self.format = format
    }

    /// Frames written: the packet count times the frames per packet, or the sum of variable frames.
    public var frameCount: Int64 {
        if format.framesPerPacket > 0 { return packetCount * Int64(format.framesPerPacket) }
        return packetDescriptions.reduce(0) { $0 + Int64($1.variableFramesInPacket) }
    }
}

/// The writing half of a format. ``AudioFile`` writes the header the writer gives before
/// the first packet, appends the packets itself, and calls `finish` from `close()`.
public protocol FormatWriter: AnyObject {
    /// The bytes before the audio data. The audio begins right after them.
    /// Called once, when the first packet is written (or at close for an empty file),
    /// so properties set before then (layout, cookie) go into the header.
    func header(_ state: WriterState) throws(AudioError) -> [UInt8]
    /// Called by `close()`: patches sizes and appends what follows the audio (metadata).
    func finish(_ state: WriterState, handle: POSIXFile) throws(AudioError)
    /// Whether the magic cookie may still change after the header is written, because
    /// `finish` rewrites it (FLAC's STREAMINFO, final only once the encoder is done).
    var rewritesMagicCookie: Bool { get }
    /// Takes over an existing file opened read-write: finds, in the bytes before the audio
    /// data, the size fields `finish` patches, as `header` would have recorded them. May
    /// rewrite chunks there that `finish` writes again after the audio (a 'pakt' before
    /// 'data' becomes 'free'). Throws 'prm?' for a type Tonearm cannot update in place.
    func adopt(header: [UInt8], state: WriterState, handle: POSIXFile) throws(AudioError)
    /// Whether `finish` may run after every write and again later (it writes what follows
    /// the audio at its current end and patches the sizes), so that the file is complete
    /// after each write when kAudioFilePropertyDeferSizeUpdates is 0.
    var canUpdateSizesEachWrite: Bool { get }
}

extension FormatWriter {
    public var rewritesMagicCookie: Bool { false }
    public var canUpdateSizesEachWrite: Bool { false }
    public func adopt(header: [UInt8], state: WriterState, handle: POSIXFile) throws(AudioError) {
        throw AudioError(.permissions, "Tonearm cannot update \(state.fileType) files in place; open them for reading")
    }
}

/// The chunks of a RIFF-like header: (ID, offset of the chunk, body size), from `start`.
func headerChunks(_ h: [UInt8], from start: Int, idSize: Int = 4, sizeBytes: Int, bigEndian: Bool, align: Int)
    -> [(id: String, at: Int, size: Int64)]
{
    var out: [(String, Int, Int64)] = []
    var i = start
    while i + idSize + sizeBytes <= h.count {
        var size: Int64 = 0
        for k in 0..<sizeBytes {
            let b = Int64(h[i + idSize + (bigEndian ? k : sizeBytes - 1 - k)])
            size = size << 8 | b
        }
        if sizeBytes == 8 && size >> 63 != 0 { size = -1 }
        out.append((String(decoding: h[i..<i + idSize], as: UTF8.self), i, size))
        guard size >= 0 else { break }
        i += idSize + sizeBytes + Int(size)
        if align > 1 && i % align != 0 { i += align - i % align }
    }
    return out
}

/// Checks that a format is linear PCM, G.711 or (where allowed) IMA4 and that the writer
/// can store it; throws 'fmt?' otherwise.
func requireWritable(_ f: StreamDescription, fileType: AudioFileTypeID, allowed: [AudioFormatID]) throws(AudioError) {
    guard allowed.contains(f.formatID) else {
        throw AudioError(.unsupportedDataFormat, "\(fileType) files cannot hold \(f.formatID) data")
    }
    guard f.channelsPerFrame > 0, f.sampleRate > 0 else {
        throw AudioError(.unsupportedDataFormat, "a format with \(f.channelsPerFrame) channels at \(f.sampleRate) Hz")
    }
    if f.isPCM {
        try f.validate()
        guard f.isInterleaved else { throw AudioError(.unsupportedDataFormat, "files hold interleaved PCM only") }
    }
}

import TonearmCore

/// One frame header of a sync-word format, as its ``FramedFormat`` reads it.
public struct FrameHeader: Sendable, Equatable {
    /// Bytes of the whole frame, header included.
    public var length: Int
    /// Bytes at the start of the frame that are not part of the packet (ADTS hands out the
    /// raw access unit after its 7- or 9-byte header); 0 when the packet is the whole frame.
    public var payloadOffset: Int
    /// The fields that stay the same through one stream (version, layer, sample rate…).
    /// Consecutive frames must agree on it.
    public var streamKey: UInt32
    /// Bits per second of this frame, or 0 when the header does not say.
    public var bitRate: Int
    /// The frame belongs to the packet of the frame before it (an E-AC-3 dependent
    /// substream): it never begins a packet. Only for a format whose `joinsFrames` is true.
    public var joinsPrevious: Bool

    public init(length: Int, payloadOffset: Int = 0, streamKey: UInt32, bitRate: Int = 0, joinsPrevious: Bool = false) {
        self.length = length
        self.payloadOffset = payloadOffset
        self.streamKey = streamKey
        self.bitRate = bitRate
        self.joinsPrevious = joinsPrevious
    }
}

/// What the first frame that a framed parser accepts turned out to be.
public enum FirstFrameRole: Sendable, Equatable {
    /// An audio frame: the first packet.
    case audio
    /// A frame that describes the stream but carries no audio (an MP3 Xing, Info or VBRI
    /// frame). It is not a packet; the packets begin after it.
    case metadata
    /// A frame the stream cannot begin with (a LATM frame that reuses a configuration not
    /// seen yet). It is dropped and the next frame is tried.
    case skip
}

/// The outcome of ``FramedFormat/learnFrameLength(_:at:isEndOfStream:)``.
public enum FrameLengthSearch: Sendable, Equatable {
    /// The header gives its length, or the length is known already, or this is no header.
    case notNeeded
    /// The length is learnt: ``FramedFormat/header(at:)`` now reads the header.
    case learned
    /// Too few bytes after the header to tell.
    case needMore
}

/// Totals that a stream declares at its start (an MP3 Xing or VBRI frame), used on the push
/// path where the frames cannot all be counted before the packets are handed out.
public struct DeclaredTotals: Sendable, Equatable {
    /// Audio packets (the metadata frame not counted).
    public var packets: Int64?
    /// Bytes of the audio packets (the metadata frame not counted).
    public var bytes: Int64?
    /// Whether the stream declares a constant bit rate (LAME's 'Info' frame): its bit rate
    /// is then the frame header's, as a scan of the whole file finds, and not the average
    /// of the declared totals, which a rounded byte count pulls a few bits away.
    public var constantBitRate: Bool
    public init(packets: Int64? = nil, bytes: Int64? = nil, constantBitRate: Bool = false) {
        self.packets = packets
        self.bytes = bytes
        self.constantBitRate = constantBitRate
    }
}

/// The format-specific part of a sync-word format (MPEG audio, ADTS, LOAS, AC-3, AMR):
/// how to read a frame header and the first frame. ``FramedParser`` does the rest.
public protocol FramedFormat {
    /// Bytes needed to read a frame header (frames are always longer).
    var headerSize: Int { get }
    /// True when ID3v2 tags may lead the stream and ID3v1/APEv2 tags may end it.
    var hasTags: Bool { get }
    /// True when a packet may span several frames (``FrameHeader/joinsPrevious``): the
    /// parser then looks at the header after a frame before it hands the packet out.
    var joinsFrames: Bool { get }
    /// Apple's order of the properties announced before 'redy'.
    var announcementOrder: [AudioFilePropertyID] { get }
    /// The largest packet the stream can hold, once the first frame is known (push path).
    var packetSizeUpperBound: UInt32 { get }
    /// Totals declared by the stream, once the first frame is known.
    var declared: DeclaredTotals { get }

    /// Reads a signature that precedes the frames (AMR's `#!AMR\n`): the bytes it takes,
    /// 0 when the format has none, or nil while too few bytes have arrived.
    mutating func parseFileHeader(_ bytes: UnsafeRawBufferPointer, isEndOfStream: Bool,
                                  properties: inout FileProperties) throws(AudioError) -> Int?
    /// The header at `p`, which has at least `headerSize` readable bytes; nil when these
    /// bytes are not a frame header this parser takes.
    func header(at p: UnsafeRawPointer) -> FrameHeader?
    /// For a stream whose headers do not give the frame length (free-format MPEG audio):
    /// given the bytes from `i` (at least `headerSize` of them) while the first frame is
    /// searched for, learns the stream's frame length, after which ``header(at:)`` reads
    /// such headers. `.needMore` while too few bytes are there to tell.
    mutating func learnFrameLength(_ bytes: UnsafeRawBufferPointer, at i: Int, isEndOfStream: Bool) -> FrameLengthSearch
    /// An error when the bytes at the start of the audio are a valid header of a kind
    /// Tonearm refuses (free-format MPEG audio): the stream fails cleanly instead of
    /// searching on. `p` has at least `headerSize` bytes.
    func unsupportedStream(at p: UnsafeRawPointer) -> AudioError?
    /// Bytes the format wants to see where the audio begins (after the leading tags)
    /// before the search starts; at least `headerSize`.
    var audioStartLookahead: Int { get }
    /// Looks at the first bytes of the audio (`audioStartLookahead` of them, or fewer at
    /// the end of the stream) before the search starts: refuses the stream or adapts to it
    /// (an ID3 tag may lead ADTS as well as MPEG audio). The default refuses what
    /// `unsupportedStream` names.
    mutating func audioBegins(_ bytes: UnsafeRawBufferPointer, properties: inout FileProperties) throws(AudioError)
    /// Reads the first frame (all of its bytes, and those of the frames that join it): sets
    /// the data format and whatever the frame declares, and says whether it is audio.
    mutating func firstFrame(_ header: FrameHeader, bytes: UnsafeRawBufferPointer, offset: Int64,
                             properties: inout FileProperties) throws(AudioError) -> FirstFrameRole
    /// Frames to drop at the start and at the end (priming and remainder), when the stream
    /// says (the LAME tag).
    var gapless: (priming: Int64, remainder: Int64)? { get }
    /// An estimated byte offset of a packet, relative to the first audio frame, from what
    /// the stream declares (an MP3 Xing table of contents); nil when it declares nothing.
    func estimatedOffset(ofPacket packet: Int64) -> Int64?
}

extension FramedFormat {
    public var hasTags: Bool { false }
    public var joinsFrames: Bool { false }
    public var declared: DeclaredTotals { DeclaredTotals() }
    public var gapless: (priming: Int64, remainder: Int64)? { nil }
    public func estimatedOffset(ofPacket packet: Int64) -> Int64? { nil }
    public func unsupportedStream(at p: UnsafeRawPointer) -> AudioError? { nil }
    public var audioStartLookahead: Int { headerSize }
    public mutating func learnFrameLength(_ bytes: UnsafeRawBufferPointer, at i: Int, isEndOfStream: Bool) -> FrameLengthSearch {
        .notNeeded
    }
    public mutating func audioBegins(_ bytes: UnsafeRawBufferPointer, properties: inout FileProperties) throws(AudioError) {
        if bytes.count >= headerSize, let error = unsupportedStream(at: bytes.baseAddress!) { throw error }
    }
    public mutating func parseFileHeader(_ bytes: UnsafeRawBufferPointer, isEndOfStream: Bool,
                                         properties: inout FileProperties) throws(AudioError) -> Int? { 0 }
}

/// Byte helpers shared by the framed formats.
@inline(__always) func loadBE32(_ p: UnsafeRawPointer) -> UInt32 {
    UInt32(p.load(as: UInt8.self)) << 24 | UInt32(p.load(fromByteOffset: 1, as: UInt8.self)) << 16
        | UInt32(p.load(fromByteOffset: 2, as: UInt8.self)) << 8 | UInt32(p.load(fromByteOffset: 3, as: UInt8.self))
}

@inline(__always) func byteAt(_ p: UnsafeRawPointer, _ i: Int) -> UInt8 { p.load(fromByteOffset: i, as: UInt8.self) }

import TonearmCore

/// What a parser sees on each step: the bytes available so far, from an absolute offset.
public struct ParserInput {
    /// The unconsumed bytes, beginning at file offset `offset`.
    public let bytes: UnsafeRawBufferPointer
    public let offset: Int64
    /// No more bytes will come after these.
    public let isEndOfStream: Bool
    /// The driver can jump backwards (random access); a push stream cannot.
    public let canSeek: Bool
    /// The caller wants packets (the push path). AudioFile's open wants only properties,
    /// so a parser may skip the audio data.
    public let wantsPackets: Bool
    /// Size of the whole source, when known.
    public let sourceSize: Int64?
    /// Reads bytes out of order, when the source allows it: always for AudioFile, and for
    /// AudioFileStream only when its caller gave a ``ByteRangeFetcher`` (HTTP Range). A
    /// parser that needs data from elsewhere (an MP4 `moov` after `mdat`) calls it, and
    /// answers 'optm' when it is nil.
    public let fetch: ByteRangeFetcher?

    public init(bytes: UnsafeRawBufferPointer, offset: Int64, isEndOfStream: Bool, canSeek: Bool,
                wantsPackets: Bool, sourceSize: Int64?, fetch: ByteRangeFetcher? = nil)
    {
        self.fetch = fetch
        self.bytes = bytes
        self.offset = offset
        self.isEndOfStream = isEndOfStream
        self.canSeek = canSeek
        self.wantsPackets = wantsPackets
        self.sourceSize = sourceSize
    }

    public var count: Int { bytes.count }
    /// Absolute offset one past the last available byte.
    public var endOffset: Int64 { offset + Int64(bytes.count) }

    /// A reader over a copy of the first `count` bytes, or nil when fewer are available.
    public func reader(_ count: Int) -> ByteReader? {
        guard count >= 0, count <= bytes.count else { return nil }
        return ByteReader(Array(UnsafeRawBufferPointer(rebasing: bytes[0..<count])))
    }
}

/// Reads `count` bytes at an absolute offset (fewer only at the end of the data).
public typealias ByteRangeFetcher = (_ offset: Int64, _ count: Int) throws(AudioError) -> [UInt8]

/// Reads bytes at an absolute offset into the caller's memory and returns how many it read
/// (fewer only at the end of the data): the random-access path's reader, which allocates nothing.
public typealias ByteRangeReader = (_ offset: Int64, _ into: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int

extension Array where Element == UInt8 {
    /// Appends the `count` bytes at `offset`, read through `read`; -39 (`.endOfFile`) when
    /// the data ends before them.
    package mutating func append(_ count: Int, bytesAt offset: Int64, from read: ByteRangeReader) throws(AudioError) {
        let old = self.count
        append(zeros: count)
        let got = try withMutableBytes { (raw) throws(AudioError) in
            try read(offset, UnsafeMutableRawBufferPointer(rebasing: raw[old...]))
        }
        guard got == count else { throw AudioError(.endOfFile, "the file ends inside packet data") }
    }
}

/// A parser's answer to one step.
public enum ParseStep: Equatable {
    /// Nothing can be done until more bytes arrive (or, at the end of the stream, ever).
    case needMore
    /// The first `n` bytes were used up. `n` may be 0 when the parser only changed state.
    case consume(Int)
    /// The first `byteCount` bytes hold `packetCount` whole packets; hand them on and consume them.
    /// Descriptions, when given, have offsets relative to the first of these bytes.
    case packets(byteCount: Int, packetCount: Int, descriptions: [PacketDescription]?)
    /// Packets the parser put together itself (an Ogg packet that spans pages): handed on
    /// as they are, using up no input bytes (the parser consumed the pieces as it read them).
    /// Descriptions have offsets relative to the start of `data`.
    case ownedPackets(data: [UInt8], descriptions: [PacketDescription])
    /// Go on at this absolute offset: forward skips work on every path, backward only with `canSeek`.
    case seek(to: Int64)
    /// Nothing after this point matters.
    case finished
}

/// One incremental parser per format family: a state machine fed with bytes in order,
/// serving both ``AudioFileStream`` (push) and ``AudioFile`` (random access).
public protocol FormatParser: AnyObject {
    /// What the parser has learnt so far.
    var properties: FileProperties { get }
    /// True once the parser can hand out packets ('redy').
    var isReady: Bool { get }
    /// Properties that became known since the driver last looked; the driver drains it
    /// and tells the listener, in this order.
    var pendingNotifications: [AudioFilePropertyID] { get set }

    /// Looks at the available bytes and says what it used.
    func step(_ input: ParserInput) throws(AudioError) -> ParseStep

    /// After a seek: the next bytes begin at absolute `offset`, which lies in the audio data
    /// at a packet boundary that ``byteOffset(ofPacket:)`` gave.
    func resume(at offset: Int64) throws(AudioError)

    /// The byte offset of a packet relative to the data offset, and whether it is an
    /// estimate. The default answers from constant packet sizes, the packet table, or the
    /// average packet size; a format with better knowledge (a Xing TOC) overrides it.
    func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool)

    /// Where to read on from, relative to the data offset, so that the packet holding a
    /// frame comes out first or among the first: `frame` counts presentation frames (0 is
    /// the first frame played, after the priming). A format that can search the source
    /// (Ogg's granule bisection) uses `fetch`; the default goes through the packet.
    func byteOffset(ofFrame frame: Int64, fetch: ByteRangeFetcher?, sourceSize: Int64?) throws(AudioError)
        -> (offset: Int64, isEstimated: Bool)

    /// Reads packets whose bytes do not lie together in the file (Ogg packets that span
    /// pages, Matroska's PCM frames and stripped headers, MPEG-TS payloads) into the caller's
    /// arrays, replacing what they held but keeping their storage: `data` the packets back to
    /// back, `descriptions` their places relative to its start. Returns false, touching
    /// neither, to let ``AudioFile`` read them from the packet table as one byte range.
    func readPackets(startingAt start: Int64, count: Int, into data: inout [UInt8],
                     descriptions: inout [PacketDescription], read: ByteRangeReader) throws(AudioError) -> Bool
}

extension FormatParser {
    /// Packets lie in the file as the packet table says: AudioFile reads them itself.
    public func readPackets(startingAt start: Int64, count: Int, into data: inout [UInt8],
                            descriptions: inout [PacketDescription], read: ByteRangeReader) throws(AudioError) -> Bool
    {
        false
    }

    /// The packet that holds the frame (after the priming the packet table info gives), then
    /// its offset.
    public func byteOffset(ofFrame frame: Int64, fetch: ByteRangeFetcher?, sourceSize: Int64?) throws(AudioError)
        -> (offset: Int64, isEstimated: Bool)
    {
        guard frame >= 0 else { throw AudioError(.invalidPacketOffset, "frame \(frame) is negative") }
        let p = properties
        let priming = Int64(p.packetTableInfo?.primingFrames ?? 0)
        let (packet, _) = try PropertyValue.frameToPacket(frame + priming, properties: p)
        return try byteOffset(ofPacket: packet)
    }

    /// The byte offset of a packet relative to the data offset, and whether it is estimated.
    /// Exact for constant-size packets and for formats with a packet table.
    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        try properties.byteOffset(ofPacket: packet)
    }
}

extension FileProperties {
    /// The byte offset of a packet relative to the data offset, from what the properties
    /// hold: exact for constant-size packets and a packet table, else estimated from the
    /// average packet size.
    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        let p = self
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        if let f = p.dataFormat, f.bytesPerPacket > 0 {
            if let count = p.audioDataPacketCount, packet > count {
                throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(count))")
            }
            return (packet * Int64(f.bytesPerPacket), false)
        }
        if let table = p.packetTable {
            if packet < table.count { return (table[Int(packet)].startOffset, false) }
            if packet == table.count, let last = table.last { return (last.startOffset + Int64(last.dataByteSize), false) }
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(table.count))")
        }
        if let bytes = p.audioDataByteCount, let packets = p.audioDataPacketCount, packets > 0 {
            return (Int64(saturating: (Double(bytes) / Double(packets) * Double(packet)).rounded(.down)), true)
        }
        throw AudioError(.valueUnknown, "the packet size is not known yet")
    }
}

/// Helpers for parsers that keep their properties in a stored `FileProperties`.
public protocol PropertyStoringParser: FormatParser {
    var properties: FileProperties { get set }
    var isReady: Bool { get set }
}

extension PropertyStoringParser {
    /// Sets a property and queues its notification.
    public func set<T>(_ keyPath: WritableKeyPath<FileProperties, T>, _ value: T, _ id: AudioFilePropertyID) {
        properties[keyPath: keyPath] = value
        pendingNotifications.append(id)
    }

    /// Announces every known property in `order`, then 'redy'.
    public func becomeReady(announcing order: [AudioFilePropertyID] = FileProperties.pcmAnnouncementOrder) {
        guard !isReady else { return }
        let p = properties
        for id in order {
            let known: Bool
            switch id {
            case .fileFormat, .dataOffset: known = true
            case .dataFormat: known = p.dataFormat != nil
            case .formatList: known = p.formatList != nil
            case .magicCookieData: known = p.magicCookie != nil
            case .channelLayout: known = p.channelLayout != nil
            case .infoDictionary: known = !p.info.isEmpty
            case .packetTableInfo: known = p.packetTableInfo != nil
            case .audioDataByteCount: known = p.audioDataByteCount != nil
            case .audioDataPacketCount: known = p.audioDataPacketCount != nil
            case .bitRate: known = p.bitRate != nil
            case .maximumPacketSize: known = p.maximumPacketSize != nil
            default: known = false
            }
            if known { pendingNotifications.append(id) }
        }
        isReady = true
        pendingNotifications.append(.readyToProducePackets)
    }
}

extension FileProperties {
    /// The order in which the PCM-family parsers announce what they know before 'redy'.
    public static let pcmAnnouncementOrder: [AudioFilePropertyID] = [
        .fileFormat, .dataFormat, .magicCookieData, .channelLayout, .infoDictionary, .packetTableInfo,
        .audioDataByteCount, .audioDataPacketCount, .bitRate, .dataOffset, .maximumPacketSize,
    ]
}

/// The audio data of a format whose packets all have the same size, cut into whole packets.
///
/// `end` is nil when the data runs to the end of the stream.
public struct ConstantPacketRegion: Sendable {
    public var start: Int64
    public var end: Int64?
    public var bytesPerPacket: Int

    public init(start: Int64, end: Int64?, bytesPerPacket: Int) {
        self.start = start
        self.end = end
        self.bytesPerPacket = bytesPerPacket
    }

    /// The step for bytes that lie in this region, or nil when `input` is past the end.
    /// Without `wantsPackets`, skips to the end (or finishes when the end is unknown).
    public func step(_ input: ParserInput) -> ParseStep? {
        if let end, input.offset >= end { return nil }
        guard input.wantsPackets else {
            if let end { return .seek(to: end) }
            return .finished
        }
        var available = Int64(input.count)
        if let end { available = min(available, end - input.offset) }
        // Stay on packet boundaries relative to the region's start.
        let misalign = Int((input.offset - start) % Int64(bytesPerPacket))
        if misalign != 0 {
            let drop = bytesPerPacket - misalign
            if available >= Int64(drop) { return .consume(drop) }
            if input.isEndOfStream { return available > 0 ? .consume(Int(available)) : .finished }
            return .needMore
        }
        let packets = Int(available / Int64(bytesPerPacket))
        if packets > 0 {
            return .packets(byteCount: packets * bytesPerPacket, packetCount: packets, descriptions: nil)
        }
        // A partial packet: wait for the rest, or drop it at the end of the data.
        if input.isEndOfStream || (end != nil && input.offset + available == end!) {
            if available > 0 { return .consume(Int(available)) }
            return input.isEndOfStream ? .finished : .needMore
        }
        return .needMore
    }
}

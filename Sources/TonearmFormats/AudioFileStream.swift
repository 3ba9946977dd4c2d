import TonearmCore

/// A push parser for audio files and streams, as Apple's `AudioFileStream` (seed 000).
///
/// Feed it the bytes of a file in order, in chunks of any size. It calls the property
/// listener as it learns each property, then the packets handler with whole packets.
///
/// ```swift
/// let stream = AudioFileStream(fileTypeHint: .wave,
///     propertyListener: { stream, id, flags in
///         if id == .readyToProducePackets { print(try! stream.dataFormat) }
///     },
///     packets: { bytes, packets, data, descriptions in
///         // hand the packets to a decoder or a queue
///     })
/// try stream.parse(chunk)
/// try stream.parse(nil)   // end of stream
/// ```
public final class AudioFileStream {
    /// Flags passed to and from the property listener, as `AudioFileStreamPropertyFlags`.
    public struct PropertyFlags: OptionSet, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// kAudioFileStreamPropertyFlag_PropertyIsCached: the value can be read later.
        public static let propertyIsCached = Self(rawValue: 1)
        /// kAudioFileStreamPropertyFlag_CacheProperty: the listener asks for the value to be kept.
        public static let cacheProperty = Self(rawValue: 2)
    }

    /// Flags for `parse`, as `AudioFileStreamParseFlags`.
    public struct ParseFlags: OptionSet, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// kAudioFileStreamParseFlag_Discontinuity: these bytes do not follow the previous ones.
        public static let discontinuity = Self(rawValue: 1)
    }

    /// Flags of a seek result, as `AudioFileStreamSeekFlags`.
    public struct SeekFlags: OptionSet, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// kAudioFileStreamSeekFlag_OffsetIsEstimated.
        public static let offsetIsEstimated = Self(rawValue: 1)
    }

    /// `AudioFileStream_PropertyListenerProc`: the stream, the property found, and flags.
    public typealias PropertyListener = (AudioFileStream, AudioFilePropertyID, inout PropertyFlags) -> Void
    /// `AudioFileStream_PacketsProc`: byte count, packet count, the packets' bytes, and their
    /// descriptions (nil for constant-size packets such as PCM, as on Apple).
    public typealias PacketsHandler = (_ numberBytes: Int, _ numberPackets: Int, _ data: UnsafeRawBufferPointer,
                                       _ descriptions: [PacketDescription]?) -> Void

    private let hint: AudioFileTypeID?
    private let propertyListener: PropertyListener
    private let packetsHandler: PacketsHandler
    private var driver: ParserDriver?
    /// The bytes kept while the type is not known yet, from file offset `probeBase`.
    private var probeBuffer: [UInt8] = []
    /// File offset of `probeBuffer[0]`: 0, or the end of a run of leading ID3v2 tags longer
    /// than ``FormatRegistry/maximumHeldTagBytes``, whose bytes were dropped.
    private var probeBase: Int64 = 0
    /// File offset of the next byte to arrive while probing.
    private var probeReceived: Int64 = 0
    /// Where the next leading ID3v2 tag may begin; nil once the bytes after the tags began
    /// (at `contentStart`).
    private var tagScan: Int64? = 0
    private var contentStart: Int64 = 0
    private var closed = false
    /// Where the bytes after the next discontinuity begin, as the last seek computed it.
    private var pendingSeekOffset: Int64?

    /// Opens a stream parser (`AudioFileStreamOpen`).
    /// - Parameters:
    ///   - fileTypeHint: the type when known (from a MIME type or extension); nil to probe the bytes.
    public init(fileTypeHint: AudioFileTypeID? = nil, propertyListener: @escaping PropertyListener,
                packets: @escaping PacketsHandler)
    {
        hint = fileTypeHint
        self.propertyListener = propertyListener
        packetsHandler = packets
    }

    /// Reads a byte range out of order, e.g. with an HTTP Range request. With it, a file that
    /// keeps its index after the audio (an MP4 whose `moov` follows `mdat`) still plays;
    /// without it, such a file answers 'optm', as Apple's parser does.
    public var byteRangeFetcher: ByteRangeFetcher? {
        didSet { driver?.fetch = byteRangeFetcher }
    }

    /// The size of the whole stream in bytes, when the caller knows it (an HTTP
    /// Content-Length). With the ``byteRangeFetcher`` it lets a parser read an index kept at
    /// the end (a fragmented MP4's `mfra`), so that seeks ahead land on a fragment.
    public var sourceSize: Int64?

    /// The parser, once the file type is known.
    var parser: FormatParser? { driver?.parser }

    /// Parses the next bytes of the stream (`AudioFileStreamParseBytes`). Pass nil at the end
    /// of the stream to flush the last packets.
    public func parse(_ bytes: UnsafeRawBufferPointer?, flags: ParseFlags = []) throws(AudioError) {
        guard !closed else { throw AudioError(.illegalOperation, "the stream is closed") }
        try parseUnchecked(bytes, flags: flags)
    }

    /// Parses bytes from an array.
    public func parse(_ bytes: [UInt8], flags: ParseFlags = []) throws(AudioError) {
        try bytes.withBytes { raw throws(AudioError) in try parse(raw, flags: flags) }
    }

    /// Parses bytes from an array slice.
    public func parse(_ bytes: ArraySlice<UInt8>, flags: ParseFlags = []) throws(AudioError) {
        try bytes.withBytes { raw throws(AudioError) in try parse(raw, flags: flags) }
    }

    private func parseUnchecked(_ bytes: UnsafeRawBufferPointer?, flags: ParseFlags) throws(AudioError) {
        let endOfStream = bytes == nil
        let input = bytes ?? UnsafeRawBufferPointer(start: nil, count: 0)
        if let driver {
            if flags.contains(.discontinuity) {
                let target = pendingSeekOffset ?? (driver.offset + Int64(driver.bufferedCount))
                pendingSeekOffset = nil
                driver.restart(at: target)
                if driver.parser.isReady { try driver.parser.resume(at: target) }
            }
            try driver.push(input, endOfStream: endOfStream, sourceSize: sourceSize)
            return
        }
        // Still probing: collect the first bytes until the type is known.
        switch probe(input, endOfStream: endOfStream) {
        case .needMore:
            return
        case .noMatch:
            probeBuffer.removeAll()
            throw AudioError(.unsupportedFileType, "the data is not in any format Tonearm knows")
        case .match(let type):
            let parser = try FormatRegistry.makeParser(for: type)
            let d = ParserDriver(parser: parser)
            d.fetch = byteRangeFetcher
            d.onProperty = { [unowned self] id in
                var flags: PropertyFlags = [.propertyIsCached]
                propertyListener(self, id, &flags)
            }
            d.onPackets = { [unowned self] data, count, descriptions in
                packetsHandler(data.count, count, data, descriptions)
            }
            driver = d
            // After a run of tags too long to hold, the parser starts where the run ends.
            if probeBase > 0 { d.restart(at: probeBase) }
            let first = probeBuffer
            probeBuffer = []
            try first.withBytes { raw throws(AudioError) in try d.push(raw, endOfStream: endOfStream, sourceSize: sourceSize) }
        }
    }

    /// Collects the first bytes and identifies the type: ID3v2 tags at the start are passed
    /// by their sizes (held up to ``FormatRegistry/maximumHeldTagBytes``, dropped beyond),
    /// and the bytes after them are probed.
    private func probe(_ input: UnsafeRawBufferPointer, endOfStream: Bool) -> ProbeResult {
        let start = probeReceived
        probeReceived += Int64(input.count)
        if probeReceived > probeBase {
            probeBuffer.append(contentsOf: input[Int(max(0, probeBase - start))...])
        }
        while let at = tagScan {
            let rel = Int(at - probeBase)
            let bytes = probeBuffer[min(rel, probeBuffer.count)...]
            if rel > probeBuffer.count && !endOfStream { return .needMore }
            switch FormatRegistry.leadingTag(bytes, isEndOfStream: endOfStream) {
            case .needMore:
                return .needMore
            case .none:
                tagScan = nil
                contentStart = min(at, probeBase + Int64(probeBuffer.count))
            case .tag(let total):
                let end = at + total
                tagScan = end
                if end > FormatRegistry.maximumHeldTagBytes {
                    // Too long to hold: drop what came of it, and the rest as it arrives.
                    let held = end - probeBase
                    probeBuffer = held < Int64(probeBuffer.count) ? Array(probeBuffer[Int(held)...]) : []
                    probeBase = end
                }
            }
        }
        let content = probeBuffer[Int(contentStart - probeBase)...]
        return FormatRegistry.identify(content: content, afterTags: contentStart > 0,
                                       isEndOfStream: endOfStream, hint: hint, pathExtension: nil, mimeType: nil)
    }

    /// The byte offset of a packet, relative to the data offset (`AudioFileStreamSeek`).
    ///
    /// Read on from `dataOffset + byteOffset` and pass `.discontinuity` with the first bytes.
    public func seek(toPacket packet: Int64) throws(AudioError) -> (byteOffset: Int64, flags: SeekFlags) {
        guard let parser, parser.isReady, let dataOffset = parser.properties.dataOffset else {
            throw AudioError(.dataUnavailable, "the stream has not reached its audio data yet")
        }
        let (offset, estimated) = try parser.byteOffset(ofPacket: packet)
        pendingSeekOffset = dataOffset + offset
        return (offset, estimated ? .offsetIsEstimated : [])
    }

    /// The byte offset, relative to the data offset, to read on from to reach a frame: a
    /// time × the sample rate, 0 being the first frame played (after the priming).
    ///
    /// The packets that come out after `.discontinuity` begin with the one that holds the
    /// frame or one shortly before it (an Ogg page's first packet). Exact where the format
    /// has a table, and for Ogg when the stream has a ``byteRangeFetcher`` and a
    /// ``sourceSize`` (granule bisection, about log2(size / 64 KiB) reads); otherwise flagged
    /// as estimated.
    public func seek(toFrame frame: Int64) throws(AudioError) -> (byteOffset: Int64, flags: SeekFlags) {
        guard let parser, parser.isReady, let dataOffset = parser.properties.dataOffset else {
            throw AudioError(.dataUnavailable, "the stream has not reached its audio data yet")
        }
        let (offset, estimated) = try parser.byteOffset(ofFrame: frame, fetch: byteRangeFetcher, sourceSize: sourceSize)
        pendingSeekOffset = dataOffset + offset
        return (offset, estimated ? .offsetIsEstimated : [])
    }

    /// The byte offset of a packet and whether it is estimated, in Swift's shape.
    public func seekOffset(toPacket packet: Int64) throws(AudioError) -> (byteOffset: Int64, isEstimated: Bool) {
        let r = try seek(toPacket: packet)
        return (r.byteOffset, r.flags.contains(.offsetIsEstimated))
    }

    /// The properties learnt so far.
    public var properties: FileProperties? { parser?.properties }
    public var isReadyToProducePackets: Bool { parser?.isReady ?? false }

    /// The size of a property's value in bytes, as Apple reports it, and whether it can be written
    /// (never, on a stream) (`AudioFileStreamGetPropertyInfo`).
    public func propertyInfo(_ id: AudioFilePropertyID) throws(AudioError) -> (size: Int, isWritable: Bool) {
        let value = try property(id)
        return (value.byteSize, false)
    }

    /// A property's value (`AudioFileStreamGetProperty`). Answers 'unk?' while the value is not
    /// known yet, and 'pty?' for a property that does not apply.
    public func property(_ id: AudioFilePropertyID) throws(AudioError) -> PropertyValue {
        guard let parser else {
            if id == .readyToProducePackets { return .uint32(0) }
            throw AudioError(.valueUnknown, "\(id) is not known yet")
        }
        return try PropertyValue.lookup(id, properties: parser.properties, isReady: parser.isReady, parser: parser)
    }

    /// Setting a property is not allowed on a stream (`AudioFileStreamSetProperty`): 'nope'.
    public func setProperty(_ id: AudioFilePropertyID, _ value: PropertyValue) throws(AudioError) {
        throw AudioError(.illegalOperation, "stream properties cannot be set")
    }

    // MARK: Typed accessors
    //
    // The same names and types as AudioFile's. A value every file has is `T { get throws }`;
    // one a file may lack (layout, cookie, packet table info) is `T? { get throws }`: nil
    // once the stream is ready and the file has none, 'unk?' while it may still come.
    // Throwing means "cannot answer now", never "this file has none".

    /// The file's type ('ffmt', kAudioFileStreamProperty_FileFormat, an `AudioFileTypeID`).
    /// Named for its value's type, as ``AudioFile/fileType`` and the `fileTypeHint:` and
    /// `type:` parameters are: Apple calls the property FileFormat, but in Swift a "file
    /// format" reads as the data format (AVAudioFile's `fileFormat` is an AVAudioFormat).
    public var fileType: AudioFileTypeID { get throws(AudioError) { try property(.fileFormat).fileType() } }
    @available(*, deprecated, renamed: "fileType")
    public var fileFormat: AudioFileTypeID { get throws(AudioError) { try fileType } }
    public var dataFormat: StreamDescription { get throws(AudioError) { try property(.dataFormat).streamDescription() } }
    public var dataOffset: Int64 { get throws(AudioError) { try property(.dataOffset).int64() } }
    public var audioDataByteCount: Int64 { get throws(AudioError) { try property(.audioDataByteCount).int64() } }
    public var audioDataPacketCount: Int64 { get throws(AudioError) { try property(.audioDataPacketCount).int64() } }
    public var maximumPacketSize: UInt32 { get throws(AudioError) { try property(.maximumPacketSize).uint32() } }
    public var bitRate: UInt32 { get throws(AudioError) { try property(.bitRate).uint32() } }
    /// Seconds of audio, from the valid frames ('edur'), as ``AudioFile/estimatedDuration``;
    /// 'unk?' while the frame count is not known.
    public var estimatedDuration: Double { get throws(AudioError) { try property(.estimatedDuration).double() } }
    /// The magic cookie; nil once ready when the file has none (Apple's 'pty?').
    public var magicCookie: [UInt8]? {
        get throws(AudioError) { try optionalProperty(.magicCookieData) { v throws(AudioError) in try v.data() } }
    }
    /// The channel layout; nil once ready when the file gives none.
    public var channelLayout: ChannelLayout? {
        get throws(AudioError) { try optionalProperty(.channelLayout) { v throws(AudioError) in try v.channelLayout() } }
    }
    /// Priming and remainder frames; nil once ready when the file gives none.
    public var packetTableInfo: PacketTableInfo? {
        get throws(AudioError) { try optionalProperty(.packetTableInfo) { v throws(AudioError) in try v.packetTableInfo() } }
    }
    public var infoDictionary: InfoDictionary { get throws(AudioError) { try property(.infoDictionary).info() } }

    /// PacketToFrame ('pkfr'): the first frame of a packet.
    public func frame(forPacket packet: Int64) throws(AudioError) -> Int64 {
        try PropertyValue.packetToFrame(packet, properties: try requireParser().properties)
    }
    /// FrameToPacket ('frpk'): the packet holding a frame, and the frame's offset in it.
    public func packet(forFrame frame: Int64) throws(AudioError) -> (packet: Int64, frameOffsetInPacket: Int64) {
        try PropertyValue.frameToPacket(frame, properties: try requireParser().properties)
    }
    /// PacketToByte ('pkby').
    public func byte(forPacket packet: Int64) throws(AudioError) -> (byte: Int64, isEstimated: Bool) {
        let r = try requireParser().byteOffset(ofPacket: packet)
        return (r.offset, r.isEstimated)
    }
    /// ByteToPacket ('bypk').
    public func packet(forByte byte: Int64) throws(AudioError) -> (packet: Int64, byteOffsetInPacket: Int64, isEstimated: Bool) {
        try PropertyValue.byteToPacket(byte, properties: try requireParser().properties)
    }

    /// PreviousIndependentPacket ('pind'): the packet at or before this one where decoding can start.
    public func previousIndependentPacket(_ packet: Int64) throws(AudioError) -> Int64 {
        try PropertyValue.independentPacket(packet, next: false, properties: try requireParser().properties)
    }
    /// NextIndependentPacket ('nind').
    public func nextIndependentPacket(_ packet: Int64) throws(AudioError) -> Int64 {
        try PropertyValue.independentPacket(packet, next: true, properties: try requireParser().properties)
    }
    /// PacketToRollDistance ('pkrl'): the packets before this one that must be decoded for
    /// its output to be right. It depends on the packet, and is never more than the packets
    /// before it (0 for packet 0):
    /// - Opus: the packets of the 80 ms before it (RFC 7845 §4.6), from each one's duration;
    /// - MP3: the frames that hold the bit reservoir (511 bytes of main data for MPEG-1, 255
    ///   for MPEG-2) of the packet before it, plus that packet, from the packet sizes;
    /// - MP1 2, MP2 1 (the synthesis filter's history); AAC, AC-3 and Vorbis 1 (the
    ///   transform's overlap), or an MP4 file's own 'roll' group;
    /// - PCM, FLAC, ALAC and the other formats whose packets decode alone: 0.
    ///
    /// Without the sizes or durations of the packets before (a stream keeps no packet
    /// table), the answer is a bound: for MP3 the reservoir over the smallest frames the
    /// stream's rate allows (9 at 44.1 kHz stereo), for Opus 4 (packets of 20 ms, the usual).
    /// - Throws: 'pck?' for a negative packet or one past the last.
    public func rollDistance(forPacket packet: Int64) throws(AudioError) -> Int64 {
        try PropertyValue.rollDistance(forPacket: packet, properties: try requireParser().properties)
    }

    /// A property the file may lack: 'pty?' (ready, and the file has none) is nil.
    private func optionalProperty<T>(_ id: AudioFilePropertyID, _ value: (PropertyValue) throws(AudioError) -> T)
        throws(AudioError) -> T?
    {
        do throws(AudioError) {
            return try value(property(id))
        } catch {
            if error.code == .unsupportedProperty { return nil }
            throw error
        }
    }

    private func requireParser() throws(AudioError) -> FormatParser {
        guard let parser, parser.isReady else { throw AudioError(.valueUnknown, "the stream has not reached its audio data yet") }
        return parser
    }

    /// Closes the stream (`AudioFileStreamClose`). Later calls answer 'nope'.
    public func close() {
        closed = true
        driver = nil
    }
}

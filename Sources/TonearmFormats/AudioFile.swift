import TonearmCore

/// Random-access reading and writing of audio files, as Apple's `AudioFile` (seeds 001 and 003).
///
/// ```swift
/// let file = try AudioFile(path: "speech.wav")
/// let format = try file.dataFormat             // 1 ch, 16000 Hz, 'lpcm' …
/// let packets = try file.audioDataPacketCount
/// let (data, _) = try file.readPacketData(startingAt: 0, count: 4096)
/// file.close()
/// ```
///
/// Opening reads the file with the same incremental parser that ``AudioFileStream`` uses,
/// skipping over the audio data, so every property is known after `init`.
public final class AudioFile {
    /// Apple's `AudioFilePermissions`.
    public struct Permissions: OptionSet, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// kAudioFileReadPermission.
        public static let read = Self(rawValue: 1)
        /// kAudioFileWritePermission.
        public static let write = Self(rawValue: 2)
        /// kAudioFileReadWritePermission.
        public static let readWrite: Self = [.read, .write]
    }

    /// Apple's `AudioFileFlags` for `create`.
    public struct CreateFlags: OptionSet, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// kAudioFileFlags_EraseFile: replace an existing file; without it, an existing file is an error.
        public static let eraseFile = Self(rawValue: 1)
        /// kAudioFileFlags_DontPageAlignAudioData (Tonearm never pads, so this changes nothing).
        public static let dontPageAlignAudioData = Self(rawValue: 2)
    }

    public let path: String?
    private let source: MediaSource?
    private var parser: FormatParser?
    private var isOpen = true

    // Writing
    private var handle: POSIXFile?
    private var writer: FormatWriter?
    private var writerState: WriterState?
    private var headerWritten = false

    /// Opens a file (`AudioFileOpenURL`).
    ///
    /// With `.readWrite` (or `.write`), an existing WAVE (RF64, BW64), AIFF, AIFC or CAF file
    /// is opened to be updated in place, as Apple's AudioFile does: packets can be appended
    /// (``writePackets(_:count:descriptions:startingAt:)`` at `audioDataPacketCount`),
    /// constant-size packets rewritten anywhere before the end, raw bytes written with
    /// ``writeBytes(startingAt:data:)``, and the info dictionary and markers set. `close()`
    /// fixes the size fields and writes the metadata after the audio again; chunks after the
    /// audio that Tonearm does not write (anything but that metadata and CAF's packet table)
    /// are dropped. Reads see the file as it was opened. Other types answer 'prm?'; an AIFF
    /// whose COMM chunk follows the sound data answers 'optm', as it cannot grow.
    /// - Parameters:
    ///   - permissions: `.read`, or `.readWrite` to update the file.
    ///   - fileTypeHint: the type to assume when the first bytes match no known magic.
    public convenience init(path: String, permissions: Permissions = .read, fileTypeHint: AudioFileTypeID? = nil) throws(AudioError) {
        let source = try FileSource(path: path)
        try self.init(source: source, fileTypeHint: fileTypeHint, path: path)
        if permissions.contains(.write) { try openForUpdate(path: path) }
    }

    /// Turns a file opened for reading into one being updated: a writer for its type takes
    /// over the layout the parser found.
    private func openForUpdate(path: String) throws(AudioError) {
        let p = try properties
        guard let format = p.dataFormat, let dataOffset = p.dataOffset,
              let info = FormatRegistry.info(for: p.fileType), let make = info.makeWriter,
              [.wave, .rf64, .bw64, .aiff, .aifc, .caf].contains(p.fileType)
        else {
            throw AudioError(.permissions, "Tonearm can update WAVE, AIFF, AIFC and CAF files in place, not \(p.fileType); open it for reading")
        }
        let writer = try make(format)
        var s = WriterState(fileType: p.fileType, format: format)
        s.channelLayout = p.channelLayout
        s.magicCookie = p.magicCookie
        s.info = p.info
        s.packetTableInfo = p.packetTableInfo
        s.markers = p.markers
        s.dataOffset = dataOffset
        s.dataByteCount = p.audioDataByteCount ?? 0
        s.packetCount = p.audioDataPacketCount ?? 0
        if format.bytesPerPacket > 0 {
            // Bytes past the last whole packet (a cut file) are overwritten by the next packet.
            s.dataByteCount = s.packetCount * Int64(format.bytesPerPacket)
        } else {
            s.packetDescriptions = p.packetTable ?? []
            if let last = s.packetDescriptions.last { s.dataByteCount = last.startOffset + Int64(last.dataByteSize) }
        }
        let handle = try POSIXFile(path: path, mode: .readWrite)
        let header = try source!.read(at: 0, count: Int(dataOffset))
        do throws(AudioError) {
            try writer.adopt(header: header, state: s, handle: handle)
        } catch {
            handle.closeNow()
            throw error
        }
        self.handle = handle
        self.writer = writer
        writerState = s
        headerWritten = true
    }
    /// Opens a file from any seekable source (`AudioFileOpenWithCallbacks`).
    public convenience init(source: MediaSource, fileTypeHint: AudioFileTypeID? = nil) throws(AudioError) {
        try self.init(source: source, fileTypeHint: fileTypeHint, path: nil)
    }

    private init(source: MediaSource, fileTypeHint: AudioFileTypeID?, path: String?) throws(AudioError) {
        guard source.isSeekable else { throw AudioError(.illegalOperation, "AudioFile needs a seekable source; use AudioFileStream") }
        self.source = source
        self.path = path
        let type: AudioFileTypeID
        switch try FormatRegistry.identify(source: source, hint: fileTypeHint) {
        case nil: throw AudioError(.unsupportedFileType, "the file is empty")
        case .match(let t)?: type = t
        case .needMore?, .noMatch?: throw AudioError(.unsupportedFileType, "not an audio file Tonearm can read")
        }
        let parser = try FormatRegistry.makeParser(for: type)
        let driver = ParserDriver(parser: parser)
        try driver.pull(from: source, wantsPackets: false)
        guard parser.isReady else { throw AudioError(.invalidFile, "the file has no audio data") }
        self.parser = parser
    }

    /// Creates a new file for writing (`AudioFileCreateWithURL`).
    ///
    /// An existing file at `path` is an error ('prm?') unless `flags` has `.eraseFile`, as
    /// Apple's flags mean; ``ExtAudioFile``'s `create` takes the same flags, with the same
    /// default.
    ///
    /// Set the channel layout, magic cookie and info dictionary with `setProperty` before
    /// or while writing; `close()` writes the final sizes and the metadata.
    public static func create(path: String, type: AudioFileTypeID, format: StreamDescription,
                              flags: CreateFlags = []) throws(AudioError) -> AudioFile
    {
        guard let info = FormatRegistry.info(for: type), let make = info.makeWriter else {
            throw AudioError(.unsupportedFileType, "Tonearm cannot write \(type) files")
        }
        let writer = try make(format)
        if !flags.contains(.eraseFile) && fileExists(path) {
            throw AudioError(.permissions, "\(path) exists; pass .eraseFile to replace it")
        }
        let handle = try POSIXFile(path: path, mode: .create)
        return AudioFile(handle: handle, writer: writer, state: WriterState(fileType: type, format: format), path: path)
    }

    private init(handle: POSIXFile, writer: FormatWriter, state: WriterState, path: String) {
        self.handle = handle
        self.writer = writer
        writerState = state
        self.path = path
        source = nil
    }

    deinit { if isOpen { try? close() } }

    /// True for a file made by `create` or opened with write permission.
    public var isWriting: Bool { writer != nil }

    /// Everything the parser learnt (reading), or what was set so far (writing).
    public var properties: FileProperties {
        get throws(AudioError) {
            try checkOpen()
            if let parser {
                guard let s = writerState else { return parser.properties }
                // Updating in place: what was written so far counts.
                var p = parser.properties
                p.info = s.info
                p.markers = s.markers
                p.packetTableInfo = s.packetTableInfo
                p.audioDataByteCount = s.dataByteCount
                p.audioDataPacketCount = s.packetCount
                if s.format.bytesPerPacket == 0 { p.packetTable = s.packetDescriptions }
                return p
            }
            let s = writerState!
            var p = FileProperties(fileType: s.fileType)
            p.dataFormat = s.format
            p.channelLayout = s.channelLayout
            p.magicCookie = s.magicCookie
            p.info = s.info
            p.audioDataByteCount = s.dataByteCount
            p.audioDataPacketCount = s.packetCount
            p.dataOffset = headerWritten ? s.dataOffset : nil
            p.packetTableInfo = s.packetTableInfo
            p.markers = s.markers
            return p
        }
    }

    private func checkOpen() throws(AudioError) {
        guard isOpen else { throw AudioError(.notOpen, "the file is closed") }
    }

    // MARK: Properties

    /// A property's value (`AudioFileGetProperty`).
    public func property(_ id: AudioFilePropertyID) throws(AudioError) -> PropertyValue {
        let p = try properties
        if id == .deferSizeUpdates { return .uint32(defersSizeUpdates ? 1 : 0) }
        return try PropertyValue.lookup(id, properties: p, isReady: true, parser: parser)
    }

    /// The size of a property and whether it can be set (`AudioFileGetPropertyInfo`).
    public func propertyInfo(_ id: AudioFilePropertyID) throws(AudioError) -> (size: Int, isWritable: Bool) {
        let value = try property(id)
        return (value.byteSize, isWriting && AudioFile.writableProperties.contains(id))
    }

    static let writableProperties: [AudioFilePropertyID] = [.channelLayout, .magicCookieData, .infoDictionary,
                                                             .packetTableInfo, .markerList, .deferSizeUpdates]

    /// kAudioFilePropertyDeferSizeUpdates. Tonearm defaults to 1 (Apple: 0): the sizes and
    /// the metadata after the audio are written at close, so writing costs nothing extra.
    /// Set 0 and WAVE, AIFF and CAF files are complete after every write (sizes patched,
    /// trailing chunks rewritten), as Apple's default is; other types stay at 1.
    private var defersSizeUpdates = true

    /// Sets a property of a file being written (`AudioFileSetProperty`): the channel layout,
    /// magic cookie, info dictionary, packet table info or markers. Anything else answers 'nope'.
    /// The layout and cookie go into the header, so they must come before the first packet,
    /// except a FLAC file's cookie: an encoder's STREAMINFO is final only after its last
    /// packet, and `close()` writes the cookie set last.
    public func setProperty(_ id: AudioFilePropertyID, _ value: PropertyValue) throws(AudioError) {
        try checkOpen()
        guard var s = writerState else { throw AudioError(.permissions, "the file is open for reading only") }
        switch (id, value) {
        case (.channelLayout, .channelLayout(let l)):
            guard !headerWritten else { throw AudioError(.illegalOperation, "set the channel layout before writing packets") }
            if let n = l.numberOfChannels, n != Int(s.format.channelsPerFrame) {
                throw AudioError(.invalidFile, "a layout of \(n) channels for \(s.format.channelsPerFrame)-channel data")
            }
            s.channelLayout = l
        case (.magicCookieData, .data(let d)):
            guard !headerWritten || writer?.rewritesMagicCookie == true else {
                throw AudioError(.illegalOperation, "set the magic cookie before writing packets")
            }
            s.magicCookie = d
        case (.deferSizeUpdates, .uint32(let v)):
            if v == 0 && writer?.canUpdateSizesEachWrite != true {
                throw AudioError(.operationNotSupported, "\(s.fileType) files get their sizes at close only")
            }
            defersSizeUpdates = v != 0
        case (.infoDictionary, .info(let i)): s.info = i
        case (.packetTableInfo, .packetTableInfo(let t)): s.packetTableInfo = t
        case (.markerList, .markers(let m)): s.markers = m
        case (.channelLayout, _), (.magicCookieData, _), (.infoDictionary, _), (.packetTableInfo, _), (.markerList, _),
             (.deferSizeUpdates, _):
            throw AudioError(.badPropertySize, "the value does not fit property \(id)")
        default:
            throw AudioError(.illegalOperation, "property \(id) cannot be set")
        }
        writerState = s
    }

    // The same names and types as AudioFileStream's: `T { get throws }` for what every file
    // has, `T? { get throws }` for what a file may lack (nil: this file has none). Throwing
    // means the question cannot be answered (a closed file), never that the value is absent.

    /// The file's type ('ffmt', kAudioFilePropertyFileFormat, an `AudioFileTypeID`).
    public var fileType: AudioFileTypeID { get throws(AudioError) { try properties.fileType } }
    public var dataFormat: StreamDescription { get throws(AudioError) { try property(.dataFormat).streamDescription() } }
    public var audioDataPacketCount: Int64 { get throws(AudioError) { try property(.audioDataPacketCount).int64() } }
    public var audioDataByteCount: Int64 { get throws(AudioError) { try property(.audioDataByteCount).int64() } }
    public var dataOffset: Int64 { get throws(AudioError) { try property(.dataOffset).int64() } }
    public var maximumPacketSize: UInt32 { get throws(AudioError) { try property(.maximumPacketSize).uint32() } }
    /// Bits per second ('brat'), as ``AudioFileStream/bitRate``.
    public var bitRate: UInt32 { get throws(AudioError) { try property(.bitRate).uint32() } }
    public var infoDictionary: InfoDictionary { get throws(AudioError) { try properties.info } }
    public var channelLayout: ChannelLayout? { get throws(AudioError) { try properties.channelLayout } }
    public var magicCookie: [UInt8]? { get throws(AudioError) { try properties.magicCookie } }
    public var packetTableInfo: PacketTableInfo? { get throws(AudioError) { try properties.packetTableInfo } }
    /// Seconds of audio, from the valid frames ('edur').
    public var estimatedDuration: Double { get throws(AudioError) { try property(.estimatedDuration).double() } }

    // MARK: Packets, frames and bytes

    /// PacketToFrame ('pkfr'): the first frame of a packet.
    public func frame(forPacket packet: Int64) throws(AudioError) -> Int64 {
        try PropertyValue.packetToFrame(packet, properties: try readableParser().properties)
    }
    /// FrameToPacket ('frpk'): the packet holding a frame, and the frame's offset in it.
    public func packet(forFrame frame: Int64) throws(AudioError) -> (packet: Int64, frameOffsetInPacket: Int64) {
        try PropertyValue.frameToPacket(frame, properties: try readableParser().properties)
    }
    /// PacketToByte ('pkby'): a packet's offset from the data offset; exact wherever the
    /// format has a table (AudioFile reads the whole file's tables when it opens).
    public func byte(forPacket packet: Int64) throws(AudioError) -> (byte: Int64, isEstimated: Bool) {
        let r = try readableParser().byteOffset(ofPacket: packet)
        return (r.offset, r.isEstimated)
    }
    /// ByteToPacket ('bypk').
    public func packet(forByte byte: Int64) throws(AudioError) -> (packet: Int64, byteOffsetInPacket: Int64, isEstimated: Bool) {
        try PropertyValue.byteToPacket(byte, properties: try readableParser().properties)
    }
    /// PreviousIndependentPacket ('pind'): the packet at or before this one where decoding can start.
    public func previousIndependentPacket(_ packet: Int64) throws(AudioError) -> Int64 {
        try PropertyValue.independentPacket(packet, next: false, properties: try readableParser().properties)
    }
    /// NextIndependentPacket ('nind').
    public func nextIndependentPacket(_ packet: Int64) throws(AudioError) -> Int64 {
        try PropertyValue.independentPacket(packet, next: true, properties: try readableParser().properties)
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
        try PropertyValue.rollDistance(forPacket: packet, properties: try readableParser().properties)
    }

    private func readableParser() throws(AudioError) -> FormatParser {
        try checkOpen()
        guard let parser else { throw AudioError(.permissions, "the file is open for writing only") }
        return parser
    }

    // MARK: Reading

    /// Reads whole packets (`AudioFileReadPacketData`).
    ///
    /// Returns fewer packets at the end of the data, and throws -39 (`.endOfFile`) when
    /// `start` is at or past the end. Descriptions are nil for constant-size packets.
    /// A `count` of 0 reads nothing (no data; no descriptions, or an empty array for
    /// variable-size packets).
    public func readPacketData(startingAt start: Int64, count: Int) throws(AudioError)
        -> (data: [UInt8], descriptions: [PacketDescription]?)
    {
        if count == 0 { return ([], try emptyRead(startingAt: start)) }
        var gathered: [UInt8] = [], gatheredDescriptions: [PacketDescription] = []
        if try gatherPackets(startingAt: start, count: count, into: &gathered, descriptions: &gatheredDescriptions) {
            return (gathered, gatheredDescriptions)
        }
        let (range, _, descriptions) = try packetRange(startingAt: start, count: count)
        let data = try source!.read(at: range.lowerBound, count: Int(range.upperBound - range.lowerBound))
        guard Int64(data.count) == range.upperBound - range.lowerBound else {
            throw AudioError(.endOfFile, "the file ends inside packet data")
        }
        return (data, descriptions)
    }

    /// Reads whole packets into arrays the caller keeps from read to read, as
    /// ``readPacketData(startingAt:count:)`` does, but reusing their storage: a reader that
    /// passes the same two arrays each time allocates nothing once they have grown to size.
    /// `data` holds exactly the packets' bytes afterwards; `descriptions` their places for
    /// packets of varying size, and nothing for constant-size packets. Returns the packet
    /// count (fewer at the end of the data); throws -39 (`.endOfFile`) at or past the end.
    public func readPacketData(startingAt start: Int64, count: Int, into data: inout [UInt8],
                               descriptions: inout [PacketDescription]) throws(AudioError) -> Int
    {
        if count == 0 {
            descriptions = try emptyRead(startingAt: start) ?? []
            data.removeAll(keepingCapacity: true)
            return 0
        }
        if try gatherPackets(startingAt: start, count: count, into: &data, descriptions: &descriptions) {
            return descriptions.count
        }
        let (range, n, _) = try packetRange(startingAt: start, count: count, descriptions: &descriptions)
        let want = Int(range.upperBound - range.lowerBound)
        if data.count > want {
            // Array's own removeAll, not the generic removeLast(_:): a debug build allocates
            // the generic's witness tables the first time it shrinks, mid-stream.
            data.removeAll(keepingCapacity: true)
            data.append(zeros: want)
        } else if data.count < want {
            // Room for twice as much, so that reads whose size varies stop growing it soon.
            if data.capacity < want { data.reserveCapacity(2 * want) }
            data.append(zeros: want - data.count)
        }
        let source = source!
        let got = try data.withMutableBytes { (raw) throws(AudioError) in try source.read(at: range.lowerBound, into: raw) }
        guard got == want else { throw AudioError(.endOfFile, "the file ends inside packet data") }
        return n
    }

    /// Reads whole packets into a caller's buffer without allocating the data
    /// (`AudioFileReadPacketData` with `ioNumBytes`); returns the byte and packet counts.
    ///
    /// As Apple's, it reads as many of the packets asked for as fit in the buffer, and says
    /// how many that was. When not even one fits:
    /// - constant-size packets give 0 bytes and 0 packets, no error (Apple's CBR path);
    /// - variable-size packets throw -50 (`.parameter`, kAudio_ParamError), because the
    ///   first packet is larger than the buffer and the caller must grow the buffer to go on
    ///   (Apple's `HowManyPacketsCanBeReadIntoBuffer` answers the same).
    ///
    /// A `count` of 0 reads nothing.
    public func readPacketData(startingAt start: Int64, count: Int, into buffer: UnsafeMutableRawBufferPointer)
        throws(AudioError) -> (bytes: Int, packets: Int, descriptions: [PacketDescription]?)
    {
        if count == 0 { return (0, 0, try emptyRead(startingAt: start)) }
        var gathered: [UInt8] = [], gatheredDescriptions: [PacketDescription] = []
        if try gatherPackets(startingAt: start, count: count, into: &gathered, descriptions: &gatheredDescriptions) {
            let n = AudioFile.packetsFitting(gatheredDescriptions[...], in: buffer.count)
            guard n > 0 else { throw tooSmall(buffer.count, first: gatheredDescriptions.first, packet: start) }
            let fitted = AudioFile.rebased(gatheredDescriptions[0..<n])
            let lo = Int(fitted.lowest)
            gathered.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[lo..<(lo + fitted.bytes)]))
            }
            return (fitted.bytes, n, fitted.descriptions)
        }
        var (range, n, descriptions) = try packetRange(startingAt: start, count: count)
        if range.upperBound - range.lowerBound > Int64(buffer.count) {
            if let f = try properties.dataFormat, f.bytesPerPacket > 0 {
                n = buffer.count / Int(f.bytesPerPacket)
                range = range.lowerBound..<(range.lowerBound + Int64(n) * Int64(f.bytesPerPacket))
                if n == 0 { return (0, 0, nil) }
            } else {
                let table = try parserTable(start: start, count: n)
                n = AudioFile.packetsFitting(table, in: buffer.count)
                guard n > 0 else { throw tooSmall(buffer.count, first: table.first, packet: start) }
                let fitted = AudioFile.rebased(table.prefix(n))
                let lo = try (properties.dataOffset ?? 0) + fitted.lowest
                range = lo..<(lo + Int64(fitted.bytes))
                descriptions = fitted.descriptions
            }
        }
        let want = Int(range.upperBound - range.lowerBound)
        let got = try source!.read(at: range.lowerBound, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
        guard got == want else { throw AudioError(.endOfFile, "the file ends inside packet data") }
        return (want, n, descriptions)
    }

    /// What a read of zero packets gives: nothing, after the same checks as any read
    /// (descriptions are an empty array for variable-size packets, nil otherwise).
    private func emptyRead(startingAt start: Int64) throws(AudioError) -> [PacketDescription]? {
        try checkOpen()
        guard let parser, source != nil else { throw AudioError(.permissions, "the file is open for writing only") }
        guard start >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(start)") }
        if let f = parser.properties.dataFormat, f.bytesPerPacket > 0 { return nil }
        return []
    }

    private func tooSmall(_ size: Int, first: PacketDescription?, packet: Int64) -> AudioError {
        AudioError(.parameter, "the buffer (\(size) bytes) is smaller than packet \(packet) (\(first?.dataByteSize ?? 0) bytes)")
    }

    /// The leading packets of a table (in the order asked for) whose bytes, from the lowest
    /// start to the highest end, fit in `size` bytes.
    static func packetsFitting(_ table: ArraySlice<PacketDescription>, in size: Int) -> Int {
        var lo = Int64.max, hi = Int64.min, n = 0
        for d in table {
            let l = min(lo, d.startOffset), h = max(hi, d.startOffset + Int64(d.dataByteSize))
            if h - l > Int64(size) { break }
            lo = l; hi = h; n += 1
        }
        return n
    }

    /// Descriptions counted from the lowest start among them (`lowest`), and the bytes they span.
    static func rebased(_ table: ArraySlice<PacketDescription>) -> (descriptions: [PacketDescription], bytes: Int, lowest: Int64) {
        var descriptions: [PacketDescription] = []
        let (bytes, lowest) = rebase(table, into: &descriptions)
        return (descriptions, bytes, lowest)
    }

    /// `rebased` into an array the caller keeps (its capacity reused): the table's entries
    /// relative to the lowest start, the bytes from that start to the highest end, and the
    /// lowest start.
    static func rebase(_ table: ArraySlice<PacketDescription>, into descriptions: inout [PacketDescription])
        -> (bytes: Int, lowest: Int64)
    {
        descriptions.removeAll(keepingCapacity: true)
        guard !table.isEmpty else { return (0, 0) }
        // Through a buffer pointer: iterating a slice unspecialised (a debug build) allocates.
        return table.withUnsafeBufferPointer { t in
            var first = Int64.max, end = Int64.min
            for i in 0..<t.count {
                first = min(first, t[i].startOffset)
                end = max(end, t[i].startOffset + Int64(t[i].dataByteSize))
            }
            for i in 0..<t.count {
                descriptions.append(PacketDescription(startOffset: t[i].startOffset - first, variableFramesInPacket: t[i].variableFramesInPacket,
                                                      dataByteSize: t[i].dataByteSize))
            }
            return (Int(end - first), first)
        }
    }

    /// The parser's table entries for packets `start ..< start + count` (offsets from the data offset).
    private func parserTable(start: Int64, count: Int) throws(AudioError) -> ArraySlice<PacketDescription> {
        guard let table = parser?.properties.packetTable, table.count >= Int(start) + count else {
            throw AudioError(.valueUnknown, "the packet table is not known")
        }
        return table[Int(start)..<Int(start) + count]
    }

    /// Packets that the parser reads itself because they do not lie together in the file,
    /// into the caller's arrays; false when they do.
    private func gatherPackets(startingAt start: Int64, count: Int, into data: inout [UInt8],
                               descriptions: inout [PacketDescription]) throws(AudioError) -> Bool
    {
        try checkOpen()
        guard let parser, let source else { throw AudioError(.permissions, "the file is open for writing only") }
        // A closure, not the method reference `source.read(at:into:)`, which would box the
        // existential in a heap context at every call.
        return try parser.readPackets(startingAt: start, count: count, into: &data, descriptions: &descriptions) {
            offset, buffer throws(AudioError) in try source.read(at: offset, into: buffer)
        }
    }

    private func packetRange(startingAt start: Int64, count: Int) throws(AudioError)
        -> (Range<Int64>, Int, [PacketDescription]?)
    {
        var descriptions: [PacketDescription] = []
        let (range, n, variable) = try packetRange(startingAt: start, count: count, descriptions: &descriptions)
        return (range, n, variable ? descriptions : nil)
    }

    /// The bytes of packets `start ..< start + count` (fewer at the end), and for packets of
    /// varying size their descriptions relative to the range's start, in `descriptions`.
    private func packetRange(startingAt start: Int64, count: Int, descriptions: inout [PacketDescription]) throws(AudioError)
        -> (Range<Int64>, Int, variable: Bool)
    {
        try checkOpen()
        guard let parser, source != nil else { throw AudioError(.permissions, "the file is open for writing only") }
        let p = parser.properties
        guard start >= 0, count >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(start), count \(count)") }
        guard let dataOffset = p.dataOffset, let total = p.audioDataPacketCount else {
            throw AudioError(.valueUnknown, "the packet count is not known")
        }
        guard start < total else { throw AudioError(.endOfFile, "packet \(start) is past the last packet (\(total))") }
        let n = Int(min(Int64(count), total - start))
        if let f = p.dataFormat, f.bytesPerPacket > 0 {
            let bpp = Int64(f.bytesPerPacket)
            let lo = dataOffset + start * bpp
            descriptions.removeAll(keepingCapacity: true)
            return (lo..<(lo + Int64(n) * bpp), n, false)
        }
        let slice = try parserTable(start: start, count: n)
        // A table need not be in file order; the range covers every packet asked for.
        let (bytes, lowest) = AudioFile.rebase(slice, into: &descriptions)
        let first = dataOffset + lowest
        return (first..<(first + Int64(bytes)), n, true)
    }

    /// Reads bytes of audio data, counted from the data offset (`AudioFileReadBytes`).
    public func readBytes(startingAt start: Int64, count: Int) throws(AudioError) -> [UInt8] {
        try checkOpen()
        guard let parser, let source else { throw AudioError(.permissions, "the file is open for writing only") }
        guard let dataOffset = parser.properties.dataOffset else { throw AudioError(.valueUnknown, "no data offset") }
        let size = parser.properties.audioDataByteCount ?? Int64.max
        guard start >= 0, count >= 0 else { throw AudioError(.position, "byte \(start), count \(count)") }
        guard start < size else { throw AudioError(.endOfFile, "byte \(start) is past the audio data") }
        let n = Int(min(Int64(count), size - start))
        return try source.read(at: dataOffset + start, count: n)
    }

    // MARK: Writing

    /// Appends packets (`AudioFileWritePackets`). `startingAt` must be the number of packets
    /// written so far. Descriptions are needed when packets vary in size ('!pkd' otherwise).
    public func writePackets(_ data: UnsafeRawBufferPointer, count: Int, descriptions: [PacketDescription]? = nil,
                             startingAt start: Int64) throws(AudioError)
    {
        try checkOpen()
        guard var s = writerState, let handle, let writer else {
            throw AudioError(.permissions, "the file is open for reading only")
        }
        let f = s.format
        // Constant-size packets can be rewritten anywhere up to the end; variable-size ones
        // only appended, as Apple's kAudioFileInvalidPacketOffsetError says.
        guard start == s.packetCount || (f.bytesPerPacket > 0 && start >= 0 && start < s.packetCount) else {
            throw AudioError(.invalidPacketOffset, f.bytesPerPacket > 0
                ? "packet \(start) is past the end (\(s.packetCount) packets)"
                : "packets of varying size are appended: expected packet \(s.packetCount), got \(start)")
        }
        if f.bytesPerPacket > 0 {
            guard data.count == count * Int(f.bytesPerPacket) else {
                throw AudioError(.invalidPacketOffset, "\(count) packets of \(f.bytesPerPacket) bytes, but \(data.count) bytes given")
            }
        } else {
            guard let descriptions, descriptions.count == count else {
                throw AudioError(.requiresPacketDescriptions, "packets of varying size need descriptions")
            }
            for d in descriptions {
                guard d.startOffset >= 0, d.startOffset + Int64(d.dataByteSize) <= Int64(data.count) else {
                    throw AudioError(.invalidPacketOffset, "a packet description points outside the data")
                }
            }
        }
        if !headerWritten {
            let header = try writer.header(s)
            try handle.write(header, at: 0)
            s.dataOffset = Int64(header.count)
            headerWritten = true
        }
        if f.bytesPerPacket > 0 {
            let at = start * Int64(f.bytesPerPacket)
            try handle.write(data, at: s.dataOffset + at)
            s.dataByteCount = max(s.dataByteCount, at + Int64(data.count))
            s.packetCount = max(s.packetCount, start + Int64(count))
        } else {
            try handle.write(data, at: s.dataOffset + s.dataByteCount)
            // The file's description table grows here. `s` must hold it alone first: while
            // `writerState` shares it, an append copies the whole table (an hour of FLAC,
            // 39,000 descriptions, was copied at every write).
            writerState = nil
            for d in descriptions ?? [] {
                s.packetDescriptions.append(PacketDescription(startOffset: s.dataByteCount + d.startOffset,
                                                              variableFramesInPacket: d.variableFramesInPacket,
                                                              dataByteSize: d.dataByteSize))
            }
            s.dataByteCount += Int64(data.count)
            s.packetCount += Int64(count)
        }
        writerState = s
        if !defersSizeUpdates { try writer.finish(s, handle: handle) }
    }

    /// Writes raw audio bytes at an offset from the data offset (`AudioFileWriteBytes`), in a
    /// file being created or updated. `start` may be at most the audio byte count (the bytes
    /// then extend the audio). For constant-size packets the packet count follows the bytes
    /// (whole packets); packets of varying size need their descriptions, so such files
    /// answer 'op??' (write them with `writePackets`).
    public func writeBytes(startingAt start: Int64, data: [UInt8]) throws(AudioError) {
        try checkOpen()
        guard var s = writerState, let handle, let writer else {
            throw AudioError(.permissions, "the file is open for reading only")
        }
        let bpp = Int64(s.format.bytesPerPacket)
        guard bpp > 0 else {
            throw AudioError(.operationNotSupported, "bytes of packets that vary in size cannot be written without descriptions; use writePackets")
        }
        guard start >= 0, start <= s.dataByteCount else {
            throw AudioError(.position, "byte \(start) is past the end of the audio data (\(s.dataByteCount) bytes)")
        }
        if !headerWritten {
            let header = try writer.header(s)
            try handle.write(header, at: 0)
            s.dataOffset = Int64(header.count)
            headerWritten = true
        }
        try handle.write(data, at: s.dataOffset + start)
        s.dataByteCount = max(s.dataByteCount, start + Int64(data.count))
        s.packetCount = s.dataByteCount / bpp
        writerState = s
        if !defersSizeUpdates { try writer.finish(s, handle: handle) }
    }

    /// Appends packets from an array.
    public func writePackets(_ data: [UInt8], count: Int, descriptions: [PacketDescription]? = nil,
                             startingAt start: Int64) throws(AudioError)
    {
        try data.withBytes { raw throws(AudioError) in
            try writePackets(raw, count: count, descriptions: descriptions, startingAt: start)
        }
    }

    /// Closes the file (`AudioFileClose`). A file being written gets its final sizes and metadata.
    public func close() throws(AudioError) {
        guard isOpen else { return }
        isOpen = false
        if let writer, let handle, var s = writerState {
            defer { handle.closeNow() }
            if !headerWritten {
                let header = try writer.header(s)
                try handle.write(header, at: 0)
                s.dataOffset = Int64(header.count)
                headerWritten = true
            }
            try writer.finish(s, handle: handle)
        }
        parser = nil
    }
}

import TonearmCore

/// A chunk's header, read by the format that owns it.
public struct ChunkHeader: Sendable, Equatable {
    public var id: FourCC
    /// Size of the body in bytes; nil when it runs to the end of the stream.
    public var bodySize: Int64?
    /// Size of the header itself.
    public var headerSize: Int

    public init(id: FourCC, bodySize: Int64?, headerSize: Int) {
        self.id = id
        self.bodySize = bodySize
        self.headerSize = headerSize
    }
}

/// What a chunked format does with a chunk.
public enum ChunkRole: Sendable, Equatable {
    /// Read the whole body (at most `maximumSize` bytes) and hand it to `handle`.
    /// A required chunk larger than that is an error; an optional one is skipped.
    case read(maximumSize: Int, required: Bool)
    /// The audio data. The first `prefixSize` bytes of the body are a header of its own
    /// (AIFF's SSND offset and block size, CAF's edit count) given to `audioData`.
    case audio(prefixSize: Int)
    /// Skip the body.
    case skip
}

/// How the packets lie in the audio data.
public enum DataLayout: Sendable {
    /// Every packet has this many bytes.
    case constant(bytesPerPacket: Int)
    /// Packets as a table gives them (offsets relative to the data start).
    case table([PacketDescription])
}

/// The format-specific part of a chunked container (RIFF, RF64, Wave64, AIFF, CAF):
/// how to read its headers and what each chunk means. ``ChunkedParser`` does the rest.
public protocol ChunkedFormat {
    /// Bytes of the file header before the first chunk.
    var fileHeaderSize: Int { get }
    /// Bytes of a chunk header.
    var chunkHeaderSize: Int { get }
    /// Chunk bodies are padded to a multiple of this (2 for RIFF and AIFF, 8 for Wave64, 1 for CAF).
    var alignment: Int { get }

    /// Reads the file header; throws 'typ?' or 'dta?' when it is not this format.
    mutating func parseFileHeader(_ reader: inout ByteReader, properties: inout FileProperties) throws(AudioError)
    /// Reads one chunk header of `chunkHeaderSize` bytes.
    mutating func parseChunkHeader(_ reader: inout ByteReader) throws(AudioError) -> ChunkHeader
    func role(of chunk: ChunkHeader) -> ChunkRole
    /// Takes in a chunk read with `.read`.
    mutating func handle(_ chunk: ChunkHeader, body: inout ByteReader, properties: inout FileProperties) throws(AudioError)
    /// True once the chunks that say how to read the audio data have been seen.
    func canReadAudio(_ properties: FileProperties) -> Bool
    /// The audio data begins: `prefix` holds the chunk's own header; `dataStart` is where
    /// the body begins after it. Returns the absolute start of the first packet, and the
    /// layout; the parser derives counts from them.
    mutating func audioData(_ chunk: ChunkHeader, prefix: inout ByteReader, dataStart: Int64,
                            properties: inout FileProperties) throws(AudioError) -> (start: Int64, layout: DataLayout)
    /// Called at the end of the stream with what was found, to check that nothing required is missing.
    func finish(_ properties: inout FileProperties) throws(AudioError)
    /// The most bytes of audio the format's own header allows (AIFF's COMM frame count),
    /// when it limits the audio chunk; nil when the chunk's size alone decides.
    func audioByteLimit(_ properties: FileProperties) -> Int64?
}

extension ChunkedFormat {
    public func finish(_ properties: inout FileProperties) throws(AudioError) {}
    public func audioByteLimit(_ properties: FileProperties) -> Int64? { nil }
}

/// The incremental parser shared by every chunked format.
///
/// On the push path it reads header chunks, then hands out packets from the audio chunk,
/// then reads any chunks after it. On the random-access path it skips the audio data,
/// reads what follows, and goes back only when a required chunk came after the audio.
public final class ChunkedParser<Format: ChunkedFormat>: PropertyStoringParser {
    public var properties: FileProperties
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []

    private var format: Format
    private enum State {
        case fileHeader
        case chunkHeader
        case body(ChunkHeader, role: ChunkRole)
        case audio(Region)
        case done
    }
    private struct Region {
        var start: Int64
        var end: Int64?
        var layout: DataLayout
        var constant: ConstantPacketRegion?
        var nextPacket: Int = 0
        /// Where the chunk ends, padding included: chunk parsing resumes there.
        var chunkEnd: Int64?
    }
    private var state: State = .fileHeader
    private var region: Region?
    /// An audio chunk seen before the chunks that describe it (random access only).
    private var lastChunkOffset: Int64 = -1
    private var deferredAudio: (chunk: ChunkHeader, bodyStart: Int64, prefix: [UInt8])?

    /// The largest chunk accepted (2^60 bytes): far beyond any file, small enough that
    /// offsets plus sizes never overflow.
    public static var maximumChunkSize: Int64 { 1 << 60 }

    public init(format: Format, fileType: AudioFileTypeID) {
        self.format = format
        properties = FileProperties(fileType: fileType)
    }

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        switch state {
        case .fileHeader:
            guard var r = input.reader(format.fileHeaderSize) else {
                if input.isEndOfStream { throw AudioError(.invalidFile, "the file ends inside its header") }
                return .needMore
            }
            try format.parseFileHeader(&r, properties: &properties)
            state = .chunkHeader
            return .consume(format.fileHeaderSize)

        case .chunkHeader:
            guard var r = input.reader(format.chunkHeaderSize) else {
                if input.isEndOfStream {
                    if input.count > 0 && input.count < format.chunkHeaderSize && isReady {
                        return .consume(input.count)  // trailing bytes shorter than a header
                    }
                    try finishStream(input)
                    return input.count > 0 ? .consume(input.count) : .finished
                }
                return .needMore
            }
            let chunk = try format.parseChunkHeader(&r)
            // Sizes are bounded so that offset arithmetic cannot overflow.
            if let size = chunk.bodySize, size < 0 || size > ChunkedParser.maximumChunkSize {
                throw AudioError(.invalidChunk, "chunk \(chunk.id) claims \(size) bytes")
            }
            // A parser that went back for a deferred audio chunk reads later chunks twice.
            if input.offset > lastChunkOffset {
                properties.chunkIDs.append(chunk.id)
                lastChunkOffset = input.offset
            }
            let role = format.role(of: chunk)
            state = .body(chunk, role: role)
            return .consume(chunk.headerSize)

        case .body(let chunk, let role):
            let bodyStart = input.offset
            switch role {
            case .skip:
                return skipChunk(chunk, bodyStart: bodyStart, input: input)
            case .read(let maximumSize, let required):
                guard let size = chunk.bodySize, size <= Int64(maximumSize) else {
                    if required {
                        throw AudioError.limit("chunk \(chunk.id) claims \(chunk.bodySize.map(String.init) ?? "unbounded") bytes; at most \(maximumSize) are read")
                    }
                    return skipChunk(chunk, bodyStart: bodyStart, input: input)
                }
                guard var body = input.reader(Int(size)) else {
                    if input.isEndOfStream {
                        if required { throw AudioError(.invalidChunk, "the file ends inside chunk \(chunk.id)") }
                        try finishStream(input)
                        return input.count > 0 ? .consume(input.count) : .finished
                    }
                    return .needMore
                }
                let before = properties
                try format.handle(chunk, body: &body, properties: &properties)
                if isReady { announceChanges(from: before) }
                let next = skipChunk(chunk, bodyStart: bodyStart, input: input)
                if let deferred = deferredAudio, format.canReadAudio(properties) {
                    // The description came after the audio (random access only): set the audio up now.
                    deferredAudio = nil
                    var prefix = ByteReader(deferred.prefix)
                    let r = try setUpAudio(deferred.chunk, bodyStart: deferred.bodyStart, prefix: &prefix,
                                           prefixSize: deferred.prefix.count, input: input)
                    if input.wantsPackets {
                        state = .audio(r)
                        return .seek(to: r.start)
                    }
                }
                return next
            case .audio(let prefixSize):
                guard var prefix = input.reader(prefixSize) else {
                    if input.isEndOfStream { throw AudioError(.invalidChunk, "the file ends inside chunk \(chunk.id)") }
                    return .needMore
                }
                if !format.canReadAudio(properties) {
                    // The chunks that describe the audio come after it.
                    guard input.canSeek, let size = chunk.bodySize else {
                        throw AudioError(.notOptimized, "the audio data comes before the chunk that describes it; the file must be read with seeking")
                    }
                    guard deferredAudio == nil else { throw AudioError.malformed("two audio chunks before the format chunk") }
                    deferredAudio = (chunk, bodyStart, Array(prefix.bytes))
                    properties.isOptimized = false
                    return skipChunk(chunk, bodyStart: bodyStart, input: input, bodySize: size)
                }
                let r = try setUpAudio(chunk, bodyStart: bodyStart, prefix: &prefix, prefixSize: prefixSize, input: input)
                state = .audio(r)
                let skip = r.start - input.offset
                if skip > 0 && skip <= Int64(input.count) { return .consume(Int(skip)) }
                if skip > 0 { return .seek(to: r.start) }
                return try step(input)
            }

        case .audio(var r):
            if let c = r.constant {
                if let s = c.step(input) {
                    if case .packets(_, let count, _) = s { r.nextPacket += count; region = r; state = .audio(r) }
                    return s
                }
            } else if case .table(let table) = r.layout {
                if let s = tableStep(&r, table: table, input: input) {
                    region = r
                    state = .audio(r)
                    return s
                }
            }
            // Past the audio data: go on with the chunks after it.
            state = .chunkHeader
            if let end = r.chunkEnd, end > input.offset { return .seek(to: end) }
            if r.end == nil { state = .done; return .finished }
            return try step(input)

        case .done:
            return .finished
        }
    }

    private func skipChunk(_ chunk: ChunkHeader, bodyStart: Int64, input: ParserInput, bodySize: Int64? = nil) -> ParseStep {
        state = .chunkHeader
        guard let size = bodySize ?? chunk.bodySize else {
            state = .done
            return .finished
        }
        let end = bodyStart + padded(size)
        if let total = input.sourceSize, end >= total {
            // The last chunk; its padding byte may be missing.
            if end - input.offset <= Int64(input.count) { return .consume(Int(end - input.offset)) }
            return .seek(to: end)
        }
        if end - input.offset <= Int64(input.count) && end >= input.offset { return .consume(Int(end - input.offset)) }
        return .seek(to: end)
    }

    private func padded(_ size: Int64) -> Int64 {
        let a = Int64(format.alignment)
        return a <= 1 ? size : (size + a - 1) / a * a
    }

    /// Works out where the packets lie, fills in the counts and announces everything.
    private func setUpAudio(_ chunk: ChunkHeader, bodyStart: Int64, prefix: inout ByteReader, prefixSize: Int,
                            input: ParserInput) throws(AudioError) -> Region
    {
        var (start, layout) = try format.audioData(chunk, prefix: &prefix, dataStart: bodyStart + Int64(prefixSize),
                                                   properties: &properties)
        var end: Int64? = chunk.bodySize.map { bodyStart + $0 }
        if let total = input.sourceSize, let e = end, e > total { end = total }  // truncated file: use what is there
        if end == nil, let total = input.sourceSize { end = total }
        if let limit = format.audioByteLimit(properties), limit < Int64.max - start {
            end = min(end ?? start + limit, start + limit)
        }
        if case .table(let table) = layout, let e = end {
            // A table that places packets past the bytes that exist (a truncated file, a
            // damaged 'pakt'): keep the whole packets before the first missing one.
            let available = e - start
            if let firstMissing = table.firstIndex(where: { $0.startOffset < 0 || $0.startOffset + Int64($0.dataByteSize) > available }) {
                let kept = Array(table[..<firstMissing])
                properties.missingPacketCount = Int64(table.count - firstMissing)
                if var t = properties.packetTableInfo {
                    let fpp = Int64(properties.dataFormat?.framesPerPacket ?? 0)
                    let frames = fpp > 0 ? fpp * Int64(kept.count) : kept.reduce(0) { $0 + Int64($1.variableFramesInPacket) }
                    let playable = max(0, frames - Int64(t.primingFrames))
                    if t.numberValidFrames > playable {
                        t.numberValidFrames = playable
                        t.remainderFrames = 0
                        properties.packetTableInfo = t
                    }
                }
                layout = .table(kept)
            }
        }
        var r = Region(start: start, end: end, layout: layout)
        r.chunkEnd = chunk.bodySize.map { bodyStart + padded($0) }
        switch layout {
        case .constant(let bpp):
            guard bpp > 0 else { throw AudioError(.unsupportedDataFormat, "packets of 0 bytes") }
            r.constant = ConstantPacketRegion(start: start, end: end, bytesPerPacket: bpp)
            if let e = end {
                let bytes = max(0, e - start)
                properties.audioDataByteCount = bytes
                properties.audioDataPacketCount = bytes / Int64(bpp)
            }
            properties.maximumPacketSize = UInt32(bpp)
        case .table(let table):
            properties.packetTable = table
            properties.audioDataPacketCount = Int64(table.count)
            properties.audioDataByteCount = end.map { max(0, $0 - start) }
                ?? table.last.map { $0.startOffset + Int64($0.dataByteSize) }
            properties.maximumPacketSize = table.map(\.dataByteSize).max() ?? 0
        }
        properties.dataOffset = start
        if properties.bitRate == nil, let f = properties.dataFormat, f.bytesPerPacket > 0, f.framesPerPacket > 0 {
            let bits = Double(f.bytesPerPacket) * 8 * f.sampleRate / Double(f.framesPerPacket)
            if bits.isFinite && bits >= 0 && bits < Double(UInt32.max) { properties.bitRate = UInt32(bits) }
        }
        region = r
        becomeReady()
        return r
    }

    private func tableStep(_ r: inout Region, table: [PacketDescription], input: ParserInput) -> ParseStep? {
        guard r.nextPacket < table.count else { return nil }
        guard input.wantsPackets else { return nil }
        let first = table[r.nextPacket]
        let firstStart = r.start + first.startOffset
        if input.offset < firstStart { return .consume(Int(min(Int64(input.count), firstStart - input.offset))) }
        var descriptions: [PacketDescription] = []
        var bytes = 0
        var i = r.nextPacket
        while i < table.count {
            let p = table[i]
            let pEnd = r.start + p.startOffset + Int64(p.dataByteSize) - input.offset
            guard pEnd <= Int64(input.count) else { break }
            descriptions.append(PacketDescription(startOffset: r.start + p.startOffset - input.offset,
                                                  variableFramesInPacket: p.variableFramesInPacket,
                                                  dataByteSize: p.dataByteSize))
            bytes = Int(pEnd)
            i += 1
            if descriptions.count >= 4096 { break }
        }
        if descriptions.isEmpty {
            return input.isEndOfStream ? nil : .needMore
        }
        r.nextPacket = i
        // Packets of no bytes carry nothing to hand on (a format refuses them where they matter).
        guard bytes > 0 else { return .consume(0) }
        return .packets(byteCount: bytes, packetCount: descriptions.count, descriptions: descriptions)
    }


    /// After 'redy', a chunk that changes a property announces it at once.
    private func announceChanges(from old: FileProperties) {
        if old.info != properties.info { pendingNotifications.append(.infoDictionary) }
        if old.channelLayout != properties.channelLayout { pendingNotifications.append(.channelLayout) }
        if old.magicCookie != properties.magicCookie { pendingNotifications.append(.magicCookieData) }
        if old.packetTableInfo != properties.packetTableInfo { pendingNotifications.append(.packetTableInfo) }
    }

    private func finishStream(_ input: ParserInput) throws(AudioError) {
        state = .done
        if deferredAudio != nil {
            throw AudioError(.invalidFile, "the file has audio data but no chunk that describes it")
        }
        try format.finish(&properties)
        if !isReady { throw AudioError(.invalidFile, "the file has no audio data chunk") }
    }

    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady, var r = region else { throw AudioError(.illegalOperation, "cannot resume before the data offset is known") }
        guard offset >= r.start else {
            throw AudioError(.invalidPacketOffset, "byte \(offset) lies before the audio data")
        }
        if let end = r.end, offset > end {
            // Inside a chunk after the audio (a LIST after 'data'): nothing more to deliver,
            // and no chunk header to resynchronise on, so the bytes are accepted and ignored.
            state = .done
            return
        }
        if case .table(let table) = r.layout {
            let rel = offset - r.start
            var lo = 0, hi = table.count
            while lo < hi { let mid = (lo + hi) / 2; if table[mid].startOffset < rel { lo = mid + 1 } else { hi = mid } }
            r.nextPacket = lo
        } else if let c = r.constant {
            r.nextPacket = Int((offset - r.start) / Int64(c.bytesPerPacket))
        }
        region = r
        state = .audio(r)
    }
}

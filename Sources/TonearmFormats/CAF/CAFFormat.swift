import TonearmCore

/// Apple's Core Audio Format: an 8-byte file header ('caff', version 1, flags 0), then
/// chunks of a four-char type and a big-endian Int64 size, with no padding.
///
/// The 'desc' chunk comes first. Audio data ('data', after a 4-byte edit count) may
/// come before the packet table ('pakt') of variable-size packets, as writers that
/// cannot know the table in advance put it; a seekable source reads such a file, a push
/// stream fails with 'optm'. A data size of -1 means the data runs to the end of the file.
///
/// Compressed payloads: 'pakt' gives each packet's size (and frame count, when the
/// 'desc' leaves them variable), so packet offsets and seeks are exact, and its valid,
/// priming and remainder frames become the PacketTableInfo. The table must fit in the
/// data chunk; 0-byte entries at its end are no packets (ffmpeg's FLAC writer leaves one)
/// and are dropped, elsewhere they are an error. The 'kuki' of AAC, ALAC, FLAC and Opus
/// is given in the form every Tonearm container gives for the codec (CAFFormat+Cookie.swift).
public struct CAFFormat: ChunkedFormat {
    public var fileHeaderSize: Int { 8 }
    public var chunkHeaderSize: Int { 12 }
    public var alignment: Int { 1 }

    /// Largest 'pakt' body read (16 MiB: about 8 million packets at two bytes each, over
    /// 50 hours of AAC at 44.1 kHz). A larger table is a limit error ('dta?').
    public static let maximumPacketTableSize = 16 << 20
    /// Largest 'kuki', 'info', 'chan', 'mark' and 'strg' bodies read (1 MiB).
    public static let maximumMetadataSize = 1 << 20
    /// Largest bytes per packet of a constant-size format (1 MiB).
    public static let maximumBytesPerPacket: UInt32 = 1 << 20
    /// Largest frames per packet (4 Mi).
    public static let maximumFramesPerPacket: UInt32 = 1 << 22

    /// The 'desc' as read; nil until then.
    private var description: StreamDescription?
    private var chunkCount = 0
    /// The packet table, once 'pakt' has been read: offsets relative to the data start.
    private var table: [PacketDescription]?
    /// Marker names from 'strg', by string ID.
    private var strings: [UInt32: String] = [:]

    public init() {}

    public mutating func parseFileHeader(_ r: inout ByteReader, properties: inout FileProperties) throws(AudioError) {
        let magic = r.readFourCC()!
        guard magic == "caff" else { throw AudioError(.unsupportedFileType, "not a CAF file (\(magic))") }
        let version = r.readUInt16()!
        _ = r.readUInt16()  // flags, 0
        guard version == 1 else { throw AudioError(.unsupportedFileType, "CAF version \(version) is not supported") }
        properties.fileType = .caf
    }

    public mutating func parseChunkHeader(_ r: inout ByteReader) throws(AudioError) -> ChunkHeader {
        let id = r.readFourCC()!
        let size = r.readInt64()!
        chunkCount += 1
        if chunkCount == 1 && id != "desc" {
            throw AudioError(.invalidFile, "a CAF file must begin with its 'desc' chunk, not \(id)")
        }
        if id == "data" {
            if size == -1 { return ChunkHeader(id: id, bodySize: nil, headerSize: 12) }
            guard size >= 4 else { throw AudioError(.invalidChunk, "a CAF data chunk of \(size) bytes has no room for its edit count") }
        }
        return ChunkHeader(id: id, bodySize: size, headerSize: 12)
    }

    public func role(of chunk: ChunkHeader) -> ChunkRole {
        switch chunk.id {
        case "desc": .read(maximumSize: 1024, required: true)
        case "data": .audio(prefixSize: 4)
        case "pakt": .read(maximumSize: CAFFormat.maximumPacketTableSize, required: true)
        case "kuki", "chan", "info": .read(maximumSize: CAFFormat.maximumMetadataSize, required: true)
        case "mark", "strg": .read(maximumSize: CAFFormat.maximumMetadataSize, required: false)
        default: .skip
        }
    }

    /// The description is known, and the packet table too when packets vary.
    public func canReadAudio(_ p: FileProperties) -> Bool {
        guard let f = description else { return false }
        return f.isConstantBitRate || table != nil
    }

    public mutating func handle(_ chunk: ChunkHeader, body r: inout ByteReader, properties p: inout FileProperties) throws(AudioError) {
        switch chunk.id {
        case "desc":
            guard description == nil else { return }  // a second 'desc' changes nothing
            let f = try CAFFormat.readDescription(&r, properties: &p)
            description = f
            p.dataFormat = f
        case "pakt":
            guard let f = description else { throw AudioError(.invalidFile, "a CAF 'pakt' chunk before 'desc'") }
            let (info, entries) = try CAFFormat.readPacketTable(&r, format: f)
            p.packetTableInfo = info
            if !f.isConstantBitRate { table = entries }
        case "kuki":
            guard let f = description else { throw AudioError(.invalidFile, "a CAF 'kuki' chunk before 'desc'") }
            let cookie = r.readBytes(r.readableBytes) ?? []
            let described = try CAFFormat.applyCookie(cookie, to: f, properties: &p)
            if p.dataFormat == f { p.dataFormat = described }
            description = described
        case "chan":
            p.channelLayout = try ChannelLayout.readChunk(&r)
        case "info":
            try CAFFormat.readInfo(&r, into: &p.info)
        case "strg":
            readStrings(&r)
            for i in p.markers.indices {
                if p.markers[i].name.isEmpty, let name = strings[UInt32(bitPattern: p.markers[i].markerID)] {
                    p.markers[i].name = name
                }
            }
        case "mark":
            readMarkers(&r, into: &p.markers)
        default:
            break
        }
    }

    public mutating func audioData(_ chunk: ChunkHeader, prefix: inout ByteReader, dataStart: Int64,
                                   properties p: inout FileProperties) throws(AudioError) -> (start: Int64, layout: DataLayout)
    {
        _ = prefix.readUInt32()  // edit count
        guard let f = description else { throw AudioError(.invalidFile, "CAF audio data without a 'desc' chunk") }
        if f.isConstantBitRate { return (dataStart, .constant(bytesPerPacket: Int(f.bytesPerPacket))) }
        guard let table else { throw AudioError(.invalidFile, "CAF audio data of variable-size packets without a 'pakt' chunk") }
        if let size = chunk.bodySize, let last = table.last, last.startOffset + Int64(last.dataByteSize) > size - 4 {
            throw AudioError(.invalidChunk, "the CAF packet table places \(table.count) packets in \(last.startOffset + Int64(last.dataByteSize)) bytes, but the data chunk holds \(size - 4)")
        }
        if p.bitRate == nil, let last = table.last {
            let bytes = Double(last.startOffset) + Double(last.dataByteSize)
            let frames: Double = if let t = p.packetTableInfo, t.totalFrames > 0 { Double(t.totalFrames) }
                else if f.framesPerPacket > 0 { Double(table.count) * Double(f.framesPerPacket) }
                else { table.reduce(0) { $0 + Double($1.variableFramesInPacket) } }
            let bits = bytes * 8 * f.sampleRate / frames
            if frames > 0, bits.isFinite, bits >= 0, bits < Double(UInt32.max) { p.bitRate = UInt32(bits) }
        }
        return (dataStart, .table(table))
    }

    // MARK: Chunk readers

    /// Reads a 'desc' body (a big-endian ASBD without bytesPerFrame and reserved) into
    /// Apple's in-memory form: CAF's linear PCM flags (1 = float, 2 = little-endian) become
    /// the format flags, integer PCM is signed, and bytesPerFrame is computed.
    static func readDescription(_ r: inout ByteReader, properties p: inout FileProperties) throws(AudioError) -> StreamDescription {
        guard r.readableBytes >= 32 else { throw AudioError(.invalidChunk, "a CAF 'desc' chunk of \(r.readableBytes) bytes") }
        let rate = r.readFloat64()!
        let formatID = AudioFormatID(rawValue: r.readUInt32()!)
        let flags = r.readUInt32()!
        let bytesPerPacket = r.readUInt32()!
        let framesPerPacket = r.readUInt32()!
        let channels = r.readUInt32()!
        let bits = r.readUInt32()!
        func fail(_ why: String) -> AudioError { AudioError(.unsupportedDataFormat, "CAF 'desc': \(why)") }
        guard rate.isFinite, rate > 0 else { throw fail("sample rate \(rate)") }
        guard channels > 0 else { throw fail("0 channels") }
        guard channels <= 1024 else { throw fail("\(channels) channels") }
        guard bytesPerPacket <= maximumBytesPerPacket else { throw fail("\(bytesPerPacket) bytes per packet") }
        guard framesPerPacket <= maximumFramesPerPacket else { throw fail("\(framesPerPacket) frames per packet") }
        var f: StreamDescription
        switch formatID {
        case .linearPCM:
            let isFloat = flags & 1 != 0
            let isLittleEndian = flags & 2 != 0
            guard framesPerPacket == 1 else { throw fail("linear PCM with \(framesPerPacket) frames per packet") }
            guard bits > 0, bits <= 64 else { throw fail("\(bits)-bit linear PCM") }
            guard bytesPerPacket > 0, bytesPerPacket % channels == 0 else {
                throw fail("\(bytesPerPacket) bytes per packet for \(channels) channels")
            }
            let container = bytesPerPacket / channels
            guard container * 8 >= bits, container <= 8 else { throw fail("\(bits) bits in \(container) bytes") }
            if isFloat && !(bits == 32 || bits == 64) || isFloat && container * 8 != bits { throw fail("\(bits)-bit float") }
            f = .pcm(sampleRate: rate, channels: channels, bits: bits, isFloat: isFloat, isBigEndian: !isLittleEndian,
                     isSigned: true, bytesPerSample: container)
            try f.validate()
            let order = container > 1 ? (isLittleEndian ? "little-endian " : "big-endian ") : ""
            p.dataFormatName = "\(bits)-bit \(order)\(isFloat ? "float" : "signed integer") PCM"
        default:
            let bytesPerFrame: UInt32 = framesPerPacket == 1 ? bytesPerPacket : 0
            f = StreamDescription(sampleRate: rate, formatID: formatID, formatFlags: AudioFormatFlags(rawValue: flags),
                                  bytesPerPacket: bytesPerPacket, framesPerPacket: framesPerPacket,
                                  bytesPerFrame: bytesPerFrame, channelsPerFrame: channels, bitsPerChannel: bits)
            switch formatID {
            case .uLaw: p.dataFormatName = "µ-law 2:1"
            case .aLaw: p.dataFormatName = "A-law 2:1"
            case .appleIMA4: p.dataFormatName = "IMA 4:1"
            default: break
            }
        }
        return f
    }

    /// Reads a 'pakt' body: the counts, then per packet a variable-length byte size (when
    /// the format's bytesPerPacket is 0) and frame count (when framesPerPacket is 0).
    /// The entry count is checked against the body size (each entry takes at least a byte)
    /// before anything is allocated.
    static func readPacketTable(_ r: inout ByteReader, format f: StreamDescription) throws(AudioError)
        -> (PacketTableInfo, [PacketDescription])
    {
        guard r.readableBytes >= 24 else { throw AudioError(.invalidChunk, "a CAF 'pakt' chunk of \(r.readableBytes) bytes") }
        let packets = r.readInt64()!
        let valid = r.readInt64()!
        let priming = r.readInt32()!
        let remainder = r.readInt32()!
        guard packets >= 0 else { throw AudioError(.invalidChunk, "a CAF packet table of \(packets) packets") }
        guard valid >= 0, priming >= 0, remainder >= 0 else {
            throw AudioError(.invalidChunk, "a CAF packet table of \(valid) valid frames, \(priming) priming and \(remainder) remainder")
        }
        let info = PacketTableInfo(numberValidFrames: valid, primingFrames: priming, remainderFrames: remainder)
        let sizeVaries = f.bytesPerPacket == 0
        let framesVary = f.framesPerPacket == 0
        let perPacket = (sizeVaries ? 1 : 0) + (framesVary ? 1 : 0)
        guard perPacket > 0 else { return (info, []) }
        guard packets <= Int64(r.readableBytes / perPacket) else {
            throw AudioError(.invalidChunk, "a CAF packet table claims \(packets) packets but holds \(r.readableBytes) bytes of entries")
        }
        let count = Int(packets)
        var table: [PacketDescription] = []
        table.reserveCapacity(count)
        var offset: Int64 = 0
        var failed = false
        let bytes = r.bytes
        var i = r.readerIndex
        let end = r.endIndex
        bytes.withUnsafeBufferPointer { b in
            func varint() -> UInt32? {
                var v: UInt64 = 0
                for _ in 0..<5 {
                    guard i < end else { return nil }
                    let byte = b[i]
                    i += 1
                    v = v << 7 | UInt64(byte & 0x7F)
                    if byte & 0x80 == 0 { return v <= UInt64(UInt32.max) ? UInt32(v) : nil }
                }
                return nil
            }
            for _ in 0..<count {
                let size: UInt32
                if sizeVaries { guard let s = varint() else { failed = true; return }; size = s } else { size = f.bytesPerPacket }
                var frames: UInt32 = 0
                if framesVary { guard let n = varint() else { failed = true; return }; frames = n }
                table.append(PacketDescription(startOffset: offset, variableFramesInPacket: frames, dataByteSize: size))
                offset += Int64(size)
            }
        }
        r.readerIndex = i
        if failed { throw AudioError(.invalidChunk, "a CAF packet table ends before its \(packets) entries") }
        // A 0-byte entry holds no packet; ffmpeg's FLAC writer ends its table with one, and
        // ffprobe, like Tonearm, lists the packets before it.
        if sizeVaries {
            while table.last?.dataByteSize == 0 { table.removeLast() }
            if let empty = table.firstIndex(where: { $0.dataByteSize == 0 }) {
                throw AudioError(.invalidChunk, "CAF packet \(empty) of \(table.count) has 0 bytes")
            }
        }
        return (info, table)
    }


    /// Reads an 'info' body: a count, then NUL-terminated UTF-8 key and value pairs.
    static func readInfo(_ r: inout ByteReader, into info: inout InfoDictionary) throws(AudioError) {
        guard let count = r.readUInt32() else { throw AudioError(.invalidChunk, "an empty CAF 'info' chunk") }
        guard Int64(count) * 2 <= Int64(r.readableBytes) else {
            throw AudioError(.invalidChunk, "a CAF 'info' chunk claims \(count) entries in \(r.readableBytes) bytes")
        }
        func string() -> String? {
            let start = r.readerIndex
            var i = start
            while i < r.endIndex && r.bytes[i] != 0 { i += 1 }
            guard i < r.endIndex else { return nil }
            r.readerIndex = i + 1
            return decodeText(Array(r.bytes[start..<i]))
        }
        for _ in 0..<count {
            guard let key = string(), let value = string() else {
                throw AudioError(.invalidChunk, "a CAF 'info' chunk ends inside its \(count) entries")
            }
            info[key] = value
        }
    }

    /// Reads a 'strg' body: string IDs with offsets into the NUL-terminated strings after them.
    private mutating func readStrings(_ r: inout ByteReader) {
        guard let count = r.readUInt32(), Int64(count) * 12 <= Int64(r.readableBytes) else { return }
        var ids: [(UInt32, Int64)] = []
        for _ in 0..<count { ids.append((r.readUInt32()!, r.readInt64()!)) }
        let base = r.readerIndex
        for (id, offset) in ids where offset >= 0 && offset < Int64(r.endIndex - base) {
            var end = base + Int(offset)
            let start = end
            while end < r.endIndex && r.bytes[end] != 0 { end += 1 }
            if strings[id] == nil { strings[id] = decodeText(Array(r.bytes[start..<end])) }
        }
    }

    /// Reads a 'mark' body: the SMPTE time type, then markers of 28 bytes each.
    private func readMarkers(_ r: inout ByteReader, into markers: inout [AudioFileMarker]) {
        guard r.readableBytes >= 8 else { return }
        _ = r.readUInt32()  // SMPTE time type
        let count = Int(r.readUInt32()!)
        for _ in 0..<min(count, r.readableBytes / 28) {
            _ = r.readUInt32()  // type
            let position = r.readFloat64()!
            let id = r.readInt32()!
            r.skip(8)  // SMPTE time
            _ = r.readUInt32()  // channel
            markers.append(AudioFileMarker(framePosition: position, name: strings[UInt32(bitPattern: id)] ?? "", markerID: id))
        }
    }
}

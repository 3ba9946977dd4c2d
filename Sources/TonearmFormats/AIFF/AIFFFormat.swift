import TonearmCore

/// AIFF's names for things: chunk IDs, the AIFC version stamp, and the compression types.
enum AIFF {
    /// The only AIFC version there is (FVER's timestamp: May 23, 1990, 2:40 pm).
    static let aifcVersion1: UInt32 = 0xA280_5140
    /// Bytes of an Apple IMA4 packet for one channel: a 2-byte header and 32 bytes of nibbles.
    static let ima4BytesPerChannel: UInt32 = 34
    /// Frames in an Apple IMA4 packet.
    static let ima4FramesPerPacket: UInt32 = 64

    /// Info dictionary keys of the text chunks, in the order the writer puts them.
    static let textChunks: [(id: FourCC, key: String)] = [
        ("NAME", InfoDictionary.title), ("AUTH", InfoDictionary.artist),
        ("(c) ", InfoDictionary.copyright), ("ANNO", InfoDictionary.comments),
    ]

    /// The data format an AIFC compression type (or plain AIFF, `compression == nil`) stands for.
    ///
    /// AIFF is big-endian signed integer PCM, 8-bit included; a sample whose bits are not a
    /// multiple of 8 sits left-justified (aligned high) in the next whole number of bytes.
    static func dataFormat(compression: FourCC?, channels: UInt32, bits: Int, rate: Double)
        throws(AudioError) -> (format: StreamDescription, name: String)
    {
        func integer(_ bits: Int, bigEndian: Bool, signed: Bool = true) throws(AudioError) -> (StreamDescription, String) {
            guard bits >= 1, bits <= 32 else {
                throw AudioError(.unsupportedDataFormat, "AIFF samples of \(bits) bits are not supported")
            }
            var f = StreamDescription.pcm(sampleRate: rate, channels: channels, bits: UInt32(bits),
                                          isBigEndian: bigEndian, isSigned: signed)
            // Apple marks AIFF's 8-bit data big-endian too (flags 0xE); it changes nothing for one byte.
            if bigEndian { f.formatFlags.insert(.isBigEndian) }
            let order = bits > 8 ? (bigEndian ? "big-endian " : "little-endian ") : ""
            return (f, "\(bits)-bit \(order)\(signed ? "signed" : "unsigned") integer PCM")
        }
        func float(_ bits: UInt32) -> (StreamDescription, String) {
            (.pcm(sampleRate: rate, channels: channels, bits: bits, isFloat: true, isBigEndian: true),
             "\(bits)-bit big-endian float PCM")
        }
        func g711(_ id: AudioFormatID) -> (StreamDescription, String) {
            (StreamDescription(sampleRate: rate, formatID: id, bytesPerPacket: channels, framesPerPacket: 1,
                               bytesPerFrame: channels, channelsPerFrame: channels, bitsPerChannel: 8),
             id == .uLaw ? "µ-law 2:1" : "A-law 2:1")
        }
        guard let compression else { return try integer(bits, bigEndian: true) }
        switch compression {
        case "NONE", "twos": return try integer(bits, bigEndian: true)
        case "sowt": return try integer(bits, bigEndian: false)
        case "in24": return try integer(24, bigEndian: true)
        case "in32": return try integer(32, bigEndian: true)
        case "42ni": return try integer(24, bigEndian: false)
        case "23ni": return try integer(32, bigEndian: false)
        case "raw ": return try integer(8, bigEndian: false, signed: false)
        case "fl32", "FL32": return float(32)
        case "fl64", "FL64": return float(64)
        case "ulaw", "ULAW": return g711(.uLaw)
        case "alaw", "ALAW": return g711(.aLaw)
        case "ima4":
            let f = StreamDescription(sampleRate: rate, formatID: .appleIMA4,
                                      bytesPerPacket: ima4BytesPerChannel * channels,
                                      framesPerPacket: ima4FramesPerPacket, bytesPerFrame: 0,
                                      channelsPerFrame: channels, bitsPerChannel: 0)
            return (f, "IMA 4:1")
        default:
            throw AudioError(.unsupportedDataFormat, "AIFC compression type \(compression) is not supported")
        }
    }



    /// A pascal string: a count byte, then the text, padded so that the whole is even.
    static func readPascalString(_ r: inout ByteReader) -> String? {
        guard let n = r.readUInt8() else { return nil }
        let text = r.readBytes(min(Int(n), r.readableBytes)) ?? []
        if n & 1 == 0 { r.skip(min(1, r.readableBytes)) }
        return decodeText(text)
    }

    static func pascalString(_ s: String) -> [UInt8] {
        var text: [UInt8] = []
        for scalar in s.unicodeScalars {
            let utf8 = Array(String(scalar).utf8)
            guard text.count + utf8.count <= 255 else { break }  // never cut a character in half
            text += utf8
        }
        var out = [UInt8(text.count)] + text
        if out.count & 1 == 1 { out.append(0) }
        return out
    }

    /// Text of a chunk: up to the first NUL, without trailing spaces and line ends.
    static func text(_ raw: [UInt8]) -> String {
        var s = Substring(decodeText(raw))
        while let last = s.last, last == " " || last == "\n" || last == "\r" || last == "\0" { s.removeLast() }
        return String(s)
    }
}

/// AIFF and AIFC: `FORM` with 32-bit big-endian chunk sizes, bodies padded to an even length.
///
/// `COMM` gives the format, `SSND` the audio (after its own 8-byte offset and block size).
/// `MARK` gives markers, `NAME`/`AUTH`/`(c) `/`ANNO`/`COMT` the info dictionary, `CHAN`
/// Apple's channel layout, `ID3 ` an ID3v2 tag kept raw. Everything else is skipped.
public struct AIFFFormat: ChunkedFormat {
    public var fileHeaderSize: Int { 12 }
    public var chunkHeaderSize: Int { 8 }
    public var alignment: Int { 2 }

    private var isAIFC = false
    private var sawCommon = false
    /// COMM's numSampleFrames as packets: frames for PCM and G.711 (one frame per packet),
    /// packets for IMA4 (AIFC files store the packet count there).
    private var commPackets: Int64?

    public init() {}

    public mutating func parseFileHeader(_ r: inout ByteReader, properties p: inout FileProperties) throws(AudioError) {
        let magic = r.readFourCC()!
        _ = r.readUInt32()
        let form = r.readFourCC()!
        guard magic == "FORM" else { throw AudioError(.unsupportedFileType, "not an IFF file (it begins with \(magic))") }
        switch form {
        case "AIFF": p.fileType = .aiff; isAIFC = false
        case "AIFC": p.fileType = .aifc; isAIFC = true
        default: throw AudioError(.unsupportedFileType, "a FORM of type \(form), not AIFF or AIFC")
        }
    }

    public mutating func parseChunkHeader(_ r: inout ByteReader) throws(AudioError) -> ChunkHeader {
        let id = r.readFourCC()!
        let size = r.readUInt32()!
        return ChunkHeader(id: id, bodySize: Int64(size), headerSize: 8)
    }

    public func role(of chunk: ChunkHeader) -> ChunkRole {
        switch chunk.id {
        case "COMM": .read(maximumSize: 4096, required: true)
        case "SSND": .audio(prefixSize: 8)
        case "FVER": .read(maximumSize: 64, required: false)
        case "MARK", "COMT", "NAME", "AUTH", "(c) ", "ANNO", "CHAN": .read(maximumSize: 1 << 20, required: false)
        case "ID3 ", "id3 ": .read(maximumSize: 16 << 20, required: false)
        default: .skip
        }
    }

    public func canReadAudio(_ p: FileProperties) -> Bool { sawCommon }

    public mutating func handle(_ chunk: ChunkHeader, body r: inout ByteReader, properties p: inout FileProperties) throws(AudioError) {
        switch chunk.id {
        case "COMM":
            try readCommon(&r, &p)
        case "FVER":
            break  // only one version exists; its value changes nothing
        case "MARK":
            guard let count = r.readUInt16() else { return }
            var markers: [AudioFileMarker] = []
            for _ in 0..<Int(count) {
                guard let id = r.readInt16(), let position = r.readUInt32(), let name = AIFF.readPascalString(&r) else { break }
                markers.append(AudioFileMarker(framePosition: Double(position), name: name, markerID: Int32(id)))
            }
            p.markers = markers  // replaced, not appended: a chunk may be read twice after a seek back
        case "COMT":
            guard let count = r.readUInt16() else { return }
            for _ in 0..<Int(count) {
                guard r.skip(6), let n = r.readUInt16(), let raw = r.readBytes(min(Int(n), r.readableBytes)) else { break }
                if n & 1 == 1 { r.skip(min(1, r.readableBytes)) }
                AIFFFormat.addComment(AIFF.text(raw), to: &p.info)
            }
        case "NAME", "AUTH", "(c) ", "ANNO":
            let text = AIFF.text(r.readBytes(r.readableBytes) ?? [])
            guard !text.isEmpty, let key = AIFF.textChunks.first(where: { $0.id == chunk.id })?.key else { return }
            if key == InfoDictionary.comments { AIFFFormat.addComment(text, to: &p.info) } else { p.info[key] = text }
        case "CHAN":
            guard let layout = try? ChannelLayout.readChunk(&r) else { return }
            if let n = layout.numberOfChannels, let f = p.dataFormat, n != Int(f.channelsPerFrame) { return }
            p.channelLayout = layout
        case "ID3 ", "id3 ":
            p.id3Tag = r.readBytes(r.readableBytes)
        default:
            break
        }
    }

    /// Several ANNO and COMT comments are joined by newlines (each once).
    private static func addComment(_ text: String, to info: inout InfoDictionary) {
        guard !text.isEmpty else { return }
        if let old = info[InfoDictionary.comments] {
            if !old.split(separator: "\n", omittingEmptySubsequences: false).contains(Substring(text)) {
                info[InfoDictionary.comments] = old + "\n" + text
            }
        } else {
            info[InfoDictionary.comments] = text
        }
    }

    /// COMM: channels (16 bits), numSampleFrames (32), sampleSize (16), sampleRate (80-bit
    /// extended); in AIFC also the compression type and its pascal-string name.
    private mutating func readCommon(_ r: inout ByteReader, _ p: inout FileProperties) throws(AudioError) {
        guard r.readableBytes >= 18 else { throw AudioError(.invalidChunk, "a COMM chunk of \(r.readableBytes) bytes") }
        let channels = r.readUInt16()!
        let frames = r.readUInt32()!
        let bits = Int(r.readInt16()!)
        let rate = r.readFloat80()!
        var compression: FourCC? = nil
        if isAIFC {
            // A few writers leave the AIFC fields out of an uncompressed file's COMM.
            compression = r.readFourCC() ?? "NONE"
            _ = AIFF.readPascalString(&r)
        }
        guard channels >= 1, channels <= 1024 else {
            throw AudioError(.unsupportedDataFormat, "COMM gives \(channels) channels")
        }
        guard rate.isFinite, rate > 0 else {
            throw AudioError(.unsupportedDataFormat, "COMM gives a sample rate of \(rate)")
        }
        let (f, name) = try AIFF.dataFormat(compression: compression, channels: UInt32(channels), bits: bits, rate: rate)
        p.dataFormat = f
        p.dataFormatName = name
        if let l = p.channelLayout, let n = l.numberOfChannels, n != Int(channels) { p.channelLayout = nil }
        commPackets = Int64(frames)
        sawCommon = true
    }

    /// COMM's numSampleFrames and the size of SSND must agree; when they do not, the
    /// smaller wins. A truncated file holds fewer packets than COMM says, and one whose SSND
    /// runs past the last frame (padding, junk, a bad size) holds more bytes than frames.
    public func audioByteLimit(_ p: FileProperties) -> Int64? {
        guard let packets = commPackets, let bpp = p.dataFormat?.bytesPerPacket, bpp > 0 else { return nil }
        let (bytes, overflow) = packets.multipliedReportingOverflow(by: Int64(bpp))
        return overflow ? nil : bytes
    }

    public mutating func audioData(_ chunk: ChunkHeader, prefix: inout ByteReader, dataStart: Int64,
                                   properties p: inout FileProperties) throws(AudioError) -> (start: Int64, layout: DataLayout)
    {
        guard let size = chunk.bodySize, size >= 8 else {
            throw AudioError(.invalidChunk, "an SSND chunk of \(chunk.bodySize ?? 0) bytes has no room for its offset and block size")
        }
        let offset = Int64(prefix.readUInt32()!)
        _ = prefix.readUInt32()  // block size: only an alignment hint
        guard offset <= size - 8 else {
            throw AudioError(.invalidChunk, "SSND puts its first sample \(offset) bytes into a body of \(size - 8)")
        }
        return (dataStart + offset, .constant(bytesPerPacket: Int(p.dataFormat!.bytesPerPacket)))
    }
}

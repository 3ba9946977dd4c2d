import TonearmCore

/// WAVE's format tags (the `wFormatTag` of WAVEFORMATEX).
enum WAVEFormatTag {
    static let pcm: UInt16 = 0x0001
    static let msADPCM: UInt16 = 0x0002
    static let ieeeFloat: UInt16 = 0x0003
    static let aLaw: UInt16 = 0x0006
    static let uLaw: UInt16 = 0x0007
    static let imaADPCM: UInt16 = 0x0011
    static let extensible: UInt16 = 0xFFFE
}

/// RIFF WAVE, RF64 and BW64: 32-bit little-endian chunk sizes, with `ds64` giving the
/// 64-bit sizes in RF64 and BW64.
public struct WAVEFormat: ChunkedFormat {
    public var fileHeaderSize: Int { 12 }
    public var chunkHeaderSize: Int { 8 }
    public var alignment: Int { 2 }

    private var is64 = false
    /// Sizes from ds64: the data chunk's, and other chunks' by ID.
    private var ds64DataSize: Int64?
    private var ds64Table: [FourCC: Int64] = [:]
    private var sawFormat = false
    /// The fact chunk's frame count, for compressed data.
    private var factFrames: Int64?

    public init() {}

    public mutating func parseFileHeader(_ r: inout ByteReader, properties: inout FileProperties) throws(AudioError) {
        let magic = r.readFourCC()!
        _ = r.readUInt32(.little)
        let wave = r.readFourCC()!
        guard wave == "WAVE" else { throw AudioError(.unsupportedFileType, "a \(magic) file that is not WAVE") }
        switch magic {
        case "RIFF": properties.fileType = .wave
        case "RF64": properties.fileType = .rf64; is64 = true
        case "BW64": properties.fileType = .bw64; is64 = true
        default: throw AudioError(.unsupportedFileType, "not a RIFF file")
        }
    }

    public mutating func parseChunkHeader(_ r: inout ByteReader) throws(AudioError) -> ChunkHeader {
        let id = r.readFourCC()!
        let size32 = r.readUInt32(.little)!
        var size: Int64? = Int64(size32)
        if is64 && size32 == 0xFFFF_FFFF {
            size = id == "data" ? ds64DataSize : ds64Table[id]
            if id == "data" && size == nil { size = nil }
        } else if id == "data" && (size32 == 0xFFFF_FFFF || size32 == 0) {
            size = nil  // written while streaming: the data runs to the end
        }
        return ChunkHeader(id: id, bodySize: size, headerSize: 8)
    }

    public func role(of chunk: ChunkHeader) -> ChunkRole {
        switch chunk.id {
        case "fmt ": .read(maximumSize: 1 << 16, required: true)
        case "ds64": .read(maximumSize: 1 << 20, required: true)
        case "data": .audio(prefixSize: 0)
        case "LIST", "bext", "fact", "cue ": .read(maximumSize: 1 << 20, required: false)
        default: .skip
        }
    }

    public func canReadAudio(_ p: FileProperties) -> Bool { sawFormat }

    public mutating func handle(_ chunk: ChunkHeader, body r: inout ByteReader, properties p: inout FileProperties) throws(AudioError) {
        switch chunk.id {
        case "ds64":
            guard r.readableBytes >= 28 else { throw AudioError(.invalidChunk, "ds64 chunk of \(r.readableBytes) bytes") }
            _ = r.readUInt64(.little)  // RIFF size
            ds64DataSize = Int64(clamping: r.readUInt64(.little)!)
            _ = r.readUInt64(.little)  // sample count
            let entries = Int(r.readUInt32(.little)!)
            for _ in 0..<min(entries, r.readableBytes / 12) {
                let id = r.readFourCC()!
                ds64Table[id] = Int64(clamping: r.readUInt64(.little)!)
            }
        case "fmt ":
            try WAVEFormat.readFormat(&r, &p)
            sawFormat = true
        case "LIST":
            guard r.readFourCC() == "INFO" else { return }
            while r.readableBytes >= 8 {
                let id = r.readFourCC()!
                let size = Int(r.readUInt32(.little)!)
                guard let raw = r.readBytes(min(size, r.readableBytes)) else { break }
                if size & 1 == 1 { r.skip(1) }
                let text = decodeText(raw).trimmingTrailingSpaces()
                guard !text.isEmpty, let key = WAVEFormat.infoKeys[id] else { continue }
                p.info[key] = text
            }
        case "bext":
            if let d = r.readString(256), !d.isEmpty { p.info["bext description"] = d }
            if let o = r.readString(32), !o.isEmpty { p.info["bext originator"] = o }
            if let ref = r.readString(32), !ref.isEmpty { p.info["bext originator reference"] = ref }
            if let date = r.readString(10), let time = r.readString(8), !date.isEmpty {
                p.info[InfoDictionary.recordedDate] = time.isEmpty ? date : date + " " + time
            }
        case "fact":
            if let frames = r.readUInt32(.little) { factFrames = Int64(frames) }
        case "cue ":
            guard let count = r.readUInt32(.little) else { return }
            for _ in 0..<min(Int(count), r.readableBytes / 24) {
                let id = r.readInt32(.little)!
                _ = r.readUInt32(.little)  // play order position
                _ = r.readFourCC()
                r.skip(8)
                let offset = r.readUInt32(.little)!
                p.markers.append(AudioFileMarker(framePosition: Double(offset), name: "", markerID: id))
            }
        default:
            break
        }
    }

    /// Reads a WAVEFORMATEX (or WAVE_FORMAT_EXTENSIBLE) body into the data format, channel
    /// layout and magic cookie. Wave64 shares it.
    static func readFormat(_ r: inout ByteReader, _ p: inout FileProperties) throws(AudioError) {
        guard r.readableBytes >= 16 else { throw AudioError(.invalidChunk, "fmt chunk of \(r.readableBytes) bytes") }
        let fmtBytes = r.bytes
        var tag = r.readUInt16(.little)!
        let channels = UInt32(r.readUInt16(.little)!)
        let rate = Double(r.readUInt32(.little)!)
        let byteRate = r.readUInt32(.little)!
        let blockAlign = UInt32(r.readUInt16(.little)!)
        let bits = UInt32(r.readUInt16(.little)!)
        let extraSize = Int(r.readUInt16(.little) ?? 0)
        var validBits = bits
        guard channels > 0 else { throw AudioError(.unsupportedDataFormat, "a WAVE format with 0 channels") }
        guard rate > 0 else { throw AudioError(.unsupportedDataFormat, "a WAVE format with a sample rate of 0") }
        guard blockAlign > 0 else { throw AudioError(.unsupportedDataFormat, "a WAVE format with a block size of 0") }
        if tag == WAVEFormatTag.extensible {
            guard extraSize >= 22, r.readableBytes >= 22 else { throw AudioError(.invalidChunk, "WAVE_FORMAT_EXTENSIBLE without its extension") }
            let v = UInt32(r.readUInt16(.little)!)
            if v > 0 && v <= bits { validBits = v }
            let mask = r.readUInt32(.little)!
            tag = r.readUInt16(.little)!  // the sub-format GUID begins with the format tag
            p.channelLayout = ChannelLayout(waveChannelMask: mask)
        }
        if validBits != bits { p.sourceBitDepth = Int32(validBits) }
        let container = blockAlign / channels
        var f: StreamDescription
        switch tag {
        case WAVEFormatTag.pcm:
            guard bits >= 1, bits <= 64, container >= (bits + 7) / 8, container <= 8, blockAlign == container * channels else {
                throw AudioError(.unsupportedDataFormat, "\(bits)-bit PCM in blocks of \(blockAlign) bytes for \(channels) channels")
            }
            f = .pcm(sampleRate: rate, channels: channels, bits: validBits, isSigned: bits > 8, bytesPerSample: container)
            p.dataFormatName = "\(validBits)-bit little-endian \(bits > 8 ? "signed" : "unsigned") integer PCM"
        case WAVEFormatTag.ieeeFloat:
            guard bits == 32 || bits == 64, container == bits / 8, blockAlign == container * channels else {
                throw AudioError(.unsupportedDataFormat, "\(bits)-bit float in blocks of \(blockAlign) bytes")
            }
            f = .pcm(sampleRate: rate, channels: channels, bits: bits, isFloat: true)
            p.dataFormatName = "\(bits)-bit little-endian float PCM"
        case WAVEFormatTag.uLaw, WAVEFormatTag.aLaw:
            guard container == 1, blockAlign == channels else { throw AudioError(.unsupportedDataFormat, "G.711 with \(container)-byte samples") }
            f = StreamDescription(sampleRate: rate, formatID: tag == WAVEFormatTag.uLaw ? .uLaw : .aLaw,
                                  bytesPerPacket: channels, framesPerPacket: 1, bytesPerFrame: channels,
                                  channelsPerFrame: channels, bitsPerChannel: 8)
            p.dataFormatName = tag == WAVEFormatTag.uLaw ? "µ-law 2:1" : "A-law 2:1"
        case WAVEFormatTag.imaADPCM:
            guard bits == 4, blockAlign > 4 * channels, (blockAlign - 4 * channels) % (4 * channels) == 0 else {
                throw AudioError(.unsupportedDataFormat, "IMA ADPCM with \(bits) bits in blocks of \(blockAlign) bytes")
            }
            let computed = (blockAlign - 4 * channels) * 8 / (4 * channels) + 1
            f = StreamDescription(sampleRate: rate, formatID: .dviIntelIMA, bytesPerPacket: blockAlign,
                                  framesPerPacket: computed, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 4)
            p.magicCookie = fmtBytes
            p.dataFormatName = "IMA ADPCM"
        case WAVEFormatTag.msADPCM:
            guard bits == 4, blockAlign >= 7 * channels else {
                throw AudioError(.unsupportedDataFormat, "MS ADPCM with \(bits) bits in blocks of \(blockAlign) bytes")
            }
            let computed = (blockAlign - 7 * channels) * 8 / (4 * channels) + 2
            var spb = computed
            if extraSize >= 2, let s = r.readUInt16(.little), s > 0, UInt32(s) <= computed { spb = UInt32(s) }
            f = StreamDescription(sampleRate: rate, formatID: .microsoftADPCM, bytesPerPacket: blockAlign,
                                  framesPerPacket: spb, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 4)
            p.magicCookie = fmtBytes
            p.dataFormatName = "Microsoft ADPCM"
        default:
            throw AudioError(.unsupportedDataFormat, "WAVE format tag 0x\(String(tag, radix: 16)) is not supported")
        }
        if !f.isPCM { p.bitRate = byteRate.multipliedReportingOverflow(by: 8).overflow ? nil : byteRate * 8 }
        p.dataFormat = f
    }

    public mutating func audioData(_ chunk: ChunkHeader, prefix: inout ByteReader, dataStart: Int64,
                                   properties p: inout FileProperties) throws(AudioError) -> (start: Int64, layout: DataLayout)
    {
        let f = p.dataFormat!
        if let frames = factFrames, !f.isPCM, f.framesPerPacket > 0, let size = chunk.bodySize {
            let packets = size / Int64(f.bytesPerPacket)
            let total = packets * Int64(f.framesPerPacket)
            if frames <= total, total - frames < Int64(f.framesPerPacket) {
                p.packetTableInfo = PacketTableInfo(numberValidFrames: frames, primingFrames: 0,
                                                    remainderFrames: Int32(total - frames))
            }
        }
        return (dataStart, .constant(bytesPerPacket: Int(f.bytesPerPacket)))
    }

    static let infoKeys: [FourCC: String] = [
        "INAM": InfoDictionary.title, "IART": InfoDictionary.artist, "IPRD": InfoDictionary.album,
        "ICMT": InfoDictionary.comments, "ICRD": InfoDictionary.year, "IGNR": InfoDictionary.genre,
        "ICOP": InfoDictionary.copyright, "ISFT": InfoDictionary.encodingApplication,
        "ITRK": InfoDictionary.trackNumber, "IPRT": InfoDictionary.trackNumber, "IENG": "engineer",
        "ISBJ": "subject", "IKEY": "keywords", "ICMS": "commissioned",
    ]
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = Substring(self)
        while let last = s.last, last == " " || last == "\0" || last == "\n" || last == "\r" { s.removeLast() }
        return String(s)
    }
}

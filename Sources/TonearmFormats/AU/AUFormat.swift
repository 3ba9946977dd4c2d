import TonearmCore

/// Sun/NeXT audio ('.snd'): a 24-byte big-endian header, an annotation up to the data
/// offset, then the samples.
///
/// | bytes | field |
/// |---|---|
/// | 0  | magic `.snd` |
/// | 4  | data offset (≥ 24) |
/// | 8  | data size, 0xFFFFFFFF when unknown (the data runs to the end) |
/// | 12 | encoding: 1 µ-law, 2/3/4/5 signed 8/16/24/32-bit, 6/7 float 32/64, 27 A-law |
/// | 16 | sample rate |
/// | 20 | channels |
enum AU {
    static let headerSize = 24
    /// Annotations longer than this are skipped rather than read into the info dictionary.
    static let maximumAnnotationSize = 1 << 16
    static let unknownSize: UInt32 = 0xFFFF_FFFF

    enum Encoding {
        static let uLaw: UInt32 = 1
        static let int8: UInt32 = 2
        static let int16: UInt32 = 3
        static let int24: UInt32 = 4
        static let int32: UInt32 = 5
        static let float32: UInt32 = 6
        static let float64: UInt32 = 7
        static let aLaw: UInt32 = 27
    }

    static func dataFormat(encoding: UInt32, rate: UInt32, channels: UInt32) throws(AudioError)
        -> (format: StreamDescription, name: String)
    {
        guard channels >= 1, channels <= 1024 else {
            throw AudioError(.unsupportedDataFormat, "an AU header with \(channels) channels")
        }
        guard rate > 0 else { throw AudioError(.unsupportedDataFormat, "an AU header with a sample rate of 0") }
        let r = Double(rate)
        func integer(_ bits: UInt32) -> (StreamDescription, String) {
            var f = StreamDescription.pcm(sampleRate: r, channels: channels, bits: bits, isBigEndian: true)
            f.formatFlags.insert(.isBigEndian)  // 8-bit too, as Apple marks big-endian files' formats
            return (f, bits == 8 ? "8-bit signed integer PCM" : "\(bits)-bit big-endian signed integer PCM")
        }
        func g711(_ id: AudioFormatID) -> (StreamDescription, String) {
            (StreamDescription(sampleRate: r, formatID: id, bytesPerPacket: channels, framesPerPacket: 1,
                               bytesPerFrame: channels, channelsPerFrame: channels, bitsPerChannel: 8),
             id == .uLaw ? "µ-law 2:1" : "A-law 2:1")
        }
        switch encoding {
        case Encoding.uLaw: return g711(.uLaw)
        case Encoding.aLaw: return g711(.aLaw)
        case Encoding.int8: return integer(8)
        case Encoding.int16: return integer(16)
        case Encoding.int24: return integer(24)
        case Encoding.int32: return integer(32)
        case Encoding.float32, Encoding.float64:
            let bits: UInt32 = encoding == Encoding.float32 ? 32 : 64
            return (.pcm(sampleRate: r, channels: channels, bits: bits, isFloat: true, isBigEndian: true),
                    "\(bits)-bit big-endian float PCM")
        default:
            throw AudioError(.unsupportedDataFormat, "AU encoding \(encoding) is not supported")
        }
    }

    /// The encoding that stores a format, or nil when AU cannot.
    static func encoding(for f: StreamDescription) -> UInt32? {
        switch f.formatID {
        case .uLaw: return Encoding.uLaw
        case .aLaw: return Encoding.aLaw
        case .linearPCM:
            let bytes = f.bytesPerSample
            if f.isFloat {
                guard f.isBigEndian else { return nil }
                return f.bitsPerChannel == 32 ? Encoding.float32 : f.bitsPerChannel == 64 ? Encoding.float64 : nil
            }
            guard f.isSignedInteger, bytes * 8 == f.bitsPerChannel, f.isBigEndian || bytes == 1 else { return nil }
            switch bytes {
            case 1: return Encoding.int8
            case 2: return Encoding.int16
            case 3: return Encoding.int24
            case 4: return Encoding.int32
            default: return nil
            }
        default:
            return nil
        }
    }

    /// The annotation as text, when it is text: printable characters (tabs and line ends
    /// allowed) up to the NUL padding.
    static func annotationText(_ raw: [UInt8]) -> String? {
        var end = raw.count
        while end > 0 && raw[end - 1] == 0 { end -= 1 }
        let bytes = raw[..<end]
        guard !bytes.isEmpty else { return nil }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return nil }
        let text = decodeText(Array(bytes))
        return text.isEmpty ? nil : text
    }
}

/// The AU parser. AU is not chunked, so it has a small state machine of its own: header,
/// annotation, then the samples as a ``ConstantPacketRegion``, as ``ChunkedParser`` does.
public final class AUParser: PropertyStoringParser {
    public var properties = FileProperties(fileType: .next)
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []

    private enum State {
        case header
        case annotation(dataOffset: Int64, dataSize: UInt32)
        case audio
        case done
    }
    private var state = State.header
    private var region: ConstantPacketRegion?

    public init() {}

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        switch state {
        case .header:
            guard var r = input.reader(AU.headerSize) else {
                if input.isEndOfStream { throw AudioError(.invalidFile, "the file ends inside its \(AU.headerSize)-byte header") }
                return .needMore
            }
            let magic = r.readFourCC()!
            guard magic == ".snd" else { throw AudioError(.unsupportedFileType, "not an AU file (it begins with \(magic))") }
            let dataOffset = r.readUInt32()!, dataSize = r.readUInt32()!
            let encoding = r.readUInt32()!, rate = r.readUInt32()!, channels = r.readUInt32()!
            guard dataOffset >= UInt32(AU.headerSize) else {
                throw AudioError(.invalidFile, "the AU data offset \(dataOffset) lies inside the header")
            }
            if let total = input.sourceSize, Int64(dataOffset) > total {
                throw AudioError(.invalidFile, "the AU data offset \(dataOffset) lies past the end of the file (\(total) bytes)")
            }
            let (f, name) = try AU.dataFormat(encoding: encoding, rate: rate, channels: channels)
            properties.dataFormat = f
            properties.dataFormatName = name
            state = .annotation(dataOffset: Int64(dataOffset), dataSize: dataSize)
            return .consume(AU.headerSize)

        case .annotation(let dataOffset, let dataSize):
            let length = dataOffset - input.offset
            if length > 0 && length <= Int64(AU.maximumAnnotationSize) {
                guard let r = input.reader(Int(length)) else {
                    if input.isEndOfStream { throw AudioError(.invalidFile, "the file ends inside its annotation") }
                    return .needMore
                }
                if let text = AU.annotationText(r.bytes) { properties.info[InfoDictionary.comments] = text }
            }
            setUpAudio(start: dataOffset, size: dataSize, sourceSize: input.sourceSize)
            if length <= 0 { return try step(input) }
            return length <= Int64(input.count) ? .consume(Int(length)) : .seek(to: dataOffset)

        case .audio:
            // At the end of the stream nothing is left to hand out (and the region would keep
            // asking for the rest of a partial last packet).
            guard input.wantsPackets, !(input.isEndOfStream && input.count == 0), let region, let s = region.step(input) else {
                state = .done
                return .finished
            }
            return s

        case .done:
            return .finished
        }
    }

    /// The data runs from the data offset for the size the header gives, or to the end when
    /// the size is 0xFFFFFFFF; on a source of known size, never past its end.
    private func setUpAudio(start: Int64, size: UInt32, sourceSize: Int64?) {
        let f = properties.dataFormat!
        let bpp = Int64(f.bytesPerPacket)
        var end: Int64? = size == AU.unknownSize ? nil : start + Int64(size)
        if let total = sourceSize { end = min(end ?? total, total) }
        if let end {
            let bytes = max(0, end - start)
            properties.audioDataByteCount = bytes
            properties.audioDataPacketCount = bytes / bpp
        }
        properties.maximumPacketSize = UInt32(bpp)
        properties.dataOffset = start
        let bits = Double(f.bytesPerPacket) * 8 * f.sampleRate
        if bits < Double(UInt32.max) { properties.bitRate = UInt32(bits) }
        region = ConstantPacketRegion(start: start, end: end, bytesPerPacket: Int(bpp))
        state = .audio
        becomeReady()
    }


    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady, let region else { throw AudioError(.illegalOperation, "cannot resume before the data offset is known") }
        guard offset >= region.start else { throw AudioError(.invalidPacketOffset, "byte \(offset) lies before the audio data") }
        // Past the audio (trailing bytes): accepted and ignored.
        if let end = region.end, offset > end { state = .done; return }
        state = .audio
    }
}

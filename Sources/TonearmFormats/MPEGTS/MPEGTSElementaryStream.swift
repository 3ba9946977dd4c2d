import TonearmCore

/// A packet cut out of an elementary stream.
struct ESPacket {
    /// Offset of its first byte in the elementary stream (the bytes of the PES payloads of
    /// one stream, counted from the first one the parser saw).
    var esOffset: Int64
    var data: [UInt8]
    /// Frames it decodes to when they vary (Opus); 0 when the format's frames per packet hold.
    var frames: UInt32
}

/// What a framer reports, in order.
enum ESEvent {
    /// The stream's format is known (its first frame was read): it comes before the packets.
    case configured
    case packet(ESPacket)
}

/// Cuts the elementary stream of one audio stream into packets, as the codec's own parser
/// does for the raw stream.
protocol TSElementaryFramer: AnyObject {
    /// What was found since the parser last looked; the parser drains it.
    var events: [ESEvent] { get set }
    /// The format, cookie and so on, once configured.
    var format: TSStreamFormat? { get }
    /// The next bytes of the stream.
    func push(_ bytes: UnsafeRawBufferPointer) throws(AudioError)
    /// The stream ends: hands out the last packet.
    func finish() throws(AudioError)
    /// Bytes were lost before the next ones: the packet being put together is dropped and
    /// the framing is searched for again.
    func lose()
}

/// What the demuxer reports of an elementary stream.
struct TSStreamFormat: Equatable {
    var dataFormat: StreamDescription
    var magicCookie: [UInt8]?
    var formatList: [AudioFormatListItem]?
    var channelLayout: ChannelLayout?
    var name: String?
    /// Frames to drop at the start (an Opus start trim).
    var priming: Int64 = 0
}

/// A sync-word elementary stream (ADTS, LOAS, MPEG audio, AC-3, E-AC-3), framed by the
/// same ``FramedParser`` that reads such a stream on its own, so that the packets and the
/// properties are those of the raw file: it runs behind a push driver of its own.
final class FramedElementaryFramer<Format: FramedFormat>: TSElementaryFramer {
    var events: [ESEvent] = []
    private let parser: FramedParser<Format>
    private let driver: ParserDriver

    init(_ format: Format, fileType: AudioFileTypeID) {
        parser = FramedParser(format: format, fileType: fileType)
        driver = ParserDriver(parser: parser)
        driver.onProperty = { [unowned self] id in
            if id == .readyToProducePackets { events.append(.configured) }
        }
        driver.onPackets = { [unowned self] data, count, descriptions in
            let base = driver.offset
            guard let descriptions else {
                events.append(.packet(ESPacket(esOffset: base, data: Array(data), frames: 0)))
                return
            }
            for d in descriptions {
                let start = Int(d.startOffset)
                events.append(.packet(ESPacket(esOffset: base + d.startOffset,
                                               data: Array(data[start..<start + Int(d.dataByteSize)]),
                                               frames: d.variableFramesInPacket)))
            }
        }
    }

    var format: TSStreamFormat? {
        let p = parser.properties
        guard parser.isReady, let f = p.dataFormat else { return nil }
        return TSStreamFormat(dataFormat: f, magicCookie: p.magicCookie, formatList: p.formatList,
                              channelLayout: p.channelLayout, name: p.dataFormatName)
    }

    func push(_ bytes: UnsafeRawBufferPointer) throws(AudioError) {
        try driver.push(bytes, endOfStream: false)
    }

    func finish() throws(AudioError) {
        try driver.push(UnsafeRawBufferPointer(start: nil, count: 0), endOfStream: true)
    }

    func lose() {
        let at = driver.offset + Int64(driver.bufferedCount)
        driver.restart(at: at)
        if parser.isReady { try? parser.resume(at: at) }
    }
}

/// Opus in TS (the Opus-in-MPEG-TS mapping of ETSI TS 102 366's successor drafts): each
/// access unit follows a control header: 11 bits 0x3FF, start-trim, end-trim and
/// control-extension flags, 2 reserved bits, the unit's size as a run of 0xFF bytes ended
/// by one below 0xFF (their sum), the trims (16 bits each) and the extension when flagged.
///
/// The magic cookie is an OpusHead (RFC 7845 §5.1), as the Ogg parser reports one: version
/// 1, the channels of the extension descriptor's channel_config_code (0 is dual mono:
/// mapping family 255, two uncoupled streams; 1–2 family 0; 3–8 family 1 with the Vorbis
/// order), the first unit's start trim as the pre-skip, 48 kHz.
final class OpusElementaryFramer: TSElementaryFramer {
    var events: [ESEvent] = []
    private(set) var format: TSStreamFormat?
    private let channelConfig: UInt8
    private var buffer: [UInt8] = []
    /// Elementary-stream offset of `buffer[0]`.
    private var bufferStart: Int64 = 0
    /// The end trim of the last unit, in frames.
    private(set) var endTrim: Int64 = 0
    /// The largest access unit taken (an Opus packet is at most 120 ms of 8 × 1275 bytes,
    /// far below this); a larger size claims damage, and the framing is searched again.
    static let maximumUnitSize = 1 << 16

    init(channelConfig: UInt8) { self.channelConfig = channelConfig }

    func push(_ bytes: UnsafeRawBufferPointer) throws(AudioError) {
        buffer.append(contentsOf: bytes)
        try cut()
    }

    func finish() throws(AudioError) { try cut() }

    func lose() {
        bufferStart += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    private func cut() throws(AudioError) {
        var i = 0
        defer {
            bufferStart += Int64(i)
            buffer.removeFirst(i)
        }
        while i + 2 <= buffer.count {
            guard buffer[i] == 0x7F, buffer[i + 1] & 0xE0 == 0xE0 else {
                i += 1  // not a control header: search for the next one
                continue
            }
            let flags = buffer[i + 1]
            var k = i + 2
            var size = 0
            var ended = false
            while k < buffer.count {
                let b = buffer[k]
                k += 1
                size += Int(b)
                if b != 0xFF { ended = true; break }
                if size > OpusElementaryFramer.maximumUnitSize { break }
            }
            guard ended else {
                if size > OpusElementaryFramer.maximumUnitSize { i += 1; continue }
                return
            }
            var startTrim: Int64 = 0, endTrim: Int64 = 0
            if flags & 0x10 != 0 {
                guard k + 2 <= buffer.count else { return }
                startTrim = Int64(buffer[k]) << 8 | Int64(buffer[k + 1])
                k += 2
            }
            if flags & 0x08 != 0 {
                guard k + 2 <= buffer.count else { return }
                endTrim = Int64(buffer[k]) << 8 | Int64(buffer[k + 1])
                k += 2
            }
            if flags & 0x04 != 0 {
                guard k < buffer.count else { return }
                k += 1 + Int(buffer[k])
            }
            guard k + size <= buffer.count else { return }
            if size > 0 {
                let data = Array(buffer[k..<k + size])
                if format == nil { try configure(preSkip: startTrim) }
                let frames = data.withUnsafeBytes { UInt32(OpusTOC.packetFrames($0)) }
                self.endTrim = endTrim
                events.append(.packet(ESPacket(esOffset: bufferStart + Int64(k), data: data, frames: frames)))
            }
            i = k + size
        }
    }

    private func configure(preSkip: Int64) throws(AudioError) {
        let code = Int(channelConfig)
        guard code <= 8 else { throw AudioError(.unsupportedDataFormat, "Opus in TS with channel_config_code \(code) is not supported") }
        let channels = code == 0 ? 2 : code
        var head = Array("OpusHead".utf8) + [1, UInt8(channels), UInt8(preSkip & 0xFF), UInt8(preSkip >> 8 & 0xFF),
                                             0x80, 0xBB, 0, 0, 0, 0]
        if code == 0 {
            head += [255, 2, 0, 0, 1]
        } else if channels <= 2 {
            head += [0]
        } else {
            // Streams and coupled streams of the Vorbis-order surround layouts (RFC 7845 §5.1.1.2).
            let streams: [UInt8] = [2, 2, 3, 4, 4, 5], coupled: [UInt8] = [1, 2, 2, 2, 3, 3]
            let maps: [[UInt8]] = [[0, 2, 1], [0, 1, 2, 3], [0, 4, 1, 2, 3], [0, 4, 1, 2, 3, 5], [0, 4, 1, 2, 3, 5, 6],
                                   [0, 6, 1, 2, 3, 4, 5, 7]]
            head += [1, streams[channels - 3], coupled[channels - 3]] + maps[channels - 3]
        }
        var codec = OggCodec(kind: .opus)
        try codec.takeHeader(head)
        guard let f = codec.format else { throw AudioError(.unsupportedDataFormat, "Opus channel_config_code \(code)") }
        format = TSStreamFormat(dataFormat: f, magicCookie: head, channelLayout: codec.channelLayout, name: "Opus", priming: preSkip)
        events.append(.configured)
    }
}

extension TSStreamKind {
    /// A framer for the stream's codec.
    func makeFramer() -> TSElementaryFramer? {
        switch self {
        case .adts: FramedElementaryFramer(ADTSFormat(), fileType: .adts)
        case .latm: FramedElementaryFramer(LOASFormat(), fileType: .loas)
        case .mpegAudio: FramedElementaryFramer(MPEGFormat(), fileType: .mp3)
        case .ac3: FramedElementaryFramer(AC3Format(), fileType: .ac3)
        case .eac3: FramedElementaryFramer(AC3Format(), fileType: .eac3)
        case .opus(let code): OpusElementaryFramer(channelConfig: code)
        default: nil
        }
    }
}

import TonearmCore

/// The codec of one logical stream, named by its first packet.
enum OggCodecKind: Sendable, Equatable {
    case vorbis, opus, flac, speex
    /// A stream Tonearm does not play (Theora, Skeleton, Kate, CELT, …), by name.
    case other(String)

    /// Identifies a stream from the first packet of its BOS page.
    static func identify(_ p: [UInt8]) -> OggCodecKind {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let b = Array(text.utf8)
            return p.count >= offset + b.count && Array(p[offset..<offset + b.count]) == b
        }
        if p.first == 0x01 && starts("vorbis", at: 1) { return .vorbis }
        if starts("OpusHead") { return .opus }
        if p.first == 0x7F && starts("FLAC", at: 1) { return .flac }
        if starts("Speex   ") { return .speex }
        if p.first == 0x80 && starts("theora", at: 1) { return .other("Theora") }
        if starts("fishead\0") { return .other("Skeleton") }
        if p.first == 0x80 && starts("kate", at: 1) { return .other("Kate") }
        if starts("CELT    ") { return .other("CELT") }
        if starts("PCM     ") { return .other("OggPCM") }
        if starts("BBCD\0") { return .other("Dirac") }
        if starts("OVP80") { return .other("VP8") }
        if p.first == 0x7F && starts("MIDI", at: 1) { return .other("MIDI") }
        return .other("unknown")
    }

    var name: String {
        switch self {
        case .vorbis: "Vorbis"
        case .opus: "Opus"
        case .flac: "FLAC"
        case .speex: "Speex"
        case .other(let n): n
        }
    }
}

/// The headers of one audio stream and what they say: the format, the cookie, the tags,
/// and how many frames each audio packet decodes to.
///
/// Magic cookies (documented here because Apple defines none for Ogg's codecs):
/// - Vorbis ('vorb'): the three header packets in Xiph lacing, as Matroska's CodecPrivate
///   holds them: a byte 2 (packets − 1), the sizes of the first two packets as runs of 255
///   ended by a byte below 255, then the three packets.
/// - Opus ('opus'): the OpusHead packet (RFC 7845 §5.1), as is.
/// - FLAC ('flac'): as for native FLAC files, the body of an MP4 'dfLa' box: 4 zero bytes
///   (version and flags), then the STREAMINFO block with its header, marked last.
/// - Speex ('spx '): the 80-byte Speex header packet, as is.
struct OggCodec {
    let kind: OggCodecKind
    /// The header packets taken so far (their bytes are kept for the cookie).
    private(set) var headers: [[UInt8]] = []
    private(set) var isComplete = false

    private(set) var format: StreamDescription?
    private(set) var cookie: [UInt8]?
    private(set) var comment: VorbisComment?
    /// PICTURE blocks, from FLAC metadata or from METADATA_BLOCK_PICTURE comments.
    private(set) var pictures: [FLACPicture] = []
    /// Frames the decoder must drop at the start (Opus pre-skip), in output frames.
    private(set) var preSkip: Int64 = 0
    /// Bits per second the header announces, when it does.
    private(set) var nominalBitRate: UInt32?
    /// The largest packet the header announces (FLAC's maximum frame size), when it does.
    private(set) var maximumPacketSizeHint: UInt32?
    private(set) var sourceBitDepth: Int32?
    private(set) var channelLayout: ChannelLayout?
    /// Opus: the rate of the encoder's input, for information only (the output is 48 kHz).
    private(set) var inputSampleRate: UInt32?

    // Vorbis
    private var blockSizes = (0, 0)
    private var modeBlockFlags: [Bool] = []
    private var previousBlockSize: Int?
    // Speex
    private var speexFramesPerPacket: UInt32 = 0
    private var speexExtraHeaders = 0
    // FLAC
    private var flacHeaderPackets: Int?
    private var flacLastBlockSeen = false

    /// The largest header packet kept (a comment header with pictures can be large).
    static let maximumHeaderSize = 16 << 20

    init(kind: OggCodecKind) { self.kind = kind }

    static func fail(_ why: String) -> AudioError { AudioError(.invalidFile, why) }

    /// Takes the next header packet. Afterwards `isComplete` says whether audio packets follow.
    mutating func takeHeader(_ p: [UInt8]) throws(AudioError) {
        precondition(!isComplete)
        switch kind {
        case .vorbis: try takeVorbisHeader(p)
        case .opus: try takeOpusHeader(p)
        case .flac: try takeFLACHeader(p)
        case .speex: try takeSpeexHeader(p)
        case .other(let name): throw AudioError(.unsupportedDataFormat, "\(name) streams are not audio Tonearm reads")
        }
        headers.append(p)
        if isComplete { finish() }
    }

    /// FLAC in Ogg: a packet that is a frame, not a metadata block, ends the headers early
    /// (when the mapping header gave no count and no block was marked last).
    func isAudioPacket(_ p: [UInt8]) -> Bool {
        kind == .flac && headers.count >= 1 && p.count >= 2 && p[0] == 0xFF && p[1] & 0xFE == 0xF8
    }

    mutating func endHeadersEarly() {
        isComplete = true
        finish()
    }

    // MARK: Vorbis (Vorbis I §4.2)

    private mutating func takeVorbisHeader(_ p: [UInt8]) throws(AudioError) {
        let type: UInt8 = [1, 3, 5][headers.count]
        guard p.count >= 7, p[0] == type, Array(p[1..<7]) == Array("vorbis".utf8) else {
            throw OggCodec.fail("Vorbis header \(headers.count + 1) is not a \(["identification", "comment", "setup"][headers.count]) header")
        }
        switch type {
        case 1:  // §4.2.2
            guard p.count >= 30 else { throw OggCodec.fail("the Vorbis identification header is \(p.count) bytes") }
            var r = ByteReader(p)
            r.skip(7)
            let version = r.readUInt32(.little)!, channels = r.readUInt8()!, rate = r.readUInt32(.little)!
            _ = r.readInt32(.little)
            let nominal = r.readInt32(.little)!
            _ = r.readInt32(.little)
            let sizes = r.readUInt8()!, framing = r.readUInt8()!
            guard version == 0 else { throw AudioError(.unsupportedDataFormat, "Vorbis version \(version)") }
            guard channels > 0, rate > 0 else { throw OggCodec.fail("a Vorbis header with \(channels) channels at \(rate) Hz") }
            let small = Int(sizes & 0x0F), large = Int(sizes >> 4)
            guard (6...13).contains(small), (6...13).contains(large), small <= large else {
                throw OggCodec.fail("Vorbis block sizes 2^\(small) and 2^\(large)")
            }
            guard framing & 1 == 1 else { throw OggCodec.fail("the Vorbis identification header has no framing bit") }
            blockSizes = (1 << small, 1 << large)
            if nominal > 0 { nominalBitRate = UInt32(nominal) }
            format = StreamDescription(sampleRate: Double(rate), formatID: .vorbis, bytesPerPacket: 0, framesPerPacket: 0,
                                       bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
            channelLayout = OggCodec.vorbisOrderLayout(channels: Int(channels))
        case 3:  // §5.2.1
            var r = ByteReader(p, range: 7..<p.count)
            comment = try VorbisComment.read(&r)
        default:
            modeBlockFlags = try VorbisSetup.modeBlockFlags(p, channels: Int(format!.channelsPerFrame))
            isComplete = true
        }
    }

    /// Vorbis I §4.3.9 channel order, which Opus mapping family 1 shares; only for more than
    /// two channels (mono and stereo need no layout). The decoder reports the same layout.
    static func vorbisOrderLayout(channels: Int) -> ChannelLayout? { ChannelLayout.vorbisOrder(channels: channels) }

    // MARK: Opus (RFC 7845 §5)

    private mutating func takeOpusHeader(_ p: [UInt8]) throws(AudioError) {
        if headers.isEmpty {
            guard p.count >= 19 else { throw OggCodec.fail("OpusHead is \(p.count) bytes") }
            let version = p[8], channels = p[9], family = p[18]
            // §5.1: a major version (the high 4 bits) other than 0 is incompatible.
            guard version >> 4 == 0 else { throw AudioError(.unsupportedDataFormat, "Opus header version \(version)") }
            guard channels > 0 else { throw OggCodec.fail("OpusHead gives 0 channels") }
            if family == 0 {
                guard channels <= 2 else { throw OggCodec.fail("Opus mapping family 0 with \(channels) channels") }
            } else {
                guard p.count >= 21 + Int(channels) else { throw OggCodec.fail("OpusHead's channel mapping table is cut short") }
                let streams = Int(p[19]), coupled = Int(p[20])
                guard streams > 0, coupled <= streams, streams + coupled <= 255 else {
                    throw OggCodec.fail("OpusHead gives \(streams) streams, \(coupled) coupled")
                }
                for i in 0..<Int(channels) {
                    let m = Int(p[21 + i])
                    guard m == 255 || m < streams + coupled else { throw OggCodec.fail("OpusHead maps a channel to stream \(m)") }
                }
                if family == 1 { channelLayout = OggCodec.vorbisOrderLayout(channels: Int(channels)) }
            }
            preSkip = Int64(UInt16(p[10]) | UInt16(p[11]) << 8)
            let rate = UInt32(p[12]) | UInt32(p[13]) << 8 | UInt32(p[14]) << 16 | UInt32(p[15]) << 24
            inputSampleRate = rate == 0 ? nil : rate
            format = StreamDescription(sampleRate: 48000, formatID: .opus, bytesPerPacket: 0, framesPerPacket: 0,
                                       bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
            cookie = p
        } else {
            guard p.count >= 8, Array(p[0..<8]) == Array("OpusTags".utf8) else {
                throw OggCodec.fail("the second Opus header is not OpusTags")
            }
            var r = ByteReader(p, range: 8..<p.count)
            comment = try VorbisComment.read(&r)
            isComplete = true
        }
    }

    // MARK: FLAC in Ogg (the FLAC project's Ogg mapping)

    private mutating func takeFLACHeader(_ p: [UInt8]) throws(AudioError) {
        if headers.isEmpty {
            // 0x7F "FLAC", major 1, minor, header packet count (BE16), "fLaC", STREAMINFO block.
            guard p.count >= 51, p[5] == 1, Array(p[9..<13]) == Array("fLaC".utf8) else {
                throw OggCodec.fail("the Ogg FLAC mapping header is malformed")
            }
            let count = Int(p[7]) << 8 | Int(p[8])
            flacHeaderPackets = count == 0 ? nil : count
            guard p[13] & 0x7F == 0, Int(p[14]) << 16 | Int(p[15]) << 8 | Int(p[16]) == 34 else {
                throw OggCodec.fail("the Ogg FLAC mapping header has no STREAMINFO")
            }
            // The same format, cookie and layout as native FLAC files. STREAMINFO (RFC 9639
            // §8.2): block sizes 16+16, frame sizes 24+24, rate 20, channels − 1 3, bits − 1 5,
            // total samples 36, MD5 128 bits.
            var b = BitReader(Array(p[17..<51]))
            let minBlock = Int(b.read(16)!), maxBlock = Int(b.read(16)!)
            let minFrame = Int(b.read(24)!), maxFrame = Int(b.read(24)!)
            let rate = Int(b.read(20)!), channels = Int(b.read(3)!) + 1, bits = Int(b.read(5)!) + 1
            let total = Int64(b.read(36)!)
            guard maxBlock >= 16, minBlock <= maxBlock else {
                throw OggCodec.fail("STREAMINFO gives block sizes \(minBlock) to \(maxBlock)")
            }
            guard rate > 0 else { throw AudioError(.unsupportedDataFormat, "STREAMINFO gives a sample rate of 0") }
            guard bits >= 4 else { throw OggCodec.fail("STREAMINFO gives \(bits) bits per sample") }
            let info = FLACStreamInfo(minimumBlockSize: minBlock, maximumBlockSize: maxBlock, minimumFrameSize: minFrame,
                                      maximumFrameSize: maxFrame, sampleRate: rate, channels: channels, bitsPerSample: bits,
                                      totalSamples: total, md5: Array(p[35..<51]))
            if info.maximumFrameSize > 0 { maximumPacketSizeHint = UInt32(info.maximumFrameSize) }
            sourceBitDepth = Int32(info.bitsPerSample)
            format = StreamDescription(sampleRate: Double(info.sampleRate), formatID: .flac,
                                       formatFlags: AudioFormatFlags(rawValue: info.appleFormatFlags), bytesPerPacket: 0,
                                       framesPerPacket: info.isFixedBlockSize ? UInt32(info.maximumBlockSize) : 0,
                                       bytesPerFrame: 0, channelsPerFrame: UInt32(info.channels),
                                       bitsPerChannel: UInt32(info.bitsPerSample))
            channelLayout = FLACParser.defaultLayout(channels: info.channels)
            cookie = info.magicCookie
            flacLastBlockSeen = p[13] & 0x80 != 0
            if flacLastBlockSeen { isComplete = true }
            return
        }
        // A metadata block: header byte (last flag, type), 24-bit length, body.
        guard p.count >= 4 else { throw OggCodec.fail("an Ogg FLAC metadata packet is \(p.count) bytes") }
        let type = p[0] & 0x7F
        let length = Int(p[1]) << 16 | Int(p[2]) << 8 | Int(p[3])
        guard length <= p.count - 4 else { throw OggCodec.fail("a FLAC metadata block runs past its packet") }
        switch type {
        case 4:
            var r = ByteReader(p, range: 4..<4 + length)
            comment = try VorbisComment.read(&r)
        case 6:
            var r = ByteReader(p, range: 4..<4 + length)
            if let picture = try? FLACPicture.read(&r) { pictures.append(picture) }
        case 127:
            throw OggCodec.fail("FLAC metadata block type 127")
        default:
            break
        }
        if p[0] & 0x80 != 0 { flacLastBlockSeen = true }
        if flacLastBlockSeen || (flacHeaderPackets.map { headers.count >= $0 } ?? false) { isComplete = true }
    }

    // MARK: Speex (the Speex manual's Ogg header layout, all fields 32-bit little-endian)

    private mutating func takeSpeexHeader(_ p: [UInt8]) throws(AudioError) {
        if headers.isEmpty {
            guard p.count >= 80 else { throw OggCodec.fail("the Speex header is \(p.count) bytes") }
            func field(_ at: Int) -> UInt32 {
                UInt32(p[at]) | UInt32(p[at + 1]) << 8 | UInt32(p[at + 2]) << 16 | UInt32(p[at + 3]) << 24
            }
            let rate = field(36), mode = field(40), channels = field(48), bitrate = Int32(bitPattern: field(52))
            let frameSize = field(56), perPacket = field(64), extra = field(68)
            guard rate > 0, rate <= 192_000 else { throw OggCodec.fail("a Speex header with a rate of \(rate)") }
            guard (1...2).contains(channels) else { throw OggCodec.fail("a Speex header with \(channels) channels") }
            guard mode <= 2 else { throw AudioError(.unsupportedDataFormat, "Speex mode \(mode)") }
            guard frameSize > 0, frameSize <= 4096, perPacket <= 64, extra <= 64 else {
                throw OggCodec.fail("a Speex header with \(frameSize)-frame blocks, \(perPacket) per packet, \(extra) extra headers")
            }
            speexFramesPerPacket = frameSize * max(1, perPacket)
            speexExtraHeaders = Int(extra)
            if bitrate > 0 { nominalBitRate = UInt32(bitrate) }
            format = StreamDescription(sampleRate: Double(rate), formatID: .speex, bytesPerPacket: 0,
                                       framesPerPacket: speexFramesPerPacket, bytesPerFrame: 0,
                                       channelsPerFrame: channels, bitsPerChannel: 0)
            cookie = Array(p[0..<80])
        } else if headers.count == 1 {
            // The comment header has the Vorbis comment layout; a broken one only loses the tags.
            var r = ByteReader(p)
            comment = try? VorbisComment.read(&r)
            if speexExtraHeaders == 0 { isComplete = true }
        } else if headers.count >= 1 + speexExtraHeaders {
            isComplete = true
        }
    }

    // MARK: After the headers

    private mutating func finish() {
        if kind == .vorbis {
            var w: [UInt8] = [2]
            for h in headers.prefix(2) {
                var n = h.count
                while n >= 255 { w.append(255); n -= 255 }
                w.append(UInt8(n))
            }
            for h in headers { w += h }
            cookie = w
        }
        if let comment {
            for text in comment.pictureBlocks {
                guard let raw = decodeBase64(text) else { continue }
                var r = ByteReader(raw)
                if let picture = try? FLACPicture.read(&r) { pictures.append(picture) }
            }
        }
    }

    /// The tags as an InfoDictionary.
    var info: InfoDictionary { comment?.infoDictionary ?? InfoDictionary() }

    /// Chapters from the comment fields `CHAPTERnnn=HH:MM:SS.sss` and `CHAPTERnnnNAME=title`
    /// (the chapter extension to Vorbis comments), in start order; fields that do not parse
    /// are ignored.
    var chapters: [Chapter] {
        guard let comment else { return [] }
        var starts: [String: Double] = [:], names: [String: String] = [:]
        for (name, value) in comment.fields {
            let upper = name.uppercased()
            guard upper.hasPrefix("CHAPTER") else { continue }
            let rest = upper.dropFirst(7)
            let digits = String(rest.prefix { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty, digits.count <= 4 else { continue }
            switch rest.dropFirst(digits.count) {
            case "": if let t = OggCodec.chapterTime(value) { starts[digits] = t }
            case "NAME": names[digits] = value
            default: continue
            }
        }
        return starts.map { Chapter(start: $0.value, title: names[$0.key] ?? "") }
            .sorted { ($0.start, $0.title) < ($1.start, $1.title) }
    }

    /// `HH:MM:SS.sss` (hours and fraction optional) in seconds.
    static func chapterTime(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count) else { return nil }
        var seconds = 0.0
        for (i, part) in parts.enumerated() {
            let last = i == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || (last && $0 == ".")) }),
                  let v = Double(part), v.isFinite, last || v == v.rounded() else { return nil }
            seconds = seconds * 60 + v
        }
        return seconds
    }

    /// The cover: the front cover (picture type 3) when there is one, else the first picture.
    var artwork: [UInt8]? { (pictures.first { $0.type == 3 } ?? pictures.first)?.data }

    // MARK: Frames per packet

    /// Forgets what the previous packet was, after a gap: the next Vorbis packet then decodes
    /// to no frames (its first half only primes the overlap).
    mutating func resetContinuity() { previousBlockSize = nil }

    /// The frames an audio packet decodes to, at the format's rate.
    mutating func frames(of p: UnsafeRawBufferPointer) -> UInt32 {
        switch kind {
        case .vorbis:
            // Vorbis I §4.3.1 and §4.3.8: packet type bit 0, the mode number in
            // ilog(modes − 1) bits; a packet returns (previous block + this block) / 4
            // frames, the first one none. A broken packet is skipped by decoders.
            guard p.count > 0, p[0] & 1 == 0, !modeBlockFlags.isEmpty else { return 0 }
            let bits = VorbisSetup.ilog(modeBlockFlags.count - 1)
            var value = 0
            for i in 0..<bits {
                let position = 1 + i
                guard position >> 3 < p.count else { return 0 }
                value |= Int(p[position >> 3] >> UInt8(position & 7) & 1) << i
            }
            guard value < modeBlockFlags.count else { return 0 }
            let size = modeBlockFlags[value] ? blockSizes.1 : blockSizes.0
            defer { previousBlockSize = size }
            guard let previous = previousBlockSize else { return 0 }
            return UInt32(previous / 4 + size / 4)
        case .opus:
            return UInt32(OpusTOC.packetFrames(p))
        case .flac:
            return OggCodec.flacFrames(p)
        case .speex:
            return speexFramesPerPacket
        case .other:
            return 0
        }
    }

    /// Frames of a FLAC frame from its header's block size code (FLAC format, FRAME_HEADER);
    /// 0 when the packet does not begin with a frame header.
    static func flacFrames(_ p: UnsafeRawBufferPointer) -> UInt32 {
        guard p.count >= 5, p[0] == 0xFF, p[1] & 0xFE == 0xF8 else { return 0 }
        let code = Int(p[2] >> 4)
        switch code {
        case 1: return 192
        case 2...5: return 576 << UInt32(code - 2)
        case 8...15: return 256 << UInt32(code - 8)
        case 6, 7:
            // The block size follows the UTF-8-style coded frame or sample number.
            let ones = (~p[4]).leadingZeroBitCount  // leading 1 bits of the first byte
            guard ones != 1, ones <= 7 else { return 0 }
            let length = max(1, ones)
            let at = 4 + length
            if code == 6 {
                guard at < p.count else { return 0 }
                return UInt32(p[at]) + 1
            }
            guard at + 1 < p.count else { return 0 }
            return (UInt32(p[at]) << 8 | UInt32(p[at + 1])) + 1
        default:
            return 0
        }
    }
}

import TonearmCore

/// What an audio track's codec says: Apple's stream description, magic cookie and channel
/// layout, and how many frames each of its frames (Tonearm's packets) decodes to.
///
/// Magic cookies, the same forms the Ogg and MP4 parsers give, so that one decoder serves all:
/// - A_OPUS: CodecPrivate, the OpusHead (RFC 7845 §5.1); one is made from the track's
///   channels and CodecDelay when it is missing.
/// - A_VORBIS: CodecPrivate, the three headers in Xiph lacing (RFC 9559's Vorbis mapping),
///   which is the Ogg parser's cookie form.
/// - A_FLAC: CodecPrivate is "fLaC" and metadata blocks; the cookie is Tonearm's FLAC
///   cookie (an MP4 dfLa body: 4 zero bytes and the STREAMINFO block marked last).
/// - A_AAC: CodecPrivate, the AudioSpecificConfig; for the old A_AAC/MPEG4/LC-style IDs,
///   which have none, one is made from the profile, rate and channels.
/// - MPEG audio, AC-3, E-AC-3 and PCM have none.
struct MatroskaAudio {
    enum Kind: Equatable { case opus, vorbis, aac, flac, mpeg, ac3, eac3, pcm }

    let kind: Kind
    var format: StreamDescription
    var formatList: [AudioFormatListItem]?
    var cookie: [UInt8]?
    var channelLayout: ChannelLayout?
    var sourceBitDepth: Int32?
    var name: String
    /// Tags the codec's own headers carry (Vorbis comments, FLAC VORBIS_COMMENT).
    var info = InfoDictionary()
    /// Frames the decoder drops at the start: Opus's CodecDelay (else its pre-skip).
    var primingFrames: Int64 = 0
    /// FLAC's STREAMINFO total, when it gives one.
    var flacTotalSamples: Int64 = 0
    var packetSizeBound: UInt32?
    private var vorbis: OggCodec?

    static let pcmIDs = ["A_PCM/INT/LIT", "A_PCM/INT/BIG", "A_PCM/FLOAT/IEEE"]

    static func isSupported(_ id: String) -> Bool {
        ["A_OPUS", "A_VORBIS", "A_AAC", "A_FLAC", "A_MPEG/L3", "A_MPEG/L2", "A_MPEG/L1", "A_AC3", "A_EAC3"].contains(id)
            || pcmIDs.contains(id) || id.hasPrefix("A_AAC/") || id.hasPrefix("A_AC3/")
    }

    /// True when each packet's frames are counted one by one (descriptions carry them);
    /// false when the format's frames per packet are constant.
    var countsFrames: Bool { format.framesPerPacket == 0 }

    init(track t: MatroskaTrack) throws(AudioError) {
        let rate = t.samplingFrequency
        guard rate.isFinite, rate >= 1, rate <= 16_777_216 else {
            throw AudioError(.unsupportedDataFormat, "a Matroska audio track at \(rate) Hz")
        }
        guard (1...255).contains(t.channels) else {
            throw AudioError(.unsupportedDataFormat, "a Matroska audio track with \(t.channels) channels")
        }
        let channels = Int(t.channels)
        func described(_ id: AudioFormatID, _ fpp: UInt32, rate r: Double = rate) -> StreamDescription {
            StreamDescription(sampleRate: r, formatID: id, bytesPerPacket: 0, framesPerPacket: fpp, bytesPerFrame: 0,
                              channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        }
        let plainLayout = channels <= 2 ? AudioSpecificConfig.layout(channels) : nil
        let id = t.codecID
        switch id {
        case "A_OPUS":
            kind = .opus
            let head = t.codecPrivate ?? MatroskaAudio.opusHead(channels: channels, preSkip: t.codecDelay)
            var codec = OggCodec(kind: .opus)
            try codec.takeHeader(head)
            guard let f = codec.format else { throw AudioError(.unsupportedDataFormat, "Matroska: an unusable OpusHead") }
            format = f
            cookie = head
            channelLayout = codec.channelLayout ?? (f.channelsPerFrame <= 2 ? AudioSpecificConfig.layout(Int(f.channelsPerFrame)) : nil)
            // RFC 9559's Opus mapping: CodecDelay is the pre-skip in nanoseconds.
            primingFrames = t.codecDelay > 0 ? MatroskaAudio.frames(ofNanoseconds: t.codecDelay, rate: 48000) : codec.preSkip
            name = "Opus"
        case "A_VORBIS":
            kind = .vorbis
            guard let p = t.codecPrivate else { throw AudioError(.unsupportedDataFormat, "Matroska: a Vorbis track without CodecPrivate") }
            let headers = try VorbisHeaderPackets.split(p)
            var codec = OggCodec(kind: .vorbis)
            for h in headers { try codec.takeHeader(h) }
            guard codec.isComplete, let f = codec.format else { throw EBML.fail("the Vorbis headers are incomplete") }
            format = f
            cookie = codec.cookie
            channelLayout = codec.channelLayout
            info = codec.info
            vorbis = codec
            name = "Vorbis"
        case "A_FLAC":
            kind = .flac
            guard let p = t.codecPrivate, p.count >= 42, p.starts(with: Array("fLaC".utf8)), p[4] & 0x7F == 0 else {
                throw AudioError(.unsupportedDataFormat, "Matroska: a FLAC track whose CodecPrivate has no STREAMINFO")
            }
            let s = try FLACStreamInfo.read(Array(p[8..<42]))
            format = StreamDescription(sampleRate: Double(s.sampleRate), formatID: .flac,
                                       formatFlags: AudioFormatFlags(rawValue: s.appleFormatFlags), bytesPerPacket: 0,
                                       framesPerPacket: s.isFixedBlockSize ? UInt32(s.maximumBlockSize) : 0, bytesPerFrame: 0,
                                       channelsPerFrame: UInt32(s.channels), bitsPerChannel: UInt32(s.bitsPerSample))
            cookie = s.magicCookie
            channelLayout = FLACParser.defaultLayout(channels: s.channels)
            sourceBitDepth = Int32(s.bitsPerSample)
            flacTotalSamples = s.totalSamples
            if s.maximumFrameSize > 0 { packetSizeBound = UInt32(s.maximumFrameSize) }
            info = MatroskaAudio.flacComments(p)
            name = "FLAC"
        case "A_MPEG/L3", "A_MPEG/L2", "A_MPEG/L1":
            kind = .mpeg
            let layer = id.last == "3" ? 3 : id.last == "2" ? 2 : 1
            let fpp: UInt32 = layer == 1 ? 384 : layer == 2 || rate >= 32000 ? 1152 : 576
            format = described(layer == 3 ? .mpegLayer3 : layer == 2 ? .mpegLayer2 : .mpegLayer1, fpp)
            channelLayout = plainLayout
            packetSizeBound = 2881
            name = "MPEG Layer \(layer)"
        case "A_AC3", "A_AC3/BSID9", "A_AC3/BSID10":
            kind = .ac3
            format = described(.ac3, 1536)
            channelLayout = plainLayout
            packetSizeBound = 3840
            name = "AC-3"
        case "A_EAC3":
            kind = .eac3
            format = described(.enhancedAC3, 0)
            channelLayout = plainLayout
            name = "Enhanced AC-3"
        case "A_PCM/INT/LIT", "A_PCM/INT/BIG", "A_PCM/FLOAT/IEEE":
            kind = .pcm
            let isFloat = id == "A_PCM/FLOAT/IEEE"
            let bits = Int(t.bitDepth ?? (isFloat ? 32 : 16))
            guard isFloat ? (bits == 32 || bits == 64) : (bits % 8 == 0 && (8...32).contains(bits)) else {
                throw AudioError(.unsupportedDataFormat, "Matroska \(id) with \(bits) bits")
            }
            var flags: AudioFormatFlags = [.isPacked]
            if isFloat { flags.insert(.isFloat) } else if bits > 8 { flags.insert(.isSignedInteger) }
            if id == "A_PCM/INT/BIG" && bits > 8 { flags.insert(.isBigEndian) }
            let bpf = UInt32(bits / 8 * channels)
            format = StreamDescription(sampleRate: rate, formatID: .linearPCM, formatFlags: flags, bytesPerPacket: bpf,
                                       framesPerPacket: 1, bytesPerFrame: bpf, channelsPerFrame: UInt32(channels),
                                       bitsPerChannel: UInt32(bits))
            channelLayout = plainLayout
            sourceBitDepth = Int32(bits)
            name = isFloat ? "\(bits)-bit float PCM" : "\(bits)-bit \(id == "A_PCM/INT/BIG" ? "big" : "little")-endian integer PCM"
        default:
            guard id == "A_AAC" || id.hasPrefix("A_AAC/") else {
                throw AudioError(.unsupportedDataFormat, "Matroska codec \(id) is not supported")
            }
            kind = .aac
            let asc: [UInt8]
            if let p = t.codecPrivate, !p.isEmpty { asc = p } else { asc = try MatroskaAudio.legacyASC(id, rate: rate, channels: channels) }
            let c = try AudioSpecificConfig.parse(asc)
            format = c.streamDescription
            formatList = c.formatList
            cookie = asc
            channelLayout = c.program == nil ? AudioSpecificConfig.layout(c.ps ? 2 : c.channels) : nil
            packetSizeBound = UInt32(768 * max(1, c.channels))
            name = "AAC"
        }
    }

    // MARK: Frames

    /// The frames one packet decodes to, at the format's rate.
    mutating func frames(of p: UnsafeRawBufferPointer) -> UInt32 {
        switch kind {
        case .opus: return UInt32(OpusTOC.packetFrames(p))
        case .vorbis: return vorbis?.frames(of: p) ?? 0
        // A fixed block size counts every packet whole, as native FLAC does: the short
        // last block ends in remainder frames (STREAMINFO's total decides them).
        case .flac: return format.framesPerPacket > 0 ? format.framesPerPacket : OggCodec.flacFrames(p)
        case .eac3: return MatroskaAudio.eac3Frames(p)
        case .pcm: return format.bytesPerFrame > 0 ? UInt32(p.count / Int(format.bytesPerFrame)) : 0
        case .aac, .mpeg, .ac3: return format.framesPerPacket
        }
    }

    /// After lost packets (a seek): Vorbis's next packet decodes to no frames.
    mutating func resetContinuity() { vorbis?.resetContinuity() }

    /// E-AC-3 (ETSI TS 102 366 §E.1.2): 256 frames per audio block; numblkscod gives 1, 2,
    /// 3 or 6 blocks, and fscod 3 (a reduced rate) always 6.
    static func eac3Frames(_ p: UnsafeRawBufferPointer) -> UInt32 {
        guard p.count >= 5, p[0] == 0x0B, p[1] == 0x77 else { return 1536 }
        let fscod = p[4] >> 6, code = Int(p[4] >> 4 & 3)
        return 256 * (fscod == 3 ? 6 : [1, 2, 3, 6][code])
    }

    static func frames(ofNanoseconds ns: UInt64, rate: Double) -> Int64 {
        let f = (Double(ns) * rate / 1e9).rounded()
        return f.isFinite && f >= 0 && f < 1e15 ? Int64(f) : 0
    }

    // MARK: CodecPrivate forms

    /// An OpusHead for a track without CodecPrivate: mapping family 0 (at most 2 channels).
    static func opusHead(channels: Int, preSkip ns: UInt64) -> [UInt8] {
        let skip = UInt16(clamping: frames(ofNanoseconds: ns, rate: 48000))
        return Array("OpusHead".utf8) + [1, UInt8(clamping: channels), UInt8(skip & 0xFF), UInt8(skip >> 8), 0x80, 0xBB, 0, 0, 0, 0, 0]
    }

    /// The tags of a VORBIS_COMMENT block among FLAC's CodecPrivate metadata blocks.
    static func flacComments(_ p: [UInt8]) -> InfoDictionary {
        var at = 4
        while at + 4 <= p.count {
            let type = p[at] & 0x7F, last = p[at] & 0x80 != 0
            let length = Int(p[at + 1]) << 16 | Int(p[at + 2]) << 8 | Int(p[at + 3])
            guard length <= p.count - at - 4 else { break }
            if type == 4 {
                var r = ByteReader(p, range: (at + 4)..<(at + 4 + length))
                if let c = try? VorbisComment.read(&r) { return c.infoDictionary }
            }
            if last { break }
            at += 4 + length
        }
        return InfoDictionary()
    }

    /// An AudioSpecificConfig for the old codec IDs (A_AAC/MPEG2/LC, A_AAC/MPEG4/MAIN…):
    /// the profile's object type, the rate's index and the channel configuration
    /// (ISO/IEC 14496-3 §1.6.2.1). SBR profiles are given as LC, whose decoder finds the
    /// SBR data itself (implicit signalling).
    static func legacyASC(_ id: String, rate: Double, channels: Int) throws(AudioError) -> [UInt8] {
        let profile = id.split(separator: "/").last.map(String.init) ?? ""
        let type: Int
        switch profile {
        case "MAIN": type = 1
        case "LC", "SBR": type = 2
        case "SSR": type = 3
        case "LTP": type = 4
        default: throw AudioError(.unsupportedDataFormat, "Matroska codec \(id) is not supported")
        }
        guard let index = AudioSpecificConfig.rates.firstIndex(of: rate), (1...7).contains(channels) else {
            throw AudioError(.unsupportedDataFormat, "Matroska \(id) at \(rate) Hz with \(channels) channels and no CodecPrivate")
        }
        let config = channels == 8 ? 7 : channels
        let bits = type << 11 | index << 7 | config << 3
        return [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }
}

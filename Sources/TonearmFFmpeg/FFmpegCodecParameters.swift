#if FFmpeg
import CFFmpeg
import TonearmCore

/// What an FFmpeg decoder needs besides the packets, taken from a stream description and
/// Tonearm's magic cookie, or from a libavformat stream.
///
/// For the codecs Tonearm knows (PCM, G.711, ADPCM, MPEG audio, AAC, ALAC, FLAC, Opus,
/// Vorbis, Speex, AC-3, AMR) the cookie is Tonearm's own, as its parsers make it and its
/// decoders take it, and maps to FFmpeg's extradata per codec. For every other codec the
/// cookie is a WAVEFORMATEX (as a WAV `fmt ` chunk body or an ASF stream holds it): format
/// tag, channels, rate, bytes per second, block align, bits per sample, then FFmpeg's
/// extradata. That carries the bit rate and block align WMA needs.
package struct FFmpegCodecParameters {
    package var codecID: AVCodecID
    package var sampleRate: Int32
    package var channels: Int32
    /// Bits 0…17 of Apple's channel bitmap (the WAV channel mask, FFmpeg's native order).
    package var channelMask: UInt64 = 0
    package var bitRate: Int64 = 0
    package var blockAlign: Int32 = 0
    package var bitsPerCodedSample: Int32 = 0
    package var formatTag: UInt16 = 0
    package var extradata: [UInt8] = []

    /// The codecs whose cookie is Tonearm's own, not a WAVEFORMATEX.
    static let ownCookies: Set<AudioFormatID> = [
        .linearPCM, .uLaw, .aLaw, .appleIMA4, .dviIntelIMA, .microsoftADPCM, .mpegLayer1, .mpegLayer2, .mpegLayer3,
        .mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .appleLossless, .flac, .opus, .vorbis, .speex, .ac3, .enhancedAC3,
        .amr, .amrWB,
    ]

    package init(codecID: AVCodecID, sampleRate: Int32, channels: Int32) {
        self.codecID = codecID
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// The parameters for decoding `format` with `cookie`; 'fmt?' when FFmpeg has no codec for it.
    package init(format: StreamDescription, cookie: [UInt8]?) throws(AudioError) {
        guard let id = FFmpegCodecs.codecID(for: format) else {
            throw AudioError(.unsupportedDataFormat, "FFmpeg has no codec for \(format.formatID) data")
        }
        self.init(codecID: id, sampleRate: Int32(clamping: Int64(format.sampleRate.isFinite ? format.sampleRate : 0)),
                  channels: Int32(clamping: format.channelsPerFrame))
        blockAlign = Int32(clamping: format.bytesPerPacket)
        let c = cookie ?? []
        switch format.formatID {
        case .flac:
            // FFmpeg takes the 34-byte STREAMINFO; Tonearm's cookie is a dfLa body around it.
            extradata = c.count >= 42 && c[4] & 0x7F == 0 ? Array(c[8..<42]) : c
        case .appleLossless:
            // FFmpeg takes the 36-byte 'alac' atom: size, 'alac', version, the 24-byte config.
            let config: [UInt8]
            if c.count == 24 {
                config = c
            } else if let at = FFmpegCodecParameters.alacConfigStart(c) {
                config = Array(c[at..<at + 24])
            } else {
                config = c
            }
            extradata = [0, 0, 0, 36, 0x61, 0x6C, 0x61, 0x63, 0, 0, 0, 0] + config
        case .dviIntelIMA, .microsoftADPCM:
            // Tonearm's cookie here is the WAV fmt chunk body.
            readWaveFormat(c)
            bitsPerCodedSample = 4
        case .appleIMA4:
            bitsPerCodedSample = 4
        case .mpeg4AAC, .mpeg4AAC_HE:
            extradata = FFmpegCodecParameters.aacExtradata(format: format, cookie: c) ?? c
        case .opus:
            // libavcodec drops the OpusHead's pre-skip itself; Tonearm's readers drop the
            // priming the container states, so the decoder is told there is none.
            extradata = c
            if c.count >= 12 { extradata[10] = 0; extradata[11] = 0 }
        case _ where FFmpegCodecParameters.ownCookies.contains(format.formatID):
            extradata = c
        default:
            readWaveFormat(c)
        }
    }

    /// Takes what a WAVEFORMATEX cookie says over what the stream description said.
    private mutating func readWaveFormat(_ c: [UInt8]) {
        guard c.count >= 16 else { return }
        func u16(_ o: Int) -> UInt16 { UInt16(c[o]) | UInt16(c[o + 1]) << 8 }
        func u32(_ o: Int) -> UInt32 { UInt32(u16(o)) | UInt32(u16(o + 2)) << 16 }
        formatTag = u16(0)
        if channels == 0 { channels = Int32(u16(2)) }
        if sampleRate == 0 { sampleRate = Int32(clamping: u32(4)) }
        bitRate = Int64(u32(8)) * 8
        if u16(12) != 0 { blockAlign = Int32(u16(12)) }
        bitsPerCodedSample = Int32(u16(14))
        // FFmpeg's extradata is what follows cbSize: all of it, since cbSize cannot say more
        // than 65535 bytes.
        if c.count > 18 { extradata = Array(c[18...]) }
    }

    /// The format ID of a demuxed stream with these parameters (see ``FFmpegCodecs``).
    package var formatID: AudioFormatID { FFmpegCodecs.formatID(for: codecID, pcmAsPackets: true) }

    /// The stream description of a demuxed stream: packets of any size, with the frames per
    /// packet of the codecs whose packets are one fixed-length frame. AAC's is its
    /// AudioSpecificConfig's, as for every AAC cookie ('aach' or 'aacp' where it says so).
    package func streamDescription(frameSize: Int) -> StreamDescription {
        let fixed: Set<AudioFormatID> = [.mpegLayer1, .mpegLayer2, .mpegLayer3, .mpeg4AAC, .ac3, .enhancedAC3, .amr, .amrWB]
        let id = formatID
        if id == .mpeg4AAC, let cookie, let asc = try? AudioSpecificConfig.parse(cookie) { return asc.streamDescription }
        return StreamDescription(sampleRate: Double(sampleRate), formatID: id, bytesPerPacket: 0,
                                 framesPerPacket: fixed.contains(id) && frameSize > 0 ? UInt32(frameSize) : 0,
                                 bytesPerFrame: 0, channelsPerFrame: UInt32(max(0, channels)), bitsPerChannel: 0)
    }

    /// Tonearm's magic cookie for a demuxed stream (the inverse of ``init(format:cookie:)``):
    /// FLAC's as a dfLa body, the extradata as is for the codecs whose cookie it already is,
    /// none for the codecs that need none, and a WAVEFORMATEX for all others.
    package var cookie: [UInt8]? {
        switch formatID {
        case .flac:
            let info: ArraySlice<UInt8>
            if extradata.count >= 42, extradata.starts(with: [0x66, 0x4C, 0x61, 0x43]) {
                info = extradata[8..<42]
            } else if extradata.count >= 34 {
                info = extradata[0..<34]
            } else {
                return nil
            }
            return [0, 0, 0, 0, 0x80, 0, 0, 34] + info
        case .mpegLayer1, .mpegLayer2, .mpegLayer3, .ac3, .enhancedAC3, .amr, .amrWB:
            return nil
        case .mpeg4AAC, .appleLossless, .opus, .vorbis, .speex:
            return extradata.isEmpty ? nil : extradata
        default:
            return waveFormatCookie
        }
    }

    /// The encoder delay an Opus stream's OpusHead states (its pre-skip), nil for others.
    package var opusPreSkip: Int? {
        guard formatID == .opus, extradata.count >= 12 else { return nil }
        return Int(extradata[10]) | Int(extradata[11]) << 8
    }

    /// The AudioSpecificConfig for FFmpeg, when Tonearm's format says more than the cookie.
    ///
    /// Where the cookie leaves SBR or PS open, FFmpeg's AAC decoder follows the bitstream: it
    /// doubles the rate of an LC stream whose frames carry SBR, and makes every mono SBR
    /// stream stereo in case PS follows. Tonearm's format decides instead (AACDecoder,
    /// DecodedFormatProbe): 'aac ' at the core rate is the core alone, 'aach' is SBR without
    /// PS. Without this, an 'aac ' stream with SBR came out at twice the frames the decoder
    /// announced (frames beyond the caller's buffer were lost, at a rate nobody was told)
    /// and a mono 'aach' stream failed with 'bada' (two channels where one was announced).
    /// So the config is rewritten with a sync extension (ISO/IEC 14496-3 §1.6.5.2), which
    /// FFmpeg reads: SBR off for 'aac ', SBR on and PS off for mono 'aach'. Only plain configs
    /// (Main, LC or LTP, 1024 frames, channel configuration 1 to 7, rates from the table) are
    /// rewritten; nil leaves the cookie as it is.
    static func aacExtradata(format: StreamDescription, cookie: [UInt8]) -> [UInt8]? {
        guard let asc = try? AudioSpecificConfig.parse(cookie), [1, 2, 4].contains(asc.objectType),
              (1...7).contains(asc.channelConfiguration), asc.frameLength == 1024, !asc.dependsOnCoreCoder,
              let core = AudioSpecificConfig.rates.firstIndex(of: asc.sampleRate)
        else { return nil }
        // The core config: object type, rate index, channel configuration, and a
        // GASpecificConfig of frameLengthFlag, dependsOnCoreCoder and extensionFlag, all 0.
        var fields: [(value: Int, bits: Int)] = [(asc.objectType, 5), (core, 4), (asc.channelConfiguration, 4), (0, 3)]
        if format.formatID == .mpeg4AAC && !asc.sbrSignalled && format.sampleRate == asc.sampleRate {
            // syncExtensionType 0x2B7, extensionAudioObjectType 5 (SBR), sbrPresentFlag 0.
            fields += [(0x2B7, 11), (5, 5), (0, 1)]
        } else if format.formatID == .mpeg4AAC_HE && asc.channels == 1 && !asc.psSignalled,
                  let ext = AudioSpecificConfig.rates.firstIndex(of: asc.extensionSampleRate ?? format.sampleRate)
        {
            // SBR at the extension rate, then syncExtensionType 0x548 with psPresentFlag 0.
            fields += [(0x2B7, 11), (5, 5), (1, 1), (ext, 4), (0x548, 11), (0, 1)]
        } else {
            return nil
        }
        var bytes: [UInt8] = [], accumulator = 0, count = 0
        for f in fields {
            for k in stride(from: f.bits - 1, through: 0, by: -1) {
                accumulator = accumulator << 1 | (f.value >> k & 1)
                count += 1
                if count == 8 { bytes.append(UInt8(accumulator)); accumulator = 0; count = 0 }
            }
        }
        if count > 0 { bytes.append(UInt8(accumulator << (8 - count))) }
        return bytes
    }

    /// Where the 24-byte ALACSpecificConfig starts in an 'alac' atom (or a 'frma' + 'alac'
    /// wrapping of one): after the last 'alac' tag and its version word.
    static func alacConfigStart(_ c: [UInt8]) -> Int? {
        let tag: [UInt8] = [0x61, 0x6C, 0x61, 0x63]
        var found: Int?
        var i = 0
        while i + 4 <= c.count {
            if c[i..<i + 4].elementsEqual(tag), i + 8 + 24 <= c.count { found = i + 8 }
            i += 1
        }
        return found
    }

    /// The WAVEFORMATEX cookie that carries these parameters (see the type's notes).
    package var waveFormatCookie: [UInt8] {
        var w: [UInt8] = []
        func u16(_ v: UInt16) { w += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        func u32(_ v: UInt32) { u16(UInt16(truncatingIfNeeded: v)); u16(UInt16(truncatingIfNeeded: v >> 16)) }
        u16(formatTag)
        u16(UInt16(clamping: channels))
        u32(UInt32(clamping: sampleRate))
        u32(UInt32(clamping: bitRate / 8))
        u16(UInt16(clamping: blockAlign))
        u16(UInt16(clamping: bitsPerCodedSample))
        u16(UInt16(clamping: extradata.count))
        return w + extradata
    }

    /// Copies these parameters into a codec context before `avcodec_open2`.
    func apply(to ctx: UnsafeMutablePointer<AVCodecContext>) throws(AudioError) {
        ctx.pointee.sample_rate = sampleRate
        ctx.pointee.bit_rate = bitRate
        ctx.pointee.block_align = blockAlign
        ctx.pointee.bits_per_coded_sample = bitsPerCodedSample
        ctx.pointee.codec_tag = UInt32(formatTag)
        if channels > 0 {
            if channelMask != 0 && channelMask.nonzeroBitCount == Int(channels) {
                av_channel_layout_from_mask(&ctx.pointee.ch_layout, channelMask)
            } else {
                av_channel_layout_default(&ctx.pointee.ch_layout, channels)
            }
        }
        if !extradata.isEmpty {
            let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
            guard let p = av_mallocz(extradata.count + padding) else { throw AudioError.limit("no memory for the codec's extradata") }
            extradata.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: extradata.count) }
            ctx.pointee.extradata = p.assumingMemoryBound(to: UInt8.self)
            ctx.pointee.extradata_size = Int32(extradata.count)
        }
    }
}
#endif

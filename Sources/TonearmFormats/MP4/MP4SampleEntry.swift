import TonearmCore

/// What a track's sample entry says about its audio: Apple's stream description, magic cookie
/// and channel layout.
struct MP4AudioFormat: Sendable {
    var format: StreamDescription
    var formatList: [AudioFormatListItem]?
    var cookie: [UInt8]?
    var channelLayout: ChannelLayout?
    var sourceBitDepth: Int32?
    /// The average bit rate the entry declares (esds, btrt), 0 when it gives none.
    var declaredBitRate: UInt32 = 0
    /// A packet size the codec never exceeds, when it gives one.
    var packetSizeBound: UInt32?
    /// True when `format.framesPerPacket` comes from the codec; false when the sample table
    /// decides it (a constant duration) or leaves it at 0 (durations vary).
    var codecFramesPerPacket: Bool
    /// A short name for AudioFile's DataFormatName.
    var name: String
}

/// Reads the first entry of a `stsd` (ISO/IEC 14496-12 §12.2.3 AudioSampleEntry, with the
/// QuickTime version 1 and 2 extensions) and the codec boxes inside it.
enum MP4SampleEntry {
    static func audioFormat(_ p: UnsafeRawBufferPointer, entry: MP4Box, mediaTimescale: UInt32) throws(AudioError) -> MP4AudioFormat {
        let b = entry.body
        guard b.count >= 28 else { throw AudioError(.invalidChunk, "the \(entry.type) sample entry has \(b.count) bytes") }
        let base = b.lowerBound
        let version = mp4be16(p, base + 8)
        var channels = Int(mp4be16(p, base + 16))
        let sampleSize = Int(mp4be16(p, base + 18))
        var rate = Double(mp4be32(p, base + 24) >> 16)
        var childrenStart = base + 28
        if version == 1 {
            childrenStart = base + 44
        } else if version == 2 {
            guard b.count >= 64 else { throw AudioError(.invalidChunk, "a version 2 sound description of \(b.count) bytes") }
            rate = Double(bitPattern: mp4be64(p, base + 32))
            channels = Int(mp4be32(p, base + 40))
            childrenStart = base + 64
        }
        if rate <= 0 || !rate.isFinite { rate = Double(mediaTimescale) }
        let children = childrenStart <= b.upperBound ? (try? codecBoxes(p, childrenStart..<b.upperBound)) ?? [] : []
        func child(_ t: FourCC) -> MP4Box? { children.first { $0.type == t } }

        var result: MP4AudioFormat
        switch entry.type {
        case "mp4a":
            guard let esds = child("esds") else { throw AudioError(.unsupportedDataFormat, "an mp4a sample entry without esds") }
            result = try fromESDS(p, esds.body, rate: rate, channels: channels)
        case "alac":
            guard let alac = child("alac"), alac.body.count >= 28 else {
                throw AudioError(.unsupportedDataFormat, "an alac sample entry without its configuration")
            }
            result = try fromALAC(Array(UnsafeRawBufferPointer(rebasing: p[(alac.body.lowerBound + 4)..<(alac.body.lowerBound + 28)])))
        case "fLaC":
            guard let dfla = child("dfLa"), dfla.body.count >= 4 else {
                throw AudioError(.unsupportedDataFormat, "an fLaC sample entry without dfLa")
            }
            result = try fromDFLA(Array(UnsafeRawBufferPointer(rebasing: p[dfla.body])))
        case "Opus":
            guard let dops = child("dOps") else { throw AudioError(.unsupportedDataFormat, "an Opus sample entry without dOps") }
            result = try fromDOPS(Array(UnsafeRawBufferPointer(rebasing: p[dops.body])))
        case "ac-3":
            guard let dac3 = child("dac3") else { throw AudioError(.unsupportedDataFormat, "an ac-3 sample entry without dac3") }
            result = try fromDAC3(Array(UnsafeRawBufferPointer(rebasing: p[dac3.body])), fallbackRate: rate)
        case "ec-3":
            guard let dec3 = child("dec3") else { throw AudioError(.unsupportedDataFormat, "an ec-3 sample entry without dec3") }
            result = try fromDEC3(Array(UnsafeRawBufferPointer(rebasing: p[dec3.body])), fallbackRate: rate)
        case "samr", "sawb":
            let wide = entry.type == "sawb"
            var framesPerSample = 1
            if let damr = child("damr"), damr.body.count >= 9 {
                framesPerSample = max(1, Int(p[damr.body.lowerBound + 8]))
            }
            let f = StreamDescription(sampleRate: wide ? 16000 : 8000, formatID: wide ? .amrWB : .amr, bytesPerPacket: 0,
                                      framesPerPacket: UInt32((wide ? 320 : 160) * framesPerSample), bytesPerFrame: 0,
                                      channelsPerFrame: 1, bitsPerChannel: 0)
            result = MP4AudioFormat(format: f, channelLayout: ChannelLayout(tag: .mono), codecFramesPerPacket: true,
                                    name: wide ? "AMR Wideband" : "AMR Narrowband")
        case ".mp3":
            result = mpegAudio(rate: rate, channels: channels)
        case "enca":
            throw AudioError(.unsupportedDataFormat, "the audio track is encrypted")
        default:
            throw AudioError(.unsupportedDataFormat, "sample entry \(entry.type) is not a supported audio format")
        }
        if let chan = child("chan"), chan.body.count >= 16 {
            // QuickTime's channel layout box: a full box around Apple's AudioChannelLayout.
            var r = ByteReader(Array(UnsafeRawBufferPointer(rebasing: p[(chan.body.lowerBound + 4)..<chan.body.upperBound])))
            if let layout = try? ChannelLayout.readChunk(&r) { result.channelLayout = layout }
        }
        if result.declaredBitRate == 0, let btrt = child("btrt"), btrt.body.count >= 12 {
            result.declaredBitRate = mp4be32(p, btrt.body.lowerBound + 8)
        }
        if result.format.channelsPerFrame == 0 || result.format.channelsPerFrame > 1024 {
            throw AudioError(.unsupportedDataFormat, "a sample entry with \(result.format.channelsPerFrame) channels")
        }
        if !(result.format.sampleRate > 0) || !(result.format.sampleRate <= 16_777_216) {
            throw AudioError(.unsupportedDataFormat, "a sample entry with a sample rate of \(result.format.sampleRate)")
        }
        _ = sampleSize
        return result
    }

    /// The codec boxes after the fixed fields, looking inside QuickTime's `wave` too.
    private static func codecBoxes(_ p: UnsafeRawBufferPointer, _ range: Range<Int>) throws(AudioError) -> [MP4Box] {
        var out: [MP4Box] = []
        for box in try MP4Boxes.children(p, range) {
            out.append(box)
            if box.type == "wave" { out += (try? MP4Boxes.children(p, box.body)) ?? [] }
        }
        return out
    }

    // MARK: esds

    /// One descriptor's tag and body (ISO/IEC 14496-1 §8.3.3: the size is 1 to 4 bytes of 7 bits).
    private static func descriptor(_ r: inout ByteReader) -> (tag: UInt8, body: Range<Int>)? {
        guard let tag = r.readUInt8() else { return nil }
        var size = 0
        for _ in 0..<4 {
            guard let b = r.readUInt8() else { return nil }
            size = size << 7 | Int(b & 0x7F)
            if b & 0x80 == 0 { break }
        }
        let start = r.readerIndex
        guard size <= r.readableBytes else { return nil }
        r.skip(size)
        return (tag, start..<start + size)
    }

    /// ES_Descriptor → DecoderConfigDescriptor → DecoderSpecificInfo (ISO/IEC 14496-1 §7.2.6).
    static func fromESDS(_ p: UnsafeRawBufferPointer, _ body: Range<Int>, rate: Double, channels: Int) throws(AudioError) -> MP4AudioFormat {
        guard body.count >= 4 else { throw AudioError(.unsupportedDataFormat, "an empty esds") }
        let bytes = Array(UnsafeRawBufferPointer(rebasing: p[(body.lowerBound + 4)..<body.upperBound]))
        var r = ByteReader(bytes)
        guard let d = descriptor(&r) else { throw AudioError(.unsupportedDataFormat, "esds: no ES descriptor") }
        var config: Range<Int>
        if d.tag == 0x03 {
            var es = ByteReader(bytes, range: d.body)
            guard es.skip(2), let flags = es.readUInt8() else { throw AudioError(.unsupportedDataFormat, "esds: a short ES descriptor") }
            if flags & 0x80 != 0 { es.skip(2) }
            if flags & 0x40 != 0, let n = es.readUInt8() { es.skip(Int(n)) }
            if flags & 0x20 != 0 { es.skip(2) }
            var found: Range<Int>?
            while let sub = descriptor(&es) {
                if sub.tag == 0x04 { found = sub.body; break }
            }
            guard let found else { throw AudioError(.unsupportedDataFormat, "esds: no decoder config descriptor") }
            config = found
        } else if d.tag == 0x04 {
            config = d.body
        } else {
            throw AudioError(.unsupportedDataFormat, "esds: descriptor tag \(d.tag) where an ES descriptor belongs")
        }
        var dc = ByteReader(bytes, range: config)
        guard let oti = dc.readUInt8(), dc.skip(1), let bufferSize = dc.readUInt24(), dc.skip(4), let avg = dc.readUInt32() else {
            throw AudioError(.unsupportedDataFormat, "esds: a short decoder config descriptor")
        }
        var specific: [UInt8]?
        while let sub = descriptor(&dc) {
            if sub.tag == 0x05 { specific = Array(bytes[sub.body]); break }
        }
        switch oti {
        case 0x40, 0x66, 0x67, 0x68:
            guard let asc = specific, !asc.isEmpty else {
                throw AudioError(.unsupportedDataFormat, "AAC in MP4 without an AudioSpecificConfig")
            }
            let c = try AudioSpecificConfig.parse(asc)
            // A program config element places its channels itself: no layout by count.
            var f = MP4AudioFormat(format: c.streamDescription, formatList: c.formatList, cookie: asc,
                                   channelLayout: c.program == nil ? AudioSpecificConfig.layout(c.ps ? 2 : c.channels) : nil,
                                   declaredBitRate: avg, codecFramesPerPacket: true, name: "AAC")
            // 6144 bits per channel per raw data block (ISO/IEC 14496-3 §4.5.3.2).
            f.packetSizeBound = UInt32(768 * max(1, c.channels))
            if bufferSize > f.packetSizeBound! { f.packetSizeBound = bufferSize }
            return f
        case 0x69, 0x6B:
            var f = mpegAudio(rate: rate, channels: channels)
            f.declaredBitRate = avg
            return f
        case 0xDD:
            // Vorbis (MP4RA's object type; ffmpeg writes it): the specific info holds the three
            // header packets, Xiph-laced as in Matroska's CodecPrivate.
            guard let dsi = specific else { throw AudioError(.unsupportedDataFormat, "Vorbis in MP4 without its headers") }
            var codec = OggCodec(kind: .vorbis)
            for h in try VorbisHeaderPackets.split(dsi) { try codec.takeHeader(h) }
            guard codec.isComplete, let format = codec.format else {
                throw AudioError(.unsupportedDataFormat, "Vorbis in MP4: the headers are incomplete")
            }
            return MP4AudioFormat(format: format, cookie: codec.cookie, channelLayout: codec.channelLayout,
                                  declaredBitRate: avg, codecFramesPerPacket: false, name: "Vorbis")
        default:
            throw AudioError(.unsupportedDataFormat, "esds object type 0x\(String(oti, radix: 16)) is not a supported audio format")
        }
    }

    /// MP3 (or another MPEG-1/2 audio layer) in MP4: 1152 frames per packet, 576 at the
    /// MPEG-2 and 2.5 rates (ISO/IEC 13818-3).
    static func mpegAudio(rate: Double, channels: Int) -> MP4AudioFormat {
        let f = StreamDescription(sampleRate: rate, formatID: .mpegLayer3, bytesPerPacket: 0,
                                  framesPerPacket: rate >= 32000 ? 1152 : 576, bytesPerFrame: 0,
                                  channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        return MP4AudioFormat(format: f, channelLayout: AudioSpecificConfig.layout(channels).flatMap { channels <= 2 ? $0 : nil },
                              packetSizeBound: 2881, codecFramesPerPacket: true, name: "MPEG Layer 3")
    }

    // MARK: ALAC, FLAC, Opus

    /// Apple's kAppleLosslessFormatFlag_16/20/24/32BitSourceData, which Apple also uses for FLAC.
    static func losslessFlags(bits: Int) -> AudioFormatFlags {
        switch bits {
        case 16: return AudioFormatFlags(rawValue: 1)
        case 20: return AudioFormatFlags(rawValue: 2)
        case 24: return AudioFormatFlags(rawValue: 3)
        case 32: return AudioFormatFlags(rawValue: 4)
        default: return []
        }
    }

    /// The 24-byte ALACSpecificConfig, which is also Apple's ALAC magic cookie: frameLength,
    /// compatibleVersion, bitDepth, pb, mb, kb, numChannels, maxRun, maxFrameBytes,
    /// avgBitRate, sampleRate (all big-endian).
    static func fromALAC(_ config: [UInt8]) throws(AudioError) -> MP4AudioFormat {
        var r = ByteReader(config)
        let frameLength = r.readUInt32()!
        r.skip(1)
        let bitDepth = Int(r.readUInt8()!)
        r.skip(3)
        let channels = Int(r.readUInt8()!)
        r.skip(2)
        let maxFrameBytes = r.readUInt32()!
        let avg = r.readUInt32()!
        let rate = r.readUInt32()!
        guard frameLength > 0, frameLength <= 1 << 16, channels > 0, rate > 0 else {
            throw AudioError(.unsupportedDataFormat, "an ALAC configuration with \(frameLength) frames, \(channels) channels at \(rate) Hz")
        }
        let f = StreamDescription(sampleRate: Double(rate), formatID: .appleLossless, formatFlags: losslessFlags(bits: bitDepth),
                                  bytesPerPacket: 0, framesPerPacket: frameLength, bytesPerFrame: 0,
                                  channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        return MP4AudioFormat(format: f, cookie: config, channelLayout: alacLayout(channels), sourceBitDepth: Int32(bitDepth),
                              declaredBitRate: avg, packetSizeBound: maxFrameBytes > 0 ? maxFrameBytes : nil,
                              codecFramesPerPacket: true, name: "Apple Lossless")
    }

    /// ALAC's channel orders (Apple's ALAC reference: 1 mono … 8 channels MPEG 7.1-B).
    static func alacLayout(_ channels: Int) -> ChannelLayout? {
        switch channels {
        case 7: return ChannelLayout(tag: ChannelLayout.Tag(rawValue: 142 << 16 | 7))  // AAC_6_1
        default: return AudioSpecificConfig.layout(channels)
        }
    }

    /// dfLa (the FLAC-in-ISOBMFF mapping §3.3.2): version and flags, then the metadata
    /// blocks, STREAMINFO first. The whole body is the cookie, as Tonearm's FLAC and Ogg
    /// parsers give it.
    static func fromDFLA(_ body: [UInt8]) throws(AudioError) -> MP4AudioFormat {
        var r = ByteReader(body)
        guard r.skip(4), let header = r.readUInt8(), header & 0x7F == 0, let length = r.readUInt24(), length >= 34,
              let minBlock = r.readUInt16(), let maxBlock = r.readUInt16(), r.skip(3), let maxFrame = r.readUInt24(),
              let packed = r.readUInt64()
        else { throw AudioError(.unsupportedDataFormat, "dfLa does not begin with a STREAMINFO block") }
        let rate = Int(packed >> 44)
        let channels = Int(packed >> 41 & 7) + 1
        let bits = Int(packed >> 36 & 31) + 1
        guard rate > 0 else { throw AudioError(.unsupportedDataFormat, "a FLAC STREAMINFO with a sample rate of 0") }
        let fixed = minBlock == maxBlock && maxBlock > 0
        let f = StreamDescription(sampleRate: Double(rate), formatID: .flac, formatFlags: losslessFlags(bits: bits),
                                  bytesPerPacket: 0, framesPerPacket: fixed ? UInt32(maxBlock) : 0, bytesPerFrame: 0,
                                  channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        return MP4AudioFormat(format: f, cookie: body, channelLayout: nil, sourceBitDepth: Int32(bits),
                              packetSizeBound: maxFrame > 0 ? maxFrame : nil, codecFramesPerPacket: fixed, name: "FLAC")
    }

    /// dOps (Opus in ISO BMFF §4.3.2), turned into the OpusHead that Ogg carries (RFC 7845 §5.1),
    /// which is what an Opus decoder is given as its cookie.
    static func fromDOPS(_ body: [UInt8]) throws(AudioError) -> MP4AudioFormat {
        var r = ByteReader(body)
        guard let version = r.readUInt8(), version == 0, let channels = r.readUInt8(), channels > 0,
              let preSkip = r.readUInt16(), let inputRate = r.readUInt32(), let gain = r.readInt16(), let family = r.readUInt8()
        else { throw AudioError(.unsupportedDataFormat, "a dOps box that is not version 0") }
        var head = ByteWriter()
        head.write(Array("OpusHead".utf8))
        head.write(UInt8(1))
        head.write(channels)
        head.write(preSkip, .little)
        head.write(inputRate, .little)
        head.write(gain, .little)
        head.write(family)
        if family != 0 {
            guard let streams = r.readUInt8(), let coupled = r.readUInt8(), let mapping = r.readBytes(Int(channels)) else {
                throw AudioError(.unsupportedDataFormat, "dOps: a channel mapping table shorter than its \(channels) channels")
            }
            head.write(streams)
            head.write(coupled)
            head.write(mapping)
        }
        let f = StreamDescription(sampleRate: 48000, formatID: .opus, bytesPerPacket: 0, framesPerPacket: 0, bytesPerFrame: 0,
                                  channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        return MP4AudioFormat(format: f, cookie: head.bytes,
                              channelLayout: channels <= 2 ? AudioSpecificConfig.layout(Int(channels)) : nil,
                              codecFramesPerPacket: false, name: "Opus")
    }

    // MARK: AC-3 and E-AC-3 (ETSI TS 102 366 Annex F)

    static let ac3Rates: [Double] = [48000, 44100, 32000]

    /// Full-bandwidth channels of an audio coding mode.
    static func ac3Channels(acmod: Int) -> Int { [2, 1, 2, 3, 3, 4, 4, 5][acmod & 7] }

    static func fromDAC3(_ body: [UInt8], fallbackRate: Double) throws(AudioError) -> MP4AudioFormat {
        var r = BitReader(body)
        guard let fscod = r.read(2), r.skip(5 + 3), let acmod = r.read(3), let lfe = r.read(1), let rateCode = r.read(5) else {
            throw AudioError(.unsupportedDataFormat, "a dac3 box of \(body.count) bytes")
        }
        let rate = fscod < 3 ? ac3Rates[Int(fscod)] : fallbackRate
        let channels = ac3Channels(acmod: Int(acmod)) + Int(lfe)
        let bitRates = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640]
        let kbps = Int(rateCode) < bitRates.count ? bitRates[Int(rateCode)] : 0
        let f = StreamDescription(sampleRate: rate, formatID: .ac3, bytesPerPacket: 0, framesPerPacket: 1536, bytesPerFrame: 0,
                                  channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        return MP4AudioFormat(format: f, channelLayout: channels <= 2 && lfe == 0 ? AudioSpecificConfig.layout(channels) : nil,
                              declaredBitRate: UInt32(kbps * 1000), packetSizeBound: 3840, codecFramesPerPacket: true, name: "AC-3")
    }

    static func fromDEC3(_ body: [UInt8], fallbackRate: Double) throws(AudioError) -> MP4AudioFormat {
        var r = BitReader(body)
        guard let dataRate = r.read(13), r.skip(3), let fscod = r.read(2), r.skip(5 + 1 + 1 + 3), let acmod = r.read(3),
              let lfe = r.read(1), r.skip(3), let dependents = r.read(4)
        else { throw AudioError(.unsupportedDataFormat, "a dec3 box of \(body.count) bytes") }
        var channels = ac3Channels(acmod: Int(acmod)) + Int(lfe)
        if dependents > 0, let location = r.read(9) {
            // chan_loc (Table F.6.1): pairs and single channels the dependent substreams add.
            let added = [2, 2, 1, 1, 2, 2, 2, 1, 1]
            for bit in 0..<9 where location & (1 << UInt64(8 - bit)) != 0 { channels += added[bit] }
        }
        let rate = fscod < 3 ? ac3Rates[Int(fscod)] : fallbackRate
        let f = StreamDescription(sampleRate: rate, formatID: .enhancedAC3, bytesPerPacket: 0, framesPerPacket: 1536, bytesPerFrame: 0,
                                  channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        return MP4AudioFormat(format: f, channelLayout: channels <= 2 && lfe == 0 ? AudioSpecificConfig.layout(channels) : nil,
                              declaredBitRate: UInt32(dataRate * 1000), codecFramesPerPacket: false, name: "Enhanced AC-3")
    }
}

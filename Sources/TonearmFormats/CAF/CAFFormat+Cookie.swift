import TonearmCore

/// The 'kuki' chunk of the compressed formats.
///
/// CAF stores each codec's cookie in the form Apple's writers give it, and readers see
/// more than one form in the wild. Tonearm hands every container's cookie to a decoder
/// in one form per codec (the one MP4, ADTS, FLAC and Ogg give), so CAF's are turned into it:
///
/// | codec | in a 'kuki' | given as |
/// |---|---|---|
/// | AAC ('aac ', 'aach', 'aacp', 'aacl', 'aace') | an MPEG-4 ES_Descriptor (an esds box's body, with or without its version and flags) | the AudioSpecificConfig |
/// | ALAC | the 24-byte ALACSpecificConfig, or the older 'frma' and 'alac' atoms around it (ffmpeg writes this) | the 24-byte ALACSpecificConfig |
/// | FLAC | a whole 'dfLa' box, or its body | the body of a dfLa box |
/// | Opus | the OpusHead (RFC 7845 §5.1), or the body of a dOps box | the OpusHead |
///
/// The codec's own facts fill in what the 'desc' leaves out: the source bit depth in the
/// format flags of ALAC and FLAC (ffmpeg writes 0 there; Apple writes the depth), the
/// channel layout when there is no 'chan', the AAC format list. The 'desc' keeps the last
/// word on rate, channels and frames per packet, as in Apple's reader.
extension CAFFormat {
    /// Reads a 'kuki' body for the format the 'desc' gave. Nil when the format has no cookie
    /// form of its own (the bytes are then given as they are).
    static func readCookie(_ kuki: [UInt8], format f: StreamDescription) throws(AudioError) -> MP4AudioFormat? {
        func fail(_ why: String) -> AudioError { AudioError(.invalidChunk, "CAF 'kuki' for \(f.formatID): \(why)") }
        func fourCC(at i: Int) -> FourCC? {
            guard kuki.count >= i + 4 else { return nil }
            return FourCC(kuki[i], kuki[i + 1], kuki[i + 2], kuki[i + 3])
        }
        func be32(at i: Int) -> Int { Int(kuki[i]) << 24 | Int(kuki[i + 1]) << 16 | Int(kuki[i + 2]) << 8 | Int(kuki[i + 3]) }

        switch f.formatID {
        case .mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .mpeg4AAC_LD, .mpeg4AAC_ELD:
            // MP4's reader takes an esds body: version and flags, then the ES_Descriptor.
            let esds: [UInt8]
            if kuki.first == 0x03 { esds = [0, 0, 0, 0] + kuki }
            else if kuki.count > 4, kuki[0..<4] == [0, 0, 0, 0], kuki[4] == 0x03 { esds = kuki }
            else { throw fail("not an ES_Descriptor") }
            do {
                return try esds.withBytes { p throws(AudioError) in
                    try MP4SampleEntry.fromESDS(p, 0..<esds.count, rate: f.sampleRate, channels: Int(f.channelsPerFrame))
                }
            } catch {
                throw fail(error.message)
            }

        case .appleLossless:
            // Apple's ALAC reference (ALACMagicCookieDescription): an optional 'frma' atom,
            // an optional 'alac' atom header (size, type, version), then the config; a
            // 'chan' atom and a terminator may follow it.
            var at = 0
            if fourCC(at: 4) == "frma" { at += 12 }
            if fourCC(at: at + 4) == "alac" { at += 12 }
            guard kuki.count >= at + 24 else { throw fail("\(kuki.count) bytes hold no ALACSpecificConfig") }
            do { return try MP4SampleEntry.fromALAC(Array(kuki[at..<at + 24])) } catch { throw fail(error.message) }

        case .flac:
            var body = kuki
            if fourCC(at: 4) == "dfLa" {
                let size = be32(at: 0)
                guard size >= 8, size <= kuki.count else { throw fail("a dfLa box of \(size) bytes in \(kuki.count)") }
                body = Array(kuki[8..<size])
            }
            do { return try MP4SampleEntry.fromDFLA(body) } catch { throw fail(error.message) }

        case .opus:
            if fourCC(at: 0) == "Opus" && fourCC(at: 4) == "Head" {
                // RFC 7845 §5.1: 19 bytes, more with a channel mapping table.
                guard kuki.count >= 19 else { throw fail("an OpusHead of \(kuki.count) bytes") }
                guard kuki[8] >> 4 == 0 else { throw AudioError(.unsupportedDataFormat, "Opus header version \(kuki[8])") }
                let channels = kuki[9]
                guard channels > 0 else { throw fail("an OpusHead of 0 channels") }
                if kuki[18] != 0 && kuki.count < 21 + Int(channels) { throw fail("an OpusHead whose mapping table is cut short") }
                let format = StreamDescription(sampleRate: 48000, formatID: .opus, bytesPerPacket: 0, framesPerPacket: 0,
                                               bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
                return MP4AudioFormat(format: format, cookie: kuki,
                                      channelLayout: channels <= 2 ? AudioSpecificConfig.layout(Int(channels)) : nil,
                                      codecFramesPerPacket: false, name: "Opus")
            }
            do { return try MP4SampleEntry.fromDOPS(kuki) } catch { throw fail(error.message) }

        default:
            return nil
        }
    }

    /// Takes in a 'kuki': the cookie in Tonearm's form, and what the codec adds to the
    /// description (`description` is the 'desc' as read; the result replaces it).
    static func applyCookie(_ kuki: [UInt8], to description: StreamDescription,
                            properties p: inout FileProperties) throws(AudioError) -> StreamDescription
    {
        guard let codec = try readCookie(kuki, format: description) else {
            p.magicCookie = kuki
            return description
        }
        var f = description
        p.magicCookie = codec.cookie ?? kuki
        if f.formatFlags.rawValue == 0, f.formatID == .appleLossless || f.formatID == .flac {
            f.formatFlags = codec.format.formatFlags
        }
        if let depth = codec.sourceBitDepth { p.sourceBitDepth = depth }
        if p.channelLayout == nil, let layout = codec.channelLayout, layout.numberOfChannels == Int(f.channelsPerFrame) {
            p.channelLayout = layout
        }
        if let list = codec.formatList { p.formatList = list }
        if p.dataFormatName == nil { p.dataFormatName = codec.name }
        return f
    }
}

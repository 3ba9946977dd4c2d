import TonearmCore

/// What the first frame of an MP3 may declare: a Xing ('Xing' for VBR, 'Info' for CBR)
/// or VBRI header, and the LAME tag that follows a Xing header.
public struct MPEGVBRHeader: Sendable, Equatable {
    public enum Kind: String, Sendable { case xing = "Xing", info = "Info", vbri = "VBRI" }
    public var kind: Kind
    /// Audio frames, this one not counted.
    public var frames: Int64?
    /// Bytes of the stream, this frame included.
    public var bytes: Int64?
    /// The Xing table of contents: 100 entries, entry i the byte position (in 256ths of
    /// `bytes`) at which i percent of the duration is reached.
    public var toc: [UInt8]?
    /// The encoder string of a LAME tag (`LAME3.100`, `Lavc59.37`…).
    public var encoder: String?
    /// The LAME tag's encoder delay and padding, in samples.
    public var encoderDelay: Int?
    public var encoderPadding: Int?
}

/// MPEG audio (layers I, II and III of MPEG-1, 2 and 2.5) for ``FramedParser``.
public struct MPEGFormat: FramedFormat {
    /// The decoder delay of an MP3 decoder (528 samples of the synthesis filter bank plus
    /// one), which a LAME tag's delay does not include.
    public static let decoderDelay = 529

    public private(set) var first: MPEGAudioHeader?
    public private(set) var vbr: MPEGVBRHeader?
    /// Bytes of the Xing or VBRI frame.
    private var metadataFrameLength = 0
    /// Set when the frames after an ID3 tag turn out to be ADTS (HLS packed audio, ffmpeg's
    /// `-write_id3v2`): the probe sees only the tag, so this parser reads the ADTS frames.
    public private(set) var adts: ADTSFormat?
    private var isADTS = false

    public init() {}

    public var headerSize: Int { isADTS ? 7 : 4 }
    public var hasTags: Bool { true }
    public var announcementOrder: [AudioFilePropertyID] {
        if let adts { return adts.announcementOrder }
        return [.bitRate, .audioDataByteCount, .audioDataPacketCount, .packetTableInfo, .fileFormat, .dataFormat, .dataOffset]
    }
    public var packetSizeUpperBound: UInt32 {
        if let adts { return adts.packetSizeUpperBound }
        return UInt32(first?.largestFrameLength ?? 1441)
    }

    public var declared: DeclaredTotals {
        guard let vbr, let frames = vbr.frames else { return DeclaredTotals() }
        return DeclaredTotals(packets: frames, bytes: vbr.bytes.map { max(0, $0 - Int64(metadataFrameLength)) },
                              constantBitRate: vbr.kind == .info)
    }

    /// Priming and remainder from the LAME tag: the decoder delay is added to the encoder
    /// delay, and taken from the padding, which already covers it when it is that large.
    public var gapless: (priming: Int64, remainder: Int64)? {
        guard let delay = vbr?.encoderDelay, let padding = vbr?.encoderPadding else { return nil }
        let d = Int64(MPEGFormat.decoderDelay)
        return (Int64(delay) + d, max(0, Int64(padding) - d))
    }

    @inline(__always)
    public func header(at p: UnsafeRawPointer) -> FrameHeader? {
        if isADTS { return adts!.header(at: p) }
        guard p.load(as: UInt8.self) == 0xFF else { return nil }
        let word = loadBE32(p)
        if freeFormatLength > 0 {
            // Only the free-format headers of this stream: a frame of another bit rate
            // index, or another layout, is a false sync here.
            guard word & Self.freeFormatMask == freeFormatWord, let h = MPEGAudioHeader(word, freeFormatLength: freeFormatLength)
            else { return nil }
            return FrameHeader(length: h.frameLength, streamKey: h.streamKey, bitRate: h.bitRate)
        }
        guard let h = MPEGAudioHeader(word) else { return nil }
        return FrameHeader(length: h.frameLength, streamKey: h.streamKey, bitRate: h.bitRate)
    }

    /// The bits that free-format frames of one stream share: sync, version, layer, CRC,
    /// bit rate index and sample rate (the padding and the channel mode vary).
    static let freeFormatMask: UInt32 = 0xFFFF_FC00
    /// Free format: bytes of a frame without padding, and the header bits under the mask.
    private var freeFormatLength = 0
    private var freeFormatWord: UInt32 = 0
    /// The longest free-format frame looked for: 640 kbit/s at 32 kHz in layer III
    /// (2,880 bytes), with room.
    static let maximumFreeFormatLength = 4096

    /// A free-format stream (bit rate index 0) gives no frame length: it is the distance
    /// from the first header to the next with the same fixed bits (ISO/IEC 11172-3
    /// 2.4.2.3: the rate is fixed in a free-format stream), less the first frame's padding
    /// slot. A second frame at that length must follow as well (or the end of the data),
    /// so that a chance sync pattern in the payload is not taken.
    public mutating func learnFrameLength(_ bytes: UnsafeRawBufferPointer, at i: Int, isEndOfStream eos: Bool) -> FrameLengthSearch {
        guard !isADTS, freeFormatLength == 0, i + 4 <= bytes.count else { return .notNeeded }
        let base = bytes.baseAddress!
        let word = loadBE32(base + i)
        guard MPEGAudioHeader.isFreeFormat(word) else { return .notNeeded }
        let fixed = word & Self.freeFormatMask
        let layer1 = word >> 17 & 3 == 3
        let slot = layer1 ? 4 : 1
        func padding(_ w: UInt32) -> Int { w >> 9 & 1 == 1 ? slot : 0 }
        // The smallest frame: a header, a CRC and layer III's side information.
        var j = i + 4 + 2 + 17
        while j <= i + Self.maximumFreeFormatLength + slot {
            guard j + 4 <= bytes.count else { return eos ? .notNeeded : .needMore }
            let next = loadBE32(base + j)
            if next & Self.freeFormatMask == fixed {
                let length = j - i - padding(word)
                if length > 0 && (!layer1 || length % 4 == 0) {
                    // The frame after the second one confirms the length.
                    let third = j + length + padding(next)
                    if third + 4 > bytes.count && !eos { return .needMore }
                    if third + 4 > bytes.count || loadBE32(base + third) & Self.freeFormatMask == fixed {
                        freeFormatLength = length
                        freeFormatWord = fixed
                        return .learned
                    }
                }
            }
            j += 1
        }
        return .notNeeded
    }

    /// Seven bytes: enough for an ADTS header.
    public var audioStartLookahead: Int { 7 }

    public mutating func audioBegins(_ bytes: UnsafeRawBufferPointer, properties p: inout FileProperties) throws(AudioError) {
        guard bytes.count >= 7 else { return }
        let candidate = ADTSFormat()
        if candidate.header(at: bytes.baseAddress!) != nil || candidate.unsupportedStream(at: bytes.baseAddress!) != nil {
            if let error = candidate.unsupportedStream(at: bytes.baseAddress!) { throw error }
            adts = candidate
            isADTS = true
            p.fileType = .adts
        }
    }

    public mutating func firstFrame(_ header: FrameHeader, bytes: UnsafeRawBufferPointer, offset: Int64,
                                    properties p: inout FileProperties) throws(AudioError) -> FirstFrameRole
    {
        if isADTS { return try adts!.firstFrame(header, bytes: bytes, offset: offset, properties: &p) }
        guard let h = MPEGAudioHeader(loadBE32(bytes.baseAddress!), freeFormatLength: freeFormatLength) else {
            throw AudioError.malformed("not an MPEG audio header")
        }
        first = h
        p.fileType = h.fileType
        p.dataFormat = StreamDescription(sampleRate: Double(h.sampleRate), formatID: h.formatID, bytesPerPacket: 0,
                                         framesPerPacket: UInt32(h.samplesPerFrame), bytesPerFrame: 0,
                                         channelsPerFrame: UInt32(h.channels), bitsPerChannel: 0)
        p.dataFormatName = "\(h.versionName), Layer \(h.layer == 1 ? "I" : h.layer == 2 ? "II" : "III")"
        guard h.layer == 3, let v = MPEGFormat.vbrHeader(bytes, header: h) else { return .audio }
        vbr = v
        metadataFrameLength = bytes.count
        return .metadata
    }

    /// Reads a Xing/Info or VBRI header from a whole first frame.
    public static func vbrHeader(_ frame: UnsafeRawBufferPointer, header h: MPEGAudioHeader) -> MPEGVBRHeader? {
        func be32(_ i: Int) -> UInt32? {
            guard i >= 0, i + 4 <= frame.count else { return nil }
            return UInt32(frame[i]) << 24 | UInt32(frame[i + 1]) << 16 | UInt32(frame[i + 2]) << 8 | UInt32(frame[i + 3])
        }
        func text(_ i: Int, _ n: Int) -> String? {
            guard i >= 0, i + n <= frame.count else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: frame[i..<i + n]), as: UTF8.self)
        }
        // The Xing header follows the side information (after the CRC when there is one);
        // some encoders put it where it would be without the CRC, so both are tried.
        let afterSideInfo = 4 + h.sideInfoSize
        for start in h.hasCRC ? [afterSideInfo + 2, afterSideInfo] : [afterSideInfo] {
            guard let id = text(start, 4), id == "Xing" || id == "Info", let flags = be32(start + 4) else { continue }
            var v = MPEGVBRHeader(kind: id == "Xing" ? .xing : .info)
            var i = start + 8
            if flags & 1 != 0 { v.frames = be32(i).map { Int64($0) }; i += 4 }
            if flags & 2 != 0 { v.bytes = be32(i).map { Int64($0) }; i += 4 }
            if flags & 4 != 0 {
                if i + 100 <= frame.count { v.toc = Array(frame[i..<i + 100]) }
                i += 100
            }
            if flags & 8 != 0 { i += 4 }  // quality
            // The LAME tag: a 9-byte encoder string, then fields; the delays are 3 bytes at 21.
            if let encoder = text(i, 9), encoder.hasPrefix("LAME") || encoder.hasPrefix("Lavf") || encoder.hasPrefix("Lavc")
                || encoder.hasPrefix("L3.99"), i + 24 <= frame.count
            {
                v.encoder = String(encoder.prefix { $0 != "\0" && $0 != " " }.prefix(9))
                let a = Int(frame[i + 21]), b = Int(frame[i + 22]), c = Int(frame[i + 23])
                v.encoderDelay = a << 4 | b >> 4
                v.encoderPadding = (b & 0x0F) << 8 | c
            }
            return v
        }
        // VBRI: always 32 bytes after the header.
        if text(36, 4) == "VBRI", let bytes = be32(46), let frames = be32(50) {
            var v = MPEGVBRHeader(kind: .vbri)
            v.bytes = Int64(bytes)
            v.frames = Int64(frames)
            return v
        }
        return nil
    }

    /// Bytes an estimated offset of a constant-bit-rate stream stays before the frame it
    /// names: the true start is within one byte of k × the average frame length (the padding
    /// slots keep the average), and the resynchronisation then finds that frame first.
    static let constantBitRateSlack: Int64 = 3

    /// An estimated byte offset (relative to the first audio frame) for a packet.
    ///
    /// - A constant bit rate (LAME's 'Info' frame, or no Xing or VBRI frame: the first
    ///   frame's rate is taken for all): a few bytes before the frame itself, from the
    ///   frame length the rate gives, so that a push stream resumed there (`.discontinuity`)
    ///   resynchronises to that very packet. A stream without Xing frame whose rate varies
    ///   lands near it, as far off as its rates are from the first one.
    /// - A Xing table of contents (VBR): the table's interpolation, which is only as fine as
    ///   the table: an entry per percent of the duration, in 256ths of the bytes, so the
    ///   stream may resume a few packets before or after the one named (about 1/256 of the
    ///   audio bytes plus a frame).
    /// - nil otherwise (a VBRI frame, free format).
    public func estimatedOffset(ofPacket packet: Int64) -> Int64? {
        if let first, !isADTS, !first.isFreeFormat, vbr == nil || vbr?.kind == .info {
            let frameLength = Double(first.samplesPerFrame) / 8 * Double(first.bitRate) / Double(first.sampleRate)
            let offset = (Double(packet) * frameLength).rounded(.down)
            guard offset.isFinite, offset < 0x1p62 else { return nil }
            return max(0, Int64(offset) - (packet > 0 ? Self.constantBitRateSlack : 0))
        }
        guard let vbr, let toc = vbr.toc, toc.count == 100, let frames = vbr.frames, frames > 0,
              let bytes = vbr.bytes, bytes > 0 else { return nil }
        let percent = min(100, max(0, Double(packet) / Double(frames) * 100))
        let i = min(99, Int(percent))
        let a = Double(toc[i]), b = i < 99 ? Double(toc[i + 1]) : 256
        let fraction = (a + (b - a) * (percent - Double(i))) / 256
        return max(0, Int64(fraction * Double(bytes)) - Int64(metadataFrameLength))
    }
}

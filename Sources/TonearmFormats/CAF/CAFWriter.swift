import TonearmCore

/// Writes CAF: 'desc', then 'chan' and 'kuki' when set, then a 'data' chunk whose size
/// stays -1 until `finish` patches it; after the data come 'info', 'pakt' and the markers
/// ('strg' and 'mark').
///
/// Linear PCM (integer or float, either byte order, packed), µ-law, A-law and IMA4 are the
/// formats it encodes for. Packets of any other format are copied as they are (a packet
/// table is written for variable-size packets, with the PacketTableInfo set), so an AAC,
/// ALAC, FLAC or Opus stream can be rewrapped; the cookie is stored in CAF's form for
/// its codec (``cookieBody(_:format:)``), so that it reads back as it was given.
final class CAFWriter: FormatWriter {
    private var dataSizeOffset: Int64 = 0
    /// Where an AAC cookie's buffer size and bit rates lie, filled in by `finish`.
    private var bitRatesOffset: Int64?

    init(format f: StreamDescription) throws(AudioError) {
        try CAFWriter.checkWritable(f)
    }

    static func checkWritable(_ f: StreamDescription) throws(AudioError) {
        func fail(_ why: String) -> AudioError { AudioError(.unsupportedDataFormat, "CAF cannot hold \(why)") }
        switch f.formatID {
        case .linearPCM, .uLaw, .aLaw, .appleIMA4:
            try requireWritable(f, fileType: .caf, allowed: [.linearPCM, .uLaw, .aLaw, .appleIMA4])
        default:
            guard f.sampleRate.isFinite, f.sampleRate > 0, f.channelsPerFrame > 0 else {
                throw fail("a format with \(f.channelsPerFrame) channels at \(f.sampleRate) Hz")
            }
        }
        guard f.bytesPerPacket <= CAFFormat.maximumBytesPerPacket, f.framesPerPacket <= CAFFormat.maximumFramesPerPacket,
              f.channelsPerFrame <= 1024
        else { throw fail("\(f.bytesPerPacket) bytes and \(f.framesPerPacket) frames per packet") }
        switch f.formatID {
        case .linearPCM:
            if !f.isFloat && !f.isSignedInteger { throw fail("unsigned integer PCM") }
            if f.bytesPerSample * 8 != f.bitsPerChannel { throw fail("\(f.bitsPerChannel)-bit PCM in \(f.bytesPerSample)-byte containers") }
        case .uLaw, .aLaw:
            guard f.bytesPerPacket == f.channelsPerFrame, f.framesPerPacket == 1 else {
                throw fail("G.711 with \(f.bytesPerPacket) bytes per packet for \(f.channelsPerFrame) channels")
            }
        case .appleIMA4:
            guard f.bytesPerPacket == 34 * f.channelsPerFrame, f.framesPerPacket == 64 else {
                throw fail("IMA4 with \(f.bytesPerPacket) bytes and \(f.framesPerPacket) frames per packet")
            }
        default:
            break
        }
    }

    func header(_ s: WriterState) throws(AudioError) -> [UInt8] {
        var w = ByteWriter()
        w.write(FourCC("caff"))
        w.write(UInt16(1))
        w.write(UInt16(0))
        CAFWriter.chunk(&w, "desc", CAFWriter.descriptionBody(s.format))
        if let layout = s.channelLayout { CAFWriter.chunk(&w, "chan", layout.chunkBody) }
        if let cookie = s.magicCookie {
            let (body, rates) = CAFWriter.cookieBody(cookie, format: s.format)
            if let rates { bitRatesOffset = Int64(w.bytes.count + 12 + rates) }
            CAFWriter.chunk(&w, "kuki", body)
        }
        w.write(FourCC("data"))
        dataSizeOffset = Int64(w.bytes.count)
        w.write(Int64(-1))
        w.write(UInt32(0))  // edit count
        return w.bytes
    }

    func finish(_ s: WriterState, handle: POSIXFile) throws(AudioError) {
        var tail = ByteWriter()
        if !s.info.isEmpty { CAFWriter.chunk(&tail, "info", CAFWriter.infoBody(s.info)) }
        let f = s.format
        if !f.isConstantBitRate || s.packetTableInfo != nil || (f.framesPerPacket > 1 && !f.isPCM) {
            CAFWriter.chunk(&tail, "pakt", CAFWriter.packetTableBody(s))
        }
        if !s.markers.isEmpty {
            if s.markers.contains(where: { !$0.name.isEmpty }) { CAFWriter.chunk(&tail, "strg", CAFWriter.stringsBody(s.markers)) }
            CAFWriter.chunk(&tail, "mark", CAFWriter.markersBody(s.markers))
        }
        let end = s.dataOffset + s.dataByteCount
        if !tail.bytes.isEmpty { try handle.write(tail.bytes, at: end) }
        try handle.truncate(to: end + Int64(tail.bytes.count))
        var size = ByteWriter()
        size.write(s.dataByteCount + 4)
        try handle.write(size.bytes, at: dataSizeOffset)
        if let at = bitRatesOffset { try handle.write(CAFWriter.decoderConfigRates(s), at: at) }
    }

    var canUpdateSizesEachWrite: Bool { true }

    func adopt(header h: [UInt8], state: WriterState, handle: POSIXFile) throws(AudioError) {
        var data: Int?
        for c in headerChunks(h, from: 8, sizeBytes: 8, bigEndian: true, align: 1) {
            switch c.id {
            // finish writes these again after the audio; one of each may exist.
            case "pakt", "info", "mark", "strg": try handle.write(Array("free".utf8), at: Int64(c.at))
            case "data": data = c.at
            default: break
            }
        }
        guard let data, Int64(data + 16) == state.dataOffset else {
            throw AudioError(.invalidFile, "the CAF header does not end in a data chunk")
        }
        dataSizeOffset = Int64(data + 4)
    }

    // MARK: Chunk bodies

    static func chunk(_ w: inout ByteWriter, _ id: FourCC, _ body: [UInt8]) {
        w.write(id)
        w.write(Int64(body.count))
        w.write(body)
    }

    /// The ASBD as CAF stores it; linear PCM flags become CAF's (1 = float, 2 = little-endian).
    static func descriptionBody(_ f: StreamDescription) -> [UInt8] {
        var w = ByteWriter()
        w.writeFloat64(f.sampleRate)
        w.write(f.formatID.rawValue)
        var flags = f.formatFlags.rawValue
        if f.isPCM { flags = (f.isFloat ? 1 : 0) | (f.isBigEndian ? 0 : 2) }
        w.write(flags)
        w.write(f.bytesPerPacket)
        w.write(f.framesPerPacket)
        w.write(f.channelsPerFrame)
        w.write(f.bitsPerChannel)
        return w.bytes
    }


    /// The cookie in the form CAF stores it (see CAFFormat+Cookie.swift): an AAC
    /// AudioSpecificConfig goes inside an ES_Descriptor, the body of a FLAC dfLa box
    /// becomes the whole box; other cookies, and cookies already in CAF's form, stay as
    /// they are. For a new ES_Descriptor, also gives where its buffer size and bit rates
    /// lie (written as 0 until `finish` knows them).
    static func cookieBody(_ cookie: [UInt8], format f: StreamDescription) -> (body: [UInt8], rates: Int?) {
        switch f.formatID {
        case .mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .mpeg4AAC_LD, .mpeg4AAC_ELD:
            if cookie.first == 0x03 { return (cookie, nil) }
            if cookie.count > 4, cookie[0..<4] == [0, 0, 0, 0], cookie[4] == 0x03 { return (Array(cookie[4...]), nil) }
            // ISO/IEC 14496-1 §7.2.6.5/6: DecoderConfigDescriptor (MPEG-4 audio, an audio
            // stream) around the DecoderSpecificInfo; SLConfigDescriptor predefined 2 (MP4).
            func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
                let n = body.count
                return [tag, UInt8(0x80 | n >> 21 & 0x7F), UInt8(0x80 | n >> 14 & 0x7F), UInt8(0x80 | n >> 7 & 0x7F),
                        UInt8(n & 0x7F)] + body
            }
            let config = descriptor(0x04, [0x40, 0x15] + [UInt8](repeating: 0, count: 11) + descriptor(0x05, cookie))
            let es = descriptor(0x03, [0, 0, 0] + config + descriptor(0x06, [0x02]))
            // Tag and size of each descriptor (5), ES_ID and flags (3), object and stream type (2).
            return (es, 5 + 3 + 5 + 2)
        case .flac:
            if cookie.count >= 8, Array(cookie[4..<8]) == Array("dfLa".utf8) { return (cookie, nil) }
            var w = ByteWriter()
            w.write(UInt32(truncatingIfNeeded: cookie.count + 8))
            w.write(FourCC("dfLa"))
            w.write(cookie)
            return (w.bytes, nil)
        default:
            return (cookie, nil)
        }
    }

    /// An ES_Descriptor's bufferSizeDB (24 bits), maxBitrate and avgBitrate for the packets
    /// written: the largest packet, and bits per second over the largest packet and overall.
    static func decoderConfigRates(_ s: WriterState) -> [UInt8] {
        let f = s.format
        let largest = s.packetDescriptions.map(\.dataByteSize).max() ?? f.bytesPerPacket
        let frames = Double(s.frameCount)
        let framesPerPacket = f.framesPerPacket > 0 ? Double(f.framesPerPacket) : (s.packetCount > 0 ? frames / Double(s.packetCount) : 0)
        func clamp(_ v: Double) -> UInt32 { v.isFinite && v >= 0 ? UInt32(min(v, Double(UInt32.max))) : 0 }
        let peak = framesPerPacket > 0 ? clamp(Double(largest) * 8 * f.sampleRate / framesPerPacket) : 0
        let average = frames > 0 ? clamp(Double(s.dataByteCount) * 8 * f.sampleRate / frames) : 0
        var w = ByteWriter()
        let buffer = min(largest, 0xFF_FFFF)
        w.write(UInt8(buffer >> 16)); w.write(UInt16(truncatingIfNeeded: buffer))
        w.write(peak)
        w.write(average)
        return w.bytes
    }

    static func infoBody(_ info: InfoDictionary) -> [UInt8] {
        var w = ByteWriter()
        w.write(UInt32(info.count))
        for (key, value) in info {
            w.write(Array(key.utf8)); w.write([0])
            w.write(Array(value.utf8)); w.write([0])
        }
        return w.bytes
    }

    /// Counts, then each packet's size (when sizes vary) and frames (when frames vary), as
    /// big-endian base-128 numbers whose high bit says that more bytes follow.
    static func packetTableBody(_ s: WriterState) -> [UInt8] {
        let f = s.format
        var w = ByteWriter()
        let total = s.frameCount
        let info = s.packetTableInfo ?? PacketTableInfo(numberValidFrames: total)
        w.write(s.packetCount)
        w.write(info.numberValidFrames)
        w.write(info.primingFrames)
        w.write(info.remainderFrames)
        if f.bytesPerPacket == 0 || f.framesPerPacket == 0 {
            for d in s.packetDescriptions {
                if f.bytesPerPacket == 0 { writeVarint(&w, d.dataByteSize) }
                if f.framesPerPacket == 0 { writeVarint(&w, d.variableFramesInPacket) }
            }
        }
        return w.bytes
    }

    static func writeVarint(_ w: inout ByteWriter, _ value: UInt32) {
        var groups: [UInt8] = [UInt8(value & 0x7F)]
        var v = value >> 7
        while v > 0 {
            groups.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        w.write(groups.reversed())
    }

    static func stringsBody(_ markers: [AudioFileMarker]) -> [UInt8] {
        var ids = ByteWriter()
        var text: [UInt8] = []
        let named = markers.filter { !$0.name.isEmpty }
        ids.write(UInt32(named.count))
        for m in named {
            ids.write(UInt32(bitPattern: m.markerID))
            ids.write(Int64(text.count))
            text += Array(m.name.utf8) + [0]
        }
        return ids.bytes + text
    }

    static func markersBody(_ markers: [AudioFileMarker]) -> [UInt8] {
        var w = ByteWriter()
        w.write(UInt32(0))  // kCAF_SMPTE_TimeTypeNone
        w.write(UInt32(markers.count))
        for m in markers {
            w.write(UInt32(0))  // kCAFMarkerType_Generic
            w.writeFloat64(m.framePosition)
            w.write(m.markerID)
            w.write([UInt8](repeating: 0, count: 8))  // SMPTE time
            w.write(UInt32(0))  // channel: all
        }
        return w.bytes
    }
}

import TonearmCore

/// Writes WAVE, RF64 and BW64. A WAVE file turns itself into RF64 at close when its data
/// passed 4 GiB: the header reserves a JUNK chunk that becomes `ds64`.
final class WAVEWriter: FormatWriter {
    let fileType: AudioFileTypeID
    private var dataSizeOffset: Int64 = 0
    /// The JUNK or ds64 chunk that becomes ds64 past 4 GiB; nil for an adopted file without one.
    private var junkOffset: Int64? = 12

    init(fileType: AudioFileTypeID, format: StreamDescription) throws(AudioError) {
        self.fileType = fileType
        try requireWritable(format, fileType: fileType, allowed: [.linearPCM, .uLaw, .aLaw])
        if format.isPCM {
            if format.isBigEndian && format.bytesPerSample > 1 {
                throw AudioError(.unsupportedDataFormat, "WAVE holds little-endian PCM only")
            }
            if !format.isFloat && format.bytesPerSample > 1 && !format.isSignedInteger {
                throw AudioError(.unsupportedDataFormat, "WAVE holds unsigned integers only at 8 bits")
            }
            if !format.isFloat && format.bytesPerSample == 1 && format.isSignedInteger {
                throw AudioError(.unsupportedDataFormat, "8-bit WAVE is unsigned")
            }
        }
    }

    func header(_ s: WriterState) throws(AudioError) -> [UInt8] {
        let f = s.format
        var w = ByteWriter()
        w.write(FourCC(fileType == .wave ? "RIFF" : fileType == .rf64 ? "RF64" : "BW64"))
        w.write(UInt32(fileType == .wave ? 0 : 0xFFFF_FFFF), .little)
        w.write(FourCC("WAVE"))
        // ds64 for RF64 and BW64; for WAVE a JUNK chunk of the same size, kept for the switch to RF64.
        junkOffset = Int64(w.bytes.count)
        w.write(FourCC(fileType == .wave ? "JUNK" : "ds64"))
        w.write(UInt32(28), .little)
        w.write([UInt8](repeating: 0, count: 28))

        let fmt = WAVEWriter.formatChunkBody(f, layout: s.channelLayout)
        w.write(FourCC("fmt "))
        w.write(UInt32(fmt.count), .little)
        w.write(fmt)
        if !f.isPCM || f.isFloat {
            // A fact chunk with the frame count, patched at close.
            w.write(FourCC("fact"))
            w.write(UInt32(4), .little)
            factOffset = Int64(w.bytes.count)
            w.write(UInt32(0), .little)
        }
        w.write(FourCC("data"))
        dataSizeOffset = Int64(w.bytes.count)
        w.write(UInt32(fileType == .wave ? 0 : 0xFFFF_FFFF), .little)
        return w.bytes
    }
    private var factOffset: Int64?
    /// Sizes above this need RF64's 64-bit fields (4 GiB − 1); tests lower it.
    nonisolated(unsafe) static var rf64Threshold = Int64(UInt32.max)

    /// The body of a `fmt ` chunk for a format: WAVEFORMATEX, or WAVE_FORMAT_EXTENSIBLE when
    /// there are more than two channels or the valid bits do not fill the container.
    /// Wave64 shares it.
    static func formatChunkBody(_ f: StreamDescription, layout: ChannelLayout?) -> [UInt8] {
        var w = ByteWriter()
        let channels = f.channelsPerFrame
        let container = f.isPCM ? f.bytesPerSample : 1
        let mask = layout?.waveChannelMask
        let extensible = f.isPCM && (channels > 2 || container * 8 != f.bitsPerChannel || container > 2 && !f.isFloat
            || (mask != nil && channels > 2))
        let tag: UInt16 = f.formatID == .uLaw ? WAVEFormatTag.uLaw : f.formatID == .aLaw ? WAVEFormatTag.aLaw
            : f.isFloat ? WAVEFormatTag.ieeeFloat : WAVEFormatTag.pcm
        w.write(extensible ? WAVEFormatTag.extensible : tag, .little)
        w.write(UInt16(channels), .little)
        w.write(UInt32(f.sampleRate.rounded()), .little)
        w.write(UInt32(f.sampleRate.rounded()) &* f.bytesPerFrame, .little)
        w.write(UInt16(f.bytesPerFrame), .little)
        w.write(UInt16(container * 8), .little)
        if extensible {
            w.write(UInt16(22), .little)
            w.write(UInt16(f.bitsPerChannel), .little)
            w.write(mask ?? ChannelLayout.defaultLayout(channels: Int(channels))?.waveChannelMask ?? 0, .little)
            // KSDATAFORMAT_SUBTYPE_PCM / _IEEE_FLOAT: the tag, then the fixed GUID tail.
            w.write(UInt32(tag), .little)
            w.write([0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
        } else if !(f.isPCM && tag == WAVEFormatTag.pcm) {
            w.write(UInt16(0), .little)
        }
        return w.bytes
    }

    func finish(_ s: WriterState, handle: POSIXFile) throws(AudioError) {
        var end = s.dataOffset + s.dataByteCount
        if s.dataByteCount & 1 == 1 {
            try handle.write([0], at: end)
            end += 1
        }
        // LIST/INFO after the audio.
        let list = WAVEWriter.listChunk(s.info)
        if !list.isEmpty {
            try handle.write(list, at: end)
            end += Int64(list.count)
        }
        try handle.truncate(to: end)
        let riffSize = end - 8
        let needs64 = fileType != .wave || riffSize > WAVEWriter.rf64Threshold || s.dataByteCount > WAVEWriter.rf64Threshold - 1
        if let factOffset {
            try handle.write(le32(UInt32(clamping: s.frameCount)), at: factOffset)
        }
        if needs64 {
            if fileType == .wave { try handle.write(Array("RF64".utf8), at: 0) }
            try handle.write(le32(0xFFFF_FFFF), at: 4)
            var d = ByteWriter()
            d.write(FourCC("ds64"))
            d.write(UInt32(28), .little)
            d.write(UInt64(riffSize), .little)
            d.write(UInt64(s.dataByteCount), .little)
            d.write(UInt64(s.frameCount), .little)
            d.write(UInt32(0), .little)
            guard let junkOffset else {
                throw AudioError(.doesNotAllow64BitDataSize, "this WAVE file has no room for a ds64 chunk; its data cannot pass 4 GiB")
            }
            try handle.write(d.bytes, at: junkOffset)
            try handle.write(le32(0xFFFF_FFFF), at: dataSizeOffset)
        } else {
            try handle.write(le32(UInt32(riffSize)), at: 4)
            try handle.write(le32(UInt32(s.dataByteCount)), at: dataSizeOffset)
        }
    }

    var canUpdateSizesEachWrite: Bool { true }

    func adopt(header h: [UInt8], state: WriterState, handle: POSIXFile) throws(AudioError) {
        junkOffset = nil
        factOffset = nil
        var dataSize: Int64?
        for c in headerChunks(h, from: 12, sizeBytes: 4, bigEndian: false, align: 2) {
            switch c.id {
            case "JUNK" where c.size == 28, "ds64" where c.size == 28: junkOffset = Int64(c.at)
            case "fact" where c.size >= 4: factOffset = Int64(c.at + 8)
            case "LIST":
                // An INFO list before the audio: finish writes the info again after it.
                if c.at + 12 <= h.count, Array(h[(c.at + 8)..<(c.at + 12)]) == Array("INFO".utf8) {
                    try handle.write(Array("JUNK".utf8), at: Int64(c.at))
                }
            case "data": dataSizeOffset = Int64(c.at + 4); dataSize = c.size
            default: break
            }
        }
        guard dataSize != nil, dataSizeOffset + 4 == state.dataOffset else {
            throw AudioError(.invalidFile, "the WAVE header does not end in a data chunk")
        }
    }

    static let infoIDs: [String: FourCC] = {
        var ids: [String: FourCC] = [:]
        for (id, key) in WAVEFormat.infoKeys where id != "IPRT" { ids[key] = id }
        return ids
    }()

    /// A LIST chunk of INFO subchunks for the info dictionary's known keys.
    static func listChunk(_ info: InfoDictionary) -> [UInt8] {
        var body = ByteWriter()
        body.write(FourCC("INFO"))
        var any = false
        for (key, value) in info {
            guard let id = WAVEWriter.infoIDs[key] else { continue }
            var text = Array(value.utf8)
            text.append(0)
            body.write(id)
            body.write(UInt32(text.count), .little)
            body.write(text)
            if text.count & 1 == 1 { body.write([0]) }
            any = true
        }
        guard any else { return [] }
        var w = ByteWriter()
        w.write(FourCC("LIST"))
        w.write(UInt32(body.bytes.count), .little)
        w.write(body.bytes)
        return w.bytes
    }
}

func le32(_ v: UInt32) -> [UInt8] {
    [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
}

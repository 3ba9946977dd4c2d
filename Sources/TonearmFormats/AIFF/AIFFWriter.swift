import TonearmCore

/// Writes AIFF (big-endian signed integer PCM) and AIFC (NONE, sowt, fl32, fl64, ulaw,
/// alaw, ima4).
///
/// The header is `FORM`, `FVER` (AIFC only), `COMM`, `CHAN` (when a layout other than plain
/// mono or stereo was set) and `SSND` with offset and block size 0. `finish` patches the
/// FORM size, COMM's numSampleFrames and the SSND size, pads an odd SSND, and appends the
/// text chunks (`NAME`, `AUTH`, `(c) `, `ANNO`) and `MARK` after the audio.
final class AIFFWriter: FormatWriter {
    let fileType: AudioFileTypeID
    /// The AIFC compression type; nil for AIFF.
    let compression: FourCC?
    private var commFramesOffset: Int64 = 0
    private var ssndSizeOffset: Int64 = 0
    /// SSND's offset field: bytes between its block size and the audio (0 when written here).
    private var ssndLeadingBytes: Int64 = 0

    init(fileType: AudioFileTypeID, format f: StreamDescription) throws(AudioError) {
        self.fileType = fileType
        let isAIFC = fileType == .aifc
        try requireWritable(f, fileType: fileType, allowed: isAIFC ? [.linearPCM, .uLaw, .aLaw, .appleIMA4] : [.linearPCM])
        func reject(_ why: String) -> AudioError { AudioError(.unsupportedDataFormat, "\(fileType) files cannot hold \(why)") }
        guard f.channelsPerFrame <= 1024 else { throw reject("\(f.channelsPerFrame) channels") }
        guard f.sampleRate.isFinite else { throw reject("a sample rate of \(f.sampleRate)") }
        switch f.formatID {
        case .linearPCM:
            let container = f.bytesPerSample
            if f.isFloat {
                guard isAIFC else { throw reject("float data; use AIFC") }
                guard f.isBigEndian else { throw reject("little-endian float data") }
                compression = f.bitsPerChannel == 32 ? "fl32" : "fl64"
            } else {
                guard f.isSignedInteger else { throw reject("unsigned integers") }
                guard f.bitsPerChannel <= 32, container == (f.bitsPerChannel + 7) / 8 else {
                    throw reject("\(f.bitsPerChannel)-bit samples in \(container) bytes")
                }
                guard container * 8 == f.bitsPerChannel || f.formatFlags.contains(.isAlignedHigh) else {
                    throw reject("samples aligned low (AIFF left-justifies them)")
                }
                // One-byte samples have no byte order; the big-endian flag picks NONE over sowt,
                // so that the file reads back with the same flags.
                if f.isBigEndian {
                    compression = isAIFC ? "NONE" : nil
                } else if isAIFC {
                    compression = "sowt"
                } else if container == 1 {
                    compression = nil
                } else {
                    throw reject("little-endian data; use AIFC (sowt)")
                }
            }
        case .uLaw, .aLaw:
            guard f.bytesPerPacket == f.channelsPerFrame, f.framesPerPacket == 1 else {
                throw reject("G.711 in packets of \(f.bytesPerPacket) bytes and \(f.framesPerPacket) frames")
            }
            compression = f.formatID == .uLaw ? "ulaw" : "alaw"
        default:  // .appleIMA4
            guard f.bytesPerPacket == AIFF.ima4BytesPerChannel * f.channelsPerFrame,
                  f.framesPerPacket == AIFF.ima4FramesPerPacket else {
                throw reject("IMA4 in packets of \(f.bytesPerPacket) bytes and \(f.framesPerPacket) frames")
            }
            compression = "ima4"
        }
    }

    func header(_ s: WriterState) throws(AudioError) -> [UInt8] {
        let f = s.format
        var w = ByteWriter()
        w.write(FourCC("FORM"))
        w.write(UInt32(0))  // patched by finish
        w.write(FourCC(compression == nil ? "AIFF" : "AIFC"))
        if compression != nil {
            w.write(FourCC("FVER"))
            w.write(UInt32(4))
            w.write(AIFF.aifcVersion1)
        }

        var comm = ByteWriter()
        comm.write(UInt16(f.channelsPerFrame))
        let framesAt = comm.bytes.count
        comm.write(UInt32(0))  // numSampleFrames, patched by finish
        comm.write(Int16(sampleSize(f)))
        comm.write(ByteReader.encodeExtended(f.sampleRate))
        if let compression {
            comm.write(compression)
            comm.write(AIFF.pascalString(AIFFWriter.compressionNames[compression] ?? ""))
        }
        w.write(FourCC("COMM"))
        w.write(UInt32(comm.bytes.count))
        commFramesOffset = Int64(w.bytes.count + framesAt)
        w.write(comm.bytes)

        if let layout = s.channelLayout, !AIFFWriter.isPlain(layout, channels: f.channelsPerFrame) {
            let body = layout.chunkBody
            w.write(FourCC("CHAN"))
            w.write(UInt32(body.count))
            w.write(body)
        }

        w.write(FourCC("SSND"))
        ssndSizeOffset = Int64(w.bytes.count)
        w.write(UInt32(8))  // patched by finish
        w.write(UInt32(0))  // offset
        w.write(UInt32(0))  // block size
        return w.bytes
    }

    /// COMM's sampleSize: the bits of PCM, and the decoded width (16) for the compressed formats.
    private func sampleSize(_ f: StreamDescription) -> UInt32 {
        f.isPCM ? f.bitsPerChannel : 16
    }

    static let compressionNames: [FourCC: String] = [
        "NONE": "not compressed", "sowt": "", "fl32": "32-bit floating point", "fl64": "64-bit floating point",
        "ulaw": "uLaw 2:1", "alaw": "aLaw 2:1", "ima4": "IMA 4:1",
    ]

    /// Plain mono or stereo: what a reader assumes without a CHAN chunk.
    static func isPlain(_ l: ChannelLayout, channels: UInt32) -> Bool {
        (l.tag == .mono && channels == 1) || (l.tag == .stereo && channels == 2)
    }

    func finish(_ s: WriterState, handle: POSIXFile) throws(AudioError) {
        var end = s.dataOffset + s.dataByteCount
        if s.dataByteCount & 1 == 1 {
            try handle.write([0], at: end)
            end += 1
        }
        let trailer = AIFFWriter.trailingChunks(info: s.info, markers: s.markers)
        if !trailer.isEmpty {
            try handle.write(trailer, at: end)
            end += Int64(trailer.count)
        }
        try handle.truncate(to: end)
        let ssndSize = 8 + ssndLeadingBytes + s.dataByteCount
        // IMA4's numSampleFrames counts packets; every other format has one frame per packet.
        let frames = compression == "ima4" ? s.packetCount : s.frameCount
        guard end - 8 <= Int64(UInt32.max), ssndSize <= Int64(UInt32.max), frames <= Int64(UInt32.max) else {
            throw AudioError(.doesNotAllow64BitDataSize, "\(fileType) files end at 4 GiB; this one needs \(end) bytes")
        }
        try handle.write(AIFF.be32(UInt32(end - 8)), at: 4)
        try handle.write(AIFF.be32(UInt32(frames)), at: commFramesOffset)
        try handle.write(AIFF.be32(UInt32(ssndSize)), at: ssndSizeOffset)
    }

    var canUpdateSizesEachWrite: Bool { true }

    func adopt(header h: [UInt8], state: WriterState, handle: POSIXFile) throws(AudioError) {
        var comm: Int64?, ssnd: Int64?
        for c in headerChunks(h, from: 12, sizeBytes: 4, bigEndian: true, align: 2) {
            switch c.id {
            case "COMM": comm = Int64(c.at + 8 + 2)
            case "SSND":
                ssnd = Int64(c.at + 4)
                if c.at + 12 <= h.count {
                    ssndLeadingBytes = Int64(h[c.at + 8]) << 24 | Int64(h[c.at + 9]) << 16 | Int64(h[c.at + 10]) << 8 | Int64(h[c.at + 11])
                }
            default: break
            }
        }
        // A COMM after the sound data would be cut off when the data grows.
        guard let comm else { throw AudioError(.notOptimized, "the COMM chunk follows the sound data; this file cannot grow in place") }
        guard let ssnd, ssnd + 12 + ssndLeadingBytes == state.dataOffset else {
            throw AudioError(.invalidFile, "the AIFF header does not end in an SSND chunk")
        }
        commFramesOffset = comm
        ssndSizeOffset = ssnd
    }

    /// NAME, AUTH, (c) and ANNO from the info dictionary, then MARK from the markers.
    static func trailingChunks(info: InfoDictionary, markers: [AudioFileMarker]) -> [UInt8] {
        var w = ByteWriter()
        func chunk(_ id: FourCC, _ body: [UInt8]) {
            w.write(id)
            w.write(UInt32(body.count))
            w.write(body)
            if body.count & 1 == 1 { w.write([0]) }
        }
        for (id, key) in AIFF.textChunks {
            if let text = info[key], !text.isEmpty { chunk(id, Array(text.utf8)) }
        }
        if !markers.isEmpty {
            var m = ByteWriter()
            let list = markers.prefix(Int(UInt16.max))
            m.write(UInt16(list.count))
            for (i, marker) in list.enumerated() {
                // AIFF marker IDs are positive 16-bit numbers; others are numbered in order.
                let id = marker.markerID > 0 && marker.markerID <= Int32(Int16.max) ? Int16(marker.markerID) : Int16(i + 1)
                m.write(id)
                let position = marker.framePosition.isFinite ? max(0, marker.framePosition.rounded()) : 0
                m.write(position >= Double(UInt32.max) ? UInt32.max : UInt32(position))
                m.write(AIFF.pascalString(marker.name))
            }
            chunk("MARK", m.bytes)
        }
        return w.bytes
    }
}

extension AIFF {
    static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
}

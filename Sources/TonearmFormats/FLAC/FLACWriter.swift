import TonearmCore

/// Writes native FLAC files (RFC 9639 §6–8): "fLaC", STREAMINFO, VORBIS_COMMENT and a
/// PADDING block, then the frames as they come.
///
/// STREAMINFO comes from the magic cookie (Apple's `dfLa` body, a "fLaC" stream head or
/// the bare 34 bytes; 'fmt?' without one). An encoder's cookie is final only when it has
/// finished, so the cookie may be set again after the packets, and `close()` rewrites
/// STREAMINFO from it. The comment block holds the vendor "Tonearm" and the info
/// dictionary under the Vorbis names the FLAC parser maps back (TITLE, ARTIST, ALBUM,
/// DATE, TRACKNUMBER, GENRE, COMMENT, …), and the channel mask when the layout is not
/// FLAC's default for its channel count.
///
/// The padding (``reservedBytes``) is where `close()` puts a SEEKTABLE: a point every ten
/// seconds or so, wider apart when the padding cannot hold that many, each at a frame's
/// start, with byte offsets from the first frame; what is left stays PADDING.
final class FLACWriter: FormatWriter {
    /// The PADDING block's body: room for 455 seek points, 75 minutes at one per 10 s.
    static let reservedBytes = 8192
    /// Seconds between seek points when the padding has room for them.
    static let seekSpacing = 10.0

    /// Where the PADDING block's header lies, once the header is written.
    private var paddingOffset = 0

    var rewritesMagicCookie: Bool { true }

    init(format f: StreamDescription) throws(AudioError) {
        guard f.formatID == .flac else {
            throw AudioError(.unsupportedDataFormat, "FLAC files cannot hold \(f.formatID) data")
        }
        guard f.channelsPerFrame >= 1, f.channelsPerFrame <= 8, f.sampleRate > 0 else {
            throw AudioError(.unsupportedDataFormat, "FLAC cannot hold \(f.channelsPerFrame) channels at \(f.sampleRate) Hz")
        }
    }

    /// The 34 STREAMINFO bytes of a cookie in any of the forms the FLAC decoder takes.
    static func streamInfo(_ cookie: [UInt8]?) throws(AudioError) -> [UInt8] {
        guard let c = cookie else {
            throw AudioError(.unsupportedDataFormat, "a FLAC file needs the encoder's magic cookie (STREAMINFO) before its packets")
        }
        if c.count >= 42 && (Array(c[0..<4]) == Array("fLaC".utf8) || (c[4] & 0x7F == 0 && c[5] == 0 && c[6] == 0 && c[7] == 34)) {
            return Array(c[8..<42])
        }
        if c.count >= 50, Array(c[4..<8]) == Array("dfLa".utf8), c[12] & 0x7F == 0, c[15] == 34 {
            return Array(c[16..<50])
        }
        if c.count == 34 { return c }
        throw AudioError(.unsupportedDataFormat, "a FLAC magic cookie of \(c.count) bytes holds no STREAMINFO")
    }

    func header(_ s: WriterState) throws(AudioError) -> [UInt8] {
        let info = try FLACWriter.streamInfo(s.magicCookie)
        _ = try FLACStreamInfo.read(info)
        var w = ByteWriter()
        w.write(Array("fLaC".utf8))
        FLACWriter.block(&w, .streamInfo, info, isLast: false)
        FLACWriter.block(&w, .vorbisComment, FLACWriter.comment(s).bytes, isLast: false)
        paddingOffset = w.bytes.count
        FLACWriter.block(&w, .padding, [UInt8](repeating: 0, count: FLACWriter.reservedBytes), isLast: true)
        return w.bytes
    }

    /// RFC 9639 §8.1: the last-block flag and type, a 24-bit length, the body.
    static func block(_ w: inout ByteWriter, _ type: FLACBlockType, _ body: [UInt8], isLast: Bool) {
        w.write(UInt8(isLast ? 0x80 : 0) | type.rawValue)
        w.write(UInt8(truncatingIfNeeded: body.count >> 16))
        w.write(UInt16(truncatingIfNeeded: body.count))
        w.write(body)
    }

    /// The Vorbis comment of the info dictionary (and a non-default channel layout).
    static func comment(_ s: WriterState) -> VorbisComment {
        var c = VorbisComment(vendor: "Tonearm", info: s.info)
        let channels = Int(s.format.channelsPerFrame)
        if let mask = s.channelLayout?.waveChannelMask, mask != 0,
           mask != FLACParser.defaultLayout(channels: channels)?.waveChannelMask
        {
            c.fields.append(("WAVEFORMATEXTENSIBLE_CHANNEL_MASK", "0x" + String(mask, radix: 16, uppercase: true)))
        }
        return c
    }

    func finish(_ s: WriterState, handle: POSIXFile) throws(AudioError) {
        // The final STREAMINFO, in place of the one the header had.
        let info = try FLACWriter.streamInfo(s.magicCookie)
        _ = try FLACStreamInfo.read(info)
        try handle.write(info, at: 8)
        let points = FLACWriter.seekPoints(s, sampleRate: s.format.sampleRate)
        guard !points.isEmpty else { return }
        var table = ByteWriter()
        for p in points {
            table.write(p.sampleNumber)
            table.write(p.offset)
            table.write(p.samples)
        }
        var w = ByteWriter()
        let room = FLACWriter.reservedBytes - table.bytes.count  // bytes left of the padding's body
        FLACWriter.block(&w, .seekTable, table.bytes, isLast: room == 0)
        if room > 0 { FLACWriter.block(&w, .padding, [UInt8](repeating: 0, count: room - 4), isLast: true) }
        try handle.write(w.bytes, at: Int64(paddingOffset))
    }

    /// The seek points for the packets written: the first frame starting at or after each
    /// multiple of the spacing, the spacing widened until they fit the padding (leaving it
    /// either exactly filled or with room for a PADDING header).
    static func seekPoints(_ s: WriterState, sampleRate: Double) -> [FLACSeekPoint] {
        let perPacket = Int64(s.format.framesPerPacket)
        var frames: [(sample: Int64, offset: Int64, count: Int64)] = []
        frames.reserveCapacity(s.packetDescriptions.count)
        var sample: Int64 = 0
        for d in s.packetDescriptions {
            let n = d.variableFramesInPacket > 0 ? Int64(d.variableFramesInPacket) : perPacket
            guard n > 0 else { return [] }
            frames.append((sample, d.startOffset, n))
            sample += n
        }
        guard !frames.isEmpty, sample > 0 else { return [] }
        let capacity = reservedBytes / 18
        var spacing = max(1, Int64((seekSpacing * sampleRate).rounded()))
        while true {
            var points: [FLACSeekPoint] = []
            var next: Int64 = 0
            for f in frames where f.sample + f.count > next {
                points.append(FLACSeekPoint(sampleNumber: UInt64(f.sample), offset: UInt64(f.offset), samples: UInt16(clamping: f.count)))
                while next < f.sample + f.count { next += spacing }
            }
            let room = reservedBytes - 18 * points.count
            if points.count <= capacity && (room == 0 || room >= 4) { return points }
            spacing *= 2
        }
    }
}

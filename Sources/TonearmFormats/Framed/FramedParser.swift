import TonearmCore

/// The incremental parser shared by every sync-word format (MPEG audio, ADTS, LOAS, AC-3,
/// E-AC-3, AMR), with a ``FramedFormat`` plug-in for what differs.
///
/// The stream is: an optional file signature, optional ID3v2 tags, then frames, each with
/// a header that gives its length, possibly with junk between them, and optional ID3v1 or
/// APEv2 tags at the end.
///
/// - A frame is first accepted only when the header after it also parses and agrees (or
///   the stream ends right after it, or a trailing tag follows), so a false sync inside a
///   tag or junk is never taken. After that, frames follow one another; when a header
///   fails, the parser looks at tags and otherwise searches again with the same check.
/// - Push path (`wantsPackets`): whole frames are handed out as packets, several per step.
///   Counts come from what the stream declares (Xing), or are estimated from the bit rate
///   and the source size and flagged with `isEstimated`.
/// - Random-access path: the parser reads only the headers, skipping payloads with
///   `.seek`, and builds `packetTable`, so that counts and seek offsets are exact.
/// - A packet may span frames (E-AC-3 dependent substreams follow their independent
///   frame, ``FramedFormat/joinsFrames``): such a packet is handed out, or counted, once
///   the header after it shows that no further frame joins it. A joining frame that no
///   packet began (after junk or a seek) is not audio and is passed over.
/// - Tags at the end (ID3v1, APEv2, ID3v2) are read as the parser reaches them; on the push
///   path, after 'redy', a changed info dictionary is announced again.
public final class FramedParser<Format: FramedFormat>: PropertyStoringParser {
    public var properties: FileProperties
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []
    public private(set) var format: Format

    private enum State { case fileHeader, leadingTags, sync, frames, done }
    private var state = State.fileHeader
    /// The first frame has been read, and `key` is the stream's.
    private var configured = false
    private var key: UInt32 = 0
    /// Where the frames may begin: after the file signature and leading tags.
    private var audioStart: Int64 = 0
    private var checkedStart = false

    // What the frames gave so far.
    private var packetCount: Int64 = 0
    private var table: [PacketDescription] = []
    private var audioEnd: Int64 = 0
    private var largestPacket = 0
    private var frameBytes: Int64 = 0
    /// The data offset, once known (kept out of `properties` for the scan's inner loop).
    private var dataStart: Int64 = 0
    private var audioStarted = false
    /// Header bytes before the first packet's payload (ADTS), for seek offsets.
    private var firstPayloadOffset = 0
    /// The bit rate of every frame when they all agree, or -1 once they differ.
    private var commonBitRate = 0

    public init(format: Format, fileType: AudioFileTypeID) {
        self.format = format
        properties = FileProperties(fileType: fileType)
    }

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        switch state {
        case .fileHeader:
            guard let n = try format.parseFileHeader(input.bytes, isEndOfStream: input.isEndOfStream, properties: &properties) else {
                if input.isEndOfStream { throw AudioError(.invalidFile, "the file ends inside its signature") }
                return .needMore
            }
            state = format.hasTags ? .leadingTags : .sync
            audioStart = input.offset + Int64(n)
            return n > 0 ? .consume(n) : try step(input)

        case .leadingTags:
            if input.count < ID3v2.headerSize && !input.isEndOfStream { return .needMore }
            if let total = ID3v2.tagSize(input.bytes) {
                return try readTag(total: total, input: input) { raw in self.takeID3v2(raw, leading: true) }
            }
            state = .sync
            audioStart = input.offset
            return try syncStep(input)

        case .sync:
            return try syncStep(input)

        case .frames:
            return try framesStep(input)

        case .done:
            return input.count > 0 ? .consume(input.count) : .finished
        }
    }

    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady, configured, let start = properties.dataOffset else {
            throw AudioError(.illegalOperation, "cannot resume before the data offset is known")
        }
        guard offset >= start else { throw AudioError(.invalidPacketOffset, "byte \(offset) is before the audio data") }
        // The bytes may begin anywhere (an estimated offset): search again, with the check.
        state = .sync
    }

    // MARK: Searching

    private enum Confirmation { case accept, reject, needMore }

    /// Searches for a frame whose successor confirms it.
    private func syncStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        let b = input.bytes, n = b.count, h = format.headerSize, eos = input.isEndOfStream
        guard n > 0, let base = b.baseAddress else { return eos ? try endOfData(input) : .needMore }
        if !configured && !checkedStart && input.offset == audioStart {
            let lookahead = format.audioStartLookahead
            if n < lookahead && !eos { return .needMore }
            try format.audioBegins(UnsafeRawBufferPointer(rebasing: b[0..<min(n, lookahead)]), properties: &properties)
            checkedStart = true
            return try syncStep(input)  // the format may have changed its header size
        }
        let junkLimit = audioStart + FramedLimits.maximumLeadingJunk
        var i = 0
        while i < n {
            if !configured && input.offset + Int64(i) > junkLimit {
                throw AudioError(.invalidFile, "no frame in the first \(FramedLimits.maximumLeadingJunk) bytes of the audio")
            }
            if !configured && i + h <= n {
                switch format.learnFrameLength(b, at: i, isEndOfStream: eos) {
                case .needMore: return i > 0 ? .consume(i) : .needMore
                case .learned, .notNeeded: break
                }
            }
            if i + h <= n, let hd = format.header(at: base + i), !hd.joinsPrevious, !configured || hd.streamKey == key {
                switch confirm(hd, at: i, input) {
                case .accept:
                    if i > 0 { return .consume(i) }
                    return try accept(hd, input)
                case .needMore:
                    return i > 0 ? .consume(i) : .needMore
                case .reject:
                    break
                }
            }
            switch FramedTags.tag(in: b, at: i, isEndOfStream: eos, atFrameBoundary: false) {
            case .none: break
            case .needMore: return i > 0 ? .consume(i) : .needMore
            default:
                if i > 0 { return .consume(i) }
                return try tagStep(input)
            }
            if i + h > n && !eos { break }
            i += 1
        }
        // No frame begins before i. Keep the bytes that may begin one.
        if eos { return try endOfData(input) }
        return i > 0 ? .consume(i) : .needMore
    }

    /// Whether the frame at `i` is confirmed by what follows it.
    private func confirm(_ hd: FrameHeader, at i: Int, _ input: ParserInput) -> Confirmation {
        let b = input.bytes, n = b.count, h = format.headerSize
        let next = i + hd.length
        if next + h <= n, let after = format.header(at: b.baseAddress! + next) {
            return after.streamKey == hd.streamKey ? .accept : .reject
        }
        if next > n {
            // The frame itself is not all there: wait for it, unless the stream ends inside it.
            return input.isEndOfStream ? .reject : .needMore
        }
        switch FramedTags.tag(in: b, at: next, isEndOfStream: input.isEndOfStream, atFrameBoundary: true) {
        case .needMore: return .needMore
        case .none:
            if next + h <= n { return .reject }
            // Fewer bytes than a header after the frame: at the end, a lone last frame.
            return input.isEndOfStream ? .accept : .needMore
        default: return .accept
        }
    }

    /// A confirmed frame at the start of the input.
    private func accept(_ hd: FrameHeader, _ input: ParserInput) throws(AudioError) -> ParseStep {
        if !configured {
            // The first packet, with the frames that join it (the format counts their channels).
            guard let unit = unitExtent(at: 0, hd, input, key: hd.streamKey) else { return .needMore }
            let frame = UnsafeRawBufferPointer(rebasing: input.bytes[0..<min(unit.end, input.count)])
            let role = try format.firstFrame(hd, bytes: frame, offset: input.offset, properties: &properties)
            switch role {
            case .skip:
                return .consume(hd.length)
            case .metadata:
                configure(hd)
                return .consume(hd.length)
            case .audio:
                configure(hd)
            }
        }
        state = .frames
        return try framesStep(input)
    }

    private func configure(_ hd: FrameHeader) {
        configured = true
        key = hd.streamKey
        state = .frames
    }

    // MARK: Frames

    /// Frames one after another: packets on the push path, header reads on the scan.
    private func framesStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        let b = input.bytes, n = b.count, h = format.headerSize
        guard n > 0, let base = b.baseAddress else { return input.isEndOfStream ? try endOfData(input) : .needMore }
        let scanning = !input.wantsPackets
        // The scan may skip a payload past the buffer when the source holds all of it.
        let limit: Int64? = scanning ? input.sourceSize : nil
        let joins = format.joinsFrames
        var descriptions: [PacketDescription] = []
        var i = 0
        while i + h <= n {
            guard let first = format.header(at: base + i), first.streamKey == key else { break }
            if first.joinsPrevious {
                // A frame that joins a packet none began (after junk, a tag or a seek): not audio.
                guard i + first.length <= n else { break }
                i += first.length
                continue
            }
            // The packet: the frame, and the frames that join it.
            var hd = first
            if joins {
                guard let unit = unitExtent(at: i, first, input, key: key) else { break }
                hd.length = unit.end - i
                hd.bitRate = unit.bitRate
            }
            let end = i + hd.length
            if end > n {
                // The scan skips a payload past the buffer, unless the frames after it may join it.
                guard !joins, let limit, input.offset + Int64(end) <= limit else { break }
            }
            let start = input.offset + Int64(i)
            if !audioStarted { startAudio(at: start, input: input, first: hd) }
            take(hd, at: start, scanning: scanning)
            if !scanning {
                descriptions.append(PacketDescription(startOffset: Int64(i + hd.payloadOffset),
                                                      dataByteSize: UInt32(hd.length - hd.payloadOffset)))
                if descriptions.count >= 4096 { i = end; break }
            }
            i = end
        }
        if i > 0 {
            if scanning { return .seek(to: input.offset + Int64(i)) }
            if descriptions.isEmpty { return .consume(i) }
            return .packets(byteCount: i, packetCount: descriptions.count, descriptions: descriptions)
        }
        // Nothing whole at the start of the input.
        let eos = input.isEndOfStream
        if n < h { return eos ? try endOfData(input) : .needMore }
        if format.header(at: base)?.streamKey == key {
            // A frame that is not all there (or, on the scan, runs past the end of the source).
            return eos || scanning && limit != nil && !joins ? try endOfData(input) : .needMore
        }
        switch FramedTags.tag(in: b, at: 0, isEndOfStream: eos, atFrameBoundary: true) {
        case .needMore: return .needMore
        case .none:
            state = .sync
            return try syncStep(input)
        default:
            return try tagStep(input)
        }
    }

    /// Where the packet that begins with frame `hd` at `i` ends: after the frames that join
    /// it, and the sum of their bit rates. Nil while the bytes do not yet show the header
    /// after it; at the end of the stream, a joining frame cut short is left out.
    private func unitExtent(at i: Int, _ hd: FrameHeader, _ input: ParserInput, key: UInt32) -> (end: Int, bitRate: Int)? {
        var end = i + hd.length, bitRate = hd.bitRate
        guard format.joinsFrames else { return (end, bitRate) }
        let b = input.bytes, n = b.count, h = format.headerSize, eos = input.isEndOfStream
        // At most 8 dependent substreams follow an independent one (A/52 Annex E §E.1.3.1.2);
        // the bound keeps a damaged stream from joining without end.
        for _ in 0..<16 {
            if end > n { return eos ? (end, bitRate) : nil }
            guard end + h <= n else { return eos ? (end, bitRate) : nil }
            guard let next = format.header(at: b.baseAddress! + end), next.joinsPrevious, next.streamKey == key else {
                return (end, bitRate)
            }
            guard end + next.length <= n else { return eos ? (end, bitRate) : nil }
            end += next.length
            bitRate += next.bitRate
        }
        return (end, bitRate)
    }

    /// Counts a frame of audio.
    private func take(_ hd: FrameHeader, at start: Int64, scanning: Bool) {
        let size = hd.length - hd.payloadOffset
        packetCount += 1
        frameBytes += Int64(hd.length)
        audioEnd = start + Int64(hd.length)
        if size > largestPacket { largestPacket = size }
        if commonBitRate == 0 { commonBitRate = hd.bitRate } else if commonBitRate != hd.bitRate { commonBitRate = -1 }
        if scanning {
            table.append(PacketDescription(startOffset: start + Int64(hd.payloadOffset) - dataStart, dataByteSize: UInt32(size)))
        }
    }

    /// The first audio frame: the data offset is known. On the push path the parser is
    /// ready now, with what the stream declares or an estimate.
    private func startAudio(at start: Int64, input: ParserInput, first hd: FrameHeader) {
        properties.dataOffset = start
        dataStart = start
        audioStarted = true
        firstPayloadOffset = hd.payloadOffset
        guard input.wantsPackets else {
            if let size = input.sourceSize, hd.length > 0 {
                table.reserveCapacity(Int(min(Int64(1) << 22, max(0, size - start) / Int64(hd.length) + 16)))
            }
            return
        }
        var p = properties
        let declared = format.declared
        let fpp = Double(p.dataFormat?.framesPerPacket ?? 0), rate = p.dataFormat?.sampleRate ?? 0
        if let packets = declared.packets {
            p.audioDataPacketCount = packets
            p.audioDataByteCount = declared.bytes
            if declared.constantBitRate && hd.bitRate > 0 {
                p.bitRate = UInt32(clamping: hd.bitRate)
            } else if let bytes = declared.bytes, packets > 0, fpp > 0, rate > 0 {
                p.bitRate = Self.bitRate(bytes: bytes, frames: Double(packets) * fpp, rate: rate)
            }
        } else if let size = input.sourceSize, hd.bitRate > 0, fpp > 0, rate > 0 {
            // Estimated from the first frame's bit rate and the size of the source.
            let bytes = max(0, size - start)
            let bytesPerPacket = Double(hd.bitRate) / 8 * fpp / rate
            p.audioDataByteCount = bytes
            p.audioDataPacketCount = Int64(saturating: (Double(bytes) / bytesPerPacket).rounded())
            p.isEstimated = true
        }
        if p.bitRate == nil && hd.bitRate > 0 { p.bitRate = UInt32(clamping: hd.bitRate) }
        p.maximumPacketSize = format.packetSizeUpperBound
        if let packets = p.audioDataPacketCount { p.packetTableInfo = gaplessInfo(packets: packets, properties: p) }
        properties = p
        becomeReady(announcing: format.announcementOrder)
    }

    /// The end of the data: the scan's totals, or an error when no frame was found.
    private func endOfData(_ input: ParserInput) throws(AudioError) -> ParseStep {
        state = .done
        guard configured else {
            throw AudioError(.invalidFile, "no \(properties.fileType) frame was found")
        }
        guard let start = properties.dataOffset else {
            throw AudioError(.invalidFile, "the stream holds no audio frames")
        }
        if !isReady {
            var p = properties
            p.packetTable = table
            p.audioDataPacketCount = packetCount
            p.audioDataByteCount = audioEnd - start
            p.maximumPacketSize = UInt32(largestPacket)
            let fpp = Double(p.dataFormat?.framesPerPacket ?? 0), rate = p.dataFormat?.sampleRate ?? 0
            if commonBitRate > 0 {
                p.bitRate = UInt32(clamping: commonBitRate)
            } else if packetCount > 0, fpp > 0, rate > 0 {
                p.bitRate = Self.bitRate(bytes: frameBytes, frames: Double(packetCount) * fpp, rate: rate)
            }
            p.packetTableInfo = gaplessInfo(packets: packetCount, properties: p)
            p.isEstimated = false
            properties = p
            table = []
            becomeReady(announcing: format.announcementOrder)
        }
        return input.count > 0 ? .consume(input.count) : .finished
    }

    private func gaplessInfo(packets: Int64, properties p: FileProperties) -> PacketTableInfo? {
        guard let (priming, remainder) = format.gapless, let fpp = p.framesPerPacket else { return nil }
        let valid = packets * fpp - priming - remainder
        guard valid >= 0, priming <= Int64(Int32.max), remainder <= Int64(Int32.max) else { return nil }
        return PacketTableInfo(numberValidFrames: valid, primingFrames: Int32(priming), remainderFrames: Int32(remainder))
    }

    private static func bitRate(bytes: Int64, frames: Double, rate: Double) -> UInt32? {
        guard frames > 0, rate > 0 else { return nil }
        let bits = (Double(bytes) * 8 * rate / frames).rounded()
        return bits.isFinite && bits >= 0 && bits < Double(UInt32.max) ? UInt32(bits) : nil
    }

    // MARK: Tags

    /// A tag at the start of the input, in the frames or at the end.
    private func tagStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        let b = input.bytes
        switch FramedTags.tag(in: b, at: 0, isEndOfStream: input.isEndOfStream, atFrameBoundary: true) {
        case .none, .needMore:
            return .needMore
        case .id3v1:
            guard b.count >= ID3v1.size else { return input.isEndOfStream ? try endOfData(input) : .needMore }
            announcingInfo { ID3v1.read(UnsafeRawBufferPointer(rebasing: b[0..<ID3v1.size]), into: &properties) }
            return .consume(ID3v1.size)
        case .id3v2(let total):
            return try readTag(total: total, input: input) { raw in announcingInfo { self.takeID3v2(raw, leading: false) } }
        case .apeHeader(let total):
            return try readTag(total: total, input: input) { raw in announcingInfo { APETag.read(raw, into: &self.properties) } }
        case .apeFooter(let size):
            // The items came before the footer and are gone on a push stream; fetch them when possible.
            if input.canSeek, let fetch = input.fetch, size > 32, size <= FramedLimits.maximumTagSize,
               input.offset + 32 - size >= 0
            {
                let start = input.offset + 32 - size
                if let items = try? fetch(start, Int(size)), items.count == Int(size) {
                    announcingInfo {
                        items.withUnsafeBytes { APETag.readItems($0, footer: UnsafeRawBufferPointer(rebasing: b[0..<32]), into: &properties) }
                    }
                }
            }
            return .consume(32)
        }
    }

    /// Reads a tag; when the parser is ready already (a tag at the end of a push stream) and
    /// the info dictionary changed, announces it again, as the random-access path reports
    /// the tags at the end with the rest.
    private func announcingInfo(_ read: () -> Void) {
        let before = properties.info
        read()
        if isReady && properties.info != before { pendingNotifications.append(.infoDictionary) }
    }

    private func takeID3v2(_ raw: UnsafeRawBufferPointer, leading: Bool) {
        if properties.id3Tag == nil { properties.id3Tag = Array(raw) }
        ID3v2.read(raw, into: &properties, overwrite: leading)
    }

    /// Reads a tag of `total` bytes at the start of the input: in place when it is there,
    /// fetched on the random-access path, buffered on a push stream up to
    /// ``FramedLimits/maximumTagSize``, and skipped with `.seek` when larger.
    private func readTag(total: Int64, input: ParserInput, parse: (UnsafeRawBufferPointer) -> Void) throws(AudioError) -> ParseStep {
        // Too large to read: skipped whatever is at hand, so that every path agrees.
        guard total <= FramedLimits.maximumTagSize else {
            return total <= Int64(input.count) ? .consume(Int(total)) : .seek(to: input.offset + total)
        }
        if total <= Int64(input.count) {
            parse(UnsafeRawBufferPointer(rebasing: input.bytes[0..<Int(total)]))
            return .consume(Int(total))
        }
        if input.canSeek, let fetch = input.fetch {
            let bytes = try fetch(input.offset, Int(total))
            if bytes.count == Int(total) { bytes.withUnsafeBytes { parse($0) } }
            return .seek(to: input.offset + total)
        }
        if !input.isEndOfStream { return .needMore }
        // Cut short by the end of the stream.
        return .consume(input.count)
    }

    // MARK: Seeking

    /// The byte offset of a packet relative to the data offset: exact from the scanned
    /// table (the frame's first byte, header included), else estimated by the format
    /// (``FramedFormat/estimatedOffset(ofPacket:)``: for MPEG audio of constant bit rate a
    /// few bytes before the packet named, so that a stream resumed there resynchronises to
    /// it; from a Xing table of contents, within the table's resolution), else from the
    /// byte and packet counts or the bit rate. A push stream resumed at an estimate
    /// (`.discontinuity`) hands out packets from the first whole frame at or after it.
    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        let p = properties
        if let table = p.packetTable {
            if packet < table.count { return (table[Int(packet)].startOffset - Int64(firstPayloadOffset), false) }
            if packet == table.count { return (audioEnd - dataStart, false) }
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(table.count))")
        }
        guard isReady else { throw AudioError(.valueUnknown, "the packet size is not known yet") }
        if let count = p.audioDataPacketCount, packet > count, !p.isEstimated {
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(count))")
        }
        if let offset = format.estimatedOffset(ofPacket: packet) { return (offset, true) }
        var bytesPerPacket: Double?
        if let bytes = p.audioDataByteCount, let packets = p.audioDataPacketCount, packets > 0 {
            bytesPerPacket = Double(bytes) / Double(packets)
        } else if let bits = p.bitRate, bits > 0, let f = p.dataFormat, f.sampleRate > 0, f.framesPerPacket > 0 {
            bytesPerPacket = Double(bits) / 8 * Double(f.framesPerPacket) / f.sampleRate
        }
        guard let bytesPerPacket else { throw AudioError(.valueUnknown, "the packet size is not known") }
        let offset = (bytesPerPacket * Double(packet)).rounded(.down)
        guard offset.isFinite, offset < 0x1p62 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is out of range") }
        return (Int64(offset), true)
    }
}

/// Bounds of the framed parser.
public enum FramedLimits {
    /// The largest tag read into memory (16 MiB); larger tags are skipped.
    public static let maximumTagSize: Int64 = 16 << 20
    /// Bytes searched for the first frame before the data is refused (1 MiB).
    public static let maximumLeadingJunk: Int64 = 1 << 20
}

/// Recognises the tags that may sit among or after the frames.
enum FramedTags {
    enum Found: Equatable {
        case none, needMore
        /// 'TAG', 128 bytes.
        case id3v1
        /// An ID3v2 tag of this many bytes.
        case id3v2(total: Int64)
        /// An APEv2 tag that begins with its header: this many bytes in all.
        case apeHeader(total: Int64)
        /// An APE tag's footer (the items before it); `size` counts items and footer.
        case apeFooter(size: Int64)
    }

    static let id3v1Magic: [UInt8] = Array("TAG".utf8)
    static let id3v2Magic: [UInt8] = Array("ID3".utf8)
    static let apeMagic: [UInt8] = Array("APETAGEX".utf8)

    /// The tag at byte `i`. An ID3v1 tag is taken at a frame boundary, and elsewhere only
    /// when it ends the stream; ID3v2 and APE tags are recognised by their headers.
    static func tag(in b: UnsafeRawBufferPointer, at i: Int, isEndOfStream eos: Bool, atFrameBoundary: Bool) -> Found {
        let left = b.count - i
        guard left > 0 else { return eos ? .none : .needMore }
        /// true, false, or nil while too few bytes are there to tell.
        func has(_ magic: [UInt8]) -> Bool? {
            let k = min(left, magic.count)
            for j in 0..<k where b[i + j] != magic[j] { return false }
            return k == magic.count ? true : (eos ? false : nil)
        }
        switch b[i] {
        case 0x54:  // T
            guard let yes = has(id3v1Magic) else { return .needMore }
            guard yes else { return .none }
            if atFrameBoundary { return .id3v1 }
            if left > ID3v1.size { return .none }
            if left == ID3v1.size && eos { return .id3v1 }
            return eos ? .none : .needMore
        case 0x49:  // I
            guard let yes = has(id3v2Magic) else { return .needMore }
            guard yes else { return .none }
            if left < ID3v2.headerSize { return eos ? .none : .needMore }
            guard let total = ID3v2.tagSize(UnsafeRawBufferPointer(rebasing: b[i..<i + ID3v2.headerSize])) else { return .none }
            return .id3v2(total: total)
        case 0x41:  // A
            guard let yes = has(apeMagic) else { return .needMore }
            guard yes else { return .none }
            if left < APETag.headerSize { return eos ? .none : .needMore }
            guard let h = APETag.Header(UnsafeRawBufferPointer(rebasing: b[i..<i + APETag.headerSize])) else { return .none }
            return h.isHeader ? .apeHeader(total: h.size + Int64(APETag.headerSize)) : .apeFooter(size: h.size)
        default:
            return .none
        }
    }
}

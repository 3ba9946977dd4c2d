import TonearmCore

/// The FLAC parser (RFC 9639): optional ID3v2 tags, the `fLaC` marker, metadata blocks,
/// then frames.
///
/// Frames carry no length. One ends where the next valid header begins (its CRC-8 right
/// and its fields consistent with the stream) *and* the CRC-16 of the bytes so far is 0;
/// the last one runs to the end of the stream. On the push path each frame becomes a
/// packet as soon as the next header confirms it. On the random-access path (AudioFile)
/// the parser scans every frame before it is ready, so the packet table, the counts and
/// seeking are exact. A stream without the marker (a multicast capture, which may begin
/// with junk) is read from its first confirmed frame.
public final class FLACParser: PropertyStoringParser {
    public var properties = FileProperties(fileType: .flac)
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []

    /// STREAMINFO, once read.
    public private(set) var streamInfo: FLACStreamInfo?
    /// The SEEKTABLE's points, placeholders left out.
    /// The byte-range fetcher of the latest step, for exact seeks on a stream.
    private var fetch: ByteRangeFetcher?
    public private(set) var seekTable: [FLACSeekPoint] = []
    /// The CUESHEET, when the file has one.
    public private(set) var cueSheet: FLACCueSheet?
    /// Pictures are few; their bytes are large, so only the chosen one is kept, as the artwork.
    public private(set) var pictureTypes: [UInt32] = []

    /// ID3v2 tags up to this size are kept as the ID3Tag property; larger ones are skipped.
    public static let maximumKeptID3TagSize = 1 << 20
    /// The order of announcements before 'redy'. Apple's FLAC parser is seen to announce
    /// MagicCookieData, InfoDictionary, DataOffset, MaximumPacketSize; the others sit
    /// where Apple's MP3 parser puts them (counts first, then the formats, then the offset).
    public static let announcementOrder: [AudioFilePropertyID] = [
        .magicCookieData, .infoDictionary, .bitRate, .audioDataByteCount, .audioDataPacketCount, .packetTableInfo,
        .fileFormat, .dataFormat, .channelLayout, .dataOffset, .maximumPacketSize,
    ]

    private enum State {
        /// ID3v2 tags, then the marker, or (without the marker) the first frame.
        case marker
        case blockHeader
        case readBlock(type: UInt8, length: Int, isLast: Bool)
        /// Dropping bytes up to `end`, then going on in `next`.
        case skip(end: Int64, next: AfterSkip)
        /// Right after the metadata: a frame header is expected here.
        case firstFrame
        case frames
        case done
    }
    private enum AfterSkip { case marker, blockHeader, firstFrame }

    /// Where the frame scan stands.
    private enum Sync {
        /// Looking for a frame header at or after `from`.
        case searching(from: Int64)
        /// Inside the frame that begins at `start`; the CRC-16 covers the bytes up to
        /// `crcEnd`, and candidates before `searched` were no end.
        case inFrame(start: Int64, header: FLACFrameHeader, crcEnd: Int64, crc: UInt16, searched: Int64)
    }

    private var state = State.marker
    private var sync = Sync.searching(from: 0)
    private var sawMarker = false
    private var blockCount = 0
    /// The first byte after the metadata.
    private var metadataEnd: Int64?
    /// The blocking strategy of the stream, from its first frame.
    private var variableStrategy: Bool?
    /// Frames and samples seen from the start of the audio (the push path's own count).
    private var framesSeen: Int64 = 0
    private var samplesSeen: Int64 = 0
    private var largestFrame = 0
    /// False after a seek: the counts then miss the frames that were skipped.
    private var countedFromStart = true
    private var lastFrameEnd: Int64?
    private var scanTable: [PacketDescription] = []
    private var channelMaskFromTags: UInt32?

    public init() {}

    // MARK: Stepping

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if let f = input.fetch { fetch = f }
        switch state {
        case .marker: return try stepMarker(input)
        case .blockHeader: return try stepBlockHeader(input)
        case .readBlock(let type, let length, let isLast):
            guard let r = input.reader(length) else {
                if input.isEndOfStream {
                    throw AudioError(.invalidFile, "the file ends inside its \(FLACBlockType.name(type)) metadata block")
                }
                return .needMore
            }
            try readBlock(type: type, body: r)
            state = isLast ? .firstFrame : .blockHeader
            return .consume(length)
        case .skip(let end, let next):
            let left = end - input.offset
            if left <= 0 {
                state = after(next)
                return .consume(0)
            }
            if left <= Int64(input.count) {
                state = after(next)
                return .consume(Int(left))
            }
            if input.isEndOfStream {
                throw AudioError(.invalidFile, "the file ends \(left - Int64(input.count)) bytes before the end of a part it declares")
            }
            if input.canSeek { return .seek(to: end) }
            return input.count > 0 ? .consume(input.count) : .needMore
        case .firstFrame: return try stepFirstFrame(input)
        case .frames: return try stepFrames(input)
        case .done:
            return .finished
        }
    }

    private func after(_ next: AfterSkip) -> State {
        switch next {
        case .marker: .marker
        case .blockHeader: .blockHeader
        case .firstFrame: .firstFrame
        }
    }

    /// Skips `count` bytes from the start of `input`, then goes on in `next`.
    private func skip(_ count: Int64, _ input: ParserInput, then next: AfterSkip) throws(AudioError) -> ParseStep {
        let end = input.offset + count
        if let size = input.sourceSize, end > size {
            throw AudioError(.invalidFile, "a part of \(count) bytes at byte \(input.offset) runs past the end of the file (\(size) bytes)")
        }
        state = .skip(end: end, next: next)
        return try step(input)
    }

    private func stepMarker(_ input: ParserInput) throws(AudioError) -> ParseStep {
        guard input.count >= 4 else {
            if input.isEndOfStream {
                throw AudioError(.invalidFile, "the stream ends after \(input.offset + Int64(input.count)) bytes, before any FLAC data")
            }
            return .needMore
        }
        let b = input.bytes
        if b[0] == 0x66 && b[1] == 0x4C && b[2] == 0x61 && b[3] == 0x43 {  // fLaC
            sawMarker = true
            state = .blockHeader
            return .consume(4)
        }
        if b[0] == 0x49 && b[1] == 0x44 && b[2] == 0x33 {  // ID3
            guard input.count >= 10 else {
                if input.isEndOfStream { throw AudioError(.invalidFile, "the file ends inside an ID3v2 header") }
                return .needMore
            }
            let size = (6..<10).reduce(0) { $0 << 7 | Int(b[$1] & 0x7F) }
            let total = 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)  // a footer repeats the header
            if total <= FLACParser.maximumKeptID3TagSize {
                guard let r = input.reader(total) else {
                    if input.isEndOfStream { throw AudioError(.invalidFile, "the file ends inside its ID3v2 tag") }
                    return .needMore
                }
                if properties.id3Tag == nil { properties.id3Tag = r.bytes }
                return .consume(total)
            }
            return try skip(Int64(total), input, then: .marker)
        }
        // No marker: a bare stream of frames, perhaps after some junk.
        sync = .searching(from: input.offset)
        state = .frames
        return .consume(0)
    }

    private func stepBlockHeader(_ input: ParserInput) throws(AudioError) -> ParseStep {
        guard let r = input.reader(4) else {
            if input.isEndOfStream { throw AudioError(.invalidFile, "the file ends inside its metadata (block \(blockCount + 1))") }
            return .needMore
        }
        let flags = r.bytes[0]
        let type = flags & 0x7F, isLast = flags & 0x80 != 0
        let length = Int(r.bytes[1]) << 16 | Int(r.bytes[2]) << 8 | Int(r.bytes[3])
        blockCount += 1
        if type == FLACBlockType.forbidden {
            throw AudioError(.invalidFile, "metadata block \(blockCount) at byte \(input.offset) has the forbidden type 127")
        }
        if blockCount == 1 && type != FLACBlockType.streamInfo.rawValue {
            throw AudioError(.invalidFile, "the first metadata block is \(FLACBlockType.name(type)); FLAC requires STREAMINFO first")
        }
        if let size = input.sourceSize, input.offset + 4 + Int64(length) > size {
            throw AudioError(.invalidFile, "metadata block \(blockCount) (\(FLACBlockType.name(type)), \(length) bytes at byte \(input.offset)) runs past the end of the file (\(size) bytes)")
        }
        let read: Bool
        switch FLACBlockType(rawValue: type) {
        case .streamInfo: read = blockCount == 1  // a second STREAMINFO is ignored
        case .seekTable, .vorbisComment, .cueSheet, .picture: read = true
        default: read = false
        }
        if read {
            state = .readBlock(type: type, length: length, isLast: isLast)
            return .consume(4)
        }
        state = .skip(end: input.offset + 4 + Int64(length), next: isLast ? .firstFrame : .blockHeader)
        return .consume(4)
    }

    /// Takes in a metadata block that is read (the others are skipped).
    private func readBlock(type: UInt8, body: ByteReader) throws(AudioError) {
        var r = body
        switch FLACBlockType(rawValue: type) {
        case .streamInfo:
            let info = try FLACStreamInfo.read(r.bytes)
            streamInfo = info
            properties.sourceBitDepth = Int32(info.bitsPerSample)
        case .seekTable:
            seekTable = FLACSeekPoint.readTable(&r)
        case .vorbisComment:
            // A malformed comment block (a count larger than its fields, say) is dropped:
            // the audio is still good.
            guard let comment = try? VorbisComment.read(&r) else { return }
            for (key, value) in comment.infoDictionary {
                if let old = properties.info[key] { properties.info[key] = old + "; " + value } else { properties.info[key] = value }
            }
            for (name, value) in comment.fields where name.uppercased() == "WAVEFORMATEXTENSIBLE_CHANNEL_MASK" {
                // The speaker positions become the channel layout, not text.
                channelMaskFromTags = FLACParser.parseMask(value)
                properties.info[name.lowercased()] = nil
            }
            if properties.albumArtwork == nil {
                for text in comment.pictureBlocks {
                    guard let raw = decodeBase64(text) else { continue }
                    var pr = ByteReader(raw)
                    if let picture = try? FLACPicture.read(&pr) { take(picture) }
                }
            }
        case .picture:
            guard let picture = try? FLACPicture.read(&r) else { return }
            take(picture)
        case .cueSheet:
            cueSheet = FLACCueSheet.read(&r)
        default:
            break
        }
    }

    /// Keeps a picture as the artwork when there is none yet, or when it is the first front cover.
    private func take(_ picture: FLACPicture) {
        let frontCover: UInt32 = 3
        pictureTypes.append(picture.type)
        if properties.albumArtwork == nil || picture.type == frontCover && !pictureTypes.dropLast().contains(frontCover) {
            properties.albumArtwork = picture.data
        }
    }

    static func parseMask(_ text: String) -> UInt32? {
        var s = Substring(text.trimmingSpaces())
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2); return UInt32(s, radix: 16) }
        return UInt32(s)
    }

    // MARK: The first frame

    private func stepFirstFrame(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if metadataEnd == nil { metadataEnd = input.offset }
        guard let info = streamInfo else {
            // Unreachable: the first block is STREAMINFO or the file was refused.
            throw AudioError(.invalidFile, "the metadata has no STREAMINFO block")
        }
        let parsed = input.count == 0 ? .needMore
            : FLACFrameHeader.parse(input.bytes.baseAddress!, count: input.count)
        switch parsed {
        case .needMore where !input.isEndOfStream:
            return .needMore
        case .header(let h):
            // The first frame must agree with STREAMINFO; a stream may change its format
            // later, but not from the start (the corpus' "faulty" files 01, 03 and 04).
            if h.blockSize > info.maximumBlockSize {
                throw AudioError(.invalidFile, "the first frame has \(h.blockSize) samples, more than STREAMINFO's maximum block size \(info.maximumBlockSize)")
            }
            if h.channels != info.channels {
                throw AudioError(.invalidFile, "the first frame has \(h.channels) channels; STREAMINFO says \(info.channels)")
            }
            if h.bitsPerSample != 0 && h.bitsPerSample != info.bitsPerSample {
                throw AudioError(.invalidFile, "the first frame has \(h.bitsPerSample) bits per sample; STREAMINFO says \(info.bitsPerSample)")
            }
            if h.sampleRate != 0 && h.sampleRate != info.sampleRate {
                throw AudioError(.invalidFile, "the first frame is at \(h.sampleRate) Hz; STREAMINFO says \(info.sampleRate) Hz")
            }
            state = .frames
            variableStrategy = h.isVariableBlockSize
            beginFrame(at: input.offset, header: h, input: input)
            setUpAudio(dataOffset: input.offset, first: h)
            if input.wantsPackets { becomeReady(announcing: FLACParser.announcementOrder) }
            return .consume(0)
        default:
            // Something else follows the metadata: look for the first frame.
            state = .frames
            sync = .searching(from: input.offset)
            return .consume(0)
        }
    }

    /// Fills in what is known before the frames are counted: the format, cookie, layout,
    /// info and the STREAMINFO-based estimates.
    private func setUpAudio(dataOffset: Int64, first: FLACFrameHeader) {
        let info: FLACStreamInfo
        if let s = streamInfo {
            info = s
        } else {
            // A bare stream: the first frame's header describes it. Its block sizes are
            // unknown, so it counts as a variable block size stream.
            info = FLACStreamInfo(minimumBlockSize: 16, maximumBlockSize: 65535, sampleRate: first.sampleRate,
                                  channels: first.channels, bitsPerSample: first.bitsPerSample)
            streamInfo = info
            properties.sourceBitDepth = Int32(info.bitsPerSample)
        }
        properties.dataOffset = dataOffset
        properties.dataFormat = StreamDescription(
            sampleRate: Double(info.sampleRate), formatID: .flac, formatFlags: AudioFormatFlags(rawValue: info.appleFormatFlags),
            bytesPerPacket: 0, framesPerPacket: info.isFixedBlockSize ? UInt32(info.maximumBlockSize) : 0, bytesPerFrame: 0,
            channelsPerFrame: UInt32(info.channels), bitsPerChannel: UInt32(info.bitsPerSample))
        properties.dataFormatName = "FLAC"
        properties.magicCookie = info.magicCookie
        properties.channelLayout = channelMaskFromTags.flatMap { ChannelLayout(waveChannelMask: $0) }
            ?? FLACParser.defaultLayout(channels: info.channels)
        if let cue = cueSheet {
            properties.chapters = cue.chapters(sampleRate: info.sampleRate)
            properties.markers = cue.markers
        }
        // What STREAMINFO promises, until the frames say otherwise.
        if info.totalSamples > 0 {
            var remainder: Int64 = 0
            if info.isFixedBlockSize {
                let b = Int64(info.maximumBlockSize)
                remainder = (info.totalSamples + b - 1) / b * b - info.totalSamples
            }
            properties.packetTableInfo = PacketTableInfo(numberValidFrames: info.totalSamples, remainderFrames: Int32(remainder))
        }
        properties.maximumPacketSize = UInt32(info.maximumFrameSize > 0 ? info.maximumFrameSize
            : FLACFrameHeader.sizeBound(blockSize: info.maximumBlockSize, channels: info.channels, bitsPerSample: info.bitsPerSample))
    }

    /// FLAC's channel orders (RFC 9639, 9.1.3) are WAVE's with these masks.
    static func defaultLayout(channels: Int) -> ChannelLayout? {
        switch channels {
        case 1: ChannelLayout(tag: .mono)
        case 2: ChannelLayout(tag: .stereo)
        case 3: ChannelLayout(waveChannelMask: 0x7)  // L R C
        case 4: ChannelLayout(waveChannelMask: 0x33)  // L R Ls Rs
        case 5: ChannelLayout(waveChannelMask: 0x37)  // L R C Ls Rs
        case 6: ChannelLayout(waveChannelMask: 0x3F)  // L R C LFE Ls Rs
        case 7: ChannelLayout(waveChannelMask: 0x70F)  // L R C LFE Cs Lsd Rsd
        case 8: ChannelLayout(waveChannelMask: 0x63F)  // L R C LFE Ls Rs Lsd Rsd
        default: nil
        }
    }

    // MARK: Frames

    private func beginFrame(at start: Int64, header: FLACFrameHeader, input: ParserInput) {
        let rel = Int(start - input.offset)
        let crc = FLACCRC.crc16(0, input.bytes.baseAddress! + rel, count: header.length)
        let end = start + Int64(header.length)
        sync = .inFrame(start: start, header: header, crcEnd: end, crc: crc, searched: end)
    }

    /// True when a header whose CRC-8 is right can belong to this stream. A stream may
    /// change its rate, channels and bit depth between frames (the corpus' "uncommon"
    /// files do), but not its blocking strategy, and no block may exceed STREAMINFO's maximum.
    private func fits(_ h: FLACFrameHeader) -> Bool {
        if let v = variableStrategy, v != h.isVariableBlockSize { return false }
        if let info = streamInfo, sawMarker {
            return h.blockSize <= info.maximumBlockSize
        }
        // Without STREAMINFO the header must say everything itself.
        if let info = streamInfo, h.blockSize > info.maximumBlockSize { return false }
        return h.sampleRate != 0 && h.bitsPerSample != 0
    }

    private func bound(_ h: FLACFrameHeader) -> Int {
        let bits = h.bitsPerSample != 0 ? h.bitsPerSample : streamInfo?.bitsPerSample ?? 32
        return max(FLACFrameHeader.sizeBound(blockSize: h.blockSize, channels: h.channels, bitsPerSample: bits),
                   streamInfo?.maximumFrameSize ?? 0)
    }

    private func stepFrames(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if !input.wantsPackets, let fetch = input.fetch, let size = input.sourceSize {
            return try scanToEnd(from: input.offset, size: size, fetch: fetch)
        }
        switch sync {
        case .searching(let from):
            return try search(input, from: from)
        case .inFrame(let start, let header, let crcEnd, let crc, let searched):
            return try scanFrames(input, start: start, header: header, crcEnd: crcEnd, crc: crc, searched: searched)
        }
    }

    /// Bytes read at a time by ``scanToEnd(from:size:fetch:)``: small enough that a piece
    /// stays in the CPU's cache between its read and its scan (pieces of 4 MiB cost 15%
    /// more), and doubled for a frame that does not fit.
    static let scanChunkSize = 1 << 18

    /// The random-access path's frame scan: reads the rest of the file itself, in pieces
    /// through the source's byte range reader rather than through the driver's buffer (a
    /// copy less), and steps through each piece as the driver would.
    private func scanToEnd(from start: Int64, size: Int64, fetch: ByteRangeFetcher) throws(AudioError) -> ParseStep {
        var at = start
        var chunkSize = FLACParser.scanChunkSize
        var stalls = 0
        while true {
            let want = Int(min(Int64(chunkSize), max(0, size - at)))
            let chunk = try fetch(at, want)
            let isEnd = chunk.count < want || at + Int64(chunk.count) >= size
            var used = 0
            var needMore = false
            while !needMore {
                let step: ParseStep = try chunk.withBytes { raw throws(AudioError) in
                    let input = ParserInput(bytes: UnsafeRawBufferPointer(rebasing: raw[used...]), offset: at + Int64(used),
                                            isEndOfStream: isEnd, canSeek: true, wantsPackets: false, sourceSize: size)
                    return try self.step(input)  // without a fetcher, so it steps here
                }
                switch step {
                case .consume(let n):
                    stalls = n == 0 ? stalls + 1 : 0
                    if stalls > 64 { throw AudioError.malformed("the FLAC frame scan made no progress at byte \(at + Int64(used))") }
                    used += n
                case .needMore:
                    if isEnd { return .finished }
                    needMore = true
                case .finished:
                    return .finished
                case .packets, .ownedPackets, .seek:
                    throw AudioError(.unspecified, "the FLAC frame scan went astray at byte \(at + Int64(used))")
                }
            }
            // A frame (or a stretch of junk) longer than what is left of the piece: read on
            // from where the scan stands, with room for the longest frame.
            if used == 0 && chunk.count == want { chunkSize *= 2 } else { chunkSize = FLACParser.scanChunkSize }
            at += Int64(used)
        }
    }

    /// Looks for a header at or after `from`; the bytes before it are dropped.
    private func search(_ input: ParserInput, from: Int64) throws(AudioError) -> ParseStep {
        let base = input.bytes.baseAddress
        var i = Int(max(0, from - input.offset))
        let count = input.count
        while i < count, let p = base {
            i = FLACFrameScanner.findSync(p, from: i, to: count, count: count)
            guard i < count else { break }
            switch FLACFrameHeader.parse(p + i, count: count - i) {
            case .header(let h) where fits(h):
                beginFrame(at: input.offset + Int64(i), header: h, input: input)
                return i > 0 ? .consume(i) : try step(input)
            case .needMore where !input.isEndOfStream:
                sync = .searching(from: input.offset + Int64(i))
                return i > 0 ? .consume(i) : .needMore
            default:
                i += 1
            }
        }
        if input.isEndOfStream {
            return try endOfAudio(input, consumed: count)
        }
        sync = .searching(from: input.offset + Int64(count))
        return count > 0 ? .consume(count) : .needMore
    }

    /// Hands out (or records) every frame that ends in the available bytes.
    private func scanFrames(_ input: ParserInput, start: Int64, header: FLACFrameHeader, crcEnd: Int64,
                            crc: UInt16, searched: Int64) throws(AudioError) -> ParseStep
    {
        precondition(start == input.offset, "a frame scan resumes at its frame's start")
        guard let p = input.bytes.baseAddress else {
            if input.isEndOfStream { return try endOfAudio(input, consumed: 0) }
            return .needMore
        }
        let count = input.count
        let wantsPackets = input.wantsPackets
        let fixedFrames = properties.dataFormat.map { $0.framesPerPacket > 0 } ?? false
        var descriptions: [PacketDescription] = []
        var s = 0
        var h = header
        var searched = Int(searched - input.offset)
        var crcEnd = Int(crcEnd - input.offset)
        var c = crc
        var finished = false
        var corrupt = false
        FLACCRC.crc16Tables.withUnsafeBufferPointer { t in FLACCRC.laneShift.withUnsafeBufferPointer { sh in
            let tables = t.baseAddress!, shift = sh.baseAddress!
            while true {
                let limit = s + bound(h)
                let result = FLACFrameScanner.scan(p, count: count, searched: &searched, crcEnd: &crcEnd, crc: &c,
                                                   minimumEnd: s + h.length + 3, limit: limit,
                                                   isEnd: input.isEndOfStream, tables: tables, shift: shift,
                                                   accept: fits)
                switch result {
                case .end(let end, let next):
                    record(start: s, size: end - s, header: h, input: input, fixedFrames: fixedFrames,
                           wantsPackets: wantsPackets, descriptions: &descriptions)
                    s = end
                    h = next
                    c = FLACCRC.update(0, p + end, next.length, tables, shift)
                    crcEnd = end + next.length
                    searched = crcEnd
                    if wantsPackets && descriptions.count >= 4096 { return }
                case .exhausted:
                    if searched > limit {
                        corrupt = true
                    } else if input.isEndOfStream {
                        c = FLACCRC.update(c, p + crcEnd, count - crcEnd, tables, shift)
                        crcEnd = count
                        if let size = lastFrameSize(p + s, count: count - s, header: h, crc: c, tables: tables) {
                            record(start: s, size: size, header: h, input: input, fixedFrames: fixedFrames,
                                   wantsPackets: wantsPackets, descriptions: &descriptions)
                            finished = true
                        } else {
                            // Cut short or damaged: whatever frames follow it are looked for.
                            corrupt = true
                        }
                    }
                    return
                }
            }
        } }
        sync = .inFrame(start: input.offset + Int64(s), header: h, crcEnd: input.offset + Int64(crcEnd), crc: c,
                        searched: input.offset + Int64(searched))
        if corrupt && s == 0 {
            // No frame ends within reach of this header: it was damaged or false. Look again
            // from the byte after it; the bytes before the next header are dropped.
            sync = .searching(from: input.offset + 1)
            return .consume(0)
        }
        if finished {
            try finishAudio(input)
            if wantsPackets && !descriptions.isEmpty {
                return .packets(byteCount: descriptions.last.map { Int($0.startOffset) + Int($0.dataByteSize) }!,
                                packetCount: descriptions.count, descriptions: descriptions)
            }
            return wantsPackets ? (count > 0 ? .consume(count) : .finished) : .finished
        }
        if wantsPackets {
            if !descriptions.isEmpty { return .packets(byteCount: s, packetCount: descriptions.count, descriptions: descriptions) }
            return .needMore
        }
        return s > 0 ? .consume(s) : .needMore
    }

    /// Notes one frame: a packet description on the push path, a packet table entry otherwise.
    private func record(start s: Int, size: Int, header h: FLACFrameHeader, input: ParserInput, fixedFrames: Bool,
                        wantsPackets: Bool, descriptions: inout [PacketDescription])
    {
        let absolute = input.offset + Int64(s)
        if !isReady && properties.dataOffset == nil {
            // The first confirmed frame of a stream found by searching.
            if variableStrategy == nil { variableStrategy = h.isVariableBlockSize }
            setUpAudio(dataOffset: absolute, first: h)
            if wantsPackets { becomeReady(announcing: FLACParser.announcementOrder) }
        }
        if variableStrategy == nil { variableStrategy = h.isVariableBlockSize }
        let frames = UInt32(fixedFrames ? 0 : h.blockSize)
        if wantsPackets {
            descriptions.append(PacketDescription(startOffset: Int64(s), variableFramesInPacket: frames, dataByteSize: UInt32(size)))
            if size > Int(properties.maximumPacketSize ?? 0) && isReady {
                // STREAMINFO understated it (the corpus' "faulty" file 02): say so before the packet.
                properties.maximumPacketSize = UInt32(size)
                pendingNotifications.append(.maximumPacketSize)
            }
        } else {
            scanTable.append(PacketDescription(startOffset: absolute - properties.dataOffset!, variableFramesInPacket: frames,
                                               dataByteSize: UInt32(size)))
        }
        framesSeen += 1
        samplesSeen += Int64(h.blockSize)
        largestFrame = max(largestFrame, size)
        lastFrameEnd = absolute + Int64(size)
    }

    /// The size of the frame that runs to the end of the stream: the first length at which
    /// its CRC-16 is right and only a tag (ID3v1, APEv2, ID3v2), zero padding or nothing
    /// follows (zeros after a frame leave its CRC at 0, so they cannot tell); nil when the
    /// frame is cut short or damaged.
    private func lastFrameSize(_ p: UnsafeRawPointer, count: Int, header: FLACFrameHeader, crc: UInt16,
                               tables: UnsafePointer<UInt32>) -> Int?
    {
        let minimum = header.length + 3
        guard count >= minimum else { return nil }
        // The usual case: the CRC of everything is right and the last byte is not padding.
        if crc == 0 && p.load(fromByteOffset: count - 1, as: UInt8.self) != 0 { return count }
        var c: UInt16 = 0
        var q = 0
        while q < count {
            c = FLACCRC.update(c, byte: p.load(fromByteOffset: q, as: UInt8.self), tables)
            q += 1
            if c == 0 && q >= minimum && FLACParser.isTrailer(UnsafeRawBufferPointer(start: p + q, count: count - q)) {
                // One or two zero bytes left are the CRC-16's own low bytes (a CRC ending in
                // 0x00 leaves the register at 0 a byte early), not padding: they belong to the
                // frame. Taking them is harmless either way, as zeros keep the CRC at 0.
                if count - q <= 2, (q..<count).allSatisfy({ p.load(fromByteOffset: $0, as: UInt8.self) == 0 }) { return count }
                return q
            }
        }
        return nil
    }

    static func isTrailer(_ b: UnsafeRawBufferPointer) -> Bool {
        func starts(_ s: String) -> Bool { b.count >= s.utf8.count && b.prefix(s.utf8.count).elementsEqual(s.utf8) }
        return starts("TAG") || starts("APETAGEX") || starts("ID3") || starts("LYRICS") || b.allSatisfy { $0 == 0 }
    }

    // MARK: The end

    /// The audio ends without another frame.
    private func endOfAudio(_ input: ParserInput, consumed: Int = 0) throws(AudioError) -> ParseStep {
        try finishAudio(input)
        return consumed > 0 ? .consume(consumed) : .finished
    }

    private func finishAudio(_ input: ParserInput) throws(AudioError) {
        state = .done
        if properties.dataOffset == nil {
            // No frame was found.
            guard sawMarker, streamInfo != nil, let start = metadataEnd else {
                throw AudioError(.invalidFile, sawMarker ? "the file has no FLAC frames" : "no FLAC frame was found in the data")
            }
            setUpAudio(dataOffset: start, first: FLACFrameHeader(isVariableBlockSize: false, blockSize: 0, sampleRate: 0,
                                                               channelAssignment: 0, bitsPerSample: 0, number: 0, length: 0))
        }
        let dataOffset = properties.dataOffset!
        let actual = FLACParser.packetTableInfo(totalSamples: streamInfo?.totalSamples ?? 0, frames: framesSeen,
                                                samples: samplesSeen, framesPerPacket: properties.framesPerPacket ?? 0)
        if !input.wantsPackets {
            properties.packetTable = scanTable
            properties.audioDataPacketCount = Int64(scanTable.count)
            let bytes = (lastFrameEnd ?? dataOffset) - dataOffset
            properties.audioDataByteCount = bytes
            if largestFrame > 0 { properties.maximumPacketSize = UInt32(largestFrame) }
            properties.packetTableInfo = actual
            if let rate = properties.dataFormat?.sampleRate, actual.numberValidFrames > 0 {
                let bits = Double(bytes) * 8 * rate / Double(actual.numberValidFrames)
                if bits.isFinite && bits < Double(UInt32.max) { properties.bitRate = UInt32(bits.rounded()) }
            }
            becomeReady(announcing: FLACParser.announcementOrder)
        } else {
            if !isReady { becomeReady(announcing: FLACParser.announcementOrder) }
            // The whole stream went by: what the frames held corrects STREAMINFO.
            if countedFromStart && framesSeen > 0 && properties.packetTableInfo != actual {
                properties.packetTableInfo = actual
                pendingNotifications.append(.packetTableInfo)
            }
        }
    }

    /// Valid frames and remainder from STREAMINFO's total and what the frames hold.
    ///
    /// With a fixed block size the packets count as `framesPerPacket` each, and the
    /// remainder is what the last one lacks. STREAMINFO's total is believed when it ends
    /// inside the last packet; otherwise it is wrong (or 0, unknown) and the frames decide.
    static func packetTableInfo(totalSamples: Int64, frames: Int64, samples: Int64, framesPerPacket: Int64) -> PacketTableInfo {
        let inPackets = framesPerPacket > 0 ? frames * framesPerPacket : samples
        let lastPacket = framesPerPacket > 0 ? framesPerPacket : 0
        if totalSamples > 0 && totalSamples <= inPackets && (framesPerPacket > 0 ? inPackets - totalSamples < lastPacket : totalSamples == samples) {
            return PacketTableInfo(numberValidFrames: totalSamples, remainderFrames: Int32(clamping: inPackets - totalSamples))
        }
        return PacketTableInfo(numberValidFrames: samples, remainderFrames: Int32(clamping: max(0, inPackets - samples)))
    }

    // MARK: Seeking

    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady, let dataOffset = properties.dataOffset else {
            throw AudioError(.illegalOperation, "cannot resume before the data offset is known")
        }
        guard offset >= dataOffset else { throw AudioError(.invalidPacketOffset, "byte \(offset) lies before the audio data") }
        state = .frames
        sync = .searching(from: offset)
        countedFromStart = false
    }

    /// The byte offset of a packet from the data offset: exact from the packet table
    /// (AudioFile); on a stream, exact when a seek point starts that very packet or when the
    /// stream has a byte-range fetcher (the SEEKTABLE's point before it, then a scan of frame
    /// headers), otherwise estimated from the SEEKTABLE or the average size.
    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        let p = properties
        if let table = p.packetTable {
            if packet < table.count { return (table[Int(packet)].startOffset, false) }
            if packet == table.count { return (table.last.map { $0.startOffset + Int64($0.dataByteSize) } ?? 0, false) }
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(table.count))")
        }
        guard let info = streamInfo else { throw AudioError(.valueUnknown, "the stream has no STREAMINFO to estimate from") }
        // The packet's first sample: exact with a fixed block size, estimated otherwise.
        let blockSize = info.isFixedBlockSize ? info.maximumBlockSize : (info.minimumBlockSize + info.maximumBlockSize) / 2
        let sample = UInt64(packet) &* UInt64(blockSize)
        if info.totalSamples > 0 && sample >= UInt64(info.totalSamples) {
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the end of the stream")
        }
        let points = seekTable
        if info.isFixedBlockSize, let found = try locateFrame(number: UInt64(packet), sample: sample) {
            return (found, false)
        }
        if let i = points.lastIndex(where: { $0.sampleNumber <= sample }) {
            let a = points[i]
            if a.sampleNumber == sample && info.isFixedBlockSize { return (Int64(saturating: Double(a.offset)), false) }
            let b: (sample: Double, offset: Double)
            if i + 1 < points.count, points[i + 1].sampleNumber > a.sampleNumber {
                b = (Double(points[i + 1].sampleNumber), Double(points[i + 1].offset))
            } else if a.sampleNumber > 0 {
                b = (2 * Double(a.sampleNumber), 2 * Double(a.offset))  // the average so far
            } else {
                b = (Double(blockSize), Double(info.maximumFrameSize > 0 ? (info.minimumFrameSize + info.maximumFrameSize) / 2 : 0))
            }
            let slope = (b.offset - Double(a.offset)) / (b.sample - Double(a.sampleNumber))
            return (Int64(saturating: Double(a.offset) + slope * Double(sample - a.sampleNumber)), true)
        }
        if info.minimumFrameSize > 0 && info.maximumFrameSize > 0 {
            return (Int64(saturating: Double(packet) * Double((info.minimumFrameSize + info.maximumFrameSize) / 2)), true)
        }
        throw AudioError(.valueUnknown, "the stream has neither a packet table nor a SEEKTABLE")
    }

    /// A frame's offset on a variable block size stream too: the frame that holds the sample.
    public func byteOffset(ofFrame frame: Int64, fetch: ByteRangeFetcher?, sourceSize: Int64?) throws(AudioError)
        -> (offset: Int64, isEstimated: Bool)
    {
        guard frame >= 0 else { throw AudioError(.invalidPacketOffset, "frame \(frame) is negative") }
        if properties.packetTable == nil, let info = streamInfo, !info.isFixedBlockSize,
           let found = try locateFrame(number: nil, sample: UInt64(frame))
        {
            return (found, false)
        }
        let (packet, _) = try PropertyValue.frameToPacket(frame, properties: properties)
        return try byteOffset(ofPacket: packet)
    }

    /// The most bytes a seek scans for one frame header.
    static let maximumSeekScan: Int64 = 64 << 20

    /// Finds, with the stream's fetcher, the frame with this number (fixed block size) or the
    /// one that holds this sample (variable), from the SEEKTABLE point before it: its offset
    /// from the data offset, or nil without a fetcher or when the scan does not find it.
    private func locateFrame(number: UInt64?, sample: UInt64) throws(AudioError) -> Int64? {
        guard let fetch, let dataOffset = properties.dataOffset else { return nil }
        let point = seekTable.last { $0.sampleNumber <= sample && $0.offset < UInt64(FLACParser.maximumSeekScan) << 20 }
        var at = dataOffset + Int64(point?.offset ?? 0)
        let limit = at + FLACParser.maximumSeekScan
        let chunk = 1 << 20
        while at < limit {
            let bytes = try fetch(at, chunk)
            guard bytes.count > 4 else { return nil }
            let found: Int64?? = bytes.withUnsafeBytes { raw -> Int64?? in
                guard let p = raw.baseAddress else { return .some(nil) }
                let count = raw.count
                var i = 0
                while i < count {
                    i = FLACFrameScanner.findSync(p, from: i, to: count, count: count)
                    guard i < count else { break }
                    if case .header(let h) = FLACFrameHeader.parse(p + i, count: count - i), fits(h),
                       h.isVariableBlockSize == (number == nil)
                    {
                        if let number {
                            if h.number == number { return .some(at + Int64(i) - dataOffset) }
                            if h.number > number { return .some(nil) }  // passed it: a frame is missing
                        } else {
                            if h.number <= sample && sample < h.number + UInt64(h.blockSize) { return .some(at + Int64(i) - dataOffset) }
                            if h.number > sample { return .some(nil) }
                        }
                    }
                    i += 1
                }
                return nil  // not in this piece
            }
            if let found { return found }
            if bytes.count < chunk { return nil }
            at += Int64(chunk - FLACFrameHeader.maximumLength)
        }
        return nil
    }
}

import TonearmCore

/// One audio packet of a Matroska file: a frame of a SimpleBlock or Block (each frame of a
/// laced block is a packet of its own).
struct MatroskaPacketEntry: Sendable, Equatable {
    /// Absolute file offset of the frame's first byte.
    var offset: Int64
    var size: UInt32
    /// Frames it decodes to, at the format's rate.
    var frames: UInt32
    /// Presentation time of its first frame, in frames: 0 is the first frame played (Opus's
    /// CodecDelay comes before it).
    var pts: Int64
    /// Absolute offset of the SimpleBlock or BlockGroup element that holds it.
    var block: Int64
}

/// The Matroska and WebM parser ('mkv ' and 'webm', Tonearm names: Apple has none): EBML
/// (RFC 8794), the Matroska elements (RFC 9559) and WebM's subset of them, for the audio
/// codecs of ``MatroskaAudio``. One state machine serves both paths.
///
/// - **Header.** The EBML header must say DocType "matroska" or "webm", which decides the
///   file type, with EBMLMaxIDLength ≤ 4 and EBMLMaxSizeLength ≤ 8.
/// - **Top level.** Info, Tracks, SeekHead, Tags, Chapters, Cues and Attachments are read
///   whole (at most ``maximumMetadataSize`` bytes, Cues ``maximumCuesSize``), everything else
///   (Void, CRC-32, unknown elements) is skipped by its size.
/// - **Track.** The first enabled default audio track whose codec Tonearm reads is reported
///   (``MatroskaTrack/select(_:)``); blocks of other tracks are skipped without being held.
/// - **Clusters and blocks.** A Cluster or Segment of unknown size (live WebM) ends where an
///   element that cannot be its child begins (RFC 8794 §6.2). SimpleBlocks and BlockGroups
///   (at most ``maximumBlockSize`` bytes) are split into their frames, with Xiph, EBML or
///   fixed-size lacing; each frame is a packet. Frames per packet come from the codec;
///   times from the Cluster's Timestamp and the block's, scaled by TimestampScale. Header
///   stripping (ContentCompAlgo 3) is undone: the packets are put together with the
///   stripped bytes (`ParseStep.ownedPackets` on the push path, ``readPackets(startingAt:count:into:descriptions:read:)``
///   on the random-access path); other ContentEncodings make a track unreadable.
/// - **Gapless.** Opus's CodecDelay is the priming; the DiscardPadding of the last block is
///   the remainder (PacketTableInfo), announced at the end of the stream on the push path.
/// - **Push path.** Once the first Cluster begins, the properties are announced and 'redy';
///   packets are handed on block by block from the input. With a byte-range fetcher, the
///   Tags, Chapters, Cues and Attachments that the SeekHead places after the Clusters are
///   fetched first (HTTP Range), so that the info dictionary is whole at 'redy' and seeks
///   ahead can use the Cues.
/// - **Random-access path.** Every Cluster is read (the audio data is indexed, as Ogg's
///   pages are): an exact packet table with each packet's time. PCM's packets are its frames
///   (Apple's linear PCM); the blocks are gathered by ``readPackets(startingAt:count:into:descriptions:read:)``.
/// - **Seeking.** Exact from the packet table (random access), or, on the push path, from
///   the blocks already read and then the Cues (read as they pass, or fetched); otherwise an
///   estimate from the Segment's duration, flagged (MatroskaParser+Seek.swift).
/// - **One Segment.** A second EBML header (a chained stream) ends the data: only the
///   first Segment is read.
/// - **Damage.** After 'redy', a damaged element makes the parser look for the next Cluster
///   (its ID, followed by a Timestamp or CRC-32) and go on from there; before it, the error
///   is thrown.
public final class MatroskaParser: PropertyStoringParser {
    public var properties: FileProperties
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []

    /// The largest SimpleBlock or BlockGroup read; a larger one is a limit error.
    public static let maximumBlockSize = 16 << 20
    /// The largest Info, Tracks, SeekHead, Tags, Chapters or Attachments element read whole;
    /// larger ones are skipped (Tracks: a limit error).
    public static let maximumMetadataSize = 16 << 20
    public static let maximumCuesSize = 32 << 20
    /// The most packets the random-access path indexes (about 23 hours of 20-ms Opus).
    public static let maximumPacketCount = 1 << 22
    static let maximumEBMLHeaderSize = 4096
    /// The most Clusters and blocks the push path remembers for exact seeks back.
    static let maximumRemembered = 1 << 20

    /// Damaged elements passed over (after 'redy').
    public private(set) var damageCount = 0

    /// Sees every audio packet with its bytes, in order, on both paths (for tests).
    var packetObserver: ((MatroskaPacketEntry, [UInt8]) -> Void)?

    /// The audio packets on the random-access path.
    private(set) var packetIndex: [MatroskaPacketEntry] = []
    /// PCM on the random-access path: the first frame of each block of ``packetIndex``.
    private(set) var pcmFrameStarts: [Int64] = []

    struct ClusterInfo: Equatable {
        var start: Int64
        var end: Int64?
        /// In TimestampScale units.
        var timestamp: Int64
        /// The number of its first packet, when the numbering was known.
        var firstPacket: Int64?
    }

    /// Push path: each block read while the packet numbering was known, with the number and
    /// time of its first packet (for exact seeks back), and the Clusters read.
    private(set) var blockStarts: [(offset: Int64, packet: Int64, pts: Int64)] = []
    private(set) var clusters: [ClusterInfo] = []
    /// The number of the next packet; nil when unknown (after a seek to an estimated place).
    var packetNumber: Int64? = 0
    /// One past the highest packet number seen with the numbering known.
    private(set) var numberedThrough: Int64 = 0

    enum State { case ebmlHeader, segmentHeader, segmentChild, clusterChild, actions, resync, done }
    private enum Action {
        case consume(Int)
        case packets(byteCount: Int, count: Int, descriptions: [PacketDescription]?)
        case owned([UInt8], [PacketDescription])
    }

    var state = State.ebmlHeader
    private var actions: [Action] = []
    private var actionIndex = 0
    /// True on the random-access scan (the input's `wantsPackets` is false).
    private(set) var indexing = false
    private var maxIDLength = 4
    private var maxSizeLength = 8
    /// Where the Segment's data begins: SeekHead and Cues positions count from here.
    private(set) var segmentStart: Int64 = 0
    private(set) var segmentEnd: Int64?
    var cluster: ClusterInfo?

    private(set) var segmentInfo = MatroskaMetadata.Info()
    private(set) var seekHead = MatroskaSeekHead()
    private(set) var tracks: [MatroskaTrack] = []
    private(set) var track: MatroskaTrack?
    private(set) var audio: MatroskaAudio?
    private(set) var cuePoints: [MatroskaCuePoint]?
    /// Offsets of the top-level elements already read (a fetched one is not read again).
    private var readElements: Set<Int64> = []
    private var tagBodies: [[UInt8]] = []
    private var chapters: [Chapter]?
    private var artwork: [UInt8]?

    /// The presentation time of the next packet; nil until a block anchors it.
    var position: Int64?
    private(set) var totalFrames: Int64 = 0
    private(set) var packetCount: Int64 = 0
    private(set) var packetBytes: Int64 = 0
    private var largestPacket: UInt32 = 0
    /// The DiscardPadding of the last block read, in frames.
    private var trailingPadding: Int64 = 0
    private(set) var endOfLastCluster: Int64 = 0
    var hasResumed = false
    private var finalized = false
    /// PCM on the random-access path: its frames are indexed in ``pcmFrameStarts``.
    private(set) var pcmIndexed = false

    public init(fileType: AudioFileTypeID = .matroska) {
        properties = FileProperties(fileType: fileType)
    }

    static let announcementOrder: [AudioFilePropertyID] = [
        .fileFormat, .dataFormat, .formatList, .magicCookieData, .channelLayout, .infoDictionary, .packetTableInfo,
        .audioDataByteCount, .audioDataPacketCount, .bitRate, .dataOffset, .maximumPacketSize,
    ]

    // MARK: Stepping

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        indexing = !input.wantsPackets
        switch state {
        case .ebmlHeader: return try ebmlHeaderStep(input)
        case .segmentHeader: return try segmentHeaderStep(input)
        case .segmentChild: return try segmentChildStep(input)
        case .clusterChild: return try clusterChildStep(input)
        case .actions: return nextAction()
        case .resync: return try resyncStep(input)
        case .done: return .finished
        }
    }

    private func header(_ input: ParserInput, at: Int = 0) throws(AudioError) -> EBML.Header? {
        try EBML.header(input.bytes, at: at, maxIDLength: maxIDLength, maxSizeLength: maxSizeLength)
    }

    /// RFC 8794 §11.2: the EBML header, whose DocType names the file type.
    private func ebmlHeaderStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        let magic: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3]
        guard input.count >= 4 else {
            if input.isEndOfStream { throw AudioError(.unsupportedFileType, "not a Matroska or WebM file: it is \(input.count) bytes") }
            return .needMore
        }
        guard input.bytes.prefix(4).elementsEqual(magic) else {
            throw AudioError(.unsupportedFileType, "not a Matroska or WebM file: it does not begin with an EBML header")
        }
        guard let h = try header(input) else {
            if input.isEndOfStream { throw EBML.fail("the file ends in its EBML header") }
            return .needMore
        }
        guard let size = h.size, size <= Int64(MatroskaParser.maximumEBMLHeaderSize) else {
            throw EBML.fail("an EBML header of \(h.size.map { "\($0)" } ?? "unknown") bytes")
        }
        let total = h.headerSize + Int(size)
        guard input.count >= total else {
            if input.isEndOfStream { throw EBML.fail("the file ends in its EBML header") }
            return .needMore
        }
        let b = Array(input.bytes[0..<total])
        var docType = "matroska"
        for (id, body) in EBML.children(b, h.headerSize..<total) {
            let v = EBML.uint(b[body])
            switch id {
            case MKV.ebmlVersion, MKV.ebmlReadVersion:
                if let v, v > 1 { throw AudioError(.unsupportedFileType, "EBML version \(v)") }
            case MKV.ebmlMaxIDLength:
                guard let v, (1...4).contains(v) else { throw EBML.fail("EBMLMaxIDLength is \(v.map { "\($0)" } ?? "unreadable")") }
                maxIDLength = Int(v)
            case MKV.ebmlMaxSizeLength:
                guard let v, (1...8).contains(v) else { throw EBML.fail("EBMLMaxSizeLength is \(v.map { "\($0)" } ?? "unreadable")") }
                maxSizeLength = Int(v)
            case MKV.docType:
                docType = EBML.string(b[body])
            case MKV.docTypeReadVersion:
                if let v, v > 4 { throw AudioError(.unsupportedFileType, "Matroska DocTypeReadVersion \(v)") }
            default: break
            }
        }
        switch docType {
        case "matroska": properties.fileType = .matroska
        case "webm": properties.fileType = .webM
        default: throw AudioError(.unsupportedFileType, "EBML DocType \"\(docType)\" is not Matroska or WebM")
        }
        state = .segmentHeader
        return .consume(total)
    }

    private func segmentHeaderStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        guard let h = try header(input) else {
            if input.isEndOfStream { throw EBML.fail("the file has no Segment") }
            return .needMore
        }
        if h.id == MKV.segment {
            segmentStart = input.offset + Int64(h.headerSize)
            segmentEnd = h.size.map { segmentStart + $0 }
            state = .segmentChild
            return .consume(h.headerSize)
        }
        if h.id == MKV.void || h.id == MKV.crc32, let size = h.size {
            return .seek(to: input.offset + Int64(h.headerSize) + size)
        }
        throw EBML.fail("element 0x\(String(h.id, radix: 16)) where the Segment belongs")
    }

    /// At a top-level element of the Segment.
    private func segmentChildStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if let end = segmentEnd, input.offset >= end { return try endOfSegment(input) }
        let found: EBML.Header?
        do { found = try header(input) } catch { return try damaged(error) }
        guard let h = found else {
            if input.isEndOfStream { return try endOfSegment(input) }
            return .needMore
        }
        // A second EBML header: another Segment follows (a chained stream); only the first is read.
        if h.id == MKV.ebml { return try endOfSegment(input) }
        if h.id == MKV.cluster { return try enterCluster(h, input) }
        guard let size = h.size else {
            return try damaged(EBML.fail("top-level element 0x\(String(h.id, radix: 16)) has the unknown size"))
        }
        let start = input.offset
        let end = start + Int64(h.headerSize) + size
        switch h.id {
        case MKV.info, MKV.tracks, MKV.seekHead, MKV.tags, MKV.chapters, MKV.cues, MKV.attachments:
            let limit = h.id == MKV.cues ? MatroskaParser.maximumCuesSize : MatroskaParser.maximumMetadataSize
            if size > Int64(limit) {
                if h.id == MKV.tracks { throw AudioError.limit("a Tracks element of \(size) bytes; at most \(limit) are read") }
                return .seek(to: end)
            }
            if readElements.contains(start) { return .seek(to: end) }
            let total = h.headerSize + Int(size)
            guard input.count >= total else {
                if input.isEndOfStream { return try endOfSegment(input) }
                return .needMore
            }
            try readTopLevel(h.id, Array(input.bytes[h.headerSize..<total]), at: start)
            return .consume(total)
        default:
            return .seek(to: end)
        }
    }

    /// Reads a whole top-level element's body.
    private func readTopLevel(_ id: UInt32, _ body: [UInt8], at offset: Int64) throws(AudioError) {
        // (Bounded: a file of many tiny elements must not grow the set without end.)
        if readElements.count < 4096 { readElements.insert(offset) }
        let all = 0..<body.count
        switch id {
        case MKV.info:
            segmentInfo = MatroskaMetadata.info(body, all)
        case MKV.tracks:
            guard track == nil else { return }
            tracks = try MatroskaTrack.read(body, all)
            let t = tracks[try MatroskaTrack.select(tracks)]
            audio = try MatroskaAudio(track: t)
            track = t
        case MKV.seekHead:
            seekHead.read(body, all)
        case MKV.tags:
            guard tagBodies.count < 64, tagBodies.reduce(0, { $0 + $1.count }) + body.count <= MatroskaParser.maximumMetadataSize else { return }
            tagBodies.append(body)
            if isReady {
                properties.info = mergedInfo()
                pendingNotifications.append(.infoDictionary)
            }
        case MKV.chapters:
            guard chapters == nil else { return }
            chapters = MatroskaMetadata.chapters(body, all)
            if isReady { properties.chapters = chapters ?? [] }
        case MKV.cues:
            guard cuePoints == nil else { return }
            cuePoints = MatroskaCues.read(body, all, track: track?.number ?? 0)
        case MKV.attachments:
            guard artwork == nil else { return }
            artwork = MatroskaMetadata.artwork(body, all)
            if isReady { properties.albumArtwork = artwork }
        default:
            break
        }
    }

    /// Reads a top-level element at an absolute offset with the fetcher; false when it is
    /// not there or too large.
    @discardableResult
    func fetchElement(at offset: Int64, _ fetch: ByteRangeFetcher) throws(AudioError) -> Bool {
        guard !readElements.contains(offset), offset >= segmentStart else { return false }
        let head = try fetch(offset, 12)
        guard let h = try head.withBytes({ raw throws(AudioError) in
            try EBML.header(raw, maxIDLength: maxIDLength, maxSizeLength: maxSizeLength)
        }), let size = h.size else { return false }
        let limit = h.id == MKV.cues ? MatroskaParser.maximumCuesSize : MatroskaParser.maximumMetadataSize
        guard [MKV.info, MKV.tracks, MKV.seekHead, MKV.tags, MKV.chapters, MKV.cues, MKV.attachments].contains(h.id),
              size <= Int64(limit) else { return false }
        let body = try fetch(offset + Int64(h.headerSize), Int(size))
        guard body.count == Int(size) else { return false }
        try readTopLevel(h.id, body, at: offset)
        return true
    }

    /// The tags: the codec's own (Vorbis comments), the Segment's title and muxing
    /// application, then the Tags.
    private func mergedInfo() -> InfoDictionary {
        var info = audio?.info ?? InfoDictionary()
        if let title = segmentInfo.title, !title.isEmpty, info[InfoDictionary.title] == nil { info[InfoDictionary.title] = title }
        // The muxer names the encoding application (as libavformat reads it), unless a tag does.
        if let app = segmentInfo.muxingApp, !app.isEmpty { info[InfoDictionary.encodingApplication] = app }
        for body in tagBodies { MatroskaMetadata.tags(body, 0..<body.count, trackUID: track?.uid ?? 0, into: &info) }
        if let d = segmentInfo.duration, d > 0 {
            let seconds = d * Double(segmentInfo.timestampScale) / 1e9
            if seconds.isFinite { info[InfoDictionary.approximateDurationInSeconds] = String(seconds) }
        }
        return info
    }

    // MARK: Clusters

    private func enterCluster(_ h: EBML.Header, _ input: ParserInput) throws(AudioError) -> ParseStep {
        let start = input.offset
        var end = h.size.map { start + Int64(h.headerSize) + $0 }
        if let e = end, let s = segmentEnd, e > s { end = s }
        if !isReady { try prepare(firstCluster: start, input) }
        let c = ClusterInfo(start: start, end: end, timestamp: 0, firstPacket: packetNumber)
        cluster = c
        if !indexing, (clusters.count < MatroskaParser.maximumRemembered), clusters.last.map({ start > $0.start }) ?? true {
            clusters.append(c)
        }
        state = .clusterChild
        return .consume(h.headerSize)
    }

    /// At an element inside a Cluster.
    private func clusterChildStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        guard var c = cluster else {
            state = .segmentChild
            return .consume(0)
        }
        if let end = c.end, input.offset >= end {
            endOfLastCluster = max(endOfLastCluster, end)
            state = .segmentChild
            return .consume(0)
        }
        let found: EBML.Header?
        do { found = try header(input) } catch { return try damaged(error) }
        guard let h = found else {
            if input.isEndOfStream {
                endOfLastCluster = max(endOfLastCluster, input.offset)
                return try endOfSegment(input)
            }
            return .needMore
        }
        if !MKV.clusterChildren.contains(h.id) && c.end == nil {
            // RFC 8794 §6.2: an element that cannot be a child ends the unknown-size Cluster.
            endOfLastCluster = max(endOfLastCluster, input.offset)
            state = .segmentChild
            return .consume(0)
        }
        guard let size = h.size else { return try damaged(EBML.fail("a Cluster child has the unknown size")) }
        let end = input.offset + Int64(h.headerSize) + size
        if let ce = c.end, end > ce { return try damaged(EBML.fail("a Cluster child runs past its Cluster")) }
        if let se = segmentEnd, end > se { return try damaged(EBML.fail("a Cluster child runs past the Segment")) }
        switch h.id {
        case MKV.timestamp:
            guard size <= 8 else { return try damaged(EBML.fail("a Cluster Timestamp of \(size) bytes")) }
            let total = h.headerSize + Int(size)
            guard input.count >= total else { return input.isEndOfStream ? try endOfSegment(input) : .needMore }
            let v = EBML.uint(Array(input.bytes[h.headerSize..<total])[...]) ?? 0
            c.timestamp = Int64(min(v, UInt64(Int64.max >> 8)))
            cluster = c
            if let i = clusters.indices.last, clusters[i].start == c.start { clusters[i].timestamp = c.timestamp }
            return .consume(total)
        case MKV.simpleBlock, MKV.blockGroup:
            guard size <= Int64(MatroskaParser.maximumBlockSize) else {
                throw AudioError.limit("a block of \(size) bytes; at most \(MatroskaParser.maximumBlockSize) are read")
            }
            // Another track's block is skipped without being held.
            var blockAt = h.headerSize
            if h.id == MKV.blockGroup {
                if let b = try? header(input, at: blockAt), b.id == MKV.block { blockAt += b.headerSize } else { blockAt = -1 }
            }
            if blockAt >= 0, blockAt < input.count,
               let t = MatroskaBlock.track(UnsafeRawBufferPointer(rebasing: input.bytes[blockAt...])), t != track?.number
            {
                return .seek(to: end)
            }
            let total = h.headerSize + Int(size)
            guard input.count >= total else {
                if input.isEndOfStream {
                    endOfLastCluster = max(endOfLastCluster, input.offset)
                    return try endOfSegment(input)
                }
                return .needMore
            }
            return try takeBlock(h, input, total: total)
        default:
            return .seek(to: end)
        }
    }

    /// A whole SimpleBlock or BlockGroup of the input's first `total` bytes.
    private func takeBlock(_ h: EBML.Header, _ input: ParserInput, total: Int) throws(AudioError) -> ParseStep {
        let element = UnsafeRawBufferPointer(rebasing: input.bytes[0..<total])
        var blockRange: Range<Int>?
        var duration: UInt64?
        var padding: Int64 = 0
        if h.id == MKV.simpleBlock {
            blockRange = h.headerSize..<total
        } else {
            var at = h.headerSize
            while at < total {
                guard let c = try? EBML.header(element, at: at, maxIDLength: maxIDLength, maxSizeLength: maxSizeLength),
                      let size = c.size, size <= Int64(total - at - c.headerSize) else { break }
                let body = (at + c.headerSize)..<(at + c.headerSize + Int(size))
                let bytes = Array(element[body])[...]
                switch c.id {
                case MKV.block: blockRange = body
                case MKV.blockDuration: duration = EBML.uint(bytes)
                case MKV.discardPadding: padding = EBML.int(bytes) ?? 0
                default: break
                }
                at = body.upperBound
            }
        }
        guard let blockRange, let audio, let track else { return .consume(total) }
        let block: MatroskaBlock
        do {
            block = try MatroskaBlock.parse(UnsafeRawBufferPointer(rebasing: element[blockRange]))
        } catch {
            damageCount += 1
            return .consume(total)
        }
        guard block.track == track.number else { return .consume(total) }
        let rate = audio.format.sampleRate
        if position == nil {
            position = ptsFrames(ofTicks: (cluster?.timestamp ?? 0) &+ Int64(block.timestamp))
        }
        // Frames the codec cannot count: the track's DefaultDuration, else the block's own.
        var fallback: UInt32 = 0
        if let d = track.defaultDuration {
            fallback = UInt32(clamping: MatroskaAudio.frames(ofNanoseconds: d, rate: rate))
        } else if let d = duration, block.frames.count == 1 {
            let ns = Double(d) * Double(segmentInfo.timestampScale)
            if ns < 1e15 { fallback = UInt32(clamping: MatroskaAudio.frames(ofNanoseconds: UInt64(ns), rate: rate)) }
        }
        let isPCM = audio.kind == .pcm
        let bytesPerFrame = Int(audio.format.bytesPerFrame)
        var descriptions: [PacketDescription] = []
        var firstFrame: Int?
        var lastEnd = 0
        var pcmFrames = 0
        let blockNumber = packetNumber
        let blockPts = position ?? 0
        // Header stripping: each packet is the stripped bytes, then the frame's (handed on as
        // packets the parser puts together).
        let stripped = track.strippedHeader ?? []
        var owned: [UInt8] = []
        for f in block.frames where !f.isEmpty {
            var size = f.count
            let at = blockRange.lowerBound + f.lowerBound
            if isPCM {
                size -= size % max(1, bytesPerFrame)
                guard size > 0 else { continue }
            }
            let bytes = UnsafeRawBufferPointer(rebasing: element[at..<at + size])
            var frames: UInt32
            if stripped.isEmpty {
                frames = self.audio!.frames(of: bytes)
                try record(MatroskaPacketEntry(offset: input.offset + Int64(at), size: UInt32(size), frames: 0,
                                               pts: position ?? 0, block: input.offset), bytes, frames: &frames, fallback: fallback)
            } else {
                let start = owned.count
                owned += stripped
                owned.append(contentsOf: bytes)
                frames = owned[start...].withUnsafeBytes { self.audio!.frames(of: $0) }
                try owned[start...].withBytes { whole throws(AudioError) in
                    try record(MatroskaPacketEntry(offset: input.offset + Int64(at), size: UInt32(size), frames: 0,
                                                   pts: position ?? 0, block: input.offset), whole, frames: &frames, fallback: fallback)
                }
            }
            if firstFrame == nil { firstFrame = at }
            if isPCM {
                pcmFrames += Int(frames)
            } else {
                let offset = stripped.isEmpty ? at - firstFrame! : owned.count - size - stripped.count
                descriptions.append(PacketDescription(startOffset: Int64(offset),
                                                      variableFramesInPacket: audio.countsFrames ? frames : 0,
                                                      dataByteSize: UInt32(size + stripped.count)))
            }
            lastEnd = at + size
        }
        trailingPadding = padding > 0 ? MatroskaAudio.frames(ofNanoseconds: UInt64(padding), rate: rate) : 0
        guard let first = firstFrame else { return .consume(total) }
        let count = isPCM ? pcmFrames : descriptions.count
        if !indexing, let n = blockNumber, (blockStarts.count < MatroskaParser.maximumRemembered),
           (input.offset > (blockStarts.last?.offset ?? -1))
        {
            blockStarts.append((input.offset, n, blockPts))
        }
        if let n = blockNumber {
            packetNumber = n + Int64(count)
            numberedThrough = max(numberedThrough, n + Int64(count))
        }
        if indexing { return .consume(total) }
        if !stripped.isEmpty {
            actions = [.owned(owned, descriptions), .consume(total)]
            actionIndex = 0
            state = .actions
            return nextAction()
        }
        actions = [.consume(first),
                   .packets(byteCount: lastEnd - first, count: count, descriptions: isPCM ? nil : descriptions),
                   .consume(total - lastEnd)]
        actionIndex = 0
        state = .actions
        return nextAction()
    }

    /// Records a packet whose bytes (the stripped header put back) are `bytes`; frames the
    /// codec could not count (0) are `fallback`'s. Moves the running time on.
    private func record(_ entry: MatroskaPacketEntry, _ bytes: UnsafeRawBufferPointer, frames: inout UInt32,
                        fallback: UInt32) throws(AudioError)
    {
        if frames == 0 && audio?.kind != .vorbis { frames = fallback }
        var e = entry
        e.frames = frames
        position = (position ?? 0) &+ Int64(frames)
        packetCount += 1
        totalFrames &+= Int64(e.frames)
        packetBytes &+= Int64(bytes.count)
        largestPacket = max(largestPacket, UInt32(bytes.count))
        packetObserver?(e, Array(bytes))
        if indexing {
            guard packetIndex.count < MatroskaParser.maximumPacketCount else {
                throw AudioError.limit("the Matroska track has more than \(MatroskaParser.maximumPacketCount) packets")
            }
            packetIndex.append(e)
        }
    }

    private func nextAction() -> ParseStep {
        while actionIndex < actions.count {
            let a = actions[actionIndex]
            actionIndex += 1
            switch a {
            case .consume(let n):
                if n > 0 { return .consume(n) }
            case .packets(let byteCount, let count, let descriptions):
                if byteCount > 0 && count > 0 { return .packets(byteCount: byteCount, packetCount: count, descriptions: descriptions) }
            case .owned(let data, let descriptions):
                if !data.isEmpty && !descriptions.isEmpty { return .ownedPackets(data: data, descriptions: descriptions) }
            }
        }
        actions.removeAll(keepingCapacity: true)
        actionIndex = 0
        state = .clusterChild
        return .consume(0)
    }

    // MARK: Time

    /// A time in TimestampScale units as a presentation time in frames (0 = the first
    /// frame played, after the priming).
    func ptsFrames(ofTicks ticks: Int64) -> Int64 {
        let rate = audio?.format.sampleRate ?? 0
        let f = (Double(ticks) * Double(segmentInfo.timestampScale) * rate / 1e9).rounded()
        let frames = f.isFinite ? Int64(max(-1e15, min(1e15, f))) : 0
        return frames - (audio?.primingFrames ?? 0)
    }

    /// A presentation time in frames as TimestampScale units (rounded down).
    func ticks(ofFrame frame: Int64) -> Int64 {
        let rate = audio?.format.sampleRate ?? 1
        let t = (Double(frame + (audio?.primingFrames ?? 0)) * 1e9 / rate / Double(segmentInfo.timestampScale)).rounded(.down)
        return t.isFinite ? Int64(max(-1e15, min(1e15, t))) : 0
    }

    // MARK: Properties

    /// At the first Cluster: the properties, then 'redy'. With a fetcher (push path), the
    /// elements the SeekHead places after the Clusters are read first.
    private func prepare(firstCluster start: Int64, _ input: ParserInput) throws(AudioError) {
        if audio == nil, let fetch = input.fetch {
            for pos in seekHead.positions[MKV.tracks] ?? [] where segmentStart + pos > start {
                try fetchElement(at: segmentStart + pos, fetch)
            }
        }
        guard let audio, let track else { throw EBML.fail("no Tracks element before the first Cluster") }
        if !indexing, let fetch = input.fetch {
            for id in [MKV.tags, MKV.chapters, MKV.cues, MKV.attachments] {
                for pos in seekHead.positions[id] ?? [] where segmentStart + pos > start {
                    // Metadata is not worth failing for: a bad position or a failed read leaves it out.
                    do { try fetchElement(at: segmentStart + pos, fetch) } catch {}
                }
            }
        }
        properties.dataFormat = audio.format
        properties.formatList = audio.formatList
        properties.magicCookie = audio.cookie
        properties.channelLayout = audio.channelLayout
        properties.sourceBitDepth = audio.sourceBitDepth
        properties.dataFormatName = audio.name
        properties.info = mergedInfo()
        properties.chapters = chapters ?? []
        properties.albumArtwork = artwork
        properties.dataOffset = start
        properties.maximumPacketSize = audio.kind == .pcm ? audio.format.bytesPerPacket : audio.packetSizeBound
        properties.trackCount = max(1, tracks.filter { $0.type == 2 }.count)
        properties.tracks = tracks.map {
            TrackSummary(id: UInt32(clamping: $0.number), kind: $0.kindName, codec: $0.codecID,
                         format: $0.number == track.number ? audio.format : nil, isSelected: $0.number == track.number)
        }
        if audio.kind == .opus, track.seekPreRoll > 0 {
            // SeekPreRoll in packets of 20 ms, for when the packets' own durations are not known.
            properties.rollDistance = Int64((Double(track.seekPreRoll) / 20e6).rounded(.up))
        }
        becomeReady(announcing: MatroskaParser.announcementOrder)
    }

    /// The gapless numbers: Opus's CodecDelay as priming, the last block's DiscardPadding
    /// as remainder, FLAC's STREAMINFO total where it gives one.
    private func packetTableInfo() -> PacketTableInfo {
        let priming = audio?.primingFrames ?? 0
        var total = totalFrames
        if hasResumed, let p = position { total = max(0, p + priming) }
        total = min(1 << 56, max(0, total))
        let primed = min(total, priming)
        var remainder = min(total - primed, trailingPadding)
        if let a = audio, a.kind == .flac, a.flacTotalSamples > 0, a.flacTotalSamples <= total {
            remainder = total - a.flacTotalSamples
        }
        return PacketTableInfo(numberValidFrames: total - primed - remainder, primingFrames: Int32(clamping: primed),
                               remainderFrames: Int32(clamping: remainder))
    }

    private func endOfSegment(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if !isReady {
            guard audio != nil else {
                throw AudioError(.invalidFile, track == nil && tracks.isEmpty ? "Matroska: the file has no Tracks" : "Matroska: no audio track")
            }
            try prepare(firstCluster: input.offset, input)
        }
        finalize()
        state = .done
        return .finished
    }

    private func finalize() {
        guard !finalized, isReady, let audio else { return }
        finalized = true
        let info = packetTableInfo()
        properties.packetTableInfo = info
        guard indexing else {
            pendingNotifications.append(.packetTableInfo)
            return
        }
        let start = properties.dataOffset ?? 0
        properties.audioDataByteCount = max(0, endOfLastCluster - start)
        if audio.kind == .pcm {
            var first: Int64 = 0
            pcmFrameStarts = packetIndex.map { e in
                defer { first += Int64(e.frames) }
                return first
            }
            properties.audioDataPacketCount = totalFrames
            pcmIndexed = true
        } else {
            let stripped = UInt32(track?.strippedHeader?.count ?? 0)
            properties.packetTable = packetIndex.map {
                PacketDescription(startOffset: $0.offset - start, variableFramesInPacket: audio.countsFrames ? $0.frames : 0,
                                  dataByteSize: $0.size + stripped)
            }
            properties.packetTimestamps = packetIndex.map(\.pts)
            properties.audioDataPacketCount = Int64(packetIndex.count)
            properties.maximumPacketSize = largestPacket
        }
        let rate = audio.format.sampleRate
        if totalFrames > 0, rate > 0 {
            let bits = Double(packetBytes) * 8 * rate / Double(totalFrames)
            if bits.isFinite, bits >= 0, bits < Double(UInt32.max) { properties.bitRate = UInt32(bits) }
        }
    }

    // MARK: Damage

    /// A damaged element: before 'redy' the error stands; after it, the parser looks for
    /// the next Cluster.
    private func damaged(_ error: AudioError) throws(AudioError) -> ParseStep {
        guard isReady else { throw error }
        damageCount += 1
        breakContinuity()
        state = .resync
        return .consume(1)
    }

    func breakContinuity() {
        position = nil
        packetNumber = nil
        cluster = nil
        audio?.resetContinuity()
        actions.removeAll()
        actionIndex = 0
    }

    /// Looks for the next Cluster: its ID, a valid size, and a Timestamp or CRC-32 first.
    private func resyncStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        let p = input.bytes
        var i = 0
        while i + 4 <= p.count {
            if p[i] == 0x1F && p[i + 1] == 0x43 && p[i + 2] == 0xB6 && p[i + 3] == 0x75 {
                guard let h = try? EBML.header(p, at: i, maxIDLength: maxIDLength, maxSizeLength: maxSizeLength),
                      i + h.headerSize < p.count
                else {
                    if input.isEndOfStream { break }
                    return i > 0 ? .consume(i) : .needMore
                }
                let next = p[i + h.headerSize]
                let fits = h.size.map { s in segmentEnd.map { input.offset + Int64(i + h.headerSize) + s <= $0 } ?? true } ?? true
                if fits && (next == 0xE7 || next == 0xBF) {
                    state = .segmentChild
                    return .consume(i)
                }
            }
            i += 1
        }
        if input.isEndOfStream {
            endOfLastCluster = max(endOfLastCluster, input.endOffset)
            return input.count > 0 ? .consume(input.count) : try endOfSegment(input)
        }
        let drop = max(0, p.count - 3)
        return drop > 0 ? .consume(drop) : .needMore
    }
}

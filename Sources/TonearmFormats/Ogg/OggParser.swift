import TonearmCore

/// One audio packet of an Ogg stream, as the parser found it.
struct OggPacketEntry: Sendable, Equatable {
    /// Absolute file offset of the packet's first byte.
    var offset: Int64
    var size: UInt32
    /// Frames the packet decodes to (Vorbis: 0 for the first packet after the start or a gap).
    var frames: UInt32
    /// Presentation time of the packet's first frame, in frames at the format's rate, where 0
    /// is the first frame to play: the granule position where the packet begins, less Opus's
    /// pre-skip. Negative for packets that decode to priming.
    var pts: Int64
    /// The byte ranges of a packet that continues across pages (nil when it lies in one page).
    var pieces: [Range<Int64>]?
    /// Absolute offset of the page where the packet begins: where a reader can start from.
    var page: Int64 = 0
}

/// The Ogg parser ('Oggs', a Tonearm extension: Apple has no Ogg type): pages (RFC 3533),
/// logical streams, and the Vorbis, Opus, FLAC and Speex mappings.
///
/// - **Pages.** Each page must be whole in the input before it is used, and its CRC-32 must
///   be right. A page that is not (a wrong capture pattern, version or CRC) is dropped, and
///   the parser searches for the next `OggS` that begins a page with a right CRC. A gap in a
///   stream's page sequence numbers drops the packet that was being put together.
/// - **Streams.** The first audio stream of the first BOS group is the one reported; other
///   streams (Theora, Skeleton, a second audio stream) are skipped page by page.
/// - **Chains.** A BOS page after the BOS group (RFC 3533 §4, a new link) starts a new stream:
///   on the push path its headers give a new DataFormat, magic cookie and info dictionary,
///   announced after 'redy' as 'dfmt', 'mgic' (and 'cmap' when it changes) and 'info', before
///   the new link's first packet. A decoder treats it as a discontinuity: the packets before
///   and after it belong to different streams. AudioFile reports the first link only.
/// - **Timing.** Frames per packet come from each codec (Vorbis mode block sizes, the Opus
///   TOC byte, FLAC frame headers, Speex's fixed count); granule positions anchor them in time
///   (``OggPacketEntry/pts``). PacketTableInfo follows from the first audio page's granule
///   (start trimming), Opus's pre-skip (priming) and the last granule (end trimming): exact on
///   the random-access path, which reads every page. On the push path each link announces
///   'pnfo' twice, before the packets it applies to: its priming (no valid-frame count) at its
///   first audio page, and the whole table at its last page (EOS).
/// - **Seeking.** ``byteOffset(ofPacket:)`` answers the page where a packet begins (exact on
///   the random-access path and, on the push path, for packets already read in order; else an
///   estimate, flagged); ``seekOffset(toFrame:fetch:sourceSize:)`` bisects granule positions.
///   After ``resume(at:)`` the packets that begin on that page or later come out, timed again
///   from the next granule position.
/// - **Packets that span pages.** A packet that lies in one page is handed on from the input
///   as it is; one continued across pages is put together and handed on as
///   `ParseStep.ownedPackets`. On the random-access path the packet table gives each packet's
///   first byte, and AudioFile reads packets through ``readPackets(startingAt:count:into:descriptions:read:)``,
///   which gathers the pieces.
public final class OggParser: PropertyStoringParser {
    public var properties = FileProperties(fileType: .ogg)
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []

    /// The largest packet put together; a larger one is a limit error.
    public static let maximumPacketSize = 16 << 20
    /// The most packets the random-access path indexes (about 23 hours of 20-ms Opus).
    public static let maximumPacketCount = 1 << 22
    /// The most other logical streams remembered by name, for messages.
    static let maximumNamedStreams = 16

    /// Pages dropped because they were damaged (bad CRC or header), and gaps in page sequence numbers.
    public private(set) var damagedPageCount = 0
    public private(set) var sequenceGapCount = 0
    /// Links (chained streams) seen so far, counting the first.
    public private(set) var linkCount = 0

    /// Sees every audio packet with its bytes, in order, on both paths (tests use it to check
    /// every packet against what the driver delivers).
    var packetObserver: ((OggPacketEntry, [UInt8]) -> Void)?

    /// The audio packets of the first link, on the random-access path.
    private(set) var packetIndex: [OggPacketEntry] = []
    /// Push path, first link: each page on which a packet begins, with the number of the first
    /// such packet, while the numbering is known (from the start, or after a seek to one of
    /// these pages). Seeks back to a packet already seen are exact with it.
    private(set) var pageStarts: [(offset: Int64, packet: Int64)] = []
    /// The number of the next packet of the first link; nil when unknown (after a gap).
    private var packetNumber: Int64? = 0

    /// The highest number of a packet of the first link that began on a page in ``pageStarts``
    /// (one still being put together included); -1 before any.
    private(set) var indexedThrough: Int64 = -1

    /// Packets and the bytes they span in the file so far, for estimates.
    var packetsSeen: (count: Int64, bytes: Int64) {
        (link.packetCount, max(0, link.endOfLastPage - (properties.dataOffset ?? link.endOfLastPage)))
    }

    private enum Mode: Equatable {
        /// A page begins at the input's first byte.
        case page
        /// Looking for the next capture pattern from this index of the input.
        case resync(from: Int)
        /// The actions of the page being handed on.
        case actions
        case done
    }

    private enum Action {
        case consume(Int)
        /// In-page packets, contiguous: `byteCount` bytes with their descriptions.
        case packets(byteCount: Int, descriptions: [PacketDescription])
        /// A packet put together from several pages (see the type's notes).
        case assembled([UInt8], PacketDescription)
        /// Sets properties and queues notifications at this point of the page.
        case notify(() -> Void)
        /// The random-access scan has what it needs.
        case finish
    }

    private struct Link {
        var serial: UInt32?
        var codec: OggCodec?
        var otherStreams: [String] = []
        var audioStreams = 0
        /// A page other than a BOS page was seen: a later BOS page starts a new link.
        var pastBOSGroup = false
        var ended = false
        var finalized = false
        var expectedSequence: UInt32?
        /// The packet being put together, its first byte's offset and its pieces.
        var assembly: [UInt8]?
        var assemblyPieces: [Range<Int64>] = []
        var assemblyPage: Int64 = 0
        /// Granule position where the next packet begins; nil until anchored (start, gaps).
        var position: Int64?
        /// Granule position where the first packet begins (negative: frames to trim).
        var base: Int64?
        var lastGranule: Int64?
        var totalFrames: Int64 = 0
        var packetCount: Int64 = 0
        var packetBytes: Int64 = 0
        var largestPacket: UInt32 = 0
        var endOfLastPage: Int64 = 0
    }

    private var mode = Mode.page
    private var actions: [Action] = []
    private var actionIndex = 0
    private var link = Link()
    /// True for the scan of AudioFile (the input's `wantsPackets` is false).
    private var indexing = false

    public init() {}

    /// The serial number of the stream being reported, once its BOS page was read.
    var selectedSerial: UInt32? { link.serial }
    /// Opus's pre-skip for the stream being reported (0 for the other codecs).
    var selectedPreSkip: Int64 { link.codec?.preSkip ?? 0 }

    // MARK: Stepping

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        indexing = !input.wantsPackets
        switch mode {
        case .done:
            return .finished
        case .actions:
            return try nextAction(input)
        case .resync(let from):
            return try resync(input, from: from)
        case .page:
            if input.count == 0 && input.isEndOfStream { return try endOfData(input) }
            switch OggPage.scan(input.bytes) {
            case .needMore:
                guard input.isEndOfStream else { return .needMore }
                // The page claims more bytes than the stream has left.
                damagedPageCount += 1
                return try resync(input, from: 1)
            case .invalid:
                damagedPageCount += 1
                return try resync(input, from: 1)
            case .page(let page):
                try handle(page, input: input)
                mode = .actions
                return try nextAction(input)
            }
        }
    }

    /// Skips to the next capture pattern. Nothing is forgotten here: the next page of the
    /// stream says, by its sequence number, whether a page of it was lost.
    private func resync(_ input: ParserInput, from: Int) throws(AudioError) -> ParseStep {
        mode = .resync(from: 0)
        if let i = OggPage.nextCapture(in: input.bytes, from: from) {
            mode = .page
            return i == 0 ? try step(input) : .consume(i)
        }
        if input.isEndOfStream {
            mode = .page
            return input.count > 0 ? .consume(input.count) : try endOfData(input)
        }
        // Keep the last bytes: they may begin the next capture pattern.
        let drop = max(0, input.count - 3)
        return drop > 0 ? .consume(drop) : .needMore
    }

    private func nextAction(_ input: ParserInput) throws(AudioError) -> ParseStep {
        while actionIndex < actions.count {
            let a = actions[actionIndex]
            actionIndex += 1
            switch a {
            case .consume(let n):
                if n > 0 { return .consume(n) }
            case .packets(let byteCount, let descriptions):
                return .packets(byteCount: byteCount, packetCount: descriptions.count, descriptions: descriptions)
            case .assembled(let data, let d):
                return .ownedPackets(data: data, descriptions: [d])
            case .notify(let apply):
                apply()
            case .finish:
                actions.removeAll()
                actionIndex = 0
                mode = .done
                return .finished
            }
        }
        actions.removeAll(keepingCapacity: true)
        actionIndex = 0
        mode = .page
        return .consume(0)
    }

    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady else { throw AudioError(.illegalOperation, "cannot resume before the headers are read") }
        guard offset >= 0 else { throw AudioError(.invalidPacketOffset, "byte \(offset) is negative") }
        actions.removeAll()
        actionIndex = 0
        mode = .resync(from: 0)
        breakContinuity()
        link.ended = false
        link.finalized = false
        // From the first audio page on, the times are those of the stream's start.
        if let start = properties.dataOffset, offset <= start, let base = link.base { link.position = base }
        // At a page whose packets are numbered, the numbering goes on.
        if linkCount <= 1, let i = OggParser.lastIndex(in: pageStarts, where: { $0.offset <= offset }),
           pageStarts[i].offset == offset
        {
            packetNumber = pageStarts[i].packet
        } else if let start = properties.dataOffset, offset <= start, linkCount <= 1 {
            packetNumber = 0
        }
    }

    /// The last index whose element satisfies a predicate that holds for a prefix of the array.
    static func lastIndex<T>(in array: [T], where holds: (T) -> Bool) -> Int? {
        var lo = 0, hi = array.count  // holds for [0, lo), fails for [hi, count)
        while lo < hi {
            let mid = (lo + hi) / 2
            if holds(array[mid]) { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 ? lo - 1 : nil
    }

    /// After lost bytes: the packet being put together is gone, and time is anchored again
    /// at the next page that ends a packet.
    private func breakContinuity() {
        link.assembly = nil
        link.assemblyPieces = []
        packetNumber = nil
        link.expectedSequence = nil
        if link.base != nil { link.position = nil }
        link.codec?.resetContinuity()
    }

    // MARK: Pages

    private func handle(_ page: OggPage, input: ParserInput) throws(AudioError) {
        let pageOffset = input.offset
        let body = UnsafeRawBufferPointer(rebasing: input.bytes[page.headerSize..<page.size])
        actions = [.consume(page.headerSize)]
        actionIndex = 0

        if page.isFirst {
            if linkCount == 0 {
                linkCount = 1
            } else if link.pastBOSGroup || link.ended {
                // RFC 3533 §4: a BOS page after the group of BOS pages begins a new link.
                try finalizeLink()
                if indexing {
                    actions = [.finish]
                    return
                }
                link = Link()
                linkCount += 1
            }
            try handleFirstPage(page, body: body, pageOffset: pageOffset)
            actions.append(.consume(page.bodySize))
            return
        }
        link.pastBOSGroup = true
        guard let serial = link.serial, page.serial == serial, !link.ended else {
            if link.serial == nil && linkCount <= 1 {
                let others = link.otherStreams.isEmpty ? "" : " (it has: \(link.otherStreams.joined(separator: ", ")))"
                throw AudioError(.unsupportedDataFormat, "the Ogg data has no Vorbis, Opus, FLAC or Speex stream\(others)")
            }
            actions.append(.consume(page.bodySize))
            return
        }
        if let expected = link.expectedSequence, expected != page.sequence {
            sequenceGapCount += 1
            breakContinuity()
        }
        link.expectedSequence = page.sequence &+ 1
        try handleStreamPage(page, body: body, pageOffset: pageOffset)
    }

    private func handleFirstPage(_ page: OggPage, body: UnsafeRawBufferPointer, pageOffset: Int64) throws(AudioError) {
        // The first packet of a stream fills its BOS page alone (RFC 3533 §4, and every mapping).
        guard let first = page.pieces.first, first.completes else {
            link.otherStreams.append("a stream with no whole first packet")
            return
        }
        let packet = Array(UnsafeRawBufferPointer(rebasing: body[first.start..<first.start + first.size]))
        let kind = OggCodecKind.identify(packet)
        let listed = linkCount <= 1 && properties.tracks.count < OggParser.maximumNamedStreams
        if case .other(let name) = kind {
            if link.otherStreams.count < OggParser.maximumNamedStreams { link.otherStreams.append(name) }
            let streamKind = name == "Theora" || name == "Dirac" || name == "VP8" ? "video" : name == "Skeleton" ? "index" : name == "Kate" ? "text" : "other"
            if listed { properties.tracks.append(TrackSummary(id: page.serial, kind: streamKind, codec: name)) }
            return
        }
        link.audioStreams += 1
        if listed {
            properties.tracks.append(TrackSummary(id: page.serial, kind: "audio", codec: kind.name, isSelected: link.serial == nil))
        }
        guard link.serial == nil else { return }
        link.serial = page.serial
        link.expectedSequence = page.sequence &+ 1
        var codec = OggCodec(kind: kind)
        try codec.takeHeader(packet)
        link.codec = codec
        if page.isLast { link.ended = true }
        if codec.isComplete { try headersComplete(dataOffset: pageOffset + Int64(page.size)) }
    }

    /// An audio packet found on a page, before its time is known.
    private struct Found {
        var entry: OggPacketEntry
        /// Where it lies in the page, when it lies in one page.
        var inPage: Range<Int>?
        /// The bytes of a packet put together from several pages.
        var assembled: [UInt8]?
        /// A copy of an in-page packet's bytes, for the packet observer.
        var observed: [UInt8]?
    }

    private func handleStreamPage(_ page: OggPage, body: UnsafeRawBufferPointer, pageOffset: Int64) throws(AudioError) {
        let bodyOffset = pageOffset + Int64(page.headerSize)
        // The page's pieces in order: bytes to pass over, and audio packets.
        var layout: [(skip: Int, found: Int?)] = []
        var found: [Found] = []
        var frames: Int64 = 0
        let numberBefore = packetNumber

        for piece in page.pieces {
            let bytes = UnsafeRawBufferPointer(rebasing: body[piece.start..<piece.start + piece.size])
            let absolute = bodyOffset + Int64(piece.start)
            if piece.continues {
                guard link.assembly != nil else {
                    // The start of this packet was lost (a gap, or the stream was joined here).
                    layout.append((piece.size, nil))
                    continue
                }
                guard link.assembly!.count + piece.size <= OggParser.maximumPacketSize else {
                    throw AudioError.limit("an Ogg packet is larger than \(OggParser.maximumPacketSize) bytes")
                }
                link.assembly!.append(contentsOf: bytes)
                link.assemblyPieces.append(absolute..<absolute + Int64(piece.size))
                layout.append((piece.size, nil))
                if piece.completes {
                    let data = link.assembly!
                    let pieces = link.assemblyPieces
                    link.assembly = nil
                    link.assemblyPieces = []
                    if var f = try takePacket(data: data, offset: pieces[0].lowerBound, pieces: pieces, pageOffset: pageOffset, page: page) {
                        f.entry.page = link.assemblyPage
                        frames += Int64(f.entry.frames)
                        found.append(f)
                        layout.append((0, found.count - 1))
                    }
                }
                continue
            }
            if link.assembly != nil {
                // The page says no packet continues, but one was left open: it is lost.
                link.assembly = nil
                link.assemblyPieces = []
            }
            if !piece.completes {
                guard piece.size <= OggParser.maximumPacketSize else {
                    throw AudioError.limit("an Ogg packet is larger than \(OggParser.maximumPacketSize) bytes")
                }
                link.assembly = Array(bytes)
                link.assemblyPieces = [absolute..<absolute + Int64(piece.size)]
                link.assemblyPage = pageOffset
                layout.append((piece.size, nil))
                continue
            }
            if var f = try takePacket(bytes: bytes, offset: absolute, pageOffset: pageOffset, page: page) {
                f.inPage = piece.start..<piece.start + piece.size
                f.entry.page = pageOffset
                frames += Int64(f.entry.frames)
                found.append(f)
                layout.append((0, found.count - 1))
            } else {
                layout.append((piece.size, nil))
            }
        }
        let anchoring = link.base == nil
        try placeInTime(&found, frames: frames, page: page)
        if !found.isEmpty {
            link.endOfLastPage = pageOffset + Int64(page.size)
            // Push path: the trimming comes before the packets it applies to. The link's
            // priming at its first audio page, and all of it at its last.
            if !indexing && page.isLast {
                link.ended = true
                try finalizeLink()
            } else if !indexing && anchoring {
                let priming = (link.codec?.preSkip ?? 0) + max(0, -(link.base ?? 0))
                announce(PacketTableInfo(numberValidFrames: 0, primingFrames: Int32(clamping: priming), remainderFrames: 0))
            }
        }
        if !indexing, linkCount <= 1, let first = numberBefore, pageOffset > (pageStarts.last?.offset ?? -1),
           pageStarts.count < OggParser.maximumPacketCount
        {
            // The first packet that begins on this page: a whole one, or the one left open at its end.
            if let i = found.firstIndex(where: { $0.entry.page == pageOffset }) {
                pageStarts.append((pageOffset, first + Int64(i)))
            } else if link.assembly != nil, link.assemblyPage == pageOffset {
                pageStarts.append((pageOffset, first + Int64(found.count)))
            }
        }
        for f in found { try record(f) }
        if !indexing, linkCount <= 1, let n = packetNumber {
            indexedThrough = max(indexedThrough, link.assembly != nil ? n : n - 1)
        }

        // Turn the layout into actions: runs of in-page packets become one step each.
        var run: (start: Int, end: Int, descriptions: [PacketDescription])?
        func flush() {
            if let r = run { actions.append(.packets(byteCount: r.end - r.start, descriptions: r.descriptions)) }
            run = nil
        }
        var cursor = 0  // bytes of the body accounted for
        for (skip, index) in layout {
            guard let index else {
                flush()
                actions.append(.consume(skip))
                cursor += skip
                continue
            }
            let f = found[index]
            if indexing {
                if let range = f.inPage { actions.append(.consume(range.count)); cursor += range.count }
                continue
            }
            let d = PacketDescription(startOffset: 0, variableFramesInPacket: f.entry.frames, dataByteSize: f.entry.size)
            if let range = f.inPage {
                if run == nil { run = (range.lowerBound, range.lowerBound, []) }
                var desc = d
                desc.startOffset = Int64(range.lowerBound - run!.start)
                run!.descriptions.append(desc)
                run!.end = range.upperBound
                cursor += range.count
            } else if let data = f.assembled {
                flush()
                actions.append(.assembled(data, d))
            }
        }
        flush()
        if cursor != page.bodySize { actions.append(.consume(page.bodySize - cursor)) }

        if page.isLast {
            link.ended = true
            try finalizeLink()
            if indexing { actions.append(.finish) }
        }
    }

    /// A whole packet of the selected stream: a header, or an audio packet (returned).
    private func takePacket(bytes: UnsafeRawBufferPointer, offset: Int64, pageOffset: Int64, page: OggPage) throws(AudioError) -> Found? {
        guard var codec = link.codec else { return nil }
        if !codec.isComplete {
            let packet = Array(bytes)
            if codec.isAudioPacket(packet) {
                codec.endHeadersEarly()
                link.codec = codec
                try headersComplete(dataOffset: pageOffset)
            } else {
                try codec.takeHeader(packet)
                link.codec = codec
                if codec.isComplete { try headersComplete(dataOffset: pageOffset + Int64(page.size)) }
                return nil
            }
        }
        // An empty packet decodes to nothing (Vorbis I §A.2 lets a decoder skip it; an Opus
        // packet needs at least its TOC byte): it is passed over, as ffmpeg does.
        guard bytes.count > 0 else { return nil }
        let frames = link.codec!.frames(of: bytes)
        return Found(entry: OggPacketEntry(offset: offset, size: UInt32(bytes.count), frames: frames, pts: 0, pieces: nil),
                     observed: packetObserver == nil ? nil : Array(bytes))
    }

    private func takePacket(data: [UInt8], offset: Int64, pieces: [Range<Int64>], pageOffset: Int64, page: OggPage) throws(AudioError) -> Found? {
        guard let codec = link.codec else { return nil }
        if !codec.isComplete && !codec.isAudioPacket(data) {
            var c = codec
            try c.takeHeader(data)
            link.codec = c
            if c.isComplete { try headersComplete(dataOffset: pageOffset + Int64(page.size)) }
            return nil
        }
        guard var f = try data.withBytes({ raw throws(AudioError) in
            try takePacket(bytes: raw, offset: offset, pageOffset: pageOffset, page: page)
        }) else { return nil }
        f.entry.pieces = pieces
        f.assembled = data
        f.observed = nil
        return f
    }

    /// Gives the page's packets their times: from the running position, or, where it is not
    /// anchored yet, back from the page's granule position (the end of its last packet).
    private func placeInTime(_ found: inout [Found], frames: Int64, page: OggPage) throws(AudioError) {
        guard !found.isEmpty else { return }
        let granule = page.granulePosition
        if link.position == nil {
            let start: Int64
            if granule < 0 {
                start = link.base == nil ? 0 : (link.lastGranule ?? 0)
            } else if link.base == nil && page.isLast && granule < frames && link.codec?.kind != .speex {
                // The only audio page is also the last: a short granule trims the end
                // (Vorbis I §A.2; RFC 7845 §4.5), not the start. Speex is the exception: its
                // encoders count their look-ahead out of the granule at the start, and do not
                // pad the end, so the shortfall is priming (as ffmpeg reads it too).
                start = 0
            } else {
                start = granule &- frames
            }
            link.position = start
            if link.base == nil { link.base = start }
        }
        let preSkip = link.codec?.preSkip ?? 0
        for i in found.indices {
            found[i].entry.pts = link.position! &- preSkip
            link.position! &+= Int64(found[i].entry.frames)
        }
        if granule >= 0 { link.lastGranule = granule }
    }

    private func record(_ f: Found) throws(AudioError) {
        if linkCount <= 1 { packetNumber = packetNumber.map { $0 + 1 } }
        link.packetCount += 1
        link.totalFrames += Int64(f.entry.frames)
        link.packetBytes += Int64(f.entry.size)
        link.largestPacket = max(link.largestPacket, f.entry.size)
        packetObserver?(f.entry, f.assembled ?? f.observed ?? [])
        if indexing && linkCount <= 1 {
            guard packetIndex.count < OggParser.maximumPacketCount else {
                throw AudioError.limit("the Ogg stream has more than \(OggParser.maximumPacketCount) packets")
            }
            packetIndex.append(f.entry)
        }
    }

    // MARK: Properties

    private func headersComplete(dataOffset: Int64) throws(AudioError) {
        guard let codec = link.codec, let format = codec.format else { return }
        let firstLink = !isReady
        let old = properties
        properties.dataFormat = format
        properties.magicCookie = codec.cookie
        properties.info = codec.info
        properties.albumArtwork = codec.artwork
        properties.channelLayout = codec.channelLayout
        properties.sourceBitDepth = codec.sourceBitDepth
        properties.dataFormatName = codec.kind.name
        properties.chapters = codec.chapters
        properties.packetTableInfo = nil
        if firstLink {
            if let i = properties.tracks.firstIndex(where: \.isSelected) { properties.tracks[i].format = format }
            properties.dataOffset = dataOffset
            properties.trackCount = max(1, link.audioStreams)
            properties.bitRate = codec.nominalBitRate
            properties.maximumPacketSize = codec.maximumPacketSizeHint
            becomeReady()
            return
        }
        pendingNotifications.append(.dataFormat)
        if old.magicCookie != properties.magicCookie || properties.magicCookie != nil { pendingNotifications.append(.magicCookieData) }
        if old.channelLayout != properties.channelLayout { pendingNotifications.append(.channelLayout) }
        pendingNotifications.append(.infoDictionary)
    }

    /// The gapless numbers of the current link, from its granule positions.
    private func packetTableInfo() -> PacketTableInfo {
        let preSkip = link.codec?.preSkip ?? 0
        let base = link.base ?? 0
        // From the positions rather than a sum of the packets seen, so that it holds after seeks.
        // (Granule positions are untrusted: keep the sums far from overflowing.)
        var total = min(1 << 56, max(0, (link.position ?? base &+ link.totalFrames) &- base))
        if let fpp = link.codec?.format?.framesPerPacket, fpp > 0 {
            // With a constant frame count (FLAC with fixed blocks, Speex) every packet counts
            // whole, as for native FLAC: a short last block ends in remainder frames.
            total = (total + Int64(fpp) - 1) / Int64(fpp) * Int64(fpp)
        }
        let priming = min(total, preSkip + max(0, -base))
        var valid = total - priming
        if let last = link.lastGranule {
            valid = min(valid, max(0, last - max(0, base) - preSkip))
        }
        let remainder = total - priming - valid
        return PacketTableInfo(numberValidFrames: valid, primingFrames: Int32(clamping: priming),
                               remainderFrames: Int32(clamping: remainder))
    }

    /// The current link has ended (EOS, a new link, or the end of the data).
    private func finalizeLink() throws(AudioError) {
        guard !link.finalized, let codec = link.codec, codec.isComplete else { return }
        link.finalized = true
        let info = packetTableInfo()
        if indexing {
            guard linkCount <= 1 else { return }
            properties.packetTableInfo = info
            properties.audioDataPacketCount = link.packetCount
            properties.maximumPacketSize = link.largestPacket
            if let start = properties.dataOffset { properties.audioDataByteCount = max(0, link.endOfLastPage - start) }
            properties.packetTimestamps = packetIndex.map(\.pts)
            if let start = properties.dataOffset {
                properties.packetTable = packetIndex.map {
                    PacketDescription(startOffset: $0.offset - start, variableFramesInPacket: $0.frames, dataByteSize: $0.size)
                }
            }
            if properties.bitRate == nil, let rate = properties.dataFormat?.sampleRate, info.totalFrames > 0 {
                let bits = Double(link.packetBytes) * 8 * rate / Double(info.totalFrames)
                if bits.isFinite, bits >= 0, bits < Double(UInt32.max) { properties.bitRate = UInt32(bits) }
            }
            return
        }
        announce(info)
    }

    /// Push path: sets the packet table and announces it at this point of the page.
    private func announce(_ info: PacketTableInfo) {
        actions.append(.notify { [unowned self] in
            properties.packetTableInfo = info
            pendingNotifications.append(.packetTableInfo)
        })
    }

    private func endOfData(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if !isReady {
            if link.serial == nil {
                let others = link.otherStreams.isEmpty ? "" : " (it has: \(link.otherStreams.joined(separator: ", ")))"
                throw AudioError(.invalidFile, "the Ogg data has no Vorbis, Opus, FLAC or Speex stream\(others)")
            }
            throw AudioError(.invalidFile, "the Ogg data ends inside the \(link.codec?.kind.name ?? "codec") headers")
        }
        actions.removeAll()
        actionIndex = 0
        try finalizeLink()
        actions.append(.finish)
        mode = .actions
        return try nextAction(input)
    }
}

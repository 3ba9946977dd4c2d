import TonearmCore

/// One audio packet of a transport stream, on the random-access path.
struct TSPacketEntry: Sendable, Equatable {
    /// Index of its first piece in the parser's piece store.
    var firstPiece: Int
    var size: UInt32
    var frames: UInt32
    /// Absolute offset of the transport packet (its M2TS prefix included) where the PES
    /// that holds the packet's first byte begins: where a reader can start from.
    var pesUnit: Int64
}

/// The MPEG transport stream parser ('mp2t', a Tonearm name: Apple has none): ISO/IEC
/// 13818-1 transport packets of 188 bytes, or 192 (M2TS, a 4-byte arrival time before each)
/// or 204 (16 bytes of Reed-Solomon parity after each), for the audio codecs of
/// ``TSStreamKind``. One state machine serves both paths.
///
/// - **Packets and sync.** The packet size is found from sync bytes (0x47) that line up at
///   one of the three strides. A packet whose sync byte is missing makes the parser search
///   again (``syncLossCount``), and the audio that was being put together is lost.
/// - **Tables.** PAT and PMT sections are put together across packets and used only when
///   their CRC-32 is right; a new version of either is followed. The stream reported is the
///   first audio stream of the first program that has one, or the one ``selection`` names
///   (by PID or by the language of descriptor 0x0A); other streams are skipped.
/// - **PES and continuity.** The PES payloads of the chosen stream are handed, as they
///   arrive, to a framer of its codec (the ADTS, LOAS, MPEG audio and AC-3 parsers' own
///   framing; Opus's control headers): no PES is held whole, and the framer holds at most
///   one frame. A continuity counter that skips (``continuityGapCount``) drops the rest of
///   the PES and the frame being put together, and the framing is searched for again; a
///   repeated packet (the same counter twice) is ignored; the adaptation field's
///   discontinuity_indicator lets the counter jump.
/// - **Packets.** As the codec's own parser gives them for the same frames: AAC access
///   units without their ADTS header (ADTS's format, cookie and format list), whole LOAS
///   frames, whole MPEG audio and AC-3/E-AC-3 frames, and Opus packets without their
///   control header (cookie: an OpusHead, see ``OpusElementaryFramer``). Packets put
///   together from several transport packets are handed on as `ParseStep.ownedPackets`.
/// - **Time.** PTS are unwrapped from 33 bits into a monotonic count; the first packet that
///   begins in a PES takes its PTS, the others follow by their frames
///   (``FileProperties/packetTimestamps`` on the random-access path, in frames from the
///   first PTS).
/// - **Segments.** Bytes that follow on (an HLS segment after another) simply continue.
///   After `.discontinuity` (``resume(at:)``) the tables are read again and a new stream
///   (other PIDs, another codec) may begin: when its format or cookie differs, 'dfmt' and
///   'mgic' (and 'flst', 'cmap') are announced before its first packet.
/// - **Timed ID3.** A stream of type 0x15 is read as ID3v2 tags; a tag with a title (TIT2,
///   and TPE1 for the artist) updates the info dictionary, announced as 'info' on the push
///   path between the packets where it falls. A PRIV frame alone (HLS's
///   transportStreamTimestamp) is not a title. AudioFile reports the first title.
/// - **Random access.** AudioFile reads the whole file once: an exact packet table, read
///   back through ``readPackets(startingAt:count:into:descriptions:read:)``, and seeks to the PES that holds
///   a packet. The push path seeks by an estimate.
/// - **Bounds.** A timed ID3 PES larger than ``maximumID3Size`` is dropped; the random-access
///   path indexes at most ``maximumPacketCount`` packets; sync is searched for in at most
///   ``maximumSyncSearch`` bytes before the stream is refused.
public final class MPEGTSParser: PropertyStoringParser {
    public var properties = FileProperties(fileType: .mpegTS)
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []

    /// The stream reported, as given to ``init(selection:)``.
    public let selection: MPEGTSTrackSelection

    /// The most packets the random-access path indexes (about 24 hours of AAC at 48 kHz).
    public static let maximumPacketCount = 1 << 22
    /// The largest timed ID3 PES read.
    public static let maximumID3Size = 1 << 20
    /// Bytes searched for transport packets, and for an audio stream, before the stream is refused.
    public static let maximumSyncSearch: Int64 = 1 << 20
    public static let maximumSearchForAudio: Int64 = 16 << 20

    /// Gaps in the chosen stream's continuity counters, and losses of packet sync.
    public private(set) var continuityGapCount = 0
    public private(set) var syncLossCount = 0

    /// Sees every audio packet with its bytes, in order, on both paths (for tests).
    var packetObserver: ((ESPacket) -> Void)?

    private enum Mode { case sync, units, actions, done }
    private enum Action {
        case notify(() -> Void)
        case packets([UInt8], [PacketDescription])
        case consume(Int)
        case finish
    }

    private var mode = Mode.sync
    private var actions: [Action] = []
    private var actionIndex = 0
    private var indexing = false
    private var layout = TSLayout.plain

    // Tables
    private var pat = TSSectionAssembler()
    private var patVersion: UInt8?
    private var pmtPIDs: [UInt16] = []
    private var pmtAssemblers: [UInt16: TSSectionAssembler] = [:]
    private var pmtVersions: [UInt16: UInt8] = [:]
    private var programStreams: [UInt16: [TSStream]] = [:]
    private(set) var selected: TSStream?
    private var id3PID: UInt16?

    // The chosen stream's PES
    private struct PESState {
        var expectedCounter: UInt8?
        var header: [UInt8] = []
        var inHeader = false
        /// Payload bytes of the PES still to come; nil when unbounded.
        var remaining: Int?
        /// A PES is being taken (false after a loss, until the next one begins).
        var active = false
        var unit: Int64 = 0
    }
    private var audio = PESState()
    private var framer: TSElementaryFramer?
    /// Elementary-stream offset where the current framer began.
    private var framerBase: Int64 = 0
    private var esOffset: Int64 = 0
    /// The PES begun lately: where each begins in the elementary stream, its unit, its PTS
    /// (unwrapped), and whether a packet took the PTS already.
    private var pesStarts: [(es: Int64, unit: Int64, pts: Int64?, used: Bool)] = []
    private var unwrapper = TimestampUnwrapper()
    /// The first PTS of the stream (90 kHz), the origin of packet times.
    private var originPTS: Int64?
    /// Time of the next packet, in 90 kHz ticks.
    private var nextPTS: Int64?
    private var currentFormat: TSStreamFormat?
    private var firstAudioUnit: Int64?
    private var endTrim: Int64 = 0

    // Timed ID3
    private var id3Buffer: [UInt8]?
    private var sawTitle = false

    // Output of the current batch (push path)
    private var outData: [UInt8] = []
    private var outDescriptions: [PacketDescription] = []

    // The random-access index
    private(set) var packetIndex: [TSPacketEntry] = []
    private(set) var packetPTS: [Int64] = []
    /// The file ranges of the packets' bytes: each packet's pieces follow one another.
    private var pieceOffsets: [Int64] = []
    private var pieceLengths: [UInt8] = []
    /// Elementary-stream bytes not yet in a packet, mapped to the file (indexing only).
    private var esMap: [(es: Int64, file: Int64, length: Int)] = []
    private var esMapHead = 0
    private var endOfLastUnit: Int64 = 0
    private var packetCount: Int64 = 0
    private var packetBytes: Int64 = 0
    private var totalFrames: Int64 = 0

    /// - Parameter selection: which audio stream to report (the first one by default).
    public init(selection: MPEGTSTrackSelection = .first) {
        self.selection = selection
    }

    // MARK: Stepping

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        indexing = !input.wantsPackets
        switch mode {
        case .done: return .finished
        case .actions: return nextAction()
        case .sync: return try syncStep(input)
        case .units: return try unitsStep(input)
        }
    }

    private func syncStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if input.count == 0 && input.isEndOfStream { return try endOfData() }
        if let (start, found) = TSLayout.find(in: input.bytes, from: 0, isEndOfStream: input.isEndOfStream) {
            layout = found
            mode = .units
            return start > 0 ? .consume(start) : try unitsStep(input)
        }
        if !isReady && input.offset > MPEGTSParser.maximumSyncSearch {
            throw AudioError(.invalidFile, "no MPEG-TS packets in the first \(MPEGTSParser.maximumSyncSearch) bytes")
        }
        if input.isEndOfStream {
            return input.count > 0 ? .consume(input.count) : try endOfData()
        }
        // Keep what may begin a run of packets.
        let keep = TSLayout.parity.stride * TSLayout.confirmations
        return input.count > keep ? .consume(input.count - keep) : .needMore
    }

    private func unitsStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        let stride = layout.stride, o = layout.syncOffset
        let b = input.bytes
        var used = 0
        var count = 0
        // A whole unit, or at the end a last one whose parity (204-byte packets) is missing.
        while (used + stride <= b.count || (input.isEndOfStream && used + o + 188 <= b.count)) && count < 256 {
            guard b[used + o] == 0x47 else {
                syncLossCount += 1
                breakContinuity()
                mode = .sync
                break
            }
            let unit = input.offset + Int64(used)
            try handle(UnsafeRawBufferPointer(rebasing: b[(used + o)..<(used + o + 188)]), unit: unit, fileOffset: unit + Int64(o))
            used = min(b.count, used + stride)
            endOfLastUnit = input.offset + Int64(used)
            count += 1
        }
        if !isReady, selected == nil, input.offset + Int64(used) > MPEGTSParser.maximumSearchForAudio {
            throw AudioError(.unsupportedDataFormat, "no audio stream in the first \(MPEGTSParser.maximumSearchForAudio) bytes of the MPEG-TS data")
        }
        if count == 0 && mode == .units {
            guard input.isEndOfStream else { return .needMore }
            if input.count > 0 { return .consume(input.count) }
            return try endOfData()
        }
        flushOutput()
        actions.append(.consume(used))
        resyncAfterActions = mode == .sync
        mode = .actions
        return nextAction()
    }

    /// The actions were queued by a batch that ended in lost sync.
    private var resyncAfterActions = false

    private func nextAction() -> ParseStep {
        while actionIndex < actions.count {
            let a = actions[actionIndex]
            actionIndex += 1
            switch a {
            case .notify(let apply):
                apply()
            case .packets(let data, let descriptions):
                return .ownedPackets(data: data, descriptions: descriptions)
            case .consume(let n):
                if n > 0 { return .consume(n) }
            case .finish:
                actions.removeAll()
                actionIndex = 0
                mode = .done
                return .finished
            }
        }
        actions.removeAll(keepingCapacity: true)
        actionIndex = 0
        mode = resyncAfterActions ? .sync : .units
        resyncAfterActions = false
        return .consume(0)
    }

    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady else { throw AudioError(.illegalOperation, "cannot resume before the stream's format is known") }
        guard offset >= 0 else { throw AudioError(.invalidPacketOffset, "byte \(offset) is negative") }
        actions.removeAll()
        actionIndex = 0
        outData.removeAll()
        outDescriptions.removeAll()
        resyncAfterActions = false
        mode = .sync
        // The bytes may begin a new stream (an HLS discontinuity): its tables are read
        // afresh, its times start a new base, and its framing is found again.
        pat = TSSectionAssembler()
        patVersion = nil
        pmtAssemblers = [:]
        pmtVersions = [:]
        audio = PESState()
        unwrapper.reset()
        pesStarts.removeAll()
        nextPTS = nil
        if let kind = selected?.kind { startFramer(kind) }
    }

    /// After lost bytes: the rest of the PES and the frame being put together are gone.
    private func breakContinuity() {
        audio.active = false
        audio.expectedCounter = nil
        framer?.lose()
        nextPTS = nil
    }

    private func startFramer(_ kind: TSStreamKind) {
        framer = kind.makeFramer()
        framerBase = esOffset
    }

    // MARK: Transport packets

    private func handle(_ p: UnsafeRawBufferPointer, unit: Int64, fileOffset: Int64) throws(AudioError) {
        guard let h = TSPacketHeader(p), !h.transportError else { return }
        let payload = UnsafeRawBufferPointer(rebasing: p[min(188, h.payloadStart)...])
        if h.pid == 0 {
            guard h.hasPayload else { return }
            for s in pat.take(payload, header: h) { takePAT(s) }
        } else if let pid = selected?.pid, h.pid == pid {
            try takeAudio(h, payload: payload, unit: unit, payloadOffset: fileOffset + Int64(h.payloadStart))
        } else if h.pid == id3PID {
            if h.hasPayload { takeID3(h, payload: payload) }
        } else if pmtPIDs.contains(h.pid) {
            guard h.hasPayload else { return }
            var a = pmtAssemblers[h.pid] ?? TSSectionAssembler()
            let sections = a.take(payload, header: h)
            pmtAssemblers[h.pid] = a
            for s in sections { takePMT(s, pid: h.pid) }
        }
    }

    private func takePAT(_ s: [UInt8]) {
        guard let (version, pids) = TSTables.programs(s), version != patVersion || pids != pmtPIDs else { return }
        patVersion = version
        pmtPIDs = Array(pids.prefix(64))
        programStreams = programStreams.filter { pmtPIDs.contains($0.key) }
    }

    private func takePMT(_ s: [UInt8], pid: UInt16) {
        guard let (version, streams) = TSTables.streams(s) else { return }
        if pmtVersions[pid] == version && programStreams[pid] == streams { return }
        pmtVersions[pid] = version
        programStreams[pid] = streams
        chooseStream()
    }

    /// The first program (in the PAT's order) with an audio stream gives the stream.
    private func chooseStream() {
        for pmt in pmtPIDs {
            guard let streams = programStreams[pmt], let chosen = selection.choose(streams) else { continue }
            id3PID = streams.first { $0.kind == .id3 }?.pid
            if !isReady || properties.tracks.isEmpty {
                properties.tracks = streams.map {
                    TrackSummary(id: UInt32($0.pid), kind: $0.kind.isAudio ? "audio" : $0.kind == .video ? "video" : $0.kind == .id3 ? "metadata" : "data",
                                 codec: $0.kind.name, isSelected: $0.pid == chosen.pid)
                }
                properties.trackCount = max(1, streams.filter(\.kind.isAudio).count)
            }
            if chosen != selected {
                let sameCodec = selected?.kind == chosen.kind
                selected = chosen
                audio = PESState()
                if !(sameCodec && framer != nil) { startFramer(chosen.kind) }
            }
            return
        }
    }

    // MARK: Audio

    private func takeAudio(_ h: TSPacketHeader, payload: UnsafeRawBufferPointer, unit: Int64, payloadOffset: Int64) throws(AudioError) {
        guard h.hasPayload else { return }
        if let e = audio.expectedCounter, e != h.continuityCounter, !h.discontinuity {
            if (h.continuityCounter &+ 1) & 0xF == e { return }  // the same packet again
            continuityGapCount += 1
            breakContinuity()
        }
        audio.expectedCounter = (h.continuityCounter &+ 1) & 0xF
        if h.payloadUnitStart {
            audio.header.removeAll(keepingCapacity: true)
            audio.inHeader = true
            audio.active = true
            audio.unit = unit
        }
        guard audio.active else { return }
        guard audio.inHeader else {
            try feed(payload, fileOffset: payloadOffset)
            return
        }
        audio.header += payload
        switch audio.header.withUnsafeBytes({ PESHeader.read($0) }) {
        case .needMore:
            if audio.header.count > 300 { audio.active = false }
        case .invalid:
            audio.active = false
            framer?.lose()
        case .header(let ph):
            audio.inHeader = false
            audio.remaining = ph.packetLength == 0 ? nil : ph.packetLength + 6 - ph.headerLength
            let pts = ph.pts.map { unwrapper.unwrap($0) }
            if originPTS == nil, let pts { originPTS = pts }
            pesStarts.append((esOffset, unit, pts, false))
            if pesStarts.count > 4096 { pesStarts.removeFirst(pesStarts.count - 4096) }
            let restCount = audio.header.count - ph.headerLength
            let rest = Array(audio.header[ph.headerLength...])
            audio.header.removeAll(keepingCapacity: true)
            try rest.withBytes { raw throws(AudioError) in
                try feed(raw, fileOffset: payloadOffset + Int64(payload.count - restCount))
            }
        }
    }

    private func feed(_ bytes: UnsafeRawBufferPointer, fileOffset: Int64) throws(AudioError) {
        var b = bytes
        if let r = audio.remaining {
            b = UnsafeRawBufferPointer(rebasing: b[..<min(b.count, r)])
            audio.remaining = r - b.count
            if r - b.count == 0 { audio.active = false }
        }
        guard !b.isEmpty else { return }
        if framer == nil, let s = selected, s.kind == .sniffed {
            guard let kind = TSTables.sniff(b) else { return }
            selected?.kind = kind
            startFramer(kind)
        }
        guard let framer else { return }
        if firstAudioUnit == nil { firstAudioUnit = audio.unit }
        if indexing { esMap.append((esOffset, fileOffset, b.count)) }
        esOffset += Int64(b.count)
        try framer.push(b)
        try drain(framer)
    }

    private func drain(_ framer: TSElementaryFramer) throws(AudioError) {
        guard !framer.events.isEmpty else { return }
        let events = framer.events
        framer.events.removeAll()
        for e in events {
            switch e {
            case .configured:
                if let f = framer.format { configured(f) }
            case .packet(var p):
                p.esOffset += framerBase
                try take(p)
            }
        }
        if let opus = framer as? OpusElementaryFramer { endTrim = opus.endTrim }
    }

    private func configured(_ f: TSStreamFormat) {
        let first = currentFormat == nil
        let old = currentFormat
        currentFormat = f
        if first {
            properties.dataOffset = firstAudioUnit ?? 0
            apply(f)
            if f.priming > 0 && !indexing {
                properties.packetTableInfo = PacketTableInfo(numberValidFrames: 0, primingFrames: Int32(clamping: f.priming), remainderFrames: 0)
            }
            guard !indexing else {
                isReady = true
                return
            }
            flushOutput()
            actions.append(.notify { [unowned self] in
                becomeReady(announcing: [.fileFormat, .dataFormat, .formatList, .magicCookieData, .channelLayout, .infoDictionary,
                                         .packetTableInfo, .dataOffset])
            })
            return
        }
        guard !indexing, let old, old != f else { return }
        flushOutput()
        actions.append(.notify { [unowned self] in
            apply(f)
            pendingNotifications.append(.dataFormat)
            if old.formatList != f.formatList { pendingNotifications.append(.formatList) }
            pendingNotifications.append(.magicCookieData)
            if old.channelLayout != f.channelLayout { pendingNotifications.append(.channelLayout) }
            if f.priming > 0 || old.priming > 0 {
                properties.packetTableInfo = PacketTableInfo(numberValidFrames: 0, primingFrames: Int32(clamping: f.priming), remainderFrames: 0)
                pendingNotifications.append(.packetTableInfo)
            }
        })
    }

    private func apply(_ f: TSStreamFormat) {
        properties.dataFormat = f.dataFormat
        properties.magicCookie = f.magicCookie
        properties.formatList = f.formatList
        properties.channelLayout = f.channelLayout
        properties.dataFormatName = f.name
        if let i = properties.tracks.firstIndex(where: \.isSelected) { properties.tracks[i].format = f.dataFormat }
    }

    /// A packet out of the framer: timed, indexed or handed on.
    private func take(_ p: ESPacket) throws(AudioError) {
        guard let f = currentFormat else { return }
        let frames = p.frames > 0 ? p.frames : f.dataFormat.framesPerPacket
        // The PES that holds the packet's first byte.
        var pesUnit = audio.unit
        if let i = pesStarts.lastIndex(where: { $0.es <= p.esOffset }) {
            pesUnit = pesStarts[i].unit
            if !pesStarts[i].used, let pts = pesStarts[i].pts { nextPTS = pts }
            pesStarts[i].used = true
            if i > 0 { pesStarts.removeFirst(i) }
        }
        let rate = f.dataFormat.sampleRate
        let pts = nextPTS ?? originPTS ?? 0
        if rate > 0 { nextPTS = pts + Int64((Double(frames) * 90000 / rate).rounded()) }
        packetCount += 1
        packetBytes += Int64(p.data.count)
        totalFrames += Int64(frames)
        packetObserver?(p)
        let description = PacketDescription(startOffset: 0, variableFramesInPacket: p.frames, dataByteSize: UInt32(p.data.count))
        guard indexing else {
            var d = description
            d.startOffset = Int64(outData.count)
            outData += p.data
            outDescriptions.append(d)
            return
        }
        guard packetIndex.count < MPEGTSParser.maximumPacketCount else {
            throw AudioError.limit("the MPEG-TS stream has more than \(MPEGTSParser.maximumPacketCount) packets")
        }
        packetIndex.append(TSPacketEntry(firstPiece: pieceOffsets.count, size: UInt32(p.data.count), frames: p.frames, pesUnit: pesUnit))
        packetPTS.append(rate > 0 ? Int64(((Double(pts - (originPTS ?? pts))) * rate / 90000).rounded()) : 0)
        // Its pieces, from the map of the elementary stream.
        var at = p.esOffset, left = p.data.count
        while left > 0, esMapHead < esMap.count {
            let m = esMap[esMapHead]
            if m.es + Int64(m.length) <= at { esMapHead += 1; continue }
            let skip = Int(at - m.es)
            let n = min(left, m.length - skip)
            pieceOffsets.append(m.file + Int64(skip))
            pieceLengths.append(UInt8(n))
            at += Int64(n)
            left -= n
        }
        if esMapHead > 1024 {
            esMap.removeFirst(esMapHead)
            esMapHead = 0
        }
    }

    private func flushOutput() {
        guard !outDescriptions.isEmpty else { return }
        actions.append(.packets(outData, outDescriptions))
        outData = []
        outDescriptions = []
    }

    // MARK: Timed ID3

    private func takeID3(_ h: TSPacketHeader, payload: UnsafeRawBufferPointer) {
        if h.payloadUnitStart {
            if let b = id3Buffer { id3Complete(b) }
            id3Buffer = []
        }
        guard var b = id3Buffer else { return }
        b += payload
        if b.count > MPEGTSParser.maximumID3Size {
            id3Buffer = nil
            return
        }
        id3Buffer = b
        if b.count >= 6 {
            let length = Int(b[4]) << 8 | Int(b[5])
            if length > 0 && b.count >= 6 + length {
                id3Complete(Array(b[..<(6 + length)]))
                id3Buffer = nil
            }
        }
    }

    private func id3Complete(_ pes: [UInt8]) {
        let parsed: (PESHeader.Result, ID3v2.Tag?) = pes.withUnsafeBytes { raw in
            let r = PESHeader.read(raw)
            guard case .header(let h) = r, h.headerLength < raw.count else { return (r, nil) }
            return (r, ID3v2.parse(UnsafeRawBufferPointer(rebasing: raw[h.headerLength...])))
        }
        guard let tag = parsed.1, let title = tag.info[InfoDictionary.title] else { return }
        let artist = tag.info[InfoDictionary.artist]
        if indexing {
            guard !sawTitle else { return }
            sawTitle = true
            properties.info[InfoDictionary.title] = title
            properties.info[InfoDictionary.artist] = artist
            return
        }
        flushOutput()
        actions.append(.notify { [unowned self] in
            properties.info[InfoDictionary.title] = title
            properties.info[InfoDictionary.artist] = artist
            if isReady { pendingNotifications.append(.infoDictionary) }
        })
    }

    // MARK: The end

    private func endOfData() throws(AudioError) -> ParseStep {
        if let framer {
            try framer.finish()
            try drain(framer)
        }
        if let b = id3Buffer {
            id3Complete(b)
            id3Buffer = nil
        }
        guard currentFormat != nil else {
            if selected == nil { throw AudioError(.unsupportedDataFormat, "the MPEG-TS data has no audio stream Tonearm reads") }
            throw AudioError(.invalidFile, "the MPEG-TS audio stream has no frame Tonearm reads")
        }
        if indexing {
            finishIndex()
        } else if let f = currentFormat, f.priming > 0 || endTrim > 0 {
            let info = PacketTableInfo(numberValidFrames: max(0, totalFrames - f.priming - endTrim),
                                       primingFrames: Int32(clamping: f.priming), remainderFrames: Int32(clamping: endTrim))
            flushOutput()
            actions.append(.notify { [unowned self] in
                properties.packetTableInfo = info
                pendingNotifications.append(.packetTableInfo)
            })
        }
        flushOutput()
        actions.append(.finish)
        mode = .actions
        return nextAction()
    }

    private func finishIndex() {
        let start = properties.dataOffset ?? 0
        properties.audioDataPacketCount = Int64(packetIndex.count)
        properties.packetTable = packetIndex.map {
            PacketDescription(startOffset: (pieceOffsets.indices.contains($0.firstPiece) ? pieceOffsets[$0.firstPiece] : start) - start,
                              variableFramesInPacket: $0.frames, dataByteSize: $0.size)
        }
        properties.packetTimestamps = packetPTS
        properties.maximumPacketSize = packetIndex.map(\.size).max() ?? 0
        properties.audioDataByteCount = max(0, endOfLastUnit - start)
        if let f = currentFormat, f.priming > 0 || endTrim > 0 {
            properties.packetTableInfo = PacketTableInfo(numberValidFrames: max(0, totalFrames - f.priming - endTrim),
                                                         primingFrames: Int32(clamping: f.priming), remainderFrames: Int32(clamping: endTrim))
        }
        if let rate = properties.dataFormat?.sampleRate, totalFrames > 0 {
            let bits = Double(packetBytes) * 8 * rate / Double(totalFrames)
            if bits.isFinite, bits >= 0, bits < Double(UInt32.max) { properties.bitRate = UInt32(bits) }
        }
    }
}

extension MPEGTSParser {
    /// The offset, relative to the data offset, of the transport packet where the PES that
    /// holds a packet begins: exact on the random-access path (one past the last packet
    /// answers the end of the data); on the push path an estimate from the packets so far,
    /// flagged. After ``resume(at:)`` there, the packets of that PES come out first.
    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        guard isReady, let dataOffset = properties.dataOffset else { throw AudioError(.valueUnknown, "the stream's format is not known yet") }
        if properties.packetTimestamps != nil {
            if packet < Int64(packetIndex.count) { return (packetIndex[Int(packet)].pesUnit - dataOffset, false) }
            if packet == Int64(packetIndex.count) { return (properties.audioDataByteCount ?? 0, false) }
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(packetIndex.count))")
        }
        let span = endOfLastUnit - dataOffset
        guard packetCount > 0, span > 0 else { throw AudioError(.valueUnknown, "no packet has been seen yet") }
        let estimate = (Double(span) / Double(packetCount) * Double(packet)).rounded(.down)
        let stride = Int64(layout.stride)
        return (Int64(saturating: estimate) / stride * stride, true)
    }

    /// With the packet index (random access), the packet whose time holds the frame; else
    /// the packet at the frame's place by the average frames per packet, estimated.
    public func byteOffset(ofFrame frame: Int64, fetch: ByteRangeFetcher?, sourceSize: Int64?) throws(AudioError)
        -> (offset: Int64, isEstimated: Bool)
    {
        guard frame >= 0 else { throw AudioError(.invalidPacketOffset, "frame \(frame) is negative") }
        let target = frame + Int64(properties.packetTableInfo?.primingFrames ?? 0)
        if let pts = properties.packetTimestamps {
            var lo = 0, hi = pts.count
            while lo < hi { let mid = (lo + hi) / 2; if pts[mid] <= target { lo = mid + 1 } else { hi = mid } }
            return try byteOffset(ofPacket: Int64(max(0, lo - 1)))
        }
        guard packetCount > 0, totalFrames > 0 else { throw AudioError(.valueUnknown, "no packet has been seen yet") }
        let packet = Int64((Double(target) * Double(packetCount) / Double(totalFrames)).rounded(.down))
        return (try byteOffset(ofPacket: packet).offset, true)
    }

    /// Reads whole packets on the random-access path from their pieces in the file.
    /// Descriptions are relative to the bytes; false without the index.
    public func readPackets(startingAt start: Int64, count: Int, into data: inout [UInt8],
                            descriptions: inout [PacketDescription], read: ByteRangeReader) throws(AudioError) -> Bool
    {
        guard properties.packetTimestamps != nil else { return false }
        guard start >= 0, count >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(start), count \(count)") }
        guard start < Int64(packetIndex.count) else {
            throw AudioError(.endOfFile, "packet \(start) is past the last packet (\(packetIndex.count))")
        }
        let end = Int(min(Int64(packetIndex.count), start + Int64(count)))
        let first = packetIndex[Int(start)].firstPiece
        let last = end < packetIndex.count ? packetIndex[end].firstPiece : pieceOffsets.count
        data.removeAll(keepingCapacity: true)
        descriptions.removeAll(keepingCapacity: true)
        // Pieces close together are read at once, then the bytes between them (packet and PES
        // headers, other streams) are closed up in place.
        var i = first
        while i < last {
            var j = i + 1
            while j < last, pieceOffsets[j] - (pieceOffsets[j - 1] + Int64(pieceLengths[j - 1])) <= 1024,
                  pieceOffsets[j] - pieceOffsets[i] < 1 << 20
            {
                j += 1
            }
            let spanStart = pieceOffsets[i]
            let spanEnd = pieceOffsets[j - 1] + Int64(pieceLengths[j - 1])
            let base = data.count
            try data.append(Int(spanEnd - spanStart), bytesAt: spanStart, from: read)
            var to = base
            for k in i..<j {
                let from = base + Int(pieceOffsets[k] - spanStart), n = Int(pieceLengths[k])
                if from != to { data.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: to).copyMemory(from: $0.baseAddress! + from, byteCount: n) } }
                to += n
            }
            data.removeSubrange(to..<data.count)
            i = j
        }
        var at: Int64 = 0
        for k in Int(start)..<end {
            let e = packetIndex[k]
            descriptions.append(PacketDescription(startOffset: at, variableFramesInPacket: e.frames, dataByteSize: e.size))
            at += Int64(e.size)
        }
        return true
    }
}

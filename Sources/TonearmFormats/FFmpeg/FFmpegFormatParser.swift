#if FFmpeg
import TonearmCore
import TonearmFFmpeg

/// A container that libavformat reads and Tonearm does not (with the FFmpeg trait): ASF,
/// MPEG-TS, APE, WavPack, TTA, RealMedia, raw DTS, and anything else with an audio stream
/// (Matroska and WebM are Tonearm's own, Matroska/). It presents the container's best audio stream as any parser does, so
/// AudioFile, AudioFileStream and ExtAudioFile work on it unchanged.
///
/// - AudioFile (random access): libavformat reads through the driver's fetch; opening reads
///   every packet's header once (as `ffprobe -count_packets` does) for an exact packet
///   table, and ``readPackets(startingAt:count:into:descriptions:read:)`` demuxes them again, seeking to the
///   keyframe before the first one asked for.
/// - AudioFileStream (push): libavformat runs on a thread of its own that waits for the
///   pushed bytes (``FFmpegPushDemuxer``); each push returns once they are used up, with the
///   packets they completed.
///
/// libavformat's packets need not lie whole in the file (ASF and MPEG-TS cut them into the
/// container's own packets), so the packet table counts their bytes back to back, from a data
/// offset at the first one's position: AudioFile reads them through ``readPackets(startingAt:count:into:descriptions:read:)``,
/// never by offset. A pushed stream seeks by the packets' positions in the source, which
/// libavformat reports as they pass (estimated further on): on ``resume(at:)`` a new demuxer
/// is fed the container's header, kept from the start of the stream, then the bytes from the
/// new offset (ASF and MPEG-TS resume at a packet there, Matroska at the next cluster).
final class FFmpegFormatParser: PropertyStoringParser {
    var properties: FileProperties
    var isReady = false
    var pendingNotifications: [AudioFilePropertyID] = []
    /// libavformat's demuxer for the type, nil to let it probe.
    private let demuxerName: String?

    // Random access.
    private var demuxer: FFmpegDemuxer?
    private var source: FetchSource?
    /// Per packet: its presentation time (stream time base), frames and position.
    private var index: [(pts: Int64?, frames: Int, position: Int64?)] = []
    /// The packet the demuxer reads next.
    private var cursor = 0
    private var timeBase: (num: Int64, den: Int64) = (1, 1)
    private var sampleRate = 0.0
    /// The frames per packet the codec declares, 0 when they vary.
    private var frameSize = 0

    /// Where the first packet lies, for the data offset.
    private var firstPosition: Int64?

    // Push.
    private var push: FFmpegPushDemuxer?
    /// The frames of the packet before, for a packet that does not say.
    private var lastFrames = 0
    /// The first bytes of a pushed stream, kept until the first packet's position says where
    /// the container's header ends (at most ``maximumHeaderBytes``): what a seek feeds again.
    private var header: [UInt8] = []
    private var headerIsComplete = false
    /// Each packet passed, in order from the first: its position in the source and its frames.
    private var passed: [(position: Int64?, frames: Int)] = []
    /// The number of the next packet to come out, while it is known: after a seek, the first
    /// packet's position names it among those passed, and where none does it stays unknown.
    private var nextPacket: Int? = 0
    private var hasSeeked = false
    private var isFirstAfterSeek = false
    /// After a seek: what to add to libavformat's positions for the source's (the new
    /// demuxer reads the kept header, then the bytes from the seek's offset).
    private var positionShift: Int64 = 0
    /// A packet with no duration, when the codec has no frame size either (APE's), held back
    /// until the next one, or the end, says whether it is the last: the last one's frames are
    /// what is left of the stream's duration.
    private var heldBack: FFmpegPacket?
    /// The stream's start time and duration in its time base, as the container states them.
    private var streamSpan: (start: Int64?, duration: Int64?) = (nil, nil)
    /// The demuxer libavformat chose, for the demuxer a seek starts.
    private var openedFormat: String?
    /// The most header bytes kept for seeking; a stream with more cannot seek.
    static let maximumHeaderBytes = 8 << 20

    init(fileType: AudioFileTypeID, demuxer: String?) {
        properties = FileProperties(fileType: fileType)
        demuxerName = demuxer
    }

    /// The most packets one push answer or one read hands on at once.
    static let batch = 256

    func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        if input.canSeek, let fetch = input.fetch {
            return try randomAccessStep(input, fetch: fetch)
        }
        return try pushStep(input)
    }

    // MARK: Random access

    private func randomAccessStep(_ input: ParserInput, fetch: @escaping ByteRangeFetcher) throws(AudioError) -> ParseStep {
        defer { source?.reader = nil }
        if demuxer == nil {
            let s = FetchSource(size: input.sourceSize)
            s.reader = FetchSource.reader(fetch)
            source = s
            let d = try FFmpegDemuxer(source: s, formatName: demuxerName)
            demuxer = d
            describe(d)
            try scan(d)
            becomeReady(announcing: FileProperties.pcmAnnouncementOrder)
            guard input.wantsPackets else { return .finished }
            try rewind()
        }
        guard input.wantsPackets, let d = demuxer, cursor < index.count else { return .finished }
        source?.reader = FetchSource.reader(fetch)
        let (data, descriptions) = try read(from: d, count: FFmpegFormatParser.batch)
        return descriptions.isEmpty ? .finished : .ownedPackets(data: data, descriptions: descriptions)
    }

    /// Reads every packet's header: the packet table, the durations, the positions.
    private func scan(_ d: FFmpegDemuxer) throws(AudioError) {
        var table: [PacketDescription] = []
        var offset: Int64 = 0, largest = 0
        var lastHasDuration = false
        while let p = try d.readPacket() {
            lastHasDuration = p.duration > 0
            let frames = frames(of: p)
            index.append((p.pts, frames, p.position))
            table.append(PacketDescription(startOffset: offset, variableFramesInPacket: UInt32(clamping: frames),
                                           dataByteSize: UInt32(clamping: p.data.count)))
            offset += Int64(p.data.count)
            largest = max(largest, p.data.count)
            if firstPosition == nil { firstPosition = p.position }
        }
        cursor = index.count
        retimeFromTimestamps(&table)
        // A last packet with no duration and no codec frame size (APE's, whose last frame is
        // short) ends where the stream does, when the container says where that is.
        if !lastHasDuration, frameSize == 0, let end = d.streamDuration, let last = index.last?.pts {
            let n = frames(ofTicks: (d.startTime ?? index[0].pts ?? 0) + end - last)
            if n > 0 {
                index[index.count - 1].frames = Int(n)
                table[table.count - 1].variableFramesInPacket = UInt32(clamping: n)
            }
        }
        properties.packetTable = table
        properties.audioDataPacketCount = Int64(table.count)
        properties.audioDataByteCount = offset
        properties.maximumPacketSize = UInt32(clamping: largest)
        properties.dataOffset = firstPosition ?? 0
        let total = index.reduce(Int64(0)) { $0 + Int64($1.frames) }
        let priming = Int64(demuxer?.parameters.opusPreSkip ?? demuxer?.initialPadding ?? 0)
        if priming > 0 && priming < total {
            properties.packetTableInfo = PacketTableInfo(numberValidFrames: total - priming, primingFrames: Int32(priming))
        }
        if let first = index.first?.pts {
            properties.packetTimestamps = index.map { e in e.pts.map { frames(ofTicks: $0 - first) - priming } ?? -1 }
        }
        if properties.bitRate == nil, total > 0, sampleRate > 0 {
            properties.bitRate = UInt32(clamping: Int64((Double(offset) * 8 * sampleRate / Double(total)).rounded()))
        }
    }

    /// Where every packet has a time and the times rise, each packet's frames are the
    /// difference of its time and the next one's, rounded to samples from the start: a
    /// coarse time base (ASF's milliseconds) rounds each duration down (46 ms for WMA's 2048
    /// frames at 44.1 kHz), but not the times, so the frames add up to the stream's length.
    /// The last packet keeps its duration.
    private func retimeFromTimestamps(_ table: inout [PacketDescription]) {
        guard index.count > 1, let first = index[0].pts else { return }
        var times: [Int64] = []
        times.reserveCapacity(index.count)
        for e in index {
            guard let t = e.pts, times.isEmpty || t > times.last! else { return }
            times.append(t)
        }
        for k in 0..<index.count - 1 {
            let n = Int(frames(ofTicks: times[k + 1] - first) - frames(ofTicks: times[k] - first))
            index[k].frames = n
            table[k].variableFramesInPacket = UInt32(clamping: n)
        }
    }

    /// Packets `cursor ..< cursor + count` from the demuxer, which stands at `cursor`.
    private func read(from d: FFmpegDemuxer, count: Int) throws(AudioError) -> (data: [UInt8], descriptions: [PacketDescription]) {
        var data: [UInt8] = [], descriptions: [PacketDescription] = []
        while descriptions.count < count, cursor < index.count {
            guard let p = try d.readPacket() else {
                throw AudioError(.endOfFile, "the file ended at packet \(cursor) of \(index.count)")
            }
            descriptions.append(PacketDescription(startOffset: Int64(data.count),
                                                  variableFramesInPacket: UInt32(clamping: index[cursor].frames),
                                                  dataByteSize: UInt32(clamping: p.data.count)))
            data += p.data
            cursor += 1
        }
        return (data, descriptions)
    }

    func readPackets(startingAt start: Int64, count: Int, into data: inout [UInt8],
                     descriptions: inout [PacketDescription], read reader: ByteRangeReader) throws(AudioError) -> Bool
    {
        guard let d = demuxer, let source else { return false }
        guard start >= 0, count >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(start), count \(count)") }
        guard start < Int64(index.count) else {
            throw AudioError(.endOfFile, "packet \(start) is past the last packet (\(index.count))")
        }
        // libavformat reads through this call's reader, and only during it.
        (data, descriptions) = try withoutActuallyEscaping(reader) { (r) throws(AudioError) in
            source.reader = r
            defer { source.reader = nil }
            let target = Int(start)
            if target != cursor { try position(d, at: target) }
            // Positioning may have opened the container again.
            return try read(from: demuxer!, count: count)
        }
        return true
    }

    /// Puts the demuxer at packet `target`: a seek to the last keyframe at or before its time,
    /// then packets read and dropped, matched to the index by their times; from the start
    /// when the times do not tell.
    private func position(_ d: FFmpegDemuxer, at target: Int) throws(AudioError) {
        // Near ahead: read on.
        if target > cursor && target - cursor <= 64 {
            while cursor < target { guard try d.readPacket() != nil else { break }; cursor += 1 }
            if cursor == target { return }
        }
        if let pts = index[target].pts, target > 0 {
            try d.seek(toPTS: pts)
            if let p = try d.readPacket(), let k = entry(of: p), k <= target {
                cursor = k + 1
                while cursor < target { guard try d.readPacket() != nil else { break }; cursor += 1 }
                if cursor == target { return }
            }
        }
        try rewind()
        while cursor < target {
            guard try demuxer!.readPacket() != nil else { throw AudioError(.endOfFile, "the file ended before packet \(target)") }
            cursor += 1
        }
    }

    /// The index entry of the first packet read after a seek: the only one at its position,
    /// else the only one with its time (and its position, where both are known); nil when
    /// neither tells. Raw streams (DTS) start their times again from 0 after a seek, so a
    /// time alone may name the wrong packet.
    private func entry(of p: FFmpegPacket) -> Int? {
        if let at = p.position {
            let here = index.indices.filter { index[$0].position == at }
            if here.count == 1 { return here[0] }
        }
        guard let at = p.pts else { return nil }
        let same = index.indices.filter {
            index[$0].pts == at && (p.position == nil || index[$0].position == nil || index[$0].position == p.position)
        }
        return same.count == 1 ? same[0] : nil
    }

    /// Opens the container again, at its first packet: not every demuxer can seek back to
    /// the start (RealMedia's cannot when its packets carry no times).
    private func rewind() throws(AudioError) {
        guard let source else { return }
        demuxer = try FFmpegDemuxer(source: source, formatName: demuxerName)
        cursor = 0
    }

    // MARK: Push

    private func pushStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        let p = push ?? FFmpegPushDemuxer(formatName: demuxerName)
        push = p
        var (events, finished) = p.takeEvents()
        if events.isEmpty && !finished {
            if input.count > 0 {
                if !headerIsComplete && !hasSeeked && header.count + input.count <= FFmpegFormatParser.maximumHeaderBytes
                    && input.offset == Int64(header.count)
                {
                    header.append(contentsOf: input.bytes)
                }
                p.feed(input.bytes)
                return .consume(input.count)
            }
            guard input.isEndOfStream else { return .needMore }
            p.finish()
            (events, finished) = p.takeEvents()
        }
        var data: [UInt8] = [], descriptions: [PacketDescription] = []
        func add(_ packet: FFmpegPacket, frames: Int) {
            record(packet, frames: frames)
            descriptions.append(PacketDescription(startOffset: Int64(data.count), variableFramesInPacket: UInt32(clamping: frames),
                                                  dataByteSize: UInt32(clamping: packet.data.count)))
            data += packet.data
        }
        for e in events {
            switch e {
            case .opened(let d):
                describe(d)
                properties.dataOffset = 0
                openedFormat = d.formatName.split(separator: ",").first.map(String.init)
                streamSpan = (d.startTime, d.streamDuration)
                becomeReady(announcing: FileProperties.pcmAnnouncementOrder)
            case .failed(let error):
                throw error
            case .packet(let packet):
                guard isReady, input.wantsPackets else { continue }
                if let held = heldBack {
                    heldBack = nil
                    add(held, frames: frames(of: held))
                }
                if packet.duration <= 0 && frameSize == 0 {
                    heldBack = packet
                } else {
                    add(packet, frames: frames(of: packet))
                }
            }
        }
        if finished, let held = heldBack {
            heldBack = nil
            add(held, frames: lastFrames(of: held))
        }
        if !descriptions.isEmpty { return .ownedPackets(data: data, descriptions: descriptions) }
        if finished { return .finished }
        return .consume(0)
    }

    /// The last packet's frames, when it has no duration: to the end of the stream, as the
    /// container states it, else as any packet's.
    private func lastFrames(of p: FFmpegPacket) -> Int {
        if let end = streamSpan.duration, let at = p.pts {
            let n = frames(ofTicks: (streamSpan.start ?? 0) + end - at)
            if n > 0 { return Int(clamping: n) }
        }
        return frames(of: p)
    }

    /// Notes a pushed packet's position and frames, for seeking, while its number is known;
    /// before the first seek, its position also says where the container's header ends.
    private func record(_ packet: FFmpegPacket, frames: Int) {
        var position = packet.position
        if hasSeeked {
            position = position.flatMap { $0 >= Int64(header.count) ? $0 + positionShift : nil }
            if isFirstAfterSeek {
                // A container packet may hold several; the new demuxer starts with the first.
                isFirstAfterSeek = false
                nextPacket = position.flatMap { at in passed.firstIndex { $0.position == at } }
            }
        } else if !headerIsComplete, let at = position, at <= Int64(header.count) {
            header.removeSubrange(Int(at)...)
            headerIsComplete = true
        }
        guard let k = nextPacket else { return }
        if k == passed.count { passed.append((position, frames)) }
        nextPacket = k + 1
    }

    /// After a seek in a pushed stream: a new demuxer reads the container's header again,
    /// then the bytes from `offset`. 'dsc!' when the header was not kept (longer than
    /// ``maximumHeaderBytes``, or no packet said where it ends).
    func resume(at offset: Int64) throws(AudioError) {
        guard demuxer == nil else { return }
        guard headerIsComplete else {
            throw AudioError(.discontinuityCantRecover, "the stream's header was not kept, so libavformat cannot start again in the middle")
        }
        hasSeeked = true
        positionShift = offset - Int64(header.count)
        isFirstAfterSeek = true
        heldBack = nil
        let p = FFmpegPushDemuxer(formatName: demuxerName ?? openedFormat)
        header.withUnsafeBytes { p.feed($0) }
        push = p
    }

    /// A pushed stream's packet offset (absolute, the data offset being 0): its position
    /// as libavformat reported it, else a step on from the last known one at the average
    /// packet size (estimated).
    func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        guard demuxer == nil else { return try properties.byteOffset(ofPacket: packet) }
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        let known = passed.indices.filter { passed[$0].position != nil }
        guard let last = known.last, let lastAt = passed[last].position, let first = known.first,
              let firstAt = passed[first].position
        else {
            throw AudioError(.valueUnknown, "no packet position is known yet")
        }
        if packet < Int64(passed.count), let at = passed[Int(packet)].position { return (at, false) }
        if packet < Int64(passed.count), let before = known.last(where: { $0 <= Int(packet) }) {
            return (passed[before].position!, true)
        }
        let average = last > first ? Double(lastAt - firstAt) / Double(last - first) : 0
        return (lastAt + Int64((Double(packet - Int64(last)) * average).rounded()), true)
    }

    /// A pushed stream's offset for a frame: the packet that holds it among those passed, or
    /// one estimated at the average frames per packet.
    func byteOffset(ofFrame frame: Int64, fetch: ByteRangeFetcher?, sourceSize: Int64?) throws(AudioError)
        -> (offset: Int64, isEstimated: Bool)
    {
        guard demuxer == nil else {
            let (packet, _) = try PropertyValue.frameToPacket(frame + Int64(properties.packetTableInfo?.primingFrames ?? 0),
                                                              properties: properties)
            return try byteOffset(ofPacket: packet)
        }
        guard frame >= 0 else { throw AudioError(.invalidPacketOffset, "frame \(frame) is negative") }
        var start: Int64 = 0
        for (k, e) in passed.enumerated() {
            if frame < start + Int64(e.frames) { return try byteOffset(ofPacket: Int64(k)) }
            start += Int64(e.frames)
        }
        guard !passed.isEmpty, start > 0 else { throw AudioError(.valueUnknown, "no packet has passed yet") }
        let packet = Int64(passed.count) + Int64((Double(frame - start) * Double(passed.count) / Double(start)).rounded(.down))
        let (offset, _) = try byteOffset(ofPacket: packet)
        return (offset, true)
    }

    // MARK: Properties

    /// Fills the properties from the container's facts.
    private func describe(_ d: FFmpegDemuxer) {
        let parameters = d.parameters
        let format = parameters.streamDescription(frameSize: d.frameSize)
        let cookie = parameters.cookie
        timeBase = d.timeBase
        frameSize = d.frameSize
        sampleRate = format.sampleRate
        properties.dataFormat = format
        properties.formatList = [AudioFormatListItem(format: format, channelLayoutTag: .useChannelBitmap)]
        properties.magicCookie = cookie
        let mask = parameters.channelMask
        if mask != 0, mask <= 0x3FFFF, mask.nonzeroBitCount == Int(format.channelsPerFrame) {
            properties.channelLayout = ChannelLayout(bitmap: ChannelBitmap(rawValue: UInt32(mask)))
        }
        if d.bitRate > 0 { properties.bitRate = UInt32(clamping: d.bitRate) }
        if let name = FFmpegCodecs.codecLongName(for: format) { properties.dataFormatName = name }
        var info = InfoDictionary()
        for (key, value) in d.metadata {
            info[InfoDictionary.key(forContainerTag: key)] = value
        }
        if let seconds = d.duration { info[InfoDictionary.approximateDurationInSeconds] = String(seconds) }
        properties.info = info
        properties.albumArtwork = d.coverArt
        properties.chapters = d.chapters.map { Chapter(start: $0.start, title: $0.title) }
        properties.tracks = d.streams.map {
            TrackSummary(id: UInt32(bitPattern: $0.index), kind: $0.kind, codec: $0.codec,
                         format: $0.isSelected ? format : nil, isSelected: $0.isSelected)
        }
        properties.trackCount = d.streams.filter { $0.kind == "audio" }.count
    }

    /// A packet's frames: its duration at the sample rate, else the codec's frame size, else
    /// the packet before's. A coarse time base (ASF's milliseconds) rounds durations; the
    /// codec's frame size, when it is within a tick of the duration, is the exact count.
    private func frames(of p: FFmpegPacket) -> Int {
        var n = 0
        if p.duration > 0 {
            n = Int(frames(ofTicks: p.duration))
            if frameSize > 0 {
                let ticks = Double(frameSize) * Double(timeBase.den) / (Double(timeBase.num) * sampleRate)
                if abs(ticks - Double(p.duration)) <= 1 { n = frameSize }
            }
        }
        if n == 0 { n = frameSize }
        if n == 0 { n = lastFrames }
        lastFrames = n
        return n
    }

    private func frames(ofTicks t: Int64) -> Int64 {
        Int64((Double(t) * Double(timeBase.num) * sampleRate / Double(timeBase.den)).rounded())
    }
}

/// The driver's reads as libavformat's byte source: AudioFile hands a reader to each read,
/// valid only during it (nil between reads).
private final class FetchSource: FFmpegByteSource {
    var reader: ByteRangeReader?
    let size: Int64?
    var isSeekable: Bool { true }
    var isAborted: Bool { false }

    init(size: Int64?) {
        self.size = size
    }

    /// A step's fetch, as a reader.
    static func reader(_ fetch: @escaping ByteRangeFetcher) -> ByteRangeReader {
        { offset, buffer throws(AudioError) in
            let bytes = try fetch(offset, buffer.count)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(buffer.count))) }
            return min(bytes.count, buffer.count)
        }
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        if let size, offset >= size { return 0 }
        guard let reader else { throw AudioError(.illegalOperation, "the FFmpeg demuxer read outside a packet read") }
        return try reader(offset, buffer)
    }
}
#endif

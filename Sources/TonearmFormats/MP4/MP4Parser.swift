import TonearmCore

/// The MP4 family parser ('mp4f', 'm4af', 'm4bf', '3gpp', '3gp2'): one incremental state
/// machine over the top-level boxes, for both paths.
///
/// - `ftyp` names the file type by its major brand.
/// - `moov` is read whole (at most ``MP4/maximumMoovSize``) and gives the format, the sample
///   table, gapless information, metadata and chapters of the first audio track.
/// - Push path (``AudioFileStream``): once the `moov` is known, packets are handed out in
///   table order from wherever the table puts them; bytes that are not this track's samples
///   (box headers, other tracks) are skipped. A `moov` after `mdat` is fetched with the
///   caller's byte-range fetcher, or answers 'optm' when there is none, as Apple's parser does.
/// - Random access (``AudioFile``): `mdat` is skipped with a seek; a `moov` after it is simply
///   read there.
/// - Fragmented files (`mvex`, then `moof` + `mdat`): on the push path each fragment's samples
///   are handed out as its data arrives; on the random-access path every `moof` is read and the
///   `mdat`s skipped, which builds the whole table.
/// - Seeking a fragmented stream: a packet of a fragment already read answers its exact offset.
///   Beyond them the answer is estimated (flagged): the `moof` that the `mfra` index lists for
///   the packet's time, when a byte-range fetcher can read it, else the average packet size.
///   After a resume at an estimated offset the parser looks for the next `moof`.
///
/// The packet table's offsets are relative to the data offset, which is the lowest offset of
/// the track's samples (the first sample's, in every ordinary file), so that
/// `dataOffset + startOffset` is a sample's file offset.
public final class MP4Parser: PropertyStoringParser {
    public var properties: FileProperties
    public var isReady = false
    public var pendingNotifications: [AudioFilePropertyID] = []

    /// What the chosen track needs after its `moov` has been read.
    private struct Track {
        var id: UInt32
        var timescale: UInt32
        var movieTimescale: UInt32
        var edits: [MP4Edit]
        var format: MP4AudioFormat
        var trackExtends: MP4TrackExtends
        var isFragmented: Bool
        var gapless: (priming: Int64, remainder: Int64, valid: Int64)?
    }

    private enum State {
        /// At a top-level box header.
        case boxHeader
        /// Reading the body of `ftyp`, `moov` or `moof` whole; the header is consumed.
        case boxBody(MP4BoxHeader, start: Int64)
        /// Handing out the samples of the table (push path, not fragmented).
        case samples
        /// Handing out the current fragment's samples inside a top-level box that ends at `end`.
        case fragmentSamples(end: Int64?)
        /// After a resume at an estimated offset: looking for the next `moof`.
        case resync
        case done
    }

    private var state = State.boxHeader
    private var boxCount = 0
    private var track: Track?
    /// The next sample of the table to hand out (push path).
    private var nextSample = 0
    /// The current fragment's samples, with absolute offsets and frames (push path).
    private var pending: [PacketDescription] = []
    private var nextPending = 0
    /// Every sample of every fragment so far (random-access path).
    private var collected = MP4SampleList()
    /// Where the last fragment's decode times ended, for a fragment without tfdt.
    private var nextDecodeTime: Int64 = 0

    /// A fragment read on the push path, kept so that seeks back to its packets are exact.
    private struct SeenFragment {
        /// Offset of its `moof`; -1 for samples that the `moov` itself lists.
        var moof: Int64
        /// End of the `mdat` that holds its samples, once reached.
        var mdatEnd: Int64?
        var firstPacket: Int64
        /// Absolute offsets, frames as handed out.
        var samples: [PacketDescription]
    }
    /// The fragments read in order from the start (or from a fragment whose first packet is known).
    private var seen: [SeenFragment] = []
    /// The number of the next fragment's first packet, while it is known.
    private var packetNumber: Int64? = 0
    /// The `mfra` index: the decode time and `moof` offset of fragments, read with the fetcher.
    private var fragmentIndex: [(time: Int64, moof: Int64)]?

    /// The order in which the properties are announced before 'redy'.
    static let announcementOrder: [AudioFilePropertyID] = [
        .fileFormat, .dataFormat, .formatList, .magicCookieData, .channelLayout, .infoDictionary, .packetTableInfo,
        .audioDataByteCount, .audioDataPacketCount, .bitRate, .dataOffset, .maximumPacketSize,
    ]

    public init(fileType: AudioFileTypeID = .mpeg4) {
        properties = FileProperties(fileType: fileType)
    }

    /// The file type a major brand stands for: M4A, M4B, 3GP or 3GP2 by brand, else MPEG-4.
    public static func fileType(forBrand brand: FourCC) -> AudioFileTypeID {
        let b = brand.bytes
        switch brand {
        case "M4A ", "M4P ": return .m4a
        case "M4B ": return .m4b
        default:
            if b[0] == 0x33, b[1] == 0x67 {  // "3g"
                if b[2] == 0x32 { return .threeGP2 }  // 3g2a, 3g2b, 3g2c
                return .threeGP  // 3gp4…3gp7, 3gr6, 3gs6, 3ge6, 3gg6
            }
            return .mpeg4
        }
    }

    // MARK: Steps

    public func step(_ input: ParserInput) throws(AudioError) -> ParseStep {
        switch state {
        case .boxHeader:
            return try boxHeaderStep(input)
        case .boxBody(let header, let start):
            return try boxBodyStep(header, start: start, input)
        case .samples:
            guard let table = properties.packetTable, let base = properties.dataOffset else { state = .done; return .finished }
            let (result, next) = try MP4Parser.emit(table, base: base, from: nextSample, limit: nil, input)
            nextSample = next
            if case .step(let s) = result { return s }
            state = .done
            return .finished
        case .fragmentSamples(let end):
            let (result, next) = try MP4Parser.emit(pending, base: 0, from: nextPending, limit: end, input)
            nextPending = next
            switch result {
            case .step(let s):
                return s
            case .truncated:
                state = .done
                return .finished
            case .exhausted, .pastLimit:
                if nextPending >= pending.count { pending = []; nextPending = 0 }
                state = .boxHeader
                guard let end else { return try finish(input) }
                return skip(to: end, input)
            }
        case .resync:
            return resyncStep(input)
        case .done:
            return .finished
        }
    }

    /// Skips to the next `moof` box, found by its type and the `mfhd` that begins it.
    private func resyncStep(_ input: ParserInput) -> ParseStep {
        let b = input.bytes
        let moof = FourCC("moof").rawValue, mfhd = FourCC("mfhd").rawValue
        var j = 4
        while j + 12 <= b.count {
            if mp4be32(b, j) == moof && mp4be32(b, j + 8) == mfhd {
                state = .boxHeader
                return .consume(j - 4)
            }
            j += 1
        }
        if input.isEndOfStream {
            state = .done
            return .finished
        }
        // Keep the last bytes: they may begin the next moof.
        let drop = max(0, b.count - 15)
        return drop > 0 ? .consume(drop) : .needMore
    }

    private func boxHeaderStep(_ input: ParserInput) throws(AudioError) -> ParseStep {
        guard let header = try MP4BoxHeader.read(input.bytes) else {
            if input.isEndOfStream { return try finish(input) }
            return .needMore
        }
        let start = input.offset
        if boxCount == 0 && !MP4.firstBoxTypes.contains(header.type) {
            throw AudioError(.unsupportedFileType, "not an MP4 file: it begins with box \(header.type)")
        }
        boxCount += 1
        if properties.chunkIDs.count < 64 { properties.chunkIDs.append(header.type) }
        var size = header.size
        if size == nil, let total = input.sourceSize { size = max(Int64(header.headerSize), total - start) }
        let end = size.map { start + $0 }
        switch header.type {
        case "ftyp", "moov", "moof":
            if header.type == "moov" && track != nil { return skip(to: end, input) }
            if header.type == "moof" && track?.isFragmented != true { return skip(to: end, input) }
            let limit = header.type == "ftyp" ? MP4.maximumFtypSize : header.type == "moov" ? MP4.maximumMoovSize : MP4.maximumMoofSize
            if let body = header.bodySize, body > Int64(limit) {
                throw AudioError.limit("the \(header.type) box claims \(body) bytes; at most \(limit) are read")
            }
            state = .boxBody(header, start: start)
            return .consume(header.headerSize)
        case "mdat":
            return try mdatStep(header, start: start, end: end, input)
        default:
            return skip(to: end, input)
        }
    }

    private func boxBodyStep(_ header: MP4BoxHeader, start: Int64, _ input: ParserInput) throws(AudioError) -> ParseStep {
        let size: Int
        if let body = header.bodySize {
            size = Int(body)
        } else {
            // A box that runs to the end of a stream of unknown size.
            guard input.isEndOfStream else {
                if input.count > MP4.maximumMoovSize { throw AudioError.limit("the \(header.type) box is larger than \(MP4.maximumMoovSize) bytes") }
                return .needMore
            }
            size = input.count
        }
        guard input.count >= size else {
            guard input.isEndOfStream else { return .needMore }
            if header.type == "moof" && track != nil { return try finish(input) }
            throw AudioError(.invalidFile, "the file ends inside its \(header.type) box")
        }
        let body = Array(UnsafeRawBufferPointer(rebasing: input.bytes[0..<size]))
        state = .boxHeader
        switch header.type {
        case "ftyp":
            if body.count >= 4 {
                properties.fileType = MP4Parser.fileType(forBrand: FourCC(body[0], body[1], body[2], body[3]))
            }
        case "moov":
            try takeMovie(body, input: input)
        default:
            try takeFragment(body, moofStart: start, input: input)
        }
        return .consume(size)
    }

    private func mdatStep(_ header: MP4BoxHeader, start: Int64, end: Int64?, _ input: ParserInput) throws(AudioError) -> ParseStep {
        if track == nil {
            // The audio data comes before the moov that describes it.
            properties.isOptimized = false
            if input.canSeek {
                guard let end else { throw AudioError(.invalidFile, "the audio data runs to the end of the file and no moov box came before it") }
                return skip(to: end, input)
            }
            guard let fetch = input.fetch else {
                throw AudioError(.notOptimized, "the moov box comes after the audio data; a stream cannot play it without a byte-range fetcher")
            }
            guard let end else { throw AudioError(.invalidFile, "the audio data runs to the end of the file and no moov box came before it") }
            let body = try MP4Parser.locateMoov(after: end, fetch: fetch)
            try takeMovie(body, input: input)
        }
        guard let track else { return skip(to: end, input) }
        if !track.isFragmented {
            guard input.wantsPackets, isReady else { state = .done; return .finished }
            state = .samples
            return .consume(header.headerSize)
        }
        let bodyStart = start + Int64(header.headerSize)
        if input.wantsPackets, nextPending < pending.count {
            let first = pending[nextPending].startOffset
            if first >= bodyStart && end.map({ first < $0 }) ?? true {
                if let i = seen.indices.last, seen[i].mdatEnd == nil, seen[i].samples.first?.startOffset == first {
                    seen[i].mdatEnd = end
                }
                state = .fragmentSamples(end: end)
                return .consume(header.headerSize)
            }
        }
        guard end != nil else { return try finish(input) }
        return skip(to: end, input)
    }

    /// Goes on at `end`: consumes what is buffered, seeks past the rest. A nil end (a box that
    /// runs to the end of the file) ends the parse.
    private func skip(to end: Int64?, _ input: ParserInput) -> ParseStep {
        state = .boxHeader
        guard let end else {
            state = .done
            return .finished
        }
        let ahead = end - input.offset
        if ahead <= Int64(input.count) { return .consume(Int(max(0, ahead))) }
        return .seek(to: end)
    }

    /// At the end of the data: a file without a moov is invalid; the fragments collected on
    /// the random-access path become the table.
    private func finish(_ input: ParserInput) throws(AudioError) -> ParseStep {
        state = .done
        guard let track else {
            if boxCount == 0 { throw AudioError(.invalidFile, "the file is too short to hold an MP4 box") }
            throw AudioError(.invalidFile, "the file has no moov box")
        }
        if track.isFragmented && !isReady && !input.wantsPackets {
            var all = collected
            collected = MP4SampleList()
            try install(&all, sourceSize: input.sourceSize)
            becomeReady(announcing: MP4Parser.announcementOrder)
        }
        if !isReady { throw AudioError(.invalidFile, "the audio track has no samples") }
        return .finished
    }

    // MARK: moov

    private func takeMovie(_ body: [UInt8], input: ParserInput) throws(AudioError) {
        var list = MP4SampleList()
        var chapterTable: (MP4SampleList, UInt32)?
        try body.withBytes { p throws(AudioError) in
            let movie = try MP4Movie.parse(p)
            let audio = movie.tracks.filter(\.isAudio)
            guard let t = audio.first else { throw AudioError(.unsupportedDataFormat, "the file has no audio track") }
            guard t.timescale > 0 else { throw AudioError(.invalidChunk, "the audio track's mdhd gives a timescale of 0") }
            guard let entry = t.sampleEntry else { throw AudioError(.invalidChunk, "the audio track has no sample description") }
            let format = try MP4SampleEntry.audioFormat(p, entry: entry, mediaTimescale: t.timescale)
            if let chunk = t.chunkWithAnotherDescription(p) {
                throw AudioError(.unsupportedDataFormat,
                                 "the audio track changes its sample description at chunk \(chunk); Tonearm reads tracks with one format")
            }
            list = try MP4SampleTable.build(p, track: t, sourceSize: input.sourceSize)
            properties.trackCount = audio.count
            properties.tracks = movie.tracks.prefix(64).map { other in
                let kind: String
                switch other.handler {
                case "soun": kind = "audio"
                case "vide": kind = "video"
                case "text", "sbtl", "subt": kind = "text"
                default: kind = other.handler.string
                }
                var format: StreamDescription?
                if other.isAudio, other.timescale > 0, let e = other.sampleEntry {
                    format = (try? MP4SampleEntry.audioFormat(p, entry: e, mediaTimescale: other.timescale))?.format
                }
                return TrackSummary(id: other.id, kind: kind, codec: other.sampleEntry?.type.string ?? "", format: format,
                                    isSelected: other.id == t.id)
            }
            properties.rollDistance = MP4SampleTable.rollDistance(p, track: t)
            track = Track(id: t.id, timescale: t.timescale, movieTimescale: movie.timescale, edits: t.edits, format: format,
                          trackExtends: movie.trackExtends[t.id] ?? MP4TrackExtends(), isFragmented: movie.isFragmented,
                          gapless: movie.metadata.gapless)
            properties.dataFormat = format.format
            properties.formatList = format.formatList
            properties.magicCookie = format.cookie
            properties.channelLayout = format.channelLayout
            properties.sourceBitDepth = format.sourceBitDepth
            properties.dataFormatName = format.name
            properties.info = movie.metadata.info
            properties.albumArtwork = movie.metadata.artwork
            properties.chapters = movie.metadata.neroChapters
            // QuickTime chapter track: a text track whose samples are the titles.
            if input.fetch != nil, let id = t.chapterTrackIDs.first,
               let c = movie.tracks.first(where: { $0.id == id && !$0.isAudio }), c.timescale > 0,
               let table = try? MP4SampleTable.build(p, track: c)
            {
                chapterTable = (table, c.timescale)
            }
        }
        if let (table, timescale) = chapterTable, let fetch = input.fetch,
           let chapters = try? MP4Parser.readChapters(table, timescale: timescale, fetch: fetch), !chapters.isEmpty
        {
            properties.chapters = chapters
        }
        guard let track else { return }
        if !track.isFragmented {
            try install(&list, sourceSize: input.sourceSize)
            becomeReady(announcing: MP4Parser.announcementOrder)
            state = input.wantsPackets ? .samples : .done
            return
        }
        nextDecodeTime = list.totalDuration
        if input.wantsPackets {
            if let fetch = input.fetch, let size = input.sourceSize {
                // Only a help for seeking: a file without a usable index still plays.
                fragmentIndex = try? MP4FragmentIndex.read(fileSize: size, trackID: track.id, fetch: fetch)
            }
            if !list.isEmpty { try takePending(list.descriptions, moof: -1) }
        } else {
            collected = list
        }
    }

    /// Walks the boxes after `mdat` with the fetcher until the `moov`, and reads it.
    static func locateMoov(after start: Int64, fetch: ByteRangeFetcher) throws(AudioError) -> [UInt8] {
        var position = start
        for _ in 0..<MP4.maximumBoxesToMoov {
            let head = try fetch(position, 16)
            guard let header = try head.withBytes({ p throws(AudioError) in try MP4BoxHeader.read(p) }) else { break }
            if header.type == "moov" {
                let bodyStart = position + Int64(header.headerSize)
                if let size = header.bodySize {
                    guard size <= Int64(MP4.maximumMoovSize) else {
                        throw AudioError.limit("the moov box claims \(size) bytes; at most \(MP4.maximumMoovSize) are read")
                    }
                    let body = try fetch(bodyStart, Int(size))
                    guard body.count == Int(size) else { throw AudioError(.invalidFile, "the file ends inside its moov box") }
                    return body
                }
                let body = try fetch(bodyStart, MP4.maximumMoovSize + 1)
                guard body.count <= MP4.maximumMoovSize else { throw AudioError.limit("the moov box is larger than \(MP4.maximumMoovSize) bytes") }
                return body
            }
            guard let size = header.size else { break }
            position += size
        }
        throw AudioError(.invalidFile, "no moov box follows the audio data")
    }

    /// The titles of a chapter track, read with the fetcher, and their start times.
    static func readChapters(_ table: MP4SampleList, timescale: UInt32, fetch: ByteRangeFetcher) throws(AudioError) -> [Chapter] {
        var chapters: [Chapter] = []
        for (i, d) in table.descriptions.prefix(MP4.maximumChapters).enumerated() {
            let sample = try fetch(d.startOffset, min(Int(d.dataByteSize), MP4.maximumChapterSampleSize))
            guard let title = mp4ChapterTitle(sample) else { continue }
            let time = i < table.timestamps.count ? table.timestamps[i] : 0
            chapters.append(Chapter(start: Double(time) / Double(timescale), title: title))
        }
        return chapters
    }

    // MARK: moof

    private func takeFragment(_ body: [UInt8], moofStart: Int64, input: ParserInput) throws(AudioError) {
        guard let track else { return }
        let room = input.wantsPackets ? MP4.maximumSampleCount : MP4.maximumSampleCount - collected.count
        var decodeTime = nextDecodeTime
        let list = try body.withBytes { p throws(AudioError) in
            try MP4Fragment.samples(p, moofStart: moofStart, trackID: track.id, defaults: track.trackExtends,
                                    decodeTime: &decodeTime, maximumSamples: room)
        }
        nextDecodeTime = decodeTime
        if input.wantsPackets {
            if packetNumber == nil { packetNumber = firstPacket(ofFragmentAt: moofStart) }
            try takePending(list.descriptions, moof: moofStart)
        } else {
            collected.append(list)
        }
    }

    /// Makes a fragment's samples the ones to hand out next, and becomes ready at the first.
    private func takePending(_ descriptions: [PacketDescription], moof: Int64) throws(AudioError) {
        guard let track else { return }
        var d = descriptions
        let fpp = track.format.codecFramesPerPacket ? Int64(track.format.format.framesPerPacket) : 0
        var time: Int64 = 0
        for i in d.indices {
            let duration = Int64(d[i].variableFramesInPacket)
            d[i].variableFramesInPacket = fpp > 0 ? 0 : UInt32(clamping: frames(time + duration, track) - frames(time, track))
            time += duration
        }
        pending = d
        nextPending = 0
        remember(d, moof: moof)
        guard !isReady, let first = d.first else { return }
        var f = track.format.format
        f.framesPerPacket = UInt32(fpp)
        properties.dataFormat = f
        properties.dataOffset = first.startOffset
        properties.maximumPacketSize = track.format.packetSizeBound ?? d.map(\.dataByteSize).max()
        if track.format.declaredBitRate > 0 { properties.bitRate = track.format.declaredBitRate }
        becomeReady(announcing: MP4Parser.announcementOrder)
    }

    /// Keeps a fragment's samples for exact seeks back, while packets are numbered.
    private func remember(_ samples: [PacketDescription], moof: Int64) {
        guard let first = packetNumber else { return }
        packetNumber = first + Int64(samples.count)
        if let last = seen.last, moof <= last.moof { return }  // read again after a seek back
        let kept = seen.reduce(0) { $0 + $1.samples.count }
        guard !samples.isEmpty, kept + samples.count <= MP4.maximumSampleCount else { return }
        seen.append(SeenFragment(moof: moof, mdatEnd: nil, firstPacket: first, samples: samples))
    }

    /// The number of the first packet of the fragment whose `moof` is at `offset`, when known.
    private func firstPacket(ofFragmentAt offset: Int64) -> Int64? {
        if let f = seen.first(where: { $0.moof == offset }) { return f.firstPacket }
        guard let track, let index = fragmentIndex, let e = index.first(where: { $0.moof == offset }) else { return nil }
        let fpp = track.format.codecFramesPerPacket ? Int64(track.format.format.framesPerPacket) : 0
        return fpp > 0 ? frames(e.time, track) / fpp : nil
    }

    // MARK: The table

    /// A time in the media timescale as frames at the stream's rate.
    private func frames(_ time: Int64, _ track: Track) -> Int64 {
        let rate = track.format.format.sampleRate
        if rate == Double(track.timescale) { return time }
        return MP4Parser.clamped(Double(time) * rate / Double(track.timescale))
    }

    /// A Double rounded to an Int64, held within ±2^62 (hostile tables make huge values).
    static func clamped(_ x: Double) -> Int64 {
        x.isFinite ? Int64(saturating: x.rounded()) : 0
    }

    /// Publishes a complete sample list as the packet table and derives the counts, the
    /// frames per packet, the gapless information and the bit rate from it.
    private func install(_ list: inout MP4SampleList, sourceSize: Int64?) throws(AudioError) {
        guard let track else { return }
        // A file cut short keeps the samples that are wholly there.
        if let total = sourceSize, let cut = list.descriptions.firstIndex(where: { $0.startOffset + Int64($0.dataByteSize) > total }) {
            list.descriptions.removeSubrange(cut...)
            list.timestamps.removeSubrange(min(cut, list.timestamps.count)...)
            list.syncSamples = list.syncSamples?.filter { $0 < Int64(cut) }
            var duration: Int64 = 0
            for d in list.descriptions { duration += Int64(d.variableFramesInPacket) }
            list.totalDuration = duration
        }
        let n = list.count
        guard n > 0 else { throw AudioError(.invalidFile, "the audio track has no samples") }

        // Frames per packet: the codec's, or one duration shared by every packet but a
        // shorter last one, or none (each packet then carries its own frames).
        var format = track.format.format
        var fpp: Int64 = 0
        if track.format.codecFramesPerPacket {
            fpp = Int64(format.framesPerPacket)
        } else if !track.isFragmented {
            let common = list.descriptions[0].variableFramesInPacket
            let uniform = common > 0 && list.descriptions.dropLast().allSatisfy { $0.variableFramesInPacket == common }
                && list.descriptions[n - 1].variableFramesInPacket <= common
            if uniform { fpp = frames(Int64(common), track) }
        }
        format.framesPerPacket = UInt32(clamping: fpp)

        // Vorbis's first packet decodes to no frames (Vorbis I §A.2): the muxer gives it a
        // duration, which the edit list then takes as priming. Its time is not in the decoder's output.
        let silentFirst = format.formatID == .vorbis && fpp == 0 ? Int64(list.descriptions[0].variableFramesInPacket) : 0
        var lowest = Int64.max, largest: UInt32 = 0, bytes: Int64 = 0, sumFrames: Int64 = 0
        var sorted = true, previous = Int64.min, time: Int64 = 0
        let sameScale = format.sampleRate == Double(track.timescale)
        list.descriptions.withUnsafeMutableBufferPointer { d in
            for i in 0..<n {
                let s = d[i].startOffset
                if s < lowest { lowest = s }
                if s < previous { sorted = false }
                previous = s
                largest = max(largest, d[i].dataByteSize)
                bytes += Int64(d[i].dataByteSize)
                let duration = Int64(d[i].variableFramesInPacket)
                if fpp > 0 {
                    d[i].variableFramesInPacket = 0
                } else {
                    let f = sameScale ? duration : frames(time + duration, track) - frames(time, track)
                    d[i].variableFramesInPacket = UInt32(clamping: f)
                    sumFrames += f
                }
                time += duration
            }
            for i in 0..<n { d[i].startOffset -= lowest }
            if silentFirst > 0 {
                sumFrames -= Int64(d[0].variableFramesInPacket)
                d[0].variableFramesInPacket = 0
            }
        }
        // Packets are read and streamed in file order; a table that goes back is refused
        // (no encoder writes one, and AudioFile reads a run of packets as one byte range).
        guard sorted else { throw AudioError(.invalidChunk, "the audio track's samples are not in file order") }
        if !sameScale {
            for i in list.timestamps.indices { list.timestamps[i] = frames(list.timestamps[i], track) }
        }

        // Gapless: iTunSMPB when present; else the first edit's media time is the priming and
        // its duration the valid frames. An edit's duration is in the movie timescale
        // (often 1/1000 s), so when it lies within one movie tick of the media that follows
        // the priming, the media's exact end is taken instead.
        let totalFrames = fpp > 0 ? Int64(n) * fpp : sumFrames
        let mediaEnd = list.totalDuration
        var priming: Int64 = 0, valid = mediaEnd
        let edits = track.edits.filter { $0.mediaTime >= 0 }
        if let edit = edits.first {
            priming = min(edit.mediaTime, mediaEnd)
            let available = mediaEnd - priming
            valid = available
            if edits.count == 1, edit.segmentDuration > 0, track.movieTimescale > 0 {
                let scale = Double(track.timescale) / Double(track.movieTimescale)
                let inMedia = Double(edit.segmentDuration) * scale
                if abs(inMedia - Double(available)) > scale.rounded(.up) {
                    valid = min(MP4Parser.clamped(inMedia), available)
                }
            }
        }
        var primingFrames = frames(priming, track)
        // Presentation times, as the edit list gives them: the first frame played is 0.
        if primingFrames != 0 {
            for i in list.timestamps.indices { list.timestamps[i] -= primingFrames }
        }
        var validFrames = frames(priming + valid, track) - primingFrames
        primingFrames = max(0, primingFrames - frames(silentFirst, track))
        if let g = track.gapless, g.priming + g.valid <= totalFrames {
            primingFrames = g.priming
            validFrames = g.valid
        }
        var remainder = totalFrames - primingFrames - validFrames
        if remainder < 0 {
            validFrames = max(0, totalFrames - primingFrames)
            remainder = 0
        }

        properties.dataFormat = format
        properties.packetTable = list.descriptions
        properties.packetTimestamps = list.timestamps
        properties.independentPackets = list.syncSamples
        properties.dataOffset = lowest
        properties.audioDataPacketCount = Int64(n)
        properties.audioDataByteCount = bytes
        properties.maximumPacketSize = largest
        properties.packetTableInfo = PacketTableInfo(numberValidFrames: validFrames, primingFrames: Int32(clamping: primingFrames),
                                                     remainderFrames: Int32(clamping: remainder))
        if mediaEnd > 0 {
            let bits = Double(bytes) * 8 * Double(track.timescale) / Double(mediaEnd)
            if bits.isFinite && bits < Double(UInt32.max) { properties.bitRate = UInt32(bits.rounded()) }
        } else if track.format.declaredBitRate > 0 {
            properties.bitRate = track.format.declaredBitRate
        }
    }

    // MARK: Handing out samples

    private enum Emission {
        case step(ParseStep)
        /// No samples are left.
        case exhausted
        /// The next sample lies beyond the limit (in a later box).
        case pastLimit
        /// The stream ended inside a sample.
        case truncated
    }

    /// Hands out the run of whole, back-to-back samples that begins at the input's offset, or
    /// skips to the next sample. Offsets are `base + startOffset`.
    private static func emit(_ table: [PacketDescription], base: Int64, from next: Int, limit: Int64?,
                             _ input: ParserInput) throws(AudioError) -> (Emission, Int)
    {
        guard next < table.count else { return (.exhausted, next) }
        let start = base + table[next].startOffset
        if let limit, start >= limit { return (.pastLimit, next) }
        if start < input.offset {
            throw AudioError(.notOptimized, "sample \(next) lies at byte \(start), before the stream's position \(input.offset); a stream cannot go back")
        }
        if start > input.offset {
            let gap = start - input.offset
            if gap <= Int64(input.count) { return (.step(.consume(Int(gap))), next) }
            if input.isEndOfStream { return (.truncated, next) }
            return (.step(.seek(to: start)), next)
        }
        var descriptions: [PacketDescription] = []
        var end = start
        var i = next
        while i < table.count && descriptions.count < 4096 {
            let d = table[i]
            let s = base + d.startOffset
            guard s == end else { break }
            let e = s + Int64(d.dataByteSize)
            if let limit, e > limit {
                if descriptions.isEmpty { throw AudioError(.invalidChunk, "sample \(i) runs past the end of its box") }
                break
            }
            guard e <= input.endOffset else { break }
            descriptions.append(PacketDescription(startOffset: s - input.offset, variableFramesInPacket: d.variableFramesInPacket,
                                                  dataByteSize: d.dataByteSize))
            end = e
            i += 1
        }
        if end == input.offset {
            if descriptions.isEmpty { return (input.isEndOfStream ? .truncated : .step(.needMore), next) }
            // Only empty samples: wait while the next one is still arriving, else drop them.
            if i < table.count && base + table[i].startOffset == end && !input.isEndOfStream && descriptions.count < 4096 {
                return (.step(.needMore), next)
            }
            return (.step(.consume(0)), i)
        }
        return (.step(.packets(byteCount: Int(end - input.offset), packetCount: descriptions.count, descriptions: descriptions)), i)
    }

    // MARK: Seeking

    /// The byte offset of a packet, relative to the data offset. Exact from the packet table;
    /// for a fragmented stream see the type's notes.
    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        guard let track, track.isFragmented, properties.packetTable == nil else {
            return try properties.byteOffset(ofPacket: packet)
        }
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        guard isReady, let dataOffset = properties.dataOffset else { throw AudioError(.valueUnknown, "no fragment has been read yet") }
        if let f = seen.last(where: { $0.firstPacket <= packet }), packet < f.firstPacket + Int64(f.samples.count), f.mdatEnd != nil {
            return (f.samples[Int(packet - f.firstPacket)].startOffset - dataOffset, false)
        }
        let fpp = track.format.codecFramesPerPacket ? Int64(track.format.format.framesPerPacket) : 0
        if let index = fragmentIndex, fpp > 0,
           let e = index.last(where: { firstPacket(ofFragmentAt: $0.moof).map { $0 <= packet } ?? false })
        {
            return (e.moof - dataOffset, true)
        }
        guard let last = seen.last, let lastSample = last.samples.last else {
            throw AudioError(.valueUnknown, "no fragment has been read yet")
        }
        let count = last.firstPacket + Int64(last.samples.count)
        let bytes = Double(lastSample.startOffset + Int64(lastSample.dataByteSize) - dataOffset)
        return (Int64(saturating: (bytes / Double(count) * Double(packet)).rounded(.down)), true)
    }

    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady, let track else { throw AudioError(.illegalOperation, "cannot resume before the data offset is known") }
        if track.isFragmented {
            pending = []
            nextPending = 0
            // A packet of a fragment already read: the rest of that fragment, then on in order.
            for f in seen.reversed() where f.moof < offset {
                if let end = f.mdatEnd, let k = f.samples.firstIndex(where: { $0.startOffset == offset }) {
                    pending = f.samples
                    nextPending = k
                    packetNumber = f.firstPacket + Int64(f.samples.count)
                    state = .fragmentSamples(end: end)
                    return
                }
                break
            }
            // The start of a fragment: read on from its box header; else find the next moof.
            if let known = firstPacket(ofFragmentAt: offset) {
                packetNumber = known
                state = .boxHeader
            } else {
                packetNumber = nil
                state = .resync
            }
            return
        }
        guard let table = properties.packetTable, let base = properties.dataOffset else {
            throw AudioError(.illegalOperation, "the packet table is not known")
        }
        // The table is in file order (install refuses others): the first sample at or after the offset.
        let target = offset - base
        var lo = 0, hi = table.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if table[mid].startOffset < target { lo = mid + 1 } else { hi = mid }
        }
        guard lo < table.count || target == (table.last.map { $0.startOffset + Int64($0.dataByteSize) } ?? 0) else {
            throw AudioError(.invalidPacketOffset, "byte \(offset) is outside the audio data")
        }
        nextSample = lo
        state = .samples
    }
}

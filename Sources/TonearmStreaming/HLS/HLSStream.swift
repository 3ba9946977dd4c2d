import Foundation
import TonearmCore
import TonearmFormats

/// An HTTP Live Streaming presentation (RFC 8216) read as one run of segment bytes, for
/// ``StreamDecoder``: it loads the master and media playlists, picks a variant by measured
/// throughput, follows a live playlist as its window slides, fetches and decrypts (AES-128)
/// each segment on a thread of its own, and hands the segments over in order, each announced
/// by an ``HLSSegmentStart`` that says what the decoder must do there.
///
/// - Segments: MPEG-TS, packed audio (ADTS, MP3, AC-3 after an ID3 tag) and fMP4/CMAF (the
///   `EXT-X-MAP` initialisation section goes before the first segment that uses it).
/// - Live (no `EXT-X-ENDLIST`): playing starts ``Options/liveEdgeTargetDurations`` target
///   durations from the live edge; the playlist is reloaded after one target duration, or half
///   of one when it did not change; a playlist that does not change for
///   ``Options/stallTargetDurations`` target durations is an error ('time').
/// - Variants: the first playable one listed starts; after each segment the throughput of the
///   downloads decides, and a switch takes effect at the next segment boundary (by media
///   sequence number, so nothing is skipped or repeated).
/// - Failures: a segment that cannot be fetched or decrypted is retried
///   ``Options/segmentRetries`` times; then a live stream skips it (its time becomes silence),
///   and a VOD one fails.
public final class HLSStream: @unchecked Sendable {
    public struct Options: Sendable {
        /// For every request (user agent, headers, timeouts).
        public var http = HTTPStream.Options()
        /// Attempts after the first for a segment, a key or a playlist reload.
        public var segmentRetries = 2
        /// Seconds between two attempts.
        public var retryDelay = 0.5
        /// Segments fetched ahead of the reader.
        public var segmentsAhead = 3
        /// A live stream starts this many target durations before its end.
        public var liveEdgeTargetDurations = 3.0
        /// A live playlist that has not changed for this many target durations is an error.
        public var stallTargetDurations = 6.0
        /// The audio rendition language to prefer (`en`, `fr`…), when a master lists several.
        public var language: String?
        /// Play this variant (an index in ``HLSStream/variants``) and never switch.
        public var fixedVariant: Int?
        /// Variants whose BANDWIDTH exceeds this share of the measured throughput are not
        /// chosen.
        public var bandwidthSafety = 0.7
        /// Segments played at a variant before the client may switch up from it.
        public var segmentsBeforeUpSwitch = 4
        /// Divides every live timer (reloads, the stall bound): for tests against a server
        /// whose clock runs faster than real time.
        public var liveTimeScale = 1.0
        /// The largest playlist, key and segment read.
        public var maximumPlaylistBytes = 4 << 20
        public var maximumSegmentBytes = 64 << 20
        public init() {}
    }

    /// What ``read(into:waitingUpTo:)`` gives.
    public enum Chunk: Sendable, Equatable {
        /// A segment begins: its bytes follow.
        case segment(HLSSegmentStart)
        /// This many bytes of the current segment were copied.
        case bytes(Int)
        /// The presentation ended (VOD, or a live playlist that reached ENDLIST).
        case end
    }

    /// The URL asked for.
    public let url: String
    public let options: Options
    /// The playable variants of a master playlist (empty for a media playlist).
    public private(set) var variants: [HLSVariant] = []
    /// The master playlist, when the URL named one.
    public private(set) var master: HLSMasterPlaylist?

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [(start: HLSSegmentStart, bytes: [UInt8], announced: Bool, offset: Int)] = []
    private var ended = false
    private var failure: AudioError?
    private var closed = false
    private var thread: Thread?
    private var handedBytes: Int64 = 0
    private var seekRequest: (sequence: Int64, time: Double)?
    /// Bumped by each seek: a fetch that began before it is dropped.
    private var generation = 0
    /// The media playlist being followed, as last loaded.
    private var playlist = HLSMediaPlaylist()
    private var mediaURL = ""
    private var variantIndex: Int?

    // The fetcher thread's own state.
    private var nextSequence: Int64 = 0
    private var playTime = 0.0
    private var needsRestart = true
    private var needsReset = true
    private var pendingSilence = 0.0
    private var pendingSkipped: [HLSSkippedSegment] = []
    private var currentMap: HLSMap?
    private var currentType: AudioFileTypeID?
    private var keys: [String: [UInt8]] = [:]
    private var initSections: [HLSMap: [UInt8]] = [:]
    private var throughput: Double?
    private var lastReload = Date()
    private var lastChange = Date()
    private var announcedVariant: Int?
    private var segmentsSinceSwitch = 0

    public init(url: String, options: Options = Options()) {
        self.url = url
        self.options = options
    }

    deinit { close() }

    /// Whether a URL or a response names an HLS playlist: an `.m3u8` path, or an HLS MIME type.
    public static func handles(url: String, mimeType: String? = nil) -> Bool {
        if let mimeType, ["application/vnd.apple.mpegurl", "application/x-mpegurl"].contains(mimeType.lowercased()) { return true }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return path.lowercased().hasSuffix(".m3u8")
    }

    /// Loads the playlists, chooses the variant and where to start, and starts fetching.
    /// Throws 'http', 'net!' or 'time' when the playlist cannot be read, 'dta?' when it is not
    /// one, 'typ?' when no variant names a codec Tonearm decodes.
    public func open() throws(AudioError) {
        let first = try loadPlaylist(url)
        var media: (HLSMediaPlaylist, String)
        switch first.playlist {
        case .media(let p):
            media = (p, first.url)
        case .master(let m):
            master = m
            variants = m.playableVariants
            guard !variants.isEmpty else {
                throw AudioError(.unsupportedFileType, "no variant of \(url) is in a codec Tonearm decodes ("
                    + m.variants.map { $0.codecs.joined(separator: ",") }.joined(separator: "; ") + ")")
            }
            let index = options.fixedVariant.map { min(max(0, $0), variants.count - 1) } ?? 0
            let loaded = try loadMedia(for: index)
            media = loaded
            variantIndex = index
        }
        condition.withLock {
            playlist = media.0
            mediaURL = media.1
        }
        nextSequence = startSequence(in: media.0)
        lastReload = Date()
        lastChange = lastReload
        let me = Weak(self)
        let t = Thread { HLSStream.run(me) }
        t.name = "tonearm.hls"
        thread = t
        t.start()
    }

    /// The sum of the segment durations of a VOD presentation; nil while it is live.
    public var duration: Double? {
        condition.withLock { playlist.hasEndList ? playlist.duration : nil }
    }

    /// A presentation whose playlist has no ENDLIST yet.
    public var isLive: Bool { condition.withLock { !playlist.hasEndList } }

    /// The variant playing now (an index in ``variants``), for a master playlist.
    public var currentVariant: Int? { condition.withLock { variantIndex } }

    /// Bytes handed to the reader so far.
    public var position: Int64 { condition.withLock { handedBytes } }

    /// Bytes fetched and not read yet.
    public var bufferedBytes: Int { condition.withLock { queue.reduce(0) { $0 + $1.bytes.count - $1.offset } } }

    /// The next segment boundary or bytes, waiting at most `seconds` (nil when nothing came).
    /// Throws what made the presentation fail, once the segments before it were read.
    public func read(into out: UnsafeMutableRawBufferPointer, waitingUpTo seconds: Double) throws(AudioError) -> Chunk? {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if closed { throw AudioError(.illegalOperation, "the stream was closed") }
            if !queue.isEmpty {
                if !queue[0].announced {
                    queue[0].announced = true
                    return .segment(queue[0].start)
                }
                let n = min(out.count, queue[0].bytes.count - queue[0].offset)
                if n > 0 {
                    queue[0].bytes.withUnsafeBytes { src in
                        out.baseAddress!.copyMemory(from: src.baseAddress! + queue[0].offset, byteCount: n)
                    }
                    queue[0].offset += n
                    handedBytes += Int64(n)
                }
                if queue[0].offset == queue[0].bytes.count {
                    queue.removeFirst()
                    condition.broadcast()
                }
                if n > 0 { return .bytes(n) }
                continue
            }
            if let failure { throw failure }
            if ended { return .end }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// Moves a VOD presentation to the segment holding `time` seconds: the next chunk is that
    /// segment's start. Returns the segment's start time. 'rng?' for a live presentation.
    @discardableResult
    public func seek(toTime time: Double) throws(AudioError) -> Double {
        condition.lock()
        defer { condition.unlock() }
        do {
            guard playlist.hasEndList else { throw AudioError(.rangeNotSupported, "a live HLS stream cannot seek") }
            guard !playlist.segments.isEmpty else { throw AudioError(.invalidPacketOffset, "the playlist lists no segment") }
            var start = 0.0
            var target = playlist.segments[playlist.segments.count - 1]
            var targetStart = playlist.duration - target.duration
            for s in playlist.segments {
                if time < start + s.duration { target = s; targetStart = start; break }
                start += s.duration
            }
            seekRequest = (target.sequence, targetStart)
            generation += 1
            queue.removeAll()
            ended = false
            failure = nil
            condition.broadcast()
            return targetStart
        }
    }

    public func close() {
        condition.withLock {
            closed = true
            queue.removeAll()
            condition.broadcast()
        }
    }

    // MARK: The fetcher's thread

    private static func run(_ weakSelf: Weak<HLSStream>) {
        while let stream = weakSelf.value, stream.step() {}
    }

    /// Fetches the next segment, or waits; false once closed.
    private func step() -> Bool {
        condition.lock()
        if closed { condition.unlock(); return false }
        if let seek = seekRequest {
            seekRequest = nil
            nextSequence = seek.sequence
            playTime = seek.time
            needsRestart = true
            needsReset = true
            pendingSilence = 0
            pendingSkipped = []
            currentMap = nil
        }
        if queue.count >= max(1, options.segmentsAhead) || ended || failure != nil {
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
            condition.unlock()
            return true
        }
        let current = playlist
        let myGeneration = generation
        condition.unlock()

        guard let index = current.segments.firstIndex(where: { $0.sequence == nextSequence }) else {
            waitForSegments(current)
            return true
        }
        let segment = current.segments[index]
        if segment.isGap {
            pendingSilence += segment.duration
            advance(past: segment)
            return true
        }
        do throws(AudioError) {
            let started = Date()
            let (bytes, type, withInit) = try fetchWithRetries(segment, live: !current.hasEndList)
            let elapsed = max(1e-3, Date().timeIntervalSince(started))
            measure(bytes: bytes.count, seconds: elapsed, segmentDuration: segment.duration)
            // After a gap (skipped or EXT-X-GAP segments) the bytes do not follow on either.
            let afterGap = pendingSilence > 0 || !pendingSkipped.isEmpty
            var start = HLSSegmentStart(
                sequence: segment.sequence, time: playTime, duration: segment.duration, fileType: type,
                restartsParser: needsRestart || withInit || type != currentType || segment.discontinuity || afterGap,
                resetsDecoder: needsReset || segment.discontinuity || afterGap,
                silenceBefore: pendingSilence, skipped: pendingSkipped, title: segment.title,
                programDateTime: segment.programDateTime, variant: nil)
            condition.withLock {
                if let v = variantIndex, v != announcedVariant, v < variants.count {
                    start.variant = HLSVariantChoice(index: v, bandwidth: variants[v].bandwidth, url: variants[v].url,
                                                     previous: announcedVariant, throughput: throughput.map { Int($0) })
                    announcedVariant = v
                }
                guard generation == myGeneration, !closed else { return }
                queue.append((start, bytes, false, 0))
                condition.broadcast()
            }
            currentType = type
            needsRestart = false
            needsReset = false
            pendingSilence = 0
            pendingSkipped = []
            advance(past: segment)
            adaptVariant()
        } catch {
            guard myGeneration == condition.withLock({ generation }) else { return true }
            if current.hasEndList {
                condition.withLock {
                    failure = AudioError(error.code, "segment \(segment.sequence) of \(mediaURL): \(error.message)", category: error.category)
                    condition.broadcast()
                }
            } else {
                // Live: skipped, and its time is silence.
                pendingSkipped.append(HLSSkippedSegment(sequence: segment.sequence, duration: segment.duration, error: error))
                pendingSilence += segment.duration
                needsRestart = true
                advance(past: segment)
            }
        }
        return true
    }

    private func advance(past segment: HLSSegment) {
        nextSequence = segment.sequence + 1
        playTime += segment.duration
        reloadIfDue()
    }

    /// The next segment is not listed: the end of a VOD playlist, or a live one to reload.
    private func waitForSegments(_ current: HLSMediaPlaylist) {
        if current.hasEndList {
            if current.segments.last.map({ nextSequence > $0.sequence }) ?? true {
                // The trailing gaps' silence goes out as an empty segment before the end.
                condition.withLock {
                    if pendingSilence > 0 || !pendingSkipped.isEmpty {
                        let start = HLSSegmentStart(sequence: nextSequence, time: playTime, duration: 0, fileType: currentType,
                                                    restartsParser: false, resetsDecoder: true, silenceBefore: pendingSilence,
                                                    skipped: pendingSkipped, title: nil, programDateTime: nil, variant: nil)
                        queue.append((start, [], false, 0))
                    }
                    ended = true
                    condition.broadcast()
                }
                pendingSilence = 0
                pendingSkipped = []
                return
            }
            if let first = current.segments.first, nextSequence < first.sequence { nextSequence = first.sequence }
            return
        }
        if let first = current.segments.first, nextSequence < first.sequence {
            // Fell out of the window: what slid out is lost.
            let lost = first.sequence - nextSequence
            pendingSkipped.append(HLSSkippedSegment(
                sequence: nextSequence, duration: Double(lost) * current.targetDuration,
                error: AudioError(.dataUnavailable, "\(lost) segment(s) left the live window before they were read")))
            pendingSilence += Double(lost) * current.targetDuration
            needsRestart = true
            nextSequence = first.sequence
            return
        }
        let wait = reloadInterval(current)
        let due = lastReload.addingTimeInterval(wait)
        if Date() < due {
            condition.withLock { _ = condition.wait(until: min(due, Date().addingTimeInterval(0.1))) }
            return
        }
        reload()
        let stallBound = options.stallTargetDurations * max(1, current.targetDuration) / max(1e-3, options.liveTimeScale)
        let stalled = condition.withLock { playlist.segments.last?.sequence ?? -1 } < nextSequence
            && Date().timeIntervalSince(lastChange) > stallBound
        if stalled {
            condition.withLock {
                failure = AudioError(.timedOut, "the live playlist \(mediaURL) did not change for \(Int(stallBound)) s")
                condition.broadcast()
            }
        }
    }

    private func reloadInterval(_ p: HLSMediaPlaylist) -> Double {
        let changed = lastChange >= lastReload.addingTimeInterval(-0.001)
        return (changed ? p.targetDuration : p.targetDuration / 2) / max(1e-3, options.liveTimeScale)
    }

    private func reloadIfDue() {
        let current = condition.withLock { playlist }
        guard !current.hasEndList, Date() >= lastReload.addingTimeInterval(reloadInterval(current)) else { return }
        reload()
    }

    /// Reloads the live media playlist; a failure keeps the old one (the stall bound decides).
    private func reload() {
        let url = condition.withLock { mediaURL }
        lastReload = Date()
        guard let loaded = try? loadPlaylist(url), case .media(let p) = loaded.playlist else { return }
        condition.withLock {
            let old = playlist
            if p.segments.last?.sequence != old.segments.last?.sequence || p.hasEndList != old.hasEndList {
                lastChange = lastReload
            }
            playlist = p
        }
    }

    // MARK: Variants

    private func measure(bytes: Int, seconds: Double, segmentDuration: Double) {
        let bitsPerSecond = Double(bytes) * 8 / seconds
        throughput = throughput.map { 0.5 * $0 + 0.5 * bitsPerSecond } ?? bitsPerSecond
        // A segment slower to fetch than to play: trust the last measure alone.
        if seconds > segmentDuration { throughput = min(throughput!, bitsPerSecond) }
    }

    /// After a segment: moves to the best variant the throughput allows, from the next segment.
    /// Down as soon as the current one does not fit; up only after
    /// ``Options/segmentsBeforeUpSwitch`` segments at the current one, so that one fast
    /// segment after a slow one does not make it swing back and forth.
    private func adaptVariant() {
        segmentsSinceSwitch += 1
        guard options.fixedVariant == nil, variants.count > 1, let throughput, let current = condition.withLock({ variantIndex })
        else { return }
        let budget = throughput * options.bandwidthSafety
        let sorted = variants.indices.sorted { variants[$0].bandwidth < variants[$1].bandwidth }
        let best = sorted.last(where: { Double(variants[$0].bandwidth) <= budget }) ?? sorted[0]
        guard best != current else { return }
        if variants[best].bandwidth > variants[current].bandwidth && segmentsSinceSwitch < options.segmentsBeforeUpSwitch { return }
        guard let (p, url) = try? loadMedia(for: best) else { return }
        if url == condition.withLock({ mediaURL }) {
            condition.withLock { variantIndex = best }
            return
        }
        // The same media sequence numbers in every variant (RFC 8216 §6.2.4 asks for aligned
        // segments); failing that, the segment that starts at the same time.
        if !p.segments.contains(where: { $0.sequence == nextSequence }) {
            let old = condition.withLock { playlist }
            let offset = old.segments.prefix(while: { $0.sequence < nextSequence }).reduce(0) { $0 + $1.duration }
            var t = 0.0
            var found = p.segments.last.map { $0.sequence + 1 } ?? nextSequence
            for s in p.segments {
                if t >= offset - 0.01 { found = s.sequence; break }
                t += s.duration
            }
            nextSequence = found
        }
        condition.withLock {
            playlist = p
            mediaURL = url
            variantIndex = best
        }
        needsRestart = true
        currentMap = nil
        segmentsSinceSwitch = 0
    }

    /// The media playlist of a variant (its audio rendition's when it has one).
    private func loadMedia(for index: Int) throws(AudioError) -> (HLSMediaPlaylist, String) {
        let variant = variants[index]
        let target = master?.audioRendition(for: variant, language: options.language)?.url ?? variant.url
        let loaded = try loadPlaylist(target)
        guard case .media(let p) = loaded.playlist else {
            throw AudioError(.invalidFile, "the variant \(target) is a master playlist, not a media playlist")
        }
        return (p, loaded.url)
    }

    private func loadPlaylist(_ url: String) throws(AudioError) -> (playlist: HLSPlaylist, url: String) {
        let (info, body) = try HTTPStream.download(url, options: options.http, limit: options.maximumPlaylistBytes)
        return (try HLSPlaylist.parse(body, url: info.url), info.url)
    }

    /// Where a presentation starts: its first segment, or for a live one the segment that
    /// leaves ``Options/liveEdgeTargetDurations`` target durations before the end.
    private func startSequence(in p: HLSMediaPlaylist) -> Int64 {
        guard !p.hasEndList, !p.segments.isEmpty else { return p.segments.first?.sequence ?? p.mediaSequence }
        var remaining = 0.0
        var index = p.segments.count
        while index > 0 && remaining < options.liveEdgeTargetDurations * p.targetDuration {
            index -= 1
            remaining += p.segments[index].duration
        }
        return p.segments[index].sequence
    }

    // MARK: Segments

    private func fetchWithRetries(_ segment: HLSSegment, live: Bool) throws(AudioError)
        -> (bytes: [UInt8], type: AudioFileTypeID?, withInit: Bool)
    {
        var attempt = 0
        while true {
            do { return try fetch(segment) } catch {
                attempt += 1
                if attempt > options.segmentRetries || error.category == .limit || condition.withLock({ closed }) { throw error }
                Thread.sleep(forTimeInterval: options.retryDelay)
            }
        }
    }

    /// A segment's bytes, decrypted, after its initialisation section when that is new.
    private func fetch(_ segment: HLSSegment) throws(AudioError) -> (bytes: [UInt8], type: AudioFileTypeID?, withInit: Bool) {
        var body = try HTTPStream.download(segment.url, range: segment.byteRange.map { ($0.offset, $0.length) },
                                           options: options.http, limit: options.maximumSegmentBytes).body
        body = try decrypt(body, key: segment.key, sequence: segment.sequence)
        var withInit = false
        if let map = segment.map, map != currentMap || needsRestart {
            var section: [UInt8]
            if let cached = initSections[map] { section = cached } else {
                section = try HTTPStream.download(map.url, range: map.byteRange.map { ($0.offset, $0.length) },
                                                  options: options.http, limit: options.maximumSegmentBytes).body
                // An encrypted segment's MAP is encrypted with the same key, from the same IV.
                section = try decrypt(section, key: segment.key, sequence: segment.sequence)
                initSections[map] = section
            }
            body = section + body
            currentMap = map
            withInit = true
        }
        let type = segment.map != nil ? AudioFileTypeID.mpeg4 : Self.sniff(body)
        return (body, type, withInit)
    }

    private func decrypt(_ bytes: [UInt8], key: HLSKey?, sequence: Int64) throws(AudioError) -> [UInt8] {
        guard let key else { return bytes }
        switch key.method {
        case .none:
            return bytes
        case .aes128:
            guard let keyURL = key.url else { throw AudioError(.invalidFile, "an AES-128 EXT-X-KEY without a URI") }
            let keyBytes: [UInt8]
            if let cached = keys[keyURL] { keyBytes = cached } else {
                keyBytes = try HTTPStream.download(keyURL, options: options.http, limit: 1024).body
                guard keyBytes.count == 16 else {
                    throw AudioError(.invalidFile, "the key \(keyURL) is \(keyBytes.count) bytes, not 16")
                }
                keys[keyURL] = keyBytes
            }
            return try AES128(key: keyBytes).decryptCBC(bytes, iv: key.iv(forSequence: sequence))
        case .sampleAES:
            throw AudioError(.unsupportedDataFormat, "SAMPLE-AES encryption is not supported", category: .unsupported)
        case .other(let name):
            throw AudioError(.unsupportedDataFormat, "the encryption method \(name) is not supported", category: .unsupported)
        }
    }

    /// The type of a segment without an initialisation section: MPEG-TS by its sync bytes,
    /// packed audio by the frames after its ID3 tag. nil: the parser's probe decides.
    public static func sniff(_ bytes: [UInt8]) -> AudioFileTypeID? {
        if bytes.count >= 189 && bytes[0] == 0x47 && bytes[188] == 0x47 { return "mp2t" }
        if bytes.count >= 193 && bytes[4] == 0x47 && bytes[192] == 0x47 { return "mp2t" }
        let tag = bytes.withUnsafeBytes { ID3v2.tagSize($0) } ?? 0
        guard tag <= Int64(bytes.count - 2) else { return nil }
        let i = Int(tag)
        if bytes[i] == 0xFF && bytes[i + 1] & 0xF6 == 0xF0 { return .adts }
        if bytes[i] == 0xFF && bytes[i + 1] & 0xE0 == 0xE0 { return .mp3 }
        if bytes[i] == 0x0B && bytes[i + 1] == 0x77 { return .ac3 }
        return nil
    }
}

/// What a segment boundary asks of the decoder.
public struct HLSSegmentStart: Sendable, Equatable {
    public var sequence: Int64
    /// The playlist's time at the segment's start: seconds since the presentation's first
    /// segment (VOD), or since playing began (live).
    public var time: Double
    /// `EXTINF`.
    public var duration: Double
    /// The type of its bytes (nil: let the parser's probe decide).
    public var fileType: AudioFileTypeID?
    /// Its bytes do not continue the previous segment's: a new parser reads them (the first
    /// segment, a discontinuity, a seek, a skipped segment, another variant or another type).
    public var restartsParser: Bool
    /// The decoder starts over too (a discontinuity, a seek, a gap); false for a variant switch
    /// of the same format, which goes on seamlessly.
    public var resetsDecoder: Bool
    /// Seconds of silence that stand for segments missing before this one.
    public var silenceBefore: Double
    /// The segments skipped before this one (live), and why.
    public var skipped: [HLSSkippedSegment]
    /// `EXTINF`'s title.
    public var title: String?
    public var programDateTime: Double?
    /// Set at the first segment of a variant: which one, and why.
    public var variant: HLSVariantChoice?
}

/// A live segment that could not be read and was skipped.
public struct HLSSkippedSegment: Sendable, Equatable {
    public var sequence: Int64
    public var duration: Double
    public var error: AudioError
}

/// The variant chosen (at the start) or switched to.
public struct HLSVariantChoice: Sendable, Equatable {
    /// In ``HLSStream/variants``.
    public var index: Int
    /// Its BANDWIDTH.
    public var bandwidth: Int
    public var url: String
    /// The variant before a switch; nil for the first.
    public var previous: Int?
    /// The measured throughput that decided, bits per second.
    public var throughput: Int?
}

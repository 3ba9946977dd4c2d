import Foundation
import TonearmCore
import TonearmFormats
import TonearmCodecs
import TonearmConvert
import TonearmPlayback

/// Decodes an ``HTTPStream`` as it arrives: the push path of seeds 000 and 002
/// (``AudioFileStream`` → ``AudioConverter``) on a thread of its own, into a bounded buffer
/// of PCM that a player node reads without waiting (``StreamingFrameSource``).
///
/// - Seeking goes through ``AudioFileStream/seek(toPacket:)`` (or `seek(toFrame:)` where packets
///   vary in length), then a Range request at that byte and `.discontinuity`; where packets
///   have a fixed frame count the decoded frames before the target are dropped, so the seek is
///   sample-accurate (MP3 decodes one packet early for its bit reservoir).
/// - Titles: ICY `StreamTitle`s and an Ogg chain's new comments come out as
///   ``Event/title(_:frame:)`` with the client frame they begin at.
/// - A live stream that reconnected is a discontinuity: the parser and the decoder start over.
/// - HLS (``init(hls:bufferSeconds:)``): each segment boundary does what its
///   ``HLSSegmentStart`` asks — a new parser where the bytes do not follow on, a decoder reset
///   at a discontinuity, silence for the segments a live stream skipped — so that playing time
///   follows the playlist; a seek goes to the segment, then drops the frames before the target.
/// - Where only the packets tell what a stream decodes to (HE-AAC in ADTS, whose header says
///   AAC LC at half the rate: most "AAC+" stations), ``open(timeout:)`` reads on until the
///   first packets are there and ``fileDataFormat`` is what they decode to
///   (``DecodedFormatProbe``), 'aacp' at 44.1 kHz, say.
public final class StreamDecoder: StreamingFrameSource, @unchecked Sendable {
    public enum Event: Sendable, Equatable {
        /// The format is known; frames follow.
        case ready(StreamDescription)
        /// A new title begins at this client frame (ICY StreamTitle, or an Ogg chain's comments).
        case title(String, frame: Int64)
        /// The bytes stopped following each other (a live stream reconnected), at this frame.
        case discontinuity(frame: Int64)
        /// Packets the decoder could not use were skipped.
        case decodeError(AudioError)
        /// The recorder could not write; playing goes on, recording stopped.
        case recordingStopped(AudioError)
        /// The stream ended; every frame was decoded.
        case ended
        /// The stream or the decoder failed for good.
        case failed(AudioError)
        /// HLS: this variant plays from this frame on (the first, or a switch).
        case variant(HLSVariantChoice, frame: Int64)
        /// HLS: a live segment could not be read; its time is silence from this frame.
        case segmentSkipped(HLSSkippedSegment, frame: Int64)
    }

    /// The HTTP stream read, or nil for HLS.
    public let stream: HTTPStream?
    /// The HLS presentation read, or nil.
    public let hls: HLSStream?
    /// The URL read.
    public var url: String { stream?.url ?? hls?.url ?? "" }
    /// Gets every byte the decoder reads, in order, and the ICY titles at their bytes.
    /// May be set at any time; the decoder's thread drops it when a write fails.
    public var recorder: StreamRecorder? {
        get { condition.withLock { currentRecorder } }
        set { condition.withLock { currentRecorder = newValue } }
    }
    /// Called on the decoder's or the network's thread. Set before ``open(timeout:)``.
    @Synchronized public var onEvent: (@Sendable (Event) -> Void)? = nil
    /// Seconds of decoded audio held ahead of the reader.
    public let bufferSeconds: Double

    private let condition = NSCondition()
    private var thread: Thread?
    // Guarded by `condition`.
    private var parser: AudioFileStream!
    private var converter: AudioConverter?
    private var clientFormat: StreamDescription?
    private var pcm: [UInt8] = []
    private var pcmStart = 0
    /// Client frames decoded since the start (or since the last seek's target).
    private var decodedFrames: Int64 = 0
    /// Client frames handed to the reader.
    private var readFrames: Int64 = 0
    private var ended = false
    private var failure: AudioError?
    private var closed = false
    private var seekTarget: Int64?
    private var pendingTitles: [(offset: Int64, title: String)] = []
    private var formatChanged = false
    /// The parser announced a packet table while packets flow (see `propertyFound`).
    private var tableChanged = false
    private var lastTitle: String?
    private var events: [Event] = []
    private var currentRecorder: StreamRecorder?
    /// What `fileDataFormat` answers: the decoder's thread changes it when an Ogg chain's next
    /// link or an MP3's frames change format.
    private var currentDataFormat = StreamDescription.float32(sampleRate: 44100, channels: 2)
    /// Whether `currentDataFormat` is the parser's format as its packets decode to (set once
    /// packets of a new format were seen).
    private var formatDecided = false

    /// The stream's data format, once ``open(timeout:)`` returned.
    public var fileDataFormat: StreamDescription { condition.withLock { currentDataFormat } }
    /// What the parser learnt: length, packet table, info dictionary…
    public var properties: FileProperties? { condition.withLock { parser?.properties } }

    public init(stream: HTTPStream, bufferSeconds: Double = 4) {
        self.stream = stream
        hls = nil
        self.bufferSeconds = max(0.5, bufferSeconds)
    }

    /// Decodes an HLS presentation (not opened yet: ``open(timeout:)`` opens it).
    public init(hls: HLSStream, bufferSeconds: Double = 4) {
        stream = nil
        self.hls = hls
        self.bufferSeconds = max(0.5, bufferSeconds)
    }

    deinit { close() }

    /// Connects, and parses until the format is known (waiting at most `timeout` seconds for
    /// the bytes). Throws 'typ?' when the bytes are in no format Tonearm reads.
    public func open(timeout: Double = 15) throws(AudioError) {
        var hint: AudioFileTypeID?
        if let stream { hint = try stream.open().fileTypeHint }
        if let hls { try hls.open() }
        condition.lock()
        defer { condition.unlock() }
        makeParser(hint: hint)
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 16384)
        /// Reads, records and parses the next bytes; false at the stream's end.
        func next() throws(AudioError) -> Bool {
            condition.unlock()
            let got: Input?
            do { got = try read(into: &chunk, waitingUpTo: 0.25) } catch {
                condition.lock()
                throw error
            }
            condition.lock()
            switch got {
            case nil:
                return true
            case .end:
                try parser.parse(nil)
                return false
            case .segment(let start):
                try beginSegment(start)
                return true
            case .bytes(let count, let discontinuity, let position):
                record(chunk, count: count, at: position)
                try parser.parse(chunk[..<count], flags: discontinuity ? .discontinuity : [])
                // Titles in these first bytes begin with the first frame.
                takeTitles()
                noteTitles(upTo: position + Int64(count))
                return true
            }
        }
        while !parser.isReadyToProducePackets {
            guard Date() < deadline else { throw AudioError(.timedOut, "the format of \(url) was not known after \(Int(timeout)) s") }
            guard try next() else {
                guard parser.isReadyToProducePackets else {
                    throw AudioError(.unsupportedFileType, "\(url) ended before its format was known")
                }
                break
            }
        }
        guard let parsed = parser.properties?.dataFormat else { throw AudioError(.invalidFile, "no data format") }
        if DecodedFormatProbe(format: parsed, magicCookie: parser.properties?.magicCookie) != nil {
            // The format is decided by the first packets: read on until they come.
            while !formatDecided && Date() < deadline {
                guard try next() else { break }
            }
        }
        if !formatDecided { currentDataFormat = parsed }
        let format = currentDataFormat
        // The title the file's own tags give (an Ogg stream's first link, an ID3 tag).
        if lastTitle == nil, let title = parser.properties?.info.displayTitle {
            if hls != nil { recordingTitles.insert((0, title), at: 0) }
            noteTitle(title, frame: 0)
        }
        events.append(.ready(format))
    }

    /// A new parser for the bytes from here on, with the hint, and the byte-range fetcher of
    /// a seekable HTTP stream. Caller holds the lock.
    private func makeParser(hint: AudioFileTypeID?) {
        parser = AudioFileStream(fileTypeHint: hint, propertyListener: { [unowned self] s, id, _ in
            propertyFound(s, id)
        }, packets: { [unowned self] _, count, data, descriptions in
            decode(data, count: count, descriptions: descriptions)
        })
        if let stream, stream.isSeekable {
            parser.byteRangeFetcher = { (offset, count) throws(AudioError) in try stream.fetch(offset: offset, count: count) }
            parser.sourceSize = stream.size
        }
    }

    /// What the next read gave.
    private enum Input {
        /// Bytes, at this offset of the stream; `discontinuity`: they do not follow the last.
        case bytes(Int, discontinuity: Bool, position: Int64)
        /// HLS: a segment begins.
        case segment(HLSSegmentStart)
        /// The end of the stream.
        case end
    }

    /// Reads the next bytes or boundary of the HTTP or HLS stream, waiting at most `seconds`.
    /// Caller does not hold the lock.
    private func read(into chunk: inout [UInt8], waitingUpTo seconds: Double) throws(AudioError) -> Input? {
        if let hls {
            let position = hls.position
            switch try chunk.withMutableBytes({ raw throws(AudioError) in try hls.read(into: raw, waitingUpTo: seconds) }) {
            case nil: return nil
            case .end: return .end
            case .segment(let start): return .segment(start)
            case .bytes(let n): return .bytes(n, discontinuity: false, position: position)
            }
        }
        guard let stream else { return .end }
        let position = stream.position
        guard let got = try chunk.withMutableBytes({ raw throws(AudioError) in try stream.read(into: raw, waitingUpTo: seconds) }) else {
            return nil
        }
        return got.count == 0 ? .end : .bytes(got.count, discontinuity: got.discontinuity, position: position)
    }

    /// An HLS segment begins: the old parser gives its last packets, the silence of skipped
    /// segments goes out, and a new parser (and a reset decoder) start where the boundary asks.
    /// Caller holds the lock.
    private func beginSegment(_ start: HLSSegmentStart) throws(AudioError) {
        segmentRecordsPackets = start.fileType != .mpeg4
        if start.restartsParser && parser.isReadyToProducePackets {
            // The last PES of a transport stream ends only with the stream.
            try? parser.parse(nil)
        }
        if let variant = start.variant { events.append(.variant(variant, frame: decodedFrames)) }
        for skipped in start.skipped { events.append(.segmentSkipped(skipped, frame: decodedFrames)) }
        if start.silenceBefore > 0 { appendSilence(seconds: start.silenceBefore) }
        let first = !parser.isReadyToProducePackets && converter == nil
        if start.resetsDecoder && !first {
            converter?.reset()
            events.append(.discontinuity(frame: decodedFrames))
        }
        if start.restartsParser && (parser.isReadyToProducePackets || start.fileType != nil) {
            makeParser(hint: start.fileType)
            // The new parser's format decides whether the converter goes on.
            newParser = true
            keepsDecoder = !start.resetsDecoder
        }
    }

    /// Client frames of silence (a live HLS segment that was skipped). Caller holds the lock.
    private func appendSilence(seconds: Double) {
        guard let client = clientFormat, client.bytesPerFrame > 0 else { return }
        let frames = Int((seconds * client.sampleRate).rounded())
        let fill: UInt8 = client.bitsPerChannel == 8 && !client.isSignedInteger && !client.isFloat ? 0x80 : 0
        try? appendOutput { out in out.append(contentsOf: repeatElement(fill, count: frames * Int(client.bytesPerFrame))) }
    }

    // MARK: StreamingFrameSource

    /// Sets the PCM format frames are handed out in. They are always interleaved: a
    /// non-interleaved format is taken as its interleaved form.
    public func setClientFormat(_ format: StreamDescription) throws(AudioError) {
        guard format.formatID == .linearPCM, format.bitsPerChannel > 0 else {
            throw AudioError(.unsupportedDataFormat, "a stream decodes to linear PCM, not \(format)")
        }
        condition.lock()
        defer { condition.unlock() }
        clientFormat = format.isInterleaved ? format
            : .pcm(sampleRate: format.sampleRate, channels: format.channelsPerFrame, bits: format.bitsPerChannel,
                   isFloat: format.isFloat, interleaved: true)
        try makeConverter()
        if thread == nil {
            let me = Weak(self)
            let t = Thread { StreamDecoder.run(me) }
            t.name = "tonearm.stream-decoder"
            thread = t
            t.start()
        }
    }

    /// The client-format length, when the stream has a known length and the parser counted
    /// or estimated its frames.
    public var clientLengthFrames: Int64? {
        condition.withLock {
            if let hls, let client = clientFormat { return hls.duration.map { Int64(($0 * client.sampleRate).rounded()) } }
            guard let client = clientFormat, let p = parser?.properties, stream?.size != nil, !p.isEstimated,
                  let frames = p.validFrames, frames > 0, let rate = p.dataFormat?.sampleRate, rate > 0 else { return nil }
            // The container's frames, at its rate (half the decoded rate for HE-AAC it names as LC).
            return Int64((Double(frames) * client.sampleRate / rate).rounded())
        }
    }

    public func readAvailable(frames: Int, into bytes: inout [UInt8]) throws(AudioError) -> Int? {
        condition.lock()
        let (n, pending) = take(frames: frames, into: &bytes)
        condition.unlock()
        flush(pending)
        return n
    }

    /// Waits until frames are ready (or the end): for callers not bound to a render deadline.
    public func read(frames: Int, into bytes: inout [UInt8]) throws(AudioError) -> Int {
        while true {
            guard let n = try readAvailable(frames: frames, into: &bytes) else {
                condition.lock()
                if pcm.count == pcmStart && !ended { _ = condition.wait(until: Date().addingTimeInterval(0.1)) }
                condition.unlock()
                continue
            }
            return n
        }
    }

    public func seek(toFrame frame: Int64) throws(AudioError) {
        condition.withLock {
            seekTarget = max(0, frame)
            pcm.removeAll(keepingCapacity: true)
            pcmStart = 0
            readFrames = max(0, frame)
            condition.broadcast()
        }
    }

    /// Seconds of decoded audio ready to play.
    public var bufferedSeconds: Double {
        condition.withLock {
            guard let client = clientFormat, client.bytesPerFrame > 0, client.sampleRate > 0 else { return 0 }
            return Double((pcm.count - pcmStart) / Int(client.bytesPerFrame)) / client.sampleRate
        }
    }

    /// True once every frame was decoded and read.
    public var isAtEnd: Bool { condition.withLock { ended && pcm.count == pcmStart } }

    public func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
        stream?.close()
        hls?.close()
    }

    // MARK: The decoder's thread

    /// The decoder thread's loop: one step at a time, the decoder held only for the step, so
    /// that one let go without close() is freed and its thread ends.
    private static func run(_ weakSelf: Weak<StreamDecoder>) {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while let decoder = weakSelf.value, decoder.step(&chunk) {}
    }

    /// Reads, parses and decodes one chunk (or waits a little); false once closed or failed.
    private func step(_ chunk: inout [UInt8]) -> Bool {
        condition.lock()
        if closed { condition.unlock(); return false }
        if ended && seekTarget == nil {
            // Everything decoded (or failed): a seek back may still come.
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
            condition.unlock()
            return true
        }
        if let target = seekTarget {
            seekTarget = nil
            let error = applySeek(to: target)
            if let error { fail(error) }
            condition.unlock()
            return true
        }
        // Wait while the buffer holds enough.
        if let client = clientFormat, pcm.count - pcmStart >= Int(bufferSeconds * client.sampleRate) * Int(client.bytesPerFrame) {
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
            condition.unlock()
            return true
        }
        condition.unlock()
        let got: Input?
        do { got = try read(into: &chunk, waitingUpTo: 0.1) } catch {
            condition.withLock { fail(error) }
            return false
        }
        condition.lock()
        // Closed while reading: nothing more reaches the recorder, which the owner may be
        // closing now (StreamPlayer.stop closes it right after this decoder).
        if closed { condition.unlock(); return false }
        guard let got, seekTarget == nil else { condition.unlock(); return true }
        // The titles within these bytes were queued before the bytes could be read.
        takeTitles()
        do throws(AudioError) {
            switch got {
            case .end:
                try parser.parse(nil)
                if let converter { try appendOutput { (out) throws(AudioError) in try converter.finish(into: &out) } }
                ended = true
                events.append(.ended)
            case .segment(let start):
                try beginSegment(start)
            case .bytes(let count, let discontinuity, let position):
                record(chunk, count: count, at: position)
                if discontinuity {
                    events.append(.discontinuity(frame: decodedFrames))
                    converter?.reset()
                }
                // In pieces cut at the titles, so that each title lands on the frames
                // decoded before its byte.
                var start = 0
                var flags: AudioFileStream.ParseFlags = discontinuity ? .discontinuity : []
                while start < count {
                    var end = count
                    if let next = pendingTitles.first, next.offset < position + Int64(count) {
                        end = max(start, Int(next.offset - position))
                    }
                    if end > start {
                        try parser.parse(chunk[start..<end], flags: flags)
                        flags = []
                    }
                    noteTitles(upTo: position + Int64(end))
                    start = end
                }
            }
        } catch {
            // Bytes no parser can follow (garbage in a stream): report, and go on with the next.
            events.append(.decodeError(error))
        }
        condition.broadcast()
        let pending = events
        events = []
        condition.unlock()
        flush(pending)
        return true
    }

    /// Hands the bytes read to the recorder, if any; a failed write stops the recording.
    /// Caller holds the lock.
    private func record(_ chunk: [UInt8], count: Int, at position: Int64) {
        guard let recorder = currentRecorder, count > 0, !(hls != nil && segmentRecordsPackets) else { return }
        do { try chunk.withBytes { raw throws(AudioError) in try recorder.write(UnsafeRawBufferPointer(rebasing: raw[..<count]), at: position) } } catch {
            events.append(.recordingStopped(error))
            currentRecorder = nil
        }
    }

    /// HLS: writes packets to the recorder as an elementary stream (AAC with an ADTS header
    /// each, MPEG audio and AC-3 as they are), at offsets that count what was written.
    /// Caller holds the lock.
    private func recordPackets(_ data: UnsafeRawBufferPointer, count: Int, descriptions: [PacketDescription]?) {
        guard let recorder = currentRecorder, let format = parser.properties?.dataFormat else {
            recordingTitles.removeAll { $0.packet < packetsDecoded + Int64(count) }
            return
        }
        var header: ADTSHeaderWriter?
        if [.mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2].contains(format.formatID) {
            guard let h = ADTSHeaderWriter(magicCookie: parser.properties?.magicCookie) else { return }
            header = h
        }
        do throws(AudioError) {
            func write(_ bytes: UnsafeRawBufferPointer) throws(AudioError) {
                try recorder.write(bytes, at: recordedBytes)
                recordedBytes += Int64(bytes.count)
            }
            var packet = packetsDecoded
            let ranges = descriptions.map { $0.map { Int($0.startOffset)..<Int($0.startOffset) + Int($0.dataByteSize) } } ?? [0..<data.count]
            for range in ranges where range.lowerBound >= 0 && range.upperBound <= data.count {
                // A title splits the recording before the first packet after its tag.
                while let next = recordingTitles.first, next.packet <= packet {
                    recordingTitles.removeFirst()
                    recorder.noteTitle(next.title, at: recordedBytes)
                }
                packet += 1
                if let header {
                    let bytes = header.header(payloadLength: range.count)
                    try bytes.withBytes { raw throws(AudioError) in try write(raw) }
                }
                try write(UnsafeRawBufferPointer(rebasing: data[range]))
            }
        } catch {
            events.append(.recordingStopped(error))
            currentRecorder = nil
        }
    }

    /// HLS: bytes written by ``recordPackets(_:count:descriptions:)``; packets the parser gave
    /// and packets decoded; the titles to split the recording at, by the packet they precede.
    private var recordedBytes: Int64 = 0
    private var packetsSeen: Int64 = 0
    private var packetsDecoded: Int64 = 0
    private var recordingTitles: [(packet: Int64, title: String)] = []

    /// Called with the lock held, from the parser inside `parse`.
    private func propertyFound(_ s: AudioFileStream, _ id: AudioFilePropertyID) {
        guard s.isReadyToProducePackets else { return }
        switch id {
        case .dataFormat, .magicCookieData:
            formatChanged = true
        case .packetTableInfo:
            // An Ogg link's priming, at its first audio page, and its length, at its last.
            tableChanged = true
        case .infoDictionary:
            // An Ogg chain's next link: its comments name what plays now.
            if let title = s.properties?.info.displayTitle {
                if hls != nil && title != lastTitle { recordingTitles.append((packetsSeen, title)) }
                noteTitle(title, frame: decodedFrames)
            }
        default:
            break
        }
    }

    private func decode(_ data: UnsafeRawBufferPointer, count: Int, descriptions: [PacketDescription]?, held: Bool = false) {
        if !held { packetsSeen += Int64(count) }
        do throws(AudioError) {
            if newParser {
                // An HLS segment that does not continue the last one's bytes: the converter goes
                // on only when nothing asks it to start over and the format is the same.
                newParser = false
                formatChanged = true
                if keepsDecoder, let converter, let format = parser.properties?.dataFormat,
                   converter.magicCookie == parser.properties?.magicCookie,
                   Self.decodedFormat(format, magicCookie: parser.properties?.magicCookie, data, count, descriptions) == currentDataFormat
                {
                    formatChanged = false
                }
            }
            if formatChanged {
                formatChanged = false
                if let format = parser.properties?.dataFormat {
                    currentDataFormat = Self.decodedFormat(format, magicCookie: parser.properties?.magicCookie, data, count, descriptions)
                    formatDecided = true
                }
                try makeConverter()
            }
            if tableChanged, let converter, var table = parser.properties?.packetTableInfo {
                tableChanged = false
                table = decodedFrames(table)
                if parser.properties?.isEstimated != false { table.numberValidFrames = 0 }
                converter.updateTrimming(from: table)
            }
            guard let converter else {
                // Packets that came with the format, before the reader chose its format.
                if heldPackets.reduce(0, { $0 + $1.data.count }) + data.count <= Self.maximumHeldBytes {
                    heldPackets.append((Array(data), count, descriptions))
                }
                return
            }
            // Recorded once, as they are decoded (held packets come back through here).
            if hls != nil {
                if segmentRecordsPackets { recordPackets(data, count: count, descriptions: descriptions) }
                packetsDecoded += Int64(count)
            }
            try appendOutput { (out) throws(AudioError) in
                try converter.convert(packets: data, count: count, descriptions: descriptions, into: &out)
            }
        } catch {
            events.append(.decodeError(error))
            converter?.reset()
        }
    }

    /// The format packets of `format` decode to, from the first of them where only they tell.
    private static func decodedFormat(_ format: StreamDescription, magicCookie: [UInt8]?, _ data: UnsafeRawBufferPointer,
                                      _ count: Int, _ descriptions: [PacketDescription]?) -> StreamDescription
    {
        guard let probe = DecodedFormatProbe(format: format, magicCookie: magicCookie), let descriptions else { return format }
        probe.examine(data, descriptions: descriptions)
        return probe.format
    }

    private func makeConverter() throws(AudioError) {
        guard let client = clientFormat, parser != nil, let parsed = parser.properties?.dataFormat else { return }
        let format = formatDecided ? currentDataFormat : parsed
        let c = try AudioConverter(from: format, to: client, magicCookie: parser.properties?.magicCookie)
        if converter == nil, let table = parser.properties?.packetTableInfo {
            // The first link: trim the priming, and the padding when the length is known (a
            // live stream goes on past what its first header says).
            c.packetTableInfo = decodedFrames(table)
            if parser.properties?.isEstimated != false || stream?.size == nil { c.framesToKeep = nil }
        }
        try c.prepare()
        converter = c
        let held = heldPackets
        heldPackets = []
        for p in held {
            p.data.withUnsafeBytes { decode($0, count: p.count, descriptions: p.descriptions, held: true) }
        }
    }

    /// A packet table in decoded frames: HE-AAC found in the packets doubles the container's.
    private func decodedFrames(_ table: PacketTableInfo) -> PacketTableInfo {
        guard formatDecided, let parsed = parser.properties?.dataFormat, parsed.framesPerPacket > 0,
              currentDataFormat.framesPerPacket > parsed.framesPerPacket
        else { return table }
        return table.scaled(by: Int64(currentDataFormat.framesPerPacket / parsed.framesPerPacket))
    }

    /// HLS: the segment's parser is new (``beginSegment(_:)``), and whether the decoder may go
    /// on with it; whether its packets are recorded rather than its bytes (MPEG-TS and packed
    /// audio become an elementary stream; fMP4 is recorded as it comes).
    private var newParser = false
    private var keepsDecoder = false
    private var segmentRecordsPackets = false
    /// Client frames still to drop after an HLS seek (from the segment's start to the target).
    private var clientFramesToDrop: Int64 = 0

    /// Packets held before the converter exists, and their limit.
    private var heldPackets: [(data: [UInt8], count: Int, descriptions: [PacketDescription]?)] = []
    private static let maximumHeldBytes = 4 << 20

    /// Lets the converter append its output straight to what the reader takes (no copy in
    /// between), and counts the frames it added.
    private func appendOutput(_ produce: (inout [UInt8]) throws(AudioError) -> Void) throws(AudioError) {
        guard let client = clientFormat, client.bytesPerFrame > 0 else { return }
        if pcmStart > 0 && pcmStart >= pcm.count / 2 {
            pcm.removeFirst(pcmStart)
            pcmStart = 0
        }
        let before = pcm.count
        defer {
            if clientFramesToDrop > 0 {
                let drop = min(clientFramesToDrop, Int64((pcm.count - before) / Int(client.bytesPerFrame)))
                pcm.removeSubrange(before..<before + Int(drop) * Int(client.bytesPerFrame))
                clientFramesToDrop -= drop
            }
            decodedFrames += Int64((pcm.count - before) / Int(client.bytesPerFrame))
        }
        try produce(&pcm)
    }

    /// Hands up to `frames` frames over. Caller holds the lock.
    private func take(frames: Int, into bytes: inout [UInt8]) -> (Int?, [Event]) {
        bytes.removeAll(keepingCapacity: true)
        let pending = events
        events = []
        guard let client = clientFormat, client.bytesPerFrame > 0 else { return (nil, pending) }
        let frameBytes = Int(client.bytesPerFrame)
        let available = (pcm.count - pcmStart) / frameBytes
        if available == 0 {
            if let failure { _ = failure; return (0, pending) }
            return (ended && seekTarget == nil ? 0 : nil, pending)
        }
        let n = min(frames, available)
        bytes.append(contentsOf: pcm[pcmStart..<pcmStart + n * frameBytes])
        pcmStart += n * frameBytes
        readFrames += Int64(n)
        condition.broadcast()
        return (n, pending)
    }

    private func flush(_ pending: [Event]) {
        guard !pending.isEmpty, let handler = onEvent else { return }
        for e in pending { handler(e) }
    }

    private func fail(_ error: AudioError) {
        guard failure == nil else { return }
        failure = error
        ended = true
        events.append(.failed(error))
        condition.broadcast()
    }

    /// Finds the byte to read on from, and restarts the stream there. Caller holds the lock.
    ///
    /// With a fixed frame count per packet, the packet holding the target (less the decoder's
    /// preroll) is read from and the converter drops the decoded frames before the target, as
    /// ExtAudioFile does: exact when the parser knows the packet's offset, else the position is
    /// the estimate's.
    private func applySeek(to target: Int64) -> AudioError? {
        guard let client = clientFormat, currentDataFormat.sampleRate > 0, let converter else { return nil }
        if let hls {
            // To the segment, then the frames before the target are dropped.
            do throws(AudioError) {
                let start = try hls.seek(toTime: Double(target) / client.sampleRate)
                clientFramesToDrop = max(0, target - Int64((start * client.sampleRate).rounded()))
            } catch {
                return error
            }
            decodedFrames = target
            pcm.removeAll(keepingCapacity: true)
            pcmStart = 0
            ended = false
            // What the parser holds from before the seek is dropped with it.
            makeParser(hint: nil)
            return nil
        }
        guard let stream else { return nil }
        let scale = client.sampleRate / currentDataFormat.sampleRate
        let fileFrame = Int64((Double(target) / scale).rounded())
        let properties = parser.properties
        let priming = Int64(max(0, properties?.packetTableInfo?.primingFrames ?? 0))
        let fpp = Int64(currentDataFormat.framesPerPacket)
        do throws(AudioError) {
            let byteOffset: Int64
            var skip: Int64 = 0
            if fpp > 0 {
                let decoded = priming + fileFrame
                let packet = max(0, decoded / fpp - Int64(converter.decoderPrerollPackets))
                byteOffset = try parser.seek(toPacket: packet).byteOffset
                skip = decoded - packet * fpp
            } else {
                byteOffset = try parser.seek(toFrame: fileFrame).byteOffset
            }
            guard let dataOffset = properties?.dataOffset else { return AudioError(.dataUnavailable, "no data offset") }
            try stream.seek(to: dataOffset + byteOffset)
            converter.reset()
            converter.framesToSkip = skip
            let valid = properties?.isEstimated == false ? properties?.packetTableInfo.flatMap { $0.numberValidFrames > 0 ? $0.numberValidFrames : nil } : nil
            converter.framesToKeep = valid.map { max(0, $0 - fileFrame) }
            decodedFrames = target
            pcm.removeAll(keepingCapacity: true)
            pcmStart = 0
            ended = false
            pendingTitles.removeAll()
            // The parser takes the next bytes as following the seek.
            try parser.parse([UInt8](), flags: .discontinuity)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Titles

    /// Takes the ICY titles the stream received, each with the audio byte it precedes.
    /// Caller holds the lock.
    private func takeTitles() {
        guard let stream else { return }
        for (offset, metadata) in stream.takeMetadata() {
            guard let title = metadata.streamTitle else { continue }
            pendingTitles.append((offset, title))
            currentRecorder?.noteTitle(title, at: offset)
        }
    }

    /// Titles whose byte has been parsed begin at the frames decoded so far. Caller holds the lock.
    private func noteTitles(upTo position: Int64) {
        while let first = pendingTitles.first, first.offset <= position {
            pendingTitles.removeFirst()
            noteTitle(first.title, frame: decodedFrames)
        }
    }

    private func noteTitle(_ title: String, frame: Int64) {
        guard title != lastTitle else { return }
        lastTitle = title
        events.append(.title(title, frame: frame))
    }

}

extension InfoDictionary {
    /// What a player shows as the title: "artist - title", or whichever of the two is there.
    public var displayTitle: String? {
        let title = self[InfoDictionary.title].flatMap { $0.isEmpty ? nil : $0 }
        let artist = self[InfoDictionary.artist].flatMap { $0.isEmpty ? nil : $0 }
        switch (artist, title) {
        case (let a?, let t?): return "\(a) - \(t)"
        case (nil, let t?): return t
        case (let a?, nil): return a
        default: return nil
        }
    }
}

/// A weak reference to hand to a thread.
final class Weak<T: AnyObject>: @unchecked Sendable {
    weak var value: T?
    init(_ value: T) { self.value = value }
}

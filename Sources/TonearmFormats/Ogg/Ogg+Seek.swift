import TonearmCore

extension OggParser {
    /// Where to resume reading so that the packet holding `frame` comes out: granule
    /// bisection over a source that can be read anywhere (RFC 3533 §5 gives every page the
    /// granule position where its last whole packet ends).
    ///
    /// `frame` counts in the same units as ``OggPacketEntry/pts``: frames at the format's
    /// rate, 0 being the first frame to play. The answer is the start of the last page of the
    /// selected stream whose granule position is at or before `frame`: every packet that ends
    /// on it ends at or before the frame, and the packet holding the frame begins on it or
    /// after it. Push those bytes with `.discontinuity` (after ``resume(at:)``): the packets of
    /// that page come first, which also gives a Vorbis decoder the packet it must discard.
    /// Before the first audio page the answer is the data offset. The search reads about
    /// log2(size / 64 KiB) windows of 64 KiB, then scans one window. It covers the first
    /// link of a chained stream.
    ///
    /// - Returns: the byte offset, and the granule position (in `pts` units) of the end of
    ///   that page, nil when the answer is the data offset.
    public func seekOffset(toFrame frame: Int64, fetch: ByteRangeFetcher, sourceSize: Int64) throws(AudioError)
        -> (offset: Int64, pageEndPTS: Int64?)
    {
        guard isReady, let dataOffset = properties.dataOffset, let serial = selectedSerial else {
            throw AudioError(.valueUnknown, "the headers have not been read yet")
        }
        let preSkip = selectedPreSkip
        let target = frame &+ preSkip
        var lo = dataOffset, hi = sourceSize
        var best: (offset: Int64, granule: Int64)?
        let window: Int64 = 1 << 16
        while hi - lo > window {
            let mid = lo + (hi - lo) / 2
            guard let (offset, page) = try OggParser.findPage(from: mid, before: hi, serial: serial, fetch: fetch) else {
                hi = mid
                continue
            }
            if page.granulePosition <= target {
                best = (offset, page.granulePosition)
                lo = offset + Int64(page.size)
            } else {
                hi = mid
            }
        }
        var at = lo
        while let (offset, page) = try OggParser.findPage(from: at, before: hi, serial: serial, fetch: fetch) {
            if page.granulePosition > target { break }
            best = (offset, page.granulePosition)
            at = offset + Int64(page.size)
        }
        guard let best else { return (dataOffset, nil) }
        // The last page's granule may be short of its packets (end trimming), so a stream
        // joined there cannot place them in time: answer the page before it instead.
        if let (_, page) = try OggParser.findPage(from: best.offset, before: best.offset + 1, serial: serial, fetch: fetch),
           page.isLast, best.granule > 0
        {
            return try seekOffset(toFrame: best.granule &- 1 &- preSkip, fetch: fetch, sourceSize: sourceSize)
        }
        // A page that begins inside a packet: start one page earlier, where that packet begins.
        if let (_, page) = try OggParser.findPage(from: best.offset, before: best.offset + 1, serial: serial, fetch: fetch),
           page.isContinued, let previous = try OggParser.previousPage(before: best.offset, after: dataOffset, serial: serial, fetch: fetch)
        {
            return (previous, best.granule &- preSkip)
        }
        return (best.offset, best.granule &- preSkip)
    }

    /// The start of the last page of `serial` that ends at or before `end` (and begins at or
    /// after `after`), searching back at most two windows.
    static func previousPage(before end: Int64, after: Int64, serial: UInt32, fetch: ByteRangeFetcher) throws(AudioError) -> Int64? {
        let start = max(after, end - Int64(2 * OggPage.maximumSize))
        guard start < end else { return nil }
        let bytes = try fetch(start, Int(end - start))
        var last: Int64?
        bytes.withUnsafeBytes { raw in
            var i = 0
            while let c = OggPage.nextCapture(in: raw, from: i) {
                if case .page(let page) = OggPage.scan(UnsafeRawBufferPointer(rebasing: raw[c...])), page.serial == serial {
                    last = start + Int64(c)
                    i = c + page.size
                } else {
                    i = c + 1
                }
            }
        }
        return last
    }

    /// The first page of `serial` at or after `from` that begins before `before`, has a
    /// right CRC and ends a packet (granule position not −1).
    static func findPage(from: Int64, before: Int64, serial: UInt32, fetch: ByteRangeFetcher) throws(AudioError)
        -> (Int64, OggPage)?
    {
        var at = from
        let window = 1 << 16
        while at < before {
            let bytes = try fetch(at, window + OggPage.maximumSize)
            if bytes.count < OggPage.minimumHeaderSize { return nil }
            let result: (Int64, OggPage)?? = bytes.withUnsafeBytes { raw -> (Int64, OggPage)?? in
                var i = 0
                while let c = OggPage.nextCapture(in: raw, from: i), c < window, at + Int64(c) < before {
                    if case .page(let page) = OggPage.scan(UnsafeRawBufferPointer(rebasing: raw[c...])),
                       page.serial == serial, page.granulePosition >= 0
                    {
                        return .some((at + Int64(c), page))
                    }
                    i = c + 1
                }
                return bytes.count < window ? .some(nil) : nil
            }
            if let found = result { return found }
            at += Int64(window)
        }
        return nil
    }

    /// The granule position of the last page of the selected stream, read from the end of
    /// the source (at most 1 MiB back): the exact end of a stream that is not chained.
    public func lastGranulePosition(fetch: ByteRangeFetcher, sourceSize: Int64) throws(AudioError) -> Int64? {
        guard let serial = selectedSerial else { return nil }
        var end = sourceSize
        let step = Int64(1 << 16)
        while end > max(0, sourceSize - (1 << 20)) {
            let start = max(0, end - step)
            let bytes = try fetch(start, Int(end - start) + OggPage.maximumSize)
            var last: Int64?
            bytes.withUnsafeBytes { raw in
                var i = 0
                while let c = OggPage.nextCapture(in: raw, from: i), start + Int64(c) < end {
                    if case .page(let page) = OggPage.scan(UnsafeRawBufferPointer(rebasing: raw[c...])),
                       page.serial == serial, page.granulePosition >= 0
                    {
                        last = page.granulePosition
                    }
                    i = c + 1
                }
            }
            if let last { return last }
            end = start
        }
        return nil
    }
}

extension OggParser {
    /// Reads whole packets of the first link on the random-access path, putting together
    /// those that continue across pages: the reader AudioFile needs for Ogg, whose packets
    /// are not one contiguous byte range when a page header lies inside them.
    ///
    /// Descriptions have offsets relative to the bytes, which hold the packets one after
    /// another. False when the parser has no packet index (it did not read the file on the
    /// random-access path); throws -39 (`.endOfFile`) when `start` is at or past the last
    /// packet. Index loops throughout: a debug build's iterators and captured closures
    /// allocate, and a steady-state read allocates nothing.
    public func readPackets(startingAt start: Int64, count: Int, into data: inout [UInt8],
                            descriptions: inout [PacketDescription], read: ByteRangeReader) throws(AudioError) -> Bool
    {
        guard properties.packetTimestamps != nil else { return false }
        guard start >= 0, count >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(start), count \(count)") }
        guard start < Int64(packetIndex.count) else {
            throw AudioError(.endOfFile, "packet \(start) is past the last packet (\(packetIndex.count))")
        }
        let end = Int(min(Int64(packetIndex.count), start + Int64(count)))
        data.removeAll(keepingCapacity: true)
        descriptions.removeAll(keepingCapacity: true)
        // Runs of packets that lie together in the file are read at once.
        var run: Range<Int64>?
        for i in Int(start)..<end {
            let e = packetIndex[i]
            descriptions.append(PacketDescription(startOffset: Int64(data.count) + Int64(run?.count ?? 0),
                                                  variableFramesInPacket: e.frames, dataByteSize: e.size))
            let pieces = e.pieces?.count ?? 1
            for k in 0..<pieces {
                let piece = e.pieces?[k] ?? e.offset..<e.offset + Int64(e.size)
                if let r = run, r.upperBound == piece.lowerBound {
                    run = r.lowerBound..<piece.upperBound
                } else {
                    if let r = run { try data.append(r.count, bytesAt: r.lowerBound, from: read) }
                    run = piece
                }
            }
        }
        if let r = run { try data.append(r.count, bytesAt: r.lowerBound, from: read) }
        return true
    }
}

extension OggParser {
    /// With a fetcher and the source's size, granule bisection (exact); else the packet
    /// that holds the frame among those seen, or an estimate.
    public func byteOffset(ofFrame frame: Int64, fetch: ByteRangeFetcher?, sourceSize: Int64?) throws(AudioError)
        -> (offset: Int64, isEstimated: Bool)
    {
        guard frame >= 0 else { throw AudioError(.invalidPacketOffset, "frame \(frame) is negative") }
        guard isReady, let dataOffset = properties.dataOffset else { throw AudioError(.valueUnknown, "the headers have not been read yet") }
        if let fetch, let sourceSize {
            return (try seekOffset(toFrame: frame, fetch: fetch, sourceSize: sourceSize).offset - dataOffset, false)
        }
        if let pts = properties.packetTimestamps, let i = pts.lastIndex(where: { $0 <= frame }) {
            return try byteOffset(ofPacket: Int64(i))
        }
        // In order, the packets seen so far average this many frames.
        let seen = packetsSeen
        guard seen.count > 0, seen.bytes > 0, let rate = properties.dataFormat?.sampleRate, rate > 0,
              let bitRate = properties.bitRate, bitRate > 0
        else { throw AudioError(.valueUnknown, "no packet has been seen yet") }
        let bytes = Double(frame) / rate * Double(bitRate) / 8
        return (Int64(saturating: bytes.rounded(.down)), true)
    }

    /// The byte offset, relative to the data offset, of the page where a packet of the first
    /// link begins: the place a reader resumes from (``resume(at:)``), after which the packets
    /// that begin on that page come out first. Exact on the random-access path, and on the
    /// push path for packets already seen while the stream was read in order; otherwise
    /// estimated from the average packet size so far (and flagged). One past the last packet
    /// answers the end of the audio data, on the random-access path.
    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        guard isReady, let dataOffset = properties.dataOffset else {
            throw AudioError(.valueUnknown, "the headers have not been read yet")
        }
        if properties.packetTimestamps != nil {
            if packet < Int64(packetIndex.count) { return (packetIndex[Int(packet)].page - dataOffset, false) }
            if packet == Int64(packetIndex.count) { return (properties.audioDataByteCount ?? 0, false) }
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(packetIndex.count))")
        }
        if packet <= indexedThrough, let i = OggParser.lastIndex(in: pageStarts, where: { $0.packet <= packet }) {
            return (pageStarts[i].offset - dataOffset, false)
        }
        let seen = packetsSeen
        guard seen.count > 0, seen.bytes > 0 else { throw AudioError(.valueUnknown, "no packet has been seen yet") }
        return (Int64(saturating: (Double(seen.bytes) / Double(seen.count) * Double(packet)).rounded(.down)), true)
    }
}

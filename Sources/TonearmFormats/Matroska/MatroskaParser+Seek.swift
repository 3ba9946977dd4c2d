import TonearmCore

/// Seeking: exact from the packet table (random access) or from the blocks already read
/// (push), then the Cues (fetched with the byte-range fetcher when they lie ahead), else an
/// estimate from the Segment's duration or the bytes per frame so far, flagged.
extension MatroskaParser {
    public func resume(at offset: Int64) throws(AudioError) {
        guard isReady, let dataOffset = properties.dataOffset else {
            throw AudioError(.illegalOperation, "cannot resume before the headers are read")
        }
        guard offset >= 0 else { throw AudioError(.invalidPacketOffset, "byte \(offset) is negative") }
        breakContinuity()
        hasResumed = true
        if offset <= dataOffset {
            // The top-level elements before the first Cluster are read again, or skipped.
            state = .segmentChild
            packetNumber = offset == dataOffset ? 0 : nil
            return
        }
        // A block read before, inside a known Cluster: the numbering and time go on.
        if let i = OggParser.lastIndex(in: blockStarts, where: { $0.offset <= offset }), blockStarts[i].offset == offset,
           let c = clusters.last(where: { $0.start < offset && ($0.end.map { offset < $0 } ?? true) })
        {
            cluster = c
            state = .clusterChild
            packetNumber = blockStarts[i].packet
            position = blockStarts[i].pts
            return
        }
        // A Cluster's start (read before, or from the Cues).
        if let c = clusters.first(where: { $0.start == offset }) {
            state = .segmentChild
            packetNumber = c.firstPacket
            return
        }
        if cuePoints?.contains(where: { segmentStart + $0.cluster == offset }) ?? false {
            state = .segmentChild
            return
        }
        state = .resync
    }

    public func byteOffset(ofPacket packet: Int64) throws(AudioError) -> (offset: Int64, isEstimated: Bool) {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        guard let dataOffset = properties.dataOffset else { throw AudioError(.valueUnknown, "the data offset is not known yet") }
        if pcmIndexed {
            // Random access, PCM: packets are frames, kept in blocks.
            guard packet <= totalFrames else {
                throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(totalFrames))")
            }
            guard let i = OggParser.lastIndex(in: pcmFrameStarts, where: { $0 <= packet }) else { return (0, false) }
            let e = packetIndex[i]
            return (e.offset - dataOffset + (packet - pcmFrameStarts[i]) * Int64(audio?.format.bytesPerFrame ?? 0), false)
        }
        if properties.packetTable != nil { return try properties.byteOffset(ofPacket: packet) }
        // Push path: the block that holds a packet already read.
        if packet < numberedThrough, let i = OggParser.lastIndex(in: blockStarts, where: { $0.packet <= packet }) {
            return (blockStarts[i].offset - dataOffset, false)
        }
        guard packetCount > 0, endOfRead > dataOffset else { throw AudioError(.valueUnknown, "no packets have been read yet") }
        let average = Double(endOfRead - dataOffset) / Double(packetCount)
        return (Int64(saturating: (average * Double(packet)).rounded(.down)), true)
    }

    /// Where the packets read so far end.
    private var endOfRead: Int64 { max(endOfLastCluster, blockStarts.last?.offset ?? 0, cluster?.start ?? 0) }

    public func byteOffset(ofFrame frame: Int64, fetch: ByteRangeFetcher?, sourceSize: Int64?) throws(AudioError)
        -> (offset: Int64, isEstimated: Bool)
    {
        guard frame >= 0 else { throw AudioError(.invalidPacketOffset, "frame \(frame) is negative") }
        guard let dataOffset = properties.dataOffset, let audio else {
            throw AudioError(.valueUnknown, "the stream has not reached its audio data yet")
        }
        if pcmIndexed { return try byteOffset(ofPacket: frame) }
        if properties.packetTable != nil {
            let (packet, _) = try PropertyValue.frameToPacket(frame + audio.primingFrames, properties: properties)
            return try byteOffset(ofPacket: packet)
        }
        // Push path: a block already read, when a later one (or the end) shows it holds the frame.
        if let i = OggParser.lastIndex(in: blockStarts, where: { $0.pts <= frame }),
           i + 1 < blockStarts.count || frame < (position ?? Int64.min)
        {
            return (blockStarts[i].offset - dataOffset, false)
        }
        if cuePoints == nil, let fetch, let pos = seekHead.positions[MKV.cues]?.first {
            do { try fetchElement(at: segmentStart + pos, fetch) } catch {}
        }
        if let cues = cuePoints, let first = cues.first {
            let t = ticks(ofFrame: frame)
            let point = OggParser.lastIndex(in: cues, where: { $0.time <= t }).map { cues[$0] } ?? first
            return (max(0, segmentStart + point.cluster - dataOffset), false)
        }
        // An estimate: the Segment's duration over the data's bytes, else the bytes per frame so far.
        let end = sourceSize ?? segmentEnd
        if let d = segmentInfo.duration, d > 0, let end, end > dataOffset {
            let frames = d * Double(segmentInfo.timestampScale) / 1e9 * audio.format.sampleRate
            let fraction = min(1, Double(frame + audio.primingFrames) / frames)
            if fraction.isFinite {
                return (Int64(saturating: (fraction * Double(end - dataOffset)).rounded(.down)), true)
            }
        }
        guard totalFrames > 0, endOfRead > dataOffset else { throw AudioError(.valueUnknown, "no packets have been read yet") }
        let perFrame = Double(endOfRead - dataOffset) / Double(totalFrames)
        return (Int64(saturating: (perFrame * Double(frame + audio.primingFrames)).rounded(.down)), true)
    }

    /// PCM on the random-access path: packets are frames, gathered from the blocks; with
    /// header stripping, each packet is the stripped bytes and the frame's. Nil for the rest,
    /// whose packets lie as the packet table places them.
    public func readPackets(startingAt start: Int64, count: Int, into data: inout [UInt8],
                            descriptions: inout [PacketDescription], read: ByteRangeReader) throws(AudioError) -> Bool
    {
        if let stripped = track?.strippedHeader, !stripped.isEmpty, properties.packetTable != nil {
            try strippedPackets(start, count, stripped, into: &data, &descriptions, read)
            return true
        }
        guard pcmIndexed, let audio else { return false }
        let bpf = Int(audio.format.bytesPerFrame)
        guard start >= 0, count >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(start), count \(count)") }
        guard start < totalFrames else { throw AudioError(.endOfFile, "packet \(start) is past the last packet (\(totalFrames))") }
        let n = Int(min(Int64(count), totalFrames - start))
        data.removeAll(keepingCapacity: true)
        descriptions.removeAll(keepingCapacity: true)
        guard var i = OggParser.lastIndex(in: pcmFrameStarts, where: { $0 <= start }) else { return true }
        var frame = start
        while frame < start + Int64(n), i < packetIndex.count {
            let e = packetIndex[i]
            let within = frame - pcmFrameStarts[i]
            let take = min(Int64(e.frames) - within, start + Int64(n) - frame)
            if take > 0 {
                try data.append(Int(take) * bpf, bytesAt: e.offset + within * Int64(bpf), from: read)
                frame += take
            }
            i += 1
        }
        for k in 0..<data.count / max(1, bpf) {
            descriptions.append(PacketDescription(startOffset: Int64(k * bpf), variableFramesInPacket: 0, dataByteSize: UInt32(bpf)))
        }
        return true
    }

    private func strippedPackets(_ start: Int64, _ count: Int, _ stripped: [UInt8], into data: inout [UInt8],
                                 _ descriptions: inout [PacketDescription], _ read: ByteRangeReader) throws(AudioError)
    {
        guard start >= 0, count >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(start), count \(count)") }
        guard start < Int64(packetIndex.count) else {
            throw AudioError(.endOfFile, "packet \(start) is past the last packet (\(packetIndex.count))")
        }
        let end = min(packetIndex.count, Int(start) + count)
        data.removeAll(keepingCapacity: true)
        descriptions.removeAll(keepingCapacity: true)
        let countsFrames = audio?.countsFrames ?? false
        for i in Int(start)..<end {
            let e = packetIndex[i]
            descriptions.append(PacketDescription(startOffset: Int64(data.count), variableFramesInPacket: countsFrames ? e.frames : 0,
                                                  dataByteSize: UInt32(stripped.count) + e.size))
            data.append(contentsOf: stripped)
            try data.append(Int(e.size), bytesAt: e.offset, from: read)
        }
    }
}

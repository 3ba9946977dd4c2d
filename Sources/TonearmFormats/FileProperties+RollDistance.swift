import TonearmCore

extension PropertyValue {
    /// PacketToRollDistance ('pkrl') for one packet: how many packets before `packet` must be
    /// decoded for `packet`'s output to be right. Apple defines `mRollDistance` as "a count of
    /// packets that must be decoded prior to the packet with the specified number in order to
    /// achieve the best practice for the decoding of that packet", so the answer depends on
    /// the packet: it is never more than the packets that exist before it (0 for packet 0),
    /// and it is counted in that file's own packets, whose sizes and durations vary.
    ///
    /// Per data format:
    /// - Opus: the packets that make up the 80 ms before `packet` (RFC 7845 §4.6: the decoder
    ///   needs 80 ms to converge after a seek), counted from each packet's own duration (2.5
    ///   to 120 ms): 4 packets of 20 ms, 2 of 40 ms. Where no duration is known yet (a stream
    ///   before its packets), the file's 'roll' group, else 4 (packets of 20 ms, the usual).
    /// - MPEG layer III: the bit reservoir. A frame's main data may begin up to 511 bytes
    ///   (MPEG-1; 255 for MPEG-2 and 2.5) before its header, inside the frames before it, and
    ///   its first granule overlaps the previous frame's last. So `packet − 1` must decode
    ///   right, which needs the frames before it that hold 511 bytes of main data: counted
    ///   from the sizes in the packet table when the file has one (a CRC assumed, so the
    ///   count is never short), else from the smallest frame the stream's rate allows.
    /// - MPEG layers I and II: the synthesis filter's 512-sample history, 2 frames of 384 and
    ///   1 of 1152.
    /// - AAC, AC-3, E-AC-3 and Vorbis: 1, the overlapping transform's previous block
    ///   (Apple's answer for AAC; an MP4 file's own 'roll' sample group, when it has one, wins).
    /// - Every other format (PCM, FLAC, ALAC, G.711, ADPCM…): the file's own roll distance
    ///   (an MP4 'roll' group), else 0: each packet decodes alone.
    /// - Throws: 'pck?' for a negative packet or one past the last.
    static func rollDistance(forPacket packet: Int64, properties p: FileProperties) throws(AudioError) -> Int64 {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        if let n = p.audioDataPacketCount, packet >= n, !p.isEstimated {
            throw AudioError(.invalidPacketOffset, "packet \(packet) is past the last packet (\(n))")
        }
        guard packet > 0 else { return 0 }
        let format = p.dataFormat
        let roll: Int64
        switch format?.formatID {
        case .opus?:
            let rate = format.map { $0.sampleRate > 0 ? $0.sampleRate : 48000 } ?? 48000
            roll = packetsBefore(packet, holding: Int64((0.08 * rate).rounded(.up)), properties: p) { d, fpp in
                let frames = Int64(d?.variableFramesInPacket ?? 0)
                return frames > 0 ? frames : fpp
            } ?? p.rollDistance ?? 4
        case .mpegLayer3?:
            roll = layer3RollDistance(packet, properties: p)
        case .mpegLayer1?: roll = 2
        case .mpegLayer2?: roll = 1
        case .mpeg4AAC?, .mpeg4AAC_HE?, .mpeg4AAC_HE_V2?, .mpeg4AAC_LD?, .mpeg4AAC_ELD?, .ac3?, .enhancedAC3?, .vorbis?:
            roll = p.rollDistance ?? 1
        default:
            roll = p.rollDistance ?? 0
        }
        return min(packet, max(0, roll))
    }

    /// The count of packets just before `packet` whose `amount` adds up to `target`, or
    /// `packet` when all of them together hold less; nil when the amounts are not known.
    private static func packetsBefore(_ packet: Int64, holding target: Int64, properties p: FileProperties,
                                      amount: (PacketDescription?, Int64) -> Int64) -> Int64?
    {
        let fpp = p.framesPerPacket ?? 0
        let table = p.packetTable
        var sum: Int64 = 0, count: Int64 = 0, q = packet - 1
        while q >= 0 && sum < target {
            let d = table.flatMap { q < $0.count ? $0[Int(q)] : nil }
            let a = amount(d, fpp)
            guard a > 0 else { return nil }
            sum += a
            count += 1
            q -= 1
        }
        return count
    }

    private static func layer3RollDistance(_ packet: Int64, properties p: FileProperties) -> Int64 {
        let rate = Int(p.dataFormat?.sampleRate ?? 44100)
        let channels = Int(max(1, p.dataFormat?.channelsPerFrame ?? 2))
        let reach: Int64 = rate >= 32000 ? 511 : 255
        // Header, CRC and side information come before each frame's main data.
        let overhead = Int64(6 + (rate >= 32000 ? (channels == 1 ? 17 : 32) : (channels == 1 ? 9 : 17)))
        let smallest = MPEGAudioHeader.smallestLayer3Frame(sampleRate: rate, channels: channels)
            .map { Int64(max(1, $0.frameLength - $0.headerLength - $0.sideInfoSize)) } ?? 1
        // Packet `packet − 1` must decode right for the overlap: the frames before it that
        // hold its reservoir, and itself.
        let before = packetsBefore(packet - 1, holding: reach, properties: p) { d, _ in
            guard let d else { return 0 }
            return max(1, Int64(d.dataByteSize) - overhead)
        } ?? (reach + smallest - 1) / smallest
        return 1 + before
    }
}

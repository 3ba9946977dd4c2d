import TonearmCore

/// AAC: the general audio coder of MPEG-4 (ISO/IEC 14496-3 subpart 4) and MPEG-2
/// (13818-7), object types AAC LC (2), decoded natively to Float32 (or Int16 and Int32 by
/// rounding, as FFmpeg's float decoder and its conversions do).
///
/// The decoder is configured by the AudioSpecificConfig, the magic cookie every container
/// gives for 'aac ' (ADTS and LATM build one from their headers, MPEG-2 AAC included). One
/// packet is one raw_data_block of 1024 frames. Channel configurations 1–7 and program
/// config elements give the channels, in AAC's order (centre first, LFE last), which
/// ``outputChannelLayout`` names so that a converter can reorder them.
///
/// Decoded: SCE, CPE (common window, M/S), LFE, DSE (skipped), PCE (read; the cookie's
/// decides the layout), FIL (extension payloads go to ``extensionDecoder``), END; section
/// data, scale factors, the 11 spectrum codebooks and escapes, pulses, intensity stereo,
/// PNS, TNS, sine and KBD windows in the four window sequences, IMDCT and overlap-add.
/// A coupling channel element (CCE) is read and its data left out of the output.
///
/// Damaged frames are concealed, never thrown: a frame whose bitstream is invalid (an
/// out-of-range section, scale factor, band or escape, a reserved codebook) or ends early
/// decodes as silence, through the filter bank so the previous frame's tail fades out
/// without a click, and counts in ``concealedPackets``. Decoding resumes with the next packet.
///
/// For HE-AAC, an SBR and PS decoder plugs in at ``extensionDecoder``: it receives the
/// payloads of fill elements with the element they follow, and the core's planar output of
/// each frame before it is interleaved; it may change the output rate and channel count.
public final class AACDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    /// 1024: one core frame. (An SBR decoder doubles it to 2048.)
    public let maximumFramesPerPacket: Int
    /// The IMDCT overlap reaches one frame back.
    public let seekPrerollPackets = 1
    public private(set) var concealedPackets = 0
    public var outputChannelLayout: ChannelLayout? { channelMap.layout }

    let config: AudioSpecificConfig
    let tables: AACStreamTables
    let channelMap: AACChannelMap
    let channels: Int
    let sampleFormat: PCMBuffer.CommonFormat
    /// The core frame length.
    static let frameLength = 1024

    /// What the frames decoded so far used: tests check that a fixture exercises the tool
    /// it was made for.
    private(set) var statistics = AACStatistics()

    /// SBR/PS: see ``AACExtensionDecoder``.
    var extensionDecoder: AACExtensionDecoder?

    /// Per output channel: overlap and window state; one more for elements nobody hears.
    private var states: [AACChannelState]
    private let scratchState = AACChannelState()
    private let streams = (AACChannelStream(), AACChannelStream())
    private var msMask = [Bool](repeating: false, count: 8 * 64)
    /// The PNS generator, kept across frames and channels as FFmpeg keeps it.
    private var random: UInt32 = 0x1F2E_3D4C
    private let filterbank = AACFilterbank()
    /// One frame of PCM, planar, channel c at c × 1024.
    private let pcm: UnsafeMutablePointer<Float>
    /// The packet being decoded, with zero bytes after it for the bit reader's loads.
    private var packet: UnsafeMutablePointer<UInt8>
    private var packetCapacity = 0
    private var decodedChannels: [Bool]

    public init(format: StreamDescription, magicCookie: [UInt8]?, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .mpeg4AAC else {
            throw AudioError(.unsupportedDataFormat, "the AAC decoder cannot decode \(format.formatID) data")
        }
        guard let cookie = magicCookie, !cookie.isEmpty else {
            throw AudioError(.unsupportedDataFormat, "AAC needs its AudioSpecificConfig as the magic cookie")
        }
        let asc = try AudioSpecificConfig.parse(cookie)
        guard asc.objectType == 2 else {
            throw AudioError(.unsupportedDataFormat, "MPEG-4 audio object type \(asc.objectType) is not decoded (AAC LC is)")
        }
        guard asc.frameLength == 1024 else {
            throw AudioError(.unsupportedDataFormat, "AAC with \(asc.frameLength)-sample frames is not decoded")
        }
        guard !asc.dependsOnCoreCoder else {
            throw AudioError(.unsupportedDataFormat, "scalable AAC over a core coder is not decoded")
        }
        guard asc.sampleRate >= 1000, asc.sampleRate <= 192_000 else {
            throw AudioError(.unsupportedDataFormat, "AAC at \(asc.sampleRate) Hz is not decoded")
        }
        let map: AACChannelMap
        if let program = asc.program {
            map = AACChannelMap(program: program)
        } else if let m = AACChannelMap.configuration(asc.channelConfiguration) {
            map = m
        } else {
            throw AudioError(.unsupportedDataFormat, "AAC channel configuration \(asc.channelConfiguration) is not decoded")
        }
        guard map.channels > 0, map.channels <= 64 else {
            throw AudioError(.unsupportedDataFormat, "AAC with \(map.channels) channels is not decoded")
        }
        config = asc
        channelMap = map
        channels = map.channels
        tables = AACStreamTables(samplingIndex: AACTables.samplingIndex(asc.sampleRate), objectType: asc.objectType)
        sampleFormat = output
        maximumFramesPerPacket = Self.frameLength
        var f = format
        f.framesPerPacket = UInt32(Self.frameLength)
        f.sampleRate = asc.sampleRate
        f.channelsPerFrame = UInt32(channels)
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: asc.sampleRate, channels: UInt32(channels))
        states = (0..<channels).map { _ in AACChannelState() }
        decodedChannels = [Bool](repeating: false, count: channels)
        pcm = .allocate(capacity: channels * Self.frameLength)
        pcm.initialize(repeating: 0, count: channels * Self.frameLength)
        packetCapacity = 2048
        packet = .allocate(capacity: packetCapacity)
    }

    deinit {
        pcm.deallocate()
        packet.deallocate()
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .mpeg4AAC else { return nil }
        return try AACDecoder(format: format, magicCookie: cookie, output: output)
    }

    public func reset() {
        for s in states { s.reset() }
        scratchState.reset()
    }

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions, codec: "AAC")
        try output.checkRoom(for: packetCount * maximumFramesPerPacket, channels: channels, sampleFormat: sampleFormat)
        var written = 0
        for k in 0..<packetCount {
            decodeFrame(layout.packet(k))
            let n = Self.frameLength
            switch sampleFormat {
            case .float32: output.withWriter(Float.self) { emit(n, into: $0.advanced(by: written)) }
            case .int16: output.withWriter(Int16.self) { emit(n, into: $0.advanced(by: written)) }
            case .int32: output.withWriter(Int32.self) { emit(n, into: $0.advanced(by: written)) }
            }
            written += n
        }
        output.frameLength += written
    }

    /// Decodes one raw_data_block into `pcm`, concealing it when it is damaged.
    private func decodeFrame(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count + 8 > packetCapacity {
            packet.deallocate()
            packetCapacity = bytes.count + 8
            packet = .allocate(capacity: packetCapacity)
        }
        for c in 0..<channels { decodedChannels[c] = false }
        do throws(AACDamage) {
            guard bytes.count > 0 else { throw .truncated }
            let count = Self.isLOASFrame(bytes) ? try latmPayload(bytes) : copy(bytes)
            (packet + count).update(repeating: 0, count: 8)
            var r = AACBits(packet, byteCount: count, capacity: packetCapacity)
            try readRawDataBlock(&r)
        } catch {
            concealedPackets += 1
            for c in 0..<channels { decodedChannels[c] = false }
        }
        // Channels the frame did not carry (or all, when it was damaged) fade out.
        for c in 0..<channels where !decodedChannels[c] {
            filterbank.silence(states[c], into: pcm + c * Self.frameLength)
        }
        extensionDecoder?.process(core: pcm, channels: channels, frameLength: Self.frameLength)
    }

    private func copy(_ bytes: UnsafeRawBufferPointer) -> Int {
        packet.update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        return bytes.count
    }

    /// Whether a packet is a whole LOAS frame (the LOAS parser hands them so, since the
    /// payload inside is not byte-aligned): the AudioSyncStream's sync word, and a length
    /// that is the packet's.
    static func isLOASFrame(_ b: UnsafeRawBufferPointer) -> Bool {
        b.count > 3 && b[0] == 0x56 && b[1] & 0xE0 == 0xE0 && (Int(b[1] & 0x1F) << 8 | Int(b[2])) + 3 == b.count
    }

    /// The raw_data_block inside a LOAS frame's AudioMuxElement, realigned into `packet`:
    /// its byte count.
    private func latmPayload(_ bytes: UnsafeRawBufferPointer) throws(AACDamage) -> Int {
        var r = BitReader([UInt8](bytes), byteOffset: 3)
        let length: Int
        do throws(LATM.Failure) {
            _ = try LATM.readMuxConfig(&r)
            length = try LATM.readPayloadLength(&r)
        } catch {
            throw .invalid("the LATM element cannot be read")
        }
        guard length > 0, length * 8 <= r.bitsRemaining else { throw .truncated }
        let start = r.bitPosition >> 3, shift = r.bitPosition & 7
        for i in 0..<length {
            let high = bytes[start + i], low = start + i + 1 < bytes.count ? bytes[start + i + 1] : 0
            packet[i] = shift == 0 ? high : high << shift | low >> (8 - shift)
        }
        return length
    }

    /// raw_data_block (§4.4.2.1, Table 4.3): elements until ID_END.
    private func readRawDataBlock(_ r: inout AACBits) throws(AACDamage) {
        var occurrences = [0, 0, 0, 0]
        var previous: (kind: Int, tag: Int)?
        var elements = 0
        while true {
            let id = r.read(3)
            elements += 1
            guard elements <= 256 else { throw .invalid("more than 256 elements in a frame") }
            switch id {
            case 0, 1, 3:  // SCE, CPE, LFE
                let tag = r.read(4)
                let kind = AACChannelMap.Kind(rawValue: id)!
                let slot = channelMap.slot(kind, occurrence: occurrences[id])
                occurrences[id] += 1
                if id == 1 {
                    try readPair(&r, slot: slot)
                } else {
                    try readSingle(&r, slot: slot)
                }
                previous = (id, tag)
            case 2:
                try AACCoupling.skip(&r, tables, stream: streams.0, random: &random)
                statistics.couplingElements += 1
                previous = nil
            case 4:  // data_stream_element (Table 4.10)
                _ = r.read(4)
                let aligned = r.bit()
                var count = r.read(8)
                if count == 255 { count += r.read(8) }
                if aligned { r.align() }
                r.skip(count * 8)
                statistics.dataStreamElements += 1
            case 5:  // program_config_element: the cookie's decides the layout
                try skipProgramConfig(&r)
                statistics.programConfigElements += 1
            case 6:  // fill_element (Table 4.11)
                var count = r.read(4)
                if count == 15 { count += r.read(8) - 1 }
                let start = r.position
                if count > 0, let ext = extensionDecoder {
                    let type = r.read(4)
                    ext.payload(type: type, bits: r, bitCount: count * 8 - 4, after: previous)
                }
                r.position = start + count * 8
                statistics.fillElements += 1
            default:  // ID_END
                guard !r.overrun else { throw .truncated }
                return
            }
            guard !r.overrun else { throw .truncated }
        }
    }

    private func skipProgramConfig(_ r: inout AACBits) throws(AACDamage) {
        // The element's comment is aligned within the raw data block: read it with the
        // shared parser over the block's bytes.
        let bytes = [UInt8](UnsafeBufferPointer(start: r.base, count: r.end / 8))
        var reader = BitReader(bytes)
        guard reader.skip(r.position) else { throw .truncated }
        do throws(AudioSpecificConfig.Failure) {
            _ = try AACProgramConfig.parse(&reader)
        } catch {
            throw .truncated
        }
        r.position = reader.bitPosition
    }

    /// single_channel_element or lfe_channel_element (Tables 4.4, 4.9).
    private func readSingle(_ r: inout AACBits, slot: AACChannelMap.Slot?) throws(AACDamage) {
        let s = streams.0
        let gain = r.read(8)
        try AACChannelStream.readInfo(&r, tables, into: &s.info)
        try s.read(&r, tables, globalGain: gain, random: &random)
        try finish(s, channel: slot?.channel)
    }

    /// channel_pair_element (Table 4.5).
    private func readPair(_ r: inout AACBits, slot: AACChannelMap.Slot?) throws(AACDamage) {
        let (a, b) = streams
        let common = r.bit()
        var msPresent = 0
        if common {
            try AACChannelStream.readInfo(&r, tables, into: &a.info)
            msPresent = r.read(2)
            guard msPresent != 3 else { throw .invalid("ms_mask_present 3") }
            AACStereo.readMask(&r, present: msPresent, info: a.info, into: &msMask)
            b.info = a.info
        }
        let gainA = r.read(8)
        if !common { try AACChannelStream.readInfo(&r, tables, into: &a.info) }
        try a.read(&r, tables, globalGain: gainA, random: &random)
        let gainB = r.read(8)
        if !common { try AACChannelStream.readInfo(&r, tables, into: &b.info) }
        try b.read(&r, tables, globalGain: gainB, random: &random)
        if common {
            let bands = tables.bands(a.info)
            if msPresent != 0 { statistics.midSideBands += AACStereo.midSide(a, b, mask: msMask, bands: bands) }
            AACStereo.intensity(a, b, msPresent: msPresent, mask: msMask, bands: bands)
        }
        try finish(a, channel: slot?.channel)
        try finish(b, channel: slot.map { $0.channel + 1 })
    }

    /// TNS and the filter bank of one decoded channel, into its output channel.
    private func finish(_ s: AACChannelStream, channel: Int?) throws(AACDamage) {
        statistics.count(s)
        AACTNS.apply(s, tables)
        guard let c = channel else {
            filterbank.synthesize(s, state: scratchState, into: nil)
            return
        }
        guard !decodedChannels[c] else { throw .invalid("channel \(c) twice in one frame") }
        decodedChannels[c] = true
        filterbank.synthesize(s, state: states[c], into: pcm + c * Self.frameLength)
    }

    private func emit<S: DecodedSample>(_ frames: Int, into w: SampleWriter<S>) {
        for c in 0..<channels {
            let src = pcm + c * Self.frameLength
            var dst = w.at(channel: c, frame: 0)
            for i in 0..<frames {
                dst.pointee = S.fromFloat(src[i])
                dst += w.stride
            }
        }
    }
}

/// The hook an SBR and PS decoder plugs into (HE-AAC, ISO/IEC 14496-3 subparts 4.6.18 and
/// 8): it sees each fill element's extension payload (EXT_SBR_DATA 13, EXT_SBR_DATA_CRC 14
/// and the others) with the channel element it follows, then the core's output.
protocol AACExtensionDecoder: AnyObject {
    /// One extension_payload: `type` is its 4-bit extension_type, `bits` stands after it
    /// with `bitCount` bits of the payload left; `after` is the SCE (0), CPE (1) or LFE (3)
    /// element the fill element follows, with its tag, nil when none does.
    func payload(type: Int, bits: AACBits, bitCount: Int, after: (kind: Int, tag: Int)?)
    /// The core's frame, planar (channel c at c × frameLength), before it is interleaved.
    func process(core: UnsafeMutablePointer<Float>, channels: Int, frameLength: Int)
}

/// Counts of what decoded frames used (channel streams, bands, filters, elements).
struct AACStatistics: Equatable {
    /// Channel streams by window sequence (Table 4.107's order).
    var windowSequences = [0, 0, 0, 0]
    var noiseBands = 0
    var intensityBands = 0
    /// Bands M/S was applied to.
    var midSideBands = 0
    var tnsFilters = 0
    var pulseChannels = 0
    var couplingElements = 0
    var dataStreamElements = 0
    var programConfigElements = 0
    var fillElements = 0

    mutating func count(_ s: AACChannelStream) {
        windowSequences[s.info.windowSequence.rawValue] += 1
        for g in 0..<s.info.groupCount {
            for b in 0..<s.info.maxSFB {
                switch s.bandTypes[g * 64 + b] {
                case AACBandType.noise: noiseBands += 1
                case AACBandType.intensityInPhase, AACBandType.intensityOutOfPhase: intensityBands += 1
                default: break
                }
            }
        }
        if s.tns.present {
            for w in 0..<s.info.windowCount {
                for f in 0..<s.tns.filterCount[w] where s.tns.order[w * 4 + f] > 0 { tnsFilters += 1 }
            }
        }
        if s.hadPulses { pulseChannels += 1 }
    }
}

/// One output channel's state between frames.
final class AACChannelState {
    /// The second half of the last frame's windowed IMDCT output.
    let overlap: UnsafeMutablePointer<Float>
    /// The window shape of the last frame (its right half's), which the next frame's left
    /// half uses (§4.6.11.3.2).
    var previousShape = 0

    init() {
        overlap = .allocate(capacity: 1024)
        overlap.initialize(repeating: 0, count: 1024)
    }

    deinit { overlap.deallocate() }

    func reset() {
        overlap.update(repeating: 0, count: 1024)
        previousShape = 0
    }
}

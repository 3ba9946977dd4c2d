import TonearmCore

/// AAC: the general audio coder of MPEG-4 (ISO/IEC 14496-3 subpart 4) and MPEG-2
/// (13818-7), object types AAC Main (1), LC (2) and LTP (4), decoded natively to Float32 (or Int16 and Int32 by
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
    /// LC: the IMDCT overlap reaches one frame back. Main: its predictors learn from every
    /// frame, and the encoder resets each of them within 30 frames (a reset group a frame).
    /// LTP: the prediction reads the last two frames' output (and so on back: frames
    /// before the preroll still leave a trace where the prediction reaches them).
    public let seekPrerollPackets: Int
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
    private let scratchState: AACChannelState
    /// The output of elements the configuration has no place for (dropped).
    private let scratchPCM: UnsafeMutablePointer<Float>
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
        guard [1, 2, 4].contains(asc.objectType) else {
            throw AudioError(.unsupportedDataFormat,
                             "MPEG-4 audio object type \(asc.objectType) is not decoded (AAC Main, LC and LTP are)")
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
        seekPrerollPackets = asc.objectType == 1 ? 31 : asc.objectType == 4 ? 3 : 1
        var f = format
        f.framesPerPacket = UInt32(Self.frameLength)
        f.sampleRate = asc.sampleRate
        f.channelsPerFrame = UInt32(channels)
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: asc.sampleRate, channels: UInt32(channels))
        states = (0..<channels).map { _ in AACChannelState(objectType: asc.objectType) }
        scratchState = AACChannelState(objectType: asc.objectType)
        scratchPCM = .allocate(capacity: Self.frameLength)
        decodedChannels = [Bool](repeating: false, count: channels)
        pcm = .allocate(capacity: channels * Self.frameLength)
        pcm.initialize(repeating: 0, count: channels * Self.frameLength)
        packetCapacity = 2048
        packet = .allocate(capacity: packetCapacity)
    }

    deinit {
        pcm.deallocate()
        packet.deallocate()
        scratchPCM.deallocate()
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
            let st = states[c], out = pcm + c * Self.frameLength
            filterbank.silence(st, into: out)
            if let history = st.ltpHistory { AACLTP.update(history: history, output: out, overlap: st.overlap) }
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
        predict(s, channel: slot?.channel)
        try finish(s, channel: slot?.channel)
    }

    /// channel_pair_element (Table 4.5).
    private func readPair(_ r: inout AACBits, slot: AACChannelMap.Slot?) throws(AACDamage) {
        let (a, b) = streams
        let common = r.bit()
        var msPresent = 0
        if common {
            try AACChannelStream.readInfo(&r, tables, into: &a.info)
            b.info = a.info
            if tables.objectType == 4 && a.info.predictionPresent {
                // AAC LTP: the second channel's ltp_data_present and ltp_data.
                b.info.ltp.present = false
                if r.bit() { AACChannelStream.readLTP(&r, b.info, into: &b.info.ltp) }
            }
            msPresent = r.read(2)
            guard msPresent != 3 else { throw .invalid("ms_mask_present 3") }
            AACStereo.readMask(&r, present: msPresent, info: a.info, into: &msMask)
        }
        let gainA = r.read(8)
        if !common { try AACChannelStream.readInfo(&r, tables, into: &a.info) }
        try a.read(&r, tables, globalGain: gainA, random: &random)
        let gainB = r.read(8)
        if !common { try AACChannelStream.readInfo(&r, tables, into: &b.info) }
        try b.read(&r, tables, globalGain: gainB, random: &random)
        let bands = tables.bands(a.info)
        if common && msPresent != 0 { statistics.midSideBands += AACStereo.midSide(a, b, mask: msMask, bands: bands) }
        // AAC Main predicts after M/S and before intensity stereo (§4.6.7.1).
        predict(a, channel: slot?.channel)
        predict(b, channel: slot.map { $0.channel + 1 })
        if common { AACStereo.intensity(a, b, msPresent: msPresent, mask: msMask, bands: bands) }
        try finish(a, channel: slot?.channel)
        try finish(b, channel: slot.map { $0.channel + 1 })
    }

    private func state(_ channel: Int?) -> AACChannelState { channel.map { states[$0] } ?? scratchState }

    /// AAC Main's prediction for one channel.
    private func predict(_ s: AACChannelStream, channel: Int?) {
        guard tables.objectType == 1, let predictors = state(channel).predictors else { return }
        AACPrediction.apply(s, state: predictors, tables: tables)
    }

    /// LTP, TNS and the filter bank of one decoded channel, into its output channel.
    private func finish(_ s: AACChannelStream, channel: Int?) throws(AACDamage) {
        statistics.count(s)
        if let c = channel {
            guard !decodedChannels[c] else { throw .invalid("channel \(c) twice in one frame") }
            decodedChannels[c] = true
        }
        let st = state(channel)
        let out = channel.map { pcm + $0 * Self.frameLength } ?? scratchPCM
        if let history = st.ltpHistory {
            AACLTP.apply(s, history: history, previousShape: st.previousShape, filterbank: filterbank, tables: tables)
        }
        AACTNS.apply(s, tables)
        filterbank.synthesize(s, state: st, into: out)
        if let history = st.ltpHistory { AACLTP.update(history: history, output: out, overlap: st.overlap) }
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
    /// AAC Main: bands whose predictor output is used; AAC LTP: bands predicted.
    var predictedBands = 0
    var longTermPredictedBands = 0
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
        if s.info.predictionPresent { predictedBands += s.info.predictionUsed.filter { $0 }.count }
        if s.info.ltp.present { longTermPredictedBands += s.info.ltp.used.filter { $0 }.count }
    }
}

/// One output channel's state between frames.
final class AACChannelState {
    /// The second half of the last frame's windowed IMDCT output.
    let overlap: UnsafeMutablePointer<Float>
    /// The window shape of the last frame (its right half's), which the next frame's left
    /// half uses (§4.6.11.3.2).
    var previousShape = 0
    /// AAC Main: the 672 predictors (``AACPrediction``).
    let predictors: UnsafeMutablePointer<Float>?
    /// AAC LTP: two frames of output and the pending overlap, 3072 samples (``AACLTP``).
    let ltpHistory: UnsafeMutablePointer<Float>?

    init(objectType: Int) {
        overlap = .allocate(capacity: 1024)
        overlap.initialize(repeating: 0, count: 1024)
        predictors = objectType == 1 ? .allocate(capacity: AACPrediction.lines * AACPrediction.stride) : nil
        ltpHistory = objectType == 4 ? .allocate(capacity: 3072) : nil
        reset()
    }

    deinit {
        overlap.deallocate()
        predictors?.deallocate()
        ltpHistory?.deallocate()
    }

    func reset() {
        overlap.update(repeating: 0, count: 1024)
        previousShape = 0
        if let predictors { AACPrediction.reset(predictors) }
        ltpHistory?.update(repeating: 0, count: 3072)
    }
}

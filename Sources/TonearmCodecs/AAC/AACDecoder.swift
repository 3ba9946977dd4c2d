import TonearmCore

/// AAC: the general audio coder of MPEG-4 (ISO/IEC 14496-3 subpart 4) and MPEG-2
/// (13818-7), object types AAC Main (1), LC (2) and LTP (4), decoded natively to Float32
/// (or Int16 and Int32 by rounding, as FFmpeg's float decoder and its conversions do).
///
/// The decoder is configured by the AudioSpecificConfig, the magic cookie every container
/// gives for 'aac ' (ADTS and LATM build one from their headers, MPEG-2 AAC included). One
/// packet is one raw_data_block of 1024 frames. Channel configurations 1–7 and program
/// config elements give the channels, in AAC's order (centre first, LFE last), which
/// ``outputChannelLayout`` names so that a converter can reorder them.
///
/// Decoded: SCE, CPE (common window, M/S), CCE, LFE, DSE (skipped), PCE (read; the cookie's
/// decides the layout), FIL (extension payloads go to ``extensionDecoder``), END; section
/// data, scale factors, the 11 spectrum codebooks and escapes, pulses, intensity stereo,
/// PNS, TNS, sine and KBD windows in the four window sequences, IMDCT and overlap-add.
/// Coupling channel elements (CCE) are applied as the standard says, before or after TNS or
/// after the IMDCT.
///
/// Damaged frames are concealed, never thrown: in a frame whose bitstream is invalid (an
/// out-of-range section, scale factor, band or escape, a reserved codebook) or ends early,
/// the channels from the damage on decode as silence, through the filter bank so that the
/// previous frame's tail fades out without a click, and the frame counts in
/// ``concealedPackets``. Decoding resumes with the next packet. (ADTS headers, and with them
/// their CRC, stay in the parser, which hands only the raw data blocks over.)
///
/// **HE-AAC and HE-AAC v2** ('aach' and 'aacp': ISO/IEC 14496-3's SBR and PS tools): SBR
/// doubles the rate (2048 frames a packet) and PS makes a mono core stereo. The format ID
/// decides, the cookie configures: 'aach' and 'aacp' decode the SBR of an LC cookie found in
/// the bitstream (implicit signalling: ``DecodedFormatProbe`` finds it in the first packets
/// and gives the format to ask for), as they do an explicitly signalled one (object type 5
/// or 29, or the 0x2B7/0x548 sync extensions); 'aac ' at the core rate decodes the core alone,
/// as a decoder without SBR would. 'aacp' turns PS on for a stream of one SCE. Every channel
/// element (SCE, CPE, LFE) has its SBR decoder, so 5.1 HE-AAC decodes too. An SBR or PS
/// payload that is invalid is dropped for its frame (SBR stays off until the next valid
/// header; PS keeps its last parameters), and the frame still comes out, the core upsampled.
/// The output lags the core by ``SBRDecoder/delay`` (962) samples, as FFmpeg's does.
public final class AACDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    /// 1024: one core frame; 2048 with SBR.
    public let maximumFramesPerPacket: Int
    /// LC: the IMDCT overlap reaches one frame back. Main: its predictors learn from every
    /// frame; an encoder that cycles through the 30 reset groups, as ffmpeg's does, has
    /// reset each of them within 30 frames. LTP: the prediction reads the last two frames'
    /// output (and so on back: frames before the preroll still leave a trace where the
    /// prediction reaches them).
    /// SBR: ``sbrPrerollPackets``.
    public let seekPrerollPackets: Int
    /// HE-AAC's preroll. After a reset SBR (and PS) start only at a header whose frame the
    /// decoder can read from nothing (envelopes coded as frequency deltas: a time delta needs
    /// the last frame's), and the state settles over the frames after it: the QMF banks and
    /// the gain smoothing reach one frame back, the noise generator's position and the PS
    /// decorrelator's delay lines further. 40 packets (0.9 s at 96 kHz, 1.9 s at 44.1 kHz) reach
    /// back past such a header when the stream has one every 32 frames or less, and leave the
    /// state time to settle; a stream with rarer startable headers converges later (exactly,
    /// once it does).
    static let sbrPrerollPackets = 40
    public private(set) var concealedPackets = 0
    /// The elements' channels; stereo where PS makes a mono core two channels.
    public var outputChannelLayout: ChannelLayout? {
        heaac?.parametricStereo == true ? ChannelLayout(tag: .stereo) : channelMap.layout
    }

    /// The stream's AudioSpecificConfig.
    let config: AudioSpecificConfig
    let tables: AACStreamTables
    let channelMap: AACChannelMap
    /// The core's channels, and the output's (PS makes one channel two).
    let channels: Int
    let outputChannels: Int
    let sampleFormat: PCMBuffer.CommonFormat
    /// The core frame length.
    static let frameLength = 1024

    /// What the frames decoded so far used: tests check that a fixture exercises the tool
    /// it was made for.
    private(set) var statistics = AACStatistics()

    /// SBR/PS: see ``AACExtensionDecoder``.
    var extensionDecoder: AACExtensionDecoder?
    /// HE-AAC's SBR and PS, when the format asks for them: the output is theirs.
    let heaac: HEAACExtension?

    /// Per output channel: overlap and window state; one more for elements nobody hears.
    private var states: [AACChannelState]
    private let scratchState: AACChannelState
    /// The output of elements the configuration has no place for (dropped).
    private let scratchPCM: UnsafeMutablePointer<Float>
    /// Per output channel, the frame's decoded channel stream; kept until the frame's end,
    /// when coupling, LTP, TNS and the filter bank run.
    private let channelStreams: [AACChannelStream]
    /// The element tags of the frame's channels: (is a pair, tag), for coupling.
    private var channelElements: [(isPair: Bool, tag: Int)]
    /// Elements the configuration has no place for: decoded and dropped at once.
    private let scratchStreams = (AACChannelStream(), AACChannelStream())
    /// Coupling channel elements by tag, and those of the current frame.
    private var couplings: [Int: AACCouplingElement] = [:]
    private var frameCouplings: [AACCouplingElement] = []
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
        guard Self.formatIDs.contains(format.formatID) else {
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
        // SBR when the format asks for HE-AAC, or for the rate an SBR cookie gives.
        let sbr = format.formatID != .mpeg4AAC || (asc.sbr && format.sampleRate > 0 && format.sampleRate != asc.sampleRate)
        let outputRate = sbr ? asc.extensionSampleRate ?? 2 * asc.sampleRate : asc.sampleRate
        if sbr {
            guard asc.objectType == 2 else {
                throw AudioError(.unsupportedDataFormat, "SBR over AAC object type \(asc.objectType) is not decoded (over LC it is)")
            }
            guard outputRate == 2 * asc.sampleRate, outputRate <= 96000 else {
                throw AudioError(.unsupportedDataFormat, "SBR from \(asc.sampleRate) to \(outputRate) Hz is not decoded (only to twice the rate, at most 96 kHz)")
            }
            heaac = HEAACExtension(outputSampleRate: Int(outputRate), map: map,
                                   parametricStereo: format.formatID == .mpeg4AAC_HE_V2 || (asc.ps && format.channelsPerFrame != 1))
        } else {
            heaac = nil
        }
        extensionDecoder = heaac
        config = asc
        channelMap = map
        channels = map.channels
        outputChannels = heaac?.channels ?? map.channels
        tables = AACStreamTables(samplingIndex: AACTables.samplingIndex(asc.sampleRate), objectType: asc.objectType)
        sampleFormat = output
        maximumFramesPerPacket = sbr ? 2 * Self.frameLength : Self.frameLength
        seekPrerollPackets = sbr ? Self.sbrPrerollPackets : asc.objectType == 1 ? 31 : asc.objectType == 4 ? 3 : 1
        var f = format
        f.framesPerPacket = UInt32(maximumFramesPerPacket)
        f.sampleRate = outputRate
        f.channelsPerFrame = UInt32(outputChannels)
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: outputRate, channels: UInt32(outputChannels))
        states = (0..<channels).map { _ in AACChannelState(objectType: asc.objectType) }
        scratchState = AACChannelState(objectType: asc.objectType)
        scratchPCM = .allocate(capacity: Self.frameLength)
        decodedChannels = [Bool](repeating: false, count: channels)
        channelStreams = (0..<channels).map { _ in AACChannelStream() }
        channelElements = Array(repeating: (false, 0), count: channels)
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

    /// 'aac ', 'aach' and 'aacp'.
    static let formatIDs: [AudioFormatID] = [.mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2]

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard formatIDs.contains(format.formatID) else { return nil }
        return try AACDecoder(format: format, magicCookie: cookie, output: output)
    }

    public func reset() {
        for s in states { s.reset() }
        scratchState.reset()
        for e in couplings.values { e.state.reset() }
        heaac?.reset()
    }

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions, codec: "AAC")
        try output.checkRoom(for: packetCount * maximumFramesPerPacket, channels: outputChannels, sampleFormat: sampleFormat)
        var written = 0
        for k in 0..<packetCount {
            decodeFrame(layout.packet(k))
            let n = maximumFramesPerPacket
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
        frameCouplings.removeAll(keepingCapacity: true)
        do throws(AACDamage) {
            guard bytes.count > 0 else { throw .truncated }
            let count: Int
            if LATM.isLOASFrame(bytes) {
                guard let n = LATM.loasPayload(bytes, into: packet) else { throw .invalid("the LATM element cannot be read") }
                count = n
            } else {
                count = copy(bytes)
            }
            (packet + count).update(repeating: 0, count: 8)
            var r = AACBits(packet, byteCount: count, capacity: packetCapacity)
            try readRawDataBlock(&r)
        } catch {
            concealedPackets += 1
        }
        synthesizeFrame()
        // Channels the frame did not carry, or that come after the damage, fade out; those
        // decoded before it keep their output.
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

    /// raw_data_block (Table 4.3): elements until ID_END.
    private func readRawDataBlock(_ r: inout AACBits) throws(AACDamage) {
        var occurrences = SIMD4<Int>()  // per element kind; an array here was a heap block per frame
        var previous: AACElementReference?
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
                    try readPair(&r, slot: slot, tag: tag)
                } else {
                    try readSingle(&r, slot: slot, tag: tag)
                }
                previous = AACElementReference(kind: id, tag: tag, channel: slot?.channel)
            case 2:
                let tag = r.read(4)
                let element = couplings[tag] ?? AACCouplingElement()
                couplings[tag] = element
                try element.read(&r, tables, random: &random)
                guard !frameCouplings.contains(where: { $0 === element }) else { throw .invalid("CCE \(tag) twice in one frame") }
                frameCouplings.append(element)
                statistics.couplingElements += 1
                previous = nil
            case 4:  // data_stream_element
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
            case 6:  // fill_element
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
    private func readSingle(_ r: inout AACBits, slot: AACChannelMap.Slot?, tag: Int) throws(AACDamage) {
        let s = slot.map { channelStreams[$0.channel] } ?? scratchStreams.0
        let gain = r.read(8)
        try AACChannelStream.readInfo(&r, tables, into: &s.info)
        try s.read(&r, tables, globalGain: gain, random: &random)
        predict(s, channel: slot?.channel)
        try finish(s, channel: slot?.channel, element: (false, tag))
    }

    /// channel_pair_element (Table 4.5).
    private func readPair(_ r: inout AACBits, slot: AACChannelMap.Slot?, tag: Int) throws(AACDamage) {
        let (a, b) = slot.map { (channelStreams[$0.channel], channelStreams[$0.channel + 1]) } ?? scratchStreams
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
        // AAC Main predicts after M/S and before intensity stereo.
        predict(a, channel: slot?.channel)
        predict(b, channel: slot.map { $0.channel + 1 })
        if common { AACStereo.intensity(a, b, msPresent: msPresent, mask: msMask, bands: bands) }
        try finish(a, channel: slot?.channel, element: (true, tag))
        try finish(b, channel: slot.map { $0.channel + 1 }, element: (true, tag))
    }

    private func state(_ channel: Int?) -> AACChannelState { channel.map { states[$0] } ?? scratchState }

    /// AAC Main's prediction for one channel.
    private func predict(_ s: AACChannelStream, channel: Int?) {
        guard tables.objectType == 1, let predictors = state(channel).predictors else { return }
        AACPrediction.apply(s, state: predictors, tables: tables)
    }

    /// Marks a decoded channel for the frame's end; an element with no place in the
    /// configuration goes through the filter bank at once, into nothing.
    private func finish(_ s: AACChannelStream, channel: Int?, element: (isPair: Bool, tag: Int)) throws(AACDamage) {
        statistics.count(s)
        guard let c = channel else {
            process(s, state: scratchState, into: scratchPCM, coupled: nil)
            return
        }
        guard !decodedChannels[c] else { throw .invalid("channel \(c) twice in one frame") }
        decodedChannels[c] = true
        channelElements[c] = element
    }

    /// The frame's end: the coupling channels first, then every channel decoded, with the
    /// coupling it receives.
    private func synthesizeFrame() {
        for e in frameCouplings {
            AACTNS.apply(e.stream, tables)
            if e.point == .afterIMDCT { filterbank.synthesize(e.stream, state: e.state, into: e.output) }
        }
        var c = 0
        while c < channels {
            let element = channelElements[c]
            let width = element.isPair && c + 1 < channels && decodedChannels[c + 1] && channelElements[c + 1] == element ? 2 : 1
            for k in 0..<width where decodedChannels[c + k] {
                // The coupling of this channel: per CCE of the frame, the gain lists it takes.
                var coupled: [(AACCouplingElement, Int)] = []
                for e in frameCouplings {
                    for lists in e.lists(forPair: element.isPair, tag: element.tag) {
                        if let l = k == 0 ? lists.left : lists.right { coupled.append((e, l)) }
                    }
                }
                process(channelStreams[c + k], state: states[c + k], into: pcm + (c + k) * Self.frameLength,
                        coupled: coupled.isEmpty ? nil : coupled)
            }
            c += width
        }
    }

    /// Coupling, LTP, TNS and the filter bank of one channel (dependent coupling
    /// before or after TNS, independent after the IMDCT).
    private func process(_ s: AACChannelStream, state st: AACChannelState, into out: UnsafeMutablePointer<Float>,
                         coupled: [(AACCouplingElement, Int)]?)
    {
        for (e, list) in coupled ?? [] where e.point == .beforeTNS { e.addSpectrum(to: s, list: list, tables: tables) }
        if let history = st.ltpHistory {
            AACLTP.apply(s, history: history, previousShape: st.previousShape, filterbank: filterbank, tables: tables)
        }
        AACTNS.apply(s, tables)
        for (e, list) in coupled ?? [] where e.point == .betweenTNSAndIMDCT { e.addSpectrum(to: s, list: list, tables: tables) }
        filterbank.synthesize(s, state: st, into: out)
        for (e, list) in coupled ?? [] where e.point == .afterIMDCT { e.addOutput(to: out, list: list) }
        if let history = st.ltpHistory { AACLTP.update(history: history, output: out, overlap: st.overlap) }
    }

    private func emit<S: DecodedSample>(_ frames: Int, into w: SampleWriter<S>) {
        let source = heaac?.output ?? pcm
        if S.self == Float.self, outputChannels == 2, w.stride == 2, w.channelDistance == 1 {
            // Interleaved stereo Float, the usual output: both channels in one pass.
            Self.interleave(source, source + frames, frames, into: UnsafeMutableRawPointer(w.base))
            return
        }
        for c in 0..<outputChannels {
            let src = source + c * frames
            var dst = w.at(channel: c, frame: 0)
            for i in 0..<frames {
                dst.pointee = S.fromFloat(src[i])
                dst += w.stride
            }
        }
    }
}

extension AACDecoder {
    /// Two planar channels into interleaved frames, four frames at a time.
    static func interleave(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, _ frames: Int,
                           into out: UnsafeMutableRawPointer)
    {
        var i = 0
        while i &+ 4 <= frames {
            let l = UnsafeRawPointer(left + i).loadUnaligned(as: SIMD4<Float>.self)
            let r = UnsafeRawPointer(right + i).loadUnaligned(as: SIMD4<Float>.self)
            out.storeBytes(of: SIMD4(l[0], r[0], l[1], r[1]), toByteOffset: i &* 8, as: SIMD4<Float>.self)
            out.storeBytes(of: SIMD4(l[2], r[2], l[3], r[3]), toByteOffset: i &* 8 &+ 16, as: SIMD4<Float>.self)
            i &+= 4
        }
        while i < frames {
            out.storeBytes(of: left[i], toByteOffset: i &* 8, as: Float.self)
            out.storeBytes(of: right[i], toByteOffset: i &* 8 &+ 4, as: Float.self)
            i &+= 1
        }
    }
}

/// The hook an SBR and PS decoder plugs into (HE-AAC, ISO/IEC 14496-3 subparts 4.6.18 and
/// 8): it sees each fill element's extension payload (EXT_SBR_DATA 13, EXT_SBR_DATA_CRC 14
/// and the others) with the channel element it follows, then the core's output.
protocol AACExtensionDecoder: AnyObject {
    /// One extension_payload: `type` is its 4-bit extension_type, `bits` stands after it
    /// with `bitCount` bits of the payload left; `after` is the element the fill element
    /// follows, nil when none does.
    func payload(type: Int, bits: AACBits, bitCount: Int, after: AACElementReference?)
    /// The core's frame, planar (channel c at c × frameLength), before it is interleaved.
    func process(core: UnsafeMutablePointer<Float>, channels: Int, frameLength: Int)
}

/// A channel element of a frame: SCE (0), CPE (1) or LFE (3), its tag, and its first output
/// channel (nil for an element the configuration has no place for).
struct AACElementReference {
    var kind: Int
    var tag: Int
    var channel: Int?
}

/// Counts of what decoded frames used (channel streams, bands, filters, elements).
struct AACStatistics: Equatable {
    /// Channel streams by window sequence (in AACWindowSequence's order).
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
        noiseBands += s.noiseBands
        intensityBands += s.intensityBands
        if s.tns.present {
            for w in 0..<s.info.windowCount {
                for f in 0..<s.tns.filterCount[w] where s.tns.order[w * 4 + f] > 0 { tnsFilters += 1 }
            }
        }
        if s.hadPulses { pulseChannels += 1 }
        if s.info.predictionPresent { predictedBands += s.info.predictionUsed.nonzeroBitCount }
        if s.info.ltp.present { longTermPredictedBands += s.info.ltp.used.nonzeroBitCount }
    }
}

/// One output channel's state between frames.
final class AACChannelState {
    /// The second half of the last frame's windowed IMDCT output.
    let overlap: UnsafeMutablePointer<Float>
    /// The window shape of the last frame (its right half's), which the next frame's left
    /// half uses.
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

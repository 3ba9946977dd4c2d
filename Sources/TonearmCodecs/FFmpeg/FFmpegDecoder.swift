#if FFmpeg
import TonearmCore
import TonearmFFmpeg

/// A decoder that runs one of libavcodec's, for the codecs Tonearm has no native decoder for
/// (with the FFmpeg trait only). The registry tries it after every native decoder, or alone
/// when ``CodecRegistry/preference`` is `.ffmpeg`.
///
/// Its output keeps the decoder's channel order (FFmpeg's, which is WAV's: see
/// ``outputChannelLayout``); samples are converted to the common format asked for by the
/// rules every Tonearm decoder follows (``DecodedSample``), so that a Float32 decode equals
/// the ffmpeg tool's `-f f32le` output.
final class FFmpegDecoder: AudioDecoder {
    let inputFormat: StreamDescription
    let outputFormat: StreamDescription
    let maximumFramesPerPacket: Int
    let outputChannelLayout: ChannelLayout?
    var backend: DecoderBackend { .ffmpeg(codec: context.decoderName) }
    private let context: FFmpegDecoderContext
    private let sampleFormat: PCMBuffer.CommonFormat
    private let channels: Int
    /// Frames a packet decoded to beyond the room the caller gave (never, for the sizes in
    /// ``maximumFrames(for:)``), written first on the next call.
    private var overflow: [PCMBuffer] = []
    private let isAAC: Bool
    /// A LOAS frame's payload, realigned.
    private var loasPayload: [UInt8] = []
    /// The frame length the current call may fill `output` to: `packetCount ×
    /// maximumFramesPerPacket` frames past where it started (the room the caller promised,
    /// which may be less than the buffer's capacity), or the capacity when draining.
    private var limit = 0

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard FFmpegCodecs.codecID(for: format) != nil else { return nil }
        return try FFmpegDecoder(format: format, cookie: cookie, output: output)
    }

    init(format: StreamDescription, cookie: [UInt8]?, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.channelsPerFrame > 0, format.channelsPerFrame <= 64 else {
            throw AudioError(.unsupportedDataFormat, "\(format.channelsPerFrame) channels")
        }
        guard format.sampleRate > 0, format.sampleRate <= 1_536_000 else {
            throw AudioError(.unsupportedDataFormat, "a sample rate of \(format.sampleRate) Hz")
        }
        let parameters = try FFmpegCodecParameters(format: format, cookie: cookie)
        context = try FFmpegDecoderContext(parameters)
        inputFormat = format
        isAAC = [.mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2].contains(format.formatID)
        sampleFormat = output
        channels = Int(format.channelsPerFrame)
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: format.channelsPerFrame)
        maximumFramesPerPacket = FFmpegDecoder.maximumFrames(for: format)
        let mask = context.channelMask
        outputChannelLayout = context.channels == channels && mask != 0 && mask <= 0x3FFFF
            ? ChannelLayout(bitmap: ChannelBitmap(rawValue: UInt32(mask))) : nil
    }

    /// The most frames one packet decodes to: the stream's frames per packet for codecs
    /// whose packets are one fixed-size frame, else a bound for the codec, else 32768.
    static func maximumFrames(for f: StreamDescription) -> Int {
        let fixed: Set<AudioFormatID> = [.ac3, .enhancedAC3, .mpegLayer1, .mpegLayer2, .mpegLayer3, .mpeg4AAC,
                                         .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .amr, .amrWB, .appleLossless, .appleIMA4,
                                         .dviIntelIMA, .microsoftADPCM, .linearPCM, .uLaw, .aLaw]
        if f.framesPerPacket > 0 && fixed.contains(f.formatID) { return Int(f.framesPerPacket) }
        switch f.formatID {
        case .linearPCM, .uLaw, .aLaw: return max(1, Int(f.bytesPerPacket / max(1, f.bytesPerFrame)))
        case .flac: return 65535
        case .opus: return 5760
        case .vorbis: return 8192
        case .mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2: return 2048
        case .mpegLayer1, .mpegLayer2, .mpegLayer3: return 1152
        case .ac3, .enhancedAC3: return 1536
        case "APE ": return 73728 * 4
        case "wvpk": return 150_000
        case "tta1": return Int(f.sampleRate * 256 / 245) + 1
        default: return max(32768, Int(f.framesPerPacket))
        }
    }

    func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                into output: PCMBuffer) throws(AudioError)
    {
        let layout: PacketLayout
        if inputFormat.bytesPerPacket > 0 && descriptions == nil {
            layout = try PacketLayout(data, packetCount: packetCount, descriptions: nil,
                                      bytesPerPacket: Int(inputFormat.bytesPerPacket), allowsShortLastPacket: true)
        } else {
            layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions,
                                      codec: context.decoderName)
        }
        try output.checkRoom(for: 0, channels: channels, sampleFormat: sampleFormat)
        // A call that throws writes nothing, as with every decoder: the frames of the packets
        // before the bad one are dropped with it.
        let start = output.frameLength
        let (promised, overflowed) = packetCount.multipliedReportingOverflow(by: maximumFramesPerPacket)
        limit = start + min(overflowed ? .max : promised, output.frameCapacity - start)
        do throws(AudioError) {
            try decodePackets(layout, into: output)
        } catch {
            output.frameLength = start
            overflow.removeAll()
            throw error
        }
    }

    private func decodePackets(_ layout: PacketLayout, into output: PCMBuffer) throws(AudioError) {
        flushOverflow(into: output)
        for k in 0..<layout.count {
            let packet = layout.packet(k)
            // The LOAS parser hands whole LOAS frames; FFmpeg's AAC decoder takes the
            // raw_data_block inside.
            if isAAC && LATM.isLOASFrame(packet) {
                if loasPayload.count < packet.count { loasPayload = [UInt8](repeating: 0, count: packet.count) }
                let n = loasPayload.withUnsafeMutableBufferPointer { LATM.loasPayload(packet, into: $0.baseAddress!) }
                guard let n else { throw AudioError(.codecBadData, "a LOAS frame whose AudioMuxElement cannot be read") }
                try loasPayload.withBytes { (raw) throws(AudioError) in
                    try decodePacket(UnsafeRawBufferPointer(rebasing: raw[0..<n]), into: output)
                }
            } else {
                try decodePacket(packet, into: output)
            }
        }
    }

    /// Decodes one packet (nil drains the decoder) into `output`, holding back what does not
    /// fit, up to ``heldFrameLimit`` frames.
    private func decodePacket(_ packet: UnsafeRawBufferPointer?, into output: PCMBuffer) throws(AudioError) {
        try context.decode(packet) { (frame) throws(AudioError) in
            guard frame.channels == channels else {
                throw AudioError(.codecBadData,
                                 "FFmpeg's \(context.decoderName) decoder gave \(frame.channels) channels, the stream has \(channels)")
            }
            let room = max(0, limit - output.frameLength)
            if room >= frame.frames && overflow.isEmpty {
                write(frame, range: 0..<frame.frames, to: output)
                return
            }
            // Keep what does not fit for the next call; but what a damaged header makes a
            // decoder promise (Speex's frames per packet, say) is not held without bound.
            let fits = overflow.isEmpty ? min(room, frame.frames) : 0
            let held = overflow.reduce(0) { $0 + $1.frameLength } + frame.frames - fits
            guard held <= heldFrameLimit else {
                throw AudioError(.codecBadData, "FFmpeg's \(context.decoderName) decoder gave \(held) frames more than the "
                                 + "buffer had room for; at most \(heldFrameLimit) are held")
            }
            if fits > 0 { write(frame, range: 0..<fits, to: output) }
            let rest = PCMBuffer(commonFormat: sampleFormat, sampleRate: inputFormat.sampleRate, channels: channels,
                                 interleaved: output.isInterleaved, frameCapacity: frame.frames - fits)
            write(frame, range: fits..<frame.frames, to: rest)
            overflow.append(rest)
        }
    }

    /// The most frames held back for the next call: 8 packets' worth, at least a second at
    /// 96 kHz, at most 16 M samples.
    private var heldFrameLimit: Int {
        min(max(8 * maximumFramesPerPacket, 96000), (1 << 24) / max(1, channels))
    }

    /// Appends the held-back buffers that fit to `output`, in order.
    private func flushOverflow(into output: PCMBuffer) {
        while let held = overflow.first, held.frameLength <= limit - output.frameLength {
            switch sampleFormat {
            case .float32: copy(Float.self, held, to: output)
            case .int16: copy(Int16.self, held, to: output)
            case .int32: copy(Int32.self, held, to: output)
            }
            overflow.removeFirst()
        }
    }

    private func copy<S: DecodedSample>(_: S.Type, _ held: PCMBuffer, to output: PCMBuffer) {
        let n = held.frameLength
        held.withUnsafeMutableSamples(S.self) { src in
            output.withWriter(S.self) { w in
                for c in 0..<channels {
                    let from = held.channelStart(c)
                    for i in 0..<n { w.at(channel: c, frame: i).pointee = src[from + i * held.stride] }
                }
            }
        }
        output.frameLength += n
    }

    private func write(_ frame: FFmpegDecoderContext.Frame, range: Range<Int>, to output: PCMBuffer) {
        switch sampleFormat {
        case .float32: output.withWriter(Float.self) { FFmpegDecoder.convert(frame, range, into: $0) }
        case .int16: output.withWriter(Int16.self) { FFmpegDecoder.convert(frame, range, into: $0) }
        case .int32: output.withWriter(Int32.self) { FFmpegDecoder.convert(frame, range, into: $0) }
        }
        output.frameLength += range.count
    }

    /// Converts frames `range` of an FFmpeg frame into `w` (frame 0 of `w` gets `range.lowerBound`).
    private static func convert<S: DecodedSample>(_ frame: FFmpegDecoderContext.Frame, _ range: Range<Int>,
                                                  into w: SampleWriter<S>)
    {
        let channels = frame.channels
        func each<T>(_: T.Type, _ f: (T) -> S) {
            for c in 0..<channels {
                let plane = frame.isPlanar ? frame.planes[c].assumingMemoryBound(to: T.self)
                    : frame.planes[0].assumingMemoryBound(to: T.self) + c
                let step = frame.isPlanar ? 1 : channels
                var out = w.at(channel: c, frame: 0)
                for i in range {
                    out.pointee = f(plane[i * step])
                    out += w.stride
                }
            }
        }
        switch frame.type {
        case .float: each(Float.self) { S.fromFloat($0) }
        case .s16: each(Int16.self) { S.fromInt16($0) }
        case .s32: each(Int32.self) { S.fromJustified($0) }
        case .s64: each(Int64.self) { S.fromJustified($0) }
        case .double: each(Double.self) { S.fromDouble($0) }
        case .u8: each(UInt8.self) { S.fromInt16(Int16(Int($0) - 128) << 8) }
        }
    }

    func reset() {
        overflow.removeAll()
        context.flush()
    }

    func drain(into output: PCMBuffer) throws(AudioError) {
        try output.checkRoom(for: 0, channels: channels, sampleFormat: sampleFormat)
        limit = output.frameCapacity
        flushOverflow(into: output)
        try decodePacket(nil, into: output)
        context.flush()
    }

    /// Codecs whose frames overlap (the transform codecs) need the packet before a seek.
    var seekPrerollPackets: Int {
        switch inputFormat.formatID {
        case .linearPCM, .uLaw, .aLaw, .flac, .appleLossless, .appleIMA4, .dviIntelIMA, .microsoftADPCM, "wvpk", "tta1", "APE ":
            return 0
        case .opus: return 4
        default: return 2
        }
    }
}
#endif

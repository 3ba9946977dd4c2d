import TonearmCore

/// MPEG audio: layers I, II and III of MPEG-1, MPEG-2 LSF and MPEG-2.5, decoded natively
/// to Float32 (the decoder's own precision) or to Int16 and Int32 by rounding, as FFmpeg's
/// `mp3float` and its conversions do.
///
/// One packet is one frame, header included, as the MPEG parser delivers them. The
/// decoder keeps layer III's bit reservoir, the IMDCT overlap and the synthesis filter
/// history between packets; ``reset()`` forgets them after a seek, and
/// ``seekPrerollPackets`` says how many frames to decode first so that the frame reached
/// sounds exactly as in a decode from the start.
///
/// Damaged frames are concealed, never thrown: a frame whose header does not belong to
/// the stream, whose side information is invalid or whose CRC does not match decodes to a
/// silent spectrum (the previous frame's overlap fades out through the filter bank, so
/// there is no click) and counts in ``concealedPackets``. A frame whose reservoir bytes
/// were never seen (the first frames after a seek or a discontinuity) is silent too, but
/// is not counted: that is the stream's normal state there.
///
/// A stream that switches between mono and stereo frames keeps its declared channel
/// count, the first frame's (the parser declares it, on both paths): a mono frame goes to
/// both channels of a stereo stream, and a stereo frame in a mono stream is averaged, as
/// ffmpeg does. Every frame is decoded. The ISO reference decoder writes each frame with
/// its own channel count (its output for the compliance stream `he_mode` interleaves mono
/// and stereo runs), which no fixed PCM format can carry; a channel count that changes
/// mid-stream would also break the players and converters built on the decoder. The
/// second channel's overlap and filter history stay as they were through mono frames.
/// `MPEGComplianceTests` mixes the reference the same way and finds 102.7 dB.
public final class MPEGDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public let maximumFramesPerPacket: Int
    public let seekPrerollPackets: Int
    /// Frames decoded to silence because they were damaged.
    public private(set) var concealedPackets = 0

    let layer: Int
    let channels: Int
    let sampleRate: Int
    let sampleFormat: PCMBuffer.CommonFormat
    private let synthesis: [MPEGSynthesisFilter]
    private let layer3 = Layer3Decoder()
    /// One frame of PCM, planar, channel c at c × 1152.
    private let pcm: UnsafeMutablePointer<Float>
    /// Layers I and II: one frame of subband samples, 2 channels × 36 slots × 32.
    private let subbands: UnsafeMutablePointer<Float>

    public init(format: StreamDescription, output: PCMBuffer.CommonFormat) throws(AudioError) {
        switch format.formatID {
        case .mpegLayer1: layer = 1
        case .mpegLayer2: layer = 2
        case .mpegLayer3: layer = 3
        default: throw AudioError(.unsupportedDataFormat, "the MPEG audio decoder cannot decode \(format.formatID) data")
        }
        let rate = Int(format.sampleRate)
        guard Double(rate) == format.sampleRate, let rateIndex = MPEGAudioHeader.sampleRates.firstIndex(of: rate) else {
            throw AudioError(.unsupportedDataFormat, "MPEG audio has no sample rate of \(format.sampleRate) Hz")
        }
        guard format.channelsPerFrame == 1 || format.channelsPerFrame == 2 else {
            throw AudioError(.unsupportedDataFormat, "MPEG audio has 1 or 2 channels, not \(format.channelsPerFrame)")
        }
        sampleRate = rate
        channels = Int(format.channelsPerFrame)
        sampleFormat = output
        let mpeg1 = rateIndex < 3
        maximumFramesPerPacket = layer == 1 ? 384 : (layer == 2 || mpeg1) ? 1152 : 576
        var f = format
        f.framesPerPacket = UInt32(maximumFramesPerPacket)
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: UInt32(channels))
        synthesis = [MPEGSynthesisFilter(), MPEGSynthesisFilter()]
        pcm = .allocate(capacity: 2 * 1152)
        pcm.initialize(repeating: 0, count: 2 * 1152)
        subbands = .allocate(capacity: 2 * 36 * 32)
        subbands.initialize(repeating: 0, count: 2 * 36 * 32)
        seekPrerollPackets = Self.preroll(layer: layer, sampleRate: rate, channels: channels)
    }

    deinit {
        pcm.deallocate()
        subbands.deallocate()
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .mpegLayer1 || format.formatID == .mpegLayer2 || format.formatID == .mpegLayer3 else { return nil }
        return try MPEGDecoder(format: format, output: output)
    }

    /// Frames to decode before a seek target. The synthesis filter remembers 512 samples
    /// (two layer I frames, one of layer II); layer III also needs the previous granule's
    /// overlap and the reservoir: main_data_begin reaches back up to 511 bytes (255 in
    /// LSF), which the smallest frames of the stream's rate fill only after several frames.
    static func preroll(layer: Int, sampleRate: Int, channels: Int) -> Int {
        switch layer {
        case 1: return 2
        case 2: return 1
        default:
            guard let h = MPEGAudioHeader.smallestLayer3Frame(sampleRate: sampleRate, channels: channels) else { return 1 }
            let mainData = max(1, h.frameLength - h.headerLength - h.sideInfoSize)
            let reach = h.version == .mpeg1 ? 511 : 255
            return min(64, (reach + mainData - 1) / mainData) + 1
        }
    }

    public func reset() {
        layer3.reset()
        for s in synthesis { s.reset() }
    }

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions, codec: "MPEG audio")
        try output.checkRoom(for: packetCount * maximumFramesPerPacket, channels: channels, sampleFormat: sampleFormat)
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

    /// Decodes one frame into `pcm` for the stream's channels, concealing what is damaged.
    private func decodeFrame(_ frame: UnsafeRawBufferPointer) {
        var header: MPEGAudioHeader?
        if frame.count >= 4 {
            let word = UInt32(frame[0]) << 24 | UInt32(frame[1]) << 16 | UInt32(frame[2]) << 8 | UInt32(frame[3])
            // A free-format frame's length is the packet's, less its padding slot.
            let padding = word >> 9 & 1 == 0 ? 0 : word >> 17 & 3 == 3 ? 4 : 1
            header = MPEGAudioHeader(word, freeFormatLength: max(0, frame.count - padding))
        }
        guard let h = header, h.layer == layer, h.sampleRate == sampleRate, h.samplesPerFrame == maximumFramesPerPacket else {
            concealedPackets += 1
            silence(channels: channels)
            return
        }
        let frameChannels = h.channels
        if layer == 3 {
            if layer3.decode(frame, header: h, synthesis: synthesis, into: pcm) == .damaged { concealedPackets += 1 }
        } else {
            do {
                try MPEGLayer12.decode(frame, header: h, into: subbands)
                let slots = MPEGLayer12.slots(layer: layer)
                for c in 0..<frameChannels {
                    synthesis[c].synthesize(subbands + c * slots * 32, slots: slots, into: pcm + c * 1152)
                }
            } catch {
                concealedPackets += 1
                silence(channels: frameChannels)
            }
        }
        if frameChannels == 1 && channels == 2 {
            (pcm + 1152).update(from: pcm, count: maximumFramesPerPacket)
        } else if frameChannels == 2 && channels == 1 {
            for i in 0..<maximumFramesPerPacket { pcm[i] = (pcm[i] + pcm[1152 + i]) * 0.5 }
        }
    }

    /// A silent frame through the filter bank, so that what sounded before fades out.
    private func silence(channels n: Int) {
        if layer == 3 {
            layer3.conceal(channels: n, frames: maximumFramesPerPacket, synthesis: synthesis, into: pcm)
        } else {
            subbands.update(repeating: 0, count: 2 * 36 * 32)
            for c in 0..<n {
                synthesis[c].synthesize(subbands, slots: maximumFramesPerPacket / 32, into: pcm + c * 1152)
            }
        }
    }

    private func emit<S: DecodedSample>(_ frames: Int, into w: SampleWriter<S>) {
        var start = 0
        if S.self == Float.self && channels == 2 && w.stride == 2 && w.channelDistance == 1 {
            // Interleaved stereo Float, the usual case: the two planes zipped four frames at a time.
            let out = UnsafeMutableRawPointer(w.base), left = UnsafeRawPointer(pcm), right = UnsafeRawPointer(pcm + 1152)
            while start &+ 4 <= frames {
                let l = left.loadUnaligned(fromByteOffset: start &* 4, as: SIMD4<Float>.self)
                let r = right.loadUnaligned(fromByteOffset: start &* 4, as: SIMD4<Float>.self)
                out.storeBytes(of: SIMD8(l[0], r[0], l[1], r[1], l[2], r[2], l[3], r[3]), toByteOffset: start &* 8, as: SIMD8<Float>.self)
                start &+= 4
            }
        }
        for c in 0..<channels {
            let src = pcm + c * 1152
            var dst = w.at(channel: c, frame: start)
            for i in start..<frames {
                dst.pointee = S.fromFloat(src[i])
                dst += w.stride
            }
        }
    }
}

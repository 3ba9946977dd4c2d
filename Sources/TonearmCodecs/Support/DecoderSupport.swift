import TonearmCore

/// Where the packets of one `decode` call lie, checked once for the whole call.
///
/// With descriptions, each packet is where its description says. Without, packets follow
/// each other every `bytesPerPacket` bytes; when `allowsShortLastPacket` is set the last
/// one may be cut short (the end of a WAV data chunk that stops mid-block), and codecs
/// decode what it holds as FFmpeg does.
struct PacketLayout {
    private let base: UnsafeRawPointer?
    private let dataCount: Int
    private let bytesPerPacket: Int
    private let descriptions: [PacketDescription]?
    let count: Int

    init(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
         bytesPerPacket: Int, allowsShortLastPacket: Bool) throws(AudioError)
    {
        guard packetCount >= 0 else { throw AudioError(.invalidInputSize, "a negative packet count (\(packetCount))") }
        precondition(bytesPerPacket > 0)
        base = data.baseAddress
        dataCount = data.count
        self.bytesPerPacket = bytesPerPacket
        count = packetCount
        if let descriptions {
            guard descriptions.count >= packetCount else {
                throw AudioError(.invalidInputSize, "\(packetCount) packets but \(descriptions.count) packet descriptions")
            }
            for i in 0..<packetCount {
                let d = descriptions[i]
                guard d.startOffset >= 0, d.startOffset <= Int64(dataCount),
                      Int64(d.dataByteSize) <= Int64(dataCount) - d.startOffset
                else {
                    throw AudioError(.invalidInputSize,
                                     "a packet of \(d.dataByteSize) bytes at \(d.startOffset) lies outside the \(dataCount) bytes given")
                }
            }
            self.descriptions = descriptions
        } else {
            self.descriptions = nil
            guard packetCount > 0 else { return }
            // The last packet needs all its bytes, or at least one when it may be short.
            let (before, overflow) = (packetCount - 1).multipliedReportingOverflow(by: bytesPerPacket)
            let last = allowsShortLastPacket ? 1 : bytesPerPacket
            guard !overflow, before <= dataCount, last <= dataCount - before else {
                throw AudioError(.invalidInputSize,
                                 "\(packetCount) packets of \(bytesPerPacket) bytes need more than the \(dataCount) bytes given")
            }
        }
    }

    /// The bytes of packet `i`, at most `bytesPerPacket` of them.
    @inline(__always)
    func packet(_ i: Int) -> UnsafeRawBufferPointer {
        let start: Int, size: Int
        if let descriptions {
            let d = descriptions[i]
            start = Int(d.startOffset)
            size = min(Int(d.dataByteSize), bytesPerPacket)
        } else {
            start = i * bytesPerPacket
            size = min(bytesPerPacket, dataCount - start)
        }
        guard size > 0, let base else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + start, count: size)
    }
}

extension PacketLayout {
    /// The packets of a codec whose packets vary in size (FLAC, ALAC): with descriptions,
    /// where they say; without, the bytes are one packet, and more are '!pkd'.
    init(variableSize data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
         codec: String) throws(AudioError)
    {
        if descriptions == nil && packetCount > 1 {
            throw AudioError(.requiresPacketDescriptions, "\(codec) frames vary in size: \(packetCount) packets need descriptions")
        }
        // One undescribed packet is all the bytes, even none (which the codec then refuses);
        // that array is made only then.
        let described = descriptions
            ?? (packetCount == 1 ? [PacketDescription(startOffset: 0, variableFramesInPacket: 0, dataByteSize: UInt32(clamping: data.count))] : nil)
        try self.init(data, packetCount: packetCount, descriptions: described, bytesPerPacket: max(1, data.count), allowsShortLastPacket: false)
    }
}

/// Writes decoded samples into a ``PCMBuffer`` after its valid frames, interleaved or planar.
struct SampleWriter<S> {
    /// Channel 0 at the first free frame.
    let base: UnsafeMutablePointer<S>
    /// Distance between two channels of one frame: 1 interleaved, the capacity planar.
    let channelDistance: Int
    /// Distance between two frames of one channel: the channel count interleaved, 1 planar.
    let stride: Int

    /// Where channel `c` of frame `f` (counted from the first free frame) goes.
    @inline(__always)
    func at(channel c: Int, frame f: Int) -> UnsafeMutablePointer<S> { base + (c &* channelDistance &+ f &* stride) }
}

extension PCMBuffer {
    /// Throws 'otsz' unless this buffer holds `S` samples for `channels` channels and has
    /// room for `frames` more frames.
    func checkRoom(for frames: Int, channels: Int, sampleFormat: PCMBuffer.CommonFormat) throws(AudioError) {
        guard commonFormat == sampleFormat else {
            throw AudioError(.invalidOutputSize, "the output buffer holds \(commonFormat) samples, the decoder makes \(sampleFormat)")
        }
        guard channelCount == channels else {
            throw AudioError(.invalidOutputSize, "the output buffer has \(channelCount) channels, the stream \(channels)")
        }
        guard frames <= frameCapacity - frameLength else {
            throw AudioError(.invalidOutputSize,
                             "\(frames) frames do not fit the \(frameCapacity - frameLength) free frames of the output buffer")
        }
    }

    /// Calls `body` with a writer positioned at `frameLength`. The caller has checked the
    /// room with ``checkRoom(for:channels:sampleFormat:)``.
    @inline(__always)
    func withWriter<S: DecodedSample, R>(_: S.Type, _ body: (SampleWriter<S>) -> R) -> R {
        let interleaved = isInterleaved, channels = channelCount, capacity = frameCapacity, start = frameLength
        return withUnsafeMutableSamples(S.self) { buffer in
            let stride = interleaved ? channels : 1
            let writer = SampleWriter(base: buffer.baseAddress! + start * stride,
                                      channelDistance: interleaved ? 1 : capacity, stride: stride)
            return body(writer)
        }
    }
}

extension StreamDescription {
    /// The native-endian PCM a decoder produces for `common`: Float32 planar (Apple's
    /// canonical form), Int16 and Int32 interleaved.
    static func decoderOutput(_ common: PCMBuffer.CommonFormat, sampleRate: Double, channels: UInt32) -> StreamDescription {
        switch common {
        case .float32: .float32(sampleRate: sampleRate, channels: channels, interleaved: false)
        case .int16: .int16(sampleRate: sampleRate, channels: channels)
        case .int32: .pcm(sampleRate: sampleRate, channels: channels, bits: 32)
        }
    }
}

/// The most channels any built-in decoder accepts, as ``StreamDescription/validate()``.
let maximumDecoderChannels: UInt32 = 1024

extension SampleWriter {
    /// The same writer `frames` frames further on.
    @inline(__always)
    func advanced(by frames: Int) -> SampleWriter { SampleWriter(base: base + frames &* stride, channelDistance: channelDistance, stride: stride) }
}

import TonearmCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opus (RFC 6716, RFC 7845): packets of one or more elementary streams (multistream with
/// a channel mapping) to 48 kHz PCM, through SILK, CELT or both.
///
/// The cookie is the OpusHead packet. The decoder outputs exactly the frames each packet's
/// TOC gives (pre-skip and end trimming are the file layer's). The output gain of the
/// header is applied.
///
/// Loss: a packet of zero bytes is a lost packet (how a container reports a gap); the
/// decoder conceals as many samples as the previous packet had (CELT: noise shaped by the
/// last band energies; SILK: its own concealment) and counts it in ``concealedPackets``.
/// A malformed packet (RFC 6716 §3.4) throws 'bada'.
public final class OpusDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public let maximumFramesPerPacket = 5760
    /// Opus's decoders converge within 80 ms (four 20 ms packets); the file layer seeks
    /// back by the pre-roll too.
    public let seekPrerollPackets = 4
    public private(set) var concealedPackets = 0
    public var outputChannelLayout: ChannelLayout? {
        head.mappingFamily == 1 ? ChannelLayout.vorbisOrder(channels: head.channels) : nil
    }

    let head: OpusHead
    private let sampleFormat: PCMBuffer.CommonFormat
    private let streams: [OpusStreamDecoder]
    /// Decoded channels of all streams, planar, `maximumFramesPerPacket` each.
    private let decoded: UnsafeMutablePointer<Float>
    private let decodedChannels: Int
    private let gain: Float
    private var lastPacketFrames = 960
    /// Each stream's packet and where it starts in the multistream packet, kept from packet
    /// to packet so that parsing allocates nothing.
    private var packets: [OpusPacket]
    private var packetStarts: [Int]

    public init(format: StreamDescription, magicCookie: [UInt8]?, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .opus else {
            throw AudioError(.unsupportedDataFormat, "the Opus decoder cannot decode \(format.formatID) data")
        }
        let h: OpusHead
        if let cookie = magicCookie, !cookie.isEmpty {
            h = try OpusHead.parse(cookie)
        } else {
            // Without a cookie: one stream of the format's channels (at most stereo).
            let c = Int(format.channelsPerFrame)
            guard c == 1 || c == 2 else { throw AudioError(.unsupportedDataFormat, "Opus with \(c) channels needs its OpusHead") }
            h = OpusHead(channels: c, preSkip: 0, outputGain: 0, mappingFamily: 0, streams: 1, coupledStreams: c - 1,
                         mapping: Array(0..<c))
        }
        head = h
        sampleFormat = output
        streams = (0..<h.streams).map { OpusStreamDecoder(channels: $0 < h.coupledStreams ? 2 : 1) }
        packets = Array(repeating: OpusPacket(), count: h.streams)
        packetStarts = Array(repeating: 0, count: h.streams)
        decodedChannels = h.streams + h.coupledStreams
        decoded = .allocate(capacity: decodedChannels * maximumFramesPerPacket)
        decoded.initialize(repeating: 0, count: decodedChannels * maximumFramesPerPacket)
        gain = h.outputGain == 0 ? 1 : Float(pow(10.0, Double(h.outputGain) / (20 * 256)))
        var f = format
        f.sampleRate = 48000
        f.channelsPerFrame = UInt32(h.channels)
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: 48000, channels: UInt32(h.channels))
    }

    deinit { decoded.deallocate() }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .opus else { return nil }
        return try OpusDecoder(format: format, magicCookie: cookie, output: output)
    }

    /// CELT's statistics summed over the streams (for tests).
    var celtStatistics: CELTDecoder.Statistics {
        streams.reduce(into: CELTDecoder.Statistics()) { sum, s in
            let t = s.celtStatistics
            sum.frames += t.frames; sum.transient += t.transient; sum.antiCollapse += t.antiCollapse
            sum.postfilter += t.postfilter; sum.intensity += t.intensity; sum.dualStereo += t.dualStereo
            sum.concealed += t.concealed
        }
    }

    public func reset() {
        for i in streams.indices { streams[i].reset() }
        lastPacketFrames = 960
    }

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions, codec: "Opus")
        try output.checkRoom(for: packetCount * maximumFramesPerPacket, channels: head.channels, sampleFormat: sampleFormat)
        var written = 0
        for k in 0..<packetCount {
            let n = try decodePacket(layout.packet(k))
            switch sampleFormat {
            case .float32: output.withWriter(Float.self) { emit(n, into: $0, at: written) }
            case .int16: output.withWriter(Int16.self) { emit(n, into: $0, at: written) }
            case .int32: output.withWriter(Int32.self) { emit(n, into: $0, at: written) }
            }
            written += n
        }
        output.frameLength += written
    }

    /// Decodes one packet (all its streams) into `decoded`; returns its frames.
    private func decodePacket(_ bytes: UnsafeRawBufferPointer) throws(AudioError) -> Int {
        let stride = maximumFramesPerPacket
        // Index loops: a debug build's iterators allocate, and decoding allocates nothing.
        if bytes.count == 0 {
            concealedPackets += 1
            let n = lastPacketFrames
            var channel = 0
            for i in streams.indices {
                try streams[i].conceal(n, into: decoded + channel * stride, stride: stride, offset: 0)
                channel += streams[i].channels
            }
            return n
        }
        // Parse every stream's packet before decoding any, so a malformed one changes nothing.
        var at = 0
        var frames = -1
        for i in streams.indices {
            let last = i == streams.count - 1
            try packets[i].parse(UnsafeRawBufferPointer(rebasing: bytes[at...]), selfDelimited: !last)
            let n = packets[i].frames.count * packets[i].frameSize
            guard frames < 0 || n == frames else {
                throw OpusPacket.bad("the streams of a multistream packet differ in duration")
            }
            frames = n
            packetStarts[i] = at
            at += packets[i].consumed
        }
        var channel = 0
        for i in streams.indices {
            let b = UnsafeRawBufferPointer(rebasing: bytes[packetStarts[i]..<packetStarts[i] + packets[i].consumed])
            _ = try streams[i].decode(packets[i], b, into: decoded + channel * stride, stride: stride, offset: 0)
            channel += streams[i].channels
        }
        lastPacketFrames = max(120, frames)
        return frames
    }

    private func emit<S: DecodedSample>(_ frames: Int, into w: SampleWriter<S>, at offset: Int) {
        let stride = maximumFramesPerPacket
        for c in 0..<head.channels {
            var dst = w.at(channel: c, frame: offset)
            let m = head.mapping[c]
            if m == 255 {
                for _ in 0..<frames {
                    dst.pointee = S.fromFloat(0)
                    dst += w.stride
                }
                continue
            }
            let src = decoded + m * stride
            let g = gain
            if S.self == Float.self {
                let d = UnsafeMutableRawPointer(dst).assumingMemoryBound(to: Float.self)
                if w.stride == 1 {
                    for i in 0..<frames { d[i] = src[i] * g }
                } else {
                    for i in 0..<frames { d[i * w.stride] = src[i] * g }
                }
            } else {
                for i in 0..<frames {
                    dst.pointee = S.fromFloat(src[i] * g)
                    dst += w.stride
                }
            }
        }
    }
}

import TonearmCore

/// A decoder for one codec: packets in, PCM frames out.
///
/// A container hands a decoder only a format ID, a ``StreamDescription`` and a magic
/// cookie; decoders never look at containers.
public protocol AudioDecoder: AnyObject {
    /// The stream description of the packets this decoder takes.
    var inputFormat: StreamDescription { get }
    /// The PCM the decoder produces: native-endian Float32, Int16 or Int32, matching the
    /// ``PCMBuffer`` passed to `decode`.
    var outputFormat: StreamDescription { get }
    /// The most frames one packet can decode to, for sizing buffers.
    var maximumFramesPerPacket: Int { get }

    /// Decodes `packetCount` packets and appends their frames to `output`, after its
    /// `frameLength`. `descriptions` is nil when packets have a constant size.
    ///
    /// `output` must have the decoder's common format and channel count (interleaved or
    /// planar, either is fine) and room for `packetCount × maximumFramesPerPacket` frames,
    /// else 'insz' / 'otsz'. A packet that is damaged throws 'bada' unless the decoder
    /// conceals it.
    func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                into output: PCMBuffer) throws(AudioError)

    /// Forgets all state between packets, after a seek or a discontinuity.
    func reset()

    /// At the end of the stream: appends the frames the decoder still holds (a decoder
    /// with a delay, as some of FFmpeg's are), then forgets its state as ``reset()`` does.
    /// Tonearm's native decoders hold none: the default appends nothing.
    func drain(into output: PCMBuffer) throws(AudioError)

    /// Packets to decode (and drop) before a packet reached by a seek, so that its output
    /// equals a decode from the start: for decoders whose state carries across packets.
    /// 0 by default.
    var seekPrerollPackets: Int { get }

    /// The order of the channels the decoder outputs, when the codec fixes it (ALAC's
    /// C L R…); nil when it is the container's. A container's own layout may describe
    /// another order (ffmpeg's CAF muxer writes WAV's for ALAC), so this one wins.
    var outputChannelLayout: ChannelLayout? { get }

    /// Packets the decoder could not decode and concealed (with silence, say) instead of
    /// throwing, since it was made. 0 for decoders that throw 'bada' instead.
    var concealedPackets: Int { get }

    /// Whose code decodes: Tonearm's (`.native`, the default) or FFmpeg's.
    var backend: DecoderBackend { get }
}

/// Whose code a decoder runs.
public enum DecoderBackend: Hashable, Sendable, CustomStringConvertible {
    /// Tonearm's own Swift decoder.
    case native
    /// libavcodec's decoder of this name ("wmav2"), with the FFmpeg trait.
    case ffmpeg(codec: String)

    public var description: String {
        switch self {
        case .native: "native"
        case .ffmpeg(let codec): "FFmpeg (\(codec))"
        }
    }
}

/// Which decoders the registry may use (``CodecRegistry/preference``).
public enum DecoderPreference: String, Sendable, CaseIterable {
    /// A native decoder when Tonearm has one, else FFmpeg's (with the FFmpeg trait).
    case automatic
    /// Native decoders only.
    case native
    /// FFmpeg's decoders only, for comparing them with the native ones; 'fmt?' for every
    /// format in a build without the FFmpeg trait.
    case ffmpeg
}

extension AudioDecoder {
    public var seekPrerollPackets: Int { 0 }
    public var outputChannelLayout: ChannelLayout? { nil }
    public var concealedPackets: Int { 0 }
    public var backend: DecoderBackend { .native }
    public func drain(into output: PCMBuffer) throws(AudioError) {}
}

/// Builds decoders from a stream description, as Apple's codec lookup does.
public enum CodecRegistry {
    /// A factory: given the input format, the magic cookie and the wanted output sample
    /// type, a decoder, or nil when the factory does not handle this format.
    public typealias Factory = @Sendable (StreamDescription, [UInt8]?, PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder?

    /// Behind `lock`: a decoder thread may look a codec up while the app registers one.
    /// Readers take a copy of the list (a retain), and call the factories outside the lock.
    nonisolated(unsafe) private static var registered: [Factory] = builtinFactories()
    nonisolated(unsafe) private static var chosen = DecoderPreference.automatic
    private static let lock = Lock()
    private static var factories: [Factory] { lock.withLock { registered } }

    /// Adds a decoder factory, tried before the built-in ones (and before the ones registered
    /// earlier). Safe from any thread; decoders made before the call are not affected.
    public static func register(_ factory: @escaping Factory) { lock.withLock { registered.insert(factory, at: 0) } }

    /// Which decoders ``makeDecoder(for:magicCookie:output:)`` may use: `.automatic` (the
    /// default) tries the registered factories, then the native decoders, then FFmpeg's at
    /// fallback rank; `.native` and `.ffmpeg` use only those (`tonearm --decoder`). Safe from
    /// any thread; decoders made before a change keep running.
    public static var preference: DecoderPreference {
        get { lock.withLock { chosen } }
        set { lock.withLock { chosen = newValue } }
    }

    /// A decoder for `format`, producing `output` samples, or 'fmt?' when none can decode it.
    public static func makeDecoder(for format: StreamDescription, magicCookie: [UInt8]? = nil,
                                   output: PCMBuffer.CommonFormat = .float32) throws(AudioError) -> AudioDecoder
    {
        let preference = preference
        if preference != .ffmpeg {
            for f in factories {
                if let d = try f(format, magicCookie, output) { return d }
            }
        }
        if preference != .native, let fallback = fallbackFactory {
            if let d = try fallback(format, magicCookie, output) { return d }
        }
        switch preference {
        case .ffmpeg where fallbackFactory == nil:
            throw AudioError(.unsupportedDataFormat, "FFmpeg's decoders were asked for, but Tonearm was built without the FFmpeg trait")
        case .ffmpeg:
            throw AudioError(.unsupportedDataFormat, "FFmpeg has no decoder for \(format.formatID) data")
        default:
            throw AudioError(.unsupportedDataFormat, "no decoder for \(format.formatID) data")
        }
    }

    /// Whether some decoder handles this format ID, under the current ``preference``.
    public static func canDecode(_ formatID: AudioFormatID) -> Bool { decodableFormats.contains(formatID) }

    /// The format IDs some decoder handles under the current ``preference``: the native
    /// ones, then (with the FFmpeg trait) those only FFmpeg decodes.
    public static var decodableFormats: [AudioFormatID] {
        switch preference {
        case .native: return builtinDecodableFormats
        case .ffmpeg: return fallbackDecodableFormats
        case .automatic: return builtinDecodableFormats + fallbackDecodableFormats.filter { !builtinDecodableFormats.contains($0) }
        }
    }

    /// The format IDs only FFmpeg decodes (empty without the FFmpeg trait).
    public static var ffmpegOnlyFormats: [AudioFormatID] {
        fallbackDecodableFormats.filter { !builtinDecodableFormats.contains($0) }
    }
}

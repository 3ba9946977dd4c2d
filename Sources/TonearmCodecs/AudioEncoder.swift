import TonearmCore

/// An encoder for one codec: PCM frames in, packets out (Apple's AudioConverter in the
/// encoding direction).
///
/// Packets come out whole: `encode` appends every packet its input completes, and `finish`
/// the last, shorter one. Each packet gets a ``PacketDescription`` whose `startOffset`
/// indexes `packets` as a whole (not the part appended by this call), whose
/// `dataByteSize` is its length and whose `variableFramesInPacket` is its frame count, so
/// the descriptions of one call can go straight to `AudioFile.writePackets` with the bytes
/// from the first one's offset (subtract that offset) or with the whole array.
public protocol AudioEncoder: AnyObject {
    /// The PCM the encoder takes: `inputCommonFormat` samples (for FLAC: `.int32`, justified
    /// to the top bits, full scale, exactly as decoders output Int32), with
    /// `outputFormat.channelsPerFrame` channels, interleaved or planar.
    var inputCommonFormat: PCMBuffer.CommonFormat { get }
    /// The packets' stream description (for FLAC: what the FLAC parser reports for such a file).
    var outputFormat: StreamDescription { get }
    /// The current magic cookie (for FLAC: the form the FLAC parser hands out, which
    /// ``FLACDecoder`` accepts); final, with total samples, frame sizes and MD5, after `finish`.
    var magicCookie: [UInt8] { get }
    /// The largest packet the encoder can emit.
    var maximumPacketSize: Int { get }
    /// Frames per full packet (FLAC: the block size).
    var framesPerPacket: Int { get }
    /// Takes the buffer's valid frames and appends every packet they complete to `packets`,
    /// with a description each (`startOffset` indexes `packets` as a whole).
    func encode(_ input: PCMBuffer, into packets: inout [UInt8], descriptions: inout [PacketDescription]) throws(AudioError)
    /// Encodes the frames still held (the last, shorter packet) and finalises the cookie.
    /// Encoding after `finish` throws '!stt'.
    func finish(into packets: inout [UInt8], descriptions: inout [PacketDescription]) throws(AudioError)
}

/// How hard an encoder works.
public struct EncoderSettings: Sendable, Hashable {
    /// The compression level: FLAC 0 (fastest) to 8 (smallest); nil for the default, 5.
    public var level: Int?
    /// Frames per packet instead of the level's (FLAC: 16 to 65535); nil for the level's.
    public var blockSize: Int?

    public init(level: Int? = nil, blockSize: Int? = nil) {
        self.level = level
        self.blockSize = blockSize
    }
}

extension CodecRegistry {
    /// An encoder producing `output`: for FLAC, `formatID` `.flac`, the channels (1 to 8), the
    /// sample rate (a whole number of Hz up to 1048575) and `bitsPerChannel`, the source bits
    /// (4 to 32, or 0 for 16). Other fields are ignored. Throws 'fmt?' when no encoder can.
    public static func makeEncoder(for output: StreamDescription, settings: EncoderSettings = .init()) throws(AudioError)
        -> AudioEncoder
    {
        switch output.formatID {
        case .flac:
            return try FLACEncoder(sampleRate: output.sampleRate, channels: Int(output.channelsPerFrame),
                                   bitsPerSample: output.bitsPerChannel == 0 ? 16 : Int(output.bitsPerChannel),
                                   settings: settings)
        default:
            throw AudioError(.unsupportedDataFormat, "no encoder for \(output.formatID) data")
        }
    }

    /// Whether some encoder produces this format ID.
    public static func canEncode(_ formatID: AudioFormatID) -> Bool { encodableFormats.contains(formatID) }

    /// The format IDs with a built-in encoder.
    public static var encodableFormats: [AudioFormatID] { [.flac] }
}

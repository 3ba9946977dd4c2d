/// The description of an audio stream's data, as Apple's `AudioStreamBasicDescription` (ASBD).
///
/// For linear PCM one packet holds one frame. For compressed formats, `bytesPerPacket`
/// is 0 when packets vary in size, and `framesPerPacket` is 0 when frames per packet vary.
public struct StreamDescription: Hashable, Sendable, CustomStringConvertible {
    /// Frames per second of the data.
    public var sampleRate: Double
    public var formatID: AudioFormatID
    public var formatFlags: AudioFormatFlags
    public var bytesPerPacket: UInt32
    public var framesPerPacket: UInt32
    public var bytesPerFrame: UInt32
    public var channelsPerFrame: UInt32
    public var bitsPerChannel: UInt32
    /// Always 0; kept so that all nine fields of Apple's struct exist.
    public var reserved: UInt32

    public init(sampleRate: Double, formatID: AudioFormatID, formatFlags: AudioFormatFlags = [],
                bytesPerPacket: UInt32, framesPerPacket: UInt32, bytesPerFrame: UInt32,
                channelsPerFrame: UInt32, bitsPerChannel: UInt32, reserved: UInt32 = 0)
    {
        self.sampleRate = sampleRate
        self.formatID = formatID
        self.formatFlags = formatFlags
        self.bytesPerPacket = bytesPerPacket
        self.framesPerPacket = framesPerPacket
        self.bytesPerFrame = bytesPerFrame
        self.channelsPerFrame = channelsPerFrame
        self.bitsPerChannel = bitsPerChannel
        self.reserved = reserved
    }

    /// Linear PCM of the given width, packed into whole bytes.
    ///
    /// `bytesPerSample` defaults to the smallest whole number of bytes that holds `bits`;
    /// a wider container (24 bits in 4 bytes) is unpacked and, as WAV stores it, aligned high.
    public static func pcm(sampleRate: Double, channels: UInt32, bits: UInt32, isFloat: Bool = false,
                           isBigEndian: Bool = false, isSigned: Bool = true, interleaved: Bool = true,
                           bytesPerSample: UInt32? = nil) -> StreamDescription
    {
        let container = bytesPerSample ?? (bits + 7) / 8
        var flags: AudioFormatFlags = []
        if isFloat { flags.insert(.isFloat) } else if isSigned { flags.insert(.isSignedInteger) }
        if isBigEndian && container > 1 { flags.insert(.isBigEndian) }
        if container * 8 == bits { flags.insert(.isPacked) } else { flags.insert(.isAlignedHigh) }
        if !interleaved { flags.insert(.isNonInterleaved) }
        let bytesPerFrame = interleaved ? container * channels : container
        return StreamDescription(sampleRate: sampleRate, formatID: .linearPCM, formatFlags: flags,
                                 bytesPerPacket: bytesPerFrame, framesPerPacket: 1,
                                 bytesPerFrame: bytesPerFrame, channelsPerFrame: channels,
                                 bitsPerChannel: bits)
    }

    /// Native-endian interleaved or planar Float32, the converters' working format.
    public static func float32(sampleRate: Double, channels: UInt32, interleaved: Bool = false)
        -> StreamDescription
    {
        pcm(sampleRate: sampleRate, channels: channels, bits: 32, isFloat: true, interleaved: interleaved)
    }

    /// Native-endian interleaved signed 16-bit, seed 004's format.
    public static func int16(sampleRate: Double, channels: UInt32, interleaved: Bool = true)
        -> StreamDescription
    {
        pcm(sampleRate: sampleRate, channels: channels, bits: 16, interleaved: interleaved)
    }

    public var isPCM: Bool { formatID == .linearPCM }
    public var isFloat: Bool { formatFlags.contains(.isFloat) }
    public var isBigEndian: Bool { formatFlags.contains(.isBigEndian) }
    public var isSignedInteger: Bool { formatFlags.contains(.isSignedInteger) }
    public var isInterleaved: Bool { !formatFlags.contains(.isNonInterleaved) }
    /// True when every packet has the same number of bytes and frames.
    public var isConstantBitRate: Bool { bytesPerPacket > 0 && framesPerPacket > 0 }

    /// Bytes that one sample of one channel takes in linear PCM.
    public var bytesPerSample: UInt32 {
        guard channelsPerFrame > 0 else { return 0 }
        return isInterleaved ? bytesPerFrame / channelsPerFrame : bytesPerFrame
    }

    /// Checks the fields against each other, as a converter or writer does before using them.
    public func validate() throws(AudioError) {
        func fail(_ why: String) -> AudioError { AudioError(.unsupportedDataFormat, "invalid stream description: \(why)") }
        guard sampleRate.isFinite, sampleRate >= 0 else { throw fail("sample rate \(sampleRate)") }
        guard channelsPerFrame > 0, channelsPerFrame <= 1024 else { throw fail("\(channelsPerFrame) channels") }
        if isPCM {
            guard framesPerPacket == 1 else { throw fail("linear PCM needs 1 frame per packet") }
            guard bitsPerChannel > 0, bitsPerChannel <= 64 else { throw fail("\(bitsPerChannel) bits per channel") }
            let perChannel = bytesPerSample
            guard perChannel * 8 >= bitsPerChannel, perChannel <= 8 else {
                throw fail("\(bitsPerChannel) bits do not fit \(perChannel) bytes per sample")
            }
            let expected = isInterleaved ? perChannel * channelsPerFrame : perChannel
            guard bytesPerFrame == expected, bytesPerPacket == bytesPerFrame else {
                throw fail("bytes per frame \(bytesPerFrame) and per packet \(bytesPerPacket) disagree")
            }
            if isFloat && !(bitsPerChannel == 32 || bitsPerChannel == 64) {
                throw fail("\(bitsPerChannel)-bit float")
            }
        }
    }

    /// afinfo's form: `2 ch, 44100 Hz, 'lpcm' (0x0000000C) 16-bit little-endian signed integer`.
    public var description: String {
        var s = "\(channelsPerFrame) ch, \(StreamDescription.formatRate(sampleRate)) Hz, "
        s += "\(formatID) (0x\(hex8(formatFlags.rawValue))) "
        if isPCM {
            s += "\(bitsPerChannel)-bit"
            if bytesPerSample > 1 { s += isBigEndian ? " big-endian" : " little-endian" }
            if isFloat { s += " float" }
            else { s += isSignedInteger ? " signed integer" : " unsigned integer" }
            if bytesPerSample * 8 != bitsPerChannel && bytesPerSample > 0 {
                s += formatFlags.contains(.isAlignedHigh) ? " in \(bytesPerSample) bytes, aligned high"
                    : " in \(bytesPerSample) bytes"
            }
            if !isInterleaved { s += ", deinterleaved" }
        } else {
            s += "\(bitsPerChannel) bits/channel, \(bytesPerPacket) bytes/packet, "
            s += "\(framesPerPacket) frames/packet, \(bytesPerFrame) bytes/frame"
        }
        return s
    }

    /// A sample rate without a trailing `.0` when it is whole.
    public static func formatRate(_ rate: Double) -> String {
        if rate == rate.rounded(), abs(rate) < 1e15 { return String(Int64(rate)) }
        return String(rate)
    }
}

/// Apple's name for ``StreamDescription``.
public typealias AudioStreamBasicDescription = StreamDescription

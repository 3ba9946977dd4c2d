/// Where one packet lies in the data and how many frames it holds, as Apple's
/// `AudioStreamPacketDescription`.
public struct PacketDescription: Hashable, Sendable {
    /// Byte offset of the packet: relative to the data handed over with it, or to the
    /// start of the audio data for a packet table.
    public var startOffset: Int64
    /// Frames in this packet, or 0 when the format's `framesPerPacket` applies.
    public var variableFramesInPacket: UInt32
    /// Size of the packet in bytes.
    public var dataByteSize: UInt32

    public init(startOffset: Int64, variableFramesInPacket: UInt32 = 0, dataByteSize: UInt32) {
        self.startOffset = startOffset
        self.variableFramesInPacket = variableFramesInPacket
        self.dataByteSize = dataByteSize
    }
}

/// Apple's name for ``PacketDescription``.
public typealias AudioStreamPacketDescription = PacketDescription

/// Gapless information, as Apple's `AudioFilePacketTableInfo`:
/// `validFrames + primingFrames + remainderFrames` = the frames the packets decode to.
public struct PacketTableInfo: Hashable, Sendable {
    public var numberValidFrames: Int64
    /// Frames at the start added by the encoder (its delay), to be dropped.
    public var primingFrames: Int32
    /// Frames at the end that pad the last packet, to be dropped.
    public var remainderFrames: Int32

    public init(numberValidFrames: Int64, primingFrames: Int32 = 0, remainderFrames: Int32 = 0) {
        self.numberValidFrames = numberValidFrames
        self.primingFrames = primingFrames
        self.remainderFrames = remainderFrames
    }

    /// All the frames that the packets decode to.
    public var totalFrames: Int64 { numberValidFrames + Int64(primingFrames) + Int64(remainderFrames) }

    /// The table counted in frames `factor` times as many: HE-AAC decoded at twice the rate
    /// its container counts at.
    public func scaled(by factor: Int64) -> PacketTableInfo {
        PacketTableInfo(numberValidFrames: numberValidFrames * factor,
                        primingFrames: Int32(clamping: Int64(primingFrames) * factor),
                        remainderFrames: Int32(clamping: Int64(remainderFrames) * factor))
    }
}

/// One packet of audio data with its description and the trim that gapless playback needs.
public struct Packet: Sendable {
    public var data: [UInt8]
    /// Frames in this packet (0 when unknown).
    public var frames: UInt32
    /// Frames to drop at the start and at the end of this packet's decoded output.
    public var trimStart: UInt32
    public var trimEnd: UInt32

    public init(data: [UInt8], frames: UInt32, trimStart: UInt32 = 0, trimEnd: UInt32 = 0) {
        self.data = data
        self.frames = frames
        self.trimStart = trimStart
        self.trimEnd = trimEnd
    }
}

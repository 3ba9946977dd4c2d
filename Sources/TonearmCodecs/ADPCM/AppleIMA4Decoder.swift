import TonearmCore

/// Apple IMA4 ('ima4'), as QuickTime, AIFC and CAF store it.
///
/// A packet holds 64 frames: one 34-byte block per channel, channel after channel. Each
/// block starts with a big-endian 16-bit header whose top 9 bits are the top of the
/// predictor and whose low 7 bits are the step index; 32 bytes of codes follow, low nibble
/// first.
///
/// The 9-bit predictor loses the low 7 bits, so the decoder keeps its own predictor from
/// the previous packet when the header's step index equals its own and the header's
/// predictor is within 127 of it, as Apple's decoder does (and FFmpeg's `adpcm_ima_qt`):
/// the state carries across packets until ``reset()``.
public final class AppleIMA4Decoder: ADPCMBlockDecoder {
    public static let framesPerPacket = 64
    public static let bytesPerChannelBlock = 34

    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public var maximumFramesPerPacket: Int { Self.framesPerPacket }
    /// The predictor's low bits come from the packets before: one packet of run-up gives
    /// them back approximately (exactly only by decoding from the start).
    public var seekPrerollPackets: Int { 1 }
    let channels: Int
    let bytesPerBlock: Int
    let sampleFormat: PCMBuffer.CommonFormat
    var decodesShortBlocks: Bool { false }
    private var state: [IMAChannelState]

    public init(format: StreamDescription, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .appleIMA4 else {
            throw AudioError(.unsupportedDataFormat, "the IMA4 decoder cannot decode \(format.formatID) data")
        }
        let ch = format.channelsPerFrame
        guard ch > 0, ch <= maximumDecoderChannels else { throw AudioError(.unsupportedDataFormat, "IMA4 with \(ch) channels") }
        let block = UInt32(Self.bytesPerChannelBlock) * ch
        guard format.bytesPerPacket == block || format.bytesPerPacket == 0,
              format.framesPerPacket == UInt32(Self.framesPerPacket) || format.framesPerPacket == 0
        else {
            throw AudioError(.unsupportedDataFormat, "IMA4 packets are \(block) bytes and 64 frames: \(format)")
        }
        var f = format
        f.bytesPerPacket = block
        f.framesPerPacket = UInt32(Self.framesPerPacket)
        inputFormat = f
        channels = Int(ch)
        bytesPerBlock = Int(block)
        sampleFormat = output
        state = Array(repeating: IMAChannelState(), count: Int(ch))
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: ch)
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .appleIMA4 else { return nil }
        return try AppleIMA4Decoder(format: format, output: output)
    }

    public func reset() {
        for c in state.indices { state[c] = IMAChannelState() }
    }

    func validate(_ block: UnsafeRawBufferPointer) throws(AudioError) {
        guard block.count >= bytesPerBlock else {
            throw AudioError(.codecBadData, "an IMA4 packet of \(block.count) bytes; \(channels) channels need \(bytesPerBlock)")
        }
        for c in 0..<channels {
            let index = block[c * Self.bytesPerChannelBlock + 1] & 0x7F
            guard index <= IMAADPCM.maximumStepIndex else {
                throw AudioError(.codecBadData, "IMA4 step index \(index) in channel \(c)")
            }
        }
    }

    func frames(inBlockOf size: Int) -> Int { Self.framesPerPacket }

    func decodeBlock<S: DecodedSample>(_ block: UnsafeRawBufferPointer, frames: Int, into out: SampleWriter<S>) {
        let tables = IMAADPCM.tables
        let differences = tables.bitwise, nextRow = tables.nextRow
        let base = block.baseAddress!
        for c in 0..<channels {
            let p = base + c &* Self.bytesPerChannelBlock
            let header = UInt16(p.byte(at: 0)) &<< 8 | UInt16(p.byte(at: 1))
            let predictor = Int32(Int16(bitPattern: header & 0xFF80))
            let index = Int32(header & 0x7F)
            var s = state[c]
            if s.stepIndex != index || abs(predictor &- s.predictor) > 0x7F {
                s = IMAChannelState(predictor: predictor, stepIndex: index)
            }
            var d = out.at(channel: c, frame: 0)
            let stride = out.stride
            for k in 2..<Self.bytesPerChannelBlock {
                let byte = p.byte(at: k)
                d.pointee = S.fromInt16(s.expand(byte & 0x0F, differences, nextRow))
                d += stride
                d.pointee = S.fromInt16(s.expand(byte &>> 4, differences, nextRow))
                d += stride
            }
            state[c] = s
        }
    }
}

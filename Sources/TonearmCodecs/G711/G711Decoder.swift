import TonearmCore

/// G.711 μ-law ('ulaw') and A-law ('alaw'): one byte per sample, expanded through a table
/// to 16 bits (the codec's natural output), then to Float32 (s16 / 32768) or Int32
/// (s16 << 16) by the rules of ``DecodedSample``.
///
/// Interleaved input holds one byte per channel per frame; non-interleaved input holds one
/// plane per channel, one after another, as ``PCMDecoder`` takes it.
public final class G711Decoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public var maximumFramesPerPacket: Int { 1 }

    private let table: [Int16]
    private let output: PCMBuffer.CommonFormat
    private let channels: Int

    /// A decoder for 'ulaw' or 'alaw' data; 'fmt?' for anything else or for a description
    /// whose sizes do not describe one byte per sample.
    public init(format: StreamDescription, output: PCMBuffer.CommonFormat) throws(AudioError) {
        switch format.formatID {
        case .uLaw: table = G711Tables.uLaw
        case .aLaw: table = G711Tables.aLaw
        default: throw AudioError(.unsupportedDataFormat, "the G.711 decoder cannot decode \(format.formatID) data")
        }
        let ch = format.channelsPerFrame
        guard ch > 0, ch <= maximumDecoderChannels else {
            throw AudioError(.unsupportedDataFormat, "G.711 with \(ch) channels")
        }
        let frame: UInt32 = format.isInterleaved ? ch : 1
        // Zeros are tolerated (some containers leave them out); other values must agree.
        guard format.bytesPerFrame == frame || format.bytesPerFrame == 0,
              format.bytesPerPacket == frame || format.bytesPerPacket == 0,
              format.framesPerPacket <= 1, format.bitsPerChannel == 8 || format.bitsPerChannel == 0
        else {
            throw AudioError(.unsupportedDataFormat, "G.711 is one byte per sample and one frame per packet: \(format)")
        }
        var f = format
        f.bytesPerFrame = frame
        f.bytesPerPacket = frame
        f.framesPerPacket = 1
        f.bitsPerChannel = 8
        inputFormat = f
        self.output = output
        channels = Int(ch)
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: ch)
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .uLaw || format.formatID == .aLaw else { return nil }
        return try G711Decoder(format: format, output: output)
    }

    public func reset() {}

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let channels = self.channels, format = self.output
        try table.withUnsafeBufferPointer { (table) throws(AudioError) in
            let loader = TableLoader(table: table.baseAddress!)
            try PCMConversion.decodeFrames(data, packetCount: packetCount, descriptions: descriptions, into: output,
                                           sampleFormat: format, channels: channels, bytesPerSample: 1,
                                           bytesPerFrame: Int(inputFormat.bytesPerFrame), interleaved: inputFormat.isInterleaved)
            { src, layout, frames, offset in
                switch format {
                case .float32:
                    output.withWriter(Float.self) { PCMConversion.convert(loader, from: src, layout: layout, frames: frames, channels: channels, into: $0.advanced(by: offset)) }
                case .int16:
                    output.withWriter(Int16.self) { PCMConversion.convert(loader, from: src, layout: layout, frames: frames, channels: channels, into: $0.advanced(by: offset)) }
                case .int32:
                    output.withWriter(Int32.self) { PCMConversion.convert(loader, from: src, layout: layout, frames: frames, channels: channels, into: $0.advanced(by: offset)) }
                }
            }
        }
    }
}

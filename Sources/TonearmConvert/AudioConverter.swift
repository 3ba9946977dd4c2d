import TonearmCore
import TonearmCodecs

/// Converts packets of one format into interleaved bytes of another, as Apple's
/// `AudioConverter`: decode through the codec registry, then write the samples in the
/// output format.
///
/// This first version converts the sample format only: the sample rate and channel count
/// must match, and anything else is refused with 'fmt?'. Channel mapping and resampling
/// come with the full converter.
public final class AudioConverter {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    private let decoder: AudioDecoder
    private var work: PCMBuffer
    /// Packets decoded per step.
    private let chunkPackets: Int

    /// Makes a converter (`AudioConverterNew`).
    public init(from input: StreamDescription, to output: StreamDescription, magicCookie: [UInt8]? = nil) throws(AudioError) {
        guard input.sampleRate == output.sampleRate || output.sampleRate == 0 else {
            throw AudioError(.unsupportedDataFormat,
                             "sample-rate conversion (\(StreamDescription.formatRate(input.sampleRate)) → \(StreamDescription.formatRate(output.sampleRate)) Hz) is not available yet")
        }
        guard input.channelsPerFrame == output.channelsPerFrame else {
            throw AudioError(.unsupportedDataFormat,
                             "channel conversion (\(input.channelsPerFrame) → \(output.channelsPerFrame)) is not available yet")
        }
        guard PCMEncoder.canEncode(output) else {
            throw AudioError(.unsupportedDataFormat, "cannot encode \(output.formatID) data")
        }
        inputFormat = input
        var out = output
        out.sampleRate = input.sampleRate
        outputFormat = out
        // Float output keeps float; integer output goes through Int16 when 16 bits are
        // all it keeps (the decoder narrows exactly as the encoder would), else Int32,
        // which holds every integer input exactly.
        let common: PCMBuffer.CommonFormat = output.isPCM && output.isFloat ? .float32
            : (output.bitsPerChannel <= 16 ? .int16 : .int32)
        decoder = try CodecRegistry.makeDecoder(for: input, magicCookie: magicCookie, output: common)
        chunkPackets = max(1, 8192 / max(1, decoder.maximumFramesPerPacket))
        work = PCMBuffer(commonFormat: common, sampleRate: input.sampleRate, channels: Int(input.channelsPerFrame),
                         interleaved: true, frameCapacity: chunkPackets * decoder.maximumFramesPerPacket)
    }

    /// Converts packets and appends the output bytes to `out`.
    public func convert(packets data: UnsafeRawBufferPointer, count: Int, descriptions: [PacketDescription]?,
                        into out: inout [UInt8]) throws(AudioError)
    {
        var done = 0
        var byteOffset = 0
        let bpp = Int(inputFormat.bytesPerPacket)
        while done < count {
            let n = min(chunkPackets, count - done)
            let slice: UnsafeRawBufferPointer
            var sliceDescriptions: [PacketDescription]?
            if let descriptions {
                let first = descriptions[done].startOffset
                let last = descriptions[done + n - 1]
                let end = Int(last.startOffset) + Int(last.dataByteSize)
                guard first >= 0, end <= data.count, Int(first) <= end else {
                    throw AudioError(.invalidPacketOffset, "a packet description points outside the data")
                }
                slice = UnsafeRawBufferPointer(rebasing: data[Int(first)..<end])
                sliceDescriptions = descriptions[done..<done + n].map {
                    PacketDescription(startOffset: $0.startOffset - first, variableFramesInPacket: $0.variableFramesInPacket,
                                      dataByteSize: $0.dataByteSize)
                }
            } else {
                guard bpp > 0, byteOffset + n * bpp <= data.count else {
                    throw AudioError(.requiresPacketDescriptions, "packets of varying size need descriptions")
                }
                slice = UnsafeRawBufferPointer(rebasing: data[byteOffset..<byteOffset + n * bpp])
                byteOffset += n * bpp
            }
            work.frameLength = 0
            try decoder.decode(slice, packetCount: n, descriptions: sliceDescriptions, into: work)
            try PCMEncoder.encode(work, as: outputFormat, into: &out)
            done += n
        }
    }

    /// Forgets state between packets (`AudioConverterReset`), after a seek.
    public func reset() { decoder.reset() }
}

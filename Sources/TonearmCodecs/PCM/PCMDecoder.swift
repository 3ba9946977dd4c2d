import TonearmCore

/// Linear PCM ('lpcm') of any layout Apple's ASBD can describe, to Float32, Int16 or Int32.
///
/// - 1 to 64 significant bits in containers of 1 to 8 bytes; signed, or unsigned when
///   `isSignedInteger` is clear (8-bit WAV); 32- and 64-bit float.
/// - Either byte order; packed, or unpacked aligned high or low (24 bits in 4 bytes).
///   Aligned high, the whole container is the sample, as FFmpeg reads a 20-in-24 WAV;
///   aligned low, the bits above the sample are ignored and the sample sign-extended.
/// - Interleaved input, or non-interleaved input whose channels follow one another in
///   the data: channel 0's `packetCount` samples, then channel 1's, and so on.
///
/// The conversions are those of ``DecodedSample``: integers scale by 2^-(bits-1) to float,
/// keep their high bits when narrowed and shift left when widened; floats round half to
/// even and saturate; Float64 narrows to Float32 by plain conversion.
public final class PCMDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public var maximumFramesPerPacket: Int { 1 }

    private enum Layout {
        case int32(container: Int, bigEndian: Bool, shift: UInt32, flip: UInt32)
        case int64(container: Int, bigEndian: Bool, shift: UInt64, flip: UInt64)
        case float32(bigEndian: Bool)
        case float64(bigEndian: Bool)
    }

    private let layout: Layout
    private let output: PCMBuffer.CommonFormat
    private let channels: Int
    private let bytesPerSample: Int
    private let bytesPerFrame: Int

    /// A decoder for `format`, or 'fmt?' when the description is not consistent linear PCM.
    public init(format: StreamDescription, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .linearPCM else {
            throw AudioError(.unsupportedDataFormat, "the PCM decoder cannot decode \(format.formatID) data")
        }
        try format.validate()
        let container = Int(format.bytesPerSample)
        let bits = Int(format.bitsPerChannel)
        let bigEndian = format.isBigEndian && container > 1
        if format.isFloat {
            guard bits == container * 8 else {
                throw AudioError(.unsupportedDataFormat, "\(bits)-bit float in \(container)-byte containers")
            }
            layout = bits == 32 ? .float32(bigEndian: bigEndian) : .float64(bigEndian: bigEndian)
        } else {
            // Aligned high (or full), the container is the sample; aligned low, only `bits`.
            let significant = bits == container * 8 || format.formatFlags.contains(.isAlignedHigh) ? container * 8 : bits
            let unsigned = !format.isSignedInteger
            if container <= 4 {
                layout = .int32(container: container, bigEndian: bigEndian, shift: UInt32(32 - significant),
                                flip: unsigned ? 1 << 31 : 0)
            } else {
                layout = .int64(container: container, bigEndian: bigEndian, shift: UInt64(64 - significant),
                                flip: unsigned ? 1 << 63 : 0)
            }
        }
        inputFormat = format
        self.output = output
        channels = Int(format.channelsPerFrame)
        bytesPerSample = container
        bytesPerFrame = Int(format.bytesPerFrame)
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: format.channelsPerFrame)
    }

    /// The registry's factory: a decoder for 'lpcm', nil for any other format.
    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .linearPCM else { return nil }
        return try PCMDecoder(format: format, output: output)
    }

    public func reset() {}

    /// Decodes `packetCount` frames. Interleaved data holds them one after another (or where
    /// `descriptions` say, each of `bytesPerPacket` bytes); non-interleaved data holds one
    /// plane per channel, each `packetCount × bytesPerFrame` bytes, and `descriptions` are
    /// not used.
    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        try PCMConversion.decodeFrames(data, packetCount: packetCount, descriptions: descriptions, into: output,
                                       sampleFormat: self.output, channels: channels, bytesPerSample: bytesPerSample,
                                       bytesPerFrame: bytesPerFrame, interleaved: inputFormat.isInterleaved)
        { src, layout, frames, offset in
            run(src, layout, frames: frames, into: output, at: offset)
        }
    }

    /// Converts checked input into `output`, `at` frames after its valid ones.
    private func run(_ src: UnsafeRawPointer, _ input: PCMInputLayout, frames: Int, into output: PCMBuffer, at offset: Int = 0) {
        switch layout {
        case let .int32(container, bigEndian, shift, flip):
            switch (container, bigEndian) {
            case (1, _):
                dispatch(JustifiedLoader32<RawByte>(shift: shift, flip: flip), src, input, frames, output, offset)
            case (2, false):
                if shift == 16 && flip == 0 { dispatch(PackedS16LELoader(), src, input, frames, output, offset) }
                else { dispatch(JustifiedLoader32<RawLE16>(shift: shift, flip: flip), src, input, frames, output, offset) }
            case (2, true): dispatch(JustifiedLoader32<RawBE16>(shift: shift, flip: flip), src, input, frames, output, offset)
            case (3, false): dispatch(JustifiedLoader32<RawLE24>(shift: shift, flip: flip), src, input, frames, output, offset)
            case (3, true): dispatch(JustifiedLoader32<RawBE24>(shift: shift, flip: flip), src, input, frames, output, offset)
            case (_, false): dispatch(JustifiedLoader32<RawLE32>(shift: shift, flip: flip), src, input, frames, output, offset)
            case (_, true): dispatch(JustifiedLoader32<RawBE32>(shift: shift, flip: flip), src, input, frames, output, offset)
            }
        case let .int64(container, bigEndian, shift, flip):
            dispatch(JustifiedLoader64(width: container, bigEndian: bigEndian, shift: shift, flip: flip), src, input, frames, output, offset)
        case .float32(false): dispatch(Float32LELoader(), src, input, frames, output, offset)
        case .float32(true): dispatch(Float32BELoader(), src, input, frames, output, offset)
        case .float64(false): dispatch(Float64LELoader(), src, input, frames, output, offset)
        case .float64(true): dispatch(Float64BELoader(), src, input, frames, output, offset)
        }
    }

    private func dispatch<L: PCMSampleLoader>(_ loader: L, _ src: UnsafeRawPointer, _ input: PCMInputLayout, _ frames: Int,
                                              _ output: PCMBuffer, _ offset: Int)
    {
        let channels = self.channels
        switch self.output {
        case .float32:
            output.withWriter(Float.self) { PCMConversion.convert(loader, from: src, layout: input, frames: frames, channels: channels, into: $0.advanced(by: offset)) }
        case .int16:
            output.withWriter(Int16.self) { PCMConversion.convert(loader, from: src, layout: input, frames: frames, channels: channels, into: $0.advanced(by: offset)) }
        case .int32:
            output.withWriter(Int32.self) { PCMConversion.convert(loader, from: src, layout: input, frames: frames, channels: channels, into: $0.advanced(by: offset)) }
        }
    }
}

/// Packed signed 16-bit little-endian, the commonest PCM, with a SIMD path to Float32.
struct PackedS16LELoader: PCMSampleLoader {
    var width: Int { 2 }
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        S.fromInt16(Int16(littleEndian: p.loadUnaligned(as: Int16.self)))
    }
}

/// Decoded audio in memory, as Apple's `AVAudioPCMBuffer`: Float32, Int16 or Int32
/// samples, interleaved or planar, with a fixed capacity allocated once.
///
/// The storage never reallocates, so a buffer made ahead of time can be filled on a
/// render thread.
public final class PCMBuffer {
    /// The sample types a PCM buffer holds, as `AVAudioCommonFormat`.
    public enum CommonFormat: Sendable, Hashable {
        case float32, int16, int32

        public var bytesPerSample: Int {
            switch self {
            case .float32, .int32: 4
            case .int16: 2
            }
        }
    }

    public let commonFormat: CommonFormat
    public let format: StreamDescription
    public let frameCapacity: Int
    /// Frames that hold valid data, at most `frameCapacity`.
    public var frameLength: Int {
        didSet { precondition(frameLength >= 0 && frameLength <= frameCapacity, "frameLength beyond capacity") }
    }
    public var channelCount: Int { Int(format.channelsPerFrame) }
    public var isInterleaved: Bool { format.isInterleaved }

    private let storage: UnsafeMutableRawPointer
    private let byteCount: Int

    /// Makes an empty buffer of `frameCapacity` frames.
    public init(commonFormat: CommonFormat, sampleRate: Double, channels: Int, interleaved: Bool,
                frameCapacity: Int)
    {
        precondition(channels > 0 && frameCapacity >= 0)
        self.commonFormat = commonFormat
        let bits = UInt32(commonFormat.bytesPerSample * 8)
        format = .pcm(sampleRate: sampleRate, channels: UInt32(channels), bits: bits,
                      isFloat: commonFormat == .float32, interleaved: interleaved)
        self.frameCapacity = frameCapacity
        frameLength = 0
        byteCount = max(1, frameCapacity * channels * commonFormat.bytesPerSample)
        storage = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
    }

    /// Makes a buffer for a native-endian Float32, Int16 or Int32 linear PCM format;
    /// nil for any other format.
    public convenience init?(format: StreamDescription, frameCapacity: Int) {
        guard let common = PCMBuffer.commonFormat(of: format) else { return nil }
        self.init(commonFormat: common, sampleRate: format.sampleRate, channels: Int(format.channelsPerFrame),
                  interleaved: format.isInterleaved, frameCapacity: frameCapacity)
    }

    deinit { storage.deallocate() }

    /// The common format a stream description matches, if any.
    public static func commonFormat(of f: StreamDescription) -> CommonFormat? {
        guard f.isPCM, f.isBigEndian == (1.bigEndian == 1) || f.bytesPerSample == 1, f.channelsPerFrame > 0 else { return nil }
        if f.isFloat && f.bitsPerChannel == 32 && f.bytesPerSample == 4 { return .float32 }
        if !f.isFloat && f.isSignedInteger && f.bitsPerChannel == 16 && f.bytesPerSample == 2 { return .int16 }
        if !f.isFloat && f.isSignedInteger && f.bitsPerChannel == 32 && f.bytesPerSample == 4 { return .int32 }
        return nil
    }

    /// Distance in samples between two frames of one channel: the channel count when
    /// interleaved, 1 when planar.
    public var stride: Int { isInterleaved ? channelCount : 1 }

    /// Index of the first sample of `channel` in the whole storage.
    @inlinable
    public func channelStart(_ channel: Int) -> Int { isInterleaved ? channel : channel * frameCapacity }

    /// Calls `body` with all the storage as samples of type `T` (`frameCapacity × channels`).
    /// `T` must match the common format.
    public func withUnsafeMutableSamples<T, R>(_ type: T.Type, _ body: (UnsafeMutableBufferPointer<T>) throws -> R) rethrows -> R {
        precondition(MemoryLayout<T>.size == commonFormat.bytesPerSample, "sample type does not match the buffer")
        let count = frameCapacity * channelCount
        let typed = storage.bindMemory(to: T.self, capacity: count)
        return try body(UnsafeMutableBufferPointer(start: typed, count: count))
    }

    /// Calls `body` with the storage as raw bytes.
    public func withUnsafeMutableRawBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: storage, count: frameCapacity * channelCount * commonFormat.bytesPerSample))
    }

    /// Float32 samples of one channel over the valid frames, copied out.
    public func floatSamples(channel: Int) -> [Float] {
        precondition(commonFormat == .float32 && channel >= 0 && channel < channelCount)
        return withUnsafeMutableSamples(Float.self) { p in
            let start = channelStart(channel), s = stride
            return (0..<frameLength).map { p[start + $0 * s] }
        }
    }

    /// Int16 samples of one channel over the valid frames, copied out.
    public func int16Samples(channel: Int) -> [Int16] {
        precondition(commonFormat == .int16 && channel >= 0 && channel < channelCount)
        return withUnsafeMutableSamples(Int16.self) { p in
            let start = channelStart(channel), s = stride
            return (0..<frameLength).map { p[start + $0 * s] }
        }
    }

    /// Int32 samples of one channel over the valid frames, copied out.
    public func int32Samples(channel: Int) -> [Int32] {
        precondition(commonFormat == .int32 && channel >= 0 && channel < channelCount)
        return withUnsafeMutableSamples(Int32.self) { p in
            let start = channelStart(channel), s = stride
            return (0..<frameLength).map { p[start + $0 * s] }
        }
    }

    /// The valid frames as interleaved little-endian bytes: what `ffmpeg -f s16le` or
    /// `-f f32le` writes, for hashing against an oracle.
    public func interleavedBytes() -> [UInt8] {
        let bps = commonFormat.bytesPerSample
        let count = frameLength * channelCount * bps
        guard count > 0 else { return [] }
        let littleEndian = 1.littleEndian == 1
        return withUnsafeMutableRawBytes { raw in
            let source = UnsafeRawPointer(raw.baseAddress!)
            return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                let target = UnsafeMutableRawPointer(out.baseAddress!)
                if isInterleaved && littleEndian {
                    // Storage is already the answer.
                    target.copyMemory(from: source, byteCount: count)
                } else {
                    var o = 0
                    for f in 0..<frameLength {
                        for c in 0..<channelCount {
                            let sample = source + (channelStart(c) + f * stride) * bps
                            if littleEndian {
                                (target + o).copyMemory(from: sample, byteCount: bps)
                            } else {
                                // Storage is native-endian; write little-endian.
                                for b in 0..<bps {
                                    (target + o + b).storeBytes(of: sample.load(fromByteOffset: bps - 1 - b, as: UInt8.self), as: UInt8.self)
                                }
                            }
                            o += bps
                        }
                    }
                }
                initialized = count
            }
        }
    }
}

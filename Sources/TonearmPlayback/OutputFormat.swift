import TonearmCore

/// The formats a device takes, and the copy from a client's buffers into a device buffer.
enum OutputFormat {
    /// The sample types every backend accepts: native-endian Int16, Int32 and Float32.
    static func commonFormat(of f: StreamDescription) -> PCMBuffer.CommonFormat? {
        PCMBuffer.commonFormat(of: f)
    }

    /// The interleaved device format for a client format; 'fmt?' unless it is linear PCM with
    /// one of the common sample types, a rate and at most 32 channels.
    static func deviceFormat(for f: StreamDescription) throws(AudioError) -> StreamDescription {
        guard let common = commonFormat(of: f) else {
            throw AudioError(.unsupportedDataFormat,
                             "playback takes native-endian Int16, Int32 or Float32 linear PCM, not \(f)")
        }
        guard f.sampleRate >= 1000, f.sampleRate <= 768_000, (1...32).contains(f.channelsPerFrame) else {
            throw AudioError(.unsupportedDataFormat, "playback needs 1 to 32 channels at 1 to 768 kHz, not \(f)")
        }
        return interleaved(common, like: f)
    }

    static func interleaved(_ common: PCMBuffer.CommonFormat, like f: StreamDescription) -> StreamDescription {
        .pcm(sampleRate: f.sampleRate, channels: f.channelsPerFrame, bits: UInt32(common.bytesPerSample * 8),
             isFloat: common == .float32, interleaved: true)
    }
}

/// Copies frames from a client's buffer list into an interleaved device buffer, changing the
/// sample type if the device took another one. Preallocated: nothing allocates per call.
struct SampleCopier {
    let client: PCMBuffer.CommonFormat
    let device: PCMBuffer.CommonFormat
    let channels: Int
    let clientInterleaved: Bool

    /// True when the client's buffer can be the device's buffer.
    var isIdentity: Bool { client == device && (clientInterleaved || channels == 1) }

    /// Copies `frames` frames; `source(c)` is channel c's buffer when planar, buffer 0 otherwise.
    func copy(frames: Int, from list: AudioBufferList, to out: UnsafeMutableRawPointer) {
        let outStride = channels
        for c in 0..<channels {
            let (base, stride, offset) = clientInterleaved ? (list[0].baseAddress!, channels, c) : (list[c].baseAddress!, 1, 0)
            for i in 0..<frames {
                let v = Self.load(client, base, (i * stride + offset))
                Self.store(device, out, i * outStride + c, v)
            }
        }
    }

    @inline(__always)
    private static func load(_ f: PCMBuffer.CommonFormat, _ p: UnsafeMutableRawPointer, _ i: Int) -> Float {
        switch f {
        case .float32: return p.assumingMemoryBound(to: Float.self)[i]
        case .int16: return Float(p.assumingMemoryBound(to: Int16.self)[i]) / 32768
        case .int32: return Float(Double(p.assumingMemoryBound(to: Int32.self)[i]) / 2_147_483_648)
        }
    }

    @inline(__always)
    private static func store(_ f: PCMBuffer.CommonFormat, _ p: UnsafeMutableRawPointer, _ i: Int, _ v: Float) {
        switch f {
        case .float32: p.assumingMemoryBound(to: Float.self)[i] = v
        case .int16: p.assumingMemoryBound(to: Int16.self)[i] = Int16(max(-32768, min(32767, (v * 32768).rounded())))
        case .int32:
            p.assumingMemoryBound(to: Int32.self)[i] =
                Int32(max(-2_147_483_648, min(2_147_483_647, (Double(v) * 2_147_483_648).rounded())))
        }
    }
}

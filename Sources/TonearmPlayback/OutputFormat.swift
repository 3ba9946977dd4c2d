import TonearmCore

/// The formats a device takes, and the copy from a client's buffers into a device buffer.
enum OutputFormat {
    /// The interleaved device format for a client format; 'fmt?' unless it is linear PCM with
    /// one of the common sample types, a rate and at most 32 channels.
    static func deviceFormat(for f: StreamDescription) throws(AudioError) -> StreamDescription {
        guard let common = PCMBuffer.commonFormat(of: f) else {
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

    /// Copies `frames` frames; the client's buffer 0 when interleaved, buffer c for channel c
    /// when planar. The sample types are chosen once per call, not per sample.
    func copy(frames: Int, from list: AudioBufferList, to out: UnsafeMutableRawPointer) {
        switch client {
        case .float32: copy(frames, list, out, Float.self) { $0 }
        case .int16: copy(frames, list, out, Int16.self) { Float($0) / 32768 }
        case .int32: copy(frames, list, out, Int32.self) { Float(Double($0) / 2_147_483_648) }
        }
    }

    @inline(__always)
    private func copy<S>(_ frames: Int, _ list: AudioBufferList, _ out: UnsafeMutableRawPointer, _: S.Type,
                         _ load: (S) -> Float)
    {
        switch device {
        case .float32: copy(frames, list, out, S.self, load, Float.self) { $0 }
        case .int16: copy(frames, list, out, S.self, load, Int16.self) { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
        case .int32:
            copy(frames, list, out, S.self, load, Int32.self) {
                Int32(max(-2_147_483_648, min(2_147_483_647, (Double($0) * 2_147_483_648).rounded())))
            }
        }
    }

    @inline(__always)
    private func copy<S, D>(_ frames: Int, _ list: AudioBufferList, _ out: UnsafeMutableRawPointer, _: S.Type,
                            _ load: (S) -> Float, _: D.Type, _ store: (Float) -> D)
    {
        let d = out.assumingMemoryBound(to: D.self)
        for c in 0..<channels {
            let (base, stride, offset) = clientInterleaved ? (list[0].baseAddress!, channels, c) : (list[c].baseAddress!, 1, 0)
            let s = base.assumingMemoryBound(to: S.self)
            for i in 0..<frames { d[i * channels + c] = store(load(s[i * stride + offset])) }
        }
    }
}

import TonearmCore

/// Where encoded samples go: channel c's sample of frame i at `channel(c) + i × frameStride`.
/// Interleaved bytes, a planar ``PCMBuffer``'s storage, or the buffers of an
/// ``AudioBufferList``: the converter's last stage writes into any of them, the caller's memory
/// included, with no copy in between.
struct SampleDestination {
    private let base: UnsafeMutableRawPointer?
    private let channelStride: Int
    private let list: AudioBufferList?
    /// Bytes from the start of each channel's memory to frame 0's sample.
    private var offset = 0
    /// Bytes from one frame's sample of a channel to the next frame's.
    let frameStride: Int

    private init(base: UnsafeMutableRawPointer?, channelStride: Int, list: AudioBufferList?, frameStride: Int) {
        self.base = base
        self.channelStride = channelStride
        self.list = list
        self.frameStride = frameStride
    }

    /// Interleaved frames of `channels` samples of `width` bytes each, from `base`.
    static func interleaved(_ base: UnsafeMutableRawPointer, channels: Int, width: Int) -> SampleDestination {
        SampleDestination(base: base, channelStride: width, list: nil, frameStride: channels * width)
    }

    /// One buffer per channel of `list`, or its one buffer holding all channels interleaved.
    static func buffers(_ list: AudioBufferList, channels: Int, width: Int) -> SampleDestination {
        list.count == 1 && channels > 1
            ? .interleaved(list[0].baseAddress!, channels: channels, width: width)
            : SampleDestination(base: nil, channelStride: 0, list: list, frameStride: width)
    }

    /// The storage of a PCM buffer of the same sample format, from frame `frame`. Its storage
    /// never moves, so the pointer outlives the closure.
    static func buffer(_ b: PCMBuffer, from frame: Int) -> SampleDestination {
        let bps = b.commonFormat.bytesPerSample
        let base = b.withUnsafeMutableRawBytes { $0.baseAddress! }
        var d = SampleDestination(base: base, channelStride: (b.isInterleaved ? 1 : b.frameCapacity) * bps, list: nil,
                                  frameStride: b.stride * bps)
        d.offset = frame * d.frameStride
        return d
    }

    @inline(__always)
    func channel(_ c: Int) -> UnsafeMutableRawPointer {
        if let list { return list[c].baseAddress! + offset }
        return base! + c * channelStride + offset
    }

    /// Copies `frames` interleaved frames of `channels` samples of `width` bytes, already
    /// encoded, from `source`.
    func copy(interleaved source: UnsafeRawPointer, frames: Int, channels: Int, width: Int) {
        let step = channels * width
        if frameStride == step && list == nil && channelStride == width {
            channel(0).copyMemory(from: source, byteCount: frames * step)
            return
        }
        for c in 0..<channels {
            let o = channel(c), s = source + c * width
            for i in 0..<frames { (o + i * frameStride).copyMemory(from: s + i * step, byteCount: width) }
        }
    }

    /// The same destination `frames` frames on.
    func advanced(by frames: Int) -> SampleDestination {
        var d = self
        d.offset += frames * frameStride
        return d
    }
}

/// Writes the frames of a ``PCMBuffer`` as bytes of a linear PCM, μ-law or A-law stream
/// description: the last step before a file writer or a caller's buffer.
///
/// Integer to narrower integer keeps the high bits (as `ffmpeg -f s16le` does); float to
/// integer rounds to nearest and clips; 8-bit unsigned is offset by 128.
public enum PCMEncoder {
    /// Whether `encode` can write this format.
    public static func canEncode(_ f: StreamDescription) -> Bool {
        if f.formatID == .uLaw || f.formatID == .aLaw { return true }
        guard f.isPCM, f.channelsPerFrame > 0, (try? f.validate()) != nil else { return false }
        if f.isFloat { return f.bitsPerChannel == 32 || f.bitsPerChannel == 64 }
        return f.bitsPerChannel >= 8 && f.bitsPerChannel <= 32 && f.bytesPerSample <= 4
    }

    /// Appends the buffer's valid frames to `out` in format `f` (interleaved on output,
    /// whatever the buffer's layout). The buffer's channel count must match.
    public static func encode(_ buffer: PCMBuffer, as f: StreamDescription, into out: inout [UInt8]) throws(AudioError) {
        try encode(buffer, from: 0, count: buffer.frameLength, as: f, into: &out)
    }

    /// Appends `count` frames from frame `start`.
    static func encode(_ buffer: PCMBuffer, from start: Int, count: Int, as f: StreamDescription,
                       into out: inout [UInt8]) throws(AudioError)
    {
        try check(buffer, f)
        let width = sampleWidth(f), channels = buffer.channelCount
        let at = out.count
        out.append(zeros: count * channels * width)
        out.withUnsafeMutableBytes { raw in
            write(buffer, from: start, count: count, as: f, to: .interleaved(raw.baseAddress! + at, channels: channels, width: width))
        }
    }

    static func check(_ buffer: PCMBuffer, _ f: StreamDescription) throws(AudioError) {
        guard canEncode(f) else { throw AudioError(.unsupportedDataFormat, "cannot write samples as \(f)") }
        guard Int(f.channelsPerFrame) == buffer.channelCount else {
            throw AudioError(.unsupportedDataFormat, "\(buffer.channelCount) channels into a \(f.channelsPerFrame)-channel format")
        }
    }

    /// Bytes per sample of `f` as written (G.711: one).
    static func sampleWidth(_ f: StreamDescription) -> Int {
        f.formatID == .uLaw || f.formatID == .aLaw ? 1 : Int(f.bytesPerSample)
    }

    /// Writes `count` frames of the buffer from frame `start` to `dst` in format `f` (whose
    /// samples, one per channel, the destination lays out). `check` has passed.
    static func write(_ buffer: PCMBuffer, from start: Int, count frames: Int, as f: StreamDescription, to dst: SampleDestination) {
        let channels = buffer.channelCount
        let isG711 = f.formatID == .uLaw || f.formatID == .aLaw
        let width = sampleWidth(f)
        if writeVerbatim(buffer, start, frames, f, to: dst) { return }
        if buffer.commonFormat == .float32, writeFloatFast(buffer, start, frames, f, to: dst) { return }
        let stride = buffer.stride, step = dst.frameStride
        switch buffer.commonFormat {
        case .float32:
            buffer.withUnsafeMutableSamples(Float.self) { src in
                for c in 0..<channels {
                    let base = buffer.channelStart(c) + start * stride, o = dst.channel(c)
                    for i in 0..<frames {
                        put(float: src[base + i * stride], at: o + i * step, f, isG711: isG711, width: width)
                    }
                }
            }
        case .int32:
            buffer.withUnsafeMutableSamples(Int32.self) { src in
                for c in 0..<channels {
                    let base = buffer.channelStart(c) + start * stride, o = dst.channel(c)
                    for i in 0..<frames {
                        put(int32: src[base + i * stride], at: o + i * step, f, isG711: isG711, width: width)
                    }
                }
            }
        case .int16:
            buffer.withUnsafeMutableSamples(Int16.self) { src in
                for c in 0..<channels {
                    let base = buffer.channelStart(c) + start * stride, o = dst.channel(c)
                    for i in 0..<frames {
                        put(int32: Int32(src[base + i * stride]) << 16, at: o + i * step, f, isG711: isG711, width: width)
                    }
                }
            }
        }
    }

    /// When the buffer already holds the output's samples (native endian, same width), copies
    /// them: one copy when both sides are interleaved alike or mono, one per channel when both
    /// are planar, sample by sample otherwise.
    private static func writeVerbatim(_ buffer: PCMBuffer, _ start: Int, _ frames: Int, _ f: StreamDescription,
                                      to dst: SampleDestination) -> Bool
    {
        guard f.isPCM, f.isBigEndian == (1.bigEndian == 1), f.formatFlags.contains(.isPacked) else { return false }
        let matches: Bool
        switch buffer.commonFormat {
        case .float32: matches = f.isFloat && f.bitsPerChannel == 32
        case .int16: matches = !f.isFloat && f.isSignedInteger && f.bitsPerChannel == 16
        case .int32: matches = !f.isFloat && f.isSignedInteger && f.bitsPerChannel == 32
        }
        guard matches else { return false }
        let bps = buffer.commonFormat.bytesPerSample, channels = buffer.channelCount
        let sourceStep = buffer.stride * bps
        buffer.withUnsafeMutableRawBytes { raw in
            let src = raw.baseAddress!
            if sourceStep == dst.frameStride && (buffer.isInterleaved || channels == 1) {
                // Interleaved into interleaved (or mono into one buffer): one block.
                dst.channel(0).copyMemory(from: src + start * sourceStep, byteCount: frames * sourceStep)
                return
            }
            for c in 0..<channels {
                let s = src + (buffer.channelStart(c) + start * buffer.stride) * bps, o = dst.channel(c)
                if sourceStep == bps && dst.frameStride == bps {
                    o.copyMemory(from: s, byteCount: frames * bps)
                } else if bps == 4 {
                    for i in 0..<frames { o.storeBytes(of: s.load(fromByteOffset: i * sourceStep, as: UInt32.self),
                                                       toByteOffset: i * dst.frameStride, as: UInt32.self) }
                } else {
                    for i in 0..<frames { o.storeBytes(of: s.load(fromByteOffset: i * sourceStep, as: UInt16.self),
                                                       toByteOffset: i * dst.frameStride, as: UInt16.self) }
                }
            }
        }
        return true
    }

    /// Float32 samples into packed signed 16-, 24- or 32-bit integers or Float32, either
    /// endianness: the resampler's and mixer's usual last step, in one tight loop per channel.
    /// The same values as `put(float:)`: scaling by a power of two is exact in Float, and so is
    /// rounding to an integer.
    private static func writeFloatFast(_ buffer: PCMBuffer, _ start: Int, _ frames: Int, _ f: StreamDescription,
                                       to dst: SampleDestination) -> Bool
    {
        guard f.isPCM, f.formatFlags.contains(.isPacked) || f.bitsPerChannel == f.bytesPerSample * 8 else { return false }
        let width = Int(f.bytesPerSample), bits = Int(f.bitsPerChannel)
        let isFloat = f.isFloat
        guard isFloat ? bits == 32 : (f.isSignedInteger && bits == width * 8 && (width == 2 || width == 3 || width == 4)) else {
            return false
        }
        let swap = f.isBigEndian != (1.bigEndian == 1)
        let channels = buffer.channelCount, stride = buffer.stride
        let step = dst.frameStride
        buffer.withUnsafeMutableSamples(Float.self) { src in
            // Planar stereo into interleaved 16-bit frames: both channels' eight values go out
            // as one store of eight frames.
            var done = 0
            if !isFloat && width == 2 && channels == 2 && stride == 1 && step == 4 && dst.channel(1) == dst.channel(0) + 2 {
                let left = UnsafeRawPointer(src.baseAddress! + buffer.channelStart(0) + start)
                let right = UnsafeRawPointer(src.baseAddress! + buffer.channelStart(1) + start)
                let o = dst.channel(0)
                while done &+ 8 <= frames {
                    let l = unsafeBitCast(sixteen(left, done), to: SIMD8<UInt32>.self)
                    let r = unsafeBitCast(sixteen(right, done), to: SIMD8<UInt32>.self)
                    var v = l & 0xFFFF | r &<< 16
                    if swap { v = (v & 0x00FF_00FF) &<< 8 | (v &>> 8) & 0x00FF_00FF }
                    o.storeBytes(of: v, toByteOffset: done &* 4, as: SIMD8<UInt32>.self)
                    done &+= 8
                }
            }
            for c in 0..<channels {
                let base = src.baseAddress! + buffer.channelStart(c) + (start + done) * stride
                var o = dst.channel(c) + done * step
                let frames = frames - done
                if isFloat {
                    for i in 0..<frames {
                        let v = base[i * stride].bitPattern
                        o.storeBytes(of: swap ? v.byteSwapped : v, as: UInt32.self)
                        o += step
                    }
                    continue
                }
                let scale = Float(sign: .plus, exponent: bits - 1, significand: 1)
                switch width {
                case 2:
                    var i = 0
                    if stride == 1 {
                        let raw = UnsafeRawPointer(base)
                        while i &+ 8 <= frames {
                            let n = sixteen(raw, i)
                            for k in 0..<8 {
                                let v = UInt16(truncatingIfNeeded: n[k])
                                o.storeBytes(of: swap ? v.byteSwapped : v, as: UInt16.self)
                                o += step
                            }
                            i &+= 8
                        }
                    }
                    for i in i..<frames {
                        let y = max(-32768, min(32767, (base[i * stride] * scale).rounded(.toNearestOrEven)))
                        let v = UInt16(bitPattern: Int16(y))
                        o.storeBytes(of: swap ? v.byteSwapped : v, as: UInt16.self)
                        o += step
                    }
                case 3:
                    for i in 0..<frames {
                        let y = max(-8_388_608, min(8_388_607, (base[i * stride] * scale).rounded(.toNearestOrEven)))
                        let v = UInt32(bitPattern: Int32(y))
                        if swap {
                            o.storeBytes(of: UInt8(truncatingIfNeeded: v >> 16), as: UInt8.self)
                            o.storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), toByteOffset: 1, as: UInt8.self)
                            o.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: 2, as: UInt8.self)
                        } else {
                            o.storeBytes(of: UInt8(truncatingIfNeeded: v), as: UInt8.self)
                            o.storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), toByteOffset: 1, as: UInt8.self)
                            o.storeBytes(of: UInt8(truncatingIfNeeded: v >> 16), toByteOffset: 2, as: UInt8.self)
                        }
                        o += step
                    }
                default:
                    for i in 0..<frames {
                        let y = (base[i * stride] * scale).rounded(.toNearestOrEven)
                        // 2^31 itself is the first Float past Int32.max; NaN goes to the top,
                        // as the clamps of the narrower widths send it.
                        let n: Int32 = y >= 2_147_483_648 || y.isNaN ? .max : y <= -2_147_483_648 ? .min : Int32(y)
                        let v = UInt32(bitPattern: n)
                        o.storeBytes(of: swap ? v.byteSwapped : v, as: UInt32.self)
                        o += step
                    }
                }
            }
        }
        return true
    }

    /// Eight Float samples from `raw` + 4·`i` as 16-bit integers, with the scalar loop's
    /// values: NaN and everything above the top become the top (NaN ≤ top is false), then the
    /// bottom clamp; adding 1.5 · 2²³ rounds to an integer, ties to even, and leaves it in the
    /// low bits of the sum's pattern (|y| < 2²²).
    @inline(__always)
    private static func sixteen(_ raw: UnsafeRawPointer, _ i: Int) -> SIMD8<Int32> {
        let top = SIMD8<Float>(repeating: 32767), bottom = SIMD8<Float>(repeating: -32768)
        var y = raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self) * 32768
        y.replace(with: top, where: .!(y .<= top))
        y.replace(with: bottom, where: y .< bottom)
        return unsafeBitCast(y + SIMD8(repeating: 0x1.8p23), to: SIMD8<Int32>.self) &- SIMD8(repeating: 0x4B40_0000)
    }

    @inline(__always)
    private static func put(int32 v: Int32, at p: UnsafeMutableRawPointer, _ f: StreamDescription, isG711: Bool, width: Int) {
        if isG711 {
            let s16 = Int16(truncatingIfNeeded: v >> 16)
            p.storeBytes(of: f.formatID == .uLaw ? G711.encodeULaw(s16) : G711.encodeALaw(s16), as: UInt8.self)
            return
        }
        if f.isFloat {
            let x = Double(v) / 2_147_483_648.0
            if width == 4 { storeFloat32(Float(x), p, f.isBigEndian) } else { storeUInt(x.bitPattern, 8, p, f.isBigEndian) }
            return
        }
        storeInteger(Int64(v) << 32, p, f, width: width)
    }

    @inline(__always)
    private static func put(float x: Float, at p: UnsafeMutableRawPointer, _ f: StreamDescription, isG711: Bool, width: Int) {
        if isG711 {
            let s16 = Int16(max(-32768, min(32767, (x * 32768).rounded(.toNearestOrEven))))
            p.storeBytes(of: f.formatID == .uLaw ? G711.encodeULaw(s16) : G711.encodeALaw(s16), as: UInt8.self)
            return
        }
        if f.isFloat {
            if width == 4 { storeFloat32(x, p, f.isBigEndian) } else { storeUInt(Double(x).bitPattern, 8, p, f.isBigEndian) }
            return
        }
        // Round to the output's bit depth and clip, then place in the 64-bit frame.
        let bits = Int(f.bitsPerChannel)
        let scale = Double(sign: .plus, exponent: bits - 1, significand: 1)
        let r = (Double(x) * scale).rounded(.toNearestOrEven)
        let clipped = max(-scale, min(scale - 1, r))
        storeInteger(Int64(clipped) << (64 - bits), p, f, width: width)
    }

    /// `v` holds the sample in its top bits; keeps the output's bits, aligned as the format says.
    @inline(__always)
    private static func storeInteger(_ v: Int64, _ p: UnsafeMutableRawPointer, _ f: StreamDescription, width: Int) {
        let bits = Int(f.bitsPerChannel)
        var sample = v >> (64 - bits)  // arithmetic: truncation keeps the high bits
        if !f.isSignedInteger { sample += 1 << (bits - 1) }
        var word = UInt64(bitPattern: sample) & (bits == 64 ? ~0 : (1 << UInt64(bits)) - 1)
        if bits < width * 8 && f.formatFlags.contains(.isAlignedHigh) { word <<= UInt64(width * 8 - bits) }
        storeUInt(word, width, p, f.isBigEndian)
    }

    @inline(__always)
    private static func storeFloat32(_ x: Float, _ p: UnsafeMutableRawPointer, _ bigEndian: Bool) {
        storeUInt(UInt64(x.bitPattern), 4, p, bigEndian)
    }

    @inline(__always)
    private static func storeUInt(_ v: UInt64, _ width: Int, _ p: UnsafeMutableRawPointer, _ bigEndian: Bool) {
        for i in 0..<width {
            let shift = bigEndian ? 8 * (width - 1 - i) : 8 * i
            p.storeBytes(of: UInt8(truncatingIfNeeded: v >> UInt64(shift)), toByteOffset: i, as: UInt8.self)
        }
    }
}

/// G.711 compression (ITU-T G.711), for writing μ-law and A-law files.
public enum G711 {
    /// μ-law: bias 0x84, segment from the top set bit, inverted.
    public static func encodeULaw(_ sample: Int16) -> UInt8 {
        let bias = 0x84, clip = 32635
        var s = Int(sample)
        let sign = s < 0 ? 0x80 : 0
        if s < 0 { s = -s }
        s = min(s, clip) + bias
        var exponent = 7
        var mask = 0x4000
        while exponent > 0 && s & mask == 0 { exponent -= 1; mask >>= 1 }
        let mantissa = (s >> (exponent + 3)) & 0x0F
        return UInt8(~(sign | exponent << 4 | mantissa) & 0xFF)
    }

    /// A-law: 13-bit magnitude, segment and mantissa, even bits inverted (XOR 0x55).
    public static func encodeALaw(_ sample: Int16) -> UInt8 {
        var s = Int(sample) >> 3  // 13 bits
        let sign = s >= 0 ? 0x80 : 0
        if s < 0 { s = -s - 1 }
        s = min(s, 0xFFF)
        var code: Int
        if s < 32 {
            code = s >> 1
        } else {
            var exponent = 1
            while s >> (exponent + 4) > 1 && exponent < 7 { exponent += 1 }
            code = exponent << 4 | (s >> exponent) & 0x0F
        }
        return UInt8((sign | code) ^ 0x55)
    }
}

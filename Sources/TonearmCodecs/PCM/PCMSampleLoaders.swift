import TonearmCore

/// Reads one stored sample and converts it to a ``DecodedSample``. Each layout is its own
/// type, so the conversion loops are specialised per layout and per output type.
protocol PCMSampleLoader {
    /// Bytes that one sample takes.
    var width: Int { get }
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S
}

/// A container of one to four bytes, read as an unsigned value.
protocol RawContainer32 {
    static var width: Int { get }
    static func read(_ p: UnsafeRawPointer) -> UInt32
}

enum RawByte: RawContainer32 {
    static var width: Int { 1 }
    @inline(__always) static func read(_ p: UnsafeRawPointer) -> UInt32 { UInt32(p.load(as: UInt8.self)) }
}

enum RawLE16: RawContainer32 {
    static var width: Int { 2 }
    @inline(__always) static func read(_ p: UnsafeRawPointer) -> UInt32 { UInt32(UInt16(littleEndian: p.loadUnaligned(as: UInt16.self))) }
}

enum RawBE16: RawContainer32 {
    static var width: Int { 2 }
    @inline(__always) static func read(_ p: UnsafeRawPointer) -> UInt32 { UInt32(UInt16(bigEndian: p.loadUnaligned(as: UInt16.self))) }
}

enum RawLE24: RawContainer32 {
    static var width: Int { 3 }
    @inline(__always) static func read(_ p: UnsafeRawPointer) -> UInt32 {
        UInt32(UInt16(littleEndian: p.loadUnaligned(as: UInt16.self))) | UInt32(p.load(fromByteOffset: 2, as: UInt8.self)) &<< 16
    }
}

enum RawBE24: RawContainer32 {
    static var width: Int { 3 }
    @inline(__always) static func read(_ p: UnsafeRawPointer) -> UInt32 {
        UInt32(UInt16(bigEndian: p.loadUnaligned(as: UInt16.self))) &<< 8 | UInt32(p.load(fromByteOffset: 2, as: UInt8.self))
    }
}

enum RawLE32: RawContainer32 {
    static var width: Int { 4 }
    @inline(__always) static func read(_ p: UnsafeRawPointer) -> UInt32 { UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) }
}

enum RawBE32: RawContainer32 {
    static var width: Int { 4 }
    @inline(__always) static func read(_ p: UnsafeRawPointer) -> UInt32 { UInt32(bigEndian: p.loadUnaligned(as: UInt32.self)) }
}

/// An integer sample in a container of up to four bytes.
///
/// `shift` moves the significant bits to the top (32 minus their count) and drops whatever
/// lies above them in an aligned-low container; `flip` is the top bit for unsigned samples,
/// which turns offset binary into two's complement (8-bit unsigned minus 128).
struct JustifiedLoader32<R: RawContainer32>: PCMSampleLoader {
    let shift: UInt32
    let flip: UInt32
    var width: Int { R.width }
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        S.fromJustified(Int32(bitPattern: (R.read(p) &<< shift) ^ flip))
    }
}

/// An integer sample in a container of five to eight bytes, either byte order.
struct JustifiedLoader64: PCMSampleLoader {
    let width: Int
    let bigEndian: Bool
    let shift: UInt64
    let flip: UInt64
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        var raw: UInt64 = 0
        if bigEndian {
            for i in 0..<width { raw = raw &<< 8 | UInt64(p.load(fromByteOffset: i, as: UInt8.self)) }
        } else {
            for i in 0..<width { raw |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) &<< UInt64(8 &* i) }
        }
        return S.fromJustified(Int64(bitPattern: (raw &<< shift) ^ flip))
    }
}

struct Float32LELoader: PCMSampleLoader {
    var width: Int { 4 }
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        S.fromFloat(Float(bitPattern: UInt32(littleEndian: p.loadUnaligned(as: UInt32.self))))
    }
}

struct Float32BELoader: PCMSampleLoader {
    var width: Int { 4 }
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        S.fromFloat(Float(bitPattern: UInt32(bigEndian: p.loadUnaligned(as: UInt32.self))))
    }
}

struct Float64LELoader: PCMSampleLoader {
    var width: Int { 8 }
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        S.fromDouble(Double(bitPattern: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))))
    }
}

struct Float64BELoader: PCMSampleLoader {
    var width: Int { 8 }
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        S.fromDouble(Double(bitPattern: UInt64(bigEndian: p.loadUnaligned(as: UInt64.self))))
    }
}

/// One byte looked up in a 256-entry table of 16-bit samples (G.711).
struct TableLoader: PCMSampleLoader {
    let table: UnsafePointer<Int16>
    var width: Int { 1 }
    @inline(__always)
    func load<S: DecodedSample>(_ p: UnsafeRawPointer, as: S.Type) -> S {
        S.fromInt16(table[Int(p.load(as: UInt8.self))])
    }
}

/// How the samples of one decode call lie in memory.
struct PCMInputLayout {
    /// Bytes from channel c to channel c + 1 of one frame.
    var channelDistance: Int
    /// Bytes from frame f to frame f + 1 of one channel.
    var frameDistance: Int
}

/// The conversion loops shared by the PCM and G.711 decoders.
enum PCMConversion {
    /// The checks and the packet walk of a one-frame-per-packet decoder. `run(src, layout,
    /// frames, offset)` converts `frames` checked frames from `src` to `offset` frames after
    /// the output's valid ones; it is called once for contiguous input.
    ///
    /// Interleaved data holds the frames one after another, or where `descriptions` say
    /// (each exactly one frame). Non-interleaved data holds one plane per channel, each
    /// `packetCount × bytesPerSample` bytes; `descriptions` are then not used.
    static func decodeFrames(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                             into output: PCMBuffer, sampleFormat: PCMBuffer.CommonFormat, channels: Int,
                             bytesPerSample: Int, bytesPerFrame: Int, interleaved: Bool,
                             _ run: (UnsafeRawPointer, PCMInputLayout, Int, Int) -> Void) throws(AudioError)
    {
        guard packetCount >= 0 else { throw AudioError(.invalidInputSize, "a negative packet count (\(packetCount))") }
        try output.checkRoom(for: packetCount, channels: channels, sampleFormat: sampleFormat)
        guard packetCount > 0 else { return }
        if interleaved {
            let packets = try PacketLayout(data, packetCount: packetCount, descriptions: descriptions,
                                           bytesPerPacket: bytesPerFrame, allowsShortLastPacket: false)
            let frameLayout = PCMInputLayout(channelDistance: bytesPerSample, frameDistance: bytesPerFrame)
            if let descriptions {
                // Whole frames only; one run when they follow each other, else frame by frame.
                var contiguous = true
                let first = descriptions[0].startOffset
                for i in 0..<packetCount {
                    let d = descriptions[i]
                    guard d.dataByteSize == UInt32(bytesPerFrame) else {
                        throw AudioError(.invalidInputSize, "a packet of \(d.dataByteSize) bytes; frames have \(bytesPerFrame)")
                    }
                    if d.startOffset != first + Int64(i * bytesPerFrame) { contiguous = false }
                }
                if contiguous {
                    run(packets.packet(0).baseAddress!, frameLayout, packetCount, 0)
                } else {
                    for i in 0..<packetCount { run(packets.packet(i).baseAddress!, frameLayout, 1, i) }
                }
            } else {
                run(data.baseAddress!, frameLayout, packetCount, 0)
            }
        } else {
            let (plane, o1) = packetCount.multipliedReportingOverflow(by: bytesPerSample)
            let (all, o2) = plane.multipliedReportingOverflow(by: channels)
            guard !o1, !o2, all <= data.count else {
                throw AudioError(.invalidInputSize,
                                 "\(channels) planes of \(packetCount) frames need more than the \(data.count) bytes given")
            }
            run(data.baseAddress!, PCMInputLayout(channelDistance: plane, frameDistance: bytesPerSample), packetCount, 0)
        }
        output.frameLength += packetCount
    }

    /// Converts `frames` frames of `channels` channels from `src` into `out`. The caller
    /// has checked that every byte read and every sample written lies in bounds.
    @inline(__always)
    static func convert<L: PCMSampleLoader, S: DecodedSample>(_ loader: L, from src: UnsafeRawPointer, layout: PCMInputLayout,
                                                             frames: Int, channels: Int, into out: SampleWriter<S>)
    {
        let width = loader.width
        let contiguousIn = layout.channelDistance == width && layout.frameDistance == width &* channels
        let contiguousOut = out.channelDistance == 1 && out.stride == channels
        if (contiguousIn && contiguousOut) || (channels == 1 && layout.frameDistance == width && out.stride == 1) {
            // Interleaved to interleaved, or one channel: one flat run.
            flat(loader, from: src, count: frames &* channels, into: out.base)
            return
        }
        var done = 0
        #if _endian(little)
        if L.self == PackedS16LELoader.self && S.self == Float.self && channels == 2 && contiguousIn && out.stride == 1 {
            // Folded away by specialisation: interleaved s16 stereo into two Float planes.
            done = s16LEStereoToFloat(src, frames: frames, into: UnsafeMutableRawPointer(out.at(channel: 0, frame: 0)).assumingMemoryBound(to: Float.self),
                                      UnsafeMutableRawPointer(out.at(channel: 1, frame: 0)).assumingMemoryBound(to: Float.self))
        }
        #endif
        for c in 0..<channels {
            var s = src + c &* layout.channelDistance + done &* layout.frameDistance
            var d = out.at(channel: c, frame: done)
            let sStep = layout.frameDistance, dStep = out.stride
            for _ in done..<frames {
                d.pointee = loader.load(s, as: S.self)
                s += sStep
                d += dStep
            }
        }
    }

    @inline(__always)
    static func flat<L: PCMSampleLoader, S: DecodedSample>(_ loader: L, from src: UnsafeRawPointer, count: Int,
                                                          into dst: UnsafeMutablePointer<S>)
    {
        #if _endian(little)
        if L.self == PackedS16LELoader.self && S.self == Float.self {
            // Folded away by specialisation: only the s16 → f32 copy takes this branch.
            s16LEToFloat(src, count: count, into: UnsafeMutableRawPointer(dst).assumingMemoryBound(to: Float.self))
            return
        }
        #endif
        let width = loader.width
        for i in 0..<count { dst[i] = loader.load(src + i &* width, as: S.self) }
    }

    /// Interleaved s16 stereo into two planes, eight frames at a time (each frame one 32-bit
    /// lane: the low half is left, the high half right); returns the frames done, a multiple
    /// of eight. Each value is Float(sample) · 2^-15 exactly: the sample added to the pattern
    /// of 1.5 · 2²³, less that, is the sample.
    static func s16LEStereoToFloat(_ src: UnsafeRawPointer, frames: Int, into left: UnsafeMutablePointer<Float>,
                                   _ right: UnsafeMutablePointer<Float>) -> Int
    {
        let magicBits = SIMD8<Int32>(repeating: 0x4B40_0000), magic = SIMD8<Float>(repeating: 0x1.8p23)
        var i = 0
        while i &+ 8 <= frames {
            let v = (src + i &* 4).loadUnaligned(as: SIMD8<Int32>.self)
            let l = (v &<< 16) &>> 16, r = v &>> 16
            let fl = (unsafeBitCast(l &+ magicBits, to: SIMD8<Float>.self) - magic) * 0x1p-15
            let fr = (unsafeBitCast(r &+ magicBits, to: SIMD8<Float>.self) - magic) * 0x1p-15
            UnsafeMutableRawPointer(left + i).storeBytes(of: fl, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(right + i).storeBytes(of: fr, as: SIMD8<Float>.self)
            i &+= 8
        }
        return i
    }

    /// Eight samples at a time: widen, convert, scale by 2^-15 (exact).
    static func s16LEToFloat(_ src: UnsafeRawPointer, count: Int, into dst: UnsafeMutablePointer<Float>) {
        var i = 0
        while i &+ 8 <= count {
            let v = (src + i &* 2).loadUnaligned(as: SIMD8<Int16>.self)
            let f = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: v)) * 0x1p-15
            UnsafeMutableRawPointer(dst + i).storeBytes(of: f, as: SIMD8<Float>.self)
            i &+= 8
        }
        while i < count {
            dst[i] = Float(Int16(littleEndian: (src + i &* 2).loadUnaligned(as: Int16.self))) * 0x1p-15
            i &+= 1
        }
    }
}

import TonearmCore

/// A FLAC encoder (RFC 9639): a fixed block size stream, one packet per frame.
///
/// Each channel's subframe is the smallest the level's search finds among constant,
/// verbatim, fixed predictors (orders 0–4) and linear predictors (Levinson-Durbin over a
/// windowed autocorrelation), with wasted bits left out and the residual Rice-coded in the
/// best number of partitions (escaped partitions where plain values are smaller, 5-bit
/// parameters where they are needed). Stereo is coded as left/right, left/side, side/right
/// or mid/side, whichever is smallest.
///
/// | level | block | LPC order | partition order | stereo | windows |
/// |---|---|---|---|---|---|
/// | 0 | 1152 | fixed only | 3 | independent | |
/// | 1 | 1152 | fixed only | 3 | estimated | |
/// | 2 | 1152 | fixed only | 3 | tried | |
/// | 3 | 4096 | 6 | 4 | independent | Tukey(0.5) |
/// | 4 | 4096 | 8 | 4 | estimated | Tukey(0.5) |
/// | 5 | 4096 | 8 | 5 | tried | Tukey(0.5) |
/// | 6 | 4096 | 8 | 6 | tried | Tukey(0.5), two partial Tukeys |
/// | 7 | 4096 | 12 | 6 | tried | Tukey(0.5), two partial Tukeys |
/// | 8 | 4096 | 12 | 6 | tried | Tukey(0.5), two partial Tukeys, three punch-out Tukeys |
///
/// "Estimated" stereo picks the pair whose fixed-predictor residuals are smallest and codes
/// only that; "tried" codes all four channels and keeps the smallest pair.
///
/// Input is ``PCMBuffer`` Int32 samples justified to the top bits, as the decoders output
/// (Int16 buffers are taken too). Samples are hashed for STREAMINFO's MD5 as libFLAC does:
/// interleaved, ⌈bits/8⌉ little-endian bytes each.
public final class FLACEncoder: AudioEncoder {
    public var inputCommonFormat: PCMBuffer.CommonFormat { .int32 }
    public let outputFormat: StreamDescription
    public let framesPerPacket: Int
    public let maximumPacketSize: Int
    /// The compression level, 0 to 8.
    public let level: Int

    let channels: Int
    let bitsPerSample: Int
    let sampleRate: Int
    private let stereo: Stereo
    private let subframes: FLACSubframeEncoder

    enum Stereo { case independent, estimated, tried }

    /// The block's samples, channel c at c × framesPerPacket; for stereo, mid and side after.
    private var block: [Int64]
    private var pending = 0
    private var frameNumber: UInt64 = 0
    private var totalSamples: UInt64 = 0
    private var minimumFrameSize = Int.max
    private var maximumFrameSize = 0
    private var md5 = MD5()
    private var md5Bytes: [UInt8] = []
    private var writer = BitWriter()
    private var finished = false

    /// Makes an encoder for `channels` channels (1 to 8) of `bitsPerSample`-bit samples
    /// (4 to 32) at `sampleRate` Hz (a whole number, 1 to 1048575); 'fmt?' otherwise.
    public init(sampleRate: Double, channels: Int, bitsPerSample: Int, settings: EncoderSettings = .init()) throws(AudioError) {
        guard (1...8).contains(channels) else {
            throw AudioError(.unsupportedDataFormat, "FLAC holds 1 to 8 channels, not \(channels)")
        }
        guard (4...32).contains(bitsPerSample) else {
            throw AudioError(.unsupportedDataFormat, "FLAC holds 4 to 32 bits per sample, not \(bitsPerSample)")
        }
        guard sampleRate.isFinite, sampleRate >= 1, sampleRate <= 1_048_575, sampleRate.rounded() == sampleRate else {
            throw AudioError(.unsupportedDataFormat, "FLAC needs a whole sample rate from 1 to 1048575 Hz, not \(sampleRate)")
        }
        let level = settings.level ?? 5
        guard (0...8).contains(level) else {
            throw AudioError(.unsupportedDataFormat, "FLAC levels run from 0 to 8, not \(level)")
        }
        let (defaultBlock, search, stereo) = FLACEncoder.levelSettings(level)
        let blockSize = settings.blockSize ?? defaultBlock
        guard (16...65535).contains(blockSize) else {
            throw AudioError(.unsupportedDataFormat, "FLAC block sizes run from 16 to 65535, not \(blockSize)")
        }
        self.level = level
        self.channels = channels
        self.bitsPerSample = bitsPerSample
        self.sampleRate = Int(sampleRate)
        self.stereo = channels == 2 ? stereo : .independent
        framesPerPacket = blockSize
        subframes = FLACSubframeEncoder(blockSize: blockSize, search: search, slots: channels + (channels == 2 ? 2 : 0))
        block = [Int64](repeating: 0, count: (channels + (channels == 2 ? 2 : 0)) * blockSize)
        // A header, then every subframe verbatim (a side channel has one bit more), the
        // padding and the CRC-16: no subframe is chosen when it is larger than verbatim.
        maximumPacketSize = FLACFrameHeader.maximumLength + channels * (2 + ((bitsPerSample + 1) * blockSize + 7) / 8) + 2
        outputFormat = StreamDescription(
            sampleRate: sampleRate, formatID: .flac, formatFlags: AudioFormatFlags(rawValue: FLACEncoder.appleFlags(bitsPerSample)),
            bytesPerPacket: 0, framesPerPacket: UInt32(blockSize), bytesPerFrame: 0, channelsPerFrame: UInt32(channels),
            bitsPerChannel: UInt32(bitsPerSample))
        writer = BitWriter(reservingCapacity: maximumPacketSize)
    }

    /// The block size, search and stereo coding of a level.
    static func levelSettings(_ level: Int) -> (Int, FLACSearch, Stereo) {
        let tukey: [FLACLPC.Window] = [.tukey(0.5)]
        let partial: [FLACLPC.Window] = tukey + [.partialTukey(parts: 2, index: 0), .partialTukey(parts: 2, index: 1)]
        let punchout: [FLACLPC.Window] = partial + (0..<3).map { .punchoutTukey(parts: 3, index: $0) }
        switch level {
        case 0: return (1152, FLACSearch(maxLPCOrder: 0, maxPartitionOrder: 3, windows: [], orderCandidates: 0, fixedCandidates: 1), .independent)
        case 1: return (1152, FLACSearch(maxLPCOrder: 0, maxPartitionOrder: 3, windows: [], orderCandidates: 0, fixedCandidates: 1), .estimated)
        case 2: return (1152, FLACSearch(maxLPCOrder: 0, maxPartitionOrder: 3, windows: [], orderCandidates: 0, fixedCandidates: 1), .tried)
        case 3: return (4096, FLACSearch(maxLPCOrder: 6, maxPartitionOrder: 4, windows: tukey, orderCandidates: 1, fixedCandidates: 1), .independent)
        case 4: return (4096, FLACSearch(maxLPCOrder: 8, maxPartitionOrder: 4, windows: tukey, orderCandidates: 1, fixedCandidates: 1), .estimated)
        case 5: return (4096, FLACSearch(maxLPCOrder: 8, maxPartitionOrder: 5, windows: tukey, orderCandidates: 1, fixedCandidates: 1), .tried)
        case 6: return (4096, FLACSearch(maxLPCOrder: 8, maxPartitionOrder: 6, windows: partial, orderCandidates: 1, fixedCandidates: 1), .tried)
        case 7: return (4096, FLACSearch(maxLPCOrder: 12, maxPartitionOrder: 6, windows: partial, orderCandidates: 1, fixedCandidates: 2), .tried)
        default: return (4096, FLACSearch(maxLPCOrder: 12, maxPartitionOrder: 6, windows: punchout, orderCandidates: 1, fixedCandidates: 2), .tried)
        }
    }

    /// Apple's format flags for FLAC (the source depth, as for Apple Lossless).
    static func appleFlags(_ bits: Int) -> UInt32 {
        switch bits {
        case 16: 1
        case 20: 2
        case 24: 3
        case 32: 4
        default: 0
        }
    }

    // MARK: Cookie

    /// STREAMINFO (RFC 9639 §8.2) in Apple's cookie form, the body of an MP4 `dfLa` box:
    /// version and flags, the block header marked last, the 34 bytes.
    public var magicCookie: [UInt8] {
        var w = BitWriter(reservingCapacity: 42)
        w.write(0, bits: 32)
        w.write(0x80, bits: 8)
        w.write(34, bits: 24)
        w.write(UInt32(framesPerPacket), bits: 16)
        w.write(UInt32(framesPerPacket), bits: 16)
        w.write(UInt32(minimumFrameSize == .max ? 0 : minimumFrameSize), bits: 24)
        w.write(UInt32(maximumFrameSize), bits: 24)
        w.write(UInt32(sampleRate), bits: 20)
        w.write(UInt32(channels - 1), bits: 3)
        w.write(UInt32(bitsPerSample - 1), bits: 5)
        w.write64(totalSamples & 0xF_FFFF_FFFF, bits: 36)
        var bytes = w.takeBytes()
        bytes += finished ? md5.finalize() : [UInt8](repeating: 0, count: 16)
        return bytes
    }

    /// The MD5 of the samples taken so far.
    public var currentMD5: [UInt8] { md5.finalize() }

    // MARK: Encoding

    public func encode(_ input: PCMBuffer, into packets: inout [UInt8], descriptions: inout [PacketDescription]) throws(AudioError) {
        guard !finished else { throw AudioError(.codecState, "the FLAC encoder has finished") }
        guard input.channelCount == channels else {
            throw AudioError(.unsupportedDataFormat, "a \(input.channelCount)-channel buffer for a \(channels)-channel encoder")
        }
        guard input.commonFormat != .float32 else {
            throw AudioError(.unsupportedDataFormat, "the FLAC encoder takes Int32 (or Int16) samples, not Float32")
        }
        let n = input.frameLength, stride = input.stride, bs = framesPerPacket
        var taken = 0
        while taken < n {
            let take = min(bs - pending, n - taken)
            if input.commonFormat == .int32 {
                let shift = Int32(32 - bitsPerSample)
                input.withUnsafeMutableSamples(Int32.self) { p in
                    block.withUnsafeMutableBufferPointer { b in
                        for c in 0..<channels {
                            // The shift is 0 to 28, so the masking shift is exact.
                            var src = p.baseAddress! + input.channelStart(c) + taken * stride
                            let dst = b.baseAddress! + c * bs + pending
                            for i in 0..<take {
                                dst[i] = Int64(src.pointee &>> shift)
                                src += stride
                            }
                        }
                    }
                }
            } else {
                let bits = bitsPerSample
                input.withUnsafeMutableSamples(Int16.self) { p in
                    block.withUnsafeMutableBufferPointer { b in
                        for c in 0..<channels {
                            var src = input.channelStart(c) + taken * stride
                            let dst = c * bs + pending
                            for i in 0..<take {
                                let v = Int64(p[src])
                                b[dst + i] = bits <= 16 ? v >> Int64(16 - bits) : v << Int64(bits - 16)
                                src += stride
                            }
                        }
                    }
                }
            }
            pending += take
            taken += take
            if pending == bs { try emitFrame(into: &packets, descriptions: &descriptions) }
        }
    }

    public func finish(into packets: inout [UInt8], descriptions: inout [PacketDescription]) throws(AudioError) {
        guard !finished else { return }
        if pending > 0 { try emitFrame(into: &packets, descriptions: &descriptions) }
        finished = true
    }

    /// Codes the `pending` samples held as one frame and appends it.
    private func emitFrame(into packets: inout [UInt8], descriptions: inout [PacketDescription]) throws(AudioError) {
        let n = pending
        guard totalSamples + UInt64(n) <= 0xF_FFFF_FFFF else {
            throw AudioError(.codecState, "FLAC streams hold at most 2^36 − 1 samples per channel")
        }
        hashBlock(n)
        writer.removeAll()
        let bs = framesPerPacket
        var assignment = 0
        var plans: [FLACSubframePlan] = []
        var sources: [Int] = []  // each subframe's slot; its samples are at slot × block size in `block`
        var depths: [Int] = []
        block.withUnsafeMutableBufferPointer { bp in
            let b = bp.baseAddress!
            if channels == 2 && stereo != .independent {
                let left = b, right = b + bs, mid = b + 2 * bs, side = b + 3 * bs
                for i in 0..<n {
                    mid[i] = (left[i] &+ right[i]) >> 1
                    side[i] = left[i] &- right[i]
                }
                let bits = bitsPerSample
                // The pairs for assignments 1 (independent), 8 (left/side), 9 (side/right), 10 (mid/side).
                let pairs: [(Int, Int, Int)] = [(1, 0, 1), (8, 0, 3), (9, 3, 1), (10, 2, 3)]
                var candidates: [FLACSubframePlan?] = [nil, nil, nil, nil]
                if stereo == .estimated {
                    let cost = (0..<4).map { FLACEncoder.fixedCost(b + $0 * bs, n) }
                    let pick = pairs.min { cost[$0.1] + cost[$0.2] < cost[$1.1] + cost[$1.2] }!
                    for c in [pick.1, pick.2] {
                        candidates[c] = subframes.plan(b + c * bs, count: n, bits: bits + (c == 3 ? 1 : 0), slot: c)
                    }
                } else {
                    for c in 0..<4 { candidates[c] = subframes.plan(b + c * bs, count: n, bits: bits + (c == 3 ? 1 : 0), slot: c) }
                }
                var best = (assignment: 1, first: 0, second: 1, bits: Int.max)
                for (a, x, y) in pairs {
                    guard let p = candidates[x], let q = candidates[y] else { continue }
                    if p.bits + q.bits < best.bits { best = (a, x, y, p.bits + q.bits) }
                }
                assignment = best.assignment
                for c in [best.first, best.second] {
                    plans.append(candidates[c]!)
                    sources.append(c)
                    depths.append(bits + (c == 3 ? 1 : 0))
                }
            } else {
                assignment = channels - 1
                for c in 0..<channels {
                    plans.append(subframes.plan(b + c * bs, count: n, bits: bitsPerSample, slot: c))
                    sources.append(c)
                    depths.append(bitsPerSample)
                }
            }
        }
        writeHeader(blockSize: n, assignment: assignment)
        block.withUnsafeBufferPointer { bp in
            for (k, plan) in plans.enumerated() {
                subframes.write(plan, bp.baseAddress! + sources[k] * bs, count: n, bits: depths[k], slot: sources[k], to: &writer)
            }
        }
        // RFC 9639 §9.3: zero bits to the byte, then the CRC-16 of the whole frame.
        writer.alignToByte()
        let crc = writer.bytes.withUnsafeBytes { FLACCRC.crc16(0, $0.baseAddress!, count: $0.count) }
        writer.write(UInt32(crc), bits: 16)
        let frame = writer.takeBytes()
        descriptions.append(PacketDescription(startOffset: Int64(packets.count), variableFramesInPacket: UInt32(n),
                                              dataByteSize: UInt32(frame.count)))
        packets += frame
        minimumFrameSize = min(minimumFrameSize, frame.count)
        maximumFrameSize = max(maximumFrameSize, frame.count)
        totalSamples += UInt64(n)
        frameNumber += 1
        pending = 0
    }

    /// The sum of absolute second-order fixed residuals: a quick stand-in for a channel's
    /// coded size when choosing the stereo coding by estimate.
    static func fixedCost(_ x: UnsafePointer<Int64>, _ n: Int) -> Int64 {
        guard n > 2 else { return 0 }
        var sum: Int64 = 0
        for i in 2..<n { sum &+= abs(x[i] &- 2 &* x[i - 1] &+ x[i - 2]) }
        return sum
    }

    /// The frame header (RFC 9639 §9.1) with its CRC-8.
    private func writeHeader(blockSize n: Int, assignment: Int) {
        // Sync code, reserved bit, fixed block size strategy.
        writer.write(0xFFF8, bits: 16)
        var blockCode: UInt32
        switch n {
        case 192: blockCode = 1
        case 576, 1152, 2304, 4608: blockCode = 2 + UInt32((n / 576).trailingZeroBitCount)
        case 256, 512, 1024, 2048, 4096, 8192, 16384, 32768: blockCode = 8 + UInt32((n / 256).trailingZeroBitCount)
        default: blockCode = n <= 256 ? 6 : 7
        }
        var rateCode: UInt32
        let rate = sampleRate
        switch rate {
        case 88200: rateCode = 1
        case 176400: rateCode = 2
        case 192000: rateCode = 3
        case 8000: rateCode = 4
        case 16000: rateCode = 5
        case 22050: rateCode = 6
        case 24000: rateCode = 7
        case 32000: rateCode = 8
        case 44100: rateCode = 9
        case 48000: rateCode = 10
        case 96000: rateCode = 11
        default:
            if rate % 1000 == 0 && rate / 1000 <= 255 { rateCode = 12 }
            else if rate <= 65535 { rateCode = 13 }
            else if rate % 10 == 0 && rate / 10 <= 65535 { rateCode = 14 }
            else { rateCode = 0 }
        }
        let sizeCode: UInt32
        switch bitsPerSample {
        case 8: sizeCode = 1
        case 12: sizeCode = 2
        case 16: sizeCode = 4
        case 20: sizeCode = 5
        case 24: sizeCode = 6
        case 32: sizeCode = 7
        default: sizeCode = 0
        }
        writer.write(blockCode << 4 | rateCode, bits: 8)
        writer.write(UInt32(assignment) << 4 | sizeCode << 1, bits: 8)
        FLACEncoder.writeCodedNumber(frameNumber, to: &writer)
        if blockCode == 6 { writer.write(UInt32(n - 1), bits: 8) }
        if blockCode == 7 { writer.write(UInt32(n - 1), bits: 16) }
        switch rateCode {
        case 12: writer.write(UInt32(rate / 1000), bits: 8)
        case 13: writer.write(UInt32(rate), bits: 16)
        case 14: writer.write(UInt32(rate / 10), bits: 16)
        default: break
        }
        writer.alignToByte()
        let crc = writer.bytes.withUnsafeBytes { FLACCRC.crc8($0.baseAddress!, count: $0.count) }
        writer.write(UInt32(crc), bits: 8)
    }

    /// A frame number as UTF-8 codes a code point (RFC 9639 §9.1.5), up to 36 bits.
    static func writeCodedNumber(_ v: UInt64, to w: inout BitWriter) {
        if v < 0x80 {
            w.write(UInt32(v), bits: 8)
            return
        }
        // Continuation bytes carry 6 bits each; the lead byte has 6 − extra free bits.
        var extra = 1
        while extra < 6 && v >= UInt64(1) << UInt64(6 * extra + 6 - extra) { extra += 1 }
        let lead = UInt32((0xFF00 >> (extra + 1)) & 0xFF)
        w.write(lead | UInt32(truncatingIfNeeded: v >> UInt64(6 * extra)), bits: 8)
        for k in stride(from: extra - 1, through: 0, by: -1) {
            w.write(0x80 | UInt32(truncatingIfNeeded: (v >> UInt64(6 * k)) & 0x3F), bits: 8)
        }
    }

    /// Adds the block's first `n` samples to the MD5: interleaved, ⌈bits/8⌉ little-endian bytes each.
    private func hashBlock(_ n: Int) {
        let width = (bitsPerSample + 7) / 8, bs = framesPerPacket
        let count = n * channels * width
        if md5Bytes.count < count { md5Bytes = [UInt8](repeating: 0, count: count) }
        block.withUnsafeBufferPointer { b in
            md5Bytes.withUnsafeMutableBufferPointer { out in
                if width == 2 {
                    // The common case, two bytes a sample stored at once.
                    let raw = UnsafeMutableRawPointer(out.baseAddress!)
                    for c in 0..<channels {
                        let src = b.baseAddress! + c * bs
                        var o = 2 * c
                        for i in 0..<n {
                            raw.storeBytes(of: UInt16(truncatingIfNeeded: src[i]).littleEndian, toByteOffset: o, as: UInt16.self)
                            o &+= 2 * channels
                        }
                    }
                    return
                }
                var o = 0
                for i in 0..<n {
                    for c in 0..<channels {
                        let v = b[c * bs + i]
                        for k in 0..<width {
                            out[o] = UInt8(truncatingIfNeeded: v >> Int64(8 * k))
                            o += 1
                        }
                    }
                }
            }
        }
        md5Bytes.withUnsafeBytes { md5.update($0.baseAddress!, count: count) }
    }
}

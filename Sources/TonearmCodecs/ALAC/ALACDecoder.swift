import TonearmCore

/// Apple Lossless (ALAC), bit-exact against ffmpeg's decoder: 16, 20, 24 and 32 bits,
/// 1 to 8 channels, compressed frames (adaptive Golomb residuals, the adaptive FIR
/// predictor, mid/side unmixing, shifted-out low bytes), uncompressed frames and partial
/// frames. One packet is one frame.
///
/// The magic cookie is required: the 24-byte ALACSpecificConfig, alone or behind the
/// 'frma' and 'alac' atom headers of the older form (see ``ALACConfig``). Channels come out
/// in the order of the frame's elements, which is ALAC's channel order (Apple's ALAC
/// reference: mono; stereo; C L R; C L R Cs; C L R Ls Rs; C L R Ls Rs LFE;
/// C L R Ls Rs Cs LFE; C Lc Rc L R Ls Rs LFE), the order the containers' channel layouts
/// give. (ffmpeg reorders to its own layouts; the samples are the same.) Data stream and
/// fill elements are skipped, as Apple's decoder does (ffmpeg 5.1 refuses them); coupling
/// and program config elements, which ALAC never uses, are bad data. Prediction mode 15
/// runs the first-order predictor before the coded one; other non-zero modes decode as
/// mode 0, as in ffmpeg (Apple's decoder treats every non-zero mode as 15; no encoder
/// writes one).
///
/// Output follows ``DecodedSample``: Int32 samples are justified to the top bits, Int16
/// keeps the top 16, Float32 is the value scaled by 2^-(bits-1). A frame whose elements do
/// not parse, run out of bits, disagree on their length or do not fill the channels throws
/// 'bada'; a cookie the decoder cannot honour is refused with 'fmt?'.
public final class ALACDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public let maximumFramesPerPacket: Int

    /// ALAC's channel order for each channel count (the ALAC specification's layout tags:
    /// mono, stereo, MPEG 3.0 B, 4.0 B, 5.0 D, 5.1 D, AAC 6.1, MPEG 7.1 B).
    public var outputChannelLayout: ChannelLayout? {
        let c = ChannelLabel.center, l = ChannelLabel.left, r = ChannelLabel.right
        let ls = ChannelLabel.leftSurround, rs = ChannelLabel.rightSurround, lfe = ChannelLabel.lfeScreen
        switch Int(outputFormat.channelsPerFrame) {
        case 1: return ChannelLayout(tag: .mono)
        case 2: return ChannelLayout(tag: .stereo)
        case 3: return ChannelLayout(labels: [c, l, r])
        case 4: return ChannelLayout(labels: [c, l, r, .centerSurround])
        case 5: return ChannelLayout(labels: [c, l, r, ls, rs])
        case 6: return ChannelLayout(labels: [c, l, r, ls, rs, lfe])
        case 7: return ChannelLayout(labels: [c, l, r, ls, rs, .centerSurround, lfe])
        case 8: return ChannelLayout(labels: [c, .leftCenter, .rightCenter, l, r, ls, rs, lfe])
        default: return nil
        }
    }

    let config: ALACConfig
    let sampleFormat: PCMBuffer.CommonFormat

    /// One frame of samples per channel, channel c at c × frameLength, in stream order.
    private var samples: [Int32]
    /// The shifted-out low bits of the element being decoded, two channels' worth.
    private var lowBits: [UInt32]
    /// The packet being decoded, with 16 zero bytes after it for the Golomb reader's loads.
    private var packetBytes: [UInt8] = []
    /// The predictor coefficients of the element being decoded, 32 a channel, oldest tap first.
    private var coefficients = [Int32](repeating: 0, count: 64)

    public init(format: StreamDescription, magicCookie: [UInt8]?, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .appleLossless else {
            throw AudioError(.unsupportedDataFormat, "the ALAC decoder cannot decode \(format.formatID) data")
        }
        guard let magicCookie else {
            throw AudioError(.unsupportedDataFormat, "ALAC needs its magic cookie (the ALACSpecificConfig)")
        }
        let c = try ALACConfig(cookie: magicCookie)
        config = c
        sampleFormat = output
        maximumFramesPerPacket = c.frameLength
        var f = format
        f.channelsPerFrame = UInt32(c.channels)
        f.framesPerPacket = UInt32(c.frameLength)
        if f.formatFlags.rawValue == 0 {
            // Apple's kAppleLosslessFormatFlag_16/20/24/32BitSourceData.
            f.formatFlags = AudioFormatFlags(rawValue: [16: 1, 20: 2, 24: 3, 32: 4][c.bitDepth] ?? 0)
        }
        if f.sampleRate <= 0, c.sampleRate > 0 { f.sampleRate = Double(c.sampleRate) }
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: f.sampleRate, channels: UInt32(c.channels))
        samples = [Int32](repeating: 0, count: c.channels * c.frameLength)
        lowBits = [UInt32](repeating: 0, count: 2 * c.frameLength)
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .appleLossless else { return nil }
        return try ALACDecoder(format: format, magicCookie: cookie, output: output)
    }

    /// Frames do not depend on each other: nothing to forget.
    public func reset() {}

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions, codec: "ALAC")
        // The protocol's room: every packet may be a full frame. Frames are only counted
        // in when all packets have decoded, so a bad one leaves the output as it was.
        try output.checkRoom(for: packetCount * config.frameLength, channels: config.channels, sampleFormat: sampleFormat)
        var written = 0
        for k in 0..<packetCount {
            let n = try decodeFrame(layout.packet(k))
            switch sampleFormat {
            case .int16: output.withWriter(Int16.self) { emit(n, into: $0.advanced(by: written)) }
            case .float32: output.withWriter(Float.self) { emit(n, into: $0.advanced(by: written)) }
            case .int32: output.withWriter(Int32.self) { emit(n, into: $0.advanced(by: written)) }
            }
            written += n
        }
        output.frameLength += written
    }

    // MARK: Frames

    /// The element tags (Apple's ALAC reference, `ALACAudioTypes.h`; the AAC syntax's).
    private enum Element: UInt64 {
        case single = 0, pair = 1, coupling = 2, lfe = 3, dataStream = 4, programConfig = 5, fill = 6, end = 7
    }

    private func bad(_ why: String) -> AudioError { AudioError(.codecBadData, "ALAC frame: \(why)") }

    /// Decodes one frame into ``samples``; returns its length in samples per channel.
    private func decodeFrame(_ p: UnsafeRawBufferPointer) throws(AudioError) -> Int {
        let needed = p.count + 16
        if packetBytes.count < needed { packetBytes = [UInt8](repeating: 0, count: max(needed, 2 * packetBytes.count)) }
        packetBytes.withUnsafeMutableBytes { b in
            if let base = p.baseAddress { b.baseAddress!.copyMemory(from: base, byteCount: p.count) }
            b.baseAddress!.advanced(by: p.count).initializeMemory(as: UInt8.self, repeating: 0, count: 16)
        }
        var r = BitReader(packetBytes, byteOffset: 0, byteCount: p.count)
        var channel = 0
        var length: Int?
        while r.bitsRemaining >= 3 {
            let tag = Element(rawValue: r.read(3)!)!
            switch tag {
            case .end:
                guard channel == config.channels, let length else {
                    throw bad("\(channel) of \(config.channels) channels before the end element")
                }
                return length
            case .single, .lfe, .pair:
                let n = tag == .pair ? 2 : 1
                guard channel + n <= config.channels else {
                    throw bad("an element for channels beyond the \(config.channels) of the stream")
                }
                try decodeElement(&r, channels: n, first: channel, length: &length)
                channel += n
            case .dataStream:
                // Apple's reference: an instance tag, an alignment flag, a count (8 bits, then 8
                // more when 255), the optional alignment, then that many bytes.
                guard let fields = r.read(13) else { throw bad("a data stream element cut short") }
                var count = Int(fields & 0xFF)
                if count == 255 { guard let more = r.read(8) else { throw bad("a data stream element cut short") }; count += Int(more) }
                if fields & 0x100 != 0 { r.alignToByte() }
                guard r.skip(count * 8) else { throw bad("a data stream element of \(count) bytes runs past the frame") }
            case .fill:
                // A count of 4 bits, 15 meaning 14 plus 8 more bits, then that many bytes.
                guard let short = r.read(4) else { throw bad("a fill element cut short") }
                var count = Int(short)
                if count == 15 { guard let more = r.read(8) else { throw bad("a fill element cut short") }; count += Int(more) - 1 }
                guard r.skip(count * 8) else { throw bad("a fill element of \(count) bytes runs past the frame") }
            case .coupling, .programConfig:
                throw bad("an unsupported element (\(tag))")
            }
        }
        throw bad("no end element")
    }

    /// One single channel, LFE or channel pair element, into channels `first`..<`first + n`.
    private func decodeElement(_ r: inout BitReader, channels n: Int, first: Int, length: inout Int?) throws(AudioError) {
        // The instance tag (4), 12 unused bits, has-size (1), bytes shifted (2), not
        // compressed (1).
        guard let header = r.read(20) else { throw bad("an element header cut short") }
        let hasSize = header & 8 != 0
        let shiftBits = Int((header >> 1) & 3) * 8
        let compressed = header & 1 == 0
        // A pair's side channel has one bit more.
        let bits = config.bitDepth - shiftBits + n - 1
        guard bits >= 1, bits <= 32 else { throw bad("\(bits) bits per residual") }
        var count = config.frameLength
        if hasSize {
            guard let c = r.read(32) else { throw bad("an element header cut short") }
            guard c >= 1, c <= UInt64(config.frameLength) else {
                throw bad("\(c) samples in a frame of at most \(config.frameLength)")
            }
            count = Int(c)
        }
        if let length, length != count { throw bad("elements of \(length) and \(count) samples") }
        length = count
        let fl = config.frameLength

        guard compressed else {
            // Escape: every sample at full width, interleaved, no shift and no mixing.
            let width = config.bitDepth
            guard r.bitsRemaining >= count * n * width else { throw bad("an uncompressed element runs past the frame") }
            samples.withUnsafeMutableBufferPointer { s in
                for i in 0..<count {
                    for c in 0..<n { s[(first + c) * fl + i] = Int32(truncatingIfNeeded: r.readSigned(width)!) }
                }
            }
            return
        }
        guard config.riceLimit > 0 else { throw bad("a compressed element with a Rice limit of 0 in the cookie") }
        guard let mix = r.read(16) else { throw bad("an element header cut short") }
        let mixBits = Int(mix >> 8), mixRes = Int32(mix & 0xFF)
        if n == 2 && mixRes != 0 && mixBits > 31 { throw bad("a mix shift of \(mixBits)") }

        // Per channel: mode (4), quantisation (4), history factor (3), order (5), then the
        // coefficients, newest tap first; kept oldest first for the predictor.
        var modes = (0, 0), shifts = (0, 0), factors = (UInt32(0), UInt32(0)), orders = (0, 0)
        for c in 0..<n {
            guard let f = r.read(16) else { throw bad("a predictor header cut short") }
            let mode = Int(f >> 12), shift = Int((f >> 8) & 15), factor = UInt32((f >> 5) & 7), order = Int(f & 31)
            guard shift != 0, order < config.frameLength else { throw bad("a predictor of order \(order) and shift \(shift)") }
            guard r.bitsRemaining >= 16 * order else { throw bad("predictor coefficients cut short") }
            for j in 0..<order { coefficients[c * 32 + order - 1 - j] = Int32(r.readSigned(16)!) }
            if c == 0 { (modes.0, shifts.0, factors.0, orders.0) = (mode, shift, factor, order) }
            else { (modes.1, shifts.1, factors.1, orders.1) = (mode, shift, factor, order) }
        }
        if shiftBits > 0 {
            guard r.bitsRemaining >= count * n * shiftBits else { throw bad("shifted-out bits run past the frame") }
            lowBits.withUnsafeMutableBufferPointer { low in
                for i in 0..<count {
                    for c in 0..<n { low[c * fl + i] = UInt32(r.read(shiftBits)!) }
                }
            }
        }
        let config = config
        try samples.withUnsafeMutableBufferPointer { (s) throws(AudioError) in
            try coefficients.withUnsafeMutableBufferPointer { (coefs) throws(AudioError) in
                let bytes = r.bytes
                for c in 0..<n {
                    let out = s.baseAddress! + (first + c) * fl
                    var pos = r.bitPosition
                    let multiplier = (c == 0 ? factors.0 : factors.1) * config.historyMultiplier / 4
                    let ok = bytes.withUnsafeBufferPointer { b in
                        ALACGolomb.decode(b.baseAddress!, position: &pos, end: r.bitPosition + r.bitsRemaining, into: out,
                                          count: count, bits: bits, multiplier: multiplier,
                                          initial: config.initialHistory, limit: config.riceLimit)
                    }
                    guard ok else { throw bad("residuals run past the frame") }
                    r.skip(pos - r.bitPosition)
                    // Mode 15 runs the first-order predictor before the coded one (ffmpeg's
                    // reading; Apple's encoder writes only mode 0). Other modes decode as 0.
                    if (c == 0 ? modes.0 : modes.1) == 15 { ALACPredictor.firstOrder(out, count: count, bits: bits) }
                    let order = c == 0 ? orders.0 : orders.1
                    if order == 31 {
                        ALACPredictor.firstOrder(out, count: count, bits: bits)
                    } else {
                        ALACPredictor.run(out, count: count, bits: bits, coefficients: coefs.baseAddress! + c * 32,
                                          order: order, shift: c == 0 ? shifts.0 : shifts.1)
                    }
                }
            }
            let a = s.baseAddress! + first * fl
            if n == 2 && mixRes != 0 {
                // Apple's unmix: the first channel holds the weighted mid, the second the side.
                let b = a + fl, shift = Int32(mixBits)
                for i in 0..<count {
                    let u = a[i], v = b[i]
                    let right = u &- ((v &* mixRes) &>> shift)
                    a[i] = right &+ v
                    b[i] = right
                }
            }
            if shiftBits > 0 {
                let shift = Int32(shiftBits)
                lowBits.withUnsafeBufferPointer { low in
                    for c in 0..<n {
                        let d = a + c * fl, l = low.baseAddress! + c * fl
                        for i in 0..<count { d[i] = (d[i] &<< shift) | Int32(bitPattern: l[i]) }
                    }
                }
            }
        }
    }

    /// Writes `n` decoded frames, justified to the top of an Int32.
    private func emit<S: DecodedSample>(_ n: Int, into out: SampleWriter<S>) {
        let shift = Int32(32 - config.bitDepth), fl = config.frameLength
        samples.withUnsafeBufferPointer { s in
            for c in 0..<config.channels {
                var d = out.at(channel: c, frame: 0)
                let src = s.baseAddress! + c * fl
                for i in 0..<n {
                    d.pointee = S.fromJustified(src[i] &<< shift)
                    d += out.stride
                }
            }
        }
    }
}

import TonearmCore

/// IMA ADPCM as WAV stores it ('ms' 0x00 0x11, WAVE_FORMAT_DVI_ADPCM / IMA_ADPCM).
///
/// A block starts with a 4-byte header per channel: the first sample as little-endian
/// 16 bits, the step index, and a reserved zero byte. Codes follow in groups of 4 bytes
/// (8 samples, low nibble first) per channel, the channels' groups interleaved. A block
/// of `b` bytes holds 1 + (b − 4c) / 4c · 8 frames; `framesPerPacket`, or the fmt chunk's
/// wSamplesPerBlock in the magic cookie, may lower that.
///
/// The last block of a file may be cut short: it decodes to the frames its whole groups
/// hold, as FFmpeg's `adpcm_ima_wav` does.
public final class DVIIntelIMADecoder: ADPCMBlockDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public var maximumFramesPerPacket: Int { framesPerBlock }
    let channels: Int
    let bytesPerBlock: Int
    let sampleFormat: PCMBuffer.CommonFormat
    var decodesShortBlocks: Bool { true }
    private let framesPerBlock: Int

    /// - Parameter magicCookie: the WAV fmt chunk body, when the container has one; it
    ///   supplies the block size and the frames per block when the description lacks them.
    public init(format: StreamDescription, magicCookie: [UInt8]? = nil, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .dviIntelIMA else {
            throw AudioError(.unsupportedDataFormat, "the IMA ADPCM decoder cannot decode \(format.formatID) data")
        }
        let ch = Int(format.channelsPerFrame)
        guard ch > 0, ch <= Int(maximumDecoderChannels) else {
            throw AudioError(.unsupportedDataFormat, "IMA ADPCM with \(ch) channels")
        }
        guard format.bitsPerChannel == 4 || format.bitsPerChannel == 0 else {
            throw AudioError(.unsupportedDataFormat, "\(format.bitsPerChannel)-bit IMA ADPCM (only 4-bit is supported)")
        }
        let cookie = WAVEFormatCookie(magicCookie)
        let header = 4 * ch
        var block = Int(format.bytesPerPacket)
        if block == 0, let align = cookie?.blockAlign { block = align }
        if block == 0, format.framesPerPacket > 0, (format.framesPerPacket - 1) % 8 == 0 {
            block = header + Int(format.framesPerPacket - 1) / 8 * header
        }
        guard block >= header, block <= 1 << 24 else {
            throw AudioError(.unsupportedDataFormat, "IMA ADPCM blocks of \(block) bytes for \(ch) channels")
        }
        let computed = 1 + (block - header) / header * 8
        var frames = Int(format.framesPerPacket)
        if frames == 0, let spb = cookie?.samplesPerBlock, spb > 0, spb <= computed { frames = spb }
        if frames == 0 { frames = computed }
        guard frames <= computed else {
            throw AudioError(.unsupportedDataFormat, "\(frames) frames do not fit IMA ADPCM blocks of \(block) bytes")
        }
        var f = format
        f.bytesPerPacket = UInt32(block)
        f.framesPerPacket = UInt32(frames)
        f.bitsPerChannel = 4
        inputFormat = f
        channels = ch
        bytesPerBlock = block
        framesPerBlock = frames
        sampleFormat = output
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: format.channelsPerFrame)
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .dviIntelIMA else { return nil }
        return try DVIIntelIMADecoder(format: format, magicCookie: cookie, output: output)
    }

    public func reset() {}

    func validate(_ block: UnsafeRawBufferPointer) throws(AudioError) {
        guard block.count >= 4 * channels else {
            throw AudioError(.codecBadData, "an IMA ADPCM block of \(block.count) bytes is shorter than its \(4 * channels)-byte header")
        }
        for c in 0..<channels {
            // The step index is read as 16 bits, so a reserved byte that is not zero is as bad
            // as an index above 88 (FFmpeg rejects both).
            guard block[4 * c + 2] <= UInt8(IMAADPCM.maximumStepIndex), block[4 * c + 3] == 0 else {
                throw AudioError(.codecBadData, "IMA ADPCM step index \(block[4 * c + 2]) (\(block[4 * c + 3])) in channel \(c)")
            }
        }
    }

    func frames(inBlockOf size: Int) -> Int {
        let header = 4 * channels
        return min(1 + (size - header) / header * 8, framesPerBlock)
    }

    func decodeBlock<S: DecodedSample>(_ block: UnsafeRawBufferPointer, frames: Int, into out: SampleWriter<S>) {
        let tables = IMAADPCM.tables
        let differences = tables.multiply, nextRow = tables.nextRow
        let base = block.baseAddress!
        let groupDistance = 4 &* channels
        let fullGroups = (frames &- 1) / 8, rest = (frames &- 1) % 8
        let stride = out.stride
        for c in 0..<channels {
            var s = IMAChannelState(predictor: Int32(base.int16LE(at: 4 &* c)), stepIndex: Int32(base.byte(at: 4 &* c &+ 2)))
            var d = out.at(channel: c, frame: 0)
            d.pointee = S.fromInt16(Int16(truncatingIfNeeded: s.predictor))
            d += stride
            var g = base + (groupDistance &+ 4 &* c)
            for _ in 0..<fullGroups {
                for k in 0..<4 {
                    let byte = g.byte(at: k)
                    d.pointee = S.fromInt16(s.expand(byte & 0x0F, differences, nextRow))
                    d += stride
                    d.pointee = S.fromInt16(s.expand(byte &>> 4, differences, nextRow))
                    d += stride
                }
                g += groupDistance
            }
            // Only when framesPerPacket stops short of a whole group.
            for j in 0..<rest {
                let byte = g.byte(at: j &>> 1)
                d.pointee = S.fromInt16(s.expand(j & 1 == 0 ? byte & 0x0F : byte &>> 4, differences, nextRow))
                d += stride
            }
        }
    }
}

/// The fields of a WAVEFORMATEX (a WAV fmt chunk body) that ADPCM decoders use, read from
/// a magic cookie. Every field is optional, as the cookie may be short.
struct WAVEFormatCookie {
    var blockAlign: Int?
    var samplesPerBlock: Int?
    /// wNumCoef pairs of MS ADPCM coefficients, when the cookie carries them whole.
    var coefficients: [(Int, Int)]?

    init?(_ bytes: [UInt8]?) {
        guard let bytes, bytes.count >= 14 else { return nil }
        func u16(_ o: Int) -> Int? { o + 2 <= bytes.count ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : nil }
        blockAlign = u16(12)
        let extra = u16(16) ?? 0
        guard extra >= 2, let spb = u16(18) else { return }
        samplesPerBlock = spb
        // MS ADPCM: wNumCoef, then the pairs (WAVEFORMATEX §ADPCMWAVEFORMAT).
        guard extra >= 4, let count = u16(20), count > 0, 22 + 4 * count <= bytes.count else { return }
        coefficients = (0..<count).map { i in
            let o = 22 + 4 * i
            return (Int(Int16(bitPattern: UInt16(u16(o)!))), Int(Int16(bitPattern: UInt16(u16(o + 2)!))))
        }
    }
}

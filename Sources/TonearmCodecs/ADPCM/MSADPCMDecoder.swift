import TonearmCore

/// Microsoft ADPCM ('ms' 0x00 0x02, WAVE_FORMAT_ADPCM).
///
/// Mono and stereo blocks are Microsoft's: for each channel in turn a predictor index
/// (1 byte), then the initial delta, the second and the first history sample (16 bits
/// each, little-endian, field by field across the channels); the two history samples are
/// the block's first two frames, oldest first. Codes follow high nibble first, the
/// channels alternating code by code. A block of `b` bytes holds (b − 6c) · 2 / c frames.
///
/// With more than two channels there is no Microsoft layout; FFmpeg's is used, which
/// stores each channel's header and codes as one run after the other.
///
/// The predictor coefficients come from the magic cookie (the WAV fmt chunk body:
/// WAVEFORMATEX, wSamplesPerBlock, wNumCoef, then the pairs) when it has them, and are
/// otherwise the standard seven. (FFmpeg always uses the standard seven; files whose
/// cookie holds the standard table, as every encoder writes, decode identically.)
///
/// The last block of a file may be cut short; it decodes to the frames it holds.
public final class MSADPCMDecoder: ADPCMBlockDecoder {
    /// The seven predictor coefficient pairs every MS ADPCM encoder writes, in 1/256ths.
    public static let standardCoefficients: [(Int, Int)] = [
        (256, 0), (512, -256), (0, 0), (192, 64), (240, 0), (460, -208), (392, -232),
    ]
    /// The delta adaptation factor for each code, in 1/256ths.
    static let adaptation: [Int] = [230, 230, 230, 230, 307, 409, 512, 614, 768, 614, 512, 409, 307, 230, 230, 230]

    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public var maximumFramesPerPacket: Int { framesPerBlock }
    let channels: Int
    let bytesPerBlock: Int
    let sampleFormat: PCMBuffer.CommonFormat
    var decodesShortBlocks: Bool { true }
    private let framesPerBlock: Int
    private let coefficients: [(Int, Int)]

    public init(format: StreamDescription, magicCookie: [UInt8]? = nil, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .microsoftADPCM else {
            throw AudioError(.unsupportedDataFormat, "the MS ADPCM decoder cannot decode \(format.formatID) data")
        }
        let ch = Int(format.channelsPerFrame)
        guard ch > 0, ch <= Int(maximumDecoderChannels) else {
            throw AudioError(.unsupportedDataFormat, "MS ADPCM with \(ch) channels")
        }
        guard format.bitsPerChannel == 4 || format.bitsPerChannel == 0 else {
            throw AudioError(.unsupportedDataFormat, "\(format.bitsPerChannel)-bit MS ADPCM")
        }
        let cookie = WAVEFormatCookie(magicCookie)
        var block = Int(format.bytesPerPacket)
        if block == 0, let align = cookie?.blockAlign { block = align }
        if block == 0, format.framesPerPacket >= 2 {
            block = 7 * ch + (Int(format.framesPerPacket) - 2) * ch / 2 + (ch == 1 ? Int(format.framesPerPacket) & 1 : 0)
        }
        guard block >= 7 * ch, block <= 1 << 24 else {
            throw AudioError(.unsupportedDataFormat, "MS ADPCM blocks of \(block) bytes for \(ch) channels")
        }
        self.channels = ch
        let computed = MSADPCMDecoder.framesIn(size: block, channels: ch)
        var frames = Int(format.framesPerPacket)
        if frames == 0, let spb = cookie?.samplesPerBlock, spb >= 2, spb <= computed { frames = spb }
        if frames == 0 { frames = computed }
        guard frames >= 2, frames <= computed else {
            throw AudioError(.unsupportedDataFormat, "\(frames) frames do not fit MS ADPCM blocks of \(block) bytes")
        }
        coefficients = cookie?.coefficients ?? MSADPCMDecoder.standardCoefficients
        var f = format
        f.bytesPerPacket = UInt32(block)
        f.framesPerPacket = UInt32(frames)
        f.bitsPerChannel = 4
        inputFormat = f
        bytesPerBlock = block
        framesPerBlock = frames
        sampleFormat = output
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: format.channelsPerFrame)
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .microsoftADPCM else { return nil }
        return try MSADPCMDecoder(format: format, magicCookie: cookie, output: output)
    }

    public func reset() {}

    /// Frames in a block of `size` ≥ 7c bytes: (size − 6c) · 2 / c, made even when each
    /// channel's codes are stored apart (more than two channels).
    private static func framesIn(size: Int, channels: Int) -> Int {
        let n = (size - 6 * channels) * 2 / channels
        return channels > 2 ? 2 + (n - 2) / 2 * 2 : n
    }

    /// Where channel `c`'s header starts, and the distance between header fields.
    @inline(__always)
    private func headerLayout(channel c: Int, blockSize: Int) -> (start: Int, field: Int) {
        if channels <= 2 { return (c, channels) }
        let n = (blockSize - 6 * channels) * 2 / channels
        return (c * (7 + (n - 2) / 2), 1)
    }

    func validate(_ block: UnsafeRawBufferPointer) throws(AudioError) {
        guard block.count >= 7 * channels else {
            throw AudioError(.codecBadData, "an MS ADPCM block of \(block.count) bytes is shorter than its \(7 * channels)-byte header")
        }
        for c in 0..<channels {
            let index = Int(block[headerLayout(channel: c, blockSize: block.count).start])
            guard index < coefficients.count else {
                throw AudioError(.codecBadData, "MS ADPCM predictor \(index) in channel \(c); there are \(coefficients.count)")
            }
        }
    }

    func frames(inBlockOf size: Int) -> Int { min(MSADPCMDecoder.framesIn(size: size, channels: channels), framesPerBlock) }

    func decodeBlock<S: DecodedSample>(_ block: UnsafeRawBufferPointer, frames: Int, into out: SampleWriter<S>) {
        let base = block.baseAddress!
        let stride = out.stride
        Self.adaptation.withUnsafeBufferPointer { adaptation in
            if channels <= 2 {
                // Header fields are arrays across the channels; codes alternate between them.
                let ch = channels
                var states = (MSChannelState(), MSChannelState())
                for c in 0..<ch {
                    let s = readState(base, predictorAt: c, fieldsAt: ch + 2 * c, fieldDistance: 2 * ch)
                    if c == 0 { states.0 = s } else { states.1 = s }
                    out.at(channel: c, frame: 0).pointee = S.fromInt16(Int16(truncatingIfNeeded: s.sample2))
                    out.at(channel: c, frame: 1).pointee = S.fromInt16(Int16(truncatingIfNeeded: s.sample1))
                }
                let codes = (frames - 2) * ch
                var p = base + 7 * ch
                var d0 = out.at(channel: 0, frame: 2), d1 = out.at(channel: ch - 1, frame: ch == 1 ? 3 : 2)
                let step = ch == 1 ? 2 * stride : stride
                var k = 0
                while k + 1 < codes {
                    let byte = p.load(as: UInt8.self)
                    d0.pointee = S.fromInt16(states.0.expand(byte &>> 4, adaptation))
                    if ch == 1 {
                        d1.pointee = S.fromInt16(states.0.expand(byte & 0x0F, adaptation))
                    } else {
                        d1.pointee = S.fromInt16(states.1.expand(byte & 0x0F, adaptation))
                    }
                    d0 += step
                    d1 += step
                    p += 1
                    k += 2
                }
                if k < codes {
                    // Mono with an odd frame count from framesPerPacket: half a byte.
                    d0.pointee = S.fromInt16(states.0.expand(p.load(as: UInt8.self) &>> 4, adaptation))
                }
            } else {
                let perChannel = headerLayout(channel: 1, blockSize: block.count).start
                for c in 0..<channels {
                    let start = c * perChannel
                    var s = readState(base, predictorAt: start, fieldsAt: start + 1, fieldDistance: 2)
                    var d = out.at(channel: c, frame: 0)
                    d.pointee = S.fromInt16(Int16(truncatingIfNeeded: s.sample2))
                    d += stride
                    d.pointee = S.fromInt16(Int16(truncatingIfNeeded: s.sample1))
                    d += stride
                    var p = base + start + 7
                    var j = 2
                    while j < frames {
                        let byte = p.load(as: UInt8.self)
                        d.pointee = S.fromInt16(s.expand(byte &>> 4, adaptation))
                        d += stride
                        if j + 1 < frames {
                            d.pointee = S.fromInt16(s.expand(byte & 0x0F, adaptation))
                            d += stride
                        }
                        p += 1
                        j += 2
                    }
                }
            }
        }
    }

    /// A channel's state from its header: predictor index at `predictorAt`, then delta,
    /// first and second history sample `fieldDistance` bytes apart from `fieldsAt`.
    @inline(__always)
    private func readState(_ base: UnsafeRawPointer, predictorAt: Int, fieldsAt: Int, fieldDistance: Int) -> MSChannelState {
        let (c1, c2) = coefficients[Int(base.byte(at: predictorAt))]
        return MSChannelState(coefficient1: c1, coefficient2: c2,
                              delta: Int(base.int16LE(at: fieldsAt)),
                              sample1: Int(base.int16LE(at: fieldsAt + fieldDistance)),
                              sample2: Int(base.int16LE(at: fieldsAt + 2 * fieldDistance)))
    }
}

/// One channel of an MS ADPCM block.
struct MSChannelState {
    var coefficient1 = 0, coefficient2 = 0
    var delta = 0
    /// The last and the one-before-last sample.
    var sample1 = 0, sample2 = 0

    /// The largest delta that cannot overflow 32 bits when adapted (FFmpeg clamps it here).
    static let maximumDelta = Int(Int32.max) / 768

    @inline(__always)
    mutating func expand(_ code: UInt8, _ adaptation: UnsafeBufferPointer<Int>) -> Int16 {
        let signed = Int(Int8(bitPattern: code &<< 4) &>> 4)
        // Division truncates toward zero, as the reference decoder's C does.
        let predicted = (sample1 &* coefficient1 &+ sample2 &* coefficient2) / 256 &+ signed &* delta
        let sample = min(max(predicted, -32768), 32767)
        sample2 = sample1
        sample1 = sample
        delta = max(min((adaptation[Int(code)] &* delta) &>> 8, Self.maximumDelta), 16)
        return Int16(truncatingIfNeeded: sample)
    }
}

import TonearmCore

/// Vorbis I (the Xiph.Org specification): floors 0 and 1, residues 0, 1 and 2, channel
/// coupling, block switching with the spec's windows, 1 to 255 channels, in Vorbis order
/// (``outputChannelLayout`` names it for 3 to 8 channels).
///
/// The magic cookie is the three header packets in Xiph lacing, as Ogg's parser and
/// Matroska's CodecPrivate give them. One packet is one Vorbis audio packet; it decodes to
/// (previous block + this block) / 4 frames, and the first packet after the start or a
/// ``reset()`` to none (its first half only primes the overlap), as Ogg's parser counts
/// them. The exception is a first packet whose description counts the frames of a
/// continuous decode (a file's packet table, read again after a seek): it decodes to that
/// many, with silence for the unknown previous block, so that the frames the file layer
/// skips for the preroll are there to skip. Start and end trimming are the file's
/// (granule positions), not the decoder's.
///
/// Output is Float32 as computed (the IMDCT unscaled, as libvorbis and FFmpeg's float
/// decoder), or Int16/Int32 by ``DecodedSample``'s rounding.
///
/// Damage: a packet that ends early is decoded as §4.3 and §8.6.2 say (what was read,
/// the rest zero); a packet that is not an audio packet or names a missing mode decodes to
/// nothing and leaves the state alone, as the parser counts it, and is counted in
/// ``concealedPackets``. A setup header that asks for impossible or absurd tables fails
/// the decoder's creation with 'bada'.
public final class VorbisDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public let maximumFramesPerPacket: Int
    public let outputChannelLayout: ChannelLayout?
    public private(set) var concealedPackets = 0
    public var seekPrerollPackets: Int { 1 }

    let setup: VorbisSetupHeader
    let channels: Int
    let sampleFormat: PCMBuffer.CommonFormat
    let modeBits: Int
    /// Block size of the previous packet; nil at the start and after a reset.
    var previousBlockSize: Int?

    let packetBuffer = VorbisPacketBuffer()
    let residueScratch = VorbisResidueScratch()
    let synthesis: VorbisSynthesis
    /// Per channel, half a long block of floats: the spectrum being decoded.
    let spectrum: UnsafeMutablePointer<Float>
    let spectrumPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Per channel, floor 1's final Y values and step-2 flags (65 each), or floor 0's
    /// amplitude and coefficients (256).
    let floorY: UnsafeMutablePointer<Int32>
    let floorUsed: UnsafeMutablePointer<Bool>
    let floor0Coefficients: UnsafeMutablePointer<Float>
    var floor0Amplitudes: [Int]
    /// Per channel: whether its floor is used, and whether its residue is not decoded.
    let channelUsed: UnsafeMutablePointer<Bool>
    let noResidue: UnsafeMutablePointer<Bool>
    let bundleFlags: UnsafeMutablePointer<Bool>
    let bundleVectors: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    public init(format: StreamDescription, magicCookie: [UInt8]?, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .vorbis else {
            throw AudioError(.unsupportedDataFormat, "the Vorbis decoder cannot decode \(format.formatID) data")
        }
        guard let magicCookie else { throw AudioError(.unsupportedDataFormat, "Vorbis needs its header packets as the magic cookie") }
        let s = try VorbisSetupHeader(cookie: magicCookie)
        setup = s
        channels = s.channels
        sampleFormat = output
        modeBits = vorbisILog(s.modes.count - 1)
        maximumFramesPerPacket = s.blockSizes.1 / 2
        var f = format
        f.sampleRate = Double(s.sampleRate)
        f.channelsPerFrame = UInt32(s.channels)
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: Double(s.sampleRate), channels: UInt32(s.channels))
        outputChannelLayout = ChannelLayout.vorbisOrder(channels: s.channels)
        synthesis = VorbisSynthesis(blockSizes: s.blockSizes, channels: s.channels)

        let half = s.blockSizes.1 / 2
        spectrum = .allocate(capacity: channels * half)
        spectrum.initialize(repeating: 0, count: channels * half)
        spectrumPointers = .allocate(capacity: channels)
        for c in 0..<channels { (spectrumPointers + c).initialize(to: spectrum + c * half) }
        floorY = .allocate(capacity: channels * VorbisFloor1.maximumValues)
        floorY.initialize(repeating: 0, count: channels * VorbisFloor1.maximumValues)
        floorUsed = .allocate(capacity: channels * VorbisFloor1.maximumValues)
        floorUsed.initialize(repeating: false, count: channels * VorbisFloor1.maximumValues)
        floor0Coefficients = .allocate(capacity: channels * 256)
        floor0Coefficients.initialize(repeating: 0, count: channels * 256)
        floor0Amplitudes = [Int](repeating: 0, count: channels)
        channelUsed = .allocate(capacity: channels)
        channelUsed.initialize(repeating: false, count: channels)
        noResidue = .allocate(capacity: channels)
        noResidue.initialize(repeating: false, count: channels)
        bundleFlags = .allocate(capacity: channels)
        bundleFlags.initialize(repeating: false, count: channels)
        bundleVectors = .allocate(capacity: channels)
        bundleVectors.initialize(repeating: spectrum, count: channels)
    }

    deinit {
        spectrum.deallocate()
        spectrumPointers.deallocate()
        floorY.deallocate()
        floorUsed.deallocate()
        floor0Coefficients.deallocate()
        channelUsed.deallocate()
        noResidue.deallocate()
        bundleFlags.deallocate()
        bundleVectors.deallocate()
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .vorbis else { return nil }
        return try VorbisDecoder(format: format, magicCookie: cookie, output: output)
    }

    public func reset() {
        previousBlockSize = nil
    }

    /// The previous block's size that makes a packet of `size` decode to `frames`, when the
    /// decoder has no previous block (the start, a reset) but the packet's description, from
    /// a file's packet table, counts the frames of a continuous decode: a seek's preroll
    /// packet. Its output is then what a decode from the start gives, but for the part the
    /// unknown previous block overlaps, so the frame count agrees with the table that the
    /// file layer skips by. Nil when the description says 0 (the start of the stream, or a
    /// parser that counted the reset as Ogg's does) or names no block size.
    func assumedPrevious(frames: Int, size: Int) -> Int? {
        guard frames > 0 else { return nil }
        let p = 4 * (frames - size / 4)
        return p == setup.blockSizes.0 || p == setup.blockSizes.1 ? p : nil
    }

    /// The mode of an audio packet (§4.3.1), or nil when it is not one.
    func mode(of p: UnsafeRawBufferPointer) -> VorbisSetupHeader.Mode? {
        guard p.count > 0, p[0] & 1 == 0 else { return nil }
        var value = 0
        for i in 0..<modeBits {
            let position = 1 + i
            guard position >> 3 < p.count else { return nil }
            value |= Int(p[position >> 3] >> UInt8(position & 7) & 1) << i
        }
        return value < setup.modes.count ? setup.modes[value] : nil
    }

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions, codec: "Vorbis")
        // The frames first, so that a buffer too small leaves everything untouched.
        var previous = previousBlockSize
        var total = 0
        // Only the first audio packet can follow no block: every one after follows it.
        var assumed: (packet: Int, previous: Int)?
        for i in 0..<layout.count {
            guard let m = mode(of: layout.packet(i)) else { continue }
            let size = m.isLong ? setup.blockSizes.1 : setup.blockSizes.0
            if let previous {
                total += previous / 4 + size / 4
            } else if let d = descriptions?[i], let p = assumedPrevious(frames: Int(d.variableFramesInPacket), size: size) {
                assumed = (i, p)
                total += Int(d.variableFramesInPacket)
            }
            previous = size
        }
        try output.checkRoom(for: total, channels: channels, sampleFormat: sampleFormat)
        var written = 0
        for i in 0..<layout.count {
            let p = layout.packet(i)
            guard p.count > 0 else { continue }
            guard let m = mode(of: p) else {
                concealedPackets += 1
                continue
            }
            if let a = assumed, a.packet == i {
                // The block before the one decoded first is unknown: its overlap is silence.
                synthesis.clearOverlap()
                previousBlockSize = a.previous
            }
            switch sampleFormat {
            case .float32: written += output.withWriter(Float.self) { decodePacket(p, mode: m, into: $0.advanced(by: written)) }
            case .int16: written += output.withWriter(Int16.self) { decodePacket(p, mode: m, into: $0.advanced(by: written)) }
            case .int32: written += output.withWriter(Int32.self) { decodePacket(p, mode: m, into: $0.advanced(by: written)) }
            }
        }
        output.frameLength += written
    }
}

import TonearmCore

/// FLAC (RFC 9639), bit-exact: every subframe type, Rice and Rice2 residuals with escape
/// partitions, every stereo decorrelation, 4 to 32 bits per sample, 1 to 8 channels and
/// variable block sizes. One packet is one frame.
///
/// The magic cookie is Apple's (a `dfLa` box body: version and flags, then the STREAMINFO
/// block with its header); a bare STREAMINFO or a "fLaC" stream head also works. Without
/// one, the stream description's channels and bits, and blocks up to 65535 samples.
///
/// Output follows ``DecodedSample``: Int32 samples are justified to the top bits, Int16
/// keeps the top 16, Float32 is the value scaled by 2^-(bits-1). A frame whose header or
/// CRC-16 is wrong, or whose subframes do not fit it, throws 'bada'. A frame's own bit depth
/// is followed (the output is justified, so a stream that changes depth plays at the right
/// level); a frame with another channel count or sample rate than the stream's throws 'fmt?'
/// before anything of its packet is written, as `flac -d` stops there: one stream
/// description cannot carry such a change.
///
/// With ``verifiesMD5`` set, the decoder hashes what it decodes as libFLAC does (each
/// frame's samples at its bit depth, little-endian, interleaved), and ``md5Matches`` tells
/// whether it is STREAMINFO's MD5.
public final class FLACDecoder: AudioDecoder {
    public let inputFormat: StreamDescription
    public let outputFormat: StreamDescription
    public let maximumFramesPerPacket: Int
    /// STREAMINFO's MD5 of the decoded audio, nil when the cookie has none (or all zeros).
    public let streamMD5: [UInt8]?

    /// Whether decoding hashes the samples for ``md5Matches``. Setting it starts a new hash.
    public var verifiesMD5 = false {
        didSet { resetMD5() }
    }

    let channels: Int
    let bitsPerSample: Int
    let sampleFormat: PCMBuffer.CommonFormat

    /// One block of decoded samples per channel (8 × maximumFramesPerPacket); Int64 because
    /// a side channel of 32-bit audio has 33 bits.
    private var samples: [Int64]
    /// The residual of one subframe.
    private var residual: [Int32]
    /// One frame of little-endian samples for the MD5.
    private var md5Bytes: [UInt8] = []
    /// The packets of one decode call, their headers, and the bytes of the frame being
    /// decoded: kept for their storage.
    private var packets: [UnsafeRawBufferPointer] = []
    private var headers: [FLACFrameHeader] = []
    private var frameBytes: [UInt8] = []
    private var md5 = MD5()
    private var md5Broken = false

    public init(format: StreamDescription, magicCookie: [UInt8]? = nil, output: PCMBuffer.CommonFormat) throws(AudioError) {
        guard format.formatID == .flac else {
            throw AudioError(.unsupportedDataFormat, "the FLAC decoder cannot decode \(format.formatID) data")
        }
        var ch = Int(format.channelsPerFrame), bits = Int(format.bitsPerChannel), maxBlock = 65535
        var md5: [UInt8]?
        if let info = magicCookie.flatMap(FLACDecoder.streamInfo).map(Array.init) {
            let packed = info[10..<18].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            ch = Int((packed >> 41) & 7) + 1
            bits = Int((packed >> 36) & 31) + 1
            let m = Int(info[2]) << 8 | Int(info[3])
            if m >= 16 { maxBlock = m }
            let digest = Array(info[18..<34])
            if digest.contains(where: { $0 != 0 }) { md5 = digest }
        }
        guard ch >= 1, ch <= 8 else { throw AudioError(.unsupportedDataFormat, "FLAC with \(ch) channels") }
        guard bits >= 4, bits <= 32 else { throw AudioError(.unsupportedDataFormat, "FLAC with \(bits) bits per sample") }
        channels = ch
        bitsPerSample = bits
        maximumFramesPerPacket = maxBlock
        streamMD5 = md5
        sampleFormat = output
        var f = format
        f.channelsPerFrame = UInt32(ch)
        f.bitsPerChannel = UInt32(bits)
        inputFormat = f
        outputFormat = .decoderOutput(output, sampleRate: format.sampleRate, channels: UInt32(ch))
        samples = [Int64](repeating: 0, count: 8 * maxBlock)
        residual = [Int32](repeating: 0, count: maxBlock)
    }

    static func make(_ format: StreamDescription, _ cookie: [UInt8]?, _ output: PCMBuffer.CommonFormat) throws(AudioError) -> AudioDecoder? {
        guard format.formatID == .flac else { return nil }
        return try FLACDecoder(format: format, magicCookie: cookie, output: output)
    }

    /// The 34 STREAMINFO bytes of a cookie: Apple's (version, flags, block header,
    /// STREAMINFO), a stream head ("fLaC", block header, STREAMINFO), or STREAMINFO alone.
    static func streamInfo(_ c: [UInt8]) -> ArraySlice<UInt8>? {
        if c.count >= 42 && (c[0..<4] == [0x66, 0x4C, 0x61, 0x43] || (c[4] & 0x7F == 0 && c[5] == 0 && c[6] == 0 && c[7] == 34)) {
            return c[8..<42]
        }
        return c.count == 34 ? c[0..<34] : nil
    }

    public func reset() {
        // A seek makes the running MD5 meaningless.
        if verifiesMD5 { md5Broken = true }
    }

    private func resetMD5() {
        md5 = MD5()
        md5Broken = false
    }

    /// Whether the samples decoded since ``verifiesMD5`` was set hash to STREAMINFO's MD5;
    /// nil when there is nothing to compare (no MD5 in STREAMINFO, hashing off, or a
    /// ``reset()`` since).
    public var md5Matches: Bool? {
        guard verifiesMD5, !md5Broken, let streamMD5 else { return nil }
        return md5.finalize() == streamMD5
    }

    /// The MD5 of the samples decoded since ``verifiesMD5`` was set.
    public var decodedMD5: [UInt8] { md5.finalize() }

    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        // Frames have no fixed size: without descriptions, the bytes are one frame.
        let layout = try PacketLayout(variableSize: data, packetCount: packetCount, descriptions: descriptions, codec: "FLAC")
        // Into arrays kept from call to call, so that steady decoding allocates nothing.
        packets.removeAll(keepingCapacity: true)
        headers.removeAll(keepingCapacity: true)
        for i in 0..<layout.count { packets.append(layout.packet(i)) }
        // Check every header first so that a bad frame leaves the output untouched.
        var total = 0
        for i in 0..<packets.count {
            let p = packets[i]
            guard let base = p.baseAddress, case .header(let h) = FLACFrameHeader.parse(base, count: p.count) else {
                throw AudioError(.codecBadData, "a FLAC frame of \(p.count) bytes does not start with a valid frame header")
            }
            guard h.channels == channels else {
                throw AudioError(.unsupportedDataFormat, "the FLAC stream changes from \(channels) to \(h.channels) channels mid-stream")
            }
            guard h.sampleRate == 0 || inputFormat.sampleRate == 0 || Double(h.sampleRate) == inputFormat.sampleRate else {
                throw AudioError(.unsupportedDataFormat,
                                 "the FLAC stream changes its sample rate from \(StreamDescription.formatRate(inputFormat.sampleRate)) to \(h.sampleRate) Hz mid-stream")
            }
            guard h.blockSize <= maximumFramesPerPacket else {
                throw AudioError(.codecBadData, "a FLAC frame of \(h.blockSize) samples; STREAMINFO allows \(maximumFramesPerPacket)")
            }
            guard p.count >= h.length + 2, FLACCRC.crc16(0, p.baseAddress!, count: p.count) == 0 else {
                throw AudioError(.codecBadData, "a FLAC frame of \(p.count) bytes fails its CRC-16")
            }
            headers.append(h)
            total += h.blockSize
        }
        try output.checkRoom(for: total, channels: channels, sampleFormat: sampleFormat)
        var written = 0
        for i in 0..<packets.count {
            let h = headers[i]
            let bits = try decodeFrame(packets[i], header: h)
            switch sampleFormat {
            case .int16: output.withWriter(Int16.self) { emit(h, bits: bits, into: $0.advanced(by: written)) }
            case .float32: output.withWriter(Float.self) { emit(h, bits: bits, into: $0.advanced(by: written)) }
            case .int32: output.withWriter(Int32.self) { emit(h, bits: bits, into: $0.advanced(by: written)) }
            }
            if verifiesMD5 { hash(h, bits: bits) }
            written += h.blockSize
        }
        output.frameLength += total
    }

    // MARK: Frames

    /// Decodes a frame's subframes into ``samples`` (channel c at c × maximumFramesPerPacket)
    /// and undoes the stereo decorrelation; returns the frame's bits per sample.
    private func decodeFrame(_ p: UnsafeRawBufferPointer, header h: FLACFrameHeader) throws(AudioError) -> Int {
        let bits = h.bitsPerSample == 0 ? bitsPerSample : h.bitsPerSample
        // Bits up to the CRC-16; the header is already checked.
        frameBytes.removeAll(keepingCapacity: true)
        frameBytes.append(contentsOf: p)
        var r = BitReader(frameBytes, byteOffset: h.length, byteCount: p.count - 2 - h.length)
        let n = h.blockSize, stride = maximumFramesPerPacket
        try samples.withUnsafeMutableBufferPointer { (s) throws(AudioError) in
            try residual.withUnsafeMutableBufferPointer { (res) throws(AudioError) in
                for c in 0..<h.channels {
                    // RFC 9639 §9.2: the side channel has one bit more.
                    let side = (h.channelAssignment == 8 && c == 1) || (h.channelAssignment == 9 && c == 0)
                        || (h.channelAssignment == 10 && c == 1)
                    try FLACSubframe.decode(&r, into: s.baseAddress! + c * stride, count: n,
                                            bits: bits + (side ? 1 : 0), residual: res.baseAddress!)
                }
                let a = s.baseAddress!, b = a + stride
                switch h.channelAssignment {
                case 8:  // left, side: right = left − side
                    for i in 0..<n { b[i] = a[i] &- b[i] }
                case 9:  // side, right: left = side + right
                    for i in 0..<n { a[i] = a[i] &+ b[i] }
                case 10:  // mid, side
                    for i in 0..<n {
                        let side = b[i]
                        let mid = a[i] &<< 1 | (side & 1)
                        a[i] = (mid &+ side) &>> 1
                        b[i] = (mid &- side) &>> 1
                    }
                default: break
                }
            }
        }
        // RFC 9639 §9.3: zero padding to the byte, then the CRC-16 (checked already).
        r.alignToByte()
        return bits
    }

    /// Writes the decoded block, justified to the top of an Int32.
    private func emit<S: DecodedSample>(_ h: FLACFrameHeader, bits: Int, into out: SampleWriter<S>) {
        let n = h.blockSize, shift = Int64(32 - bits), stride = maximumFramesPerPacket
        let present = min(h.channels, channels)
        samples.withUnsafeBufferPointer { s in
            for c in 0..<channels {
                var d = out.at(channel: c, frame: 0)
                if c < present {
                    let src = s.baseAddress! + c * stride
                    for i in 0..<n {
                        d.pointee = S.fromJustified(Int32(truncatingIfNeeded: src[i] &<< shift))
                        d += out.stride
                    }
                } else {
                    for _ in 0..<n {
                        d.pointee = S.fromJustified(Int32(0))
                        d += out.stride
                    }
                }
            }
        }
    }

    /// Adds a frame to the MD5 as libFLAC does: interleaved, ⌈bits/8⌉ bytes a sample,
    /// little-endian, every channel the frame has.
    private func hash(_ h: FLACFrameHeader, bits: Int) {
        let width = (bits + 7) / 8, ch = h.channels, n = h.blockSize, stride = maximumFramesPerPacket
        let count = n * ch * width
        if md5Bytes.count < count { md5Bytes = [UInt8](repeating: 0, count: count) }
        samples.withUnsafeBufferPointer { s in
            md5Bytes.withUnsafeMutableBufferPointer { out in
                var o = 0
                for i in 0..<n {
                    for c in 0..<ch {
                        let v = s[c * stride + i]
                        for k in 0..<width {
                            out[o] = UInt8(truncatingIfNeeded: v &>> Int64(8 * k))
                            o += 1
                        }
                    }
                }
            }
        }
        md5Bytes.withUnsafeBytes { md5.update($0.baseAddress!, count: count) }
    }
}

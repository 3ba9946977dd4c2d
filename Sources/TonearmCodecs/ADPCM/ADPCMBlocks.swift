import TonearmCore

/// A block-based ADPCM decoder: every packet is one self-contained block (bar the state
/// Apple IMA4 carries between packets). The shared `decode` checks everything first, so a
/// damaged packet throws before any sample is written.
protocol ADPCMBlockDecoder: AudioDecoder {
    var channels: Int { get }
    /// The size of a full block.
    var bytesPerBlock: Int { get }
    var sampleFormat: PCMBuffer.CommonFormat { get }
    /// Whether a block cut short (the end of a file) is decoded for what it holds.
    var decodesShortBlocks: Bool { get }
    /// Checks a block's size and header; throws 'bada' when it cannot be decoded.
    func validate(_ block: UnsafeRawBufferPointer) throws(AudioError)
    /// Frames in a block of `size` bytes that passed ``validate(_:)``.
    func frames(inBlockOf size: Int) -> Int
    /// Decodes a validated block of `frames` frames.
    func decodeBlock<S: DecodedSample>(_ block: UnsafeRawBufferPointer, frames: Int, into out: SampleWriter<S>)
}

extension ADPCMBlockDecoder {
    public func decode(_ data: UnsafeRawBufferPointer, packetCount: Int, descriptions: [PacketDescription]?,
                       into output: PCMBuffer) throws(AudioError)
    {
        let packets = try PacketLayout(data, packetCount: packetCount, descriptions: descriptions,
                                       bytesPerPacket: bytesPerBlock, allowsShortLastPacket: decodesShortBlocks)
        var total = 0
        for i in 0..<packets.count {
            let block = packets.packet(i)
            try validate(block)
            total += frames(inBlockOf: block.count)
        }
        try output.checkRoom(for: total, channels: channels, sampleFormat: sampleFormat)
        switch sampleFormat {
        case .int16: output.withWriter(Int16.self) { decodeAll(packets, $0) }
        case .float32: output.withWriter(Float.self) { decodeAll(packets, $0) }
        case .int32: output.withWriter(Int32.self) { decodeAll(packets, $0) }
        }
        output.frameLength += total
    }

    private func decodeAll<S: DecodedSample>(_ packets: PacketLayout, _ writer: SampleWriter<S>) {
        var written = 0
        for i in 0..<packets.count {
            let block = packets.packet(i)
            let n = frames(inBlockOf: block.count)
            decodeBlock(block, frames: n, into: writer.advanced(by: written))
            written += n
        }
    }
}

/// Tables and arithmetic of IMA ADPCM (IMA Digital Audio Focus and Technical Working
/// Group, "Recommended Practices for Enhancing Digital Audio Compatibility in Multimedia
/// Systems", rev. 3.00, 1992).
enum IMAADPCM {
    /// The quantiser step sizes, indexed 0...88 (the Recommended Practice's table).
    static let steps: [Int32] = [
        7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45,
        50, 55, 60, 66, 73, 80, 88, 97, 107, 118, 130, 143, 157, 173, 190, 209, 230, 253, 279, 307,
        337, 371, 408, 449, 494, 544, 598, 658, 724, 796, 876, 963, 1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066,
        2272, 2499, 2749, 3024, 3327, 3660, 4026, 4428, 4871, 5358, 5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487, 12635, 13899,
        15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767,
    ]

    static let maximumStepIndex: Int32 = 88

    /// The step index change for a code: −1 for magnitudes 0–3, then +2, +4, +6, +8.
    static func indexAdjustment(_ code: Int) -> Int {
        let magnitude = code & 7
        return magnitude < 4 ? -1 : 2 * (magnitude - 3)
    }

    /// The decoder's arithmetic as tables, one row of 16 codes per step index, so that a
    /// sample costs two loads, an add and a clamp, with no branch to mispredict.
    struct Tables {
        /// The signed difference for (index, code), built from the code bits as the
        /// Recommended Practice's decoder does: step/8 + step·b2 + step/2·b1 + step/4·b0.
        /// Apple's IMA4 decoder and FFmpeg's `adpcm_ima_qt` use this form.
        let bitwise: UnsafePointer<Int32>
        /// The same difference computed as ((2·magnitude + 1)·step) / 8, which rounds
        /// differently in its low bit. FFmpeg's `adpcm_ima_wav` decodes WAV IMA ADPCM this
        /// way, so the WAV decoder does too, to match it bit for bit.
        let multiply: UnsafePointer<Int32>
        /// 16 × the next step index for (index, code), clamped to 0...88: the next row.
        let nextRow: UnsafePointer<UInt16>
    }

    nonisolated(unsafe) static let tables: Tables = {
        let rows = Int(maximumStepIndex) + 1
        let bitwise = UnsafeMutablePointer<Int32>.allocate(capacity: rows * 16)
        let multiply = UnsafeMutablePointer<Int32>.allocate(capacity: rows * 16)
        let nextRow = UnsafeMutablePointer<UInt16>.allocate(capacity: rows * 16)
        for index in 0..<rows {
            let step = steps[index]
            for code in 0..<16 {
                var b = step >> 3
                if code & 4 != 0 { b += step }
                if code & 2 != 0 { b += step >> 1 }
                if code & 1 != 0 { b += step >> 2 }
                let m = ((2 * Int32(code & 7) + 1) * step) >> 3
                let negative = code & 8 != 0
                bitwise[index * 16 + code] = negative ? -b : b
                multiply[index * 16 + code] = negative ? -m : m
                nextRow[index * 16 + code] = UInt16(min(max(index + indexAdjustment(code), 0), rows - 1) * 16)
            }
        }
        return Tables(bitwise: UnsafePointer(bitwise), multiply: UnsafePointer(multiply), nextRow: UnsafePointer(nextRow))
    }()
}

/// One channel's IMA predictor and step index (kept as its table row, 16 × the index).
struct IMAChannelState {
    var predictor: Int32 = 0
    var row: Int = 0

    init() {}

    init(predictor: Int32, stepIndex: Int32) {
        self.predictor = predictor
        row = Int(stepIndex) &* 16
    }

    var stepIndex: Int32 { Int32(truncatingIfNeeded: row &>> 4) }

    /// Expands one 4-bit code with a difference table of ``IMAADPCM/Tables``.
    @inline(__always)
    mutating func expand(_ code: UInt8, _ differences: UnsafePointer<Int32>, _ nextRow: UnsafePointer<UInt16>) -> Int16 {
        let k = row &+ Int(code)
        predictor = clampToInt16(predictor &+ differences[k])
        row = Int(nextRow[k])
        return Int16(truncatingIfNeeded: predictor)
    }
}

@inline(__always)
func clampToInt16(_ x: Int32) -> Int32 { min(max(x, -32768), 32767) }

/// Reading little-endian header fields from a checked block.
extension UnsafeRawPointer {
    @inline(__always) func int16LE(at offset: Int) -> Int16 { Int16(littleEndian: loadUnaligned(fromByteOffset: offset, as: Int16.self)) }
    @inline(__always) func byte(at offset: Int) -> UInt8 { load(fromByteOffset: offset, as: UInt8.self) }
}

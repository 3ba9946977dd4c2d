import TonearmCore
import TonearmCodecs

/// Dither added before samples are rounded to fewer bits (Apple's converter leaves it off).
public enum DitherAlgorithm: Sendable, Hashable {
    /// Plain rounding to nearest.
    case none
    /// Triangular (TPDF) dither of ±1 LSB of the output, from a fixed-seed generator per
    /// channel, so a conversion gives the same bytes every time and in chunks of any size.
    case tpdf
}

/// Converts audio of one format into another, as Apple's `AudioConverter`: seed 002's
/// pipeline of decoding, sample-format conversion and resampling, in one object.
///
/// The stages, each present only when needed:
///
/// 1. **Decode** packets through ``CodecRegistry`` (linear PCM of any layout is a
///    "decoder" too), or take ``PCMBuffer``s.
/// 2. **Trim**: drop ``framesToSkip`` decoded frames (an encoder's priming), then pass at
///    most ``framesToKeep`` (the valid frames), so gapless output is sample-exact. Setting
///    ``packetTableInfo`` sets both.
/// 3. **Channels** through a ``ChannelMixer``: ``channelMap`` (Apple's ChannelMap), a
///    reorder or standard mix between ``inputChannelLayout`` and ``outputChannelLayout``, or,
///    when the counts differ and no layout is given, the standard mix between the default
///    layouts (mono ↔ stereo, 5.1 → stereo…).
/// 4. **Resample** with a ``Resampler`` when the rates differ, at
///    ``sampleRateConverterComplexity`` and ``sampleRateConverterQuality``.
/// 5. **Dither** (``dither``) when integer output has fewer bits than the source.
/// 6. **Encode** the samples in the output format with ``PCMEncoder``.
///
/// Without mixing, resampling or dither, samples stay integers where the output is
/// integer, so PCM and lossless input convert exactly; otherwise the stages work on planar
/// Float32.
///
/// Set properties before the first conversion; changing one later restarts the pipeline as
/// ``reset()`` does. ``prepare()`` checks them and throws 'fmt?' or 'prop' for a combination
/// the converter cannot do, so a caller can fail before writing anything.
///
/// Apple's two shapes are both here:
/// - push: ``convert(packets:count:descriptions:into:)`` for packets, ``convert(_:)`` for
///   PCM buffers, then ``finish(into:)`` / ``finish()`` for what the resampler still holds;
/// - pull: ``fillComplexBuffer(frames:into:input:)``, which asks an input callback for
///   packets as `AudioConverterFillComplexBuffer` does.
///
/// The output does not depend on how the input is cut: any sequence of chunks gives the
/// same bytes as the whole input at once.
public final class AudioConverter {
    public let inputFormat: StreamDescription
    /// The output format; a sample rate of 0 given to `init` becomes the input's.
    public let outputFormat: StreamDescription
    /// The bytes the byte-returning calls give: ``outputFormat``, interleaved. A planar
    /// output format is for the ``PCMBuffer`` calls, which de-interleave.
    public let outputBytesFormat: StreamDescription
    public let magicCookie: [UInt8]?

    /// Apple's ChannelMap: for each output channel, the input channel it takes, or -1 for silence.
    public var channelMap: [Int]? { didSet { invalidate() } }
    /// The input's channel layout, when known (a file's 'chan').
    public var inputChannelLayout: ChannelLayout? { didSet { invalidate() } }
    /// The order the decoded channels come in: the decoder's own when its codec fixes one
    /// (ALAC), else ``inputChannelLayout``.
    public private(set) var sourceChannelLayout: ChannelLayout?
    /// The wanted output channel layout; with ``inputChannelLayout``, a reorder or mix between them.
    public var outputChannelLayout: ChannelLayout? { didSet { invalidate() } }
    /// Apple's SampleRateConverterComplexity: 'line', 'norm' (the default) or 'bats'.
    public var sampleRateConverterComplexity: SampleRateConverterComplexity = .normal { didSet { invalidate() } }
    /// Apple's SampleRateConverterQuality, 0 to 127 (0x60, High, by default).
    public var sampleRateConverterQuality: Int = 0x60 { didSet { invalidate() } }
    /// Dither when integer output keeps fewer bits than the source has.
    public var dither: DitherAlgorithm = .none { didSet { invalidate() } }

    /// Decoded frames still to drop before output starts (an encoder's priming).
    public var framesToSkip: Int64 = 0
    /// Decoded frames still to pass on, after the skipped ones; nil passes all.
    public var framesToKeep: Int64?
    /// Sets ``framesToSkip`` and ``framesToKeep`` from a file's packet table: the priming is
    /// dropped and only the valid frames are kept.
    public var packetTableInfo: PacketTableInfo? {
        didSet {
            framesToSkip = Int64(max(0, packetTableInfo?.primingFrames ?? 0))
            framesToKeep = packetTableInfo.flatMap { $0.numberValidFrames > 0 ? $0.numberValidFrames : nil }
        }
    }
    /// Decoded frames that reached trimming since the converter was made, whether dropped or
    /// passed on; nil after ``reset()``, when they no longer count from the stream's start.
    public private(set) var decodedFramesSinceStart: Int64? = 0

    /// Trims by a packet table that arrives while the stream is decoded (a live Ogg link
    /// announces its priming at its first audio page and its length at its last): the frames
    /// decoded so far count against the priming and the valid frames. With no valid-frame
    /// count (0) the frames still to keep stay as they are. Does nothing after ``reset()``:
    /// the table counts from the stream's start, which the converter no longer knows.
    /// - Returns: whether the table was applied.
    @discardableResult
    public func updateTrimming(from table: PacketTableInfo) -> Bool {
        guard let decoded = decodedFramesSinceStart else { return false }
        let priming = Int64(max(0, table.primingFrames))
        framesToSkip = max(0, priming - decoded)
        if table.numberValidFrames > 0 {
            framesToKeep = max(0, table.numberValidFrames - max(0, decoded - priming))
        }
        return true
    }

    private var stages: Stages?
    /// Output bytes made but not yet taken by `fillComplexBuffer`.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var inputEnded = false

    /// Makes a converter (`AudioConverterNew`). Throws 'fmt?' when no decoder takes the
    /// input or the output is not a format ``PCMEncoder`` writes, or the channel counts differ
    /// with no standard mix between them.
    public init(from input: StreamDescription, to output: StreamDescription, magicCookie: [UInt8]? = nil) throws(AudioError) {
        guard PCMEncoder.canEncode(output) else {
            throw AudioError(.unsupportedDataFormat, "cannot encode \(output.formatID) data")
        }
        guard input.sampleRate > 0 || output.sampleRate == 0 || output.sampleRate == input.sampleRate else {
            throw AudioError(.inputSampleRateOutOfRange, "the input has no sample rate")
        }
        inputFormat = input
        var out = output
        if out.sampleRate == 0 { out.sampleRate = input.sampleRate }
        outputFormat = out
        var bytes = out
        if !out.isInterleaved && out.isPCM {
            bytes.formatFlags.remove(.isNonInterleaved)
            bytes.bytesPerFrame = out.bytesPerSample * out.channelsPerFrame
            bytes.bytesPerPacket = bytes.bytesPerFrame
        }
        outputBytesFormat = bytes
        self.magicCookie = magicCookie
        try prepare()
    }

    // MARK: Pipeline

    /// The stages, built from the properties when first needed.
    private final class Stages {
        let decoder: AudioDecoder
        /// Decoded (or loaded) frames: planar Float32 when `usesFloat`, else the decoder's
        /// integer or float type, interleaved.
        let decoded: PCMBuffer
        let usesFloat: Bool
        let mixer: ChannelMixer?
        /// The mixer's output: as many frames as the stage before it gives at once.
        let mixed: PCMBuffer?
        let resampler: Resampler?
        /// The resampler's output for one slice of input.
        let resampled: PCMBuffer?
        /// Input frames the resampler takes at a time, so that an upsampled slice stays small.
        let sliceFrames: Int
        /// Mix before resampling (when mixing lowers the channel count), else after.
        let mixFirst: Bool
        let ditherBits: Int?
        var ditherState: [UInt32]
        let chunkPackets: Int
        var finished = false
        /// Channel pointers for the resampler, allocated once.
        let inputPointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: ChannelMixer.maximumChannels)
        let outputPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: ChannelMixer.maximumChannels)

        deinit {
            inputPointers.deallocate()
            outputPointers.deallocate()
        }

        init(decoder: AudioDecoder, decoded: PCMBuffer, usesFloat: Bool, mixer: ChannelMixer?, resampler: Resampler?,
             ditherBits: Int?, chunkPackets: Int)
        {
            self.decoder = decoder
            self.decoded = decoded
            self.usesFloat = usesFloat
            self.mixer = mixer
            self.resampler = resampler
            self.ditherBits = ditherBits
            self.chunkPackets = chunkPackets
            let inCh = decoded.channelCount, outCh = mixer?.outputChannels ?? inCh
            let mixFirst = outCh <= inCh
            self.mixFirst = mixFirst
            let cap = decoded.frameCapacity
            if let resampler {
                let ratio = resampler.outputRate / resampler.inputRate
                sliceFrames = max(1, min(cap, Int(65536 / max(1, ratio.rounded(.up)))))
                let outCap = max(resampler.maximumOutputFrames(forInputFrames: sliceFrames), 1)
                resampled = PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: mixFirst ? outCh : inCh,
                                      interleaved: false, frameCapacity: outCap)
                mixed = mixer.map {
                    PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: $0.outputChannels, interleaved: false,
                              frameCapacity: mixFirst ? cap : outCap)
                }
            } else {
                sliceFrames = cap
                resampled = nil
                mixed = mixer.map {
                    PCMBuffer(commonFormat: .float32, sampleRate: 0, channels: $0.outputChannels, interleaved: false, frameCapacity: cap)
                }
            }
            ditherState = (0..<outCh).map { UInt32(0x9E37_79B9) &+ UInt32($0) &* 0x85EB_CA6B }
        }
    }

    private func invalidate() {
        concealedEarlier += stages?.decoder.concealedPackets ?? 0
        stages = nil
        pending.removeAll()
        pendingStart = 0
        inputEnded = false
    }

    /// Builds the stages from the properties (`AudioConverterPrepare`); conversions call it
    /// when needed. Throws 'fmt?' or 'prop' for settings the converter cannot follow.
    public func prepare() throws(AudioError) {
        if stages != nil { return }
        let inCh = Int(inputFormat.channelsPerFrame), outCh = Int(outputFormat.channelsPerFrame)
        // A codec that fixes its channel order (ALAC) says so; that order is the input's.
        let probe = try CodecRegistry.makeDecoder(for: inputFormat, magicCookie: magicCookie, output: .float32)
        sourceChannelLayout = probe.outputChannelLayout ?? inputChannelLayout
        let mixer = try makeMixer(inputChannels: inCh, outputChannels: outCh)
        var resampler: Resampler?
        if inputFormat.sampleRate != outputFormat.sampleRate {
            resampler = try Resampler(inputRate: inputFormat.sampleRate, outputRate: outputFormat.sampleRate,
                                      channels: mixer.map { min($0.outputChannels, inCh) } ?? inCh,
                                      complexity: sampleRateConverterComplexity, quality: sampleRateConverterQuality)
        }
        var ditherBits: Int?
        if dither == .tpdf, outputFormat.isPCM, !outputFormat.isFloat, Int(outputFormat.bitsPerChannel) < sourceBits {
            ditherBits = Int(outputFormat.bitsPerChannel)
        }
        let usesFloat = mixer != nil || resampler != nil || ditherBits != nil
        // Without processing, float output keeps float; integer output goes through Int16
        // when 16 bits are all it keeps (the decoder narrows exactly as the encoder would),
        // else Int32, which holds every integer input exactly.
        let common: PCMBuffer.CommonFormat = usesFloat || (outputFormat.isPCM && outputFormat.isFloat) ? .float32
            : (outputFormat.bitsPerChannel <= 16 ? .int16 : .int32)
        let decoder = common == .float32 ? probe : try CodecRegistry.makeDecoder(for: inputFormat, magicCookie: magicCookie, output: common)
        let chunkPackets = max(1, 8192 / max(1, decoder.maximumFramesPerPacket))
        let decoded = PCMBuffer(commonFormat: common, sampleRate: inputFormat.sampleRate, channels: inCh,
                                interleaved: !usesFloat, frameCapacity: chunkPackets * decoder.maximumFramesPerPacket)
        stages = Stages(decoder: decoder, decoded: decoded, usesFloat: usesFloat, mixer: mixer, resampler: resampler,
                        ditherBits: ditherBits, chunkPackets: chunkPackets)
    }

    /// The bits of precision the input has, for deciding on dither.
    private var sourceBits: Int {
        switch inputFormat.formatID {
        case .linearPCM: inputFormat.isFloat ? 32 : Int(inputFormat.bitsPerChannel)
        case .uLaw, .aLaw: 14
        case .flac, .appleLossless: inputFormat.bitsPerChannel > 0 ? Int(inputFormat.bitsPerChannel) : 32
        default: 32
        }
    }

    private func makeMixer(inputChannels inCh: Int, outputChannels outCh: Int) throws(AudioError) -> ChannelMixer? {
        var mixer: ChannelMixer?
        if let channelMap {
            guard channelMap.count == outCh else {
                throw AudioError(.propertyNotSupported, "the channel map has \(channelMap.count) entries for \(outCh) output channels")
            }
            mixer = try ChannelMixer(channelMap: channelMap, inputChannels: inCh)
        } else if let a = sourceChannelLayout, let b = outputChannelLayout, a != b {
            guard a.channelLabels?.count == inCh, b.channelLabels?.count == outCh else {
                throw AudioError(.unsupportedDataFormat, "the channel layouts (\(a) → \(b)) do not match the channel counts (\(inCh) → \(outCh))")
            }
            mixer = try ChannelMixer(from: a, to: b)
        } else if inCh != outCh {
            let a = sourceChannelLayout.flatMap { $0.channelLabels?.count == inCh ? $0 : nil } ?? ChannelLayout.defaultLayout(channels: inCh)
            let b = outputChannelLayout.flatMap { $0.channelLabels?.count == outCh ? $0 : nil } ?? ChannelLayout.defaultLayout(channels: outCh)
            guard let a, let b else {
                throw AudioError(.unsupportedDataFormat, "no standard mix takes \(inCh) channels to \(outCh); give a channel map")
            }
            mixer = try ChannelMixer(from: a, to: b)
        }
        return mixer?.isIdentity == true ? nil : mixer
    }

    /// Whether converting gives back the input bytes unchanged: the same packed,
    /// interleaved PCM in and out, and no mixing, resampling, dither or trimming. A writer
    /// can then store its client's bytes as they are instead of decoding and encoding
    /// every sample. (Call after ``prepare()``; false before.)
    var isPassthrough: Bool {
        guard let s = stages, !s.usesFloat, !s.finished, framesToSkip == 0, framesToKeep == nil else { return false }
        let f = inputFormat
        return f == outputBytesFormat && f.isPCM && f.isInterleaved && f.framesPerPacket == 1 && f.bytesPerFrame > 0
            && f.bytesPerPacket == f.bytesPerFrame && f.bitsPerChannel * f.channelsPerFrame == f.bytesPerFrame * 8
    }

    /// Packets the decoder wants decoded before a packet reached by a seek (see
    /// ``AudioDecoder/seekPrerollPackets``).
    public var decoderPrerollPackets: Int { stages?.decoder.seekPrerollPackets ?? 0 }

    /// Damaged packets the decoder concealed instead of failing (MPEG audio mutes them),
    /// since the converter was made (see ``AudioDecoder/concealedPackets``).
    public var concealedPackets: Int { concealedEarlier + (stages?.decoder.concealedPackets ?? 0) }
    private var concealedEarlier = 0

    // MARK: Push: packets

    /// Converts packets and appends the output bytes to `out`. The data holds `count`
    /// packets, described by `descriptions` when their sizes vary.
    ///
    /// With resampling, the last frames come out of ``finish(into:)``.
    public func convert(packets data: UnsafeRawBufferPointer, count: Int, descriptions: [PacketDescription]?,
                        into out: inout [UInt8]) throws(AudioError)
    {
        var sink = Sink.none
        try convert(packets: data, count: count, descriptions: descriptions, into: &out, &sink)
    }

    private func convert(packets data: UnsafeRawBufferPointer, count: Int, descriptions: [PacketDescription]?,
                         into out: inout [UInt8], _ sink: inout Sink) throws(AudioError)
    {
        try prepare()
        let s = stages!
        guard !s.finished else { throw AudioError(.illegalOperation, "the converter was finished; reset() it first") }
        guard count >= 0, descriptions.map({ $0.count >= count }) ?? true else {
            throw AudioError(.invalidInputSize, "\(count) packets with \(descriptions?.count ?? 0) descriptions")
        }
        var done = 0
        var byteOffset = 0
        let bpp = Int(inputFormat.bytesPerPacket)
        while done < count {
            let n = min(s.chunkPackets, count - done)
            let slice: UnsafeRawBufferPointer
            var sliceDescriptions: [PacketDescription]?
            if let descriptions {
                let first = descriptions[done].startOffset
                let last = descriptions[done + n - 1]
                let end = Int(last.startOffset) + Int(last.dataByteSize)
                guard first >= 0, end <= data.count, Int(first) <= end else {
                    throw AudioError(.invalidPacketOffset, "a packet description points outside the data")
                }
                slice = UnsafeRawBufferPointer(rebasing: data[Int(first)..<end])
                if first == 0 && n == descriptions.count {
                    sliceDescriptions = descriptions    // all of them, already relative to the data: no copy
                } else {
                    sliceDescriptions = descriptions[done..<done + n].map {
                        PacketDescription(startOffset: $0.startOffset - first, variableFramesInPacket: $0.variableFramesInPacket,
                                          dataByteSize: $0.dataByteSize)
                    }
                }
            } else {
                guard bpp > 0, byteOffset + n * bpp <= data.count else {
                    throw AudioError(.requiresPacketDescriptions, "packets of varying size need descriptions")
                }
                slice = UnsafeRawBufferPointer(rebasing: data[byteOffset..<byteOffset + n * bpp])
                byteOffset += n * bpp
            }
            s.decoded.frameLength = 0
            try s.decoder.decode(slice, packetCount: n, descriptions: sliceDescriptions, into: s.decoded)
            try process(s, into: &out, &sink)
            done += n
        }
    }

    /// Converts packets held in an array.
    public func convert(packets data: [UInt8], count: Int, descriptions: [PacketDescription]?,
                        into out: inout [UInt8]) throws(AudioError)
    {
        try data.withBytes { (raw) throws(AudioError) in
            try convert(packets: raw, count: count, descriptions: descriptions, into: &out)
        }
    }

    /// Ends the stream: appends what the resampler still holds, so that N input frames
    /// give exactly ⌈N × output rate / input rate⌉ output frames. Converting again needs
    /// ``reset()``.
    public func finish(into out: inout [UInt8]) throws(AudioError) {
        var sink = Sink.none
        try finish(into: &out, &sink)
    }

    private func finish(into out: inout [UInt8], _ sink: inout Sink) throws(AudioError) {
        try prepare()
        let s = stages!
        guard !s.finished else { return }
        s.finished = true
        // A decoder that holds frames back (FFmpeg's WMA, for one) gives them now.
        s.decoded.frameLength = 0
        try s.decoder.drain(into: s.decoded)
        if s.decoded.frameLength > 0 { try process(s, into: &out, &sink) }
        guard let r = s.resampler, let rs = s.resampled else { return }
        // The slice buffer holds a flush too: maximumOutputFrames covers it.
        rs.frameLength = 0
        try r.flush(into: rs)
        try afterResampling(s, rs, into: &out, &sink)
    }

    // MARK: Push: PCM buffers

    /// Converts a buffer of PCM (in ``inputFormat``'s common format: native Float32, Int16 or
    /// Int32, interleaved or planar) into a new buffer of ``outputFormat``, which must be a
    /// common format too ('fmt?' otherwise). With resampling, the output may hold fewer
    /// frames than the input; ``finish()`` gives the rest.
    public func convert(_ input: PCMBuffer) throws(AudioError) -> PCMBuffer {
        try pushIntoNewBuffer(.buffer(input), frames: input.frameLength)
    }

    /// Ends a stream of PCM buffers: the frames the resampler still holds.
    public func finish() throws(AudioError) -> PCMBuffer {
        try pushIntoNewBuffer(.end, frames: 0)
    }

    /// Converts a buffer of PCM and appends the output bytes, in any format the converter writes.
    public func convert(_ input: PCMBuffer, into out: inout [UInt8]) throws(AudioError) {
        var sink = Sink.none
        try convert(input, into: &out, &sink)
    }

    private func convert(_ input: PCMBuffer, into out: inout [UInt8], _ sink: inout Sink) throws(AudioError) {
        try prepare()
        let s = stages!
        guard !s.finished else { throw AudioError(.illegalOperation, "the converter was finished; reset() it first") }
        guard input.channelCount == Int(inputFormat.channelsPerFrame) else {
            throw AudioError(.unsupportedDataFormat, "a \(input.channelCount)-channel buffer for a converter from \(inputFormat)")
        }
        var at = 0
        while at < input.frameLength {
            let n = min(s.decoded.frameCapacity, input.frameLength - at)
            input.copyFrames(from: at, count: n, into: s.decoded)
            try process(s, into: &out, &sink)
            at += n
        }
    }

    /// What a push conversion is given, for ``push(_:into:overflow:)``.
    enum PushInput {
        /// Packets of constant size (the writer's client PCM).
        case packets(UnsafeRawBufferPointer, count: Int)
        case buffer(PCMBuffer)
        /// The end of the stream (``finish(into:)``).
        case end
    }

    /// A push conversion whose last stage writes straight into `buffer` (of the output's
    /// common format and layout) from its `frameLength` on, and appends to `overflow`, as
    /// bytes of ``outputBytesFormat``, what does not fit. A buffer with room for
    /// ``maximumOutputFrames(forInputFrames:)`` leaves nothing over.
    func push(_ input: PushInput, into buffer: PCMBuffer, overflow: inout [UInt8]) throws(AudioError) {
        try prepare()
        guard PCMBuffer.commonFormat(of: outputBytesFormat) == buffer.commonFormat,
              buffer.channelCount == Int(outputFormat.channelsPerFrame) else {
            throw AudioError(.unsupportedDataFormat, "the buffer does not hold \(outputFormat)")
        }
        var sink = Sink(destination: .buffer(buffer, from: buffer.frameLength), capacity: buffer.frameCapacity - buffer.frameLength)
        switch input {
        case .packets(let data, let count): try convert(packets: data, count: count, descriptions: nil, into: &overflow, &sink)
        case .buffer(let pcm): try convert(pcm, into: &overflow, &sink)
        case .end: try finish(into: &overflow, &sink)
        }
        buffer.frameLength += sink.written
    }

    /// The most output frames a push of `n` decoded frames (0: the end) can make.
    func maximumOutputFrames(forInputFrames n: Int) throws(AudioError) -> Int {
        try prepare()
        return stages!.resampler?.maximumOutputFrames(forInputFrames: n) ?? n
    }

    /// A push whose last stage writes into a new buffer of the output's layout, sized for
    /// the most frames it can make.
    private func pushIntoNewBuffer(_ input: PushInput, frames: Int) throws(AudioError) -> PCMBuffer {
        guard let common = PCMBuffer.commonFormat(of: outputFormat) else {
            throw AudioError(.unsupportedDataFormat, "PCM buffers hold native Float32, Int16 or Int32, not \(outputFormat)")
        }
        let channels = Int(outputFormat.channelsPerFrame)
        let buffer = PCMBuffer(commonFormat: common, sampleRate: outputFormat.sampleRate, channels: channels,
                               interleaved: outputFormat.isInterleaved,
                               frameCapacity: try maximumOutputFrames(forInputFrames: frames))
        var overflow: [UInt8] = []
        try push(input, into: buffer, overflow: &overflow)
        guard !overflow.isEmpty else { return buffer }
        // Not expected (the capacity is the most a push makes), but kept rather than lost.
        let more = overflow.count / (channels * common.bytesPerSample)
        let grown = PCMBuffer(commonFormat: common, sampleRate: outputFormat.sampleRate, channels: channels,
                              interleaved: outputFormat.isInterleaved, frameCapacity: buffer.frameLength + more)
        buffer.copyFrames(from: 0, count: buffer.frameLength, into: grown)
        grown.append(interleavedBytes: overflow, frames: more)
        return grown
    }

    // MARK: Pull

    /// Packets handed to the converter by a ``fillComplexBuffer(frames:into:input:)`` input callback.
    public struct InputPackets {
        public var data: [UInt8]
        public var packetCount: Int
        /// Each packet's place and size; nil for constant-size packets.
        public var descriptions: [PacketDescription]?

        public init(data: [UInt8], packetCount: Int, descriptions: [PacketDescription]? = nil) {
            self.data = data
            self.packetCount = packetCount
            self.descriptions = descriptions
        }
    }

    /// Seed 002's `AudioConverterFillComplexBuffer`: appends up to `frames` output frames to
    /// `out`, calling `input` for more packets whenever the converter needs them. `input` is
    /// passed the packet count wanted (a hint: it may give more or fewer) and returns nil,
    /// or no packets, at the end of the stream.
    ///
    /// Returns the frames appended: fewer than `frames` only at the end of the stream, and
    /// 0 once everything has been given out.
    public func fillComplexBuffer(frames: Int, into out: inout [UInt8],
                                  input: (Int) throws(AudioError) -> InputPackets?) throws(AudioError) -> Int
    {
        try prepare()
        let bytesPerFrame = Int(outputBytesFormat.bytesPerFrame)
        guard frames >= 0, bytesPerFrame > 0 else { throw AudioError(.invalidOutputSize, "cannot give \(frames) frames") }
        let channels = Int(outputBytesFormat.channelsPerFrame), width = PCMEncoder.sampleWidth(outputBytesFormat)
        // In steps of at most 64k frames, so that asking for far more than the stream holds
        // (a whole file's worth, say) grows the array only as far as the frames go.
        var total = 0
        while total < frames {
            let step = min(frames - total, 65536)
            let start = out.count
            out.append(zeros: step * bytesPerFrame)
            let n = try out.withMutableBytes { (raw) throws(AudioError) in
                try fill(frames: step, to: .interleaved(raw.baseAddress! + start, channels: channels, width: width), input: input)
            }
            out.removeLast((step - n) * bytesPerFrame)
            total += n
            if n < step { break }
        }
        return total
    }

    /// `fillComplexBuffer` into a PCM buffer of ``outputFormat`` (a native Float32, Int16 or
    /// Int32 format, interleaved or planar): fills it from its `frameLength` up to its
    /// capacity, writing straight into its storage.
    public func fillComplexBuffer(_ output: PCMBuffer, input: (Int) throws(AudioError) -> InputPackets?) throws(AudioError) -> Int {
        try prepare()
        guard PCMBuffer.commonFormat(of: outputFormat) == output.commonFormat, output.channelCount == Int(outputFormat.channelsPerFrame) else {
            throw AudioError(.unsupportedDataFormat, "the buffer does not hold \(outputFormat)")
        }
        let n = try fill(frames: output.frameCapacity - output.frameLength, to: .buffer(output, from: output.frameLength), input: input)
        output.frameLength += n
        return n
    }

    /// `fillComplexBuffer` into the caller's memory, as Apple's (`ioOutputData`): one buffer
    /// for interleaved ``outputFormat``, one per channel for a non-interleaved one, each with
    /// room for `frames` frames. Writes there directly; returns the frames written (fewer
    /// only at the end of the stream). Throws -50 (`.parameter`) for a list of the wrong
    /// shape and 'insz' (`.invalidOutputSize`) for a buffer too small.
    public func fillComplexBuffer(frames: Int, into list: AudioBufferList,
                                  input: (Int) throws(AudioError) -> InputPackets?) throws(AudioError) -> Int
    {
        try prepare()
        let channels = Int(outputFormat.channelsPerFrame), width = PCMEncoder.sampleWidth(outputBytesFormat)
        let planar = !outputFormat.isInterleaved && channels > 1
        guard frames >= 0, list.count == (planar ? channels : 1) else {
            throw AudioError(.parameter, "\(list.count) buffers for \(planar ? channels : 1) of \(outputFormat)")
        }
        let (bytes, overflow) = frames.multipliedReportingOverflow(by: planar ? width : width * channels)
        for i in 0..<list.count where overflow || list[i].count < bytes || (bytes > 0 && list[i].baseAddress == nil) {
            throw AudioError(.invalidOutputSize, "buffer \(i) holds \(list[i].count) bytes, not the \(bytes) of \(frames) frames")
        }
        return try fill(frames: frames, to: .buffers(list, channels: channels, width: width), input: input)
    }

    /// The pull path: frames left from the last call first, then conversions whose last stage
    /// writes into `destination` until `frames` are there, keeping what is left over.
    private func fill(frames: Int, to destination: SampleDestination,
                      input: (Int) throws(AudioError) -> InputPackets?) throws(AudioError) -> Int
    {
        let bytesPerFrame = Int(outputBytesFormat.bytesPerFrame)
        let channels = Int(outputBytesFormat.channelsPerFrame), width = PCMEncoder.sampleWidth(outputBytesFormat)
        let left = min(frames, (pending.count - pendingStart) / bytesPerFrame)
        if left > 0 {
            pending.withUnsafeBytes {
                destination.copy(interleaved: $0.baseAddress! + pendingStart, frames: left, channels: channels, width: width)
            }
            pendingStart += left * bytesPerFrame
        }
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        var sink = Sink(destination: destination, capacity: frames, written: left)
        // Nothing is pending once the destination takes more.
        while sink.written < frames && !inputEnded {
            if let packets = try input(stages!.chunkPackets), packets.packetCount > 0 {
                try packets.data.withBytes { (raw) throws(AudioError) in
                    try convert(packets: raw, count: packets.packetCount, descriptions: packets.descriptions, into: &pending, &sink)
                }
            } else {
                inputEnded = true
                try finish(into: &pending, &sink)
            }
        }
        return sink.written
    }

    /// Forgets all state between packets (`AudioConverterReset`), after a seek: the
    /// decoder's and the resampler's history and anything not yet given out. The trimming
    /// counters are left as they are (a seek sets them), and the frames decoded since the
    /// start are no longer counted (``decodedFramesSinceStart`` becomes nil).
    public func reset() { reset(resamplerOrigin: 0) }

    /// ``reset()`` before input that starts at frame `resamplerOrigin` of the stream read from
    /// the start (a seek by ``ExtAudioFile``): see ``Resampler/reset(origin:)``.
    func reset(resamplerOrigin: Int) {
        decodedFramesSinceStart = nil
        if let s = stages {
            s.decoder.reset()
            s.resampler?.reset(origin: resamplerOrigin)
            s.finished = false
        }
        pending.removeAll()
        pendingStart = 0
        inputEnded = false
    }

    // MARK: Stages

    /// Takes `s.decoded` through trimming, the channel mixer, the resampler and dither, and
    /// appends the encoded output.
    private func process(_ s: Stages, into out: inout [UInt8], _ sink: inout Sink) throws(AudioError) {
        let buffer = s.decoded
        trim(buffer)
        guard buffer.frameLength > 0 else { return }
        guard s.usesFloat else {
            try emit(buffer, into: &out, &sink)
            return
        }
        var current = buffer
        if let mixer = s.mixer, s.mixFirst {
            let m = s.mixed!
            try mixer.mix(current, into: m)
            current = m
        }
        guard let r = s.resampler, let rs = s.resampled else {
            try afterResampling(s, current, into: &out, &sink)
            return
        }
        // Slice by slice, so an upsampled slice fits the resampler's buffer.
        var at = 0
        while at < current.frameLength {
            let n = min(s.sliceFrames, current.frameLength - at)
            // The storage of a PCMBuffer never moves, so its pointers outlive the closures.
            let src = current.withUnsafeMutableSamples(Float.self) { $0.baseAddress! }
            let dst = rs.withUnsafeMutableSamples(Float.self) { $0.baseAddress! }
            for c in 0..<r.channels {
                s.inputPointers[c] = UnsafePointer(src + current.channelStart(c) + at)
                s.outputPointers[c] = dst + rs.channelStart(c)
            }
            let written = try r.process(s.inputPointers, frameCount: n, into: s.outputPointers, capacity: rs.frameCapacity)
            rs.frameLength = written
            try afterResampling(s, rs, into: &out, &sink)
            at += n
        }
    }

    /// The mixer when it comes after the resampler, then dither and encoding.
    private func afterResampling(_ s: Stages, _ buffer: PCMBuffer, into out: inout [UInt8], _ sink: inout Sink) throws(AudioError) {
        guard buffer.frameLength > 0 else { return }
        var last = buffer
        if let mixer = s.mixer, !s.mixFirst {
            try mixer.mix(buffer, into: s.mixed!)
            last = s.mixed!
        }
        if let bits = s.ditherBits { addDither(last, bits: bits, state: &s.ditherState) }
        try emit(last, into: &out, &sink)
    }

    /// Where the last stage writes: first into the caller's memory (`destination`, while it
    /// has room), then, for what does not fit, appended as bytes of ``outputBytesFormat``
    /// to the array a conversion call was given (the pull path keeps those for its next call).
    private struct Sink {
        var destination: SampleDestination?
        /// Frames the destination takes in all, and frames written to it so far.
        var capacity = 0
        var written = 0

        static var none: Sink { Sink() }
    }

    /// Encodes the last stage's frames into the sink's destination, the rest into `out`.
    private func emit(_ buffer: PCMBuffer, into out: inout [UInt8], _ sink: inout Sink) throws(AudioError) {
        var from = 0
        if let d = sink.destination, sink.written < sink.capacity {
            from = min(sink.capacity - sink.written, buffer.frameLength)
            try PCMEncoder.check(buffer, outputBytesFormat)
            PCMEncoder.write(buffer, from: 0, count: from, as: outputBytesFormat, to: d.advanced(by: sink.written))
            sink.written += from
        }
        if from < buffer.frameLength {
            try PCMEncoder.encode(buffer, from: from, count: buffer.frameLength - from, as: outputBytesFormat, into: &out)
        }
    }

    /// Drops leading frames still to skip and caps the frames still to keep.
    private func trim(_ buffer: PCMBuffer) {
        decodedFramesSinceStart? += Int64(buffer.frameLength)
        if framesToSkip > 0 {
            let drop = Int(min(framesToSkip, Int64(buffer.frameLength)))
            buffer.removeLeadingFrames(drop)
            framesToSkip -= Int64(drop)
        }
        if let keep = framesToKeep {
            if Int64(buffer.frameLength) > keep { buffer.frameLength = Int(keep) }
            framesToKeep = keep - Int64(buffer.frameLength)
        }
    }

    /// TPDF dither of ±1 LSB at `bits`: the sum of two uniform values, per channel from
    /// its own generator (xorshift32), so chunking does not change the sequence.
    private func addDither(_ buffer: PCMBuffer, bits: Int, state: inout [UInt32]) {
        let lsb = Float(sign: .plus, exponent: 1 - bits, significand: 1)
        let scale = lsb / Float(UInt32.max)
        let frames = buffer.frameLength, stride = buffer.stride
        buffer.withUnsafeMutableSamples(Float.self) { p in
            for c in 0..<buffer.channelCount {
                var x = state[c]
                let base = buffer.channelStart(c)
                for i in 0..<frames {
                    x ^= x << 13; x ^= x >> 17; x ^= x << 5
                    let a = x
                    x ^= x << 13; x ^= x >> 17; x ^= x << 5
                    p[base + i * stride] += (Float(a) - Float(x)) * scale
                }
                state[c] = x
            }
        }
    }
}

extension PCMBuffer {
    /// Copies `count` frames from `start` into `target` at its frame `at`, converting between Float32, Int16 and Int32 (integers are justified to
    /// full scale, as decoders give them) and between interleaved and planar; sets the
    /// target's `frameLength` to the end of the copy. Channel counts must match.
    func copyFrames(from start: Int, count: Int, into target: PCMBuffer, at: Int = 0) {
        precondition(target.channelCount == channelCount && at + count <= target.frameCapacity && start + count <= frameLength)
        let sStride = stride, tStride = target.stride
        for c in 0..<channelCount {
            let s0 = channelStart(c) + start * sStride, t0 = target.channelStart(c) + at * tStride
            switch (commonFormat, target.commonFormat) {
            case (.float32, .float32):
                copy(Float.self, Float.self, s0, sStride, target, t0, tStride, count) { $0 }
            case (.int16, .int16):
                copy(Int16.self, Int16.self, s0, sStride, target, t0, tStride, count) { $0 }
            case (.int32, .int32):
                copy(Int32.self, Int32.self, s0, sStride, target, t0, tStride, count) { $0 }
            case (.int16, .float32):
                copy(Int16.self, Float.self, s0, sStride, target, t0, tStride, count) { Float($0) * 0x1p-15 }
            case (.int32, .float32):
                copy(Int32.self, Float.self, s0, sStride, target, t0, tStride, count) { Float($0) * 0x1p-31 }
            case (.int16, .int32):
                copy(Int16.self, Int32.self, s0, sStride, target, t0, tStride, count) { Int32($0) << 16 }
            case (.int32, .int16):
                copy(Int32.self, Int16.self, s0, sStride, target, t0, tStride, count) { Int16(truncatingIfNeeded: $0 >> 16) }
            case (.float32, .int16):
                copy(Float.self, Int16.self, s0, sStride, target, t0, tStride, count) {
                    Int16(max(-32768, min(32767, ($0 * 32768).rounded(.toNearestOrEven))))
                }
            case (.float32, .int32):
                copy(Float.self, Int32.self, s0, sStride, target, t0, tStride, count) {
                    let y = Double($0) * 2_147_483_648.0
                    return y >= 2_147_483_647 ? .max : y <= -2_147_483_648 ? .min : Int32(y.rounded(.toNearestOrEven))
                }
            }
        }
        target.frameLength = at + count
    }

    private func copy<S, T>(_: S.Type, _: T.Type, _ s0: Int, _ sStride: Int, _ target: PCMBuffer, _ t0: Int, _ tStride: Int,
                            _ count: Int, _ convert: (S) -> T)
    {
        withUnsafeMutableSamples(S.self) { src in
            target.withUnsafeMutableSamples(T.self) { dst in
                for i in 0..<count { dst[t0 + i * tStride] = convert(src[s0 + i * sStride]) }
            }
        }
    }

    /// Drops the first `n` valid frames, moving the rest to the start.
    func removeLeadingFrames(_ n: Int) {
        guard n > 0 else { return }
        let keep = frameLength - n, bps = commonFormat.bytesPerSample
        withUnsafeMutableRawBytes { raw in
            let base = raw.baseAddress!
            if isInterleaved || channelCount == 1 {
                let frameBytes = channelCount * bps
                (base).copyMemory(from: base + n * frameBytes, byteCount: keep * frameBytes)
            } else {
                for c in 0..<channelCount {
                    let start = base + channelStart(c) * bps
                    start.copyMemory(from: start + n * bps, byteCount: keep * bps)
                }
            }
        }
        frameLength = keep
    }
}

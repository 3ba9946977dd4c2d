import TonearmCore

/// Maps input channels to output channels through a gain matrix: a reorder between two
/// layouts of the same channels (WAV order against AIFF or CAF order), a standard downmix or
/// upmix, or Apple's ChannelMap (`kAudioConverterChannelMap`).
///
/// The converter's channel stage; it works on Float32 samples.
public struct ChannelMixer: Sendable, Equatable {
    public let inputChannels: Int
    public let outputChannels: Int
    /// `gains[output][input]`.
    public let gains: [[Float]]

    /// The most channels on either side.
    public static let maximumChannels = 64

    /// A mixer with an explicit matrix, `gains[output][input]`.
    public init(gains: [[Float]], inputChannels: Int) throws(AudioError) {
        guard (1...ChannelMixer.maximumChannels).contains(inputChannels), (1...ChannelMixer.maximumChannels).contains(gains.count),
              gains.allSatisfy({ $0.count == inputChannels && $0.allSatisfy(\.isFinite) })
        else {
            throw AudioError(.propertyNotSupported, "a channel matrix of \(gains.count) rows by \(inputChannels) channels is not valid")
        }
        self.inputChannels = inputChannels
        outputChannels = gains.count
        self.gains = gains
    }

    /// Apple's ChannelMap: for each output channel, the index of the input channel it takes,
    /// or -1 for silence.
    public init(channelMap: [Int], inputChannels: Int) throws(AudioError) {
        guard channelMap.allSatisfy({ $0 >= -1 && $0 < inputChannels }) else {
            throw AudioError(.propertyNotSupported, "the channel map \(channelMap) names a channel that the \(inputChannels)-channel input lacks")
        }
        try self.init(gains: channelMap.map { source in (0..<inputChannels).map { $0 == source ? 1 : 0 } },
                      inputChannels: inputChannels)
    }

    /// The gain of a centre or surround channel folded into a front channel: −3 dB
    /// (ITU-R BS.775's 0.7071).
    public static let foldGain: Float = 0.70710677

    /// The mixer between two layouts.
    ///
    /// - The same channels in another order: a reorder, each output taking its input as is.
    /// - Otherwise a standard mix by channel labels: mono to stereo copies the channel to
    ///   both sides; to stereo, centre and surround channels (side, rear, back) fold into
    ///   their side at −3 dB and LFE is dropped (ITU-R BS.775); to mono, left and right are
    ///   averaged after that. Rows that could clip (their gains add up past 1) are scaled down
    ///   so that the largest sum is 1, as ffmpeg's default downmix does, so that a full-scale
    ///   input never clips.
    /// - Layouts that do not say their channels' labels are refused with 'fmt?'.
    public init(from input: ChannelLayout, to output: ChannelLayout) throws(AudioError) {
        guard let inLabels = input.channelLabels, let outLabels = output.channelLabels else {
            throw AudioError(.unsupportedDataFormat, "the channel layouts (\(input) → \(output)) do not name their channels")
        }
        let n = inLabels.count
        // A reorder: every output channel found once in the input.
        if Set(inLabels).count == n, Set(outLabels) == Set(inLabels), outLabels.count == n {
            try self.init(channelMap: outLabels.map { inLabels.firstIndex(of: $0)! }, inputChannels: n)
            return
        }
        var rows: [[Float]] = []
        for label in outLabels {
            var row = [Float](repeating: 0, count: n)
            for (i, source) in inLabels.enumerated() {
                row[i] = ChannelMixer.gain(from: source, to: label, outputIsMono: outLabels.count == 1)
            }
            rows.append(row)
        }
        guard rows.contains(where: { $0.contains { $0 != 0 } }) else {
            throw AudioError(.unsupportedDataFormat, "no standard mix takes \(input) to \(output)")
        }
        let largest = rows.map { $0.reduce(0, +) }.max() ?? 1
        if largest > 1 { rows = rows.map { $0.map { $0 / largest } } }
        try self.init(gains: rows, inputChannels: n)
    }

    /// What one input channel gives one output channel in the standard mixes.
    static func gain(from source: ChannelLabel, to target: ChannelLabel, outputIsMono: Bool) -> Float {
        if source == target { return 1 }
        let leftSide: Set<ChannelLabel> = [.leftSurround, .leftSurroundDirect, .rearSurroundLeft, .leftCenter]
        let rightSide: Set<ChannelLabel> = [.rightSurround, .rightSurroundDirect, .rearSurroundRight, .rightCenter]
        let middle: Set<ChannelLabel> = [.center, .centerSurround]
        if outputIsMono, target == .mono || target == .center {
            // Left and right halves, the rest through the stereo fold.
            switch source {
            case .left, .right, .mono: return source == .mono ? 1 : 0.5
            default:
                if leftSide.contains(source) || rightSide.contains(source) { return 0.5 * foldGain }
                if middle.contains(source) { return foldGain }
                return 0
            }
        }
        switch target {
        case .left:
            if source == .mono { return 1 }
            if leftSide.contains(source) || middle.contains(source) { return foldGain }
        case .right:
            if source == .mono { return 1 }
            if rightSide.contains(source) || middle.contains(source) { return foldGain }
        default:
            break
        }
        return 0
    }

    /// True when the mixer hands every channel on unchanged.
    public var isIdentity: Bool {
        inputChannels == outputChannels && gains.enumerated().allSatisfy { o, row in row.enumerated().allSatisfy { $0.offset == o ? $0.element == 1 : $0.element == 0 } }
    }

    /// Mixes the frames of a Float32 buffer into another (each interleaved or planar, with
    /// this mixer's channel counts) and sets the output's frame length.
    public func mix(_ input: PCMBuffer, into output: PCMBuffer) throws(AudioError) {
        guard input.commonFormat == .float32, output.commonFormat == .float32 else {
            throw AudioError(.unsupportedDataFormat, "the channel mixer works on Float32 samples")
        }
        guard input.channelCount == inputChannels, output.channelCount == outputChannels else {
            throw AudioError(.unsupportedDataFormat,
                             "the mixer takes \(inputChannels) channels to \(outputChannels), not \(input.channelCount) to \(output.channelCount)")
        }
        let frames = input.frameLength
        guard frames <= output.frameCapacity else {
            throw AudioError(.invalidOutputSize, "\(frames) frames do not fit a buffer of \(output.frameCapacity)")
        }
        let inStride = input.stride, outStride = output.stride
        let inStarts = (0..<inputChannels).map { input.channelStart($0) }
        let outStarts = (0..<outputChannels).map { output.channelStart($0) }
        input.withUnsafeMutableSamples(Float.self) { src in
            output.withUnsafeMutableSamples(Float.self) { dst in
                for o in 0..<outputChannels {
                    let row = gains[o]
                    let d = outStarts[o]
                    for f in 0..<frames { dst[d + f * outStride] = 0 }
                    for i in 0..<inputChannels where row[i] != 0 {
                        let g = row[i], s = inStarts[i]
                        for f in 0..<frames { dst[d + f * outStride] += g * src[s + f * inStride] }
                    }
                }
            }
        }
        output.frameLength = frames
    }
}

/// The quantisation indices of one SILK frame, as §4.2.7 decodes them.
struct SILKFrameIndices {
    /// 0 inactive, 1 unvoiced, 2 voiced (§4.2.7.3).
    var signalType = 0
    var quantOffsetType = 0
    var gainIndices: (Int, Int, Int, Int) = (0, 0, 0, 0)
    /// Stage 1 at 0, the stage-2 residuals at 1 … order.
    var nlsfIndices = [Int](repeating: 0, count: SILKChannelState.maxLPCOrder + 1)
    var nlsfInterpolationQ2 = 4
    var lagIndex = 0
    var contourIndex = 0
    var periodicityIndex = 0
    var ltpIndices: (Int, Int, Int, Int) = (0, 0, 0, 0)
    var ltpScaleIndex = 0
    var seed = 0

    func gainIndex(_ k: Int) -> Int {
        switch k { case 0: gainIndices.0; case 1: gainIndices.1; case 2: gainIndices.2; default: gainIndices.3 }
    }

    mutating func setGainIndex(_ k: Int, _ v: Int) {
        switch k { case 0: gainIndices.0 = v; case 1: gainIndices.1 = v; case 2: gainIndices.2 = v; default: gainIndices.3 = v }
    }

    func ltpIndex(_ k: Int) -> Int {
        switch k { case 0: ltpIndices.0; case 1: ltpIndices.1; case 2: ltpIndices.2; default: ltpIndices.3 }
    }

    mutating func setLTPIndex(_ k: Int, _ v: Int) {
        switch k { case 0: ltpIndices.0 = v; case 1: ltpIndices.1 = v; case 2: ltpIndices.2 = v; default: ltpIndices.3 = v }
    }
}

/// The parameters of one SILK frame after dequantisation (§4.2.7.4 – §4.2.7.6): what the
/// synthesis filters run with.
struct SILKFrameParameters {
    /// LPC coefficients, Q12, for the first and second half of a 20 ms frame (the first
    /// interpolated, §4.2.7.5.5).
    var lpcQ12 = [[Int16]](repeating: [Int16](repeating: 0, count: SILKChannelState.maxLPCOrder), count: 2)
    var pitchLags = [Int](repeating: 0, count: 4)
    /// Five LTP taps a subframe, Q14.
    var ltpQ14 = [Int16](repeating: 0, count: 4 * SILKChannelState.ltpOrder)
    var ltpScaleQ14: Int32 = 0
    var gainsQ16 = [Int32](repeating: 0, count: 4)

    /// Arrays without storage, held by the channel while its parameters are out being changed.
    static let placeholder = SILKFrameParameters(lpcQ12: [], pitchLags: [], ltpQ14: [], ltpScaleQ14: 0, gainsQ16: [])
}

/// One SILK channel's decoder state (mid, or side), which persists across frames.
final class SILKChannelState {
    static let maxLPCOrder = 16
    static let ltpOrder = 5
    static let maxFrameLength = 320
    static let maxSubframeLength = 80
    /// The LTP memory: 20 ms at 16 kHz.
    static let maxLTPMemory = 320

    var fsKHz = 0
    var subframes = 4
    var frameLength = 0
    var subframeLength = 0
    var ltpMemoryLength = 0
    var lpcOrder = 0
    var framesPerPacket = 1
    var framesDecoded = 0

    var prevGainQ16: Int32 = 65536
    var excitationQ14 = [Int32](repeating: 0, count: SILKChannelState.maxFrameLength)
    var lpcStateQ14 = [Int32](repeating: 0, count: SILKChannelState.maxLPCOrder)
    /// The last `ltpMemoryLength` output samples (the LTP's history) and room for a frame.
    var outBuffer = [Int16](repeating: 0, count: SILKChannelState.maxLTPMemory + SILKChannelState.maxFrameLength)
    var lagPrev = 100
    var lastGainIndex = 10
    var prevSignalType = 0
    var firstFrameAfterReset = true
    var prevNLSFQ15 = [Int16](repeating: 0, count: SILKChannelState.maxLPCOrder)
    var ecPrevSignalType = 0
    var ecPrevLagIndex = 0
    var vadFlags = [Bool](repeating: false, count: 3)
    var lbrrFlag = false
    var lbrrFlags = [Bool](repeating: false, count: 3)
    var indices = SILKFrameIndices()
    var lossCount = 0
    /// Conceal as libopus 1.3 does (see ``SILKDecoder/libopus13Concealment``).
    var libopus13Concealment = false
    var resampler = SILKResampler()
    var plc = SILKPLCState()
    var cng = SILKCNGState()

    /// Scratch space of the synthesis: the re-whitened history (Q0), the LTP's state
    /// (Q15), one subframe's LPC residual, the LPC state with a subframe, and the pulses.
    let scratchLTP = UnsafeMutablePointer<Int16>.allocate(capacity: SILKChannelState.maxLTPMemory)
    let scratchLTPQ15 = UnsafeMutablePointer<Int32>.allocate(capacity: SILKChannelState.maxLTPMemory + SILKChannelState.maxFrameLength)
    let scratchResidual = UnsafeMutablePointer<Int32>.allocate(capacity: SILKChannelState.maxSubframeLength)
    let scratchLPC = UnsafeMutablePointer<Int32>.allocate(capacity: SILKChannelState.maxSubframeLength + 16)
    let scratchPulses = UnsafeMutablePointer<Int16>.allocate(capacity: SILKChannelState.maxFrameLength)
    var parameters = SILKFrameParameters()

    init() {
        scratchLTP.initialize(repeating: 0, count: SILKChannelState.maxLTPMemory)
        scratchLTPQ15.initialize(repeating: 0, count: SILKChannelState.maxLTPMemory + SILKChannelState.maxFrameLength)
        scratchResidual.initialize(repeating: 0, count: SILKChannelState.maxSubframeLength)
        scratchLPC.initialize(repeating: 0, count: SILKChannelState.maxSubframeLength + 16)
        scratchPulses.initialize(repeating: 0, count: SILKChannelState.maxFrameLength)
        reset()
    }

    deinit {
        scratchLTP.deallocate()
        scratchLTPQ15.deallocate()
        scratchResidual.deallocate()
        scratchLPC.deallocate()
        scratchPulses.deallocate()
    }

    /// §4.2.7.3 onwards start from this: the state of a decoder that has seen nothing.
    func reset() {
        fsKHz = 0
        subframes = 4
        frameLength = 0
        subframeLength = 0
        ltpMemoryLength = 0
        lpcOrder = 0
        framesPerPacket = 1
        framesDecoded = 0
        prevGainQ16 = 65536
        for i in excitationQ14.indices { excitationQ14[i] = 0 }
        for i in lpcStateQ14.indices { lpcStateQ14[i] = 0 }
        for i in outBuffer.indices { outBuffer[i] = 0 }
        lagPrev = 0
        lastGainIndex = 0
        prevSignalType = 0
        firstFrameAfterReset = true
        for i in prevNLSFQ15.indices { prevNLSFQ15[i] = 0 }
        ecPrevSignalType = 0
        ecPrevLagIndex = 0
        for i in 0..<3 { vadFlags[i] = false; lbrrFlags[i] = false }
        lbrrFlag = false
        indices = SILKFrameIndices()
        lossCount = 0
        resampler = SILKResampler()
        plc = SILKPLCState()
        cng = SILKCNGState()
    }

    var nlsfCodebook: SILKNLSFCodebook { lpcOrder == 16 ? .wideband : .narrowMedium }

    /// Sets the internal rate and the frame's subframe count (2 for 10 ms, 4 for 20 ms);
    /// a new rate starts the LPC and LTP history afresh (the frame after it is coded
    /// without reference to earlier ones) and re-creates the resampler.
    func setSampleRate(_ kHz: Int, subframes: Int) {
        self.subframes = subframes
        subframeLength = 5 * kHz
        let length = subframes * subframeLength
        if fsKHz != kHz {
            resampler = SILKResampler(inputKHz: kHz)
        }
        if fsKHz != kHz || length != frameLength {
            if fsKHz != kHz {
                ltpMemoryLength = 20 * kHz
                lpcOrder = kHz == 16 ? 16 : 10
                firstFrameAfterReset = true
                lagPrev = 100
                lastGainIndex = 10
                prevSignalType = 0
                for i in outBuffer.indices { outBuffer[i] = 0 }
                for i in lpcStateQ14.indices { lpcStateQ14[i] = 0 }
            }
            fsKHz = kHz
            frameLength = length
        }
    }

    /// The first frame with a side channel after mid-only frames starts the side's
    /// prediction afresh (RFC 6716 §4.2.7.2, libopus's behaviour).
    func resetSidePrediction() {
        for i in outBuffer.indices { outBuffer[i] = 0 }
        for i in lpcStateQ14.indices { lpcStateQ14[i] = 0 }
        lagPrev = 100
        lastGainIndex = 10
        prevSignalType = 0
        firstFrameAfterReset = true
    }
}

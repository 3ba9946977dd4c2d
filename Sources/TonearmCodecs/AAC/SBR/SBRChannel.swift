/// One audio channel's SBR state: the data of the frame being decoded, what the next frame's
/// delta coding and HF adjustment refer to, and the filter banks' and HF generator's memory.
///
/// Arrays hold the standard's maximums, so no frame allocates: 5 envelopes (4 in FIXFIX),
/// 2 noise floors, 5 noise bands, 64 QMF bands, 38 QMF slots in a frame's envelopes.
final class SBRChannel {
    // sbr_grid of the current frame (§4.6.18.3.3).
    var frameClass = 0
    /// L_E and L_Q.
    var envelopeCount = 0
    var noiseCount = 0
    /// t_E[0…L_E] and t_Q[0…L_Q], in time slots of 2 QMF slots.
    var borders = [Int](repeating: 0, count: 6)
    var noiseBorders = [Int](repeating: 0, count: 3)
    /// r(l) of envelope l at index l + 1; index 0 is the previous frame's last envelope's.
    var resolution = [Int](repeating: 0, count: 6)
    var pointer = 0
    /// l_A, the transient envelope (−1: none), and l_APrev: 0 when the previous frame's
    /// transient was its last envelope's end, so that this frame's first envelope is one too.
    var transient = -1
    var previousTransient = -1
    /// t_E[L_E] of the previous frame.
    var previousEnd = 0
    var ampRes = 0
    var deltaTimeEnvelope = [Bool](repeating: false, count: 5)
    var deltaTimeNoise = [Bool](repeating: false, count: 2)
    /// bs_invf_mode of this frame and the previous.
    var invf = [Int](repeating: 0, count: 5)
    var previousInvf = [Int](repeating: 0, count: 5)
    /// Envelope scale factors after delta decoding, row l + 1 for envelope l (64 bands a
    /// row); row 0 is the previous frame's last envelope, which time deltas refer to.
    var envelopeQ = [Int](repeating: 0, count: 6 * 64)
    /// Noise floor values the same way, 5 bands a row.
    var noiseQ = [Int](repeating: 0, count: 3 * 5)
    var addHarmonicFlag = false
    var addHarmonic = [Bool](repeating: false, count: 64)

    /// Dequantised E_orig (row l, 64 bands) and Q_orig (row l, 5 bands) (§4.6.18.3.5).
    var envelope = [Float](repeating: 0, count: 5 * 64)
    var noise = [Float](repeating: 0, count: 2 * 5)

    // Memory of the DSP.
    let analysis = SBRAnalysisFilterbank()
    let synthesis = SBRSynthesisFilterbank()
    /// Two frames of the analysis output, slot-major (32 slots × 32 bands), real and imaginary;
    /// `current` is the one written this frame, the other the previous frame's.
    let wReal: [UnsafeMutablePointer<Float>]
    let wImag: [UnsafeMutablePointer<Float>]
    var current = 0
    /// Two frames of the adjusted high band Y, slot-major (38 slots × 64 bands): the slots
    /// past 32 of one frame are the first of the next frame's output.
    let yReal: [UnsafeMutablePointer<Float>]
    let yImag: [UnsafeMutablePointer<Float>]
    /// The gains and noise levels per QMF slot (row h_SL + slot, 64 bands), whose last 4
    /// slots the next frame's smoothing reaches back to.
    let gainHistory: UnsafeMutablePointer<Float>
    let noiseHistory: UnsafeMutablePointer<Float>
    static let historyRows = 48
    /// bwArray of the previous frame, per noise band.
    var bandwidth = [Float](repeating: 0, count: 5)
    /// S_IndexMapped of the previous frame's last envelope.
    var previousSineMapped = [Bool](repeating: false, count: 64)
    /// f_IndexNoise and f_IndexSine, carried from frame to frame.
    var noiseIndex = 0
    var sineIndex = 0

    init() {
        func buffer(_ n: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return p
        }
        wReal = [buffer(32 * 32), buffer(32 * 32)]
        wImag = [buffer(32 * 32), buffer(32 * 32)]
        yReal = [buffer(38 * 64), buffer(38 * 64)]
        yImag = [buffer(38 * 64), buffer(38 * 64)]
        gainHistory = buffer(Self.historyRows * 64)
        noiseHistory = buffer(Self.historyRows * 64)
    }

    deinit {
        for p in wReal + wImag + yReal + yImag { p.deallocate() }
        gainHistory.deallocate()
        noiseHistory.deallocate()
    }

    /// Forgets everything, as at the start of a stream (after a seek).
    func reset() {
        frameClass = 0; envelopeCount = 0; noiseCount = 0
        for i in 0..<6 { borders[i] = 0; resolution[i] = 0 }
        for i in 0..<3 { noiseBorders[i] = 0 }
        pointer = 0; transient = -1; previousTransient = -1; previousEnd = 0; ampRes = 0
        for i in 0..<5 { invf[i] = 0; previousInvf[i] = 0; bandwidth[i] = 0 }
        for i in 0..<envelopeQ.count { envelopeQ[i] = 0 }
        for i in 0..<noiseQ.count { noiseQ[i] = 0 }
        addHarmonicFlag = false
        for i in 0..<64 { addHarmonic[i] = false; previousSineMapped[i] = false }
        analysis.reset()
        synthesis.reset()
        for p in wReal + wImag { p.update(repeating: 0, count: 32 * 32) }
        for p in yReal + yImag { p.update(repeating: 0, count: 38 * 64) }
        gainHistory.update(repeating: 0, count: Self.historyRows * 64)
        noiseHistory.update(repeating: 0, count: Self.historyRows * 64)
        current = 0
        noiseIndex = 0
        sineIndex = 0
    }
}

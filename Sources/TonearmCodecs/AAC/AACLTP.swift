#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// AAC LTP's long-term prediction (ISO/IEC 14496-3): the decoder's own output,
/// delayed by the lag and scaled, windowed and taken back to the frequency domain with
/// an MDCT, predicts the bands the encoder marks; the coded values are the residual.
///
/// As in FFmpeg, whose encoder is the one that writes LTP: prediction for long windows only
/// (ics_info carries no predictor data with eight short windows), the predicted spectrum
/// shaped by the frame's TNS filter in its analysis form before it is added, and the state
/// the last two frames' output and the windowed second half of the last IMDCT.
enum AACLTP {
    /// The eight LTP gains of ltp_coef.
    static let coefficients: [Float] = [0.570829, 0.696616, 0.813004, 0.911304, 0.984900, 1.067894, 1.194601, 1.369533]
    /// MAX_LTP_LONG_SFB.
    static let maximumBands = 40

    /// Adds the prediction to the bands of `s` that use it. `history` is the channel's 3072
    /// samples: two frames of output, then the last frame's pending overlap.
    static func apply(_ s: AACChannelStream, history: UnsafeMutablePointer<Float>, previousShape: Int,
                      filterbank: AACFilterbank, tables t: AACStreamTables)
    {
        let ltp = s.info.ltp
        guard ltp.present, !s.info.isShort else { return }
        let predicted = filterbank.ltpTime
        let count = ltp.lag < 1024 ? ltp.lag + 1024 : 2048
        for i in 0..<count { predicted[i] = history[i + 2048 - ltp.lag] * ltp.coefficient }
        (predicted + count).update(repeating: 0, count: 2048 - count)
        let spectrum = filterbank.ltpSpectrum
        filterbank.analyse(predicted, sequence: s.info.windowSequence, shape: s.info.windowShape, previousShape: previousShape,
                           into: spectrum)
        AACTNS.apply(s, t, to: spectrum, analysis: true)
        let bands = t.longBands
        for b in 0..<min(s.info.maxSFB, maximumBands) where ltp.used >> UInt64(b) & 1 != 0 {
            for k in bands[b]..<bands[b + 1] { s.spectrum[k] += spectrum[k] }
        }
    }

    /// After the frame: the history moves on by one frame.
    static func update(history: UnsafeMutablePointer<Float>, output: UnsafePointer<Float>, overlap: UnsafePointer<Float>) {
        history.update(from: history + 1024, count: 1024)
        (history + 1024).update(from: output, count: 1024)
        (history + 2048).update(from: overlap, count: 1024)
    }
}

/// AAC Main's backward-adaptive prediction: per spectral line below PRED_SFB_MAX,
/// a second-order lattice LMS predictor run on the decoded values, whose estimate is added
/// in the bands the encoder marks. The standard fixes its arithmetic: every state value is
/// kept with a 16-bit mantissa (truncated), the estimate rounded, and the gain's reciprocal
/// rounded to even, so that encoder and decoder stay in step.
enum AACPrediction {
    /// One predictor: r0, r1, cor0, cor1, var0, var1.
    static let stride = 6
    /// Predictors per channel: the lines below PRED_SFB_MAX at the highest rates.
    static let lines = 672

    static func reset(_ p: UnsafeMutablePointer<Float>, count: Int = lines) {
        for i in 0..<count { resetOne(p + i * stride) }
    }

    @inline(__always)
    static func resetOne(_ q: UnsafeMutablePointer<Float>) {
        q[0] = 0; q[1] = 0; q[2] = 0; q[3] = 0; q[4] = 1; q[5] = 1
    }

    @inline(__always) static func truncated(_ x: Float) -> Float { Float(bitPattern: x.bitPattern & 0xFFFF_0000) }
    @inline(__always) static func rounded(_ x: Float) -> Float { Float(bitPattern: (x.bitPattern &+ 0x8000) & 0xFFFF_0000) }
    @inline(__always) static func roundedEven(_ x: Float) -> Float {
        let b = x.bitPattern
        return Float(bitPattern: (b &+ 0x7FFF &+ (b >> 16 & 1)) & 0xFFFF_0000)
    }

    /// Runs the predictors over a frame of `s` (`state`: 672 predictors).
    static func apply(_ s: AACChannelStream, state: UnsafeMutablePointer<Float>, tables t: AACStreamTables) {
        guard !s.info.isShort else {
            reset(state)
            return
        }
        let a: Float = 0.953125, alpha: Float = 0.90625
        let bands = t.longBands
        let top = min(t.predictionMaxBands, bands.count - 1)
        for b in 0..<top {
            let enabled = s.info.predictionPresent && s.info.predictionUsed >> UInt64(b) & 1 != 0
            for k in bands[b]..<min(bands[b + 1], lines) {
                let q = state + k * stride
                let r0 = q[0], r1 = q[1], cor0 = q[2], cor1 = q[3], var0 = q[4], var1 = q[5]
                let k1: Float = var0 > 1 ? cor0 * roundedEven(a / var0) : 0
                let k2: Float = var1 > 1 ? cor1 * roundedEven(a / var1) : 0
                let estimate = rounded(k1 * r0 + k2 * r1)
                if enabled { s.spectrum[k] += estimate }
                let e0 = s.spectrum[k]
                let e1 = e0 - k1 * r0
                q[3] = truncated(alpha * cor1 + r1 * e1)
                q[5] = truncated(alpha * var1 + 0.5 * (r1 * r1 + e1 * e1))
                q[2] = truncated(alpha * cor0 + r0 * e0)
                q[4] = truncated(alpha * var0 + 0.5 * (r0 * r0 + e0 * e0))
                q[1] = truncated(a * (r0 - k1 * e0))
                q[0] = truncated(a * e0)
            }
        }
        if s.info.predictionPresent, s.info.predictorReset > 0 {
            // predictor_reset_group_number n resets every 30th line from n − 1.
            var k = s.info.predictorReset - 1
            while k < lines {
                resetOne(state + k * stride)
                k += 30
            }
        }
    }
}

import TonearmCore

/// Apple's `kAudioConverterSampleRateConverterComplexity` values: which algorithm the
/// converter's sample-rate stage uses.
public enum SampleRateConverterComplexity: Sendable, Hashable {
    /// 'line', kAudioConverterSampleRateConverterComplexity_Linear: linear interpolation
    /// between neighbouring input frames. Fast, and with no anti-alias filter.
    case linear
    /// 'norm', kAudioConverterSampleRateConverterComplexity_Normal: a Kaiser-windowed sinc
    /// filter, flat within 0.1 dB up to 0.9 of the lower Nyquist, rejecting at least 100 dB.
    case normal
    /// 'bats', kAudioConverterSampleRateConverterComplexity_Mastering: a longer filter, flat
    /// within 0.01 dB up to 0.95 of the lower Nyquist, rejecting at least 140 dB.
    case mastering
    /// 'ffmp' (a Tonearm name): FFmpeg's libswresample with its defaults, as seed 002's
    /// player resamples (`tonearm convert --src ffmpeg`). With the FFmpeg trait only, for
    /// whole sample rates; the quality is not used.
    case ffmpeg

    /// The complexity named by its four characters: "line", "norm", "bats" or "ffmp"; nil otherwise.
    public init?(fourCC: String) {
        switch fourCC {
        case "line": self = .linear
        case "norm": self = .normal
        case "bats": self = .mastering
        case "ffmp": self = .ffmpeg
        default: return nil
        }
    }

    /// 'line', 'norm', 'bats' or 'ffmp'.
    public var fourCC: FourCC {
        switch self {
        case .linear: "line"
        case .normal: "norm"
        case .mastering: "bats"
        case .ffmpeg: "ffmp"
        }
    }
}

/// What a complexity and quality ask of the anti-alias filter.
struct ResamplerFilterSpec: Hashable, Sendable {
    /// Passband edge as a fraction of the lower of the two Nyquist frequencies.
    var passband: Double
    /// Stopband rejection promised, in dB (positive).
    var rejection: Double
    /// Phases per input frame of the fine table when the ratio has no small exact table.
    var finePhases: Int
    /// Accumulate in Double (history and coefficients in Double).
    var usesDouble: Bool

    /// The figures each quality gives (see ``Resampler``'s documentation).
    static func make(_ complexity: SampleRateConverterComplexity, quality: Int) -> ResamplerFilterSpec {
        let q = max(0, min(0x7F, quality))
        switch complexity {
        case .linear, .ffmpeg:
            return ResamplerFilterSpec(passband: 0, rejection: 0, finePhases: 0, usesDouble: false)
        case .normal:
            switch q {
            case ..<0x20: return ResamplerFilterSpec(passband: 0.80, rejection: 70, finePhases: 64, usesDouble: false)
            case ..<0x40: return ResamplerFilterSpec(passband: 0.85, rejection: 85, finePhases: 64, usesDouble: false)
            case ..<0x60: return ResamplerFilterSpec(passband: 0.90, rejection: 100, finePhases: 128, usesDouble: false)
            case ..<0x7F: return ResamplerFilterSpec(passband: 0.90, rejection: 110, finePhases: 256, usesDouble: false)
            default: return ResamplerFilterSpec(passband: 0.91, rejection: 120, finePhases: 512, usesDouble: false)
            }
        case .mastering:
            switch q {
            case ..<0x20: return ResamplerFilterSpec(passband: 0.90, rejection: 110, finePhases: 256, usesDouble: false)
            case ..<0x40: return ResamplerFilterSpec(passband: 0.93, rejection: 125, finePhases: 512, usesDouble: false)
            case ..<0x60: return ResamplerFilterSpec(passband: 0.95, rejection: 140, finePhases: 512, usesDouble: false)
            case ..<0x7F: return ResamplerFilterSpec(passband: 0.95, rejection: 150, finePhases: 1024, usesDouble: false)
            default: return ResamplerFilterSpec(passband: 0.96, rejection: 160, finePhases: 1024, usesDouble: true)
            }
        }
    }
}

/// A Kaiser-windowed sinc low-pass, designed in Double, as a continuous function of time in
/// input frames: `h(t) = 2fc·sinc(2fc·t)·w(t / half)` for |t| ≤ half.
struct KaiserSinc {
    /// Cutoff (−6 dB point) in cycles per input frame.
    let cutoff: Double
    /// Kaiser's β.
    let beta: Double
    /// Taps per output frame: a multiple of 8, so that dot products run in whole SIMD8 steps
    /// (or of 4, for Float engines, whose dot products end with a SIMD4 step).
    let taps: Int
    /// Half the taps: the window spans `t` in −half…half.
    let half: Int
    private let inverseI0Beta: Double
    /// Whether ``phaseTaps(_:)`` scales each phase to a DC gain of exactly 1: right when the
    /// cutoff is under the input's Nyquist (the sums then differ from 1 by the ripple only);
    /// a filter that passes images of the input, as a two-stage design's first stage down
    /// does, keeps its taps as they are (their sums swing with the image at the input rate).
    var normalizesPhases = true

    /// Margin added to the promised rejection, for the table interpolation, the Float
    /// coefficients and the approximations in Kaiser's formulas.
    static let designMargin = 9.0

    /// - Parameters:
    ///   - ratio: output rate / input rate.
    ///   - spec: passband and rejection.
    ///   - maximumTaps: refuse longer filters (the caller throws).
    init?(ratio: Double, spec: ResamplerFilterSpec, maximumTaps: Int) {
        // Lower Nyquist in cycles per input frame; the stopband starts there, so nothing
        // above it aliases or images at more than −rejection.
        let nyquist = 0.5 * min(1, ratio)
        self.init(pass: spec.passband * nyquist, stop: nyquist, rejection: spec.rejection, maximumTaps: maximumTaps)
    }

    /// A low-pass flat to `pass` and rejecting from `stop` (cycles per input frame), by at
    /// least `rejection` dB (the design adds ``designMargin``). Its taps are a multiple of
    /// `granule`, 8 or (for a Float engine's short filters) 4, and at least 8.
    init?(pass: Double, stop: Double, rejection: Double, maximumTaps: Int, granule: Int = 8) {
        let width = stop - pass
        let a = rejection + KaiserSinc.designMargin
        cutoff = (pass + stop) / 2
        // Kaiser's formulas (Oppenheim & Schafer, §7.6): β from the attenuation, length from
        // attenuation and transition width in radians per sample.
        beta = a > 50 ? 0.1102 * (a - 8.7) : (a >= 21 ? 0.5842 * _pow(a - 21, 0.4) + 0.07886 * (a - 21) : 0)
        let length = (a - 7.95) / (2.285 * 2 * Double.pi * width) + 1
        guard length.isFinite, length < Double(maximumTaps) else { return nil }
        taps = max(8, (Int(length.rounded(.up)) + granule - 1) / granule * granule)
        half = taps / 2
        inverseI0Beta = 1 / KaiserSinc.besselI0(beta)
    }

    /// The kernel at time `t` (input frames from the output instant to the input frame).
    func value(_ t: Double) -> Double {
        let r = t / Double(half)
        guard abs(r) <= 1 else { return 0 }
        let w = KaiserSinc.besselI0(beta * (1 - r * r).squareRoot()) * inverseI0Beta
        let x = 2 * cutoff * t
        let sinc = x == 0 ? 1 : _sinPi(x) / (Double.pi * x)
        return 2 * cutoff * sinc * w
    }

    /// The taps for an output instant `phase` (0 ≤ phase ≤ 1) frames after the input frame
    /// `n`, applied to input frames `n − half + 1 … n + half`, scaled to a DC gain of exactly 1
    /// (unless ``normalizesPhases`` is false).
    func phaseTaps(_ phase: Double) -> [Double] {
        var c = (0..<taps).map { value(phase + Double(half - 1 - $0)) }
        let sum = c.reduce(0, +)
        if normalizesPhases && sum != 0 { for i in c.indices { c[i] /= sum } }
        return c
    }

    /// The modified Bessel function of the first kind, order 0, by its power series.
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0
        let q = x * x / 4
        var k = 1.0
        while term > sum * 1e-17 {
            term *= q / (k * k)
            sum += term
            k += 1
        }
        return sum
    }
}

// Foundation-free sine and power for the filter design (run once per resampler, in Double).

/// sin(π·x) to Double precision: reduces x exactly to −1…1, then to |πx| ≤ π/4, and sums
/// the Taylor series there.
func _sinPi(_ x: Double) -> Double {
    var y = x - 2 * (x / 2).rounded() // exact: −1…1
    var sign = 1.0
    if y < 0 { y = -y; sign = -1 }
    if y > 0.5 { y = 1 - y } // sin(π − a) = sin a, now 0…0.5
    let useCos = y > 0.25
    let z = Double.pi * (useCos ? 0.5 - y : y)
    let z2 = z * z
    var term = useCos ? 1.0 : z
    var sum = term
    var n = useCos ? 0.0 : 1.0
    for _ in 0..<12 {
        term *= -z2 / ((n + 1) * (n + 2))
        n += 2
        sum += term
    }
    return sign * sum
}

/// x^y for x > 0 by exp(y·ln x), both by series; only for Kaiser's β at low attenuations.
func _pow(_ x: Double, _ y: Double) -> Double {
    guard x > 0 else { return 0 }
    return _exp(y * _log(x))
}

func _log(_ x: Double) -> Double {
    // x = m · 2^e with m in [1, 2); ln m by atanh series.
    var m = x, e = 0.0
    while m >= 2 { m /= 2; e += 1 }
    while m < 1 { m *= 2; e -= 1 }
    let s = (m - 1) / (m + 1), s2 = s * s
    var term = s, sum = 0.0, k = 1.0
    for _ in 0..<40 { sum += term / k; term *= s2; k += 2 }
    return 2 * sum + e * 0.6931471805599453
}

func _exp(_ x: Double) -> Double {
    // e^x = (e^(x/2^k))^(2^k)
    var k = 0, r = x
    while abs(r) > 0.5 { r /= 2; k += 1 }
    var term = 1.0, sum = 1.0
    for i in 1..<25 { term *= r / Double(i); sum += term }
    for _ in 0..<k { sum *= sum }
    return sum
}

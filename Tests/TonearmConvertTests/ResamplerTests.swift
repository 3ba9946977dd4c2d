import Foundation
import XCTest
import TonearmCore
@testable import TonearmConvert
import TonearmTestSupport

/// The sample-rate stage: measured passband ripple, alias and image levels, delay
/// compensation, exact lengths, chunk invariance, and the refusals.
final class ResamplerTests: XCTestCase {
    // MARK: Helpers

    /// Resamples whole channels (process, then flush) and returns the output channels.
    func resample(_ r: Resampler, _ x: [[Float]]) throws -> [[Float]] {
        try resample(r, x, chunks: [x[0].count])
    }

    /// Resamples in chunks of the given sizes (cycled until the input ends).
    func resample(_ r: Resampler, _ x: [[Float]], chunks: [Int]) throws -> [[Float]] {
        let ch = x.count, n = x[0].count
        var out = [[Float]](repeating: [], count: ch)
        var done = 0, which = 0
        while done < n {
            let size = max(1, min(chunks[which % chunks.count], n - done))
            which += 1
            let input = PCMBuffer(commonFormat: .float32, sampleRate: r.inputRate, channels: ch, interleaved: false, frameCapacity: size)
            input.withUnsafeMutableSamples(Float.self) { p in
                for c in 0..<ch { for i in 0..<size { p[input.channelStart(c) + i] = x[c][done + i] } }
            }
            input.frameLength = size
            let output = PCMBuffer(commonFormat: .float32, sampleRate: r.outputRate, channels: ch, interleaved: false,
                                   frameCapacity: r.maximumOutputFrames(forInputFrames: size))
            try r.process(input, into: output)
            for c in 0..<ch { out[c] += output.floatSamples(channel: c) }
            done += size
        }
        let tail = PCMBuffer(commonFormat: .float32, sampleRate: r.outputRate, channels: ch, interleaved: false,
                             frameCapacity: r.maximumOutputFrames(forInputFrames: 0))
        XCTAssertLessThanOrEqual(r.pendingOutputFrames, tail.frameCapacity)
        try r.flush(into: tail)
        for c in 0..<ch { out[c] += tail.floatSamples(channel: c) }
        return out
    }

    /// A sum of sines, computed in Double: (frequency, amplitude).
    func tones(_ parts: [(Double, Double)], rate: Double, count: Int) -> [Float] {
        (0..<count).map { i in
            Float(parts.reduce(0.0) { $0 + $1.1 * sin(2 * Double.pi * $1.0 * Double(i) / rate) })
        }
    }

    /// A Kaiser window with β = 24: side lobes near −200 dB, so a −140 dB component a few
    /// hundred hertz from a full-scale tone is measured cleanly.
    static func window(_ count: Int) -> [Double] {
        (0..<count).map { i in
            let r = 2 * Double(i) / Double(count - 1) - 1
            return KaiserSinc.besselI0(24 * max(0, 1 - r * r).squareRoot()) / KaiserSinc.besselI0(24)
        }
    }

    static let analysisLength = 8192
    static let analysisWindow = window(analysisLength)

    /// The amplitude of the component at `frequency` in `y[start ..< start + 8192]`: a
    /// windowed DFT at that exact frequency, in Double.
    func amplitude(_ y: [Float], start: Int, frequency: Double, rate: Double) -> Double {
        let w = ResamplerTests.analysisWindow
        var re = 0.0, im = 0.0, sum = 0.0
        let step = 2 * Double.pi * frequency / rate
        for i in 0..<w.count {
            let v = Double(y[start + i]) * w[i], a = step * Double(start + i)
            re += v * cos(a)
            im -= v * sin(a)
            sum += w[i]
        }
        return 2 * (re * re + im * im).squareRoot() / sum
    }

    func dB(_ x: Double) -> Double { 20 * log10(max(x, 1e-30)) }

    /// Folds a frequency into 0…rate/2, where it shows after sampling at `rate`.
    func fold(_ f: Double, _ rate: Double) -> Double {
        var g = f.truncatingRemainder(dividingBy: rate)
        if g < 0 { g += rate }
        return g > rate / 2 ? rate - g : g
    }

    /// Input frames that give the analysis window after skipping 1000 output frames.
    func inputLength(_ inRate: Double, _ outRate: Double) -> Int {
        Int(Double(ResamplerTests.analysisLength + 1500) * inRate / outRate) + 64
    }

    static let qualities = [0x40, 0x60, 0x7F]

    // MARK: Frequency response

    /// Gain at frequencies up to 0.9 ('norm') or 0.95 ('bats') of the lower Nyquist is
    /// within ±0.1 dB or ±0.01 dB. Measured: under 0.0001 dB for both.
    func testPassbandRipple() throws {
        for (complexity, edge, limit) in [(SampleRateConverterComplexity.normal, 0.9, 0.1), (.mastering, 0.95, 0.01)] {
            for quality in ResamplerTests.qualities {
                for (inRate, outRate) in [(44100.0, 48000.0), (48000, 44100), (48000, 16000)] {
                    let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: complexity, quality: quality)
                    let nyquist = min(inRate, outRate) / 2
                    let freqs = [0.02, 0.25, 0.5, 0.75, 0.9, 1.0].map { $0 * edge * nyquist }
                    let x = tones(freqs.map { ($0, 0.15) }, rate: inRate, count: inputLength(inRate, outRate))
                    let y = try resample(r, [x])[0]
                    var worst = 0.0
                    for f in freqs {
                        let gain = dB(amplitude(y, start: 1000, frequency: f, rate: outRate) / 0.15)
                        worst = max(worst, abs(gain))
                    }
                    XCTAssertLessThanOrEqual(worst, limit, "\(complexity.fourCC) q\(quality) \(inRate)→\(outRate): ripple \(worst) dB")
                }
            }
        }
    }

    /// Downsampling: tones above the output Nyquist alias at ≤ −100 dB ('norm') or ≤ −140 dB
    /// ('bats') relative to their own level.
    func testDownsamplingAliases() throws {
        for (complexity, limit) in [(SampleRateConverterComplexity.normal, -100.0), (.mastering, -140)] {
            for quality in ResamplerTests.qualities {
                for (inRate, outRate) in [(48000.0, 44100.0), (96000, 44100), (48000, 16000), (48000, 48000 / 1.001)] {
                    let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: complexity, quality: quality)
                    let nyquist = outRate / 2
                    // Just above the Nyquist, 1.1 × it, and deeper in the stopband (each
                    // alias lands apart from the others).
                    let freqs = [nyquist + 30, 1.1 * nyquist, 1.37 * nyquist, 0.93 * inRate / 2].filter { $0 > nyquist && $0 < inRate / 2 }
                    let x = tones(freqs.map { ($0, 0.2) }, rate: inRate, count: inputLength(inRate, outRate))
                    let y = try resample(r, [x])[0]
                    for f in freqs {
                        let level = dB(amplitude(y, start: 1000, frequency: fold(f, outRate), rate: outRate) / 0.2)
                        XCTAssertLessThanOrEqual(level, limit,
                                                 "\(complexity.fourCC) q\(quality) \(inRate)→\(outRate): \(f) Hz aliases at \(level) dB")
                    }
                }
            }
        }
    }

    /// Upsampling: the images of in-band tones are ≤ −100 dB ('norm') or ≤ −140 dB ('bats').
    func testUpsamplingImages() throws {
        for (complexity, limit, edge) in [(SampleRateConverterComplexity.normal, -100.0, 0.9), (.mastering, -140, 0.95)] {
            for quality in ResamplerTests.qualities {
                for (inRate, outRate) in [(44100.0, 48000.0), (8000, 44100), (44100, 48000 / 1.001)] {
                    let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: complexity, quality: quality)
                    for f in [0.3 * inRate / 2, edge * inRate / 2] {
                        r.reset()
                        let x = tones([(f, 0.9)], rate: inRate, count: inputLength(inRate, outRate))
                        let y = try resample(r, [x])[0]
                        var images: [Double] = []
                        for k in 1...Int(outRate / inRate) + 1 {
                            for g in [Double(k) * inRate - f, Double(k) * inRate + f] {
                                let a = fold(g, outRate)
                                if abs(a - f) > 200 { images.append(a) }
                            }
                        }
                        for a in images {
                            let level = dB(amplitude(y, start: 1000, frequency: a, rate: outRate) / 0.9)
                            XCTAssertLessThanOrEqual(level, limit,
                                                     "\(complexity.fourCC) q\(quality) \(inRate)→\(outRate): \(f) Hz images at \(a) Hz, \(level) dB")
                        }
                    }
                }
            }
        }
    }

    /// 'bats' Medium and High run in Float: what Float costs is measured against the same
    /// filter in Double, and both stay under −140 dB.
    func testMasteringFloatAgainstDouble() throws {
        for quality in [0x40, 0x60] {
            let f = 1.1 * 22050
            let x = tones([(f, 0.9)], rate: 48000, count: inputLength(48000, 44100))
            for forceDouble in [false, true] {
                let r = try Resampler(inputRate: 48000, outputRate: 44100, channels: 1, complexity: .mastering, quality: quality,
                                      forceFloat: false, forceDouble: forceDouble)
                let y = try resample(r, [x])[0]
                let level = dB(amplitude(y, start: 1000, frequency: fold(f, 44100), rate: 44100) / 0.9)
                XCTAssertLessThanOrEqual(level, -140, "q\(quality) double \(forceDouble): \(level) dB")
            }
        }
    }

    /// THD+N of a 997 Hz sine at −1 dBFS, 44.1 → 48 kHz: everything in the output but the
    /// tone (fitted by least squares at exactly 997 Hz over 40 000 frames past the start),
    /// relative to the tone. Float's own rounding of the input and output sits near −152 dB.
    func thdPlusNoise(_ complexity: SampleRateConverterComplexity, quality: Int, forceDouble: Bool = false,
                      from inRate: Double = 44100, to outRate: Double = 48000) throws -> Double
    {
        let f = 997.0, amplitude = 0.891
        let x = tones([(f, amplitude)], rate: inRate, count: Int(inRate))
        let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: complexity, quality: quality,
                              forceDouble: forceDouble)
        let y = try resample(r, [x])[0]
        let range = 2000..<42000
        // Least squares on sin, cos and a constant: the three normal equations.
        var m = [[Double]](repeating: [0, 0, 0], count: 3), v = [0.0, 0.0, 0.0]
        for k in range {
            let a = 2 * Double.pi * f * Double(k) / outRate
            let b = [sin(a), cos(a), 1.0]
            for i in 0..<3 {
                v[i] += b[i] * Double(y[k])
                for j in 0..<3 { m[i][j] += b[i] * b[j] }
            }
        }
        // Gaussian elimination of the 3 × 3 system.
        for i in 0..<3 {
            for j in (i + 1)..<3 {
                let q = m[j][i] / m[i][i]
                for c in 0..<3 { m[j][c] -= q * m[i][c] }
                v[j] -= q * v[i]
            }
        }
        var w = [0.0, 0.0, 0.0]
        for i in (0..<3).reversed() {
            var s = v[i]
            for c in (i + 1)..<3 { s -= m[i][c] * w[c] }
            w[i] = s / m[i][i]
        }
        var residual = 0.0, tone = 0.0
        for k in range {
            let a = 2 * Double.pi * f * Double(k) / outRate
            let fit = w[0] * sin(a) + w[1] * cos(a)
            residual += (Double(y[k]) - fit - w[2]) * (Double(y[k]) - fit - w[2])
            tone += fit * fit
        }
        return 10 * log10(max(residual, 1e-300) / tone)
    }

    /// THD+N of a 997 Hz sine, 44.1 → 48 kHz. Measured: 'norm' High −130.5 dB (two stages in
    /// Float, stage 2 with 16 taps: its images of the tone; 24 taps gave −133.7 dB, where the
    /// Float FFT's rounding shows; one stage gave −140.9 dB at twice the time); 'bats'
    /// (two stages, Double inside) Low −143.0, Medium −149.7, High −150.0 and Max −149.9 dB;
    /// 'bats' High forced to one stage in Double −150.0 dB. soxr at precision 28 gives
    /// −150.0 dB on this measurement: the floor that Float input and output set.
    func testSineTHDPlusNoise() throws {
        let cases: [(SampleRateConverterComplexity, Int, Bool, Double)] = [
            (.normal, 0x60, false, -130.3), (.mastering, 0x20, false, -142.5), (.mastering, 0x40, false, -149.3),
            (.mastering, 0x60, false, -149.8), (.mastering, 0x60, true, -149.8), (.mastering, 0x7F, false, -149.6),
        ]
        for (complexity, quality, forceDouble, limit) in cases {
            let level = try thdPlusNoise(complexity, quality: quality, forceDouble: forceDouble)
            XCTAssertLessThanOrEqual(level, limit, "\(complexity.fourCC) q\(quality) double \(forceDouble)")
        }
        // Down, 48 → 44.1 kHz: 'norm' High in two stages −129.3 dB (one stage gave −140.2 dB at
        // twice the instructions).
        XCTAssertLessThanOrEqual(try thdPlusNoise(.normal, quality: 0x60, from: 48000, to: 44100), -129.1)
        // 'bats' High down in two stages in Double: −150.2 dB (one stage in Float: −139.5).
        XCTAssertLessThanOrEqual(try thdPlusNoise(.mastering, quality: 0x60, from: 48000, to: 44100), -149.9)
    }

    // MARK: Time alignment and lengths

    /// Output frame k is the input at time k·in/out: a resampled tone matches the ideal tone
    /// at the output rate in phase, and an impulse's peak lands where its time says.
    func testDelayCompensation() throws {
        for complexity in [SampleRateConverterComplexity.normal, .mastering] {
            for (inRate, outRate) in [(44100.0, 48000.0), (48000, 44100), (44100, 48000 / 1.001)] {
                let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: complexity)
                let f = 997.0
                let x = tones([(f, 0.5)], rate: inRate, count: 6000)
                let y = try resample(r, [x])[0]
                var worst = 0.0
                for k in 1000..<4000 {
                    let ideal = 0.5 * sin(2 * Double.pi * f * Double(k) / outRate)
                    worst = max(worst, abs(Double(y[k]) - ideal))
                }
                // A shift of one output frame would be an error of about 0.07.
                XCTAssertLessThan(worst, 2e-6, "\(complexity.fourCC) \(inRate)→\(outRate)")
            }
        }
        // An impulse at input frame 300 upsampled ×2: the peak is output frame 600, symmetric around it.
        let r = try Resampler(inputRate: 24000, outputRate: 48000, channels: 1)
        var x = [Float](repeating: 0, count: 1000)
        x[300] = 1
        let y = try resample(r, [x])[0]
        XCTAssertEqual(y.count, 2000)
        XCTAssertEqual(y.indices.max { y[$0] < y[$1] }, 600)
        for d in 1..<100 { XCTAssertEqual(y[600 - d], y[600 + d], accuracy: 1e-7) }
    }

    /// A stream of N frames gives ceil(N · out / in) frames, for each complexity and ratio.
    func testExactOutputLengths() throws {
        let ratios: [(Double, Double)] = [(44100, 48000), (48000, 44100), (48000, 16000), (44100, 22050), (8000, 44100),
                                          (96000, 44100), (44100, 44101), (22050, 22050)]
        for complexity in [SampleRateConverterComplexity.linear, .normal, .mastering] {
            for (inRate, outRate) in ratios {
                let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: complexity, quality: 0x20)
                for n in [0, 1, 2, 7, 147, 160, 4097] {
                    let y = try resample(r, [[Float](repeating: 0.25, count: n)], chunks: [n == 0 ? 1 : n])[0]
                    let inI = Int(inRate), outI = Int(outRate)
                    let expected = (n * outI + inI - 1) / inI
                    XCTAssertEqual(y.count, n == 0 ? 0 : expected, "\(complexity.fourCC) \(inRate)→\(outRate) N=\(n)")
                }
            }
        }
        // Decimal rates are exact too: 44144.1 / 44100 is 1001/1000.
        let r = try Resampler(inputRate: 44100, outputRate: 44144.1, channels: 1)
        XCTAssertTrue(r.usesExactTable)
        XCTAssertEqual(try resample(r, [[Float](repeating: 0, count: 10000)])[0].count, 10010)
        XCTAssertEqual(try resample(r, [[Float](repeating: 0, count: 10001)])[0].count, 10012)
        // Other rates step by M/2^32 frames, on the fine table: 44100 → 48000/1.001 gives
        // ceil(10000 · 1.08735...) = 10874.
        let odd = try Resampler(inputRate: 44100, outputRate: 48000 / 1.001, channels: 1)
        XCTAssertFalse(odd.usesExactTable)
        XCTAssertEqual(try resample(odd, [[Float](repeating: 0, count: 10000)])[0].count, 10874)
    }

    /// Any chunking, one frame at a time or random sizes, gives bit-identical output, and a
    /// channel comes out the same alone as beside others: bit for bit, except through the
    /// two-stage designs' FFTs, which transform channels in pairs (there the partner moves a
    /// channel's rounding, by under 2^-20).
    func testChunkInvariance() throws {
        var rng = SeededGenerator(seed: 42)
        let configs: [(Double, Double, SampleRateConverterComplexity, Int)] = [
            (44100, 48000, .normal, 0x60), (48000, 44100, .mastering, 0x40), (48000, 16000, .normal, 0x40),
            (44100, 48000 / 1.001, .normal, 0x60), (8000, 44100, .mastering, 0x7F), (48000, 8000, .linear, 0x60),
            (44100, 48000, .linear, 0x60), (44100, 44100, .normal, 0x60),
            // Two stages ('bats' up by less than 2, 'norm' up or down by less than 2): over several
            // FFT blocks.
            (44100, 48000, .mastering, 0x60), (32000, 44100, .mastering, 0x20), (32000, 44100, .normal, 0x7F),
            (48000, 44100, .normal, 0x60), (48000, 32000, .normal, 0x20), (48000, 44100, .mastering, 0x60),
        ]
        for (inRate, outRate, complexity, quality) in configs {
            let within2 = outRate < 2 * inRate && 2 * outRate > inRate && inRate != outRate
            let n = within2 && complexity != .linear ? 9000 : 2000
            // Three channels: a pair that shares the taps' loads, and one alone.
            let x = (0..<3).map { c in (0..<n).map { _ in Float.random(in: -1...1, using: &rng) / Float(c + 1) } }
            let whole = try resample(try Resampler(inputRate: inRate, outputRate: outRate, channels: 3, complexity: complexity, quality: quality), x)
            for c in [0, 2] {
                let alone = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: complexity, quality: quality)
                let mono = try resample(alone, [x[c]])
                if alone.roundsChannelsInPairs {
                    XCTAssertEqual(mono[0].count, whole[c].count)
                    let worst = zip(mono[0], whole[c]).map { abs($0 - $1) }.max() ?? 0
                    // Channel 2 has no partner in either run; Double's rounding ('bats') rarely
                    // reaches the Float output.
                    if c == 0 && complexity == .normal { XCTAssertGreaterThan(worst, 0, "channel 0 alone: the pairing should show") }
                    XCTAssertLessThan(worst, 1.0 / 1_048_576, "channel \(c) alone")
                } else {
                    XCTAssertEqual(mono[0].map(\.bitPattern), whole[c].map(\.bitPattern), "channel \(c) alone")
                }
            }
            let patterns: [[Int]] = [[1], [7], [4096], (0..<50).map { _ in Int.random(in: 1...900, using: &rng) }]
            for chunks in patterns {
                let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 3, complexity: complexity, quality: quality)
                let y = try resample(r, x, chunks: chunks)
                XCTAssertEqual(y.map { $0.map(\.bitPattern) }, whole.map { $0.map(\.bitPattern) },
                               "\(complexity.fourCC) \(inRate)→\(outRate) chunks \(chunks.prefix(3))")
            }
        }
    }

    /// reset() forgets the stream: the next one comes out as from a fresh resampler, and so
    /// does a stream after flush.
    func testResetStartsANewStream() throws {
        var rng = SeededGenerator(seed: 7)
        let a = [(0..<2000).map { _ in Float.random(in: -1...1, using: &rng) }]
        let b = [(0..<1500).map { _ in Float.random(in: -1...1, using: &rng) }]
        for complexity in [SampleRateConverterComplexity.linear, .normal, .mastering] {
            let fresh = try resample(try Resampler(inputRate: 48000, outputRate: 44100, channels: 1, complexity: complexity), b)
            let r = try Resampler(inputRate: 48000, outputRate: 44100, channels: 1, complexity: complexity)
            let input = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 1, interleaved: false, frameCapacity: 700)
            input.frameLength = 700
            let sink = PCMBuffer(commonFormat: .float32, sampleRate: 44100, channels: 1, interleaved: false,
                                 frameCapacity: r.maximumOutputFrames(forInputFrames: 700))
            try r.process(input, into: sink)
            r.reset()
            XCTAssertEqual(try resample(r, b), fresh)
            _ = try resample(r, a)
            XCTAssertEqual(try resample(r, b), fresh)
        }
    }

    // MARK: Linear and copy

    /// 'line' is linear interpolation: a ramp stays the ramp at the output times.
    func testLinearKeepsARamp() throws {
        for (inRate, outRate) in [(44100.0, 48000.0), (48000, 44100), (8000, 44100), (44100, 48000 / 1.001)] {
            let r = try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: .linear)
            XCTAssertEqual(r.filterLength, 2)
            let n = 2000
            let x = (0..<n).map { Float($0) / 1024 }
            let y = try resample(r, [x], chunks: [333])[0]
            for k in y.indices {
                let t = Double(k) * inRate / outRate
                guard t <= Double(n - 1) else { break }
                XCTAssertEqual(Double(y[k]), t / 1024, accuracy: 1e-6 * max(1, t / 1024), "\(inRate)→\(outRate) frame \(k)")
            }
        }
    }

    /// Equal rates copy the input bit for bit.
    func testEqualRatesCopy() throws {
        let r = try Resampler(inputRate: 44100, outputRate: 44100, channels: 2, complexity: .mastering)
        let x: [[Float]] = [[1, -0.5, 0.25, .leastNonzeroMagnitude], [0, 1, 2, 3]]
        XCTAssertEqual(try resample(r, x, chunks: [3]), x)
        XCTAssertEqual(r.maximumOutputFrames(forInputFrames: 10), 10)
        // Within 10^-6 Hz the rates count as equal.
        let near = try Resampler(inputRate: 44100, outputRate: 44100.0000001, channels: 2, complexity: .mastering)
        XCTAssertEqual(near.filterLength, 0)
        XCTAssertEqual(try resample(near, x, chunks: [1]), x)
    }

    // MARK: Refusals

    /// Absurd rates, ratios and channel counts throw 'fmt?' before any table is made.
    func testInvalidArgumentsThrow() {
        let cases: [(Double, Double, Int, Int)] = [
            (0, 48000, 2, 0x60), (44100, 0, 2, 0x60), (-44100, 48000, 2, 0x60), (.nan, 48000, 2, 0x60),
            (44100, .infinity, 2, 0x60), (44100, 48000, 0, 0x60), (44100, 48000, 65, 0x60), (1, 1e9, 1, 0x60),
            (1e9, 1, 1, 0x60), (8000, 8000 * 300, 1, 0x60), (44100, 48000, 2, 128), (44100, 48000, 2, -1),
        ]
        for (inRate, outRate, channels, quality) in cases {
            XCTAssertThrowsError(try Resampler(inputRate: inRate, outputRate: outRate, channels: channels, quality: quality)) { e in
                XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat, "\(inRate)→\(outRate) ×\(channels)")
            }
        }
    }

    /// Too little room throws 'otsz' and consumes nothing; wrong buffers throw 'fmt?'.
    func testBufferChecks() throws {
        let r = try Resampler(inputRate: 44100, outputRate: 48000, channels: 2)
        let input = PCMBuffer(commonFormat: .float32, sampleRate: 44100, channels: 2, interleaved: false, frameCapacity: 100)
        input.frameLength = 100
        let small = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: false, frameCapacity: 50)
        XCTAssertThrowsError(try r.process(input, into: small)) { e in XCTAssertEqual((e as? AudioError)?.code, .invalidOutputSize) }
        XCTAssertEqual(r.pendingOutputFrames, 0)
        let interleaved = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: true, frameCapacity: 1000)
        XCTAssertThrowsError(try r.process(input, into: interleaved)) { e in XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat) }
        let ints = PCMBuffer(commonFormat: .int16, sampleRate: 48000, channels: 2, interleaved: false, frameCapacity: 1000)
        XCTAssertThrowsError(try r.process(input, into: ints)) { e in XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat) }
        let mono = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 1, interleaved: false, frameCapacity: 1000)
        XCTAssertThrowsError(try r.process(input, into: mono)) { e in XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat) }
        // The default ('norm', up by less than 2) runs in two stages: a call may complete one of
        // stage 1's blocks, so the room it asks for is a block's outputs, not 100 frames'.
        let room = r.maximumOutputFrames(forInputFrames: 100)
        XCTAssertGreaterThan(room, 2048)
        let big = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: false, frameCapacity: room)
        try r.process(input, into: big)
        let pending = r.pendingOutputFrames
        XCTAssertEqual(big.frameLength + pending, 109) // ceil(100 · 160 / 147)
        let tiny = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: false, frameCapacity: pending - 1)
        XCTAssertThrowsError(try r.flush(into: tiny)) { e in XCTAssertEqual((e as? AudioError)?.code, .invalidOutputSize) }
        try r.flush(into: big)
        XCTAssertEqual(big.frameLength, 109)
    }

    // MARK: Oracle

    /// Against sox's `rate -v` (a different, linear-phase design that also compensates its
    /// delay): three tones up to 15 kHz resampled both ways agree to better than −100 dB
    /// (measured −121 and −122 dB), sample for sample, so neither is shifted against the other.
    func testAgreesWithSox() throws {
        let sox = try requireTool("sox")
        let dir = makeTemporaryDirectory()
        for (inRate, outRate) in [(48000.0, 44100.0), (44100, 48000)] {
            let x = tones([(997, 0.3), (5000, 0.3), (15000, 0.3)], rate: inRate, count: 12000)
            var raw = [UInt8]()
            for v in x { withUnsafeBytes(of: v.bitPattern.littleEndian) { raw += $0 } }
            let path = dir + "/tones-\(Int(inRate)).f32"
            try writeWholeFile(path, raw)
            let bytes = try runToolData(sox, ["-D", "-t", "f32", "-r", String(Int(inRate)), "-c", "1", path,
                                              "-t", "f32", "-", "rate", "-v", String(Int(outRate))])
            let theirs = stride(from: 0, to: bytes.count - 3, by: 4).map {
                Float(bitPattern: UInt32(bytes[$0]) | UInt32(bytes[$0 + 1]) << 8 | UInt32(bytes[$0 + 2]) << 16 | UInt32(bytes[$0 + 3]) << 24)
            }
            let ours = try resample(try Resampler(inputRate: inRate, outputRate: outRate, channels: 1, complexity: .mastering), [x])[0]
            XCTAssertEqual(ours.count, (12000 * Int(outRate) + Int(inRate) - 1) / Int(inRate))
            XCTAssertGreaterThan(theirs.count, 9000)
            var error = 0.0, signal = 0.0
            for k in 1000..<9000 {
                error += Double(ours[k] - theirs[k]) * Double(ours[k] - theirs[k])
                signal += Double(theirs[k]) * Double(theirs[k])
            }
            let level = 10 * log10(max(error, 1e-30) / signal)
            XCTAssertLessThan(level, -100, "\(inRate)→\(outRate): \(level) dB from sox")
        }
    }

    func testComplexityFourCC() {
        for c in [SampleRateConverterComplexity.linear, .normal, .mastering] {
            XCTAssertEqual(SampleRateConverterComplexity(fourCC: c.fourCC.string), c)
        }
        XCTAssertEqual(SampleRateConverterComplexity.mastering.fourCC, FourCC("bats"))
        XCTAssertNil(SampleRateConverterComplexity(fourCC: "fast"))
    }

    /// Converters of the same design share one coefficient table, designed once; another
    /// design gets its own. Sharing is safe because a table is never written after it is made.
    func testSameDesignSharesItsTable() throws {
        let a = try Resampler(inputRate: 44100, outputRate: 48000, channels: 2, complexity: .mastering)
        let b = try Resampler(inputRate: 44100, outputRate: 48000, channels: 1, complexity: .mastering)
        let c = try Resampler(inputRate: 44100, outputRate: 48000, channels: 2, complexity: .mastering, quality: 0x7F)
        let d = try Resampler(inputRate: 48000, outputRate: 44100, channels: 2, complexity: .mastering)
        let table = try XCTUnwrap(a.coefficientTable)
        XCTAssertEqual(b.coefficientTable, table)
        XCTAssertNotEqual(c.coefficientTable, table)
        XCTAssertNotEqual(d.coefficientTable, table)
        XCTAssertNil(try Resampler(inputRate: 44100, outputRate: 48000, channels: 2, complexity: .linear).coefficientTable)
        // A design made again after its first converter is gone still gives the same output.
        let x = [(0..<3000).map { Float(sin(Double($0) * 0.05)) }]
        let first = try resample(try Resampler(inputRate: 44100, outputRate: 48000, channels: 1, complexity: .mastering), x)
        XCTAssertEqual(try resample(b, x), first)
    }
}

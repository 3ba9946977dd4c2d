import Foundation
import XCTest
@testable import TonearmCodecs

/// The SBR QMF banks (ISO/IEC 14496-3 §4.6.18.4): the fast paths against the standard's
/// matrixing, and the pair's near-perfect reconstruction, which only the right window and
/// the right sample order give.
final class SBRQMFTests: XCTestCase {
    func testWindowSamplesAndSymmetry() {
        let c = SBRTables.qmfWindow
        XCTAssertEqual(c.count, 640)
        XCTAssertEqual(c[0], 0)
        XCTAssertEqual(c[1], -0.0005525286)
        XCTAssertEqual(c[128], 0.0132718220)
        XCTAssertEqual(c[320], 0.8537385600)
        XCTAssertEqual(c[384], -0.3611589903)
        XCTAssertEqual(c[512], -0.0132718220)
        XCTAssertEqual(c[639], -0.0005525286)
        XCTAssertEqual(c[321], c[319])
    }

    /// Deterministic noise in ±1.
    func noise(_ count: Int, seed: UInt32 = 1) -> [Float] {
        var s = seed
        return (0..<count).map { _ in
            s = s &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: s)) / 2_147_483_648
        }
    }

    func testFastAnalysisMatchesTheMatrixing() {
        let a = SBRAnalysisFilterbank(), b = SBRAnalysisFilterbank()
        let input = noise(32 * 20)
        var re1 = [Float](repeating: 0, count: 32), im1 = re1, re2 = re1, im2 = re1
        var worst: Float = 0, peak: Float = 0
        for slot in 0..<20 {
            input.withUnsafeBufferPointer { p in
                a.analyzeDirect(p.baseAddress! + 32 * slot, real: &re1, imag: &im1)
                b.analyze(p.baseAddress! + 32 * slot, real: &re2, imag: &im2)
            }
            for k in 0..<32 {
                worst = max(worst, abs(re1[k] - re2[k]), abs(im1[k] - im2[k]))
                peak = max(peak, abs(re1[k]), abs(im1[k]))
            }
        }
        XCTAssertGreaterThan(peak, 1000)
        XCTAssertLessThan(worst / peak, 1e-5)
    }

    func testFastSynthesisMatchesTheMatrixing() {
        let a = SBRSynthesisFilterbank(), b = SBRSynthesisFilterbank()
        let values = noise(128 * 20, seed: 7).map { $0 * 20000 }
        var out1 = [Float](repeating: 0, count: 64), out2 = out1
        var worst: Float = 0, peak: Float = 0
        for slot in 0..<20 {
            values.withUnsafeBufferPointer { p in
                let re = p.baseAddress! + 128 * slot
                a.synthesizeDirect(real: re, imag: re + 64, into: &out1)
                b.synthesize(real: re, imag: re + 64, into: &out2)
            }
            for k in 0..<64 {
                worst = max(worst, abs(out1[k] - out2[k]))
                peak = max(peak, abs(out1[k]))
            }
        }
        XCTAssertGreaterThan(peak, 0.01)
        XCTAssertLessThan(worst / peak, 1e-5)
    }

    /// A 1 kHz tone at 22.05 kHz through the analysis, the 32 bands into the lower half of the
    /// synthesis: the output is the tone at 44.1 kHz, 578 samples later, with the prototype's
    /// ripple (−0.01 dB here) and no aliasing to speak of.
    func testAnalysisThenSynthesisReconstructsTheSignalDelayed() {
        let rate = 22050.0, f = 1000.0
        let slots = 200
        let input = (0..<32 * slots).map { Float(0.5 * sin(2 * .pi * f * Double($0) / rate)) }
        let analysis = SBRAnalysisFilterbank(), synthesis = SBRSynthesisFilterbank()
        var re = [Float](repeating: 0, count: 64), im = re
        var output = [Float](repeating: 0, count: 64 * slots)
        for slot in 0..<slots {
            re.withUnsafeMutableBufferPointer { r in
                im.withUnsafeMutableBufferPointer { i in
                    input.withUnsafeBufferPointer { analysis.analyze($0.baseAddress! + 32 * slot, real: r.baseAddress!, imag: i.baseAddress!) }
                    for k in 32..<64 { r[k] = 0; i[k] = 0 }
                    output.withUnsafeMutableBufferPointer { synthesis.synthesize(real: r.baseAddress!, imag: i.baseAddress!, into: $0.baseAddress! + 64 * slot) }
                }
            }
        }
        // Find the delay and gain that best fit, then check the residual.
        var best = (delay: 0, error: Double.infinity)
        for delay in 0..<1000 {
            var e = 0.0
            for n in 4000..<6000 {
                let expected = 0.5 * sin(2 * .pi * f * Double(n - delay) / (2 * rate))
                e += (Double(output[n]) - expected) * (Double(output[n]) - expected)
            }
            if e < best.error { best = (delay, e) }
        }
        XCTAssertEqual(best.delay, SBRDecoder.qmfDelay)
        // What is left is the prototype's passband ripple: a gain of 0.99886 at 1 kHz.
        let rms = (best.error / 2000).squareRoot()
        XCTAssertLessThan(rms, 5e-4)
    }
}

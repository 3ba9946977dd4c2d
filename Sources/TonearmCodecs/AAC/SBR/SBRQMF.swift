import Foundation
import TonearmCore

/// The complex QMF banks of SBR (ISO/IEC 14496-3 §4.6.18.4): a 32-band analysis of the core
/// output and a 64-band synthesis at twice its rate, both built on the 640-tap prototype
/// window c[i].
///
/// The subband domain is the standard's, whose energies the envelope data are measured in:
/// its time signal has the scale of 16-bit PCM. The core's float samples (full scale ±1) are
/// taken × 32768 on the way in and the output is × 1/32768 on the way out, as FFmpeg folds
/// into its transforms.
///
/// Each bank has the standard's direct matrixing (``analyzeDirect``, ``synthesizeDirect``, the
/// reference the tests hold the fast paths to) and a fast one (``analyze``, ``synthesize``):
/// a 32-point complex FFT for the analysis, two 64-point DCT-IVs (each a 32-point complex
/// FFT) for the synthesis, both TonearmCore's.
final class SBRAnalysisFilterbank {
    /// x, the 320 newest input samples, newest first, in a longer buffer that it slides down
    /// through, so the shift by 32 per slot is a pointer move, with one copy every 64 slots.
    private let history: UnsafeMutablePointer<Float>
    private var offset = 0
    private static let historyLength = 320 + 32 * 64
    private let u: UnsafeMutablePointer<Float>
    /// The direct matrix: 2·exp(iπ(k + ½)(2n − ½)/64), k < 32, n < 64.
    private static let cosines: [Float] = (0..<32 * 64).map { i in
        let k = Double(i / 64), n = Double(i % 64)
        return Float(2 * cos(Double.pi * (k + 0.5) * (2 * n - 0.5) / 64))
    }
    private static let sines: [Float] = (0..<32 * 64).map { i in
        let k = Double(i / 64), n = Double(i % 64)
        return Float(2 * sin(Double.pi * (k + 0.5) * (2 * n - 0.5) / 64))
    }
    /// c[2n]·32768, n < 320: the analysis bank uses every other coefficient of the prototype,
    /// and the input's scale to 16-bit PCM goes with it.
    private let window: UnsafeMutablePointer<Float>
    private let fft = FFT(size: 32)
    private let re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>
    /// Real and imaginary parts apart: e^{iπm/32}, m < 32; e^{−iπ(2k + 1)/256} and
    /// e^{3iπ(2k + 1)/256}, k < 32 (see ``analyze``).
    private let twiddles: UnsafeMutablePointer<Float>

    init() {
        history = .allocate(capacity: Self.historyLength)
        history.initialize(repeating: 0, count: Self.historyLength)
        u = .allocate(capacity: 64)
        u.initialize(repeating: 0, count: 64)
        offset = Self.historyLength - 320
        window = .allocate(capacity: 320)
        for n in 0..<320 { window[n] = SBRTables.qmfWindow[2 * n] * 32768 }
        re = .allocate(capacity: 32)
        re.initialize(repeating: 0, count: 32)
        im = .allocate(capacity: 32)
        im.initialize(repeating: 0, count: 32)
        twiddles = .allocate(capacity: 192)
        for m in 0..<32 {
            twiddles[m] = Float(cos(Double.pi * Double(m) / 32))
            twiddles[32 + m] = Float(sin(Double.pi * Double(m) / 32))
        }
        for k in 0..<32 {
            let p = -Double.pi * Double(2 * k + 1) / 256, q = 3 * Double.pi * Double(2 * k + 1) / 256
            twiddles[64 + k] = Float(cos(p))
            twiddles[96 + k] = Float(sin(p))
            twiddles[128 + k] = Float(cos(q))
            twiddles[160 + k] = Float(sin(q))
        }
    }

    deinit {
        history.deallocate()
        u.deallocate()
        window.deallocate()
        re.deallocate()
        im.deallocate()
        twiddles.deallocate()
    }

    func reset() {
        history.update(repeating: 0, count: Self.historyLength)
        offset = Self.historyLength - 320
    }

    /// Takes 32 new samples (full scale ±1) in time order and leaves u(n), n < 64 (§4.6.18.4.1
    /// steps 1–4) in `u`.
    private func window(_ input: UnsafePointer<Float>) {
        if offset < 32 {
            // Move the 288 samples that stay to the top of the buffer.
            (history + (Self.historyLength - 288)).update(from: history + offset, count: 288)
            offset = Self.historyLength - 288
        }
        offset &-= 32
        let x = history + offset, c = window, u = self.u
        // x[0] is the newest sample: the block goes in reversed.
        var n = 0
        while n < 32 {
            let v = loadFloat4(input + n)
            storeFloats(reversedLanes(v), x + (28 &- n))
            n &+= 4
        }
        // u(n) = Σj x(n + 64j)·c(n + 64j), j < 5.
        n = 0
        while n < 64 {
            var s = loadFloat4(x + n) * loadFloat4(c + n)
            var j = n &+ 64
            while j < 320 {
                s += loadFloat4(x + j) * loadFloat4(c + j)
                j &+= 64
            }
            storeFloats(s, u + n)
            n &+= 4
        }
    }

    /// One time slot by the standard's matrixing: W(k) = Σn u(n)·2·exp(iπ(k + ½)(2n − ½)/64).
    func analyzeDirect(_ input: UnsafePointer<Float>, real: UnsafeMutablePointer<Float>, imag: UnsafeMutablePointer<Float>) {
        window(input)
        Self.cosines.withUnsafeBufferPointer { cs in
            Self.sines.withUnsafeBufferPointer { sn in
                for k in 0..<32 {
                    var re: Float = 0, im: Float = 0
                    for n in 0..<64 {
                        re += u[n] * cs[k * 64 + n]
                        im += u[n] * sn[k * 64 + n]
                    }
                    real[k] = re
                    imag[k] = im
                }
            }
        }
    }

    /// One time slot, the same values as ``analyzeDirect`` through a 32-point complex FFT.
    ///
    /// π(k + ½)(2n − ½)/64 = 2π(k + ½)n/64 − π(2k + 1)/256, so W(k) = 2·e^{−iπ(2k+1)/256}·Y(k)
    /// with Y the odd-frequency DFT of the 64 real u(n), Y(k) = Σn u(n)·e^{2πi(k+½)n/64}.
    /// Split by the parity of n, Y(k) = A(k) + e^{iπ(2k+1)/64}·B(k), where A and B are the
    /// 32-point odd-frequency DFTs of u(2m) and u(2m + 1): both real, so A(31 − k) = conj A(k)
    /// and likewise B, and one complex FFT of (u(2m) + i·u(2m + 1))·e^{iπm/32} gives
    /// X(k) = A(k) + i·B(k), from which 2A(k) = X(k) + conj X(31 − k) and
    /// 2B(k) = −i·(X(k) − conj X(31 − k)).
    func analyze(_ input: UnsafePointer<Float>, real: UnsafeMutablePointer<Float>, imag: UnsafeMutablePointer<Float>) {
        window(input)
        let re = self.re, im = self.im, u = self.u, t = twiddles
        var m = 0
        while m < 32 {
            let pair = loadFloat8(u + 2 &* m)
            let even = pair.evenHalf, odd = pair.oddHalf
            let c = loadFloat4(t + m), s = loadFloat4(t + (32 &+ m))
            storeFloats(even * c - odd * s, re + m)
            storeFloats(even * s + odd * c, im + m)
            m &+= 4
        }
        fft.inverse(re, im)
        var k = 0
        while k < 32 {
            let xr = loadFloat4(re + k), xi = loadFloat4(im + k)
            let yr0 = loadFloat4(re + (28 &- k)), yi0 = loadFloat4(im + (28 &- k))
            let yr = SIMD4(yr0[3], yr0[2], yr0[1], yr0[0]), yi = SIMD4(yi0[3], yi0[2], yi0[1], yi0[0])
            // 2A and 2B; the halves cancel the 2 of W.
            let ar = xr + yr, ai = xi - yi, br = xi + yi, bi = yr - xr
            let pr = loadFloat4(t + (64 &+ k)), pi = loadFloat4(t + (96 &+ k))
            let qr = loadFloat4(t + (128 &+ k)), qi = loadFloat4(t + (160 &+ k))
            storeFloats(pr * ar - pi * ai + qr * br - qi * bi, real + k)
            storeFloats(pr * ai + pi * ar + qr * bi + qi * br, imag + k)
            k &+= 4
        }
    }
}


/// The 64-band synthesis bank (§4.6.18.4.2).
final class SBRSynthesisFilterbank {
    /// The V vector of 1280 values, kept in a longer buffer that it slides down through, so
    /// the shift by 128 per slot is a pointer move, with one copy of 1152 values every 32 slots.
    private let buffer: UnsafeMutablePointer<Float>
    private var offset: Int
    private static let bufferLength = 1280 + 128 * 32
    private static let cosines: [Float] = (0..<128 * 64).map { i in
        let n = Double(i / 64), k = Double(i % 64)
        return Float(cos(Double.pi * (k + 0.5) * (2 * n - 255) / 128) / 64)
    }
    private static let sines: [Float] = (0..<128 * 64).map { i in
        let n = Double(i / 64), k = Double(i % 64)
        return Float(sin(Double.pi * (k + 0.5) * (2 * n - 255) / 128) / 64)
    }
    /// The prototype c[i] / 32768: the output leaves the 16-bit scale through it.
    private let window: UnsafeMutablePointer<Float>
    /// 64-point DCT-IVs scaled by 1/64, the matrixing's factor.
    private let dct = DCTIV(size: 64, scale: 1.0 / 64)
    /// The two transforms' outputs.
    private let cosines4: UnsafeMutablePointer<Float>
    private let sines4: UnsafeMutablePointer<Float>

    init() {
        buffer = .allocate(capacity: Self.bufferLength)
        buffer.initialize(repeating: 0, count: Self.bufferLength)
        offset = Self.bufferLength - 1280
        window = .allocate(capacity: 640)
        for i in 0..<640 { window[i] = SBRTables.qmfWindow[i] * (1 / 32768) }
        cosines4 = .allocate(capacity: 64)
        cosines4.initialize(repeating: 0, count: 64)
        sines4 = .allocate(capacity: 64)
        sines4.initialize(repeating: 0, count: 64)
    }

    deinit {
        buffer.deallocate()
        window.deallocate()
        cosines4.deallocate()
        sines4.deallocate()
    }

    func reset() {
        buffer.update(repeating: 0, count: Self.bufferLength)
        offset = Self.bufferLength - 1280
    }

    /// Makes room for the slot's 128 new values at the head of V and returns it.
    @inline(__always)
    private func shift() -> UnsafeMutablePointer<Float> {
        if offset < 128 {
            (buffer + (Self.bufferLength - 1152)).update(from: buffer + offset, count: 1152)
            offset = Self.bufferLength - 1152
        }
        offset &-= 128
        return buffer + offset
    }

    /// Steps 3–5: the windowed sum of 10 taps per output sample.
    private func output(_ v: UnsafeMutablePointer<Float>, _ out: UnsafeMutablePointer<Float>) {
        // out(k) = Σn w(64n + k) with g(128j + k) = v(256j + k), g(128j + 64 + k) = v(256j + 192 + k).
        let c = window
        var k = 0
        while k < 64 {
            var s = loadFloat4(v + k) * loadFloat4(c + k)
            s += loadFloat4(v + (192 &+ k)) * loadFloat4(c + (64 &+ k))
            for j in 1..<5 {
                s += loadFloat4(v + (256 &* j &+ k)) * loadFloat4(c + (128 &* j &+ k))
                s += loadFloat4(v + (256 &* j &+ 192 &+ k)) * loadFloat4(c + (128 &* j &+ 64 &+ k))
            }
            storeFloats(s, out + k)
            k &+= 4
        }
    }

    /// One time slot of 64 subbands to 64 samples (full scale ±1), by the standard's matrixing.
    func synthesizeDirect(real: UnsafePointer<Float>, imag: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        let v = shift()
        Self.cosines.withUnsafeBufferPointer { cs in
            Self.sines.withUnsafeBufferPointer { sn in
                for n in 0..<128 {
                    var s: Float = 0
                    for k in 0..<64 { s += real[k] * cs[n * 64 + k] - imag[k] * sn[n * 64 + k] }
                    v[n] = s
                }
            }
        }
        output(v, out)
    }

    /// One time slot, the same values as ``synthesizeDirect`` through two 64-point DCT-IVs.
    ///
    /// π(k + ½)(2n − 255)/128 = π/64·(k + ½)(j + ½) with j = n − 128, so with F the DCT-IV of
    /// the real parts and G the DST-IV of the imaginary ones (the DCT-IV of them reversed,
    /// odd outputs negated), the symmetries of the two transforms (even and odd about −½,
    /// odd and even about 63½) give v(n) = (G(n) − F(n))/64 for n < 64 and
    /// (F(127 − n) + G(127 − n))/64 above.
    func synthesize(real: UnsafePointer<Float>, imag: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        let v = shift()
        let f = cosines4, g = sines4
        dct.transform(real, into: f)
        dct.transformReversed(imag, into: g)
        let alternate = SIMD4<Float>(1, -1, 1, -1)
        var n = 0
        while n < 64 {
            let fn = loadFloat4(f + n), gn = loadFloat4(g + n) * alternate
            storeFloats(gn - fn, v + n)
            let sum = fn + gn
            storeFloats(SIMD4(sum[3], sum[2], sum[1], sum[0]), v + (124 &- n))
            n &+= 4
        }
        output(v, out)
    }
}

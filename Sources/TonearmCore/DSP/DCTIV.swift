#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A DCT-IV of `size` points (a power of two, ≥ 4):
/// X[k] = scale · Σ x[n]·cos(π/N·(n + ½)(k + ½)).
///
/// The usual half-length algorithm: the even inputs and the odd ones read backwards form one
/// complex sequence of N/2 values, turned by e^(−iπ(4n + 1)/(4N)), transformed by an N/2-point
/// ``FFT``, turned by e^(−iπk/N), and the real and imaginary parts of the result are the even
/// outputs and the odd ones backwards. It is its own inverse up to the factor 2/N.
///
/// Not thread-safe: one instance per caller (it owns work buffers).
package final class DCTIV {
    package let size: Int
    package let scale: Double
    private let fft: FFT
    /// cos and sin of π(4n + 1)/(4N) · scale, of πk/N, for n, k < N/2.
    private let preRe: UnsafeMutablePointer<Float>, preIm: UnsafeMutablePointer<Float>
    private let postRe: UnsafeMutablePointer<Float>, postIm: UnsafeMutablePointer<Float>
    private let re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>

    package init(size: Int, scale: Double = 1) {
        precondition(size >= 4 && size & (size - 1) == 0, "DCT-IV size must be a power of two ≥ 4")
        self.size = size
        self.scale = scale
        let h = size / 2
        fft = FFT(size: h)
        preRe = .allocate(capacity: h)
        preIm = .allocate(capacity: h)
        postRe = .allocate(capacity: h)
        postIm = .allocate(capacity: h)
        for k in 0..<h {
            let pre = Double.pi * Double(4 * k + 1) / Double(4 * size), post = Double.pi * Double(k) / Double(size)
            preRe[k] = Float(cos(pre) * scale)
            preIm[k] = Float(sin(pre) * scale)
            postRe[k] = Float(cos(post))
            postIm[k] = Float(sin(post))
        }
        re = .allocate(capacity: h)
        im = .allocate(capacity: h)
        re.initialize(repeating: 0, count: h)
        im.initialize(repeating: 0, count: h)
    }

    deinit {
        preRe.deallocate()
        preIm.deallocate()
        postRe.deallocate()
        postIm.deallocate()
        re.deallocate()
        im.deallocate()
    }

    /// X = DCT-IV(x) · scale; `x` and `out` may be the same buffer.
    package func transform(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        rotate(x, backwards: false)
        finish(out)
    }

    /// The DCT-IV of `x` read backwards, x[N − 1 − n]: (−1)^k times its DST-IV.
    package func transformReversed(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        rotate(x, backwards: true)
        finish(out)
    }

    /// re + i·im = (x[2n] + i·x[N − 1 − 2n])·e^(−iπ(4n + 1)/(4N)) (the pair swapped when
    /// reading backwards), four n at a time.
    @inline(__always)
    private func rotate(_ x: UnsafePointer<Float>, backwards: Bool) {
        let n = size, h = n >> 1
        let pr = preRe, pi = preIm, re = self.re, im = self.im
        if h < 4 {
            for k in 0..<h {
                var a = x[2 &* k], b = x[n &- 1 &- 2 &* k]
                if backwards { swap(&a, &b) }
                re[k] = a * pr[k] + b * pi[k]
                im[k] = b * pr[k] - a * pi[k]
            }
            return
        }
        var k = 0
        while k < h {
            // x[2k … 2k + 7] holds the four even inputs; x[N − 8 − 2k … N − 1 − 2k] the four
            // odd ones, backwards.
            let lo = loadFloat8(x + 2 &* k)
            let hi = loadFloat8(x + (n &- 8 &- 2 &* k))
            var a = lo.evenHalf, b = reversedLanes(hi.oddHalf)
            if backwards { swap(&a, &b) }
            let c = loadFloat4(pr + k), s = loadFloat4(pi + k)
            storeFloats(a * c + b * s, re + k)
            storeFloats(b * c - a * s, im + k)
            k &+= 4
        }
    }

    /// The FFT and the post-rotation: out[2k] = Re, out[N − 1 − 2k] = −Im of
    /// Z[k]·e^(−iπk/N).
    @inline(__always)
    private func finish(_ out: UnsafeMutablePointer<Float>) {
        let n = size, h = n >> 1
        let cr = postRe, ci = postIm, re = self.re, im = self.im
        fft.forward(re, im)
        if h < 8 {
            for k in 0..<h {
                let tr = re[k] * cr[k] + im[k] * ci[k]
                let ti = im[k] * cr[k] - re[k] * ci[k]
                out[2 &* k] = tr
                out[n &- 1 &- 2 &* k] = -ti
            }
            return
        }
        // out[2j] = tr[j], out[2j + 1] = −ti[h − 1 − j]: rotate a block of four at j and its
        // mirror at h − 4 − j together, each one's imaginary parts interleaved backwards with
        // the other's real parts.
        var j = 0
        while j < h >> 1 {
            let k = h &- 4 &- j
            let ar = loadFloat4(re + j), ai = loadFloat4(im + j), ac = loadFloat4(cr + j), asn = loadFloat4(ci + j)
            let br = loadFloat4(re + k), bi = loadFloat4(im + k), bc = loadFloat4(cr + k), bs = loadFloat4(ci + k)
            let atr = ar * ac + ai * asn, ati = asn * ar - ai * ac
            let btr = br * bc + bi * bs, bti = bs * br - bi * bc
            Self.interleave(atr, reversedLanes(bti), out + 2 &* j)
            Self.interleave(btr, reversedLanes(ati), out + 2 &* k)
            j &+= 4
        }
    }

    /// Stores a[0], b[0], a[1], b[1], … at `out`.
    @inline(__always)
    private static func interleave(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ out: UnsafeMutablePointer<Float>) {
        let v = SIMD8(a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3])
        storeFloats(v, out)
    }
}

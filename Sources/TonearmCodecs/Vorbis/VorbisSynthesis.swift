#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// The inverse MDCT, the windows and the overlap-add of Vorbis I §4.3.6 to §4.3.8 (window
/// shape in §4.3.1), with everything that depends only on the block sizes computed once.
///
/// The IMDCT of a block of n samples is built on an n/2-point DCT-IV u of the spectrum: with
/// N = n/2, the output is u[N/2 + i] for i < N/2, −u[3N/2 − 1 − i] up to 3N/2 and −u[i − 3N/2]
/// after (the DCT-IV's even and odd symmetries), so only u is computed.
final class VorbisSynthesis {
    let shortSize: Int
    let longSize: Int
    private let dctShort: DCTIV
    private let dctLong: DCTIV
    /// The rising half of the window for a slope of shortSize/2 and of longSize/2 samples:
    /// sin(π/2 · sin²((i + ½)/m · π/2)).
    private let slopeShort: UnsafeMutablePointer<Float>
    private let slopeLong: UnsafeMutablePointer<Float>
    /// Per channel, longSize/2 floats: the previous block's right half, windowed.
    private let overlap: UnsafeMutablePointer<Float>
    private let transformed: UnsafeMutablePointer<Float>
    private let left: UnsafeMutablePointer<Float>
    private let channels: Int

    init(blockSizes: (Int, Int), channels: Int) {
        shortSize = blockSizes.0
        longSize = blockSizes.1
        self.channels = channels
        dctShort = DCTIV(size: shortSize / 2)
        dctLong = DCTIV(size: longSize / 2)
        slopeShort = VorbisSynthesis.slope(shortSize / 2)
        slopeLong = VorbisSynthesis.slope(longSize / 2)
        overlap = .allocate(capacity: channels * longSize / 2)
        overlap.initialize(repeating: 0, count: channels * longSize / 2)
        transformed = .allocate(capacity: longSize / 2)
        transformed.initialize(repeating: 0, count: longSize / 2)
        left = .allocate(capacity: longSize / 2)
        left.initialize(repeating: 0, count: longSize / 2)
    }

    deinit {
        slopeShort.deallocate()
        slopeLong.deallocate()
        overlap.deallocate()
        transformed.deallocate()
        left.deallocate()
    }

    /// Forgets every channel's previous right half.
    func clearOverlap() {
        overlap.update(repeating: 0, count: channels * longSize / 2)
    }

    private static func slope(_ m: Int) -> UnsafeMutablePointer<Float> {
        let p = UnsafeMutablePointer<Float>.allocate(capacity: m)
        for i in 0..<m {
            let s = sin((Double(i) + 0.5) / Double(m) * Double.pi / 2)
            p[i] = Float(sin(Double.pi / 2 * s * s))
        }
        return p
    }

    /// Transforms one channel's spectrum (nil: silence), overlaps its left half with the
    /// previous block's right half into `frames` output samples (none without a previous
    /// block), and keeps its right half for the next block.
    func synthesize<S: DecodedSample>(channel c: Int, spectrum: UnsafeMutablePointer<Float>?, isLong: Bool, previousLong: Bool,
                                      nextLong: Bool, previousSize: Int?, frames: Int,
                                      into dst: UnsafeMutablePointer<S>, stride: Int)
    {
        let n = isLong ? longSize : shortSize
        let half = n / 2, quarter = n / 4
        let u = transformed
        if let spectrum {
            (isLong ? dctLong : dctShort).transform(spectrum, into: u)
        } else {
            u.update(repeating: 0, count: half)
        }

        // The left half, windowed (§4.3.1: a long block after a short one rises over the
        // short block's slope, centred on its quarter point): zeros, the rising slope
        // (which straddles the quarter point, where y's formula changes), then ones.
        let leftSlope = isLong && !previousLong ? shortSize / 2 : half
        let leftStart = quarter - leftSlope / 2, leftEnd = leftStart + leftSlope
        let rise = leftSlope == half ? (isLong ? slopeLong : slopeShort) : slopeShort
        let l = left
        if leftStart > 0 { l.update(repeating: 0, count: leftStart) }
        // y[i] = u[N/2 + i] below N/2 = quarter, −u[3N/2 − 1 − i] from there.
        var i = leftStart
        while i < quarter {
            l[i] = u[quarter &+ i] * rise[i &- leftStart]
            i &+= 1
        }
        let top = half &+ quarter &- 1
        while i < leftEnd {
            l[i] = -u[top &- i] * rise[i &- leftStart]
            i &+= 1
        }
        while i < half {
            l[i] = -u[top &- i]
            i &+= 1
        }

        // Overlap-add (§4.3.7): from the previous window's centre to this one's. Where the
        // previous block was longer, its flat part comes first alone; where it was shorter,
        // this block's part comes last alone.
        let ov = overlap + c * (longSize / 2)
        if let previousSize {
            let previousHalf = previousSize / 2
            let shift = quarter - previousSize / 4  // output t is this block's left[t + shift]
            let aloneEnd = min(frames, max(0, -shift)), bothEnd = min(frames, previousHalf)
            var d = dst
            var t = 0
            while t < aloneEnd {
                d.pointee = S.fromFloat(ov[t])
                d += stride
                t &+= 1
            }
            if stride == 1 {
                while t < bothEnd {
                    dst[t] = S.fromFloat(ov[t] + l[t &+ shift])
                    t &+= 1
                }
                while t < frames {
                    dst[t] = S.fromFloat(l[t &+ shift])
                    t &+= 1
                }
            } else {
                d = dst + t &* stride
                while t < bothEnd {
                    d.pointee = S.fromFloat(ov[t] + l[t &+ shift])
                    d += stride
                    t &+= 1
                }
                while t < frames {
                    d.pointee = S.fromFloat(l[t &+ shift])
                    d += stride
                    t &+= 1
                }
            }
        }

        // The right half, windowed, for the next block: y[half + t] is −u[N/2 − 1 − t] below
        // N/2 and −u[t − N/2] after; ones, the falling slope, zeros.
        let rightSlope = isLong && !nextLong ? shortSize / 2 : half
        let rightStart = quarter - rightSlope / 2, rightEnd = rightStart + rightSlope
        let fall = rightSlope == half ? (isLong ? slopeLong : slopeShort) : slopeShort
        let fallTop = rightSlope &- 1 &+ rightStart  // fall index of t is fallTop − t
        var t = 0
        while t < rightStart {
            ov[t] = -u[quarter &- 1 &- t]
            t &+= 1
        }
        while t < quarter {
            ov[t] = -u[quarter &- 1 &- t] * fall[fallTop &- t]
            t &+= 1
        }
        while t < rightEnd {
            ov[t] = -u[t &- quarter] * fall[fallTop &- t]
            t &+= 1
        }
        if t < half { (ov + t).update(repeating: 0, count: half - t) }
    }
}

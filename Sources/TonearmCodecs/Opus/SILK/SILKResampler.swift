/// Upsampling of SILK's output from 8, 12 or 16 kHz to 48 kHz, the way libopus's decoder
/// does it (RFC 6716 §4.2.9 leaves the resampler to the implementation; matching the
/// reference's output needs its structure): a 2× allpass-based IIR upsampler, then an
/// 8-tap polyphase FIR interpolator with 12 phases, run in batches of 10 ms, after an
/// input delay of 0 (8 kHz), 4 (12 kHz) or 7 (16 kHz) samples. All of it is fixed point.
struct SILKResampler {
    private(set) var inputKHz = 0
    private var inputDelay = 0
    private var inverseRatioQ16: Int32 = 0
    private var batchSize = 0
    /// The allpass sections' state.
    private var iir = (Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0))
    /// The last 8 samples at twice the input rate, the FIR's history.
    private var fir = [Int16](repeating: 0, count: 8)
    private var delay = [Int16](repeating: 0, count: 16)
    /// The 2×-rate signal of one batch and the FIR's history before it.
    private var buffer = [Int16](repeating: 0, count: 2 * 160 + 8)

    static let outputKHz = 48

    init() {}

    init(inputKHz: Int) {
        self.inputKHz = inputKHz
        inputDelay = inputKHz == 16 ? 7 : inputKHz == 12 ? 4 : 0
        batchSize = inputKHz * 10
        let fsIn = Int32(inputKHz * 1000)
        let fsOut = Int32(Self.outputKHz * 1000)
        var ratio = ((fsIn << 15) / fsOut) << 2
        while SILKFixedPoint.smulww(ratio, fsOut) < fsIn << 1 { ratio += 1 }
        inverseRatioQ16 = ratio
    }

    /// Resamples `count` input samples (a multiple of 1 ms) into `count × 48 / inputKHz`
    /// output samples.
    mutating func process(_ input: UnsafePointer<Int16>, count: Int, into out: UnsafeMutablePointer<Int16>) {
        guard inputKHz > 0, count >= inputKHz else { return }
        let head = inputKHz - inputDelay
        for i in 0..<head { delay[inputDelay + i] = input[i] }
        delay.withUnsafeBufferPointer { d in
            upsample(d.baseAddress!, count: inputKHz, into: out)
        }
        upsample(input + head, count: count - inputKHz, into: out + Self.outputKHz)
        for i in 0..<inputDelay { delay[i] = input[count - inputDelay + i] }
    }

    private mutating func upsample(_ input: UnsafePointer<Int16>, count: Int, into output: UnsafeMutablePointer<Int16>) {
        var out = output
        var input = input
        var remaining = count
        var n = 0
        let ratio = inverseRatioQ16
        var state = iir
        buffer.withUnsafeMutableBufferPointer { bufPtr in
            let buf = bufPtr.baseAddress!
            for i in 0..<8 { buf[i] = fir[i] }
            while true {
                n = min(remaining, batchSize)
                Self.up2(&state, buf + 8, input, n)
                let maxIndex = Int32(n) << 17
                out = Self.interpolate(out, buf, maxIndex, ratio)
                input += n
                remaining -= n
                if remaining > 0 {
                    for i in 0..<8 { buf[i] = buf[(n << 1) + i] }
                } else {
                    break
                }
            }
            for i in 0..<8 { fir[i] = buf[(n << 1) + i] }
        }
        iir = state
    }

    // The allpass coefficients of the two branches (silk_resampler_up2_hq_0/1).
    private static let a00: Int32 = 1746, a01: Int32 = 14986, a02: Int32 = 39083 - 65536
    private static let a10: Int32 = 6854, a11: Int32 = 25769, a12: Int32 = 55542 - 65536

    /// 2× upsampling with two branches of three first-order allpass sections each.
    @inline(__always)
    private static func up2(_ s: inout (Int32, Int32, Int32, Int32, Int32, Int32), _ out: UnsafeMutablePointer<Int16>,
                            _ input: UnsafePointer<Int16>, _ count: Int)
    {
        typealias F = SILKFixedPoint
        for k in 0..<count {
            let x = Int32(input[k]) << 10
            // Even output.
            var y = x &- s.0
            var t = F.smulwb(y, a00)
            var o1 = s.0 &+ t
            s.0 = x &+ t
            y = o1 &- s.1
            t = F.smulwb(y, a01)
            var o2 = s.1 &+ t
            s.1 = o1 &+ t
            y = o2 &- s.2
            t = F.smlawb(y, y, a02)
            o1 = s.2 &+ t
            s.2 = o2 &+ t
            out[2 * k] = F.sat16(F.rshiftRound(o1, 10))
            // Odd output.
            y = x &- s.3
            t = F.smulwb(y, a10)
            o1 = s.3 &+ t
            s.3 = x &+ t
            y = o1 &- s.4
            t = F.smulwb(y, a11)
            o2 = s.4 &+ t
            s.4 = o1 &+ t
            y = o2 &- s.5
            t = F.smlawb(y, y, a12)
            o1 = s.5 &+ t
            s.5 = o2 &+ t
            out[2 * k + 1] = F.sat16(F.rshiftRound(o1, 10))
        }
    }

    /// The 8-tap FIR at the fractional positions, 1/24 apart, of the 2×-rate signal.
    @inline(__always)
    private static func interpolate(_ output: UnsafeMutablePointer<Int16>, _ buf: UnsafePointer<Int16>,
                                    _ maxIndex: Int32, _ step: Int32) -> UnsafeMutablePointer<Int16>
    {
        var out = output
        SILKTables.resamplerFrac12.withUnsafeBufferPointer { fracTable in
            let frac = fracTable.baseAddress!
            var index: Int32 = 0
            while index < maxIndex {
                let phase = Int(SILKFixedPoint.smulwb(index & 0xFFFF, 12))
                let x = buf + Int(index >> 16)
                let c = frac + phase * 4
                let r = frac + (11 - phase) * 4
                var acc = Int32(x[0]) * c[0]
                acc = acc &+ Int32(x[1]) * c[1]
                acc = acc &+ Int32(x[2]) * c[2]
                acc = acc &+ Int32(x[3]) * c[3]
                acc = acc &+ Int32(x[4]) * r[3]
                acc = acc &+ Int32(x[5]) * r[2]
                acc = acc &+ Int32(x[6]) * r[1]
                acc = acc &+ Int32(x[7]) * r[0]
                out.pointee = SILKFixedPoint.sat16(SILKFixedPoint.rshiftRound(acc, 15))
                out += 1
                index += step
            }
        }
        return out
    }
}

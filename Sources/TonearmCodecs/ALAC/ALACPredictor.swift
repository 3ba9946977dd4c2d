/// ALAC's adaptive FIR predictor (Apple's ALAC reference, `dp_dec.c`, as ffmpeg runs it),
/// in place: `s` holds the residuals and receives the samples.
///
/// All arithmetic wraps at 32 bits as the reference's does, and each sample is sign-extended
/// from the channel's bits. The coefficients are 16-bit and adapt after every sample by the
/// sign of the error, oldest tap first, until the error's magnitude is used up.
enum ALACPredictor {
    /// Sign-extends the low `bits` of `v`, given as the shift 32 − bits.
    @inline(__always)
    static func extend(_ v: Int32, _ shift: Int32) -> Int32 { (v &<< shift) &>> shift }

    @inline(__always)
    static func sign(_ v: Int32) -> Int32 { v > 0 ? 1 : (v < 0 ? -1 : 0) }

    /// Order 31 is the "first order" mode: each sample is the previous plus the residual.
    static func firstOrder(_ s: UnsafeMutablePointer<Int32>, count n: Int, bits: Int) {
        let shift = Int32(32 &- bits)
        var previous = n > 0 ? s[0] : 0
        var i = 1
        while i < n {
            previous = extend(previous &+ s[i], shift)
            s[i] = previous
            i &+= 1
        }
    }

    /// Runs the predictor of `order` (0...30) with quantisation `shift` (1...15) over `n`
    /// samples. `coefficients` holds `order` values, the one for the oldest tap first, and
    /// is adapted in place.
    static func run(_ s: UnsafeMutablePointer<Int32>, count n: Int, bits: Int,
                    coefficients c: UnsafeMutablePointer<Int32>, order: Int, shift q: Int)
    {
        guard n > 1, order > 0 else { return }
        // The orders encoders use (Apple's 4 and 8, ffmpeg's 4 to 6) get a copy of the loop
        // with the order a constant, which the compiler unrolls.
        switch order {
        case 4: run(s, count: n, bits: bits, coefficients: c, fixedOrder: 4, shift: q)
        case 5: run(s, count: n, bits: bits, coefficients: c, fixedOrder: 5, shift: q)
        case 6: run(s, count: n, bits: bits, coefficients: c, fixedOrder: 6, shift: q)
        case 8: run(s, count: n, bits: bits, coefficients: c, fixedOrder: 8, shift: q)
        default: run(s, count: n, bits: bits, coefficients: c, fixedOrder: order, shift: q)
        }
    }

    @inline(__always)
    private static func run(_ s: UnsafeMutablePointer<Int32>, count n: Int, bits: Int,
                            coefficients c: UnsafeMutablePointer<Int32>, fixedOrder order: Int, shift q: Int)
    {
        let ext = Int32(32 &- bits)
        // The first `order` samples after the first are first-order: the taps fill up.
        var i = 1
        while i <= order && i < n {
            s[i] = extend(s[i &- 1] &+ s[i], ext)
            i &+= 1
        }
        let round = Int64(1) << Int64(q &- 1)
        let q32 = Int32(q)
        while i < n {
            let taps = s + (i &- order)
            let base = taps[-1]
            var sum: Int32 = 0
            var j = 0
            while j < order {
                sum &+= (taps[j] &- base) &* c[j]
                j &+= 1
            }
            let prediction = Int32(truncatingIfNeeded: (Int64(sum) &+ round) &>> Int64(q))
            var error = s[i]
            s[i] = extend(prediction &+ base &+ error, ext)
            if error != 0 {
                let errorSign = sign(error)
                j = 0
                while j < order && error &* errorSign > 0 {
                    let d = base &- taps[j]
                    let sg = sign(d) &* errorSign
                    c[j] = Int32(Int16(truncatingIfNeeded: c[j] &- sg))
                    error &-= ((d &* sg) &>> q32) &* Int32(truncatingIfNeeded: j &+ 1)
                    j &+= 1
                }
            }
            i &+= 1
        }
    }
}

/// The fixed-point primitives RFC 6716 §4.2 describes SILK's decoder with (its
/// "SMULWB", "RSHIFT_ROUND" and friends, §1.1.4 and the text of §4.2.7), on 32-bit values.
///
/// SILK's decoder is bit-exact only if every product, shift and saturation rounds the way
/// the RFC's arithmetic does, so the decoder spells them with these and nothing else.
/// Products are taken in 64 bits, sums wrap (the RFC's reference arithmetic never relies
/// on overflow for valid streams, and a damaged stream must not trap).
enum SILKFixedPoint {
    /// (a × b[15:0]) >> 16: a 32-bit value times a signed 16-bit one.
    @inline(__always)
    static func smulwb(_ a: Int32, _ b: Int32) -> Int32 {
        Int32(truncatingIfNeeded: (Int64(a) &* Int64(Int16(truncatingIfNeeded: b))) >> 16)
    }

    /// a + (b × c[15:0]) >> 16.
    @inline(__always)
    static func smlawb(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { a &+ smulwb(b, c) }

    /// (a × b) >> 16, both 32-bit.
    @inline(__always)
    static func smulww(_ a: Int32, _ b: Int32) -> Int32 {
        Int32(truncatingIfNeeded: (Int64(a) &* Int64(b)) >> 16)
    }

    /// a + (b × c) >> 16.
    @inline(__always)
    static func smlaww(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { a &+ smulww(b, c) }

    /// a[15:0] × b[15:0].
    @inline(__always)
    static func smulbb(_ a: Int32, _ b: Int32) -> Int32 {
        Int32(Int16(truncatingIfNeeded: a)) &* Int32(Int16(truncatingIfNeeded: b))
    }

    /// a + b[15:0] × c[15:0].
    @inline(__always)
    static func smlabb(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { a &+ smulbb(b, c) }

    /// (a × b) >> 32.
    @inline(__always)
    static func smmul(_ a: Int32, _ b: Int32) -> Int32 {
        Int32(truncatingIfNeeded: (Int64(a) &* Int64(b)) >> 32)
    }

    /// a >> shift, rounded half up (shift ≥ 1).
    @inline(__always)
    static func rshiftRound(_ a: Int32, _ shift: Int32) -> Int32 {
        shift == 1 ? (a >> 1) &+ (a & 1) : ((a >> (shift - 1)) &+ 1) >> 1
    }

    /// The same on 64 bits.
    @inline(__always)
    static func rshiftRound64(_ a: Int64, _ shift: Int64) -> Int64 {
        shift == 1 ? (a >> 1) &+ (a & 1) : ((a >> (shift - 1)) &+ 1) >> 1
    }

    /// Saturates to 16 bits.
    @inline(__always)
    static func sat16(_ a: Int32) -> Int16 { Int16(clamping: a) }

    /// a + b saturated to 32 bits.
    @inline(__always)
    static func addSat32(_ a: Int32, _ b: Int32) -> Int32 { Int32(clamping: Int64(a) + Int64(b)) }

    /// a − b saturated to 32 bits.
    @inline(__always)
    static func subSat32(_ a: Int32, _ b: Int32) -> Int32 { Int32(clamping: Int64(a) - Int64(b)) }

    /// a << shift, saturated before the shift.
    @inline(__always)
    static func lshiftSat32(_ a: Int32, _ shift: Int32) -> Int32 {
        min(max(a, Int32.min >> shift), Int32.max >> shift) << shift
    }

    /// |a|, wrapping for Int32.min as the reference arithmetic does.
    @inline(__always)
    static func abs32(_ a: Int32) -> Int32 { a < 0 ? 0 &- a : a }

    /// Leading zero bits of a 32-bit value (32 for 0).
    @inline(__always)
    static func clz32(_ a: Int32) -> Int32 { Int32(UInt32(bitPattern: a).leadingZeroBitCount) }

    /// A good approximation of (a << qRes) / b (b ≠ 0), as SILK computes it (two
    /// Newton-like steps on a 16-bit reciprocal); gain adjustments depend on its exact value.
    static func div32VarQ(_ a: Int32, _ b: Int32, _ qRes: Int32) -> Int32 {
        guard b != 0 else { return 0 }
        let aHeadroom = clz32(abs32(a)) - 1
        var aNorm = a << aHeadroom
        let bHeadroom = clz32(abs32(b)) - 1
        let bNorm = b << bHeadroom
        let bInv = (Int32.max >> 2) / (bNorm >> 16)
        var result = smulwb(aNorm, bInv)
        aNorm = aNorm &- (smmul(bNorm, result) << 3)
        result = smlawb(result, aNorm, bInv)
        let shift = 29 + aHeadroom - bHeadroom - qRes
        if shift < 0 { return lshiftSat32(result, -shift) }
        return shift < 32 ? result >> shift : 0
    }

    /// A good approximation of (1 << qRes) / b (b ≠ 0), as SILK computes it.
    static func inverse32VarQ(_ b: Int32, _ qRes: Int32) -> Int32 {
        guard b != 0 else { return 0 }
        let bHeadroom = clz32(abs32(b)) - 1
        let bNorm = b << bHeadroom
        let bInv = (Int32.max >> 2) / (bNorm >> 16)
        var result = bInv << 16
        let errQ32 = ((1 << 29) &- smulwb(bNorm, bInv)) << 3
        result = smlaww(result, errQ32, bInv)
        let shift = 61 - bHeadroom - qRes
        if shift <= 0 { return lshiftSat32(result, -shift) }
        return shift < 32 ? result >> shift : 0
    }

    /// SILK's linear congruential generator step (§4.2.7.8.6).
    @inline(__always)
    static func rand(_ seed: Int32) -> Int32 { 907_633_515 &+ seed &* 196_314_165 }

    /// 2^(x/128) from a Q7 log value, the piecewise-parabolic approximation SILK uses for
    /// gains (§4.2.7.4): 0 below 0, Int32.max from 3967 (31 in Q7).
    static func log2lin(_ inLogQ7: Int32) -> Int32 {
        if inLogQ7 < 0 { return 0 }
        if inLogQ7 >= 3967 { return Int32.max }
        var out: Int32 = 1 << (inLogQ7 >> 7)
        let fracQ7 = inLogQ7 & 0x7F
        let poly = smlawb(fracQ7, smulbb(fracQ7, 128 - fracQ7), -174)
        if inLogQ7 < 2048 {
            out = out &+ ((out &* poly) >> 7)
        } else {
            out = out &+ (out >> 7) &* poly
        }
        return out
    }
}

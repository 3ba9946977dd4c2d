import TonearmCore

/// The three sample types a ``PCMBuffer`` holds, with the conversions every decoder shares.
///
/// The rules are Apple's and FFmpeg's (libswresample's `audioconvert.c`):
/// - a signed integer of `n` bits becomes a float by scaling with 2^-(n-1) exactly;
/// - an integer becomes a narrower integer by keeping its high bits (an arithmetic shift
///   right) and a wider one by shifting left;
/// - a float becomes an integer by rounding `x · 2^(n-1)` half to even (`lrintf`) and
///   saturating.
///
/// Integers travel between the stages "justified": the sample's significant bits are the
/// top bits of an `Int32` (or `Int64`), so each conversion is one shift or one multiply,
/// whatever the source width.
///
/// Out-of-range floats saturate: ±∞ and anything at or beyond ±1 clip to the extremes, and
/// NaN becomes 0. (FFmpeg on x86 agrees for |x| < 65536; beyond that, and for NaN, its
/// SIMD and C paths disagree with each other, so there is no single answer to copy.)
protocol DecodedSample {
    static var commonFormat: PCMBuffer.CommonFormat { get }
    /// A signed integer sample whose significant bits are the top bits of `v`.
    static func fromJustified(_ v: Int32) -> Self
    /// A signed integer sample whose significant bits are the top bits of `v`.
    static func fromJustified(_ v: Int64) -> Self
    static func fromInt16(_ x: Int16) -> Self
    static func fromFloat(_ x: Float) -> Self
    static func fromDouble(_ x: Double) -> Self
}

extension Float: DecodedSample {
    static var commonFormat: PCMBuffer.CommonFormat { .float32 }
    @inline(__always) static func fromJustified(_ v: Int32) -> Float { Float(v) * 0x1p-31 }
    @inline(__always) static func fromJustified(_ v: Int64) -> Float { Float(v) * 0x1p-63 }
    @inline(__always) static func fromInt16(_ x: Int16) -> Float { Float(x) * 0x1p-15 }
    @inline(__always) static func fromFloat(_ x: Float) -> Float { x }
    @inline(__always) static func fromDouble(_ x: Double) -> Float { Float(x) }
}

extension Int16: DecodedSample {
    static var commonFormat: PCMBuffer.CommonFormat { .int16 }
    @inline(__always) static func fromJustified(_ v: Int32) -> Int16 { Int16(truncatingIfNeeded: v &>> 16) }
    @inline(__always) static func fromJustified(_ v: Int64) -> Int16 { Int16(truncatingIfNeeded: v &>> 48) }
    @inline(__always) static func fromInt16(_ x: Int16) -> Int16 { x }

    /// `av_clip_int16(lrintf(x * 32768))`, without a branch so that loops vectorise.
    @inline(__always) static func fromFloat(_ x: Float) -> Int16 {
        var y = x * 32768
        y = y == y ? y : 0  // NaN
        y = y < -32768 ? -32768 : y
        y = y > 32767 ? 32767 : y
        // At 1.5 · 2^23 a Float's ulp is 1, so the add rounds half to even and leaves the
        // integer in the low mantissa bits.
        let t = y + 0x1.8p23
        return Int16(truncatingIfNeeded: Int32(bitPattern: t.bitPattern) &- 0x4B40_0000)
    }

    /// `av_clip_int16(lrint(x * 32768))`.
    @inline(__always) static func fromDouble(_ x: Double) -> Int16 {
        var y = x * 32768
        y = y == y ? y : 0
        y = y < -32768 ? -32768 : y
        y = y > 32767 ? 32767 : y
        let t = y + 0x1.8p52
        return Int16(truncatingIfNeeded: Int64(bitPattern: t.bitPattern) &- 0x4338_0000_0000_0000)
    }
}

extension Int32: DecodedSample {
    static var commonFormat: PCMBuffer.CommonFormat { .int32 }
    @inline(__always) static func fromJustified(_ v: Int32) -> Int32 { v }
    @inline(__always) static func fromJustified(_ v: Int64) -> Int32 { Int32(truncatingIfNeeded: v &>> 32) }
    @inline(__always) static func fromInt16(_ x: Int16) -> Int32 { Int32(x) &<< 16 }

    /// `av_clipl_int32(llrintf(x * 2^31))`.
    @inline(__always) static func fromFloat(_ x: Float) -> Int32 {
        let y = x * 0x1p31
        // The largest Float below 2^31 is 2^31 - 128, so [-2^31, 2^31) converts exactly.
        if y >= 0x1p31 { return .max }
        if y >= -0x1p31 { return Int32(roundedToEven(y)) }
        return y.isNaN ? 0 : .min
    }

    /// `av_clipl_int32(llrint(x * 2^31))`.
    @inline(__always) static func fromDouble(_ x: Double) -> Int32 {
        let y = x * 0x1p31
        if y >= 2147483647 { return .max }
        if y > -2147483648 { return Int32(roundedToEven(y)) }
        return y.isNaN ? 0 : .min
    }
}

/// `x` rounded half to even, as `rint` in the default rounding mode, without a libm call
/// (x86-64's baseline has no round instruction). Adding and removing 2^23 with x's sign
/// leaves the nearest integer, because at that magnitude a Float's ulp is 1; anything
/// already that large is whole.
@inline(__always)
func roundedToEven(_ x: Float) -> Float {
    let magic: Float = x < 0 ? -0x1p23 : 0x1p23
    return abs(x) < 0x1p23 ? (x + magic) - magic : x
}

/// The Double twin of ``roundedToEven(_:)-(Float)``, with 2^52.
@inline(__always)
func roundedToEven(_ x: Double) -> Double {
    let magic: Double = x < 0 ? -0x1p52 : 0x1p52
    return abs(x) < 0x1p52 ? (x + magic) - magic : x
}

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

    /// `av_clip_int16(lrintf(x * 32768))`.
    @inline(__always) static func fromFloat(_ x: Float) -> Int16 {
        let y = x * 32768
        if y >= 32767 { return .max }
        // (-32768, 32767) rounds into range.
        if y > -32768 { return Int16(y.rounded(.toNearestOrEven)) }
        return y.isNaN ? 0 : .min
    }

    /// `av_clip_int16(lrint(x * 32768))`.
    @inline(__always) static func fromDouble(_ x: Double) -> Int16 {
        let y = x * 32768
        if y >= 32767 { return .max }
        if y > -32768 { return Int16(y.rounded(.toNearestOrEven)) }
        return y.isNaN ? 0 : .min
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
        if y >= -0x1p31 { return Int32(y.rounded(.toNearestOrEven)) }
        return y.isNaN ? 0 : .min
    }

    /// `av_clipl_int32(llrint(x * 2^31))`.
    @inline(__always) static func fromDouble(_ x: Double) -> Int32 {
        let y = x * 0x1p31
        if y >= 2147483647 { return .max }
        if y > -2147483648 { return Int32(y.rounded(.toNearestOrEven)) }
        return y.isNaN ? 0 : .min
    }
}

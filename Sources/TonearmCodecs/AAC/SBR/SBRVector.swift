// Vector helpers of the SBR and PS stages: unaligned SIMD loads and stores of Float
// matrices, 4 × 4 transposes between band-major and slot-major layouts, and zero fills
// (vector stores: the C library's fills of a few kilobytes run as `rep stosb`).

@inline(__always) func sbrLoad8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}

@inline(__always) func sbrLoad8(_ p: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}

@inline(__always) func sbrStore8(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<Float>.self)
}

@inline(__always) func sbrLoad4(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
}

@inline(__always) func sbrStore4(_ v: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<Float>.self)
}

/// The transpose of a 4 × 4 block given by its rows: the columns.
@inline(__always) func sbrTranspose4(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>, _ d: SIMD4<Float>)
    -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
    let ab = SIMD8(lowHalf: a, highHalf: b), cd = SIMD8(lowHalf: c, highHalf: d)
    // Columns 0 and 2 of the rows, interleaved, then columns 1 and 3.
    let even = SIMD8(lowHalf: ab.evenHalf, highHalf: cd.evenHalf), odd = SIMD8(lowHalf: ab.oddHalf, highHalf: cd.oddHalf)
    return (even.evenHalf, odd.evenHalf, even.oddHalf, odd.oddHalf)
}

/// Copies a block of 4 rows × 4 columns from `from` (rows `fromStride` apart) to `to`
/// transposed (its columns as rows, `toStride` apart).
@inline(__always) func sbrTransposeBlock(_ from: UnsafePointer<Float>, _ fromStride: Int,
                                        _ to: UnsafeMutablePointer<Float>, _ toStride: Int) {
    let (c0, c1, c2, c3) = sbrTranspose4(sbrLoad4(from), sbrLoad4(from + fromStride),
                                        sbrLoad4(from + 2 * fromStride), sbrLoad4(from + 3 * fromStride))
    sbrStore4(c0, to)
    sbrStore4(c1, to + toStride)
    sbrStore4(c2, to + 2 * toStride)
    sbrStore4(c3, to + 3 * toStride)
}

/// A vector of zeros that the optimiser cannot see as such, so that ``sbrZero(_:_:)`` stays
/// vector stores rather than becoming a `memset` call.
nonisolated(unsafe) private let opaqueZeros: UnsafeMutablePointer<SIMD8<Float>> = {
    let p = UnsafeMutablePointer<SIMD8<Float>>.allocate(capacity: 1)
    p.initialize(to: .zero)
    return p
}()

/// Zeros `count` floats from `p`.
@inline(__always) func sbrZero(_ p: UnsafeMutablePointer<Float>, _ count: Int) {
    let zero = opaqueZeros.pointee
    var i = 0
    while i + 8 <= count {
        sbrStore8(zero, p + i)
        i += 8
    }
    while i < count {
        p[i] = zero[0]
        i += 1
    }
}

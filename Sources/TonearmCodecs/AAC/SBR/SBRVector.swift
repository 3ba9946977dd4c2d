// Vector helpers of the SBR and PS stages: 4 × 4 transposes between band-major and
// slot-major layouts, and zero fills (vector stores: the C library's fills of a few
// kilobytes run as `rep stosb`). The loads and stores are TonearmCore's.
import TonearmCore

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
    let (c0, c1, c2, c3) = sbrTranspose4(loadFloat4(from), loadFloat4(from + fromStride),
                                        loadFloat4(from + 2 * fromStride), loadFloat4(from + 3 * fromStride))
    storeFloats(c0, to)
    storeFloats(c1, to + toStride)
    storeFloats(c2, to + 2 * toStride)
    storeFloats(c3, to + 3 * toStride)
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
        storeFloats(zero, p + i)
        i += 8
    }
    while i < count {
        p[i] = zero[0]
        i += 1
    }
}

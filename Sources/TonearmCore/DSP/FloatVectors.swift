// Unaligned SIMD loads and stores of Float arrays, for the transforms and the codecs' vector
// loops (each wraps one `loadUnaligned` or `storeBytes`; inlined across modules).

@inlinable @inline(__always)
package func loadFloat4(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
}

@inlinable @inline(__always)
package func loadFloat4(_ p: UnsafeMutablePointer<Float>) -> SIMD4<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
}

/// The four values at `p`, last first.
@inlinable @inline(__always)
package func loadFloat4Reversed(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
    reversedLanes(loadFloat4(p))
}

@inlinable @inline(__always)
package func loadFloat8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}

@inlinable @inline(__always)
package func loadFloat8(_ p: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}

@inlinable @inline(__always)
package func storeFloats(_ v: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD4<Float>.self)
}

@inlinable @inline(__always)
package func storeFloats(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<Float>.self)
}

@inlinable @inline(__always)
package func reversedLanes(_ v: SIMD4<Float>) -> SIMD4<Float> {
    SIMD4(v[3], v[2], v[1], v[0])
}

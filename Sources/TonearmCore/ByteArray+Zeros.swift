/// 64 KiB of zeros to append from: `append(contentsOf:)` copies a raw buffer with one
/// memcpy, where a `repeatElement` goes element by element (and, unspecialised in a debug
/// build, allocates as it iterates).
nonisolated(unsafe) private let zeroBlock = UnsafeRawBufferPointer(
    UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16).initializeMemory(as: UInt8.self, repeating: 0))

extension Array where Element == UInt8 {
    /// Appends `count` zero bytes, growing the array geometrically as `append` does.
    package mutating func append(zeros count: Int) {
        var left = count
        while left > 0 {
            let n = Swift.min(left, zeroBlock.count)
            append(contentsOf: UnsafeRawBufferPointer(rebasing: zeroBlock[0..<n]))
            left -= n
        }
    }
}

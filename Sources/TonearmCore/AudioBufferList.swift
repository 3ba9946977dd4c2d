/// Memory for audio, as Apple's `AudioBufferList`: one buffer for interleaved audio, one per
/// channel for planar audio. `list[0].count` is the byte size (`mDataByteSize`),
/// `list[0].baseAddress` the memory (`mData`).
///
/// A render callback is given one to fill; ``AudioConverter/fillComplexBuffer(frames:into:input:)``
/// and ``ExtAudioFile/read(frames:into:)`` write into the caller's own, with no copy in between.
/// The list does not own the memory: the pointers must stay valid while it is used.
///
/// ```swift
/// var left = [Float](repeating: 0, count: 4096), right = left
/// left.withUnsafeMutableBytes { l in right.withUnsafeMutableBytes { r in
///     var buffers = [l, r]
///     buffers.withUnsafeMutableBufferPointer { list in
///         let frames = try? file.read(frames: 1024, into: AudioBufferList(list))
///     }
/// } }
/// ```
public struct AudioBufferList {
    private let buffers: UnsafeMutablePointer<UnsafeMutableRawBufferPointer>
    /// How many buffers there are (`mNumberBuffers`).
    public let count: Int

    /// A list over `count` buffers starting at `buffers`.
    public init(_ buffers: UnsafeMutablePointer<UnsafeMutableRawBufferPointer>, count: Int) {
        self.buffers = buffers
        self.count = count
    }

    /// A list over the buffers of `list`.
    public init(_ list: UnsafeMutableBufferPointer<UnsafeMutableRawBufferPointer>) {
        self.init(list.baseAddress ?? UnsafeMutablePointer(bitPattern: MemoryLayout<UnsafeMutableRawBufferPointer>.alignment)!,
                  count: list.count)
    }

    public subscript(index: Int) -> UnsafeMutableRawBufferPointer {
        precondition(index >= 0 && index < count, "buffer index out of range")
        return buffers[index]
    }
}

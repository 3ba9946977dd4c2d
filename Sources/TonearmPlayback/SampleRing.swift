import Synchronization

/// A lock-free single-producer, single-consumer ring of interleaved Float32 frames: a decoding
/// thread writes, the render thread reads.
///
/// Positions count frames since the ring was made and only grow; the storage index is the
/// position modulo the capacity, a power of two. The consumer never blocks, allocates or takes
/// a lock. A seek empties the ring without stopping the consumer: the producer asks for a
/// discard up to its write position, and the consumer skips to it at its next read.
///
/// `package`, not public: its safety rests on one producer and one consumer that the
/// playback classes guarantee, and ``reset()`` is only safe while no consumer runs, which a
/// user holding the ring could not know. Tests and other Tonearm modules may use it.
package final class SampleRing: @unchecked Sendable {
    /// Samples per frame.
    package let channels: Int
    /// Frames the ring holds, a power of two.
    package let capacity: Int

    private let storage: UnsafeMutablePointer<Float>
    private let mask: Int
    private let readPosition = Atomic<Int>(0)
    private let writePosition = Atomic<Int>(0)
    private let discardTarget = Atomic<Int>(0)

    /// A ring of at least `minimumFrames` frames of `channels` samples.
    package init(channels: Int, minimumFrames: Int) {
        precondition(channels > 0 && minimumFrames > 0)
        var frames = 1
        while frames < minimumFrames { frames <<= 1 }
        self.channels = channels
        capacity = frames
        mask = frames - 1
        storage = .allocate(capacity: frames * channels)
        storage.initialize(repeating: 0, count: frames * channels)
    }

    deinit { storage.deallocate() }

    // MARK: Either side

    /// Frames consumed (read or discarded) since the ring was made.
    package var framesRead: Int { readPosition.load(ordering: .acquiring) }
    /// Frames written since the ring was made.
    package var framesWritten: Int { writePosition.load(ordering: .acquiring) }

    // MARK: Producer

    /// Frames the producer can write now without overwriting unread ones.
    package var writableFrames: Int {
        capacity - (writePosition.load(ordering: .relaxed) - readPosition.load(ordering: .acquiring))
    }

    /// Copies up to `frames` frames in; returns how many fit.
    @discardableResult
    package func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        let w = writePosition.load(ordering: .relaxed)
        let n = min(frames, capacity - (w - readPosition.load(ordering: .acquiring)))
        guard n > 0 else { return 0 }
        let start = w & mask
        let first = min(n, capacity - start)
        (storage + start * channels).update(from: source, count: first * channels)
        if first < n { storage.update(from: source + first * channels, count: (n - first) * channels) }
        writePosition.store(w + n, ordering: .releasing)
        return n
    }

    /// Asks the consumer to drop everything written so far (a seek or a flush).
    package func discardWritten() {
        discardTarget.store(writePosition.load(ordering: .relaxed), ordering: .releasing)
    }

    /// Empties the ring at once. Only when no consumer runs (the output is stopped).
    package func reset() {
        let w = writePosition.load(ordering: .relaxed)
        discardTarget.store(w, ordering: .releasing)
        readPosition.store(w, ordering: .releasing)
    }

    // MARK: Consumer (render thread)

    /// Frames ready to read, after any discard the producer asked for.
    package var readableFrames: Int {
        applyDiscard()
        return writePosition.load(ordering: .acquiring) - readPosition.load(ordering: .relaxed)
    }

    /// Adds up to `frames` frames, times `gain`, into `destination` (interleaved, same channel
    /// count); returns how many were there. The render thread calls this.
    @discardableResult
    package func mix(into destination: UnsafeMutablePointer<Float>, frames: Int, gain: Float) -> Int {
        consume(frames) { source, offset, count in
            Self.addScaled(source, into: destination + offset, count: count, gain: gain)
        }
    }

    /// Copies up to `frames` frames out; returns how many were there.
    @discardableResult
    package func read(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        consume(frames) { source, offset, count in
            (destination + offset).update(from: source, count: count)
        }
    }

    /// Hands `body` the readable samples, in at most two runs (the ring wraps): the run's
    /// start, its offset in samples from the first, and its length in samples. Then marks
    /// them read.
    @inline(__always)
    private func consume(_ frames: Int, _ body: (UnsafePointer<Float>, Int, Int) -> Void) -> Int {
        applyDiscard()
        let r = readPosition.load(ordering: .relaxed)
        let n = min(frames, writePosition.load(ordering: .acquiring) - r)
        guard n > 0 else { return 0 }
        let start = r & mask
        let first = min(n, capacity - start)
        body(storage + start * channels, 0, first * channels)
        if first < n { body(storage, first * channels, (n - first) * channels) }
        readPosition.store(r + n, ordering: .releasing)
        return n
    }

    @inline(__always)
    private func applyDiscard() {
        let target = discardTarget.load(ordering: .acquiring)
        if target > readPosition.load(ordering: .relaxed) { readPosition.store(target, ordering: .releasing) }
    }

    @inline(__always)
    private static func addScaled(_ source: UnsafePointer<Float>, into d: UnsafeMutablePointer<Float>, count: Int, gain: Float) {
        if gain == 1 {
            for i in 0..<count { d[i] += source[i] }
        } else {
            for i in 0..<count { d[i] += source[i] * gain }
        }
    }
}

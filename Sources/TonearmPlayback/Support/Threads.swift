// The few POSIX threading primitives playback needs: a device or producer thread, a wake-up
// signal for the threads that may block, and a monotonic clock. The render path uses none of
// them except `Clock.nanoseconds` (a vDSO call, no lock, no allocation).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A joinable POSIX thread running one closure.
final class PlaybackThread: @unchecked Sendable {
    private var handle: pthread_t?
    private let body: () -> Void

    /// Starts `body` on a new thread now.
    init(name _: String, _ body: @escaping () -> Void) {
        self.body = body
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        #if canImport(Darwin)
        let started = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<PlaybackThread>.fromOpaque(raw).takeRetainedValue()
            me.body()
            return nil
        }, box)
        #else
        let started = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<PlaybackThread>.fromOpaque(raw!).takeRetainedValue()
            me.body()
            return nil
        }, box)
        #endif
        if started == 0 {
            handle = thread
        } else {
            Unmanaged<PlaybackThread>.fromOpaque(box).release()
            body()     // no thread to be had: run inline rather than never
        }
    }

    /// True on the thread this object started.
    var isCurrent: Bool {
        guard let handle else { return false }
        return pthread_equal(handle, pthread_self()) != 0
    }

    /// Waits for the thread to end; a no-op on the thread itself or when already joined.
    func join() {
        guard let h = handle, !isCurrent else { return }
        handle = nil
        _ = pthread_join(h, nil)
    }
}

/// A mutex and condition variable: a thread waits (with a timeout) until another signals.
/// Never used on the render thread.
final class WakeSignal: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var cond = pthread_cond_t()
    private var pending = false

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&cond, nil)
    }

    deinit {
        pthread_cond_destroy(&cond)
        pthread_mutex_destroy(&mutex)
    }

    /// Wakes one waiter, or the next thread to wait.
    func signal() {
        pthread_mutex_lock(&mutex)
        pending = true
        pthread_cond_signal(&cond)
        pthread_mutex_unlock(&mutex)
    }

    /// Waits until signalled or until `seconds` pass.
    func wait(seconds: Double) {
        pthread_mutex_lock(&mutex)
        if !pending {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let total = Int(now.tv_nsec) + Int(seconds * 1e9)
            var deadline = timespec()
            deadline.tv_sec = now.tv_sec + total / 1_000_000_000
            deadline.tv_nsec = total % 1_000_000_000
            _ = pthread_cond_timedwait(&cond, &mutex, &deadline)
        }
        pending = false
        pthread_mutex_unlock(&mutex)
    }
}

/// A plain mutex for the non-real-time side (queues of buffers, event lists).
final class Lock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}

/// The monotonic clock, for host times and for pacing a real-time null sink.
enum Clock {
    static var nanoseconds: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Sleeps until the monotonic clock reaches `deadline` nanoseconds.
    static func sleep(until deadline: UInt64) {
        let now = nanoseconds
        guard deadline > now else { return }
        sleep(seconds: Double(deadline - now) / 1e9)
    }

    static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var ts = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var rest = timespec()
        while nanosleep(&ts, &rest) != 0 && errno == EINTR { ts = rest }
    }
}

// The few threading primitives playback needs: a device or producer thread, a wake-up signal
// for the threads that may block, and a monotonic clock (the lock is TonearmCore's `Lock`). The render path uses none of
// them except `Clock.nanoseconds` (a vDSO call, no lock, no allocation).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A joinable POSIX thread running one closure.
///
/// `@unchecked Sendable`: every field is either set once in `init` (the handle, which no
/// thread reads before `init` returns it) or atomic.
final class PlaybackThread: @unchecked Sendable {
    /// What the new thread needs: its body, and where to note its own id before running it.
    private final class Start: @unchecked Sendable {
        let body: () -> Void
        let id: ThreadID
        init(_ body: @escaping () -> Void, _ id: ThreadID) { self.body = body; self.id = id }
    }

    /// The thread's `pthread_t` as an integer, 0 until known. Both sides store it (the same
    /// value): `init` after `pthread_create`, and the thread itself before its body, so that
    /// `isCurrent` holds on the thread from its first instruction.
    private final class ThreadID: Sendable {
        let value = Atomic<Int>(0)
    }

    private let id = ThreadID()
    /// What `pthread_join` takes; nil when no thread could be made.
    private let handle: pthread_t?
    private let joined = Atomic<Bool>(false)

    /// Starts `body` on a new thread now.
    init(name _: String, _ body: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Start(body, id)).toOpaque()
        var thread = pthread_t()
        #if canImport(Darwin)
        let started = pthread_create(&thread, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            start.id.value.store(Int(bitPattern: pthread_self()), ordering: .releasing)
            start.body()
            return nil
        }, box)
        #else
        let started = pthread_create(&thread, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            start.id.value.store(Int(bitPattern: pthread_self()), ordering: .releasing)
            start.body()
            return nil
        }, box)
        #endif
        if started == 0 {
            handle = thread
            id.value.store(Int(bitPattern: thread), ordering: .releasing)
        } else {
            handle = nil
            Unmanaged<Start>.fromOpaque(box).release()
            body()     // no thread to be had: run inline rather than never
        }
    }

    /// A thread nobody joined is detached, so that its resources go when it ends (a queue or
    /// node dropped without being stopped ends its thread by itself).
    deinit {
        if let handle, !joined.exchange(true, ordering: .acquiringAndReleasing) { _ = pthread_detach(handle) }
    }

    /// True on the thread this object started.
    var isCurrent: Bool {
        let me = id.value.load(ordering: .acquiring)
        return me != 0 && me == Int(bitPattern: pthread_self())
    }

    /// Waits for the thread to end; a no-op on the thread itself or when already joined.
    /// Only the first caller joins: a second `pthread_join` of one thread is undefined.
    func join() {
        guard let handle, !isCurrent, !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = pthread_join(handle, nil)
    }
}

/// A mutex and condition variable: a thread waits (with a timeout) until another signals.
/// Never used on a real-time render thread (an offline one, with no deadline, may wait).
///
/// The pthread objects live in memory of their own, allocated once: a `pthread_mutex_t`
/// stored in a Swift class field and passed with `&` may be copied to a temporary for the
/// call (inout semantics), and a mutex or condition must never move while in use.
/// (Synchronization's `Mutex` has no condition variable to pair with, so both are pthread's.)
final class WakeSignal: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    /// Guarded by `mutex`.
    private var pending = false

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deinitialize(count: 1)
        cond.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Wakes one waiter, or the next thread to wait.
    func signal() {
        pthread_mutex_lock(mutex)
        pending = true
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until signalled or until `seconds` pass.
    func wait(seconds: Double) {
        pthread_mutex_lock(mutex)
        if !pending {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let total = Int(now.tv_nsec) + Int(seconds * 1e9)
            var deadline = timespec()
            deadline.tv_sec = now.tv_sec + total / 1_000_000_000
            deadline.tv_nsec = total % 1_000_000_000
            _ = pthread_cond_timedwait(cond, mutex, &deadline)
        }
        pending = false
        pthread_mutex_unlock(mutex)
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

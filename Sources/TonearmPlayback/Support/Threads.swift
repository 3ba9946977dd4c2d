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
import TonearmCore

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

/// A wake-up: a thread waits (with a timeout) until another signals, or returns at once when
/// a signal came since its last wait. Never used on a real-time render thread (an offline
/// one, with no deadline, may wait).
final class WakeSignal: @unchecked Sendable {
    private let condition = Condition()
    /// Guarded by `condition`.
    private var pending = false

    /// Wakes one waiter, or the next thread to wait.
    func signal() {
        condition.withLock {
            pending = true
            condition.signal()
        }
    }

    /// Waits until signalled or until `seconds` pass.
    func wait(seconds: Double) {
        condition.withLock {
            if !pending { condition.wait(seconds: seconds) }
            pending = false
        }
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

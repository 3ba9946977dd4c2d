#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value set on one thread and read on others, behind a lock: for the callback properties
/// (`onEvent`, `isRunningListener`…) that a worker thread reads while the user may still be
/// setting them. A closure is two words, so an unguarded read can see half of a new one.
///
/// ```swift
/// @Synchronized public var onEvent: (@Sendable (Event) -> Void)? = nil
/// ```
@propertyWrapper
public struct Synchronized<Value: Sendable>: Sendable {
    private final class Box: @unchecked Sendable {
        let lock = Lock()
        /// Guarded by `lock`.
        var value: Value
        init(_ value: Value) { self.value = value }
    }
    private let box: Box

    public init(wrappedValue: Value) { box = Box(wrappedValue) }

    public var wrappedValue: Value {
        get { box.lock.withLock { box.value } }
        nonmutating set { box.lock.withLock { box.value = newValue } }
    }
}

/// A mutex for the side that may block (lists of buffers, registries, callbacks), never for
/// a real-time render path. Not recursive.
///
/// A `pthread_mutex_t` in memory of its own, allocated once: a mutex must never move, and one
/// stored in a class field and passed with `&` may be handed to the C call as a temporary
/// copy. Not the Synchronization module's `Mutex`, which is correct but takes its contended
/// path through a futex inside libswiftSynchronization, which ThreadSanitizer does not see:
/// two threads that took a `Mutex` in turn look unordered to it, and every field the mutex
/// guards is reported as a race. ThreadSanitizer intercepts `pthread_mutex_lock`.
package final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A mutex with a condition variable, for a thread that waits until another changes what the
/// mutex guards (a decoder's thread waiting for bytes, a device thread for a wake-up). As
/// ``Lock``, the pthread objects live in memory of their own and ThreadSanitizer sees them.
/// Never used on a real-time render thread.
package final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    package init() {
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

    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Inside ``withLock(_:)``: releases the mutex until woken (or spuriously), then takes it again.
    package func wait() { pthread_cond_wait(cond, mutex) }

    /// Inside ``withLock(_:)``: as ``wait()``, for at most `seconds`.
    package func wait(seconds: Double) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let total = Int(now.tv_nsec) + Int(max(0, seconds) * 1e9)
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        _ = pthread_cond_timedwait(cond, mutex, &deadline)
    }

    /// Wakes every waiter (call with the mutex held, after changing what they wait for).
    package func broadcast() { pthread_cond_broadcast(cond) }

    /// Wakes one waiter (call with the mutex held).
    package func signal() { pthread_cond_signal(cond) }
}

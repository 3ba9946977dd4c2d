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

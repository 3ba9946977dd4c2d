import Synchronization

/// A value set on one thread and read on others, behind a lock: for the callback properties
/// (`onEvent`, `isRunningListener`…) that a worker thread reads while the user may still be
/// setting them. A closure is two words, so an unguarded read can see half of a new one.
///
/// ```swift
/// @Synchronized public var onEvent: (@Sendable (Event) -> Void)? = nil
/// ```
@propertyWrapper
public struct Synchronized<Value: Sendable>: Sendable {
    private final class Box: Sendable {
        let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
    }
    private let box: Box

    public init(wrappedValue: Value) { box = Box(wrappedValue) }

    public var wrappedValue: Value {
        get { box.mutex.withLock { $0 } }
        nonmutating set { box.mutex.withLock { $0 = newValue } }
    }
}

import Synchronization

/// A Boolean shared between a control thread and the render thread. Sequentially consistent,
/// so that "set my flag, then look at yours" handshakes between two threads hold (on x86 a
/// load stays a plain load).
final class AtomicFlag: @unchecked Sendable {
    private let storage = Atomic<Bool>(false)
    init(_ value: Bool = false) { storage.store(value, ordering: .sequentiallyConsistent) }
    var value: Bool {
        get { storage.load(ordering: .sequentiallyConsistent) }
        set { storage.store(newValue, ordering: .sequentiallyConsistent) }
    }
}

/// A counter the render thread bumps and others read.
final class AtomicCounter: @unchecked Sendable {
    private let storage = Atomic<Int>(0)
    var value: Int { storage.load(ordering: .acquiring) }
    func add(_ n: Int) { storage.wrappingAdd(n, ordering: .releasing) }
    func store(_ n: Int) { storage.store(n, ordering: .releasing) }
}

/// A Float parameter (volume, rate) set by a control thread and read by the render thread.
final class AtomicFloat: @unchecked Sendable {
    private let bits: Atomic<UInt32>
    init(_ value: Float) { bits = Atomic(value.bitPattern) }
    var value: Float {
        get { Float(bitPattern: bits.load(ordering: .relaxed)) }
        set { bits.store(newValue.bitPattern, ordering: .relaxed) }
    }
}

import Foundation

/// A value shared between a test and the threads that report to it (event handlers).
public final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var v: T
    public init(_ v: T) { self.v = v }
    public func set(_ new: T) { lock.withLock { v = new } }
    public func update(_ change: (inout T) -> Void) { lock.withLock { change(&v) } }
    public var value: T { lock.withLock { v } }
}

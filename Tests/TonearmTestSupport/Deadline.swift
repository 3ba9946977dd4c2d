import Foundation

/// Runs `body` on a thread of its own and waits at most `seconds` for it: the result, or nil
/// when it did not return in time. A test of code that could hang (a parser waiting for
/// bytes that never come) fails instead of stalling the whole run; the stuck thread is left
/// behind, since nothing can stop it safely.
public func runWithDeadline<T>(seconds: Double, _ body: @escaping () -> T) -> T? {
    let box = DeadlineBox(body)
    let thread = Thread {
        let r = box.body()
        box.lock.lock()
        box.result = r
        box.lock.unlock()
        box.done.signal()
    }
    // As much stack as XCTest's main thread: libavformat and the decoders want more than a
    // secondary thread's default.
    thread.stackSize = 8 << 20
    thread.start()
    guard box.done.wait(timeout: .now() + seconds) == .success else { return nil }
    box.lock.lock()
    defer { box.lock.unlock() }
    return box.result
}

/// The body and its result, shared by the test's thread and the worker (the lock guards `result`).
private final class DeadlineBox<T>: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    let lock = NSLock()
    var result: T?
    let body: () -> T
    init(_ body: @escaping () -> T) { self.body = body }
}

// Helpers for the backends' C libraries (opened with TonearmCore's `DynamicLibrary`).
import TonearmCore

extension String {
    /// A C string the library owns, or `fallback` when it gave none.
    init(cLibraryString p: UnsafePointer<CChar>?, fallback: String = "unknown error") {
        self = p.map { String(cString: $0) } ?? fallback
    }
}

/// Latency seconds as a C library takes them, bounded (NaN or infinity would trap in a
/// conversion): 1 ms to 10 s, 0.1 s when not finite.
func boundedLatency(_ seconds: Double) -> Double {
    guard seconds.isFinite else { return 0.1 }
    return max(0.001, min(seconds, 10))
}

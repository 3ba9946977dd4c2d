// Loading a system library at run time, so the default build needs neither its headers nor a
// link-time dependency: the ALSA and PulseAudio backends find their libraries only when asked
// to play, and say clearly when they are missing.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// A shared library opened with `dlopen`. It is never closed: its symbols stay valid for the
/// life of the process, which lets the backends keep them in lazily loaded statics.
struct DynamicLibrary: @unchecked Sendable {
    /// The file name it was opened by (`libasound.so.2`).
    let name: String
    private let handle: UnsafeMutableRawPointer

    /// Opens `name` with `RTLD_NOW | RTLD_LOCAL`; nil when the loader cannot find or load it.
    init?(_ name: String) {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { return nil }
        self.name = name
        self.handle = handle
    }

    /// The function `symbol` as the C function type `T` (a `@convention(c)` type); '!dev' when
    /// the library lacks it (an older version than the backend needs).
    func function<T>(_ symbol: String, as _: T.Type = T.self) throws(AudioError) -> T {
        guard let address = dlsym(handle, symbol) else {
            throw AudioError(.badDevice, "\(name) has no \(symbol) (the library is too old or not the real one)")
        }
        return unsafeBitCast(address, to: T.self)
    }
}

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

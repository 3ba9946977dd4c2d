// Loading a system library at run time, so the default build needs neither its headers nor a
// link-time dependency: the ALSA and PulseAudio backends find their libraries only when asked
// to play, the HTTP client finds OpenSSL only for an https: URL, and each says clearly when its
// library is missing.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A shared library opened with `dlopen`. It is never closed: its symbols stay valid for the
/// life of the process, which lets its users keep them in lazily loaded statics.
package struct DynamicLibrary: @unchecked Sendable {
    /// The file name it was opened by (`libasound.so.2`).
    package let name: String
    private let handle: UnsafeMutableRawPointer
    private let missingSymbol: AudioError.Code

    /// Opens `name` with `RTLD_NOW | RTLD_LOCAL`; nil when the loader cannot find or load it.
    /// A symbol the library lacks is an error with code `missingSymbol` ('!dev' for an audio
    /// backend).
    package init?(_ name: String, missingSymbol: AudioError.Code) {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { return nil }
        self.name = name
        self.handle = handle
        self.missingSymbol = missingSymbol
    }

    /// The function `symbol` as the C function type `T` (a `@convention(c)` type), looked up in
    /// the library and the libraries it depends on; an error when none has it (an older
    /// version than the caller needs).
    package func function<T>(_ symbol: String, as _: T.Type = T.self) throws(AudioError) -> T {
        guard let address = dlsym(handle, symbol) else {
            throw AudioError(missingSymbol, "\(name) has no \(symbol) (the library is too old or not the real one)")
        }
        return unsafeBitCast(address, to: T.self)
    }
}

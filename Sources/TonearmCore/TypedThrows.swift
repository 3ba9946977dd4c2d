// The standard library's `withUnsafeBytes` rethrows untyped errors; these keep `AudioError`.

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws ``AudioError``.
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(AudioError) -> R) throws(AudioError) -> R {
        var result: Result<R, AudioError>!
        withUnsafeBytes { raw in
            do throws(AudioError) { result = .success(try body(raw)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// `withUnsafeMutableBytes` for a body that throws ``AudioError``.
    @inlinable
    public mutating func withMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws(AudioError) -> R) throws(AudioError) -> R {
        var result: Result<R, AudioError>!
        withUnsafeMutableBytes { raw in
            do throws(AudioError) { result = .success(try body(raw)) } catch { result = .failure(error) }
        }
        return try result.get()
    }
}

extension ArraySlice where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws ``AudioError``.
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(AudioError) -> R) throws(AudioError) -> R {
        var result: Result<R, AudioError>!
        withUnsafeBytes { raw in
            do throws(AudioError) { result = .success(try body(raw)) } catch { result = .failure(error) }
        }
        return try result.get()
    }
}

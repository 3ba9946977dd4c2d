// RenderAllocCheck: plays playback's render paths into a sink that counts the heap calls the
// device thread makes while it renders, and prints the counts as JSON lines. The test
// RenderAllocationTests runs it; run it by hand to look into a failure:
//
//     swift build --product RenderAllocCheck
//     .build/debug/RenderAllocCheck [--list] [SCENARIO...]
//     RENDER_ALLOC_TRAP=1 .build/debug/RenderAllocCheck SCENARIO   # SIGTRAP at the first counted call:
//                                                                  # the backtrace shows who allocated
//
// The counter lives in this file on purpose. Globals declared in main.swift are plain static
// storage, read without a lazy initialiser (no swift_once), so the interposed functions below
// can run before `main` and on any thread, never allocate and never re-enter themselves. They
// only read atomics, compare `pthread_self()` and forward to glibc's own entry points
// (`__libc_malloc` and friends), which never call back into `malloc`.
//
// Package.swift links this target with `--defsym=malloc=rtcheck_malloc` (and the same for the
// rest of the family) and exports those symbols, so every library in the process, the Swift
// runtime included, calls these instead of glibc's. (`@_cdecl("malloc")` would do the same
// but Swift reserves the names `malloc` and `free` and warns that it will become an error.)

#if canImport(Glibc)
import Glibc
import Synchronization

@_extern(c, "__libc_malloc") private func libcMalloc(_ size: Int) -> UnsafeMutableRawPointer?
@_extern(c, "__libc_calloc") private func libcCalloc(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer?
@_extern(c, "__libc_realloc") private func libcRealloc(_ p: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer?
@_extern(c, "__libc_free") private func libcFree(_ p: UnsafeMutableRawPointer?)
@_extern(c, "__libc_memalign") private func libcMemalign(_ alignment: Int, _ size: Int) -> UnsafeMutableRawPointer?
@_extern(c, "__libc_valloc") private func libcValloc(_ size: Int) -> UnsafeMutableRawPointer?
@_extern(c, "__libc_pvalloc") private func libcPvalloc(_ size: Int) -> UnsafeMutableRawPointer?

/// Counting is on: set by the measured thread itself when it leaves the device write.
private let countingOn = Atomic<Bool>(false)
/// The `pthread_t` of the thread whose calls count.
private let countedThread = Atomic<UInt>(0)
private let countedAllocations = Atomic<Int>(0)
private let countedFrees = Atomic<Int>(0)
private let countedBytes = Atomic<Int>(0)
/// RENDER_ALLOC_TRAP: raise SIGTRAP at a counted allocation, for a backtrace.
private let trapOnAllocation = Atomic<Bool>(false)

@inline(__always)
private func counts() -> Bool {
    // Any thread may read these; only the measured thread finds its own id, and only it
    // switches counting on and off, so relaxed loads are enough.
    countingOn.load(ordering: .relaxed) && countedThread.load(ordering: .relaxed) == UInt(pthread_self())
}

@inline(__always)
private func noteAllocation(_ bytes: Int) {
    guard counts() else { return }
    countedAllocations.wrappingAdd(1, ordering: .relaxed)
    countedBytes.wrappingAdd(bytes, ordering: .relaxed)
    if trapOnAllocation.load(ordering: .relaxed) { _ = raise(SIGTRAP) }
}

@_cdecl("rtcheck_malloc")
public func rtcheckMalloc(_ size: Int) -> UnsafeMutableRawPointer? {
    noteAllocation(size)
    return libcMalloc(size)
}

@_cdecl("rtcheck_calloc")
public func rtcheckCalloc(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
    noteAllocation(count &* size)
    return libcCalloc(count, size)
}

@_cdecl("rtcheck_realloc")
public func rtcheckRealloc(_ p: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
    noteAllocation(size)
    return libcRealloc(p, size)
}

@_cdecl("rtcheck_reallocarray")
public func rtcheckReallocarray(_ p: UnsafeMutableRawPointer?, _ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
    let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
    noteAllocation(bytes)
    if overflow || bytes < 0 {
        errno = ENOMEM
        return nil
    }
    return libcRealloc(p, bytes)
}

@_cdecl("rtcheck_free")
public func rtcheckFree(_ p: UnsafeMutableRawPointer?) {
    if p != nil && counts() { countedFrees.wrappingAdd(1, ordering: .relaxed) }
    libcFree(p)
}

@_cdecl("rtcheck_posix_memalign")
public func rtcheckPosixMemalign(_ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ alignment: Int,
                                 _ size: Int) -> Int32
{
    noteAllocation(size)
    let word = MemoryLayout<UnsafeRawPointer>.size
    guard let out, alignment >= word, alignment & (alignment - 1) == 0 else { return EINVAL }
    guard let p = libcMemalign(alignment, size) else { return ENOMEM }
    out.pointee = p
    return 0
}

@_cdecl("rtcheck_aligned_alloc")
public func rtcheckAlignedAlloc(_ alignment: Int, _ size: Int) -> UnsafeMutableRawPointer? {
    noteAllocation(size)
    return libcMemalign(alignment, size)
}

@_cdecl("rtcheck_memalign")
public func rtcheckMemalign(_ alignment: Int, _ size: Int) -> UnsafeMutableRawPointer? {
    noteAllocation(size)
    return libcMemalign(alignment, size)
}

@_cdecl("rtcheck_valloc")
public func rtcheckValloc(_ size: Int) -> UnsafeMutableRawPointer? {
    noteAllocation(size)
    return libcValloc(size)
}

@_cdecl("rtcheck_pvalloc")
public func rtcheckPvalloc(_ size: Int) -> UnsafeMutableRawPointer? {
    noteAllocation(size)
    return libcPvalloc(size)
}

/// The switch and the totals of the interposed allocator.
enum AllocationCounter {
    static let isSupported = true

    /// Zeroes the totals and forgets the counted thread. Call with counting off.
    static func reset() {
        countingOn.store(false, ordering: .relaxed)
        countedThread.store(0, ordering: .relaxed)
        countedAllocations.store(0, ordering: .relaxed)
        countedFrees.store(0, ordering: .relaxed)
        countedBytes.store(0, ordering: .relaxed)
    }

    /// Counts the calling thread's allocations from now on.
    static func resume() {
        countedThread.store(UInt(pthread_self()), ordering: .relaxed)
        countingOn.store(true, ordering: .relaxed)
    }

    /// Stops counting.
    static func pause() {
        countingOn.store(false, ordering: .relaxed)
    }

    /// The totals so far: allocation calls (malloc, calloc, realloc and the aligned ones), frees of
    /// non-nil pointers, and the bytes asked for.
    static var totals: (allocations: Int, frees: Int, bytes: Int) {
        (countedAllocations.load(ordering: .acquiring), countedFrees.load(ordering: .acquiring),
         countedBytes.load(ordering: .acquiring))
    }

    static func trapOnCountedAllocation(_ on: Bool) {
        trapOnAllocation.store(on, ordering: .relaxed)
    }
}

#else

/// No interposition outside glibc: the harness reports itself unsupported.
enum AllocationCounter {
    static let isSupported = false
    static func reset() {}
    static func resume() {}
    static func pause() {}
    static var totals: (allocations: Int, frees: Int, bytes: Int) { (0, 0, 0) }
    static func trapOnCountedAllocation(_: Bool) {}
}

#endif

Harness.main(arguments: Array(CommandLine.arguments.dropFirst()))

import Tonearm

// libFuzzer's driver, called from each target's `<Target>_main` (see ../shared/REFERENCES.md:
// SwiftPM links executables with --defsym main=<Module>_main).

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// Runs libFuzzer with the process's arguments and a test-one-input callback.
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    return withUnsafeMutablePointer(to: &argv) { argvPointer in
        argvPointer.withMemoryRebound(to: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?.self, capacity: 1) { p in
            LLVMFuzzerRunDriver(&argc, p, callback)
        }
    }
}

/// The fuzzer's input as an array.
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

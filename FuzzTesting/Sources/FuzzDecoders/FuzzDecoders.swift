import FuzzSupport
import Tonearm

// Placeholder until the decoder fuzzer lands.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { 0 }

@_cdecl("FuzzDecoders_main")
public func fuzzDecodersMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzDecoders)
}

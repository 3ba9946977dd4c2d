import FuzzSupport
import Tonearm

// MP4/M4A/3GP: boxes, sample tables, fragments, the mfra index, metadata and chapters. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamily(data, size, hint: .mpeg4)
}

@_cdecl("FuzzMP4_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

import FuzzSupport
import Tonearm

// MP4/M4A/3GP: boxes, sample tables, fragments, the mfra index, metadata and chapters. Parse only
// (both paths and their seeks); FuzzMP4Decode decodes. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyParse(data, size, hint: .mpeg4, limit: InputLimit.mp4)
}

@_cdecl("FuzzMP4_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

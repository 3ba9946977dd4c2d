import FuzzSupport
import Tonearm

// WAVE, RF64, Wave64, AIFF/AIFC, CAF and AU: the chunk engine and AU's parser. Parse only (both
// paths and their seeks); FuzzChunkedDecode decodes. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyParse(data, size, hint: .wave, limit: InputLimit.chunked)
}

@_cdecl("FuzzChunked_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

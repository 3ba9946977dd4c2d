import FuzzSupport
import Tonearm

// WAVE, RF64, Wave64, AIFF/AIFC, CAF and AU: the chunk engine and AU's parser. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamily(data, size, hint: .wave)
}

@_cdecl("FuzzChunked_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

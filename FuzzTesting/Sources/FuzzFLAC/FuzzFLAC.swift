import FuzzSupport
import Tonearm

// FLAC: metadata blocks, frame sync with CRC-8/CRC-16, SEEKTABLE seeks through the fetcher. Parse
// only (both paths and their seeks); FuzzFLACDecode decodes. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyParse(data, size, hint: .flac, limit: InputLimit.flac)
}

@_cdecl("FuzzFLAC_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

import FuzzSupport
import Tonearm

// MPEG audio, ADTS, LOAS, AC-3/E-AC-3 and AMR: the sync-frame engine, ID3/APE tags and the probe.
// Parse only (both paths and their seeks); FuzzSyncDecode decodes. Seeded with that family's
// fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyParse(data, size, hint: .mp3, limit: InputLimit.framed)
}

@_cdecl("FuzzSync_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

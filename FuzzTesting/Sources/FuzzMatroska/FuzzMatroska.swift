import FuzzSupport
import Tonearm

// Matroska and WebM: EBML element IDs and sizes (unknown sizes included), the Segment's
// SeekHead, Tracks and their codec private data, Clusters with SimpleBlocks and BlockGroups
// in the three lacings, Cues, Tags and Chapters. Parse only (both paths and their seeks);
// FuzzMatroskaDecode decodes. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyParse(data, size, hint: .matroska, limit: InputLimit.matroska)
}

@_cdecl("FuzzMatroska_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

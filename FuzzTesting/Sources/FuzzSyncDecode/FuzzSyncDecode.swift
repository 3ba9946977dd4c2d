import FuzzSupport
import Tonearm

// Decoding MPEG audio Layers I-III from MPEG files (the others have no decoder: opening them for
// decoding fails). The file is opened (AudioFile) and decoded through ExtAudioFile, sought and
// read on; FuzzSync fuzzes the parsing. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyDecode(data, size, hint: .mp3)
}

@_cdecl("FuzzSyncDecode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

import FuzzSupport
import Tonearm

// Decoding FLAC files: the frame decoder after the parser's frame sync. The file is opened
// (AudioFile) and decoded through ExtAudioFile, sought and read on; FuzzFLAC fuzzes the parsing.
// Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyDecode(data, size, hint: .flac)
}

@_cdecl("FuzzFLACDecode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

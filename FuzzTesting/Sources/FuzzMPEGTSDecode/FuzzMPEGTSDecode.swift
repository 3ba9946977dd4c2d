import FuzzSupport
import Tonearm

// Decoding what MPEG-TS carries (AAC in ADTS and LATM, MPEG audio, Opus): the file is opened
// (AudioFile) and decoded through ExtAudioFile, sought and read on; FuzzMPEGTS fuzzes the
// parsing. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyDecode(data, size, hint: .mpegTS)
}

@_cdecl("FuzzMPEGTSDecode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

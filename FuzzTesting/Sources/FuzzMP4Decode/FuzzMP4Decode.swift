import FuzzSupport
import Tonearm

// Decoding ALAC, FLAC and MP3 in MP4 (AAC, AC-3 and Opus have no decoder). The file is opened
// (AudioFile) and decoded through ExtAudioFile, sought and read on; FuzzMP4 fuzzes the parsing.
// Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyDecode(data, size, hint: .mpeg4)
}

@_cdecl("FuzzMP4Decode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

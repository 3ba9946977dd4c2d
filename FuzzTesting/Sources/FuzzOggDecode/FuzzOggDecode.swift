import FuzzSupport
import Tonearm

// Decoding FLAC in Ogg (Vorbis, Opus and Speex have no decoder). The file is opened (AudioFile)
// and decoded through ExtAudioFile, sought and read on; FuzzOgg fuzzes the parsing. Seeded with
// that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyDecode(data, size, hint: .ogg)
}

@_cdecl("FuzzOggDecode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

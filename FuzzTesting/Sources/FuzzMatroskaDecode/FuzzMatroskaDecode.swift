import FuzzSupport
import Tonearm

// Decoding what Matroska and WebM carry (Opus, Vorbis, AAC, FLAC, MPEG audio, PCM): the file
// is opened (AudioFile) and decoded through ExtAudioFile, sought and read on; FuzzMatroska
// fuzzes the parsing. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyDecode(data, size, hint: .matroska)
}

@_cdecl("FuzzMatroskaDecode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

import FuzzSupport
import Tonearm

// Decoding PCM, G.711, IMA4, IMA/MS ADPCM and ALAC in those containers. The file is opened
// (AudioFile) and decoded through ExtAudioFile, sought and read on; FuzzChunked fuzzes the
// parsing. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyDecode(data, size, hint: .wave)
}

@_cdecl("FuzzChunkedDecode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

import FuzzSupport
import Tonearm

// Ogg: pages, packets across pages, chains, the Vorbis/Opus/FLAC/Speex headers, granule
// bisection. Parse only (both paths and their seeks); FuzzOggDecode decodes. Seeded with that
// family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyParse(data, size, hint: .ogg, limit: InputLimit.ogg)
}

@_cdecl("FuzzOgg_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

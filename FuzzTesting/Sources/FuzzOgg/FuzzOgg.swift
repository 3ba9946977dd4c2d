import FuzzSupport
import Tonearm

// Ogg: pages, packets across pages, chains, the Vorbis/Opus/FLAC/Speex headers, granule bisection. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamily(data, size, hint: .ogg)
}

@_cdecl("FuzzOgg_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

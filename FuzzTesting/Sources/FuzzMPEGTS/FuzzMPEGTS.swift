import FuzzSupport
import Tonearm

// MPEG transport streams: packet sync at the three strides (188, M2TS's 192, 204), PAT and
// PMT sections with their CRC and descriptors, PES headers and payloads across packets,
// continuity counters, adaptation fields, the codecs' framing inside (ADTS, LOAS, MPEG
// audio, AC-3, Opus control headers) and timed ID3. Parse only (both paths and their
// seeks); FuzzMPEGTSDecode decodes. Seeded with that family's fixtures.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzFamilyParse(data, size, hint: .mpegTS, limit: InputLimit.mpegTS)
}

@_cdecl("FuzzMPEGTS_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzOne)
}

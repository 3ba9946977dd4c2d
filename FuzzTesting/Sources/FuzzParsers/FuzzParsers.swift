import FuzzSupport
import Tonearm

// Every registered file type's parser, through both paths (parse only: the family decode
// targets decode). The first byte picks a type hint (or none, so the probe decides), a chunk
// size for the push path (1 to 64 bytes, or 256 to 4288 as a network delivers them: small
// chunks for every input made the push path most of the time), and whether the stream has a
// byte-range fetcher.

/// Read once: the registry builds the list on each call.
let types = FormatRegistry.readableTypes

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParsers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 1, size <= InputLimit.anyType + 1 else { return 0 }
    let selector = data[0]
    let input = bytes(data + 1, size - 1)
    let hint: AudioFileTypeID? = Int(selector) < types.count ? types[Int(selector)] : nil
    let chunk = selector & 2 == 0 ? 1 + Int(selector >> 2) : 256 + 64 * Int(selector >> 2)

    fuzzParser(input, hint: hint, chunk: chunk, fetcher: selector & 1 != 0)
    return 0
}

@_cdecl("FuzzParsers_main")
public func fuzzParsersMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzParsers)
}

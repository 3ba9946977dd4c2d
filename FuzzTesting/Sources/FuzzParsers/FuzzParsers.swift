import FuzzSupport
import Tonearm

// Every registered file type's parser, through both paths. The first byte picks a type
// hint (or none, so the probe decides), a chunk size for the push path, and whether the
// stream has a byte-range fetcher.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParsers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let all = bytes(data, size)
    guard let selector = all.first else { return 0 }
    let input = Array(all.dropFirst())
    let types = FormatRegistry.readableTypes
    let hint: AudioFileTypeID? = Int(selector) < types.count ? types[Int(selector)] : nil
    let chunk = 1 + Int(selector >> 2)

    fuzzParser(input, hint: hint, chunk: chunk, fetcher: selector & 1 != 0)
    return 0
}

@_cdecl("FuzzParsers_main")
public func fuzzParsersMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzParsers)
}

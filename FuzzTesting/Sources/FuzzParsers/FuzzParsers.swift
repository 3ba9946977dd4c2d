import FuzzSupport
import Tonearm

// Every registered file type's parser, through both paths. The first byte picks a type
// hint (or none, so the probe decides) and a chunk size for the push path.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParsers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let all = bytes(data, size)
    guard let selector = all.first else { return 0 }
    let input = Array(all.dropFirst())
    let types = FormatRegistry.readableTypes
    let hint: AudioFileTypeID? = Int(selector) < types.count ? types[Int(selector)] : nil
    let chunk = 1 + Int(selector >> 2)

    // Push path.
    let stream = AudioFileStream(fileTypeHint: hint, propertyListener: { s, id, _ in
        _ = try? s.property(id)
    }, packets: { bytes, packets, data, descriptions in
        precondition(bytes == data.count)
        if let descriptions {
            precondition(descriptions.count == packets)
            for d in descriptions { precondition(d.startOffset >= 0 && d.startOffset + Int64(d.dataByteSize) <= Int64(bytes)) }
        }
    })
    var i = 0
    do {
        while i < input.count {
            let n = min(chunk, input.count - i)
            try stream.parse(input[i..<i + n])
            i += n
        }
        try stream.parse(nil)
        if let count = try? stream.audioDataPacketCount, count > 0 {
            _ = try? stream.seek(toPacket: count / 2)
            for id in AudioFilePropertyID.streamProperties { _ = try? stream.property(id) }
        }
    } catch {}

    // Random-access path.
    if let file = try? AudioFile(source: MemorySource(input), fileTypeHint: hint),
       let p = try? file.properties, let total = p.audioDataPacketCount, total > 0
    {
        _ = try? file.readPacketData(startingAt: 0, count: 64)
        _ = try? file.readPacketData(startingAt: total - 1, count: 64)
        _ = try? file.readBytes(startingAt: 0, count: 100)
        _ = try? file.property(.estimatedDuration)
    }
    return 0
}

@_cdecl("FuzzParsers_main")
public func fuzzParsersMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzParsers)
}

import Tonearm

// libFuzzer's driver, called from each target's `<Target>_main` (see ../shared/REFERENCES.md:
// SwiftPM links executables with --defsym main=<Module>_main).

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// Runs libFuzzer with the process's arguments and a test-one-input callback.
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    return withUnsafeMutablePointer(to: &argv) { argvPointer in
        argvPointer.withMemoryRebound(to: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?.self, capacity: 1) { p in
            LLVMFuzzerRunDriver(&argc, p, callback)
        }
    }
}

/// The fuzzer's input as an array.
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// One input through both paths of the parsers: pushed to an AudioFileStream in chunks of
/// `chunk` bytes (with a byte-range fetcher and the size over the same bytes when
/// `fetcher` is set, as an HTTP stream has), seeking by packet and by frame; then opened with
/// AudioFile and read. Checks that every packet description lies in the bytes handed over.
public func fuzzParser(_ input: [UInt8], hint: AudioFileTypeID?, chunk: Int, fetcher: Bool) {
    let stream = AudioFileStream(fileTypeHint: hint, propertyListener: { s, id, _ in
        _ = try? s.property(id)
    }, packets: { bytes, packets, data, descriptions in
        precondition(bytes == data.count)
        if let descriptions {
            precondition(descriptions.count == packets)
            for d in descriptions { precondition(d.startOffset >= 0 && d.startOffset + Int64(d.dataByteSize) <= Int64(bytes)) }
        }
    })
    if fetcher {
        stream.byteRangeFetcher = { offset, count throws(AudioError) in
            guard offset >= 0, offset <= Int64(input.count), count >= 0 else { throw AudioError(.endOfFile, "out of range") }
            return Array(input[Int(offset)..<Int(min(Int64(input.count), offset + Int64(count)))])
        }
        stream.sourceSize = Int64(input.count)
    }
    var i = 0
    do {
        while i < input.count {
            let n = min(max(1, chunk), input.count - i)
            try stream.parse(input[i..<i + n])
            i += n
        }
        try stream.parse(nil)
        if stream.isReadyToProducePackets {
            if let count = try? stream.audioDataPacketCount, count > 0 { _ = try? stream.seek(toPacket: count / 2) }
            _ = try? stream.seek(toPacket: 3)
            if let (offset, _) = try? stream.seek(toFrame: 4096), let base = try? stream.dataOffset,
               base + offset >= 0, base + offset < Int64(input.count)
            {
                // Read on from there, as a player would after the seek.
                try stream.parse(input[Int(base + offset)...], flags: .discontinuity)
                try stream.parse(nil)
            }
            for id in AudioFilePropertyID.streamProperties { _ = try? stream.property(id) }
        }
    } catch {}

    if let file = try? AudioFile(source: MemorySource(input), fileTypeHint: hint),
       let p = try? file.properties, let total = p.audioDataPacketCount, total > 0
    {
        _ = try? file.readPacketData(startingAt: 0, count: 64)
        _ = try? file.readPacketData(startingAt: total - 1, count: 64)
        _ = try? file.readBytes(startingAt: 0, count: 100)
        _ = try? file.property(.estimatedDuration)
        _ = try? file.packet(forFrame: 1000)
        _ = try? file.byte(forPacket: total / 2)
        decodeSome(file, selector: input.count)
    }
}

/// What a player or `tonearm convert` does with a parsed file: decode through ExtAudioFile
/// into a client format (picked by `selector`: as is, Float32 16 kHz mono, or 48 kHz
/// stereo 16-bit), seek, and read a little. Checks the bytes read match the frames counted.
func decodeSome(_ file: AudioFile, selector: Int) {
    guard let ext = try? ExtAudioFile(reading: file) else { return }
    switch selector % 3 {
    case 1: _ = try? ext.setClientDataFormat(.pcm(sampleRate: 16000, channels: 1, bits: 32, isFloat: true))
    case 2: _ = try? ext.setClientDataFormat(.pcm(sampleRate: 48000, channels: 2, bits: 16))
    default: break
    }
    let bytesPerFrame = Int(ext.clientDataFormat.bytesPerFrame)
    var out: [UInt8] = []
    if let n = try? ext.read(frames: 5000, into: &out) { precondition(out.count == n * bytesPerFrame) }
    if (try? ext.seek(toFrame: Int64(selector % 50_000))) != nil {
        out.removeAll()
        if let n = try? ext.read(frames: 3000, into: &out) { precondition(out.count == n * bytesPerFrame) }
    }
}

/// A family's fuzz target: the seeds are that family's files as they are, so the input's
/// length picks the push chunk size and whether the stream has a byte-range fetcher.
public func fuzzFamily(_ data: UnsafePointer<UInt8>?, _ size: Int, hint: AudioFileTypeID) -> Int32 {
    let input = bytes(data, size)
    fuzzParser(input, hint: hint, chunk: 1 + size % 97, fetcher: size % 2 == 0)
    return 0
}

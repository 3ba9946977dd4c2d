import Tonearm

/// `tonearm convert IN OUT`: afconvert.
enum ConvertCommand {
    static let help = """
        usage: tonearm convert IN OUT [-f TYPE] [-d FORMAT] [-v]

        Converts IN into OUT, as afconvert does. The output type comes from -f or from
        OUT's extension; the data format from -d, or else the input's PCM format (made to
        fit the type), or 16-bit integer PCM for compressed input.

          -f TYPE     WAVE, RF64, BW64, W64f, AIFF, AIFC, caff, NeXT
          -d FORMAT   afconvert's syntax: [BE|LE][I|UI|F]BITS[@RATE], e.g. LEI16, BEI24,
                      LEF32, BEF64, I8, UI8; or ulaw, alaw
          -v          say what is converted into what
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["-v"], options: ["-f", "-d", "-c", "-b", "-q", "-r", "-s", "--src-complexity"]),
                                help: help, console: console) else { return 0 }
        guard a.positionals.count == 2 else { throw UsageError("convert needs IN and OUT") }
        let inPath = a.positionals[0], outPath = a.positionals[1]
        for unsupported in ["-b", "-q", "-s"] where a.value(unsupported) != nil {
            throw FileError(path: outPath, error: AudioError(.unsupportedDataFormat, "\(unsupported) applies to encoders Tonearm does not have yet"))
        }
        let type = try outputType(a.value("-f"), outPath: outPath)
        let file = try about(inPath) { () throws(AudioError) in try AudioFile(path: inPath) }
        let p = try about(inPath) { () throws(AudioError) in try file.properties }
        let input = p.dataFormat!
        var output = try outputFormat(a.value("-d"), input: input, type: type)
        if let c = a.value("-c") {
            guard let n = UInt32(c), n > 0 else { throw UsageError("-c wants a channel count") }
            if n != input.channelsPerFrame {
                throw FileError(path: outPath, error: AudioError(.unsupportedDataFormat, "channel conversion (\(input.channelsPerFrame) → \(n)) is not available yet"))
            }
        }
        if output.sampleRate == 0 { output.sampleRate = input.sampleRate }
        if a.has("-v") {
            console.error("Input file: \(inPath), \(p.audioDataPacketCount ?? 0) packets\nInput format: \(input)\n"
                + "Output file: \(outPath), type \(type.fourCC.string)\nOutput format: \(output)\n")
        }
        try about(outPath) { () throws(AudioError) in
            try convert(file, properties: p, to: outPath, type: type, format: output, console: console)
        }
        return 0
    }

    static func outputType(_ name: String?, outPath: String) throws -> AudioFileTypeID {
        if let name {
            let t = AudioFileTypeID(FourCC(name))
            guard FormatRegistry.info(for: t)?.isWritable == true else {
                throw FileError(path: outPath, error: AudioError(.unsupportedFileType, "Tonearm cannot write '\(name)' files; see 'tonearm formats'"))
            }
            return t
        }
        guard let ext = FileSource.pathExtension(of: outPath),
              let t = FormatRegistry.types(forExtension: ext).first(where: { FormatRegistry.info(for: $0)?.isWritable == true })
        else {
            throw UsageError("cannot tell the output type from '\(outPath)'; give -f TYPE")
        }
        return t
    }

    /// The byte order a file type stores PCM in by default.
    static func isBigEndianType(_ t: AudioFileTypeID) -> Bool { [.aiff, .aifc, .next, .caf].contains(t) }

    static func outputFormat(_ spec: String?, input: StreamDescription, type: AudioFileTypeID) throws -> StreamDescription {
        let channels = input.channelsPerFrame
        if let spec {
            return try parseFormat(spec, channels: channels, type: type)
        }
        if input.isPCM {
            let bits = input.bitsPerChannel
            let big = type == .aiff ? true : type == .caf ? input.isBigEndian : isBigEndianType(type)
            // WAVE's 8-bit is unsigned and AIFF's signed; everything wider is signed.
            let signed = input.isFloat ? true : (bits > 8 || ![.wave, .rf64, .bw64, .wave64].contains(type))
            if type == .aiff && input.isFloat {
                return .pcm(sampleRate: input.sampleRate, channels: channels, bits: 16, isBigEndian: true)
            }
            return .pcm(sampleRate: input.sampleRate, channels: channels, bits: bits, isFloat: input.isFloat,
                        isBigEndian: big, isSigned: signed, bytesPerSample: input.bytesPerSample)
        }
        return .pcm(sampleRate: input.sampleRate, channels: channels, bits: 16, isBigEndian: isBigEndianType(type))
    }

    /// afconvert's `-d` syntax: `[BE|LE][I|UI|F]BITS[@RATE]`, `ulaw`, `alaw`.
    static func parseFormat(_ spec: String, channels: UInt32, type: AudioFileTypeID) throws -> StreamDescription {
        var body = Substring(spec)
        var rate = 0.0
        if let at = body.firstIndex(of: "@") {
            guard let r = Double(body[body.index(after: at)...].prefix { $0 != "/" && $0 != "#" }), r > 0 else {
                throw UsageError("bad sample rate in -d \(spec)")
            }
            rate = r
            body = body[..<at]
        }
        if let slash = body.firstIndex(where: { $0 == "/" || $0 == "#" }) { body = body[..<slash] }
        let lower = body.lowercased()
        if lower == "ulaw" || lower == "alaw" {
            return StreamDescription(sampleRate: rate, formatID: lower == "ulaw" ? .uLaw : .aLaw, bytesPerPacket: channels,
                                     framesPerPacket: 1, bytesPerFrame: channels, channelsPerFrame: channels, bitsPerChannel: 8)
        }
        var big = isBigEndianType(type)
        if body.hasPrefix("BE") { big = true; body = body.dropFirst(2) }
        else if body.hasPrefix("LE") { big = false; body = body.dropFirst(2) }
        var isFloat = false, signed = true
        if body.hasPrefix("UI") { signed = false; body = body.dropFirst(2) }
        else if body.hasPrefix("I") { body = body.dropFirst(1) }
        else if body.hasPrefix("F") { isFloat = true; body = body.dropFirst(1) }
        else {
            if body.count == 4 || lower.count <= 4 {
                throw UsageError("data format '\(spec)' is not one Tonearm can encode yet (PCM, ulaw, alaw)")
            }
            throw UsageError("cannot read -d \(spec); use e.g. LEI16, BEF32, UI8, ulaw")
        }
        guard let bits = UInt32(body), [8, 16, 24, 32, 64].contains(bits), !(isFloat && bits < 32), !(!isFloat && bits > 32) else {
            throw UsageError("cannot read -d \(spec); bits must be 8, 16, 24 or 32 (integer) or 32 or 64 (float)")
        }
        return .pcm(sampleRate: rate, channels: channels, bits: bits, isFloat: isFloat, isBigEndian: big, isSigned: signed)
    }

    static func convert(_ file: AudioFile, properties p: FileProperties, to outPath: String, type: AudioFileTypeID,
                        format output: StreamDescription, console: Console) throws(AudioError)
    {
        let input = p.dataFormat!
        if output.sampleRate != input.sampleRate {
            throw AudioError(.unsupportedDataFormat,
                             "sample-rate conversion (\(StreamDescription.formatRate(input.sampleRate)) → \(StreamDescription.formatRate(output.sampleRate)) Hz) is not available yet")
        }
        let converter = try AudioConverter(from: input, to: output, magicCookie: p.magicCookie)
        let out = try AudioFile.create(path: outPath, type: type, format: output, flags: .eraseFile)
        var ok = false
        defer { if !ok { try? out.close(); removeFile(outPath) } }
        if let layout = p.channelLayout { try? out.setProperty(.channelLayout, .channelLayout(layout)) }
        if !p.info.isEmpty { try out.setProperty(.infoDictionary, .info(p.info)) }
        let total = p.audioDataPacketCount ?? 0
        // Frames to keep: the valid frames after the priming, when the file says.
        let priming = Int64(p.packetTableInfo?.primingFrames ?? 0)
        let keep = p.packetTableInfo?.numberValidFrames
        let bytesPerFrame = Int64(output.bytesPerFrame)
        var framesOut: Int64 = 0, framesSeen: Int64 = 0, packetsWritten: Int64 = 0
        let chunk = max(1, (1 << 18) / Int(max(1, p.maximumPacketSize ?? 1)))
        var progress = ProgressBar(console: console, label: "converting")
        var next: Int64 = 0
        var bytes: [UInt8] = []
        while next < total {
            let (data, descriptions) = try file.readPacketData(startingAt: next, count: chunk)
            let n = descriptions?.count ?? data.count / Int(max(1, input.bytesPerPacket))
            guard n > 0 else { break }
            bytes.removeAll(keepingCapacity: true)
            try data.withBytes { raw throws(AudioError) in
                try converter.convert(packets: raw, count: n, descriptions: descriptions, into: &bytes)
            }
            // Gapless trim: drop the priming, and anything past the valid frames.
            let frames = Int64(bytes.count) / bytesPerFrame
            var lo: Int64 = max(0, priming - framesSeen)
            var hi: Int64 = frames
            if let keep { hi = min(hi, priming + keep - framesSeen) }
            lo = min(lo, frames)
            framesSeen += frames
            if hi > lo {
                let slice = bytes[Int(lo * bytesPerFrame)..<Int(hi * bytesPerFrame)]
                try slice.withBytes { raw throws(AudioError) in
                    try out.writePackets(raw, count: Int(hi - lo), startingAt: packetsWritten)
                }
                packetsWritten += hi - lo
                framesOut += hi - lo
            }
            next += Int64(n)
            progress.update(next, of: total)
        }
        progress.finish()
        try out.close()
        ok = true
    }
}

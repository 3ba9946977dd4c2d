#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Tonearm

/// `tonearm convert IN OUT`: afconvert.
enum ConvertCommand {
    static let help = """
        usage: tonearm convert IN OUT [-f TYPE] [-d FORMAT[@RATE]] [-c CHANNELS] [options]

        Converts IN into OUT, as afconvert does: any file Tonearm decodes, into any type it
        writes. The output type comes from -f or from OUT's extension; the data format from
        -d, or else the input's PCM format (made to fit the type), or the source's bit depth
        for lossless input, or 16-bit integers.

          -f TYPE              WAVE, RF64, BW64, W64f, AIFF, AIFC, caff, NeXT, fLaC
          -d FORMAT[@RATE]     afconvert's syntax: [BE|LE][I|UI|F]BITS, e.g. LEI16, BEI24,
                               LEF32, BEF64, I8, UI8; or ulaw, alaw, flac; @RATE resamples
          -c CHANNELS          output channel count (standard mixes: mono, stereo, 5.1 down)
          -r QUALITY           sample-rate converter quality, 0 to 127 (default 96)
          --src-complexity C   line (linear), norm (default) or bats (mastering)
          --src ENGINE         native (the default) or ffmpeg: FFmpeg's swresample does the
                               sample-rate conversion (a build with the FFmpeg trait)
          -q QUALITY           encoder quality, 0 to 127 (FLAC: level = QUALITY × 8 / 127)
          --channel-map LIST   each output channel's input channel, from 0; -1 for silence
                               (e.g. 1,0 swaps a stereo pair)
          --dither             TPDF dither when the bit depth drops
          --decoder WHICH      auto (the default): Tonearm's own decoder, else FFmpeg's in a
                               build with the FFmpeg trait; native or ffmpeg: only those
          --json               print a JSON summary of the conversion
          -v                   say what is converted into what (and let FFmpeg log)

        Metadata carries over where both types hold it. A failed conversion leaves no
        output behind.
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["-v", "--json", "--dither"],
                                                  options: ["-f", "-d", "-c", "-b", "-q", "-r", "-s", "--src-complexity", "--src", "--channel-map",
                                                            DecoderOption.name]),
                                help: help, console: console) else { return 0 }
        try DecoderOption.apply(a)
        if a.has("-v") { makeFFmpegVerbose() }
        guard a.positionals.count == 2 else { throw UsageError("convert needs IN and OUT") }
        let inPath = a.positionals[0], outPath = a.positionals[1]
        for unsupported in ["-b", "-s"] where a.value(unsupported) != nil {
            throw FileError(path: outPath, error: AudioError(.unsupportedDataFormat, "\(unsupported) applies to lossy encoders, which Tonearm does not have yet"))
        }
        var plan = Plan()
        plan.type = try outputType(a.value("-f"), outPath: outPath)
        if let c = a.value("--src-complexity") {
            guard let complexity = SampleRateConverterComplexity(fourCC: c) else {
                throw UsageError("--src-complexity wants line, norm or bats, not '\(c)'")
            }
            plan.complexity = complexity
        }
        switch a.value("--src") {
        case nil, "native": break
        case "ffmpeg":
            #if FFmpeg
            plan.complexity = .ffmpeg
            #else
            throw UsageError("--src ffmpeg: this tonearm was built without the FFmpeg trait; rebuild with swift build --traits FFmpeg")
            #endif
        case let other?: throw UsageError("--src wants native or ffmpeg, not '\(other)'")
        }
        if let r = a.value("-r") {
            guard let q = Int(r), (0...127).contains(q) else { throw UsageError("-r wants a quality from 0 to 127") }
            plan.quality = q
        }
        if let q = a.value("-q") {
            guard let v = Int(q), (0...127).contains(v) else { throw UsageError("-q wants a quality from 0 to 127") }
            plan.encoderLevel = (v * 8 + 63) / 127
        }
        if let map = a.value("--channel-map") {
            let entries = map.split(separator: ",").map { Int($0.filter { $0 != " " }) }
            guard !entries.isEmpty, entries.allSatisfy({ $0 != nil && $0! >= -1 }) else {
                throw UsageError("--channel-map wants input channel numbers from 0, or -1, separated by commas")
            }
            plan.channelMap = entries.map { $0! }
        }
        plan.dither = a.has("--dither")
        let input = try about(inPath) { () throws(AudioError) in try ExtAudioFile(path: inPath) }
        let source = input.fileDataFormat
        var channels = source.channelsPerFrame
        if let map = plan.channelMap {
            // A usage error naming the option, before ExtAudioFile's -66564 could name a file.
            if let bad = map.first(where: { $0 >= Int(source.channelsPerFrame) }) {
                throw UsageError("--channel-map names input channel \(bad), but \(inPath) has \(source.channelsPerFrame) (0 to \(source.channelsPerFrame - 1))")
            }
            channels = UInt32(map.count)
        }
        if let c = a.value("-c") {
            guard let n = UInt32(c), n > 0, n <= 64 else { throw UsageError("-c wants a channel count") }
            if plan.channelMap != nil && n != channels {
                throw UsageError("-c \(n) does not match the \(channels) entries of --channel-map")
            }
            channels = n
        }
        var output = try outputFormat(a.value("-d"), input: source, type: plan.type, channels: channels)
        if output.sampleRate == 0 { output.sampleRate = source.sampleRate }
        plan.format = output
        if a.has("-v") {
            console.error("Input file: \(inPath), \(input.fileLengthFrames) frames\nInput format: \(source)\n"
                + "Output file: \(outPath), type \(plan.type.fourCC.string)\nOutput format: \(output)\n")
        }
        let summary = try convert(input, inPath: inPath, to: outPath, plan: plan, console: console)
        if a.has("--json") { console.print(summary.serialized(pretty: true)) }
        return 0
    }

    /// What the options ask for.
    struct Plan {
        var type: AudioFileTypeID = .wave
        var format = StreamDescription.pcm(sampleRate: 0, channels: 1, bits: 16)
        var complexity = SampleRateConverterComplexity.normal
        var quality = 0x60
        var encoderLevel: Int?
        var channelMap: [Int]?
        var dither = false
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

    static func outputFormat(_ spec: String?, input: StreamDescription, type: AudioFileTypeID, channels: UInt32) throws -> StreamDescription {
        if let spec {
            return try parseFormat(spec, channels: channels, type: type, sourceBits: losslessBits(input))
        }
        if type == .flac {
            return flacFormat(rate: input.sampleRate, channels: channels, bits: losslessBits(input) ?? 16)
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
        let bits = UInt32(((losslessBits(input) ?? 16) + 7) / 8 * 8)
        return .pcm(sampleRate: input.sampleRate, channels: channels, bits: bits, isBigEndian: isBigEndianType(type))
    }

    /// The bit depth of integer PCM or lossless input, which a lossless output keeps.
    static func losslessBits(_ f: StreamDescription) -> Int? {
        let bits = Int(f.bitsPerChannel)
        switch f.formatID {
        case .linearPCM where !f.isFloat, .flac, .appleLossless: return (4...32).contains(bits) ? bits : nil
        case .uLaw, .aLaw: return 16
        default: return nil
        }
    }

    static func flacFormat(rate: Double, channels: UInt32, bits: Int) -> StreamDescription {
        StreamDescription(sampleRate: rate, formatID: .flac, bytesPerPacket: 0, framesPerPacket: 0, bytesPerFrame: 0,
                          channelsPerFrame: channels, bitsPerChannel: UInt32(min(32, max(4, bits))))
    }

    /// afconvert's `-d` syntax: `[BE|LE][I|UI|F]BITS[@RATE]`, `ulaw`, `alaw`.
    static func parseFormat(_ spec: String, channels: UInt32, type: AudioFileTypeID, sourceBits: Int? = nil) throws -> StreamDescription {
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
        if lower == "flac" {
            return flacFormat(rate: rate, channels: channels, bits: sourceBits ?? 16)
        }
        if lower == "alac" || lower == "aac" || lower == "opus" {
            throw FileError(path: spec, error: AudioError(.unsupportedDataFormat, "Tonearm has no \(lower) encoder yet"))
        }
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
                throw UsageError("data format '\(spec)' is not one Tonearm can encode yet (PCM, ulaw, alaw, flac)")
            }
            throw UsageError("cannot read -d \(spec); use e.g. LEI16, BEF32, UI8, ulaw")
        }
        guard let bits = UInt32(body), [8, 16, 24, 32, 64].contains(bits), !(isFloat && bits < 32), !(!isFloat && bits > 32) else {
            throw UsageError("cannot read -d \(spec); bits must be 8, 16, 24 or 32 (integer) or 32 or 64 (float)")
        }
        return .pcm(sampleRate: rate, channels: channels, bits: bits, isFloat: isFloat, isBigEndian: big, isSigned: signed)
    }

    /// Reads IN through an ExtAudioFile whose client format is the output's PCM (or, for an
    /// encoded output, integers at its bit depth), and writes OUT through another: the
    /// reader decodes, mixes, resamples and dithers; the writer encodes. OUT is written under
    /// a temporary name and renamed at the end, so a failure leaves no partial file and
    /// keeps any file OUT was. An error names the file it belongs to: reading and decoding
    /// name IN, encoding and writing name OUT.
    static func convert(_ input: ExtAudioFile, inPath: String, to outPath: String, plan: Plan,
                        console: Console) throws(FileError) -> JSON
    {
        let output = plan.format
        guard let info = FormatRegistry.info(for: plan.type), info.writableFormats.contains(output.formatID) else {
            throw FileError(path: outPath, error: AudioError(.unsupportedDataFormat, "\(plan.type) files cannot hold \(output.formatID) data"))
        }
        if let missing = try? input.file.properties.missingPacketCount, missing > 0 {
            let kept = (try? input.file.audioDataPacketCount) ?? 0
            console.error("tonearm: \(inPath): the file's packet table lists \(missing) \(missing == 1 ? "packet" : "packets") past its end; "
                + "converting the \(kept) whole \(kept == 1 ? "packet" : "packets") before them\n")
        }
        return try convertChecked(input, inPath: inPath, to: outPath, plan: plan, console: console)
    }

    private static func convertChecked(_ input: ExtAudioFile, inPath: String, to outPath: String, plan: Plan,
                                       console: Console) throws(FileError) -> JSON
    {
        let output = plan.format
        try about(inPath) { () throws(AudioError) in
            try input.setSampleRateConverterComplexity(plan.complexity)
            try input.setSampleRateConverterQuality(plan.quality)
            try input.setDither(plan.dither ? .tpdf : .none)
        }
        // The client format both sides share.
        let client: StreamDescription = output.isPCM ? output
            : output.formatID == .uLaw || output.formatID == .aLaw
            ? .pcm(sampleRate: output.sampleRate, channels: output.channelsPerFrame, bits: 16)
            : .pcm(sampleRate: output.sampleRate, channels: output.channelsPerFrame, bits: max(8, output.bitsPerChannel),
                   isBigEndian: 1.bigEndian == 1, bytesPerSample: (max(8, output.bitsPerChannel) + 7) / 8)
        let layout: ChannelLayout? = output.channelsPerFrame == input.fileDataFormat.channelsPerFrame && plan.channelMap == nil
            ? input.fileChannelLayout : ChannelLayout.defaultLayout(channels: Int(output.channelsPerFrame))
        try about(inPath) { () throws(AudioError) in
            if let map = plan.channelMap {
                try input.setClientDataFormat(client, channelMap: map)
            } else {
                try input.setClientDataFormat(client, channelLayout: layout)
            }
        }
        // A device or FIFO (/dev/null, /dev/stdout) is written in place; a file under a
        // temporary name, renamed at the end.
        let inPlace = isSpecialFile(outPath)
        let temporary = inPlace ? outPath : outPath + ".tonearm-partial"
        let writer = try about(outPath) { () throws(AudioError) in
            try ExtAudioFile.create(path: temporary, type: plan.type, format: output, channelLayout: layout,
                                    flags: .eraseFile, encoderSettings: EncoderSettings(level: plan.encoderLevel))
        }
        var ok = false
        defer {
            if !ok {
                try? writer.close()
                if !inPlace { removeFile(temporary) }
            }
        }
        try about(outPath) { () throws(AudioError) in try writer.setClientDataFormat(client) }
        if let tags = try? input.file.infoDictionary, !tags.isEmpty { try? writer.setInfo(tags) }
        let total = input.clientLengthFrames
        var progress = ProgressBar(console: console, label: "converting")
        // One block of client frames, read into and written from in place: the reader's
        // converter writes straight into it (the client format is interleaved: one buffer).
        let block = 65536
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: block * Int(input.clientBytesFormat.bytesPerFrame), alignment: 16)
        let buffers = UnsafeMutablePointer<UnsafeMutableRawBufferPointer>.allocate(capacity: 1)
        buffers.initialize(to: bytes)
        defer { bytes.deallocate(); buffers.deallocate() }
        var frames: Int64 = 0
        while true {
            let n = try about(inPath) { () throws(AudioError) in try input.read(frames: block, into: AudioBufferList(buffers, count: 1)) }
            if n == 0 { break }
            try about(outPath) { () throws(AudioError) in try writer.write(UnsafeRawBufferPointer(bytes), frames: n) }
            frames += Int64(n)
            progress.update(frames, of: total)
        }
        try about(outPath) { () throws(AudioError) in try writer.close() }
        progress.finish()
        if input.concealedPackets > 0 {
            console.error("tonearm: \(inPath): \(input.concealedPackets) damaged packets were concealed with silence")
        }
        guard inPlace || rename(temporary, outPath) == 0 else {
            throw FileError(path: outPath, error: AudioError(.permissions, "cannot move the output into place at \(outPath)"))
        }
        ok = true
        let size = (try? FileSource(path: outPath).size) ?? nil
        return .object([
            ("input", .string(inPath)), ("output", .string(outPath)),
            ("fileType", .string(plan.type.fourCC.string)), ("dataFormat", .string(output.description)),
            ("formatID", .string(output.formatID.fourCC.string)), ("sampleRate", .double(output.sampleRate)),
            ("channels", .int(Int64(output.channelsPerFrame))), ("bitsPerChannel", .int(Int64(output.bitsPerChannel))),
            ("frames", .int(frames)), ("duration", .double(Double(frames) / output.sampleRate)),
            ("bytes", size.map { .int($0) } ?? .null), ("concealedPackets", .int(Int64(input.concealedPackets))),
        ])
    }
}

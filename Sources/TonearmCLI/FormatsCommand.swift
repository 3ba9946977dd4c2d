import Tonearm

/// `tonearm formats`: Apple's global info (seed 003).
enum FormatsCommand {
    static let help = """
        usage: tonearm formats [--json]

        Lists the file types Tonearm reads and writes, with their names, extensions and
        MIME types, the data formats each can hold when written (as afconvert -hf does),
        and the data formats Tonearm decodes. In a build with the FFmpeg trait, the first line
        gives FFmpeg's library versions, and "(FFmpeg)" marks the file types read through
        libavformat and the data formats only libavcodec decodes (with its decoder's name).
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["--json"]), help: help, console: console) else { return 0 }
        guard a.positionals.isEmpty else { throw UsageError("formats takes no arguments") }
        let readable = AudioFile.readableTypes
        let writable = Set(AudioFile.writableTypes)
        let decodable = CodecRegistry.decodableFormats
        let ffmpegOnly = Set(CodecRegistry.ffmpegOnlyFormats)
        if a.has("--json") {
            let types: [JSON] = readable.map { t in
                let info = FormatRegistry.info(for: t)!
                return .object([
                    ("fileType", .string(t.fourCC.string)),
                    ("name", .string(info.name)),
                    ("extensions", .array(info.extensions.map { .string($0) })),
                    ("mimeTypes", .array(info.mimeTypes.map { .string($0) })),
                    ("utis", .array(info.utis.map { .string($0) })),
                    ("readable", .bool(true)),
                    ("writable", .bool(writable.contains(t))),
                    ("writableFormats", .array(info.writableFormats.map { .string($0.fourCC.string) })),
                    ("ffmpeg", .bool(info.usesFFmpeg)),
                ])
            }
            let decoders: [JSON] = decodable.map { f in
                let byFFmpeg = ffmpegOnly.contains(f)
                return .object([
                    ("formatID", .string(f.fourCC.string)),
                    ("backend", .string(byFFmpeg ? "ffmpeg" : "native")),
                    ("codec", byFFmpeg ? ffmpegDecoderName(f).map { .string($0) } ?? .null : .null),
                ])
            }
            console.print(JSON.object([
                ("fileTypes", .array(types)),
                ("decodableFormats", .array(decodable.map { .string($0.fourCC.string) })),
                ("decoders", .array(decoders)),
                ("ffmpegVersions", ffmpegVersions.map { .string($0) } ?? .null),
            ]).serialized(pretty: true))
            return 0
        }
        if let v = ffmpegVersions { console.print("FFmpeg: \(v)") }
        console.print("File types (R = readable, W = writable):")
        var marked = !ffmpegOnly.isEmpty
        for t in readable {
            let info = FormatRegistry.info(for: t)!
            let rw = writable.contains(t) ? "RW" : "R "
            console.print("  \(rw) \(t.fourCC.string)  \(pad(info.name, 10)) .\(info.extensions.joined(separator: " ."))   \(info.mimeTypes.joined(separator: ", "))\(info.usesFFmpeg ? " (FFmpeg)" : "")")
            marked = marked || info.usesFFmpeg
            if writable.contains(t) {
                console.print("        data formats: \(info.writableFormats.map { $0.description }.joined(separator: ", "))")
            }
        }
        let formats = decodable.map { f in
            guard ffmpegOnly.contains(f) else { return f.description }
            return "\(f) (FFmpeg\(ffmpegDecoderName(f).map { ": " + $0 } ?? ""))"
        }
        console.print("Decodable data formats: \(formats.joined(separator: ", "))")
        if marked { console.print("(FFmpeg): read or decoded by FFmpeg's libraries, not Tonearm's own code") }
        return 0
    }

    /// libavcodec's name for the decoder of a format ("ac3"), nil without the FFmpeg trait.
    static func ffmpegDecoderName(_ format: AudioFormatID) -> String? {
        #if FFmpeg
        // FFmpeg's codec for any format but linear PCM (always native) follows from the ID alone.
        return FFmpegCodecs.decoderName(for: StreamDescription(sampleRate: 0, formatID: format, bytesPerPacket: 0, framesPerPacket: 0,
                                                               bytesPerFrame: 0, channelsPerFrame: 0, bitsPerChannel: 0))
        #else
        return nil
        #endif
    }

    /// "avcodec 60.31.102, avformat 60.16.100, avutil 58.29.100", nil without the FFmpeg trait.
    static var ffmpegVersions: String? {
        #if FFmpeg
        return FFmpegCodecs.versions
        #else
        return nil
        #endif
    }

    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
}

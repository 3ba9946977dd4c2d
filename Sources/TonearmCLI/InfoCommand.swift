import Tonearm

/// `tonearm info FILE [--json]`: afinfo's report.
enum InfoCommand {
    static let help = """
        usage: tonearm info FILE|URL… [--json] [--artwork OUT] [--decoder WHICH]

        Prints what afinfo prints: the file type, the number of audio tracks (and, for MP4
        and Ogg, every track or stream with the one read marked), the data
        format, the format it decodes to when only its packets tell (HE-AAC found in the
        frames of a file whose header says AAC LC), the channel layout, the duration, the audio data's offset, size and packet
        count, the bit rate, the gapless frame counts (valid, priming and remainder), the
        format list and the info dictionary; then the chapters and the size and type of
        the cover image, when the file has them. It also says which decoder serves the
        file: native (Tonearm's own), FFmpeg's with its codec name, or none and the error.

        A URL (http or https) is read with Range requests, only the parts the parser
        needs; from a server without ranges the stream is read through, and a live
        stream until its format is known.

          --json           print one JSON object per file with stable keys
          --artwork OUT    write the cover image's bytes to OUT (one FILE only); a file
                           without artwork is an error ('pty?')
          --decoder WHICH  the decoder to name: auto (the default; Tonearm's own, else
                           FFmpeg's in a build with the FFmpeg trait), native or ffmpeg
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["--json"], options: ["--artwork", DecoderOption.name]),
                                help: help, console: console) else { return 0 }
        try DecoderOption.apply(a)
        guard !a.positionals.isEmpty else { throw UsageError("info needs a FILE") }
        let artworkPath = a.value("--artwork")
        if let artworkPath {
            guard a.positionals.count == 1 else { throw UsageError("--artwork takes the cover of one FILE, not \(a.positionals.count)") }
            guard !artworkPath.isEmpty else { throw UsageError("--artwork needs a file name") }
        }
        var status: Int32 = 0
        for path in a.positionals {
            do throws(FileError) {
                let report = try about(path) { () throws(AudioError) in try Report(path: path) }
                if a.has("--json") {
                    console.print(report.json.serialized(pretty: true))
                } else {
                    report.printText(console)
                }
                if let artworkPath {
                    try about(path) { () throws(AudioError) in try report.writeArtwork(to: artworkPath) }
                }
            } catch let e {
                console.error("tonearm: \(e.path): \(e.error.message) (\(e.error.code.codeString))\n")
                status = 1
            }
        }
        return status
    }

    /// Everything `info` shows about one file.
    struct Report {
        let path: String
        let p: FileProperties
        let format: StreamDescription
        let validFrames: Int64
        let priming: Int64
        let remainder: Int64
        let durationIsEstimated: Bool
        /// What the packets decode to, where the container's format does not say it all (a
        /// local file whose first packets show HE-AAC, or PS): ExtAudioFile's file data format.
        let decodedFormat: StreamDescription?
        /// Whose decoder would decode the packets, under ``CodecRegistry/preference``, or the
        /// error that says none can.
        let decoder: Result<DecoderBackend, AudioError>

        init(path: String) throws(AudioError) {
            self.path = path
            p = try audioFileProperties(path)
            guard let f = p.dataFormat else { throw AudioError(.invalidFile, "no data format") }
            format = f
            if !isRemote(path), DecodedFormatProbe(format: f, magicCookie: p.magicCookie) != nil,
               let decoded = try? ExtAudioFile(path: path).fileDataFormat, decoded != f {
                decodedFormat = decoded
            } else {
                decodedFormat = nil
            }
            priming = Int64(p.packetTableInfo?.primingFrames ?? 0)
            remainder = Int64(p.packetTableInfo?.remainderFrames ?? 0)
            validFrames = p.validFrames ?? 0
            durationIsEstimated = p.validFrames == nil
            // The registry answers with a decoder, not a yes or no: make one and ask it.
            do throws(AudioError) {
                decoder = .success(try CodecRegistry.makeDecoder(for: f, magicCookie: p.magicCookie).backend)
            } catch {
                decoder = .failure(error)
            }
        }

        /// `native`, `FFmpeg (ac3)`, or `none ('fmt?')`.
        var decoderDescription: String {
            switch decoder {
            case .success(let backend): backend.description
            case .failure(let error): "none (\(error.code.codeString))"
            }
        }

        /// `{backend: "native"|"ffmpeg", codec: FFmpeg's decoder name or null}`, null when none.
        var decoderJSON: JSON {
            switch decoder {
            case .success(.native): .object([("backend", .string("native")), ("codec", .null)])
            case .success(.ffmpeg(let codec)): .object([("backend", .string("ffmpeg")), ("codec", .string(codec))])
            case .failure: .null
            }
        }

        /// Writes the cover image's bytes, as the file holds them, to `path`.
        func writeArtwork(to path: String) throws(AudioError) {
            guard let art = p.albumArtwork else {
                throw AudioError(.unsupportedProperty, "the file has no artwork to write to \(path)")
            }
            let out = try POSIXFile(path: path, mode: .create)
            defer { out.closeNow() }
            try out.write(art, at: 0)
        }

        var duration: Double { format.sampleRate > 0 ? Double(validFrames) / format.sampleRate : 0 }
        var typeName: String { FormatRegistry.info(for: p.fileType)?.name ?? p.fileType.fourCC.string }

        func printText(_ c: Console) {
            c.print("File:           \(path)")
            c.print("File type ID:   \(p.fileType.fourCC.string)")
            c.print("Num Tracks:     \(p.trackCount)")
            if p.tracks.count > 1 {
                for t in p.tracks {
                    let format = t.format.map { ", \($0)" } ?? ""
                    c.print("  track \(t.id): \(t.kind) '\(t.codec)'\(format)\(t.isSelected ? " (read)" : "")")
                }
            }
            c.print("----")
            c.print("Data format:     \(format)")
            if let d = decodedFormat { c.print("Decodes as:      \(d) (SBR\(d.formatID == .mpeg4AAC_HE_V2 ? " and PS" : "") in the frames)") }
            c.print("Decoder:         \(decoderDescription)")
            if let l = p.channelLayout { c.print("Channel layout: \(l)") } else { c.print("                no channel layout.") }
            c.print("estimated duration: \(fixed(duration, 6)) sec\(durationIsEstimated ? " (estimated)" : "")")
            c.print("audio data file offset: \(p.dataOffset ?? 0)")
            c.print("audio bytes: \(p.audioDataByteCount.map(String.init) ?? "unknown")")
            c.print("audio packets: \(p.audioDataPacketCount.map(String.init) ?? "unknown")")
            c.print("bit rate: \(p.bitRate.map(String.init) ?? "unknown") bits per second")
            c.print("packet size upper bound: \(p.maximumPacketSize ?? 0)")
            c.print("maximum packet size: \(p.maximumPacketSize ?? 0)")
            c.print(p.isOptimized ? "optimized" : "not optimized")
            c.print("audio \(validFrames) valid frames + \(priming) priming + \(remainder) remainder = \(validFrames + priming + remainder)")
            if let bits = p.sourceBitDepth { c.print("source bit depth: I\(bits)") }
            c.print("format list:")
            if let list = p.formatList, !list.isEmpty {
                for (i, item) in list.enumerated() {
                    c.print("[\(i < 10 ? " " : "")\(i)] format:\t  \(item.format)")
                    c.print("     Channel layout: \(ChannelLayout(tag: item.channelLayoutTag))")
                }
            } else {
                c.print("[ 0] format:\t  \(format)")
                if let l = p.channelLayout { c.print("     Channel layout: \(l)") }
            }
            if !p.markers.isEmpty {
                c.print("markers:")
                for m in p.markers { c.print("  \(m.markerID): frame \(Int64(m.framePosition)) \(m.name)") }
            }
            if !p.info.isEmpty {
                c.print("info dictionary:")
                for (k, v) in p.info { c.print("  \(k): \(v)") }
            }
            if !p.chapters.isEmpty {
                c.print("chapters:")
                for (i, chapter) in p.chapters.enumerated() {
                    c.print("[\(i < 10 ? " " : "")\(i)] \(fixed(chapter.start, 3)) sec: \(chapter.title)")
                }
            }
            if let art = p.albumArtwork { c.print("artwork: \(art.count) bytes (\(imageMIMEType(art)))") }
            c.print("----")
        }

        static func formatJSON(_ f: StreamDescription) -> JSON {
            .object([
                ("formatID", .string(f.formatID.fourCC.string)),
                ("sampleRate", .double(f.sampleRate)),
                ("channelsPerFrame", .int(Int64(f.channelsPerFrame))),
                ("bitsPerChannel", .int(Int64(f.bitsPerChannel))),
                ("bytesPerPacket", .int(Int64(f.bytesPerPacket))),
                ("framesPerPacket", .int(Int64(f.framesPerPacket))),
                ("bytesPerFrame", .int(Int64(f.bytesPerFrame))),
                ("formatFlags", .int(Int64(f.formatFlags.rawValue))),
            ])
        }

        var json: JSON {
            var layout = JSON.null
            if let l = p.channelLayout {
                layout = .object([
                    ("tag", .int(Int64(l.tag.rawValue))),
                    ("bitmap", .int(Int64(l.bitmap.rawValue))),
                    ("description", .string(l.description)),
                    ("labels", l.channelLabels.map { .array($0.map { .string($0.abbreviation) }) } ?? .null),
                ])
            }
            return .object([
                ("path", .string(path)),
                ("fileType", .string(p.fileType.fourCC.string)),
                ("fileTypeName", .string(typeName)),
                ("format", Self.formatJSON(format)),
                ("decodedFormat", decodedFormat.map(Self.formatJSON) ?? .null),
                ("decoder", decoderJSON),
                ("formatList", .array((p.formatList ?? []).map {
                    .object([("format", Self.formatJSON($0.format)), ("channelLayoutTag", .int(Int64($0.channelLayoutTag.rawValue)))])
                })),
                ("channelLayout", layout),
                ("audioDataOffset", p.dataOffset.map { .int($0) } ?? .null),
                ("audioDataByteCount", p.audioDataByteCount.map { .int($0) } ?? .null),
                ("audioPacketCount", p.audioDataPacketCount.map { .int($0) } ?? .null),
                ("maximumPacketSize", p.maximumPacketSize.map { .int(Int64($0)) } ?? .null),
                ("bitRate", p.bitRate.map { .int(Int64($0)) } ?? .null),
                ("validFrames", .int(validFrames)),
                ("primingFrames", .int(priming)),
                ("remainderFrames", .int(remainder)),
                ("duration", .double(duration)),
                ("durationIsEstimated", .bool(durationIsEstimated)),
                ("optimized", .bool(p.isOptimized)),
                ("info", .object(p.info.map { ($0.key, .string($0.value)) })),
                ("trackCount", .int(Int64(p.trackCount))),
                ("tracks", tracksJSON),
                ("chapters", chaptersJSON),
                ("artwork", artworkJSON),
            ])
        }

        /// `[{id, kind, codec, selected, sampleRate, channels}]` of a multi-track container
        /// (rate and channels null for tracks that are not audio); empty for other formats.
        private var tracksJSON: JSON {
            .array(p.tracks.map { t in
                .object([("id", .int(Int64(t.id))), ("kind", .string(t.kind)), ("codec", .string(t.codec)),
                         ("selected", .bool(t.isSelected)),
                         ("sampleRate", t.format.map { .double($0.sampleRate) } ?? .null),
                         ("channels", t.format.map { .int(Int64($0.channelsPerFrame)) } ?? .null)])
            })
        }

        /// `[{index, start (seconds), title}]`, empty when the file has no chapters.
        private var chaptersJSON: JSON {
            var items: [JSON] = []
            for (i, chapter) in p.chapters.enumerated() {
                items.append(.object([("index", .int(Int64(i))), ("start", .double(chapter.start)),
                                      ("title", .string(chapter.title))]))
            }
            return .array(items)
        }

        /// `{size, mimeType}` of the cover image (not its bytes), or null.
        private var artworkJSON: JSON {
            guard let art = p.albumArtwork else { return .null }
            return .object([("size", .int(Int64(art.count))), ("mimeType", .string(imageMIMEType(art)))])
        }
    }
}

/// The MIME type of an image, from its first bytes; `application/octet-stream` when they
/// are not one of the types a cover comes in.
func imageMIMEType(_ bytes: [UInt8]) -> String {
    func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
        bytes.count >= offset + magic.count && bytes[offset..<offset + magic.count].elementsEqual(magic)
    }
    if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
    if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
    if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
    if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
    if starts(Array("BM".utf8)) { return "image/bmp" }
    return "application/octet-stream"
}

/// A number with a fixed count of decimals, without Foundation's String(format:).
func fixed(_ x: Double, _ decimals: Int) -> String {
    guard x.isFinite else { return String(x) }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let n = (abs(x) * scale).rounded()
    let whole = Int64(n / scale)
    var frac = String(Int64(n - Double(whole) * scale))
    while frac.count < decimals { frac = "0" + frac }
    return (x < 0 ? "-" : "") + String(whole) + (decimals > 0 ? "." + frac : "")
}

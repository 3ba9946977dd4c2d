import Tonearm

/// `tonearm formats`: Apple's global info (seed 003).
enum FormatsCommand {
    static let help = """
        usage: tonearm formats [--json]

        Lists the file types Tonearm reads and writes, with their names, extensions and
        MIME types, the data formats each can hold when written (as afconvert -hf does),
        and the data formats Tonearm decodes.
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(flags: ["--json"]), help: help, console: console) else { return 0 }
        guard a.positionals.isEmpty else { throw UsageError("formats takes no arguments") }
        let readable = AudioFile.readableTypes
        let writable = Set(AudioFile.writableTypes)
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
                ])
            }
            console.print(JSON.object([
                ("fileTypes", .array(types)),
                ("decodableFormats", .array(CodecRegistry.decodableFormats.map { .string($0.fourCC.string) })),
            ]).serialized(pretty: true))
            return 0
        }
        console.print("File types (R = readable, W = writable):")
        for t in readable {
            let info = FormatRegistry.info(for: t)!
            let rw = writable.contains(t) ? "RW" : "R "
            console.print("  \(rw) \(t.fourCC.string)  \(pad(info.name, 10)) .\(info.extensions.joined(separator: " ."))   \(info.mimeTypes.joined(separator: ", "))")
            if writable.contains(t) {
                console.print("        data formats: \(info.writableFormats.map { $0.description }.joined(separator: ", "))")
            }
        }
        console.print("Decodable data formats: \(CodecRegistry.decodableFormats.map { $0.description }.joined(separator: ", "))")
        return 0
    }

    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
}

import Tonearm

/// `tonearm demo`: inspects every bundled sample, converts each to WAV and to FLAC, and
/// resamples it to 16 kHz mono, so that a new user sees the main job done in one command.
enum DemoCommand {
    static let help = """
        usage: tonearm demo [SAMPLES_DIR] [--out DIR]

        Prints afinfo's report for each sample in Samples/ and converts it to a
        16-bit WAV, to FLAC, and to 16 kHz mono Float32 (as a speech pipeline wants) in DIR
        (default: a new folder under /tmp).
        """

    static func run(_ args: [String], console: Console) throws -> Int32 {
        guard let a = try parse(args, spec: .init(options: ["--out"]), help: help, console: console) else { return 0 }
        let dir = a.positionals.first ?? "Samples"
        let samples = listFiles(dir).filter { path in
            FileSource.pathExtension(of: path).map { !FormatRegistry.types(forExtension: $0).isEmpty } ?? false
        }
        guard !samples.isEmpty else { throw UsageError("no samples in '\(dir)'; run from the package root or give the folder") }
        let outDir = a.value("--out") ?? makeDirectory()
        ensureDirectory(outDir)
        for path in samples {
            let report = try about(path) { () throws(AudioError) in try InfoCommand.Report(path: path) }
            report.printText(console)
            let name = path.split(separator: "/").last.map(String.init) ?? path
            for (suffix, options) in [(".wav", ["-d", "LEI16"]), (".flac", []), ("-16k-mono.wav", ["-d", "LEF32@16000", "-c", "1"])] {
                let out = outDir + "/" + name + suffix
                let code = TonearmCommand.run(["convert", path, out] + options, console: console)
                if code != 0 { return code }
                console.print("converted to \(out)")
            }
            console.print("")
        }
        return 0
    }
}

import Tonearm

/// The `tonearm` command line: afinfo, afconvert and afplay in one tool.
public enum TonearmCommand {
    public static let usage = """
        usage: tonearm COMMAND [OPTIONS] ARGS…

        commands:
          info FILE|URL [--json] [--artwork]  describe an audio file, as afinfo does
          packets FILE|URL [--json] [--limit] list the packets: index, offset, size, frames, pts
          formats [--json]                    the file types Tonearm reads and writes
          convert IN OUT [-f TYPE] [-d FMT]   convert a file, as afconvert does
          play FILE… [-v VOL] [-t SECS]       play files gaplessly, as afplay does
          stream URL [--record F] [--no-play] play or record internet radio and remote files
          demo                                inspect and convert the bundled samples

        info, convert, play and stream take --decoder ffmpeg|native|auto: whose decoders to
        use (ffmpeg needs a build with the FFmpeg trait: swift build --traits FFmpeg).
        Run 'tonearm COMMAND --help' for a command's options.
        """

    /// Runs a command line (without the program name) and returns the exit code:
    /// 0 on success, 1 on an audio or file error, 64 on a usage error.
    public static func run(_ args: [String], console: Console) -> Int32 {
        defer { console.flush() }
        // --decoder and -v set process-wide state; the tests run many commands in one process.
        let preference = CodecRegistry.preference
        defer { CodecRegistry.preference = preference }
        #if FFmpeg
        let logLevel = FFmpegLog.level
        defer { FFmpegLog.level = logLevel }
        #endif
        guard let command = args.first else {
            console.error(usage + "\n")
            return 64
        }
        let rest = Array(args.dropFirst())
        do {
            switch command {
            case "info": return try InfoCommand.run(rest, console: console)
            case "packets": return try PacketsCommand.run(rest, console: console)
            case "formats": return try FormatsCommand.run(rest, console: console)
            case "convert": return try ConvertCommand.run(rest, console: console)
            case "demo": return try DemoCommand.run(rest, console: console)
            case "play": return try PlayCommand.run(rest, console: console)
            case "stream": return try StreamCommand.run(rest, console: console)
            case "-h", "--help", "help":
                console.print(usage)
                return 0
            default:
                console.error("tonearm: unknown command '\(command)'\n\n" + usage + "\n")
                return 64
            }
        } catch let e as UsageError {
            console.error("tonearm \(command): \(e.message)\nRun 'tonearm \(command) --help' for usage.\n")
            return 64
        } catch let e as FileError {
            console.error("tonearm: \(e.path): \(e.error.message) (\(e.error.code.codeString))\n")
            return 1
        } catch let e as AudioError {
            console.error("tonearm: \(e.message) (\(e.code.codeString))\n")
            return 1
        } catch {
            console.error("tonearm: \(error)\n")
            return 1
        }
    }
}

/// An audio error about one file, printed as `tonearm: FILE: message ('typ?')`.
struct FileError: Error {
    let path: String
    let error: AudioError
}

/// Runs `body`, tagging any AudioError with the file it concerns.
func about<T>(_ path: String, _ body: () throws(AudioError) -> T) throws(FileError) -> T {
    do throws(AudioError) { return try body() } catch { throw FileError(path: path, error: error) }
}

/// Parses a command's arguments, answering `--help` itself.
func parse(_ args: [String], spec: Arguments.Spec, help: String, console: Console) throws(UsageError) -> Arguments? {
    var spec = spec
    spec.flags.insert("--help")
    spec.flags.insert("-h")
    let a = try Arguments(args, spec: spec)
    if a.has("--help") || a.has("-h") {
        console.print(help)
        return nil
    }
    return a
}

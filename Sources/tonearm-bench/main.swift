// tonearm-bench: whole-process wall-time ratios of `tonearm` against the reference tools,
// side by side in one run. Not a test: it asserts nothing, it prints figures for
// BENCHMARKS.md. Run with `swift run -c release tonearm-bench [--quick] [--runs N] [--only TEXT]`.
import Foundation


struct Case {
    let name: String
    let ours: [String]
    let reference: [String]
    let referenceName: String
    /// Both print one figure (a packet count) that must agree.
    var compareOutput = false
}

func which(_ tool: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
        let p = "\(dir)/\(tool)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

@discardableResult
func run(_ argv: [String], quiet: Bool = true) -> (status: Int32, seconds: Double) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: argv[0])
    p.arguments = Array(argv.dropFirst())
    if quiet {
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
    }
    let start = DispatchTime.now()
    do { try p.run() } catch { return (-1, 0) }
    p.waitUntilExit()
    let end = DispatchTime.now()
    return (p.terminationStatus, Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
}

/// A command's standard output, trimmed.
func output(_ argv: [String]) -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: argv[0])
    p.arguments = Array(argv.dropFirst())
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = FileHandle.nullDevice
    do { try p.run() } catch { return "" }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? 0 : s[s.count / 2]
}

let args = CommandLine.arguments.dropFirst()
let quick = args.contains("--quick")
let runs = args.firstIndex(of: "--runs").flatMap { i in args.index(after: i) < args.endIndex ? Int(args[args.index(after: i)]) : nil } ?? 3
let seconds = quick ? 300 : 3600
/// `--only TEXT`: the cases whose name contains TEXT.
let only = args.firstIndex(of: "--only").flatMap { i in args.index(after: i) < args.endIndex ? args[args.index(after: i)] : nil }
let flacTool = which("flac")
let soxTool = which("sox")

// Our own binary sits beside this one.
let selfDir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
let tonearm = selfDir + "/tonearm"
guard FileManager.default.isExecutableFile(atPath: tonearm) else {
    print("tonearm-bench: build the CLI first: swift build -c release")
    exit(1)
}
guard let ffmpeg = which("ffmpeg"), let ffprobe = which("ffprobe") else {
    print("tonearm-bench: ffmpeg and ffprobe are needed (apt-get install ffmpeg)")
    exit(1)
}

let work = "/tmp/tonearm-bench"
try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
func make(_ name: String, _ codec: [String]) -> String {
    let path = "\(work)/\(name)"
    if !FileManager.default.fileExists(atPath: path) {
        print("making \(path) (\(seconds) s)…")
        run([ffmpeg, "-v", "error", "-y", "-f", "lavfi", "-i",
             "aevalsrc=0.3*sin(2*PI*440*t)+0.1*sin(2*PI*1300*t)|0.3*sin(2*PI*660*t):s=44100:d=\(seconds)"] + codec + [path])
    }
    return path
}
let wav = make("pcm-\(seconds)s.wav", ["-c:a", "pcm_s16le"])
let wav48 = make("pcm-48k-\(seconds)s.wav", ["-c:a", "pcm_s16le", "-ar", "48000"])
let ima = make("ima-\(seconds)s.wav", ["-c:a", "adpcm_ima_wav"])
let ms = make("msadpcm-\(seconds)s.wav", ["-c:a", "adpcm_ms"])
let mp3 = make("mp3-128k-\(seconds)s.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"])
let mp3High = make("mp3-320k-\(seconds)s.mp3", ["-c:a", "libmp3lame", "-b:a", "320k"])
let m4a = make("aac-\(seconds)s.m4a", ["-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart"])
let m4aMoovEnd = make("aac-moov-end-\(seconds)s.m4a", ["-c:a", "aac", "-b:a", "128k"])
let m4aFragmented = make("aac-frag-\(seconds)s.mp4", ["-c:a", "aac", "-b:a", "128k", "-movflags", "frag_keyframe+empty_moov",
                                                       "-frag_duration", "2000000"])
let flac = make("flac-\(seconds)s.flac", ["-c:a", "flac"])
let flac16 = make("flac16-\(seconds)s.flac", ["-sample_fmt", "s16", "-c:a", "flac"])
let alac16 = make("alac16-\(seconds)s.m4a", ["-sample_fmt", "s16p", "-c:a", "alac"])
let vorbis = make("vorbis-q5-\(seconds)s.ogg", ["-c:a", "libvorbis", "-q:a", "5"])
let opus = make("opus-128k-\(seconds)s.opus", ["-c:a", "libopus", "-b:a", "128k"])
let webm = make("opus-128k-\(seconds)s.webm", ["-c:a", "libopus", "-b:a", "128k"])
let out = "\(work)/out"
/// `compare`: both print the packet count. Not for PCM, where Apple's packet is one frame
/// and ffprobe counts the blocks it reads.
func packetsCase(_ label: String, _ path: String, compare: Bool = true) -> Case {
    Case(name: "packets: count, \(seconds / 60)-min \(label)", ours: [tonearm, "packets", path, "--count"],
         reference: [ffprobe, "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path],
         referenceName: "ffprobe -count_packets", compareOutput: compare)
}

var cases = [
    packetsCase("WAV", wav, compare: false), packetsCase("MP3 128k", mp3), packetsCase("M4A AAC", m4a),
    packetsCase("M4A moov at end", m4aMoovEnd), packetsCase("MP4 fragmented", m4aFragmented), packetsCase("FLAC", flac),
    packetsCase("WebM Opus", webm),
    Case(name: "decode IMA ADPCM → s16, \(seconds / 60) min", ours: [tonearm, "convert", ima, out + "-ima.wav", "-d", "LEI16"],
         reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", ima, "-f", "s16le", out + "-ima.raw"],
         referenceName: "ffmpeg -f s16le"),
    Case(name: "decode MS ADPCM → s16, \(seconds / 60) min", ours: [tonearm, "convert", ms, out + "-ms.wav", "-d", "LEI16"],
         reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", ms, "-f", "s16le", out + "-ms.raw"],
         referenceName: "ffmpeg -f s16le"),
    Case(name: "convert s16 WAV → f32 WAV, \(seconds / 60) min", ours: [tonearm, "convert", wav, out + "-f32.wav", "-d", "LEF32"],
         reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", wav, "-c:a", "pcm_f32le", out + "-f32-ff.wav"],
         referenceName: "ffmpeg pcm_f32le"),
]
cases.append(Case(name: "decode FLAC 16-bit → s16, \(seconds / 60) min", ours: [tonearm, "convert", flac16, out + "-flac.wav", "-d", "LEI16"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", flac16, "-f", "s16le", out + "-flac.raw"],
                  referenceName: "ffmpeg -f s16le"))
cases.append(Case(name: "decode ALAC 16-bit M4A → s16, \(seconds / 60) min", ours: [tonearm, "convert", alac16, out + "-alac.wav", "-d", "LEI16"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", alac16, "-f", "s16le", out + "-alac.raw"],
                  referenceName: "ffmpeg -f s16le"))
if let flacTool {
    cases.append(Case(name: "decode FLAC 16-bit → s16, \(seconds / 60) min", ours: [tonearm, "convert", flac16, out + "-flac.wav", "-d", "LEI16"],
                      reference: [flacTool, "-s", "-d", "-f", "-o", out + "-flac-ref.wav", flac16], referenceName: "flac -d"))
}
if let flacTool {
    cases.append(Case(name: "encode FLAC -5 from s16 WAV, \(seconds / 60) min",
                      ours: [tonearm, "convert", wav, out + "-enc.flac"],
                      reference: [flacTool, "-5", "-s", "-f", "-o", out + "-enc-ref.flac", wav], referenceName: "flac -5 -f"))
}
// Resampling 44.1 → 48 kHz, 16-bit stereo, without dither on either side, every side writing
// to /dev/null (ours a WAV, ffmpeg raw s16le) as the MP3 cases below do: replacing the last
// run's 600-MB output file costs a varying second of system time.
if let soxTool {
    cases.append(Case(name: "resample 44.1→48 kHz 'norm', \(seconds / 60) min",
                      ours: [tonearm, "convert", wav, "/dev/null", "-f", "WAVE", "-d", "LEI16@48000"],
                      reference: [soxTool, "-D", wav, "-b", "16", "-t", "wav", "/dev/null", "rate", "-v", "48000"], referenceName: "sox rate -v"))
    cases.append(Case(name: "resample 44.1→48 kHz 'bats', \(seconds / 60) min",
                      ours: [tonearm, "convert", wav, "/dev/null", "-f", "WAVE", "-d", "LEI16@48000", "--src-complexity", "bats"],
                      reference: [soxTool, "-D", wav, "-b", "16", "-t", "wav", "/dev/null", "rate", "-v", "48000"], referenceName: "sox rate -v"))
}
cases.append(Case(name: "resample 44.1→48 kHz 'norm', \(seconds / 60) min",
                  ours: [tonearm, "convert", wav, "/dev/null", "-f", "WAVE", "-d", "LEI16@48000"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", wav, "-af", "aresample=48000", "-f", "s16le", "/dev/null"],
                  referenceName: "ffmpeg swr (default)"))
// The anchor of issue 21: soxr at precision 28 (its very-high quality: THD+N −150.0 dB on a
// 997 Hz sine in Float, the Float floor), through ffmpeg on one thread.
cases.append(Case(name: "resample 44.1→48 kHz 'bats', \(seconds / 60) min",
                  ours: [tonearm, "convert", wav, "/dev/null", "-f", "WAVE", "-d", "LEI16@48000", "--src-complexity", "bats"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", wav, "-af", "aresample=48000:resampler=soxr:precision=28",
                              "-f", "s16le", "/dev/null"],
                  referenceName: "ffmpeg soxr precision 28"))
// Issue 21 asks 'norm' for half of that anchor's time.
cases.append(Case(name: "resample 44.1→48 kHz 'norm', \(seconds / 60) min",
                  ours: [tonearm, "convert", wav, "/dev/null", "-f", "WAVE", "-d", "LEI16@48000"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", wav, "-af", "aresample=48000:resampler=soxr:precision=28",
                              "-f", "s16le", "/dev/null"],
                  referenceName: "ffmpeg soxr precision 28"))
// And down, 48 → 44.1 kHz, the other common conversion.
cases.append(Case(name: "resample 48→44.1 kHz 'norm', \(seconds / 60) min",
                  ours: [tonearm, "convert", wav48, "/dev/null", "-f", "WAVE", "-d", "LEI16@44100"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", wav48, "-af", "aresample=44100:resampler=soxr:precision=28",
                              "-f", "s16le", "/dev/null"],
                  referenceName: "ffmpeg soxr precision 28"))
cases.append(Case(name: "resample 48→44.1 kHz 'bats', \(seconds / 60) min",
                  ours: [tonearm, "convert", wav48, "/dev/null", "-f", "WAVE", "-d", "LEI16@44100", "--src-complexity", "bats"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", wav48, "-af", "aresample=44100:resampler=soxr:precision=28",
                              "-f", "s16le", "/dev/null"],
                  referenceName: "ffmpeg soxr precision 28"))
// MP3 decoding to Float32, one thread each, every side writing to /dev/null (ours a Float32
// WAV, the others raw f32le), so the figure is the decoder's and not the disk's: writing 1.3 GB
// of samples to a file costs more than decoding them. mpg123 with --float decodes in floating
// point, as ffmpeg's default mp3float does.
let mpg123Tool = which("mpg123")
for (label, path) in [("128k", mp3), ("320k", mp3High)] {
    let ours = [tonearm, "convert", path, "/dev/null", "-f", "WAVE", "-d", "LEF32"]
    cases.append(Case(name: "MP3 decode \(label) → f32, \(seconds / 60) min", ours: ours,
                      reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-i", path, "-f", "f32le", "/dev/null"],
                      referenceName: "ffmpeg mp3float -f f32le"))
    if let mpg123Tool {
        cases.append(Case(name: "MP3 decode \(label) → f32, \(seconds / 60) min", ours: ours,
                          reference: [mpg123Tool, "-q", "--float", "-e", "f32", "-O", "/dev/null", path],
                          referenceName: "mpg123 --float -e f32"))
    }
}
// AAC-LC decoding (128 kbit/s M4A) to Float32, one thread each, to /dev/null as for MP3.
cases.append(Case(name: "AAC-LC M4A decode 128k → f32, \(seconds / 60) min",
                  ours: [tonearm, "convert", m4a, "/dev/null", "-f", "WAVE", "-d", "LEF32"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-c:a", "aac", "-i", m4a, "-f", "f32le", "/dev/null"],
                  referenceName: "ffmpeg -c:a aac -f f32le"))
// Vorbis (q5) and Opus (128 kbit/s, CELT) to Float32, against ffmpeg's own Vorbis decoder and
// libopus's float decoder (the references).
cases.append(Case(name: "Vorbis q5 decode → f32, \(seconds / 60) min",
                  ours: [tonearm, "convert", vorbis, "/dev/null", "-f", "WAVE", "-d", "LEF32"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-c:a", "vorbis", "-i", vorbis, "-f", "f32le", "/dev/null"],
                  referenceName: "ffmpeg -c:a vorbis -f f32le"))
cases.append(Case(name: "Opus 128k decode → f32, \(seconds / 60) min",
                  ours: [tonearm, "convert", opus, "/dev/null", "-f", "WAVE", "-d", "LEF32"],
                  reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-request_sample_fmt", "flt", "-c:a", "libopus",
                              "-i", opus, "-f", "f32le", "/dev/null"],
                  referenceName: "ffmpeg -c:a libopus -f f32le"))
// HE-AAC v2 decoding (SBR and PS dominate): a file from the fixtures' generator, which needs
// python3 and the repository (run from its root); skipped without them.
let heaacScript = FileManager.default.currentDirectoryPath + "/Tests/Fixtures/make-aache.sh"
if FileManager.default.fileExists(atPath: heaacScript) {
    let path = "\(work)/heaac-v2-\(seconds)s.m4a"
    if !FileManager.default.fileExists(atPath: path) {
        print("making \(path) (\(seconds) s)…")
        run(["/bin/bash", heaacScript, "--long", path, String(seconds / 60)])
    }
    cases.append(Case(name: "HE-AAC v2 M4A decode 24k → f32, \(seconds / 60) min",
                      ours: [tonearm, "convert", path, "/dev/null", "-f", "WAVE", "-d", "LEF32"],
                      reference: [ffmpeg, "-v", "error", "-y", "-threads", "1", "-c:a", "aac", "-i", path, "-f", "f32le", "/dev/null"],
                      referenceName: "ffmpeg -c:a aac -f f32le"))
}
// Playback on the null sink's virtual clock: the decoder, the decoding thread, the ring and
// the render thread, as fast as they go, against mpg123 decoding to its 'test' output.
if let mpg123Tool {
    cases.append(Case(name: "MP3 play 128k, null sink, \(seconds / 60) min",
                      ours: [tonearm, "play", "--quiet", "--backend", "null", mp3],
                      reference: [mpg123Tool, "-q", "-o", "test", mp3], referenceName: "mpg123 -o test"))
}
if let only { cases = cases.filter { $0.name.contains(only) } }

print("")
print("tonearm-bench, \(runs) runs each, median wall time of the whole process")
print(String(repeating: "-", count: 96))
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
print(pad("case", 40) + pad("tonearm", 12) + pad("reference", 12) + pad("ratio", 8) + "reference tool")
for c in cases {
    var ours: [Double] = [], theirs: [Double] = []
    var failed = false
    for _ in 0..<runs {
        let a = run(c.ours)
        let b = run(c.reference)
        if a.status != 0 || b.status != 0 { failed = true }
        ours.append(a.seconds)
        theirs.append(b.seconds)
    }
    var agreement = ""
    if c.compareOutput {
        let a = output(c.ours), b = output(c.reference)
        agreement = a == b ? "  (both: \(a))" : "  (DIFFER: tonearm \(a), reference \(b))"
    }
    let o = median(ours), t = median(theirs)
    let ratio = t > 0 ? o / t : 0
    print(pad(c.name, 40) + pad(String(format: "%.3f s", o), 12) + pad(String(format: "%.3f s", t), 12)
          + pad(String(format: "%.2f", ratio), 8) + c.referenceName + (failed ? "  (a run FAILED)" : "") + agreement)
}
print(String(repeating: "-", count: 96))
print("ratio = tonearm / reference; below 1.0 means Tonearm is faster.")

import XCTest
import Foundation
@testable import TonearmCLI
import Tonearm
import TonearmTestSupport

/// The terminal parts of `tonearm play`: keys, the status line, raw mode and signals.
final class CLIPlayTerminalTests: XCTestCase {
    func decode(_ text: String) -> [KeyCommand] {
        var d = KeyDecoder()
        return d.decode(Array(text.utf8))
    }

    func testKeys() {
        XCTAssertEqual(decode(" "), [.togglePause])
        XCTAssertEqual(decode("q"), [.quit])
        XCTAssertEqual(decode("Q"), [.quit])
        XCTAssertEqual(decode("n"), [.nextTrack])
        XCTAssertEqual(decode("\u{1B}[C"), [.seek(10)])
        XCTAssertEqual(decode("\u{1B}[D"), [.seek(-10)])
        XCTAssertEqual(decode("\u{1B}[A"), [.volume(0.1)])
        XCTAssertEqual(decode("\u{1B}[B"), [.volume(-0.1)])
        XCTAssertEqual(decode("+-"), [.volume(0.1), .volume(-0.1)])
        // Application cursor mode, and Ctrl-→ with parameters.
        XCTAssertEqual(decode("\u{1B}OC\u{1B}OD"), [.seek(10), .seek(-10)])
        XCTAssertEqual(decode("\u{1B}[1;5C"), [.seek(10)])
        XCTAssertEqual(decode(" \u{1B}[C \u{1B}[Dq"), [.togglePause, .seek(10), .togglePause, .seek(-10), .quit])
        XCTAssertEqual(decode("\u{3}"), [.interrupt])
        XCTAssertEqual(decode("\u{4}"), [.quit])
        // Keys that mean nothing, other CSI finals (Home, PgUp) and UTF-8 are ignored.
        XCTAssertEqual(decode("xyz\u{1B}[H\u{1B}[5~é"), [])
        // A lone Escape before a sequence, and Alt+q.
        XCTAssertEqual(decode("\u{1B}\u{1B}[C"), [.seek(10)])
        XCTAssertEqual(decode("\u{1B}q"), [.quit])
        // A control byte cuts a sequence short and counts by itself.
        XCTAssertEqual(decode("\u{1B}[1\u{3}"), [.interrupt])
        // A runaway CSI sequence is dropped at 16 bytes; what follows decodes.
        XCTAssertEqual(decode("\u{1B}[" + String(repeating: "1;", count: 20) + "C q"), [.togglePause, .quit])
    }

    /// An escape sequence split across reads waits for its end, one byte at a time or
    /// in any split.
    func testKeysAcrossReads() {
        let stream = Array(" \u{1B}[C\u{1B}[1;5D\u{1B}OAq".utf8)
        let whole: [KeyCommand] = [.togglePause, .seek(10), .seek(-10), .volume(0.1), .quit]
        for cut in 0...stream.count {
            var d = KeyDecoder()
            let got = d.decode(stream[..<cut]) + d.decode(stream[cut...])
            XCTAssertEqual(got, whole, "cut at \(cut)")
        }
        var d = KeyDecoder()
        var got: [KeyCommand] = []
        for b in stream { got += d.decode([b]) }
        XCTAssertEqual(got, whole)
        var e = KeyDecoder()
        XCTAssertEqual(e.decode([0x1B]), [])
        XCTAssertTrue(e.isWaiting)
        XCTAssertEqual(e.decode(Array("[".utf8)), [])
        XCTAssertEqual(e.decode(Array("C".utf8)), [.seek(10)])
        XCTAssertFalse(e.isWaiting)
    }

    func testTimes() {
        XCTAssertEqual(formatTime(0), "0:00")
        XCTAssertEqual(formatTime(12.99), "0:12")
        XCTAssertEqual(formatTime(185), "3:05")
        XCTAssertEqual(formatTime(600), "10:00")
        XCTAssertEqual(formatTime(3723), "1:02:03")
        XCTAssertEqual(formatTime(-4), "0:00")
        XCTAssertEqual(formatTime(.nan), "-:--")
        XCTAssertEqual(formatTime(.infinity), "-:--")
    }

    func testStatusLine() {
        XCTAssertEqual(statusLine(PlayStatus(time: 12.5, duration: 185, title: "Title")),
                       "▶ 0:12 / 3:05  Title  [vol 100%]")
        XCTAssertEqual(statusLine(PlayStatus(time: 100, duration: 130, title: "Title", track: 1, trackCount: 3,
                                             isPaused: true, volume: 0.5)),
                       "⏸ 1:40 / 2:10  [2/3] Title  [vol 50%]")
        XCTAssertEqual(statusLine(PlayStatus(time: 0, duration: 3723, title: "T", volume: 1.7, rate: 1.5, underruns: 2)),
                       "▶ 0:00 / 1:02:03  T  [vol 170%] [rate 1.5×] [underruns 2]")
        XCTAssertEqual(statusLine(PlayStatus(time: 0, duration: 1, title: "T", rate: 0.25)),
                       "▶ 0:00 / 0:01  T  [vol 100%] [rate 0.25×]")
        // A long title is shortened to fit in width - 1 columns; control characters become spaces.
        let long = PlayStatus(time: 1, duration: 2, title: "A very long title\tindeed, longer than the line")
        let line = statusLine(long, width: 40)
        XCTAssertEqual(line, "▶ 0:01 / 0:02  A very long…  [vol 100%]")
        XCTAssertEqual(line.count, 39)
        XCTAssertEqual(statusLine(long, width: 200), "▶ 0:01 / 0:02  A very long title indeed, longer than the line  [vol 100%]")
        // Too narrow for any title: cut, never longer than the width.
        XCTAssertEqual(statusLine(long, width: 10), "▶ 0:01 / ")
        XCTAssertEqual(statusLine(long, width: 0), "")
    }

    /// Raw mode on a pseudo-terminal: no line buffering and no echo while the session runs,
    /// the keys typed arrive at once, and `end` restores the exact settings.
    func testRawModeIsRestored() throws {
        let (master, slave) = try openPseudoTerminal()
        defer { close(master); close(slave) }
        var before = termios()
        XCTAssertEqual(tcgetattr(slave, &before), 0)
        XCTAssertNotEqual(before.c_lflag & tcflag_t(ICANON), 0)
        let session = PlaybackSession(keys: slave)
        XCTAssertEqual(session.keyboard, slave)
        var during = termios()
        XCTAssertEqual(tcgetattr(slave, &during), 0)
        XCTAssertEqual(during.c_lflag & tcflag_t(ICANON | ECHO), 0)
        XCTAssertNotEqual(during.c_lflag & tcflag_t(ISIG), 0, "Ctrl-C must still send SIGINT")
        // No Enter needed: the bytes of one key press are readable at once.
        XCTAssertEqual(write(master, " \u{1B}[C", 4), 4)
        var keys = KeyDecoder()
        var got: [KeyCommand] = []
        for _ in 0..<20 where got.count < 2 { got += keys.decode(session.readKeys(timeout: 0.5)) }
        XCTAssertEqual(got, [.togglePause, .seek(10)])
        XCTAssertEqual(session.readKeys(timeout: 0), [])
        session.end()
        var after = termios()
        XCTAssertEqual(tcgetattr(slave, &after), 0)
        XCTAssertEqual(after.c_lflag, before.c_lflag)
        XCTAssertEqual(after.c_iflag, before.c_iflag)
        XCTAssertEqual(after.c_oflag, before.c_oflag)
        XCTAssertTrue(withUnsafeBytes(of: after.c_cc) { a in withUnsafeBytes(of: before.c_cc) { Array(a) == Array($0) } })
        session.end()  // idempotent
    }

    /// SIGINT and SIGTERM only set a flag the main loop reads; `end` puts the previous
    /// handlers back. Without a terminal nothing is put in raw mode.
    func testSignalsAreRecordedAndHandlersRestored() {
        var old = sigaction()
        XCTAssertEqual(sigaction(SIGINT, nil, &old), 0)
        let session = PlaybackSession(keys: nil)
        XCTAssertNil(session.keyboard)
        XCTAssertNil(session.pendingSignal)
        XCTAssertEqual(session.readKeys(timeout: 0), [])
        XCTAssertEqual(raise(SIGINT), 0)
        XCTAssertEqual(session.pendingSignal, SIGINT)
        session.end()
        var now = sigaction()
        XCTAssertEqual(sigaction(SIGINT, nil, &now), 0)
        // The same handler (glibc may add its SA_RESTORER trampoline to the flags).
        #if canImport(Glibc)
        XCTAssertEqual(withUnsafeBytes(of: now.__sigaction_handler) { Array($0) },
                       withUnsafeBytes(of: old.__sigaction_handler) { Array($0) })
        #endif
        let again = PlaybackSession(keys: nil)
        XCTAssertNil(again.pendingSignal, "a new session starts clean")
        XCTAssertEqual(raise(SIGTERM), 0)
        XCTAssertEqual(again.pendingSignal, SIGTERM)
        again.end()
    }
}

/// A pseudo-terminal pair (master, slave), for tests of raw mode. posix_openpt and friends
/// are looked up at run time: Glibc's Swift module does not declare them.
func openPseudoTerminal() throws -> (Int32, Int32) {
    typealias OpenPT = @convention(c) (Int32) -> Int32
    typealias OnPT = @convention(c) (Int32) -> Int32
    typealias NamePT = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
    guard let o = dlsym(nil, "posix_openpt"), let g = dlsym(nil, "grantpt"), let u = dlsym(nil, "unlockpt"),
          let n = dlsym(nil, "ptsname_r") else { throw XCTSkip("no pseudo-terminal calls here") }
    let master = unsafeBitCast(o, to: OpenPT.self)(O_RDWR | O_NOCTTY)
    guard master >= 0 else { throw XCTSkip("no pseudo-terminals here") }
    var name = [CChar](repeating: 0, count: 128)
    guard unsafeBitCast(g, to: OnPT.self)(master) == 0, unsafeBitCast(u, to: OnPT.self)(master) == 0,
          unsafeBitCast(n, to: NamePT.self)(master, &name, name.count) == 0 else {
        close(master)
        throw XCTSkip("cannot set up a pseudo-terminal")
    }
    let slave = open(name, O_RDWR | O_NOCTTY)
    guard slave >= 0 else { close(master); throw XCTSkip("cannot open the pseudo-terminal") }
    return (master, slave)
}

/// `tonearm play` end to end, through the file and null sinks.
final class CLIPlayTests: XCTestCase {
    let stereoWAV = packageRoot + "/Samples/tone-stereo.wav"
    let stereoMP3 = packageRoot + "/Samples/tone-stereo.mp3"

    /// A file decoded by ExtAudioFile to interleaved Float32: what the player renders.
    func decode(_ path: String) throws -> (samples: [Float], channels: Int, rate: Double) {
        let format = try AudioFile(path: path).dataFormat
        return (try decodeInterleaved(path, as: Float.self), Int(format.channelsPerFrame), format.sampleRate)
    }

    func play(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [Float] {
        let out = makeTemporaryDirectory() + "/out.wav"
        let r = tonearm(["play"] + args + ["--output", out])
        XCTAssertEqual(r.code, 0, r.err, file: file, line: line)
        let written = try decode(out)
        XCTAssertEqual(written.rate, 44100, file: file, line: line)
        XCTAssertEqual(written.channels, 2, file: file, line: line)
        return written.samples
    }

    /// `expected` exactly: the file sink writes what played, with no silence before or after
    /// (it used to pad the last period).
    func assertExactly(_ got: [Float], _ expected: [Float], channels: Int = 2, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(got.count / channels, expected.count / channels, "frames", file: file, line: line)
        XCTAssertTrue(got.elementsEqual(expected), "the samples differ", file: file, line: line)
    }

    /// The file written is the sample's PCM, exactly.
    func testPlayToFileIsTheDecodedPCM() throws {
        let source = try decode(stereoWAV)
        XCTAssertEqual(source.samples.count, 22050 * 2)
        let got = try play([stereoWAV])
        XCTAssertEqual(got.count / 2, 22050)
        assertExactly(got, source.samples)
        // --backend file with --output is the same.
        let out = makeTemporaryDirectory() + "/b.wav"
        XCTAssertEqual(tonearm(["play", stereoWAV, "--backend", "file", "--output", out]).code, 0)
        XCTAssertTrue(try decode(out).samples == got)
    }

    /// Two files play back to back with no gap: the WAV's PCM, then the MP3's after its
    /// priming and padding are trimmed (22050 frames each).
    func testTwoFilesAreGapless() throws {
        let a = try decode(stereoWAV).samples, b = try decode(stereoMP3).samples
        XCTAssertEqual(b.count, 22050 * 2)
        let got = try play([stereoWAV, stereoMP3])
        XCTAssertEqual(got.count / 2, 44100)
        assertExactly(got, a + b)
    }

    func testVolumeScalesTheSamples() throws {
        let source = try decode(stereoWAV).samples
        assertExactly(try play([stereoWAV, "-v", "0.5"]), source.map { $0 * 0.5 })
        assertExactly(try play([stereoWAV, "-v", "0"]), source.map { _ in 0 })
    }

    /// -t stops at the frame it names, on a sink without a clock: 0.5 s of a 1-s queue is
    /// 22050 frames, whatever the period.
    func testTimeLimitStopsAtTheFrame() throws {
        let whole = try decode(stereoWAV).samples + decode(stereoMP3).samples
        let got = try play([stereoWAV, stereoMP3, "-t", "0.5"])
        XCTAssertEqual(got.count / 2, 22050)
        XCTAssertTrue(got.elementsEqual(whole.prefix(got.count)))
        // A limit past the end changes nothing.
        assertExactly(try play([stereoWAV, "-t", "100"]), try decode(stereoWAV).samples)
        let small = try play([stereoWAV, stereoMP3, "-t", "0.3", "--period", "512"])
        XCTAssertEqual(small.count / 2, 13230)
        XCTAssertTrue(small.elementsEqual(whole.prefix(small.count)))
        XCTAssertEqual(tonearm(["play", "--backend", "null", "--period", "8", stereoWAV]).code, 64)
    }

    /// -r 2 plays 1 s of queue in 0.5 s of output: 22050 frames, the tones an octave up (as
    /// many zero crossings in half the frames).
    func testRateResamples() throws {
        let source = try decode(stereoWAV).samples + decode(stereoMP3).samples
        let got = try play([stereoWAV, stereoMP3, "-r", "2"])
        XCTAssertEqual(got.count / 2, 22050)
        let lastSound = (0..<got.count / 2).last { got[2 * $0] != 0 || got[2 * $0 + 1] != 0 }
        XCTAssertEqual(lastSound, 22049)
        func crossings(_ x: [Float], frames: Int) -> Int {
            (1..<frames).filter { (x[2 * ($0 - 1)] < 0) != (x[2 * $0] < 0) }.count
        }
        XCTAssertEqual(crossings(source, frames: 44000), 877)
        XCTAssertEqual(crossings(got, frames: 22000), 877)
    }

    /// `--output` replaces a file that exists, as every tool's output argument does: the second
    /// run used to fail with 'prm?' ("pass .eraseFile").
    func testOutputFileIsReplaced() throws {
        let out = makeTemporaryDirectory() + "/again.wav"
        FileManager.default.createFile(atPath: out, contents: Data(repeating: 7, count: 100000))
        for run in 0..<2 {
            let r = tonearm(["play", stereoWAV, "--output", out])
            XCTAssertEqual(r.code, 0, "run \(run): " + r.err)
            XCTAssertEqual(r.err, "")
            assertExactly(try decode(out).samples, try decode(stereoWAV).samples)
        }
    }

    func testNullBackendAndErrors() throws {
        let r = tonearm(["play", "--backend", "null", stereoWAV, stereoMP3])
        XCTAssertEqual(r.code, 0, r.err)
        XCTAssertEqual(r.out, "Playing: Tonearm sample (0:01)\nPlaying: Tonearm sample (0:01)\n")
        XCTAssertEqual(r.err, "")
        let quiet = tonearm(["play", "--backend", "null", "--quiet", stereoWAV])
        XCTAssertEqual(quiet.code, 0)
        XCTAssertEqual(quiet.out, "")
        let bogus = tonearm(["play", "--backend", "bogus", stereoWAV])
        XCTAssertEqual(bogus.code, 64)
        XCTAssertTrue(bogus.err.hasPrefix("tonearm play: unknown backend 'bogus'"), bogus.err)
        for args in [["play"], ["play", stereoWAV, "-v", "17"], ["play", stereoWAV, "-r", "5"], ["play", stereoWAV, "-t", "0"],
                     ["play", stereoWAV, "-q", "2"], ["play", stereoWAV, "--backend", "file"],
                     ["play", stereoWAV, "--backend", "alsa", "--output", "/tmp/x.wav"], ["play", stereoWAV, "--realtime"]] {
            XCTAssertEqual(tonearm(args).code, 64, "\(args)")
        }
        // A missing file, even after one that plays, is named with its error.
        let missing = tonearm(["play", "--backend", "null", stereoWAV, "/nonexistent/x.wav"])
        XCTAssertEqual(missing.code, 1)
        XCTAssertEqual(missing.err, "tonearm: /nonexistent/x.wav: cannot open: No such file or directory (kAudioFileFileNotFoundError (-43))\n")
        XCTAssertEqual(missing.out, "")
        let notAudio = tonearm(["play", "--backend", "null", fixturesDirectory + "/README.md"])
        XCTAssertEqual(notAudio.code, 1)
        XCTAssertTrue(notAudio.err.hasPrefix("tonearm: \(fixturesDirectory)/README.md: "), notAudio.err)
        XCTAssertTrue(notAudio.err.hasSuffix("('typ?')\n"), notAudio.err)
        XCTAssertTrue(tonearm(["play", "--help"]).out.hasPrefix("usage: tonearm play FILE…"))
    }

    /// No sound system: the '!dev' message (each backend and why), then the hint.
    func testNoDeviceSaysWhatToTry() throws {
        var err = ""
        let console = Console(out: { _ in }, err: { err += $0 }, stderrIsTerminal: false)
        var plan = try PlayCommand.Plan(Arguments([], spec: .init()))
        let error = AudioError(.badDevice, "no sound output could be opened (pulse: refused; alsa: no card)")
        XCTAssertEqual(PlayCommand.failed(error, plan: plan, console: console), 1)
        XCTAssertEqual(err, "tonearm: no sound output could be opened (pulse: refused; alsa: no card) ('!dev')\n"
                       + "try --output FILE.wav to write the audio to a file\n")
        // With --output the hint is not repeated, and a file error names the file.
        err = ""
        plan.outputPath = "/nope/x.wav"
        XCTAssertEqual(PlayCommand.failed(AudioError(.permissions, "cannot create"), plan: plan, console: console), 1)
        XCTAssertTrue(err.hasPrefix("tonearm: /nope/x.wav: cannot create ("), err)
        // The real thing, where no backend of the system's opens here.
        let live = tonearm(["play", "--quiet", stereoWAV, "-t", "0.01"])
        if live.code == 1 {
            XCTAssertTrue(live.err.contains("('!dev')\ntry --output FILE.wav to write the audio to a file\n"), live.err)
            for backend in AudioOutputBackends.system { XCTAssertTrue(live.err.contains(backend.name + ": "), live.err) }
        } else {
            XCTAssertEqual(live.code, 0, live.err)
        }
        // An output that cannot be written.
        let unwritable = tonearm(["play", stereoWAV, "--output", "/nonexistent/dir/x.wav"])
        XCTAssertEqual(unwritable.code, 1)
        XCTAssertTrue(unwritable.err.hasPrefix("tonearm: /nonexistent/dir/x.wav: "), unwritable.err)
    }

    func testListDevicesJSON() throws {
        let r = tonearm(["play", "--list-devices", "--json"])
        XCTAssertEqual(r.code, 0, r.err)
        let obj = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let backends = try XCTUnwrap(obj["backends"] as? [[String: Any]])
        XCTAssertEqual(backends.map { $0["name"] as? String }, AudioOutputBackends.system.map(\.name) + ["null"])
        let null = try XCTUnwrap(backends.last)
        XCTAssertEqual(null["available"] as? Bool, true)
        let devices = try XCTUnwrap(null["devices"] as? [[String: Any]])
        XCTAssertEqual(devices.count, 1)
        XCTAssertEqual(devices[0]["name"] as? String, "null")
        XCTAssertEqual(devices[0]["default"] as? Bool, true)
        for b in backends where b["available"] as? Bool == false {
            XCTAssertEqual(b["code"] as? String, "!dev")
            XCTAssertFalse((b["error"] as? String ?? "").isEmpty)
        }
        let text = tonearm(["play", "--list-devices"])
        XCTAssertEqual(text.code, 0)
        XCTAssertTrue(text.out.hasSuffix("null:\n  * null  No output (virtual clock)\n"), text.out)
    }

    // MARK: The built tool, in a subprocess

    /// The built `tonearm` beside the test runner, when it is there and knows `play`.
    func builtTonearm() throws -> String {
        guard let tool = builtExecutable("tonearm", besideTestsOf: Self.self) else {
            throw skipOrFail("no built tonearm beside the tests (swift build builds it)")
        }
        guard let help = try? runTool(tool, ["play", "--help"]), help.hasPrefix("usage: tonearm play") else {
            throw skipOrFail("the tonearm beside the tests is older than play")
        }
        return tool
    }

    /// Ends `process` if it is still running after `seconds`: a hang fails the test
    /// instead of blocking the suite.
    func watchdog(_ process: Process, seconds: Double = 60) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Three 30-s tracks (a quiet 8 kHz mono tone, written once per run) on the null sink
    /// paced like a device: long enough that only a key moves to the next one.
    static let longTrack: String = {
        let path = makeTemporaryDirectory() + "/long.wav"
        let frames = 30 * 8000
        let samples = (0..<frames).map { Int16(1000 * sin(Double($0) * 2 * .pi * 440 / 8000)) }
        let bytes = samples.withUnsafeBytes { Array($0) }
        if let file = try? AudioFile.create(path: path, type: .wave, format: .pcm(sampleRate: 8000, channels: 1, bits: 16)) {
            try? file.writePackets(bytes, count: frames, startingAt: 0)
            try? file.close()
        }
        return path
    }()
    var longQueue: [String] { ["play", "--backend", "null", "--realtime", "-t", "100"] + Array(repeating: Self.longTrack, count: 3) }

    /// `tonearm play --backend pulse` to the null sink `.ci/run` starts, while parec records its
    /// monitor: the recording holds the sample's waveform (correlation), as long as the sample
    /// within the latency, with no dropout longer than 5 ms.
    func testPlayThroughPulseIsRecordedWhole() throws {
        let tool = try builtTonearm()
        let sink = PulseTestServer.sink
        let sinks: [AudioOutputDevice]
        do { sinks = try PulseOutputBackend().devices() } catch {
            throw skipOrFail("no PulseAudio server: \(error)", required: PulseTestServer.isRequired)
        }
        guard sinks.contains(where: { $0.name == sink }), which("parec") != nil else {
            throw skipOrFail("no sink \(sink) or no parec", required: PulseTestServer.isRequired)
        }
        let sample = packageRoot + "/Samples/tone-stereo.wav"
        let reference = try decodeInterleaved(sample, as: Int16.self)
        var status: Int32 = -1
        var stderr = ""
        let recorded = try recordPulseMonitor(sink: sink, rate: 44100, channels: 2) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = ["play", "--backend", "pulse", "--device", sink, "--latency", "0.05", sample]
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            watchdog(p)
            stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            status = p.terminationStatus
        }
        XCTAssertEqual(status, 0, stderr)
        let analysis = analyseCapture(recorded: recorded, reference: reference, channels: 2)
        XCTAssertGreaterThan(analysis.correlation, 0.95, "\(analysis)")
        XCTAssertLessThanOrEqual(abs(analysis.recordedLength - analysis.referenceLength), 44100 / 20, "\(analysis)")
        XCTAssertLessThanOrEqual(analysis.longestDropout, 44100 * 5 / 1000, "\(analysis)")
        print("tonearm play through PulseAudio, recorded by parec: \(analysis)")
    }

    /// Ctrl-C (SIGINT) stops playback cleanly: exit code 130, not death by the signal.
    func testInterruptExits130() throws {
        let tool = try builtTonearm()
        for (signal, code) in [(SIGINT, Int32(130)), (SIGTERM, 143)] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = longQueue
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            watchdog(p)
            // The first 'Playing:' line comes after the handlers are in place.
            let first = out.fileHandleForReading.availableData
            XCTAssertEqual(String(decoding: first, as: UTF8.self), "Playing: long (0:30)\n")
            kill(p.processIdentifier, signal)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationReason, .exit, "killed by signal \(p.terminationStatus)")
            XCTAssertEqual(p.terminationStatus, code)
        }
    }

    /// On a terminal (a pseudo-terminal here): the status line, raw mode while playing,
    /// keys acting at once (n: next track, space: pause, q: quit), and the terminal's
    /// settings exactly as before on the way out, by q and by SIGINT.
    func testTerminalKeysAndStatusLine() throws {
        let tool = try builtTonearm()
        let (master, slave) = try openPseudoTerminal()
        defer { close(master); close(slave) }
        var before = termios()
        XCTAssertEqual(tcgetattr(slave, &before), 0)

        func start() throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = longQueue
            p.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
            p.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            watchdog(p)
            return p
        }
        var screen = ""
        /// Reads the terminal until one of `texts` shows (or the process ends).
        func waitFor(_ texts: String..., in p: Process) -> Bool {
            while !texts.contains(where: { screen.contains($0) }) {
                var fds = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                if poll(&fds, 1, 200) > 0 {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    let n = read(master, &buffer, buffer.count)
                    if n > 0 { screen += String(decoding: buffer.prefix(n), as: UTF8.self) }
                } else if !p.isRunning {
                    return false
                }
            }
            return true
        }
        /// The end of the screen, for a failure's message.
        var tail: String { String(screen.suffix(160)).debugDescription }
        func isRestored() -> Bool {
            var after = termios()
            guard tcgetattr(slave, &after) == 0 else { return false }
            return after.c_lflag == before.c_lflag && after.c_iflag == before.c_iflag
                && withUnsafeBytes(of: after.c_cc) { a in withUnsafeBytes(of: before.c_cc) { Array(a) == Array($0) } }
        }

        let p = try start()
        guard waitFor("▶ 0:00 / 0:30  [1/3] long  [vol 100%]", in: p) else {
            kill(p.processIdentifier, SIGKILL)
            return XCTFail("no status line: \(tail)")
        }
        var during = termios()
        XCTAssertEqual(tcgetattr(slave, &during), 0)
        XCTAssertEqual(during.c_lflag & tcflag_t(ICANON | ECHO), 0, "not in raw mode while playing")
        // Paused before seeking, so the times shown do not depend on how fast this runs.
        // A seek while paused shows its target at once: what the device still holds is older.
        let steps: [(String, [String])] = [
            ("n", ["[2/3]"]), (" ", ["⏸"]), ("\u{1B}[D", ["⏸ 0:00 / 0:30  [2/3] long  [vol 100%]"]),
            ("\u{1B}[C", ["⏸ 0:10 / 0:30  [2/3]"]),
            ("\u{1B}[A", ["[vol 110%]"]), ("\u{1B}[B\u{1B}[B", ["[vol 90%]"]), (" ", ["▶ 0:1"]),
        ]
        for (key, shows) in steps {
            XCTAssertEqual(write(master, key, key.utf8.count), key.utf8.count)
            guard waitFor(shows.first!, shows.last!, in: p) else {
                kill(p.processIdentifier, SIGKILL)
                return XCTFail("\(shows[0]) never showed after \(key.debugDescription): \(tail)")
            }
        }
        XCTAssertEqual(write(master, "q", 1), 1)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .exit)
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertTrue(isRestored(), "the terminal stays raw after q")
        XCTAssertTrue(waitFor("\n", in: p), "no newline after the status line: \(tail)")

        screen = ""
        let q = try start()
        guard waitFor("▶", in: q) else {
            kill(q.processIdentifier, SIGKILL)
            return XCTFail("no status line: \(tail)")
        }
        kill(q.processIdentifier, SIGINT)
        q.waitUntilExit()
        XCTAssertEqual(q.terminationReason, .exit)
        XCTAssertEqual(q.terminationStatus, 130)
        XCTAssertTrue(isRestored(), "the terminal stays raw after Ctrl-C")

        // Ctrl-Z: the terminal is cooked while stopped and raw again after SIGCONT.
        screen = ""
        let z = try start()
        guard waitFor("▶", in: z) else {
            kill(z.processIdentifier, SIGKILL)
            return XCTFail("no status line: \(tail)")
        }
        func state() -> Character? {
            guard let stat = try? String(contentsOfFile: "/proc/\(z.processIdentifier)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            return stat[close...].dropFirst(2).first
        }
        kill(z.processIdentifier, SIGTSTP)
        var stopped = false
        for _ in 0..<100 where !stopped {
            stopped = state() == "T"
            if !stopped { usleep(20_000) }
        }
        if stopped {
            XCTAssertTrue(isRestored(), "the terminal stays raw while stopped")
            kill(z.processIdentifier, SIGCONT)
            var raw = false
            for _ in 0..<100 where !raw {
                var t = termios()
                raw = tcgetattr(slave, &t) == 0 && t.c_lflag & tcflag_t(ICANON) == 0
                if !raw { usleep(20_000) }
            }
            XCTAssertTrue(raw, "not raw again after SIGCONT")
        }  // else: an orphaned process group, where the kernel does not stop on SIGTSTP
        XCTAssertEqual(write(master, "q", 1), 1)
        z.waitUntilExit()
        XCTAssertEqual(z.terminationReason, .exit)
        XCTAssertEqual(z.terminationStatus, 0)
        XCTAssertTrue(isRestored(), "the terminal stays raw after Ctrl-Z and q")
    }
}

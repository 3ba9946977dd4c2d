// The terminal side of `tonearm play`: keys, the status line, raw mode and signals.
// The decoding of keys and the formatting of the status line are pure, so tests drive them
// without a terminal; every termios and signal call of the CLI is in this file.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

// MARK: - Keys

/// What a key asks the player to do.
enum KeyCommand: Equatable {
    case togglePause
    /// Seek by this many seconds within the current track.
    case seek(Double)
    /// Change the volume by this much linear gain.
    case volume(Float)
    case nextTrack
    case quit
    /// Ctrl-C read as a byte (when the terminal does not turn it into SIGINT).
    case interrupt
}

/// Turns the bytes typed on a terminal in raw mode into commands. An escape sequence may
/// arrive split across reads; its first bytes wait for the rest.
///
/// Space (or p) toggles pause, ← and → (`ESC [ D`, `ESC [ C`, or `ESC O D` in application
/// cursor mode) seek ∓10 s, ↑ and ↓ (or + and -) change the volume by 10 %, n skips to the
/// next track, q quits. CSI sequences with parameters (`ESC [ 1 ; 5 C`, Ctrl-→) count as
/// their final byte; anything else is ignored.
struct KeyDecoder {
    static let seekStep = 10.0
    static let volumeStep: Float = 0.1
    /// The longest escape sequence kept; a longer one is garbage and dropped.
    static let maximumSequence = 16

    private var pending: [UInt8] = []

    /// The commands in `bytes`, in order.
    mutating func decode(_ bytes: some Sequence<UInt8>) -> [KeyCommand] {
        var out: [KeyCommand] = []
        for b in bytes { feed(b, into: &out) }
        return out
    }

    /// True while the start of an escape sequence waits for its end.
    var isWaiting: Bool { !pending.isEmpty }

    private mutating func feed(_ b: UInt8, into out: inout [KeyCommand]) {
        switch pending.count {
        case 0:
            if b == 0x1B { pending = [b]; return }
            if let c = Self.plain(b) { out.append(c) }
        case 1:
            if b == UInt8(ascii: "[") || b == UInt8(ascii: "O") { pending.append(b); return }
            pending = []
            // ESC ESC: the first was a lone Escape. ESC x: Alt+x, read as x.
            feed(b, into: &out)
        default:
            let introducer = pending[1]
            if introducer == UInt8(ascii: "["), (0x20...0x3F).contains(b) {
                // Parameter and intermediate bytes of a CSI sequence.
                pending.append(b)
                if pending.count > Self.maximumSequence { pending = [] }
                return
            }
            pending = []
            if (0x40...0x7E).contains(b) {
                if let c = Self.arrow(b) { out.append(c) }
            } else {
                feed(b, into: &out)  // a control byte cut the sequence short
            }
        }
    }

    private static func plain(_ b: UInt8) -> KeyCommand? {
        switch b {
        case UInt8(ascii: " "), UInt8(ascii: "p"), UInt8(ascii: "P"): return .togglePause
        case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x04: return .quit  // 0x04: Ctrl-D
        case 0x03: return .interrupt
        case UInt8(ascii: "n"), UInt8(ascii: "N"): return .nextTrack
        case UInt8(ascii: "+"), UInt8(ascii: "="): return .volume(volumeStep)
        case UInt8(ascii: "-"), UInt8(ascii: "_"): return .volume(-volumeStep)
        default: return nil
        }
    }

    private static func arrow(_ final: UInt8) -> KeyCommand? {
        switch final {
        case UInt8(ascii: "A"): return .volume(volumeStep)
        case UInt8(ascii: "B"): return .volume(-volumeStep)
        case UInt8(ascii: "C"): return .seek(seekStep)
        case UInt8(ascii: "D"): return .seek(-seekStep)
        default: return nil
        }
    }
}

// MARK: - The status line

/// What the status line shows.
struct PlayStatus: Equatable {
    var time: Double
    var duration: Double
    var title: String
    /// The current track, from 0.
    var track = 0
    var trackCount = 1
    var isPaused = false
    /// Linear gain: 1 is 100 %.
    var volume: Float = 1
    var rate: Float = 1
    var underruns = 0
}

/// `m:ss`, or `h:mm:ss` from an hour on; whole seconds, rounded down. Not a number: `-:--`.
func formatTime(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "-:--" }
    let total = Int(max(0, min(seconds, 1e9)))
    let s = total % 60, m = total / 60 % 60, h = total / 3600
    let ss = s < 10 ? "0\(s)" : "\(s)"
    if h > 0 { return "\(h):" + (m < 10 ? "0\(m)" : "\(m)") + ":" + ss }
    return "\(m):" + ss
}

/// The status line, at most `width - 1` columns (the last column stays empty so the
/// terminal never wraps), the title shortened with … to fit:
///
///     ▶ 0:12 / 3:05  Title  [vol 100%]
///     ⏸ 1:40 / 2:10  [2/3] Title  [vol 50%] [rate 1.5×] [underruns 2]
func statusLine(_ s: PlayStatus, width: Int = 80) -> String {
    let icon = s.isPaused ? "⏸" : "▶"
    let head = "\(icon) \(formatTime(s.time)) / \(formatTime(s.duration))  "
        + (s.trackCount > 1 ? "[\(s.track + 1)/\(s.trackCount)] " : "")
    var tail = "  [vol \(Int((Double(s.volume) * 100).rounded()))%]"
    if s.rate != 1 { tail += " [rate \(formatRate(s.rate))×]" }
    if s.underruns > 0 { tail += " [underruns \(s.underruns)]" }
    // Control characters in a title would move the cursor.
    let title = String(String.UnicodeScalarView(s.title.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    let room = max(0, width - 1) - head.count - tail.count
    if title.count <= room { return head + title + tail }
    if room >= 2 { return head + title.prefix(room - 1) + "…" + tail }
    return String((head + tail).prefix(max(0, width - 1)))
}

/// 1.5, 2, 0.25: the shortest of up to two decimals.
private func formatRate(_ r: Float) -> String {
    let hundredths = Int((Double(r) * 100).rounded())
    if hundredths % 100 == 0 { return "\(hundredths / 100)" }
    if hundredths % 10 == 0 { return "\(hundredths / 100).\(hundredths % 100 / 10)" }
    let cents = hundredths % 100
    return "\(hundredths / 100)." + (cents < 10 ? "0\(cents)" : "\(cents)")
}

/// The column count of the terminal on `fd`, or nil when it is not one.
func terminalWidth(fd: Int32) -> Int? {
    var size = winsize()
    let ok = withUnsafeMutablePointer(to: &size) { ioctl(fd, UInt(TIOCGWINSZ), $0) } == 0
    guard ok, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
}

/// True when `fd` is a terminal.
func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

/// Waits up to `timeout` seconds for input on `fd` and returns what is there (at most 256
/// bytes): empty on timeout or on a signal, nil at the end of input (the terminal hung up).
func readAvailable(fd: Int32, timeout: Double) -> [UInt8]? {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let ready = poll(&p, 1, Int32(max(0, min(timeout, 10)) * 1000))
    guard ready > 0 else { return [] }
    guard p.revents & Int16(POLLIN) != 0 else { return nil }  // POLLHUP, POLLERR, POLLNVAL
    var buffer = [UInt8](repeating: 0, count: 256)
    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if n > 0 { return Array(buffer.prefix(n)) }
    return n < 0 && (errno == EINTR || errno == EAGAIN) ? [] : nil
}

// MARK: - Raw mode and signals

/// The terminal and signal state the signal handlers need. It lives in memory allocated
/// before any handler is installed and never freed, so a handler only reads plain C memory
/// and makes async-signal-safe calls (tcsetattr, sigaction, raise, _exit).
private struct RescueState {
    var fd: Int32 = -1
    var hasTerminal = false
    var cooked = termios()
    var raw = termios()
}

nonisolated(unsafe) private let rescue: UnsafeMutablePointer<RescueState> = {
    let p = UnsafeMutablePointer<RescueState>.allocate(capacity: 1)
    p.initialize(to: RescueState())
    return p
}()

/// The previous handlers, by signal number; fixed storage the handlers can read.
nonisolated(unsafe) private let previousActions: UnsafeMutablePointer<sigaction> = {
    let p = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    p.initialize(repeating: sigaction(), count: 65)
    return p
}()

/// The signal that asked the program to stop (0 for none), set by the handler.
private let receivedSignal = Atomic<Int32>(0)
/// Set when the process continues after Ctrl-Z, so the status line is drawn again.
private let continued = Atomic<Bool>(false)

/// Signals that stop playback cleanly: the handler records them and the main loop acts.
/// (SIGPIPE too: a closed pipe on stdout must not kill the program with the terminal raw.)
private let stopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGPIPE]
/// Fatal signals: the handler only puts the terminal back, then the previous handler (or
/// the default action) runs as if Tonearm had not been there.
private let fatalSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT]

private func onStopSignal(_ sig: Int32) {
    // A second signal while the first is still pending: the main loop is stuck (in a device
    // open, say). Put the terminal back and leave at once.
    if receivedSignal.exchange(sig, ordering: .sequentiallyConsistent) != 0 {
        if rescue.pointee.hasTerminal { _ = tcsetattr(rescue.pointee.fd, TCSANOW, &rescue.pointee.cooked) }
        _exit(128 + sig)
    }
}

private func onFatalSignal(_ sig: Int32) {
    if rescue.pointee.hasTerminal { _ = tcsetattr(rescue.pointee.fd, TCSANOW, &rescue.pointee.cooked) }
    // The faulting instruction runs again under the previous handler (for a trap or a
    // fault), or abort() raises again (for SIGABRT).
    _ = sigaction(sig, previousActions + Int(sig), nil)
}

private func onSuspend(_ sig: Int32) {
    // Ctrl-Z: cooked mode while stopped, so the shell works; raw again on `fg`.
    if rescue.pointee.hasTerminal { _ = tcsetattr(rescue.pointee.fd, TCSANOW, &rescue.pointee.cooked) }
    _ = sigaction(SIGTSTP, previousActions + Int(SIGTSTP), nil)
    _ = raise(SIGTSTP)
    // Running again.
    var mine = handlerAction(onSuspend)
    mine.sa_flags = Int32(SA_NODEFER)
    _ = sigaction(SIGTSTP, &mine, nil)
    if rescue.pointee.hasTerminal { _ = tcsetattr(rescue.pointee.fd, TCSANOW, &rescue.pointee.raw) }
    continued.store(true, ordering: .sequentiallyConsistent)
}

private func handlerAction(_ handler: @convention(c) (Int32) -> Void) -> sigaction {
    var action = sigaction()
    #if canImport(Darwin)
    action.__sigaction_u.__sa_handler = handler
    #else
    action.__sigaction_handler.sa_handler = handler
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0  // no SA_RESTART: a blocking poll or read returns EINTR at once
    return action
}

/// The terminal in raw mode and the signal handlers of `tonearm play`, from `init` until
/// `end`. `end` puts everything back and must run on every way out (the command calls it
/// from a `defer`); a second Ctrl-C, or a crash, puts the terminal back from the handler.
///
/// Raw here means no line buffering and no echo. ISIG stays on, so Ctrl-C still sends
/// SIGINT, and output processing stays on, so `\n` still starts a line.
final class PlaybackSession {
    /// The terminal whose keys are read, when there is one (until it hangs up).
    private(set) var keyboard: Int32?
    private var ended = false

    /// Installs the handlers and, when `keys` names a terminal, puts it in raw mode.
    init(keys fd: Int32?) {
        _ = receivedSignal.exchange(0, ordering: .sequentiallyConsistent)
        continued.store(false, ordering: .sequentiallyConsistent)
        var state = RescueState()
        if let fd, isatty(fd) == 1, tcgetattr(fd, &state.cooked) == 0 {
            state.fd = fd
            state.raw = state.cooked
            state.raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &state.raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            state.hasTerminal = true
        }
        rescue.pointee = state
        var stop = handlerAction(onStopSignal)
        for sig in stopSignals { _ = sigaction(sig, &stop, previousActions + Int(sig)) }
        if state.hasTerminal {
            var fatal = handlerAction(onFatalSignal)
            for sig in fatalSignals { _ = sigaction(sig, &fatal, previousActions + Int(sig)) }
            var suspend = handlerAction(onSuspend)
            // Not blocked in its own handler, so that raise() stops the process there.
            suspend.sa_flags = Int32(SA_NODEFER)
            _ = sigaction(SIGTSTP, &suspend, previousActions + Int(SIGTSTP))
            _ = tcsetattr(state.fd, TCSANOW, &rescue.pointee.raw)
            keyboard = fd
        } else {
            keyboard = nil
        }
    }

    /// The stop signal received since `init` (SIGINT, SIGTERM, SIGHUP, SIGPIPE), if any.
    var pendingSignal: Int32? {
        let s = receivedSignal.load(ordering: .sequentiallyConsistent)
        return s == 0 ? nil : s
    }

    /// True once after the process continued from Ctrl-Z.
    func takeContinued() -> Bool { continued.exchange(false, ordering: .sequentiallyConsistent) }

    /// Waits up to `timeout` for keys. At the end of input the keyboard is dropped, so a
    /// hung-up terminal cannot make the caller spin.
    func readKeys(timeout: Double) -> [UInt8] {
        guard let fd = keyboard else { return [] }
        guard let bytes = readAvailable(fd: fd, timeout: timeout) else {
            keyboard = nil
            return []
        }
        return bytes
    }

    /// Puts the terminal back as it was and the previous signal handlers in place. Idempotent.
    func end() {
        guard !ended else { return }
        ended = true
        if rescue.pointee.hasTerminal {
            _ = tcsetattr(rescue.pointee.fd, TCSANOW, &rescue.pointee.cooked)
            for sig in fatalSignals + [SIGTSTP] { _ = sigaction(sig, previousActions + Int(sig), nil) }
            rescue.pointee.hasTerminal = false
        }
        for sig in stopSignals { _ = sigaction(sig, previousActions + Int(sig), nil) }
    }

    deinit { end() }
}

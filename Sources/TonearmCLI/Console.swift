#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI writes: the real stdout and stderr, or strings in tests.
public final class Console {
    private var outBuffer: [UInt8] = []
    private let writeOut: ([UInt8]) -> Void
    private let writeErr: (String) -> Void
    /// True when stderr is a terminal, so that progress bars and status lines make sense.
    public let stderrIsTerminal: Bool

    public init(out: @escaping ([UInt8]) -> Void, err: @escaping (String) -> Void, stderrIsTerminal: Bool) {
        writeOut = out
        writeErr = err
        self.stderrIsTerminal = stderrIsTerminal
    }

    /// The process's stdout and stderr.
    public static func standard() -> Console {
        Console(out: { bytes in
            bytes.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = write(1, raw.baseAddress! + done, raw.count - done)
                    if n <= 0 { break }
                    done += n
                }
            }
        }, err: { text in
            var bytes = Array(text.utf8)
            _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
        }, stderrIsTerminal: isatty(2) == 1)
    }

    /// Writes a line to stdout (buffered; flushed by `flush()` and at 64 KiB).
    public func print(_ line: String) {
        outBuffer.append(contentsOf: line.utf8)
        outBuffer.append(0x0A)
        if outBuffer.count >= 1 << 16 { flush() }
    }

    /// Writes text to stderr at once (progress, errors).
    public func error(_ text: String) {
        flush()
        writeErr(text)
    }

    public func flush() {
        guard !outBuffer.isEmpty else { return }
        writeOut(outBuffer)
        outBuffer.removeAll(keepingCapacity: true)
    }
}

/// A progress bar on stderr, drawn only on a terminal, redrawn at most 100 times.
struct ProgressBar {
    let console: Console
    let label: String
    private var lastPercent = -1

    init(console: Console, label: String) {
        self.console = console
        self.label = label
    }

    mutating func update(_ done: Int64, of total: Int64) {
        guard console.stderrIsTerminal, total > 0 else { return }
        let percent = Int(min(100, done * 100 / total))
        guard percent != lastPercent else { return }
        lastPercent = percent
        let width = 30
        let filled = percent * width / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        console.error("\r\(label) [\(bar)] \(percent)%")
    }

    func finish() {
        guard console.stderrIsTerminal, lastPercent >= 0 else { return }
        console.error("\n")
    }
}

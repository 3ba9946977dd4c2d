#if FFmpeg
import CFFmpeg
import TonearmCore

/// FFmpeg's error codes as Tonearm's: every `AVERROR` becomes an ``AudioError`` with the
/// four-char code a caller of the native code would see, and FFmpeg's own message.
extension AudioError {
    /// The error for a negative return value of an FFmpeg call.
    ///
    /// - Parameters:
    ///   - code: what the call returned (an `AVERROR`).
    ///   - context: what Tonearm was doing ("opening the WMA decoder").
    ///   - fallback: the code for FFmpeg's "invalid data" and for errors with no better
    ///     match: 'dta?' while demuxing, 'bada' while decoding.
    package init(ffmpeg code: Int32, _ context: String, fallback: AudioError.Code = .invalidFile) {
        let message = "\(context): \(FFmpegErrors.message(code)) (FFmpeg)"
        self.init(FFmpegErrors.code(for: code, fallback: fallback), message)
    }
}

package enum FFmpegErrors {
    /// FFmpeg's `FFERRTAG(a, b, c, d)`: the negated little-endian tag.
    static func tag(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> Int32 {
        -Int32(bitPattern: UInt32(a) | UInt32(b) << 8 | UInt32(c) << 16 | UInt32(d) << 24)
    }

    static let eof = tonearm_averror_eof()
    static let invalidData = tonearm_averror_invaliddata()
    static let exit = tonearm_averror_exit()
    static let again = tonearm_averror(EAGAIN)
    static let patchWelcome = tag(0x50, 0x41, 0x57, 0x45)       // 'PAWE'
    static let decoderNotFound = tag(0xF8, 0x44, 0x45, 0x43)    // 0xF8 'DEC'
    static let demuxerNotFound = tag(0xF8, 0x44, 0x45, 0x4D)    // 0xF8 'DEM'
    static let protocolNotFound = tag(0xF8, 0x50, 0x52, 0x4F)   // 0xF8 'PRO'
    static let streamNotFound = tag(0xF8, 0x53, 0x54, 0x52)     // 0xF8 'STR'
    static let optionNotFound = tag(0xF8, 0x4F, 0x50, 0x54)     // 0xF8 'OPT'
    static let httpNotFound = tag(0xF8, 0x34, 0x30, 0x34)       // 0xF8 '404'
    static let httpErrors: Set<Int32> = [
        tag(0xF8, 0x34, 0x30, 0x30), tag(0xF8, 0x34, 0x30, 0x31), tag(0xF8, 0x34, 0x30, 0x33),
        tag(0xF8, 0x34, 0x58, 0x58), tag(0xF8, 0x35, 0x58, 0x58),
    ]

    /// Tonearm's code for an `AVERROR`.
    static func code(for e: Int32, fallback: AudioError.Code) -> AudioError.Code {
        switch e {
        case eof: return .endOfFile
        case invalidData: return fallback
        case patchWelcome, decoderNotFound, streamNotFound: return .unsupportedDataFormat
        case demuxerNotFound, protocolNotFound: return .unsupportedFileType
        case optionNotFound: return .parameter
        case httpNotFound, tonearm_averror(ENOENT): return .fileNotFound
        case tonearm_averror(EACCES), tonearm_averror(EPERM): return .permissions
        case tonearm_averror(ETIMEDOUT): return .timedOut
        case tonearm_averror(ECONNREFUSED), tonearm_averror(ECONNRESET), tonearm_averror(EHOSTUNREACH),
             tonearm_averror(ENETUNREACH), tonearm_averror(EPIPE), tonearm_averror(EIO):
            return .network
        case tonearm_averror(ENOMEM): return AudioError.limit("").code
        case tonearm_averror(EINVAL): return .parameter
        default: return httpErrors.contains(e) ? .httpStatus : fallback
        }
    }

    /// FFmpeg's text for an error code (`av_strerror`).
    package static func message(_ e: Int32) -> String {
        var text = [CChar](repeating: 0, count: 256)
        if av_strerror(e, &text, text.count) < 0 { return "error \(e)" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// FFmpeg's log: quiet unless the user asks (`tonearm -v`).
public enum FFmpegLog {
    /// How much FFmpeg prints to standard error (its `AV_LOG_*` levels).
    public enum Level: Int32, Sendable {
        case quiet = -8, error = 16, warning = 24, info = 32, verbose = 40, debug = 48
    }

    private static let lock = Lock()
    nonisolated(unsafe) private static var chosen: Level?

    /// FFmpeg's log level for the whole process: `.quiet` unless set.
    public static var level: Level {
        get { lock.withLock { chosen } ?? .quiet }
        set {
            lock.withLock { chosen = newValue }
            av_log_set_level(newValue.rawValue)
        }
    }

    /// Called before Tonearm's first FFmpeg call on each path: keeps FFmpeg quiet unless a
    /// level was chosen.
    package static func prepare() {
        lock.withLock {
            guard chosen == nil else { return }
            chosen = .quiet
            av_log_set_level(Level.quiet.rawValue)
        }
    }
}
#endif

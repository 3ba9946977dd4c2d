/// The error every Tonearm API throws: Apple's four-char code, a message and a category.
///
/// ```swift
/// do { try stream.parse(bytes) }
/// catch let error { print(error) }   // unsupported file type ('typ?'): no known format...
/// ```
public struct AudioError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Apple's `OSStatus` value, with named constants for each code.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// Builds a code from its four characters.
        public init(_ fourCC: FourCC) { rawValue = Int32(bitPattern: fourCC.rawValue) }

        /// The four characters when the code is a four-char code; nil for the small
        /// negative codes (-38, -39, -40, -43).
        public var fourCC: FourCC? {
            let f = FourCC(rawValue: UInt32(bitPattern: rawValue))
            return rawValue > 0xFFFF && f.isPrintable ? f : nil
        }

        /// How every message shows the code: `'typ?'` for a four-char code, and Apple's
        /// constant for a numeric one, `kAudioFileEndOfFileError (-39)` (the bare number when
        /// Apple has no name for it).
        public var codeString: String {
            if let f = fourCC { return f.description }
            if let name = appleName { return "\(name) (\(rawValue))" }
            return String(rawValue)
        }

        /// Apple's constant for a numeric code (`kAudioFileEndOfFileError` for -39); nil for
        /// four-char codes, which name themselves, and for numbers Apple does not name.
        public var appleName: String? { Code.appleNames[rawValue] }

        static let appleNames: [Int32: String] = [
            -38: "kAudioFileNotOpenError", -39: "kAudioFileEndOfFileError", -40: "kAudioFilePositionError",
            -43: "kAudioFileFileNotFoundError", -50: "kAudio_ParamError",
            -10867: "kAudioUnitErr_Uninitialized", -10868: "kAudioUnitErr_FormatNotSupported",
            -66687: "kAudioQueueErr_InvalidBuffer", -66686: "kAudioQueueErr_BufferEmpty",
            -66681: "kAudioQueueErr_CannotStart", -66678: "kAudioQueueErr_InvalidRunState",
        ]

        public var description: String {
            if let name = Code.names[self] { return "\(name) (\(codeString))" }
            return codeString
        }

        // MARK: AudioFileStream (seed 000)

        /// 'typ?', kAudioFileStreamError_UnsupportedFileType and kAudioFileUnsupportedFileTypeError.
        public static let unsupportedFileType = Code("typ?")
        /// 'fmt?', kAudioFileStreamError_UnsupportedDataFormat and kAudioFileUnsupportedDataFormatError.
        public static let unsupportedDataFormat = Code("fmt?")
        /// 'pty?', kAudioFileStreamError_UnsupportedProperty and kAudioFileUnsupportedProperty.
        public static let unsupportedProperty = Code("pty?")
        /// '!siz', kAudioFileStreamError_BadPropertySize and kAudioFileBadPropertySizeError.
        public static let badPropertySize = Code("!siz")
        /// 'optm', kAudioFileStreamError_NotOptimized and kAudioFileNotOptimizedError.
        public static let notOptimized = Code("optm")
        /// 'pck?', kAudioFileStreamError_InvalidPacketOffset and kAudioFileInvalidPacketOffsetError.
        public static let invalidPacketOffset = Code("pck?")
        /// 'dta?', kAudioFileStreamError_InvalidFile and kAudioFileInvalidFileError.
        public static let invalidFile = Code("dta?")
        /// 'unk?', kAudioFileStreamError_ValueUnknown.
        public static let valueUnknown = Code("unk?")
        /// 'more', kAudioFileStreamError_DataUnavailable.
        public static let dataUnavailable = Code("more")
        /// 'nope', kAudioFileStreamError_IllegalOperation (and kAudioCodecIllegalOperationError).
        public static let illegalOperation = Code("nope")
        /// 'wht?', kAudioFileStreamError_UnspecifiedError and kAudioFileUnspecifiedError.
        public static let unspecified = Code("wht?")
        /// 'dsc!', kAudioFileStreamError_DiscontinuityCantRecover.
        public static let discontinuityCantRecover = Code("dsc!")

        // MARK: AudioFile

        /// 'prm?', kAudioFilePermissionsError.
        public static let permissions = Code("prm?")
        /// 'chk?', kAudioFileInvalidChunkError.
        public static let invalidChunk = Code("chk?")
        /// 'off?', kAudioFileDoesNotAllow64BitDataSizeError.
        public static let doesNotAllow64BitDataSize = Code("off?")
        /// 'dep?', kAudioFileInvalidPacketDependencyError.
        public static let invalidPacketDependency = Code("dep?")
        /// 'op??', kAudioFileOperationNotSupportedError.
        public static let operationNotSupported = Code("op??")
        /// -38, kAudioFileNotOpenError.
        public static let notOpen = Code(rawValue: -38)
        /// -39, kAudioFileEndOfFileError.
        public static let endOfFile = Code(rawValue: -39)
        /// -40, kAudioFilePositionError.
        public static let position = Code(rawValue: -40)
        /// -43, kAudioFileFileNotFoundError.
        public static let fileNotFound = Code(rawValue: -43)
        /// -50, kAudio_ParamError: an argument is out of range (AudioFile's answer to a
        /// buffer smaller than the first variable-size packet asked for).
        public static let parameter = Code(rawValue: -50)

        // MARK: AudioConverter and AudioCodec

        /// 'insz', kAudioConverterErr_InvalidInputSize.
        public static let invalidInputSize = Code("insz")
        /// 'otsz', kAudioConverterErr_InvalidOutputSize.
        public static let invalidOutputSize = Code("otsz")
        /// 'prop', kAudioConverterErr_PropertyNotSupported.
        public static let propertyNotSupported = Code("prop")
        /// '!pkd', kAudioConverterErr_RequiresPacketDescriptionsError.
        public static let requiresPacketDescriptions = Code("!pkd")
        /// '!isr', kAudioConverterErr_InputSampleRateOutOfRange.
        public static let inputSampleRateOutOfRange = Code("!isr")
        /// '!osr', kAudioConverterErr_OutputSampleRateOutOfRange.
        public static let outputSampleRateOutOfRange = Code("!osr")
        /// '!dat', kAudioCodecUnsupportedFormatError.
        public static let codecUnsupportedFormat = Code("!dat")
        /// '!stt', kAudioCodecStateError.
        public static let codecState = Code("!stt")
        /// 'bada', kAudioCodecBadDataError.
        public static let codecBadData = Code("bada")
        /// The channel map does not fit the formats' channel counts (`kExtAudioFileError_InvalidChannelMap`).
        public static let invalidChannelMap = Code(rawValue: -66564)

        // Playback (AudioHardware, AudioUnit and AudioQueue).
        /// No such output device, or no sound system could be opened (`kAudioHardwareBadDeviceError`).
        public static let badDevice = Code("!dev")
        /// The device stopped or failed while playing (`kAudioHardwareNotRunningError`).
        public static let hardwareNotRunning = Code("stop")
        /// The unit was used before `initialize()` (`kAudioUnitErr_Uninitialized`).
        public static let uninitialized = Code(rawValue: -10867)
        /// The device or unit cannot take this stream format (`kAudioUnitErr_FormatNotSupported`).
        public static let formatNotSupported = Code(rawValue: -10868)
        /// The buffer does not belong to this queue (`kAudioQueueErr_InvalidBuffer`).
        public static let invalidBuffer = Code(rawValue: -66687)
        /// An enqueued buffer holds no data (`kAudioQueueErr_BufferEmpty`).
        public static let bufferEmpty = Code(rawValue: -66686)
        /// Not allowed in the queue's or player's current state (`kAudioQueueErr_InvalidRunState`).
        public static let invalidRunState = Code(rawValue: -66678)
        /// The property cannot be set now: the unit is initialized (`kAudioUnitErr_PropertyNotWritable`).
        public static let propertyNotWritable = Code(rawValue: -10865)
        /// Not possible while the unit runs; possible later (`kAudioUnitErr_CannotDoInCurrentContext`).
        public static let cannotDoInCurrentContext = Code(rawValue: -10863)
        /// The queue could not start its device (`kAudioQueueErr_CannotStart`).
        public static let cannotStart = Code(rawValue: -66681)

        // Network streaming (Tonearm's own: Apple's file APIs never touch the network).
        /// The server answered with an error status (404, 500…), or not with HTTP at all.
        public static let httpStatus = Code("http")
        /// The connection failed or dropped, and reconnecting gave up.
        public static let network = Code("net!")
        /// Nothing arrived for longer than the timeout allowed.
        public static let timedOut = Code("time")
        /// The server cannot serve byte ranges, so the stream cannot seek there.
        public static let rangeNotSupported = Code("rng?")

        static let names: [Code: String] = [
            .unsupportedFileType: "unsupported file type",
            .unsupportedDataFormat: "unsupported data format",
            .unsupportedProperty: "unsupported property",
            .badPropertySize: "bad property size",
            .notOptimized: "not optimized",
            .invalidPacketOffset: "invalid packet offset",
            .invalidFile: "invalid file",
            .valueUnknown: "value unknown",
            .dataUnavailable: "data unavailable",
            .illegalOperation: "illegal operation",
            .unspecified: "unspecified error",
            .discontinuityCantRecover: "discontinuity can't recover",
            .permissions: "permissions",
            .invalidChunk: "invalid chunk",
            .doesNotAllow64BitDataSize: "does not allow 64-bit data size",
            .invalidPacketDependency: "invalid packet dependency",
            .operationNotSupported: "operation not supported",
            .notOpen: "not open",
            .endOfFile: "end of file",
            .position: "position",
            .fileNotFound: "file not found",
            .parameter: "parameter error",
            .invalidInputSize: "invalid input size",
            .invalidOutputSize: "invalid output size",
            .propertyNotSupported: "property not supported",
            .requiresPacketDescriptions: "requires packet descriptions",
            .inputSampleRateOutOfRange: "input sample rate out of range",
            .outputSampleRateOutOfRange: "output sample rate out of range",
            .codecUnsupportedFormat: "codec: unsupported format",
            .codecState: "codec: bad state",
            .codecBadData: "codec: bad data",
            .invalidChannelMap: "invalid channel map",
            .badDevice: "bad device",
            .hardwareNotRunning: "hardware not running",
            .uninitialized: "uninitialized",
            .formatNotSupported: "format not supported",
            .invalidBuffer: "invalid buffer",
            .bufferEmpty: "buffer empty",
            .invalidRunState: "invalid run state",
            .cannotStart: "cannot start",
            .propertyNotWritable: "property not writable",
            .cannotDoInCurrentContext: "cannot do in current context",
            .httpStatus: "HTTP error",
            .network: "network error",
            .timedOut: "timed out",
            .rangeNotSupported: "range not supported",
        ]
    }

    /// What kind of failure this is, for callers that react by kind rather than by code.
    public enum Category: String, Sendable, Hashable {
        /// The bytes break the format's rules.
        case malformed
        /// Valid, but Tonearm cannot handle it (yet).
        case unsupported
        /// A header asked for more than a documented bound allows.
        case limit
        /// The operating system failed a read, write or open.
        case io
        /// A seek or packet offset is out of range.
        case seek
        /// The caller must reset or reopen before going on.
        case resetRequired
        /// The caller used the API in a way it does not allow.
        case usage
    }

    public var code: Code
    public var message: String
    public var category: Category

    public init(_ code: Code, _ message: String, category: Category? = nil) {
        self.code = code
        self.message = message
        self.category = category ?? AudioError.defaultCategory(for: code)
    }

    static func defaultCategory(for code: Code) -> Category {
        switch code {
        case .unsupportedFileType, .unsupportedDataFormat, .unsupportedProperty, .notOptimized,
             .doesNotAllow64BitDataSize:
            return .unsupported
        case .invalidPacketOffset, .endOfFile, .position: return .seek
        case .discontinuityCantRecover: return .resetRequired
        case .illegalOperation, .badPropertySize, .valueUnknown, .notOpen, .parameter: return .usage
        case .permissions, .fileNotFound, .badDevice, .hardwareNotRunning, .cannotStart: return .io
        case .httpStatus, .network, .timedOut: return .io
        case .rangeNotSupported: return .unsupported
        case .uninitialized, .invalidBuffer, .bufferEmpty, .invalidRunState, .invalidChannelMap: return .usage
        case .propertyNotWritable, .cannotDoInCurrentContext: return .usage
        case .formatNotSupported: return .unsupported
        default: return .malformed
        }
    }

    /// `message ('typ?')`, the form the CLI prints.
    public var description: String { "\(message) (\(code.codeString))" }

    // Shorthands used by parsers.
    public static func malformed(_ message: String) -> AudioError { AudioError(.invalidFile, message) }
    public static func limit(_ message: String) -> AudioError {
        AudioError(.invalidFile, message, category: .limit)
    }
    public static func unsupportedFormat(_ message: String) -> AudioError {
        AudioError(.unsupportedDataFormat, message)
    }
}

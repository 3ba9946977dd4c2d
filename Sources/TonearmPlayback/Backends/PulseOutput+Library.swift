// Every libpulse call the PulseAudio backend makes, looked up once: the simple API
// (libpulse-simple.so.0) plays, the asynchronous API (libpulse.so.0) lists the sinks. Types
// mirror <pulse/simple.h>, <pulse/mainloop.h>, <pulse/context.h> and <pulse/introspect.h>:
// objects are opaque pointers, enums are ints, size_t is Int, pa_usec_t is UInt64. Structs
// (pa_sample_spec, pa_buffer_attr, pa_sink_info, pa_server_info) pass as raw pointers; their
// layout is spelled out where they are built or read.
import TonearmCore

/// The libpulse functions, resolved with `dlsym`. Only `PulseOutput*.swift` calls them.
struct PulseLibrary: @unchecked Sendable {
    typealias Object = OpaquePointer
    /// pa_server_info_cb_t: (context, const pa_server_info*, userdata)
    typealias ServerInfoCallback = @convention(c) (Object?, UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Void
    /// pa_sink_info_cb_t: (context, const pa_sink_info*, eol, userdata)
    typealias SinkInfoCallback = @convention(c) (Object?, UnsafeRawPointer?, Int32, UnsafeMutableRawPointer?) -> Void

    // libpulse-simple.so.0
    /// pa_simple_new(server, app name, direction, device, stream name, &sample_spec, &channel_map,
    /// &buffer_attr, &error)
    let simpleNew: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>?,
                                   UnsafePointer<CChar>, UnsafeRawPointer, UnsafeRawPointer?, UnsafeRawPointer?,
                                   UnsafeMutablePointer<Int32>?) -> Object?
    let simpleWrite: @convention(c) (Object, UnsafeRawPointer, Int, UnsafeMutablePointer<Int32>?) -> Int32
    let simpleDrain: @convention(c) (Object, UnsafeMutablePointer<Int32>?) -> Int32
    let simpleFlush: @convention(c) (Object, UnsafeMutablePointer<Int32>?) -> Int32
    let simpleGetLatency: @convention(c) (Object, UnsafeMutablePointer<Int32>?) -> UInt64
    let simpleFree: @convention(c) (Object) -> Void

    // libpulse.so.0
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let mainloopNew: @convention(c) () -> Object?
    let mainloopGetAPI: @convention(c) (Object) -> UnsafeMutableRawPointer?
    /// pa_mainloop_prepare(m, timeout µs): bounds the next poll.
    let mainloopPrepare: @convention(c) (Object, Int32) -> Int32
    let mainloopPoll: @convention(c) (Object) -> Int32
    let mainloopDispatch: @convention(c) (Object) -> Int32
    let mainloopFree: @convention(c) (Object) -> Void
    let contextNew: @convention(c) (UnsafeMutableRawPointer, UnsafePointer<CChar>) -> Object?
    /// pa_context_connect(c, server, flags, spawn api)
    let contextConnect: @convention(c) (Object, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?) -> Int32
    let contextGetState: @convention(c) (Object) -> Int32
    let contextErrno: @convention(c) (Object) -> Int32
    let contextDisconnect: @convention(c) (Object) -> Void
    let contextUnref: @convention(c) (Object) -> Void
    let contextGetServerInfo: @convention(c) (Object, ServerInfoCallback, UnsafeMutableRawPointer?) -> Object?
    let contextGetSinkInfoList: @convention(c) (Object, SinkInfoCallback, UnsafeMutableRawPointer?) -> Object?
    let operationGetState: @convention(c) (Object) -> Int32
    let operationUnref: @convention(c) (Object) -> Void

    static let simpleFileName = "libpulse-simple.so.0"
    static let fileName = "libpulse.so.0"

    /// The libraries, loaded on first use (Swift initializes statics once, thread-safely).
    static func load() throws(AudioError) -> PulseLibrary {
        try loaded.get()
    }

    private static let loaded: Result<PulseLibrary, AudioError> = {
        guard let simple = DynamicLibrary(simpleFileName, missingSymbol: .badDevice), let pulse = DynamicLibrary(fileName, missingSymbol: .badDevice) else {
            return .failure(AudioError(.badDevice, "\(simpleFileName) is not installed (apt-get install libpulse0)"))
        }
        do throws(AudioError) {
            return .success(try PulseLibrary(simple: simple, pulse: pulse))
        } catch {
            return .failure(error)
        }
    }()

    /// pa_strerror's text for an error code.
    func message(_ code: Int32) -> String {
        String(cLibraryString: strerror(code), fallback: "error \(code)")
    }
}

extension PulseLibrary {
    // In an extension, so the struct keeps its memberwise initializer for tests' fakes.
    fileprivate init(simple: DynamicLibrary, pulse: DynamicLibrary) throws(AudioError) {
        simpleNew = try simple.function("pa_simple_new")
        simpleWrite = try simple.function("pa_simple_write")
        simpleDrain = try simple.function("pa_simple_drain")
        simpleFlush = try simple.function("pa_simple_flush")
        simpleGetLatency = try simple.function("pa_simple_get_latency")
        simpleFree = try simple.function("pa_simple_free")
        strerror = try pulse.function("pa_strerror")
        mainloopNew = try pulse.function("pa_mainloop_new")
        mainloopGetAPI = try pulse.function("pa_mainloop_get_api")
        mainloopPrepare = try pulse.function("pa_mainloop_prepare")
        mainloopPoll = try pulse.function("pa_mainloop_poll")
        mainloopDispatch = try pulse.function("pa_mainloop_dispatch")
        mainloopFree = try pulse.function("pa_mainloop_free")
        contextNew = try pulse.function("pa_context_new")
        contextConnect = try pulse.function("pa_context_connect")
        contextGetState = try pulse.function("pa_context_get_state")
        contextErrno = try pulse.function("pa_context_errno")
        contextDisconnect = try pulse.function("pa_context_disconnect")
        contextUnref = try pulse.function("pa_context_unref")
        contextGetServerInfo = try pulse.function("pa_context_get_server_info")
        contextGetSinkInfoList = try pulse.function("pa_context_get_sink_info_list")
        operationGetState = try pulse.function("pa_operation_get_state")
        operationUnref = try pulse.function("pa_operation_unref")
    }
}

/// libpulse's constants, as its headers number them.
enum PulseConstant {
    static let streamPlayback: Int32 = 1                // PA_STREAM_PLAYBACK
    #if _endian(big)
    static let sampleS16: UInt32 = 4                    // PA_SAMPLE_S16BE
    static let sampleFloat32: UInt32 = 6                // PA_SAMPLE_FLOAT32BE
    static let sampleS32: UInt32 = 8                    // PA_SAMPLE_S32BE
    #else
    static let sampleS16: UInt32 = 3                    // PA_SAMPLE_S16LE
    static let sampleFloat32: UInt32 = 5                // PA_SAMPLE_FLOAT32LE
    static let sampleS32: UInt32 = 7                    // PA_SAMPLE_S32LE
    #endif
    static let contextNoAutospawn: Int32 = 1            // PA_CONTEXT_NOAUTOSPAWN
    static let contextReady: Int32 = 4                  // PA_CONTEXT_READY
    static let contextFailed: Int32 = 5                 // PA_CONTEXT_FAILED
    static let contextTerminated: Int32 = 6             // PA_CONTEXT_TERMINATED
    static let operationRunning: Int32 = 0              // PA_OPERATION_RUNNING
}

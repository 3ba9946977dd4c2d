// Every alsa-lib call the ALSA backend makes, looked up once in libasound.so.2. The types
// mirror <alsa/asoundlib.h>: snd_pcm_t* is opaque, snd_pcm_uframes_t and snd_pcm_sframes_t are
// unsigned long and long, enums are ints.
import TonearmCore

/// The alsa-lib functions, resolved with `dlsym`. Only `ALSAOutput*.swift` calls them.
struct ALSALibrary: @unchecked Sendable {
    typealias PCM = OpaquePointer

    let pcmOpen: @convention(c) (UnsafeMutablePointer<PCM?>, UnsafePointer<CChar>, Int32, Int32) -> Int32
    /// snd_pcm_set_params(pcm, format, access, channels, rate, soft_resample, latency µs)
    let pcmSetParams: @convention(c) (PCM, Int32, Int32, UInt32, UInt32, Int32, UInt32) -> Int32
    /// snd_pcm_get_params(pcm, &buffer_size, &period_size)
    let pcmGetParams: @convention(c) (PCM, UnsafeMutablePointer<UInt>, UnsafeMutablePointer<UInt>) -> Int32
    let pcmWritei: @convention(c) (PCM, UnsafeRawPointer, UInt) -> Int
    let pcmRecover: @convention(c) (PCM, Int32, Int32) -> Int32
    let pcmPrepare: @convention(c) (PCM) -> Int32
    let pcmDrain: @convention(c) (PCM) -> Int32
    let pcmDrop: @convention(c) (PCM) -> Int32
    let pcmClose: @convention(c) (PCM) -> Int32
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    /// snd_device_name_hint(card, iface, &hints): a NULL-terminated array of hints.
    let deviceNameHint: @convention(c) (Int32, UnsafePointer<CChar>,
                                        UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutableRawPointer?>?>) -> Int32
    /// snd_device_name_get_hint(hint, id): a malloc'ed string the caller frees, or NULL.
    let deviceNameGetHint: @convention(c) (UnsafeRawPointer, UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>?
    let deviceNameFreeHint: @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Int32

    static let fileName = "libasound.so.2"

    /// The library, loaded on first use (Swift initializes statics once, thread-safely).
    static func load() throws(AudioError) -> ALSALibrary {
        try loaded.get()
    }

    private static let loaded: Result<ALSALibrary, AudioError> = {
        guard let lib = DynamicLibrary(fileName, missingSymbol: .badDevice) else {
            return .failure(AudioError(.badDevice, "\(fileName) is not installed (apt-get install libasound2)"))
        }
        // alsa-lib prints its own "ALSA lib …" lines on stderr for every failure; Tonearm's
        // errors already carry snd_strerror's text, so a handler that prints nothing goes in.
        typealias ErrorHandler = @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, Int32,
                                                 UnsafePointer<CChar>?) -> Void
        if let setHandler = try? lib.function("snd_lib_error_set_handler", as: (@convention(c) (ErrorHandler?) -> Int32).self) {
            _ = setHandler { _, _, _, _, _ in }
        }
        do throws(AudioError) {
            return .success(try ALSALibrary(lib))
        } catch {
            return .failure(error)
        }
    }()

    /// snd_strerror's text for a negative error code.
    func message(_ code: Int32) -> String {
        String(cLibraryString: strerror(code), fallback: "error \(code)")
    }
}

extension ALSALibrary {
    // In an extension, so the struct keeps its memberwise initializer: tests build a table of
    // fake functions with it.
    fileprivate init(_ lib: DynamicLibrary) throws(AudioError) {
        pcmOpen = try lib.function("snd_pcm_open")
        pcmSetParams = try lib.function("snd_pcm_set_params")
        pcmGetParams = try lib.function("snd_pcm_get_params")
        pcmWritei = try lib.function("snd_pcm_writei")
        pcmRecover = try lib.function("snd_pcm_recover")
        pcmPrepare = try lib.function("snd_pcm_prepare")
        pcmDrain = try lib.function("snd_pcm_drain")
        pcmDrop = try lib.function("snd_pcm_drop")
        pcmClose = try lib.function("snd_pcm_close")
        strerror = try lib.function("snd_strerror")
        deviceNameHint = try lib.function("snd_device_name_hint")
        deviceNameGetHint = try lib.function("snd_device_name_get_hint")
        deviceNameFreeHint = try lib.function("snd_device_name_free_hint")
    }
}

/// alsa-lib's constants, as <alsa/pcm.h> numbers them.
enum ALSAConstant {
    static let streamPlayback: Int32 = 0                // SND_PCM_STREAM_PLAYBACK
    static let accessRWInterleaved: Int32 = 3           // SND_PCM_ACCESS_RW_INTERLEAVED
    #if _endian(big)
    static let formatS16: Int32 = 3                     // SND_PCM_FORMAT_S16_BE
    static let formatS32: Int32 = 11                    // SND_PCM_FORMAT_S32_BE
    static let formatFloat: Int32 = 15                  // SND_PCM_FORMAT_FLOAT_BE
    #else
    static let formatS16: Int32 = 2                     // SND_PCM_FORMAT_S16_LE
    static let formatS32: Int32 = 10                    // SND_PCM_FORMAT_S32_LE
    static let formatFloat: Int32 = 14                  // SND_PCM_FORMAT_FLOAT_LE
    #endif
    // Linux errno values, as alsa-lib returns them negated (alsa-lib exists only there).
    static let EINTR: Int32 = 4
    static let EPIPE: Int32 = 32                        // an underrun
    static let ESTRPIPE: Int32 = 86                     // the system suspended the device
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// ALSA, the Linux kernel's sound interface, through alsa-lib (`libasound.so.2`) loaded at run
/// time: the build needs no ALSA headers and runs where the library is missing (opening then
/// throws '!dev' and says so).
///
/// The device is an ALSA PCM name (`default`, `hw:0,0`, `plughw:1`, or one an `.asoundrc`
/// defines); nil opens `default`. ALSA converts the rate if the hardware cannot take it. When
/// the device refuses the sample type asked for, the backend tries Float32, Int32 and Int16 in
/// turn and the stream's `format` reports the one it opened.
public struct ALSAOutputBackend: AudioOutputBackend {
    public let name = "alsa"

    public init() {}

    /// The PCMs alsa-lib's name hints list for output, `default` first (it is always there,
    /// even when no hint names it).
    public func devices() throws(AudioError) -> [AudioOutputDevice] {
        let lib = try ALSALibrary.load()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        let err = lib.deviceNameHint(-1, "pcm", &hints)
        guard err >= 0, let hints else {
            throw AudioError(.badDevice, "ALSA: cannot list the PCM devices: \(lib.message(err))")
        }
        defer { _ = lib.deviceNameFreeHint(hints) }
        func hint(_ h: UnsafeMutableRawPointer, _ id: String) -> String? {
            guard let s = lib.deviceNameGetHint(h, id) else { return nil }
            defer { free(s) }
            return String(cString: s)
        }
        var devices: [AudioOutputDevice] = []
        var i = 0
        while let h = hints[i] {
            i += 1
            if let io = hint(h, "IOID"), io != "Output" { continue }
            guard let name = hint(h, "NAME"), !name.isEmpty else { continue }
            let description = hint(h, "DESC").map { String($0.split(separator: "\n", maxSplits: 1).first ?? "") } ?? ""
            guard !devices.contains(where: { $0.name == name }) else { continue }
            devices.append(AudioOutputDevice(name: name, description: description, isDefault: name == "default"))
        }
        if !devices.contains(where: { $0.name == "default" }) {
            devices.insert(AudioOutputDevice(name: "default", description: "Default ALSA output", isDefault: true), at: 0)
        }
        return devices
    }

    public func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        let device = try OutputFormat.deviceFormat(for: format)
        let writer = try ALSAWriter(lib: try ALSALibrary.load(), device: options.device ?? "default",
                                    format: device, latency: boundedLatency(options.latency))
        return WriterOutputStream(writer: writer, periodFrames: options.period(at: device.sampleRate))
    }
}

/// An open ALSA PCM, written with blocking `snd_pcm_writei`.
final class ALSAWriter: BlockingPCMWriter {
    let format: StreamDescription
    let latencyFrames: Int
    let isRealtime = true
    /// The device name it opened.
    let device: String
    /// Underruns (and suspends) recovered from while writing.
    var xruns: Int { xrunCount.value }

    private let lib: ALSALibrary
    private var pcm: ALSALibrary.PCM?
    private let xrunCount = AtomicCounter()
    private let bytesPerFrame: Int

    init(lib: ALSALibrary, device: String, format asked: StreamDescription, latency: Double) throws(AudioError) {
        self.lib = lib
        self.device = device
        var handle: ALSALibrary.PCM?
        let err = lib.pcmOpen(&handle, device, ALSAConstant.streamPlayback, 0)
        guard err >= 0, let pcm = handle else {
            throw AudioError(.badDevice, "ALSA: cannot open device '\(device)': \(lib.message(err))")
        }
        // The asked sample type first, then the others from the richest down.
        let askedType = PCMBuffer.commonFormat(of: asked) ?? .float32
        let candidates = [askedType] + [PCMBuffer.CommonFormat.float32, .int32, .int16].filter { $0 != askedType }
        let micros = UInt32(latency * 1_000_000)
        var opened: PCMBuffer.CommonFormat?
        var lastError: Int32 = 0
        for type in candidates {
            lastError = lib.pcmSetParams(pcm, Self.alsaFormat(type), ALSAConstant.accessRWInterleaved,
                                         asked.channelsPerFrame, UInt32(asked.sampleRate), 1, micros)
            if lastError >= 0 { opened = type; break }
        }
        guard let opened else {
            _ = lib.pcmClose(pcm)
            throw AudioError(.badDevice, "ALSA: device '\(device)' takes none of Float32, Int32 or Int16 at "
                             + "\(Int(asked.sampleRate)) Hz, \(asked.channelsPerFrame) channels: \(lib.message(lastError))")
        }
        var bufferSize: UInt = 0
        var periodSize: UInt = 0
        let got = lib.pcmGetParams(pcm, &bufferSize, &periodSize)
        latencyFrames = got >= 0 ? Int(clamping: bufferSize) : Int(asked.sampleRate * latency)
        format = OutputFormat.interleaved(opened, like: asked)
        bytesPerFrame = Int(format.bytesPerFrame)
        self.pcm = pcm
    }

    deinit { close() }

    static func alsaFormat(_ type: PCMBuffer.CommonFormat) -> Int32 {
        switch type {
        case .int16: ALSAConstant.formatS16
        case .int32: ALSAConstant.formatS32
        case .float32: ALSAConstant.formatFloat
        }
    }

    func write(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioError) {
        guard let pcm else { throw AudioError(.hardwareNotRunning, "ALSA: the device '\(device)' is closed") }
        var done = 0
        var idle = 0
        while done < frames {
            let n = lib.pcmWritei(pcm, bytes + done * bytesPerFrame, UInt(frames - done))
            if n > 0 {
                done += n
                idle = 0
                continue
            }
            if n == 0 {
                // A blocking PCM never takes nothing; give up rather than spin if one does.
                idle += 1
                if idle < 100 { continue }
                throw AudioError(.hardwareNotRunning, "ALSA: the device '\(device)' takes no more frames")
            }
            let err = Int32(clamping: n)
            if err == -ALSAConstant.EPIPE || err == -ALSAConstant.ESTRPIPE || err == -ALSAConstant.EINTR {
                if err != -ALSAConstant.EINTR { xrunCount.add(1) }
                let r = lib.pcmRecover(pcm, err, 1)
                if r >= 0 { continue }
                throw AudioError(.hardwareNotRunning, "ALSA: \(lib.message(r))")
            }
            throw AudioError(.hardwareNotRunning, "ALSA: \(lib.message(err))")
        }
    }

    // snd_pcm_drain and snd_pcm_drop leave the PCM stopped (SETUP state); prepare it again so
    // the stream can restart after a stop.
    func drain() {
        guard let pcm else { return }
        _ = lib.pcmDrain(pcm)
        _ = lib.pcmPrepare(pcm)
    }

    func discard() {
        guard let pcm else { return }
        _ = lib.pcmDrop(pcm)
        _ = lib.pcmPrepare(pcm)
    }

    func close() {
        guard let pcm else { return }
        self.pcm = nil
        _ = lib.pcmClose(pcm)
    }
}

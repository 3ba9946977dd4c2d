#if canImport(AudioToolbox)
import AudioToolbox
import CoreAudioTypes
#if os(macOS)
import CoreAudio
import CoreFoundation
#endif
import Darwin
import Synchronization
import TonearmCore

// Tonearm's own `AudioBufferList`, `AudioTimeStamp` and `AudioStreamBasicDescription` shadow
// Core Audio's in this module, so Core Audio's types are spelled `CoreAudioTypes.…` here.

/// Core Audio on Apple platforms: an output audio unit that pulls audio through a render
/// callback, `DefaultOutput` on macOS (`HALOutput` when a device is named) and `RemoteIO` on
/// iOS, tvOS and visionOS. watchOS has no output units: opening throws '!dev' there.
///
/// The unit takes the stream's interleaved format as it is and converts to the hardware
/// itself. On macOS `devices()` lists the output devices by name (the default one marked) and
/// `options.device` picks one by that name; elsewhere there is only the system's route.
public struct CoreAudioOutputBackend: AudioOutputBackend {
    public let name = "coreaudio"

    public init() {}

    public func devices() throws(AudioError) -> [AudioOutputDevice] {
        #if os(macOS)
        let defaultID = CoreAudioDevices.defaultOutput()
        return try CoreAudioDevices.outputDevices().map {
            AudioOutputDevice(name: $0.name, description: "\($0.name) (Core Audio device \($0.id))",
                              isDefault: $0.id == defaultID)
        }
        #else
        return [AudioOutputDevice(name: "default", description: "The system's audio route", isDefault: true)]
        #endif
    }

    public func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        #if os(watchOS)
        throw AudioError(.badDevice, "Core Audio: watchOS has no output audio units")
        #else
        let device = try OutputFormat.deviceFormat(for: format)
        return try CoreAudioOutputStream(format: device, options: options)
        #endif
    }
}

#if !os(watchOS)

/// An output unit and its render callback. Core Audio calls the callback on its own real-time
/// thread with the frame count it wants; the callback hands that to the render block in pieces
/// of at most `periodFrames`, so the client's buffers (sized for a period) always suffice.
final class CoreAudioOutputStream: AudioOutputStream, @unchecked Sendable {
    let format: StreamDescription
    let periodFrames: Int
    private(set) var latencyFrames: Int
    let isRealtime = true
    var framesPlayed: Int64 { max(0, Int64(rendered.load(ordering: .acquiring)) - Int64(latencyFrames)) }

    private let unit: AudioUnit
    private let bytesPerFrame: Int
    // Set by `start` while the unit is stopped, read by the callback.
    private var render: DeviceRenderBlock?
    private var onEnd: ((AudioError?) -> Void)?
    private let rendered = Atomic<Int>(0)
    /// What the callback does: render, play silence until the device has drained, or nothing.
    private let phase = Atomic<Int>(Phase.stopped)
    private let drainLeft = Atomic<Int>(0)
    /// The render block returned false (it ends, or it called `stop`): `onEnd` runs once the
    /// device has drained, or at once after a stop without drain.
    private let endedByItself = Atomic<Bool>(false)
    /// The callback's thread while it runs (0 otherwise), so `stop` can tell it is called from it.
    private let callbackThread = Atomic<Int>(0)

    private enum Phase {
        static let stopped = 0, rendering = 1, draining = 2, stopping = 3
    }

    init(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) {
        guard let common = PCMBuffer.commonFormat(of: format), format.isInterleaved else {
            throw AudioError(.unsupportedDataFormat, "Core Audio output takes interleaved Int16, Int32 or Float32")
        }
        let unit = try Self.makeUnit(device: options.device)
        var asbd = CoreAudioTypes.AudioStreamBasicDescription(
            mSampleRate: format.sampleRate, mFormatID: kAudioFormatLinearPCM,
            mFormatFlags: (common == .float32 ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger)
                | kAudioFormatFlagIsPacked,
            mBytesPerPacket: format.bytesPerFrame, mFramesPerPacket: 1, mBytesPerFrame: format.bytesPerFrame,
            mChannelsPerFrame: format.channelsPerFrame, mBitsPerChannel: UInt32(common.bytesPerSample * 8),
            mReserved: 0)
        let status = AudioUnitSetProperty(unit, kAudioUnitProperty_StreamFormat, kAudioUnitScope_Input, 0, &asbd,
                                          UInt32(MemoryLayout<CoreAudioTypes.AudioStreamBasicDescription>.size))
        if status != 0 {
            AudioComponentInstanceDispose(unit)
            throw Self.error(status, "the output unit does not take \(format)")
        }
        self.unit = unit
        self.format = format
        bytesPerFrame = Int(format.bytesPerFrame)
        periodFrames = options.period(at: format.sampleRate)
        latencyFrames = max(0, Int(format.sampleRate * options.latency))

        // From here on deinit disposes of the unit if anything throws.
        var callback = AURenderCallbackStruct(
            inputProc: { refCon, flags, _, _, frameCount, data in
                Unmanaged<CoreAudioOutputStream>.fromOpaque(refCon).takeUnretainedValue()
                    .renderCycle(frames: Int(frameCount), data: data, flags: flags)
                return 0
            },
            inputProcRefCon: Unmanaged.passUnretained(self).toOpaque())
        try Self.check(AudioUnitSetProperty(unit, kAudioUnitProperty_SetRenderCallback, kAudioUnitScope_Input, 0,
                                            &callback, UInt32(MemoryLayout<AURenderCallbackStruct>.size)),
                       "setting the render callback")
        try Self.check(AudioUnitInitialize(unit), "initializing the output unit")
        #if os(macOS)
        if let frames = CoreAudioDevices.latencyFrames(of: unit, at: format.sampleRate) { latencyFrames = frames }
        #endif
    }

    deinit {
        stop(drain: false)
        AudioUnitUninitialize(unit)
        AudioComponentInstanceDispose(unit)
    }

    func start(render: @escaping DeviceRenderBlock, onEnd: @escaping (AudioError?) -> Void) throws(AudioError) {
        guard phase.load(ordering: .acquiring) == Phase.stopped else { return }
        // A stream that ended by itself stopped the unit from the callback's thread; stopping
        // again from here waits until that callback has returned, so the block can be replaced.
        AudioOutputUnitStop(unit)
        self.render = render
        self.onEnd = onEnd
        endedByItself.store(false, ordering: .relaxed)
        phase.store(Phase.rendering, ordering: .releasing)
        let status = AudioOutputUnitStart(unit)
        if status != 0 {
            phase.store(Phase.stopped, ordering: .releasing)
            throw Self.error(status, "the output unit did not start", code: .cannotStart)
        }
    }

    func stop(drain: Bool) {
        let onCallbackThread = callbackThread.load(ordering: .acquiring) == Self.currentThread
        if onCallbackThread {
            // From the render block: the callback stops the unit once the block returns.
            guard phase.load(ordering: .acquiring) == Phase.rendering else { return }
            if drain { startDraining() } else { phase.store(Phase.stopping, ordering: .releasing) }
            return
        }
        let current = phase.load(ordering: .acquiring)
        // A stream that ended by itself already chose to drain; a later stop only waits for it.
        let playing = current == Phase.rendering || current == Phase.draining
        if playing && (drain || endedByItself.load(ordering: .relaxed)) {
            if current == Phase.rendering { startDraining() }
            // Silence plays while the device empties; give it its latency and a little more.
            let deadline = Clock.nanoseconds + UInt64((Double(latencyFrames) / format.sampleRate + 0.5) * 1e9)
            while phase.load(ordering: .acquiring) == Phase.draining && Clock.nanoseconds < deadline {
                Clock.sleep(seconds: 0.005)
            }
        }
        if phase.load(ordering: .acquiring) != Phase.stopped { phase.store(Phase.stopping, ordering: .releasing) }
        // Synchronous from any thread but the callback's: no callback runs after it returns, not
        // even the one that stopped the unit itself, so the caller may free what the block uses.
        AudioOutputUnitStop(unit)
        phase.store(Phase.stopped, ordering: .releasing)
    }

    private func startDraining() {
        drainLeft.store(latencyFrames, ordering: .relaxed)
        phase.store(Phase.draining, ordering: .releasing)
    }

    /// One call of the unit's render callback, on Core Audio's real-time thread.
    private func renderCycle(frames: Int, data: UnsafeMutablePointer<CoreAudioTypes.AudioBufferList>?,
                             flags: UnsafeMutablePointer<AudioUnitRenderActionFlags>)
    {
        // Interleaved: one buffer.
        guard let data, data.pointee.mNumberBuffers >= 1, let out = data.pointee.mBuffers.mData else { return }
        let byteCount = Int(data.pointee.mBuffers.mDataByteSize)
        let capacity = min(frames, byteCount / bytesPerFrame)
        callbackThread.store(Self.currentThread, ordering: .releasing)
        var done = 0
        if phase.load(ordering: .acquiring) == Phase.rendering, let render {
            while done < capacity {
                let n = min(periodFrames, capacity - done)
                let more = render(n, out + done * bytesPerFrame, Int64(rendered.load(ordering: .relaxed)))
                rendered.wrappingAdd(n, ordering: .releasing)
                done += n
                if !more {
                    // The stream ends: drain, unless the block stopped it without draining.
                    endedByItself.store(true, ordering: .relaxed)
                    if phase.load(ordering: .acquiring) == Phase.rendering { startDraining() }
                    break
                }
                if phase.load(ordering: .acquiring) != Phase.rendering { break }    // the block called stop
            }
        }
        callbackThread.store(0, ordering: .releasing)
        if done * bytesPerFrame < byteCount {
            (out + done * bytesPerFrame).initializeMemory(as: UInt8.self, repeating: 0,
                                                          count: byteCount - done * bytesPerFrame)
        }
        if done == 0 { flags.pointee.insert(.unitRenderAction_OutputIsSilence) }

        switch phase.load(ordering: .acquiring) {
        case Phase.draining:
            // This cycle's silence (or its last frames) counts toward the drain.
            let left = drainLeft.wrappingSubtract(capacity, ordering: .relaxed).newValue
            guard left <= 0 else { return }
            fallthrough
        case Phase.stopping:
            phase.store(Phase.stopped, ordering: .releasing)
            AudioOutputUnitStop(unit)     // from the callback's thread: takes effect after this cycle
            if endedByItself.load(ordering: .relaxed) { onEnd?(nil) }
        default:
            break
        }
    }

    private static var currentThread: Int { Int(bitPattern: pthread_self()) }

    /// Finds and opens the output unit: the default output or, on macOS, the named device.
    private static func makeUnit(device: String?) throws(AudioError) -> AudioUnit {
        #if os(macOS)
        // DefaultOutput follows the system's default device; a chosen device needs HALOutput.
        let subType = device == nil ? kAudioUnitSubType_DefaultOutput : kAudioUnitSubType_HALOutput
        #else
        let subType = kAudioUnitSubType_RemoteIO
        #endif
        var description = AudioComponentDescription(componentType: kAudioUnitType_Output, componentSubType: subType,
                                                    componentManufacturer: kAudioUnitManufacturer_Apple,
                                                    componentFlags: 0, componentFlagsMask: 0)
        guard let component = AudioComponentFindNext(nil, &description) else {
            throw AudioError(.badDevice, "Core Audio: no output audio unit")
        }
        var instance: AudioComponentInstance?
        let status = AudioComponentInstanceNew(component, &instance)
        guard status == 0, let unit = instance else { throw error(status, "cannot open the output unit") }
        #if os(macOS)
        if let device {
            do throws(AudioError) {
                var id = try CoreAudioDevices.outputDevice(named: device)
                try check(AudioUnitSetProperty(unit, kAudioOutputUnitProperty_CurrentDevice, kAudioUnitScope_Global, 0,
                                               &id, UInt32(MemoryLayout<AudioDeviceID>.size)),
                          "cannot play to '\(device)'")
            } catch {
                AudioComponentInstanceDispose(unit)
                throw error
            }
        }
        #endif
        return unit
    }

    fileprivate static func check(_ status: OSStatus, _ what: String) throws(AudioError) {
        if status != 0 { throw error(status, what) }
    }

    /// Core Audio's status as the code ('fmt?', -10868…), as Apple's API would return it.
    fileprivate static func error(_ status: OSStatus, _ what: String,
                                  code: AudioError.Code? = nil) -> AudioError
    {
        let osStatus = AudioError.Code(rawValue: status)
        return AudioError(code ?? osStatus, "Core Audio: \(what) (OSStatus \(osStatus.codeString))", category: .io)
    }
}

#endif

#if os(macOS)

/// The HAL's device list, names and latencies (macOS only).
enum CoreAudioDevices {
    struct Device {
        let id: AudioDeviceID
        let name: String
    }

    /// Every device with at least one output stream.
    static func outputDevices() throws(AudioError) -> [Device] {
        let system = AudioObjectID(kAudioObjectSystemObject)
        var address = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDevices,
                                                 mScope: kAudioObjectPropertyScopeGlobal,
                                                 mElement: kAudioObjectPropertyElementMain)
        var size: UInt32 = 0
        var status = AudioObjectGetPropertyDataSize(system, &address, 0, nil, &size)
        let count = min(Int(size) / MemoryLayout<AudioDeviceID>.size, 1024)
        var ids = [AudioDeviceID](repeating: 0, count: count)
        size = UInt32(count * MemoryLayout<AudioDeviceID>.size)
        if status == 0 && count > 0 { status = AudioObjectGetPropertyData(system, &address, 0, nil, &size, &ids) }
        guard status == 0 else {
            throw CoreAudioOutputStream.error(status, "cannot list the audio devices", code: .badDevice)
        }
        return ids.prefix(Int(size) / MemoryLayout<AudioDeviceID>.size).compactMap { id in
            guard hasOutput(id) else { return nil }
            return Device(id: id, name: name(of: id) ?? "device \(id)")
        }
    }

    /// The system's default output device.
    static func defaultOutput() -> AudioDeviceID? {
        value(of: AudioObjectID(kAudioObjectSystemObject), kAudioHardwarePropertyDefaultOutputDevice,
              initial: AudioDeviceID(0))
    }

    /// The output device called `name`; '!dev' naming the devices there are otherwise.
    static func outputDevice(named name: String) throws(AudioError) -> AudioDeviceID {
        let devices = try outputDevices()
        guard let device = devices.first(where: { $0.name == name }) else {
            throw AudioError(.badDevice, "Core Audio: no output device named '\(name)' (there are: "
                + devices.map { "'\($0.name)'" }.joined(separator: ", ") + ")")
        }
        return device.id
    }

    /// Frames between the render callback and the speaker at `rate`: the device's latency,
    /// safety offset and buffer, which are counted at the device's own rate.
    static func latencyFrames(of unit: AudioUnit, at rate: Double) -> Int? {
        var device = AudioDeviceID(0)
        var size = UInt32(MemoryLayout<AudioDeviceID>.size)
        guard AudioUnitGetProperty(unit, kAudioOutputUnitProperty_CurrentDevice, kAudioUnitScope_Global, 0,
                                   &device, &size) == 0,
            let latency = value(of: device, kAudioDevicePropertyLatency, scope: kAudioObjectPropertyScopeOutput,
                                initial: UInt32(0)),
            let buffer = value(of: device, kAudioDevicePropertyBufferFrameSize, initial: UInt32(0)),
            let deviceRate = value(of: device, kAudioDevicePropertyNominalSampleRate, initial: Float64(0)),
            deviceRate > 0
        else { return nil }
        let safety = value(of: device, kAudioDevicePropertySafetyOffset, scope: kAudioObjectPropertyScopeOutput,
                           initial: UInt32(0)) ?? 0
        return Int((Double(latency) + Double(safety) + Double(buffer)) * rate / deviceRate)
    }

    private static func hasOutput(_ id: AudioDeviceID) -> Bool {
        var address = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyStreams,
                                                 mScope: kAudioObjectPropertyScopeOutput,
                                                 mElement: kAudioObjectPropertyElementMain)
        var size: UInt32 = 0
        return AudioObjectGetPropertyDataSize(id, &address, 0, nil, &size) == 0 && size > 0
    }

    private static func name(of id: AudioObjectID) -> String? {
        var address = AudioObjectPropertyAddress(mSelector: kAudioObjectPropertyName,
                                                 mScope: kAudioObjectPropertyScopeGlobal,
                                                 mElement: kAudioObjectPropertyElementMain)
        var name: Unmanaged<CFString>?
        var size = UInt32(MemoryLayout<Unmanaged<CFString>?>.size)
        let status = withUnsafeMutablePointer(to: &name) { AudioObjectGetPropertyData(id, &address, 0, nil, &size, $0) }
        // The HAL hands over a reference the caller releases.
        guard status == 0, let string = name?.takeRetainedValue() else { return nil }
        let utf8 = CFStringBuiltInEncodings.UTF8.rawValue
        let capacity = CFStringGetMaximumSizeForEncoding(CFStringGetLength(string), utf8) + 1
        guard capacity > 0, capacity <= 1 << 16 else { return nil }
        var bytes = [CChar](repeating: 0, count: capacity)
        guard CFStringGetCString(string, &bytes, capacity, utf8) else { return nil }
        return bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// A fixed-size property (a UInt32, a Float64, an object ID), or nil when the object has none.
    private static func value<T>(of object: AudioObjectID, _ selector: AudioObjectPropertySelector,
                                 scope: AudioObjectPropertyScope = kAudioObjectPropertyScopeGlobal, initial: T) -> T?
    {
        var address = AudioObjectPropertyAddress(mSelector: selector, mScope: scope,
                                                 mElement: kAudioObjectPropertyElementMain)
        var result = initial
        var size = UInt32(MemoryLayout<T>.size)
        let status = AudioObjectGetPropertyData(object, &address, 0, nil, &size, &result)
        return status == 0 && Int(size) == MemoryLayout<T>.size ? result : nil
    }
}

#endif
#endif

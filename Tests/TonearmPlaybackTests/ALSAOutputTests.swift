import Foundation
import Tonearm
import TonearmTestSupport
import XCTest
@testable import TonearmPlayback

/// A real alsa-lib configuration for one test: HOME points at a fresh folder whose `.asoundrc`
/// routes PCMs into files through alsa-lib's `file` plugin, and alsa-lib's cached global
/// configuration is dropped (`snd_config_update_free_global`) so the next open reads it. That
/// keeps the tests right in any order, whatever read ALSA's configuration before them in this
/// process. `restore()` puts the environment back and drops the cache again.
///
/// Where alsa-plugins' Pulse plugin is installed (pulseaudio pulls it in), a hook makes Pulse the
/// default PCM whenever a Pulse server answers, over `~/.asoundrc`; PULSE_SERVER points at no
/// server while the configuration is read, so the file plugin stays the default. XDG_CONFIG_HOME
/// points into the folder too, so no `alsa/asoundrc` of the user's overrides ours.
final class ALSATestConfig {
    let dir: String
    private var saved: [(name: String, value: String?)] = []

    /// Where `pcm.!default` writes.
    var defaultFile: String { dir + "/default.raw" }
    /// Where `pcm.tonearm_nofloat` (integer samples only, stored as S16_LE) writes.
    var noFloatFile: String { dir + "/nofloat.raw" }

    init() throws {
        dir = makeTemporaryDirectory()
        let rc = """
            pcm.!default {
                type file
                slave.pcm "null"
                file "\(dir)/default.raw"
                format "raw"
            }
            pcm.tonearm_nofloat {
                type linear
                slave {
                    pcm { type file; slave.pcm "null"; file "\(dir)/nofloat.raw"; format "raw" }
                    format S16_LE
                }
                hint { show on; description "Tonearm test: integer samples only" }
            }

            """
        try rc.write(toFile: dir + "/.asoundrc", atomically: true, encoding: .utf8)
        let environment = ProcessInfo.processInfo.environment
        for (name, value) in [("HOME", dir), ("XDG_CONFIG_HOME", dir + "/config"),
                              ("PULSE_SERVER", "unix:\(dir)/no-pulse-server")] {
            saved.append((name, environment[name]))
            setenv(name, value, 1)
        }
        Self.dropCachedConfiguration()
    }

    func restore() {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        saved = []
        Self.dropCachedConfiguration()
        try? FileManager.default.removeItem(atPath: dir)
    }

    nonisolated(unsafe) static let library: UnsafeMutableRawPointer? = dlopen("libasound.so.2", RTLD_NOW | RTLD_LOCAL)

    private static func dropCachedConfiguration() {
        typealias FreeGlobal = @convention(c) () -> Int32
        guard let library, let f = dlsym(library, "snd_config_update_free_global") else { return }
        _ = unsafeBitCast(f, to: FreeGlobal.self)()
    }
}

final class ALSAOutputTests: XCTestCase {
    private var config: ALSATestConfig!
    private let rate = 44100.0

    override func setUpWithError() throws {
        guard ALSATestConfig.library != nil else { throw skipOrFail("libasound.so.2 cannot be loaded") }
        config = try ALSATestConfig()
    }

    override func tearDown() {
        config?.restore()
        config = nil
    }

    /// Int16 interleaved is the device's own format (no copy); the file plugin must store the
    /// sample's PCM exactly, padded to whole periods. Played twice through one unit, so the
    /// PCM is prepared again after its drain.
    func testInt16InterleavedReachesTheDefaultPCMExactlyTwice() throws {
        let format = StreamDescription.int16(sampleRate: rate, channels: 2)
        let source = try decodeWhole(toneStereoPath, as: format)
        XCTAssertEqual(source.frameLength, 22050)
        let unit = OutputUnit(backend: ALSAOutputBackend())
        try unit.setStreamFormat(format)
        try playToEnd(unit, source)
        try playToEnd(unit, source)
        XCTAssertEqual(unit.backendName, "alsa")
        XCTAssertEqual(unit.deviceFormat, .int16(sampleRate: rate, channels: 2))
        XCTAssertGreaterThan(unit.latency, 0)
        let period = unit.framesPerCall
        unit.uninitialize()
        let bytes = try readWholeFile(config.defaultFile)
        let expected = source.interleavedBytes()
        let half = bytes.count / 2
        assertWholePeriods(Array(bytes[..<half]), expected, bytesPerFrame: 4, period: period)
        assertWholePeriods(Array(bytes[half...]), expected, bytesPerFrame: 4, period: period)
    }

    /// Float32 planar is interleaved by the unit; the device takes Float32, so the file holds
    /// the decoded floats bit for bit.
    func testFloat32PlanarReachesTheDefaultPCMAsInterleavedFloats() throws {
        let format = StreamDescription.float32(sampleRate: rate, channels: 2, interleaved: false)
        let source = try decodeWhole(toneStereoPath, as: format)
        let unit = OutputUnit(backend: ALSAOutputBackend())
        try unit.setStreamFormat(format)
        try playToEnd(unit, source)
        XCTAssertEqual(unit.deviceFormat, .float32(sampleRate: rate, channels: 2, interleaved: true))
        let period = unit.framesPerCall
        unit.uninitialize()
        assertWholePeriods(try readWholeFile(config.defaultFile), source.interleavedBytes(), bytesPerFrame: 8, period: period)
    }

    /// A PCM that refuses float (alsa-lib's `linear` plugin takes integers only) gets the next
    /// sample type, Int32; the plugin then stores S16_LE, which must be the sample's own PCM.
    func testAPCMThatRefusesFloatGetsInt32() throws {
        let format = StreamDescription.float32(sampleRate: rate, channels: 2, interleaved: false)
        let source = try decodeWhole(toneStereoPath, as: format)
        let unit = OutputUnit(backend: ALSAOutputBackend(), options: AudioOutputOptions(device: "tonearm_nofloat"))
        try unit.setStreamFormat(format)
        try playToEnd(unit, source)
        XCTAssertEqual(unit.deviceFormat, .pcm(sampleRate: rate, channels: 2, bits: 32, interleaved: true))
        let period = unit.framesPerCall
        unit.uninitialize()
        let pcm16 = try decodeWhole(toneStereoPath, as: .int16(sampleRate: rate, channels: 2)).interleavedBytes()
        assertWholePeriods(try readWholeFile(config.noFloatFile), pcm16, bytesPerFrame: 4, period: period)
    }

    func testAnUnknownPCMIsABadDeviceNamedInTheMessage() {
        let backend = ALSAOutputBackend()
        XCTAssertThrowsError(try backend.open(format: .int16(sampleRate: rate, channels: 2),
                                              options: AudioOutputOptions(device: "tonearm_no_such_pcm"))) { error in
            let e = error as? AudioError
            XCTAssertEqual(e?.code, .badDevice)
            XCTAssertTrue(e?.message.contains("'tonearm_no_such_pcm'") ?? false, "\(error)")
            XCTAssertTrue(e?.message.hasPrefix("ALSA: ") ?? false, "\(error)")
        }
    }

    func testListsTheDefaultAndTheConfiguredPCMs() throws {
        let devices = try ALSAOutputBackend().devices()
        XCTAssertEqual(devices.filter(\.isDefault).map(\.name), ["default"])
        XCTAssertEqual(devices.first { $0.name == "tonearm_nofloat" }?.description, "Tonearm test: integer samples only")
        XCTAssertEqual(Set(devices.map(\.name)).count, devices.count, "a PCM is listed twice")
    }

    /// The unit finds ALSA by name too, as `tonearm play --backend alsa` does.
    func testTheBackendIsFoundByName() {
        XCTAssertEqual(AudioOutputBackends.named("alsa")?.name, "alsa")
    }
}

// MARK: - The writer against a fake alsa-lib

/// What the fake alsa-lib was asked and how it answers. One test at a time uses it (XCTest
/// runs a class's tests in turn); the C function pointers below can reach only globals.
private struct FakeALSA {
    var refusedFormats: Set<Int32> = []
    var setParams: [(format: Int32, channels: UInt32, rate: UInt32, softResample: Int32, latency: UInt32)] = []
    /// snd_pcm_writei's answers in turn (frames taken, or a negative error); then it takes all.
    var writeAnswers: [Int] = []
    var recoverResult: Int32 = 0
    var written: [UInt8] = []
    var calls: [String] = []
}

nonisolated(unsafe) private var fake = FakeALSA()
nonisolated(unsafe) private let fakeErrorText = UnsafePointer<CChar>(strdup("Input/output error")!)
nonisolated(unsafe) private let fakeHandle = OpaquePointer(bitPattern: 0x1000)!

private let fakeLibrary = ALSALibrary(
    pcmOpen: { out, name, _, _ in
        fake.calls.append("open \(String(cString: name))")
        out.pointee = fakeHandle
        return 0
    },
    pcmSetParams: { _, format, _, channels, rate, soft, latency in
        fake.setParams.append((format, channels, rate, soft, latency))
        return fake.refusedFormats.contains(format) ? -22 : 0
    },
    pcmGetParams: { _, buffer, period in
        buffer.pointee = 4800
        period.pointee = 1200
        return 0
    },
    pcmWritei: { _, data, frames in
        let answer = fake.writeAnswers.isEmpty ? Int(frames) : fake.writeAnswers.removeFirst()
        guard answer > 0 else { return answer }
        let n = min(answer, Int(frames))
        fake.written += UnsafeRawBufferPointer(start: data, count: n * 4)
        return n
    },
    pcmRecover: { _, err, silent in
        fake.calls.append("recover \(err) \(silent)")
        return fake.recoverResult
    },
    pcmPrepare: { _ in fake.calls.append("prepare"); return 0 },
    pcmDrain: { _ in fake.calls.append("drain"); return 0 },
    pcmDrop: { _ in fake.calls.append("drop"); return 0 },
    pcmClose: { _ in fake.calls.append("close"); return 0 },
    strerror: { _ in fakeErrorText },
    deviceNameHint: { _, _, _ in -1 },
    deviceNameGetHint: { _, _ in nil },
    deviceNameFreeHint: { _ in 0 })

final class ALSAWriterTests: XCTestCase {
    private let stereo16 = StreamDescription.int16(sampleRate: 48000, channels: 2)

    override func setUp() {
        fake = FakeALSA()
    }

    func testTheAskedTypeFirstThenFloatInt32Int16() throws {
        fake.refusedFormats = [ALSAConstant.formatS16, ALSAConstant.formatFloat]
        let writer = try ALSAWriter(lib: fakeLibrary, device: "fake", format: stereo16, latency: 0.1)
        XCTAssertEqual(fake.calls, ["open fake"])
        XCTAssertEqual(fake.setParams.map(\.format), [ALSAConstant.formatS16, ALSAConstant.formatFloat, ALSAConstant.formatS32])
        let last = try XCTUnwrap(fake.setParams.last)
        XCTAssertEqual([last.channels, last.rate, UInt32(last.softResample), last.latency], [2, 48000, 1, 100_000])
        XCTAssertEqual(writer.format, .pcm(sampleRate: 48000, channels: 2, bits: 32, interleaved: true))
        XCTAssertEqual(writer.latencyFrames, 4800)
        XCTAssertTrue(writer.isRealtime)
    }

    func testADeviceThatTakesNoTypeIsClosedAndNamed() {
        fake.refusedFormats = [ALSAConstant.formatS16, ALSAConstant.formatFloat, ALSAConstant.formatS32]
        XCTAssertThrowsError(try ALSAWriter(lib: fakeLibrary, device: "fake", format: stereo16, latency: 0.1)) { error in
            XCTAssertEqual((error as? AudioError)?.code, .badDevice)
            XCTAssertEqual((error as? AudioError)?.message,
                           "ALSA: device 'fake' takes none of Float32, Int32 or Int16 at 48000 Hz, 2 channels: Input/output error")
        }
        XCTAssertEqual(fake.calls, ["open fake", "close"])
    }

    /// Short writes resume where they stopped; an underrun, a suspend and an interrupted call
    /// are recovered and the frames still all arrive, in order. Two xruns are counted (EINTR is none).
    func testShortWritesAndXrunsLoseNothing() throws {
        let writer = try ALSAWriter(lib: fakeLibrary, device: "fake", format: stereo16, latency: 0.1)
        fake.writeAnswers = [100, -Int(ALSAConstant.EPIPE), 250, -Int(ALSAConstant.ESTRPIPE), -Int(ALSAConstant.EINTR), 1]
        let samples = (0..<2000).map { Int16(truncatingIfNeeded: $0 * 7) }
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frames: 1000) }
        XCTAssertEqual(fake.written, samples.withUnsafeBytes { Array($0) })
        XCTAssertEqual(writer.xruns, 2)
        XCTAssertEqual(fake.calls.filter { $0.hasPrefix("recover") }, ["recover -32 1", "recover -86 1", "recover -4 1"])
    }

    func testOtherErrorsAndFailedRecoveriesStopTheStream() throws {
        let writer = try ALSAWriter(lib: fakeLibrary, device: "fake", format: stereo16, latency: 0.1)
        let frame = [Int16](repeating: 0, count: 2)
        fake.writeAnswers = [-5]
        XCTAssertThrowsError(try frame.withUnsafeBytes { try writer.write($0.baseAddress!, frames: 1) }) { error in
            XCTAssertEqual(error as? AudioError, AudioError(.hardwareNotRunning, "ALSA: Input/output error"))
        }
        fake.writeAnswers = [-Int(ALSAConstant.EPIPE)]
        fake.recoverResult = -77
        XCTAssertThrowsError(try frame.withUnsafeBytes { try writer.write($0.baseAddress!, frames: 1) }) { error in
            XCTAssertEqual((error as? AudioError)?.code, .hardwareNotRunning)
        }
    }

    /// Drain and drop leave a PCM stopped, so each is followed by a prepare (the stream can
    /// start again); close happens once, and a closed writer refuses to write.
    func testDrainDiscardAndCloseOnce() throws {
        var writer: ALSAWriter? = try ALSAWriter(lib: fakeLibrary, device: "fake", format: stereo16, latency: 0.1)
        writer?.drain()
        writer?.discard()
        writer?.close()
        writer?.close()
        let frame = [Int16](repeating: 0, count: 2)
        XCTAssertThrowsError(try frame.withUnsafeBytes { try writer?.write($0.baseAddress!, frames: 1) })
        writer?.drain()
        writer = nil
        XCTAssertEqual(fake.calls, ["open fake", "drain", "prepare", "drop", "prepare", "close"])
    }
}

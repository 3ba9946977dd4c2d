import Foundation
import Tonearm
import TonearmTestSupport
import XCTest
@testable import TonearmPlayback

/// The Pulse backend against a real server: `.ci/run` starts PulseAudio with a null sink
/// (TONEARM_PULSE_SINK, `tonearm_test` by default). Without a server these tests skip, unless
/// TONEARM_PULSE_REQUIRED=1 says one must be there.
final class PulseOutputTests: XCTestCase {
    private let rate = 44100.0

    /// The test sink's name, once the server lists it; skips (or fails, where required) otherwise.
    private func requireSink() throws -> String {
        let sink = PulseTestServer.sink
        let devices: [AudioOutputDevice]
        do {
            devices = try PulseOutputBackend().devices()
        } catch {
            throw skipOrFail("no PulseAudio server: \(error)", required: PulseTestServer.isRequired)
        }
        guard devices.contains(where: { $0.name == sink }) else {
            throw skipOrFail("the server has no sink named \(sink) (set TONEARM_PULSE_SINK): \(devices.map(\.name))",
                             required: PulseTestServer.isRequired)
        }
        return sink
    }

    /// Plays the sample through the null sink while parec records its monitor: the recording
    /// must hold the sample's waveform, as long as the sample, with no gap.
    func testTheSampleReachesTheNullSinkWhole() throws {
        let sink = try requireSink()
        guard which("parec") != nil else {
            throw skipOrFail("parec is not installed", required: PulseTestServer.isRequired)
        }
        let format = StreamDescription.int16(sampleRate: rate, channels: 2)
        let source = try decodeWhole(toneStereoPath, as: format)
        var latencyFrames = 0
        var backendName: String?
        let recorded = try recordPulseMonitor(sink: sink, rate: Int(rate), channels: 2) {
            let unit = OutputUnit(backend: PulseOutputBackend(), options: AudioOutputOptions(device: sink))
            try unit.setStreamFormat(format)
            try playToEnd(unit, source)
            latencyFrames = Int(unit.latency * rate)
            backendName = unit.backendName
            unit.uninitialize()
        }
        XCTAssertEqual(backendName, "pulse")
        let reference = source.withUnsafeMutableSamples(Int16.self) { Array($0.prefix(source.frameLength * 2)) }
        let analysis = analyseCapture(recorded: recorded, reference: reference, channels: 2)
        XCTAssertGreaterThan(analysis.correlation, 0.95, "\(analysis)")
        XCTAssertLessThanOrEqual(abs(analysis.recordedLength - analysis.referenceLength), latencyFrames, "\(analysis)")
        XCTAssertLessThanOrEqual(analysis.longestDropout, Int(rate) * 5 / 1000, "\(analysis)")
    }

    func testListsTheNullSink() throws {
        let sink = try requireSink()
        let devices = try PulseOutputBackend().devices()
        let listed = try XCTUnwrap(devices.first { $0.name == sink })
        XCTAssertFalse(listed.description.isEmpty)
        XCTAssertEqual(devices.filter(\.isDefault).count, 1, "\(devices)")
    }

    func testAnUnknownSinkIsABadDeviceNamedInTheMessage() throws {
        _ = try requireSink()
        XCTAssertThrowsError(try PulseOutputBackend().open(format: .int16(sampleRate: rate, channels: 2),
                                                           options: AudioOutputOptions(device: "tonearm_no_such_sink"))) { error in
            let e = error as? AudioError
            XCTAssertEqual(e?.code, .badDevice)
            XCTAssertTrue(e?.message.contains("'tonearm_no_such_sink'") ?? false, "\(error)")
            XCTAssertTrue(e?.message.hasSuffix("No such entity") ?? false, "\(error)")
        }
    }

    /// With no server at the address (PULSE_SERVER names a socket that is not there), opening
    /// and listing both fail with libpulse's reason, and listing does not hang.
    func testNoServerIsABadDeviceWithPulseReason() throws {
        guard dlopen("libpulse-simple.so.0", RTLD_NOW | RTLD_LOCAL) != nil else {
            throw skipOrFail("libpulse-simple.so.0 cannot be loaded", required: PulseTestServer.isRequired)
        }
        let saved = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        setenv("PULSE_SERVER", "unix:" + makeTemporaryDirectory() + "/no-server", 1)
        defer { if let saved { setenv("PULSE_SERVER", saved, 1) } else { unsetenv("PULSE_SERVER") } }
        XCTAssertThrowsError(try PulseOutputBackend().open(format: .float32(sampleRate: rate, channels: 2, interleaved: true),
                                                           options: AudioOutputOptions())) { error in
            XCTAssertEqual((error as? AudioError)?.code, .badDevice)
            XCTAssertEqual((error as? AudioError)?.message, "PulseAudio: cannot play to the default sink: Connection refused")
        }
        XCTAssertThrowsError(try PulseOutputBackend().devices()) { error in
            XCTAssertEqual((error as? AudioError)?.code, .badDevice)
            XCTAssertEqual((error as? AudioError)?.message, "PulseAudio: cannot connect to the server: Connection refused")
        }
    }

    /// Both system backends' reasons reach the '!dev' that says no output could be opened.
    func testOpenFirstNamesEachBackendsReason() {
        let saved = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        setenv("PULSE_SERVER", "unix:" + makeTemporaryDirectory() + "/no-server", 1)
        defer { if let saved { setenv("PULSE_SERVER", saved, 1) } else { unsetenv("PULSE_SERVER") } }
        XCTAssertThrowsError(try AudioOutputBackends.openFirst(
            [PulseOutputBackend(), ALSAOutputBackend()], format: .int16(sampleRate: rate, channels: 2),
            options: AudioOutputOptions(device: "tonearm_no_such_device"))) { error in
            let message = (error as? AudioError)?.message ?? ""
            XCTAssertTrue(message.contains("pulse: PulseAudio: cannot play to sink 'tonearm_no_such_device'"), message)
            XCTAssertTrue(message.contains("alsa: "), message)
        }
    }
}

import Foundation

/// The PulseAudio server the real-component tests play to: `.ci/run` starts one with a null
/// sink and exports its name as TONEARM_PULSE_SINK (default `tonearm_test`), and sets
/// TONEARM_PULSE_REQUIRED=1 so a missing server fails the run instead of skipping.
public enum PulseTestServer {
    /// The null sink to play to.
    public static var sink: String {
        ProcessInfo.processInfo.environment["TONEARM_PULSE_SINK"].flatMap { $0.isEmpty ? nil : $0 } ?? "tonearm_test"
    }

    /// True where the environment promises a server (CI, or any run where
    /// `requirementsAreMandatory`): tests fail rather than skip without one.
    public static var isRequired: Bool {
        ProcessInfo.processInfo.environment["TONEARM_PULSE_REQUIRED"] == "1" || requirementsAreMandatory
    }
}

public enum PulseCaptureError: Error, CustomStringConvertible {
    case noParec
    case recorderDidNotStart(String)

    public var description: String {
        switch self {
        case .noParec: "parec is not installed (apt-get install pulseaudio-utils)"
        case .recorderDidNotStart(let why): "parec did not start recording: \(why)"
        }
    }
}

/// Records what `sink` plays (its monitor source) with `parec` while `play` runs, and returns
/// the interleaved s16 samples. The recorder starts first and `play` runs once it streams
/// (a running null sink's monitor sends silence at once; a suspended one gets 3 s to connect),
/// and it keeps recording `tail` seconds after `play` returns, so the end is not cut.
///
/// `play` may be anything that plays to the sink: an `OutputUnit` on the Pulse backend, or
/// `tonearm play --backend pulse --device SINK FILE` run as a process.
public func recordPulseMonitor(sink: String, rate: Int, channels: Int, tail: Double = 0.5,
                               play: () throws -> Void) throws -> [Int16]
{
    guard let parec = which("parec") else { throw PulseCaptureError.noParec }
    let dir = makeTemporaryDirectory()
    let path = dir + "/capture.raw"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let recorder = Process()
    recorder.executableURL = URL(fileURLWithPath: parec)
    recorder.arguments = ["-d", sink + ".monitor", "--format=s16le", "--rate=\(rate)", "--channels=\(channels)",
                          "--latency-msec=20", path]
    recorder.standardError = FileHandle.nullDevice
    try recorder.run()
    defer {
        if recorder.isRunning { recorder.terminate(); recorder.waitUntilExit() }
    }
    func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
    let connectBy = Date().addingTimeInterval(3)
    while size() == 0 && Date() < connectBy && recorder.isRunning { Thread.sleep(forTimeInterval: 0.02) }
    guard recorder.isRunning else {
        throw PulseCaptureError.recorderDidNotStart("it exited with status \(recorder.terminationStatus)")
    }
    try play()
    Thread.sleep(forTimeInterval: tail)
    recorder.interrupt()
    recorder.waitUntilExit()
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.withUnsafeBytes { raw in
        (0..<(raw.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
    }
}

/// How a recording compares with the audio that was played.
public struct CaptureAnalysis: CustomStringConvertible {
    /// Normalized cross-correlation of the recording with the reference at the best lag (1: the
    /// same waveform up to a gain).
    public var correlation: Double
    /// The best lag in frames, relative to aligning the first non-silent frames.
    public var lag: Int
    /// Frames from the first to the last non-silent frame of the recording.
    public var recordedLength: Int
    /// The same for the reference.
    public var referenceLength: Int
    /// The longest run of silent frames inside the recording's signal.
    public var longestDropout: Int

    public var description: String {
        "correlation \(correlation) at lag \(lag), length \(recordedLength) vs \(referenceLength) frames, "
            + "longest dropout \(longestDropout) frames"
    }
}

/// Compares a recording with the reference it should contain (both interleaved s16 with
/// `channels` channels). A frame is silent when every sample's magnitude is at most
/// `silence`. The correlation is searched over ±`maxLag` frames around the onsets.
public func analyseCapture(recorded: [Int16], reference: [Int16], channels: Int, silence: Int16 = 8,
                           maxLag: Int = 128) -> CaptureAnalysis
{
    func loud(_ s: [Int16], _ frame: Int) -> Bool {
        for c in 0..<channels where abs(Int(s[frame * channels + c])) > Int(silence) { return true }
        return false
    }
    func span(_ s: [Int16]) -> (first: Int, last: Int)? {
        let frames = s.count / channels
        guard let first = (0..<frames).first(where: { loud(s, $0) }),
              let last = (0..<frames).last(where: { loud(s, $0) }) else { return nil }
        return (first, last)
    }
    guard let rec = span(recorded), let ref = span(reference) else {
        return CaptureAnalysis(correlation: 0, lag: 0, recordedLength: 0,
                               referenceLength: span(reference).map { $0.last - $0.first + 1 } ?? 0, longestDropout: 0)
    }
    var dropout = 0, run = 0
    for f in rec.first...rec.last {
        if loud(recorded, f) { run = 0 } else { run += 1; dropout = max(dropout, run) }
    }
    // Normalized cross-correlation of the reference's signal against the recording, shifted.
    let count = (ref.last - ref.first + 1) * channels
    var best = -1.0, bestLag = 0
    recorded.withUnsafeBufferPointer { x in
        reference.withUnsafeBufferPointer { r in
            let rStart = ref.first * channels
            var rr = 0.0
            for i in 0..<count { rr += Double(r[rStart + i]) * Double(r[rStart + i]) }
            for lag in -maxLag...maxLag {
                let xStart = (rec.first + lag) * channels
                guard xStart >= 0 else { continue }
                var xr = 0.0, xx = 0.0
                for i in 0..<count {
                    let xi = xStart + i < x.count ? Double(x[xStart + i]) : 0
                    xr += xi * Double(r[rStart + i])
                    xx += xi * xi
                }
                let c = xx > 0 && rr > 0 ? xr / (xx * rr).squareRoot() : 0
                if c > best { best = c; bestLag = lag }
            }
        }
    }
    return CaptureAnalysis(correlation: best, lag: bestLag, recordedLength: rec.last - rec.first + 1,
                           referenceLength: ref.last - ref.first + 1, longestDropout: dropout)
}

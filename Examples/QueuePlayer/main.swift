// Seed 002's player with Tonearm's API: a file the platform cannot decode (a WMA, say) is
// decoded by FFmpeg, converted from its planar float to interleaved 16-bit integers, and
// played through an AudioQueue with three buffers that the queue's callback refills, with
// play and stop.
//
//   swift run --traits FFmpeg queue-player song.wma                 # to the sound system
//   swift run --traits FFmpeg queue-player song.wma --output x.wav  # to a WAV, no sound card
//   swift run --traits FFmpeg queue-player song.wma --seconds 5     # stop after 5 seconds
//
// Without the FFmpeg trait it plays what Tonearm decodes natively (MP3, AAC, FLAC, ALAC,
// PCM) and answers 'fmt?' for the rest.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Tonearm

/// Reads the file in the queue's format and refills the buffers the queue hands back.
final class Feeder: @unchecked Sendable {
    let file: ExtAudioFile
    let bytesPerFrame: Int
    /// Whether the file has ended, the buffers the queue holds, and the error that stopped it.
    private struct State { var ended = false, outstanding = 0, failure: AudioError? }
    private let state = Mutex(State())

    init(file: ExtAudioFile, bytesPerFrame: Int) {
        self.file = file
        self.bytesPerFrame = bytesPerFrame
    }

    /// The callback's work (and the priming before start): fills one buffer and enqueues it,
    /// or, at the end of the file, leaves it out.
    func refill(_ queue: AudioQueue, _ buffer: AudioQueueBuffer) {
        state.withLock { $0.outstanding -= 1 }
        var bytes: [UInt8] = []
        do throws(AudioError) {
            let frames = try file.read(frames: buffer.audioDataBytesCapacity / bytesPerFrame, into: &bytes)
            guard frames > 0 else {
                state.withLock { $0.ended = true }
                return
            }
            bytes.withUnsafeBytes { buffer.audioData.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            buffer.audioDataByteSize = bytes.count
            state.withLock { $0.outstanding += 1 }
            try queue.enqueue(buffer)
        } catch {
            state.withLock { $0.failure = error; $0.ended = true }
        }
    }

    /// True once the file has ended and every enqueued buffer has come back (been played).
    var isDone: Bool { state.withLock { $0.ended && $0.outstanding <= 0 } }
    var error: AudioError? { state.withLock { $0.failure } }
    func primed() { state.withLock { $0.outstanding += 1 } }
}

func run() -> Int32 {
    var args = Array(CommandLine.arguments.dropFirst())
    func option(_ name: String) -> String? {
        guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
        defer { args.removeSubrange(i...i + 1) }
        return args[i + 1]
    }
    let output = option("--output")
    let seconds = option("--seconds").flatMap(Double.init)
    guard args.count == 1 else {
        print("usage: queue-player FILE [--output FILE.wav] [--seconds N]")
        return 64
    }
    do throws(AudioError) {
        // Decoding (FFmpeg's decoder for WMA) and the conversion to interleaved Int16.
        let file = try ExtAudioFile(path: args[0])
        let source = file.fileDataFormat
        let format = StreamDescription.int16(sampleRate: source.sampleRate, channels: source.channelsPerFrame)
        try file.setClientDataFormat(format)
        let feeder = Feeder(file: file, bytesPerFrame: Int(format.bytesPerFrame))

        // The queue and its three buffers of a tenth of a second each.
        let backend: (any AudioOutputBackend)? = output.map { FileOutputBackend(path: $0, sampleFormat: .int16) }
        let queue = try AudioQueue.newOutput(format: format, backend: backend) { queue, buffer in
            feeder.refill(queue, buffer)
        }
        let bufferBytes = Int(format.sampleRate / 10) * Int(format.bytesPerFrame)
        for _ in 0..<3 {
            let buffer = try queue.allocateBuffer(byteSize: bufferBytes)
            feeder.primed()
            feeder.refill(queue, buffer)
        }

        // Play, wait for the end (or the time limit), stop.
        try queue.start()
        print("Playing \(args[0]) (\(source.formatID), \(Int(source.sampleRate)) Hz, \(source.channelsPerFrame) ch) on \(queue.backendName ?? "?")")
        var waited = 0.0
        while !feeder.isDone && seconds.map({ waited < $0 }) ?? true {
            usleep(20_000)
            waited += 0.02
        }
        queue.stop(immediately: seconds != nil)
        queue.dispose()
        if let error = feeder.error { throw error }
        print("Played \(queue.currentFrame) frames")
        return 0
    } catch {
        print("queue-player: \(error)")
        return 1
    }
}

exit(run())

import TonearmCore
import TonearmFormats

/// A sink that writes what would play into an audio file (WAV by default), as fast as it is
/// rendered. The file takes the device format: interleaved little-endian PCM of the rendered
/// sample type, or `sampleFormat` when given (for instance Int16 for a CD-style WAV). An engine
/// or queue writes only the frames it played (`AudioOutputStream.trimCurrentBuffer`), so the
/// file has no silence before the first frame or after the last; an `OutputUnit` driven by
/// your own callback writes whole periods.
///
/// An existing file at `path` is replaced, as any tool replaces its output file; pass
/// `flags: []` to refuse it instead ('prm?', as `AudioFile.create` without `.eraseFile`).
public struct FileOutputBackend: AudioOutputBackend {
    public let name = "file"
    public var path: String
    public var fileType: AudioFileTypeID
    /// The sample type to store; nil keeps the rendered one (Float32 for the player).
    public var sampleFormat: PCMBuffer.CommonFormat?
    /// How the file is created (`AudioFile.create`'s flags); `.eraseFile` by default.
    public var flags: AudioFile.CreateFlags

    public init(path: String, fileType: AudioFileTypeID = .wave, sampleFormat: PCMBuffer.CommonFormat? = nil,
                flags: AudioFile.CreateFlags = .eraseFile)
    {
        self.path = path
        self.fileType = fileType
        self.sampleFormat = sampleFormat
        self.flags = flags
    }

    public func devices() throws(AudioError) -> [AudioOutputDevice] {
        [AudioOutputDevice(name: path, description: "Audio file", isDefault: true)]
    }

    public func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        var device = try OutputFormat.deviceFormat(for: format)
        if let sampleFormat { device = OutputFormat.interleaved(sampleFormat, like: device) }
        let writer = try FileWriter(path: path, type: fileType, format: device, flags: flags)
        return WriterOutputStream(writer: writer, periodFrames: options.period(at: device.sampleRate))
    }
}

final class FileWriter: BlockingPCMWriter {
    let format: StreamDescription
    let isRealtime = false
    let latencyFrames = 0
    private let file: AudioFile
    private var packets: Int64 = 0
    private var closed = false

    init(path: String, type: AudioFileTypeID, format: StreamDescription, flags: AudioFile.CreateFlags) throws(AudioError) {
        self.format = format
        file = try AudioFile.create(path: path, type: type, format: format, flags: flags)
    }

    func write(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioError) {
        let raw = UnsafeRawBufferPointer(start: bytes, count: frames * Int(format.bytesPerFrame))
        try file.writePackets(raw, count: frames, startingAt: packets)
        packets += Int64(frames)
    }

    func drain() {}
    func discard() {}

    func close() {
        guard !closed else { return }
        closed = true
        try? file.close()
    }
}

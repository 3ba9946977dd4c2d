#if FFmpeg
import Foundation
import TonearmCore
import TonearmFormats
import TonearmCodecs
import TonearmConvert
import TonearmPlayback
import TonearmFFmpeg

/// A stream that libavformat fetches with its own network code (with the FFmpeg trait):
/// the protocols Tonearm has no client for — mms, mmsh, mmst, rtsp, rtmp, and libavformat's
/// own `hls:` scheme. The native clients stay the ones for http and https streams and HLS
/// playlists (``HLSStream``).
///
/// Like ``StreamDecoder`` it decodes on a thread of its own into a bounded buffer of PCM that
/// an ``AudioPlayer`` reads (`.stream(…)`), with Tonearm's decoders first and FFmpeg's behind
/// them. It cannot seek: these are live streams, or playlists libavformat walks in order.
public final class FFmpegNetworkStream: StreamingFrameSource, @unchecked Sendable {
    /// The URL schemes libavformat serves for Tonearm.
    public static let schemes: Set<String> = ["mms", "mmsh", "mmst", "rtsp", "rtsps", "rtmp", "rtmps", "rtmpt", "rtmpe", "hls"]

    /// Whether a URL is one for this stream rather than the native HTTP client: a scheme in
    /// ``schemes``.
    public static func handles(_ url: String) -> Bool {
        guard let colon = url.firstIndex(of: ":") else { return false }
        return schemes.contains(url[..<colon].lowercased())
    }

    public let url: String
    public let bufferSeconds: Double
    /// The stream's data format, once ``open(timeout:)`` returned.
    public private(set) var fileDataFormat = StreamDescription.float32(sampleRate: 44100, channels: 2)
    /// The container's tags (title, artist…) and libavformat's name for it.
    public private(set) var properties = FileProperties(fileType: .ffmpeg)
    /// libavformat's name for the container ("hls", "rtsp", "asf").
    public private(set) var containerName = ""

    private let condition = NSCondition()
    // Guarded by `condition`:
    private var demuxer: FFmpegDemuxer?
    private var cookie: [UInt8]?
    private var clientFormat: StreamDescription?
    private var pcm: [UInt8] = []
    private var pcmStart = 0
    private var ended = false
    private var failure: AudioError?
    private var closed = false
    private var thread: Thread?

    public init(url: String, bufferSeconds: Double = 4) {
        self.url = url
        self.bufferSeconds = max(0.5, bufferSeconds)
    }

    deinit { close() }

    /// Connects and reads until the format is known. Errors carry FFmpeg's message and
    /// Tonearm's code ('typ?' for a protocol or format libavformat lacks, 'net!', 'time', -43).
    public func open(timeout: Double = 15) throws(AudioError) {
        let d = try FFmpegDemuxer(url: url, timeout: timeout) { [weak self] in self?.isClosed ?? true }
        let parameters = d.parameters
        let format = parameters.streamDescription(frameSize: d.frameSize)
        let cookie = parameters.cookie
        guard CodecRegistry.canDecode(format.formatID) else {
            throw AudioError(.unsupportedDataFormat, "no decoder for the stream's \(format.formatID) data")
        }
        var p = FileProperties(fileType: .ffmpeg)
        p.dataFormat = format
        p.magicCookie = cookie
        if d.bitRate > 0 { p.bitRate = UInt32(clamping: d.bitRate) }
        for (k, v) in d.metadata where !v.isEmpty { p.info[InfoDictionary.key(forContainerTag: k)] = v }
        condition.withLock {
            demuxer = d
            self.cookie = cookie
            fileDataFormat = format
            properties = p
            containerName = d.formatName
        }
        let t = Thread { [weak self] in self?.run() }
        t.name = "tonearm-ffmpeg-stream"
        thread = t
        t.start()
    }

    private var isClosed: Bool { condition.withLock { closed } }

    /// Frames decoded and not yet read, in seconds of the client format.
    public var bufferedSeconds: Double {
        condition.withLock {
            guard let f = clientFormat, f.bytesPerFrame > 0, f.sampleRate > 0 else { return 0 }
            return Double((pcm.count - pcmStart) / Int(f.bytesPerFrame)) / f.sampleRate
        }
    }

    /// True once the stream ended and every frame was read.
    public var isAtEnd: Bool { condition.withLock { ended && pcm.count == pcmStart } }
    /// Why the stream stopped, when it failed.
    public var error: AudioError? { condition.withLock { failure } }

    public func setClientFormat(_ format: StreamDescription) throws(AudioError) {
        condition.withLock {
            clientFormat = format
            condition.broadcast()
        }
    }

    public var clientLengthFrames: Int64? { nil }

    public func readAvailable(frames: Int, into bytes: inout [UInt8]) throws(AudioError) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard let f = clientFormat, f.bytesPerFrame > 0 else { return nil }
        let available = (pcm.count - pcmStart) / Int(f.bytesPerFrame)
        if available == 0 {
            if let failure { throw failure }
            return ended ? 0 : nil
        }
        let n = min(frames, available)
        let count = n * Int(f.bytesPerFrame)
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: pcm[pcmStart..<pcmStart + count])
        pcmStart += count
        if pcmStart > 1 << 20 && pcmStart * 2 > pcm.count {
            pcm.removeSubrange(0..<pcmStart)
            pcmStart = 0
        }
        condition.broadcast()
        return n
    }

    public func seek(toFrame frame: Int64) throws(AudioError) {
        throw AudioError(.operationNotSupported, "\(url) is a stream libavformat reads in order; it cannot seek")
    }

    /// Stops the thread and the network reads.
    public func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    /// The next packet; nil at the end. A live server that closes the connection after
    /// sending (an rtmp or rtsp stream ending) ends the stream rather than failing it.
    private func nextPacket(_ demuxer: FFmpegDemuxer, afterReceiving received: Int) throws(AudioError) -> FFmpegPacket? {
        do {
            return try demuxer.readPacket()
        } catch where received > 0 && error.code == .network {
            return nil
        }
    }

    /// The thread: packets in, decoded and converted PCM out, held to `bufferSeconds`.
    private func run() {
        condition.lock()
        while clientFormat == nil && !closed { condition.wait() }
        let client = clientFormat
        let source = fileDataFormat, cookie = self.cookie, demuxer = self.demuxer
        condition.unlock()
        guard let client, let demuxer else { return }
        var out: [UInt8] = []
        do throws(AudioError) {
            let converter = try AudioConverter(from: source, to: client, magicCookie: cookie)
            let limit = Int(bufferSeconds * client.sampleRate) * Int(client.bytesPerFrame)
            var received = 0
            while let p = try nextPacket(demuxer, afterReceiving: received) {
                received += 1
                let d = [PacketDescription(startOffset: 0, variableFramesInPacket: 0, dataByteSize: UInt32(clamping: p.data.count))]
                out.removeAll(keepingCapacity: true)
                do throws(AudioError) {
                    try converter.convert(packets: p.data, count: 1, descriptions: d, into: &out)
                } catch where error.code == .codecBadData {
                    continue
                }
                condition.lock()
                pcm.append(contentsOf: out)
                while pcm.count - pcmStart > limit && !closed { condition.wait() }
                let stop = closed
                condition.unlock()
                if stop { return }
            }
            out.removeAll(keepingCapacity: true)
            try converter.finish(into: &out)
            condition.withLock { pcm.append(contentsOf: out) }
        } catch {
            condition.withLock { if !closed { failure = error } }
        }
        condition.withLock {
            ended = true
            condition.broadcast()
        }
    }
}
#endif

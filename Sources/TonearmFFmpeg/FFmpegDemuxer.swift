#if FFmpeg
import CFFmpeg
import TonearmCore

/// Where a demuxer's bytes come from: called on the demuxer's thread, in order or (when
/// `isSeekable`) anywhere.
package protocol FFmpegByteSource: AnyObject {
    /// Total size, when known.
    var size: Int64? { get }
    /// True when `read(at:into:)` may be called at any offset.
    var isSeekable: Bool { get }
    /// Reads up to `buffer.count` bytes at `offset` (at least one unless the data has ended);
    /// 0 at the end.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int
    /// True when the demuxer should stop at once (the parser is going away).
    var isAborted: Bool { get }
}

/// One packet of the chosen audio stream.
package struct FFmpegPacket {
    package var data: [UInt8]
    /// Presentation time, in the stream's time base; nil when the container gives none.
    package var pts: Int64?
    /// Duration in the stream's time base, 0 when unknown.
    package var duration: Int64
    /// Byte position in the source of the container packet that held it, nil when unknown.
    package var position: Int64?
    package var isKeyFrame: Bool
}

/// libavformat over a ``FFmpegByteSource`` through a custom AVIOContext: the container's
/// facts and the packets of its best audio stream.
package final class FFmpegDemuxer {
    private var ctx: UnsafeMutablePointer<AVFormatContext>?
    private var io: UnsafeMutablePointer<AVIOContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let state: IOState
    /// The index of the audio stream the packets come from.
    package let streamIndex: Int32
    /// libavformat's short name for the container ("asf", "matroska,webm").
    package let formatName: String
    /// Its long name ("ASF (Advanced / Active Streaming Format)").
    package let formatLongName: String
    package private(set) var parameters: FFmpegCodecParameters
    /// The stream's time base.
    package let timeBase: (num: Int64, den: Int64)
    /// The frames per packet the stream declares, 0 when they vary or are unknown.
    package let frameSize: Int
    /// Encoder delay the container states (Matroska's CodecDelay, for one), in samples.
    package let initialPadding: Int
    /// The container's duration in seconds, when it states one.
    package let duration: Double?
    /// The stream's start time in its time base, when known.
    package let startTime: Int64?
    /// The stream's duration in its time base, when the container states it.
    package let streamDuration: Int64?
    /// The container's and the stream's tags, in that order (keys as the container spells them).
    package let metadata: [(key: String, value: String)]
    /// Chapters: start and end in seconds, and title.
    package let chapters: [(start: Double, end: Double, title: String)]
    /// The first attached picture (cover art), when the container has one.
    package let coverArt: [UInt8]?
    /// Every stream: its index, media kind and codec name, and whether it is the one read.
    package let streams: [(index: Int32, kind: String, codec: String, isSelected: Bool)]
    /// The bit rate the container states, 0 when none.
    package let bitRate: Int64

    /// What the AVIO callbacks reach through their opaque pointer.
    final class IOState {
        /// Nil when libavformat does its own I/O (a URL).
        let source: FFmpegByteSource?
        let aborted: () -> Bool
        var position: Int64 = 0
        var error: AudioError?
        init(_ source: FFmpegByteSource) {
            self.source = source
            aborted = { source.isAborted }
        }
        init(aborted: @escaping () -> Bool) {
            source = nil
            self.aborted = aborted
        }
    }

    /// Opens the container and picks its best audio stream. `formatName` names the demuxer
    /// to use (libavformat probes the bytes when nil).
    package convenience init(source: FFmpegByteSource, formatName hint: String? = nil) throws(AudioError) {
        FFmpegLog.prepare()
        let state = IOState(source)
        let bufferSize = 1 << 16
        guard let ctx = avformat_alloc_context(), let buffer = av_malloc(bufferSize) else {
            throw AudioError.limit("no memory for an FFmpeg demuxer")
        }
        let opaque = Unmanaged.passUnretained(state).toOpaque()
        guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(bufferSize), 0, opaque,
                                          FFmpegDemuxer.readCallback, nil,
                                          source.isSeekable ? FFmpegDemuxer.seekCallback : nil)
        else {
            av_free(buffer)
            avformat_free_context(ctx)
            throw AudioError.limit("no memory for an FFmpeg demuxer")
        }
        io.pointee.seekable = source.isSeekable ? AVIO_SEEKABLE_NORMAL : 0
        ctx.pointee.pb = io
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        try self.init(context: ctx, io: io, state: state, url: nil, formatName: hint, options: [:])
    }

    /// Opens a URL with libavformat's own network code: the protocols Tonearm has no client
    /// for (mms, mmsh, rtsp, rtmp) and HLS playlists. `timeout` bounds each network wait;
    /// `isAborted` is polled while libavformat waits, to stop it from another thread.
    package convenience init(url: String, timeout: Double, isAborted: @escaping @Sendable () -> Bool) throws(AudioError) {
        FFmpegLog.prepare()
        avformat_network_init()
        guard let ctx = avformat_alloc_context() else { throw AudioError.limit("no memory for an FFmpeg demuxer") }
        let micros = String(Int64(max(0.1, timeout) * 1_000_000))
        // rw_timeout bounds every read and write of any protocol. "timeout" is the socket
        // timeout for rtsp and http (HLS), but for rtmp it would make the client listen.
        var options = ["rw_timeout": micros]
        let scheme = url.prefix { $0 != ":" }.lowercased()
        if !scheme.hasPrefix("rtmp") { options["timeout"] = micros }
        try self.init(context: ctx, io: nil, state: IOState(aborted: isAborted), url: url, formatName: nil, options: options)
    }

    private init(context ctx: UnsafeMutablePointer<AVFormatContext>, io: UnsafeMutablePointer<AVIOContext>?, state: IOState,
                 url: String?, formatName hint: String?, options: [String: String]) throws(AudioError)
    {
        self.state = state
        self.io = io
        let opaque = Unmanaged.passUnretained(state).toOpaque()
        ctx.pointee.interrupt_callback.callback = FFmpegDemuxer.interruptCallback
        ctx.pointee.interrupt_callback.opaque = opaque
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        let input = hint.flatMap { av_find_input_format($0) }
        var dict: OpaquePointer?
        for (k, v) in options { av_dict_set(&dict, k, v, 0) }
        var r = avformat_open_input(&opened, url, input, &dict)
        av_dict_free(&dict)
        guard r >= 0, let c = opened else {
            // avformat_open_input frees the context on failure; the AVIO context is ours.
            FFmpegDemuxer.freeIO(&self.io)
            let what = url.map { "libavformat could not open \($0)" } ?? "libavformat could not open the data"
            // With a demuxer named, the type is known and the data is at fault: 'dta?'.
            throw state.error ?? AudioError(ffmpeg: r, what, fallback: hint == nil ? .unsupportedFileType : .invalidFile)
        }
        self.ctx = c
        r = avformat_find_stream_info(c, nil)
        if r < 0 {
            let e = state.error ?? AudioError(ffmpeg: r, "libavformat could not read the streams", fallback: .invalidFile)
            FFmpegDemuxer.close(&self.ctx, &self.io)
            throw e
        }
        let best = av_find_best_stream(c, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard best >= 0 else {
            FFmpegDemuxer.close(&self.ctx, &self.io)
            throw AudioError(.unsupportedDataFormat, "the file has no audio stream (\(FFmpegErrors.message(best)), FFmpeg)")
        }
        streamIndex = best
        formatName = String(cString: c.pointee.iformat.pointee.name)
        formatLongName = c.pointee.iformat.pointee.long_name.map { String(cString: $0) } ?? formatName
        let st = c.pointee.streams[Int(best)]!
        let par = st.pointee.codecpar!.pointee
        var p = FFmpegCodecParameters(codecID: par.codec_id, sampleRate: par.sample_rate, channels: par.ch_layout.nb_channels)
        p.channelMask = par.ch_layout.order == AV_CHANNEL_ORDER_NATIVE ? par.ch_layout.u.mask : 0
        p.bitRate = par.bit_rate
        p.blockAlign = par.block_align
        p.bitsPerCodedSample = par.bits_per_coded_sample
        p.formatTag = UInt16(truncatingIfNeeded: par.codec_tag)
        if let e = par.extradata, par.extradata_size > 0 { p.extradata = Array(UnsafeBufferPointer(start: e, count: Int(par.extradata_size))) }
        parameters = p
        timeBase = (Int64(st.pointee.time_base.num), Int64(max(1, st.pointee.time_base.den)))
        frameSize = Int(par.frame_size)
        initialPadding = Int(par.initial_padding)
        duration = c.pointee.duration > 0 ? Double(c.pointee.duration) / Double(AV_TIME_BASE) : nil
        startTime = st.pointee.start_time == tonearm_nopts() ? nil : st.pointee.start_time
        streamDuration = st.pointee.duration > 0 ? st.pointee.duration : nil
        bitRate = c.pointee.bit_rate
        metadata = FFmpegDemuxer.tags(c.pointee.metadata) + FFmpegDemuxer.tags(st.pointee.metadata)
        var chapters: [(Double, Double, String)] = []
        for i in 0..<Int(c.pointee.nb_chapters) {
            guard let ch = c.pointee.chapters[i]?.pointee else { continue }
            let tb = Double(ch.time_base.num) / Double(max(1, ch.time_base.den))
            let title = FFmpegDemuxer.tags(ch.metadata).first { $0.key.lowercased() == "title" }?.value ?? ""
            chapters.append((Double(ch.start) * tb, Double(ch.end) * tb, title))
        }
        self.chapters = chapters
        var cover: [UInt8]?
        var streams: [(Int32, String, String, Bool)] = []
        for i in 0..<Int(c.pointee.nb_streams) {
            let s = c.pointee.streams[i]!
            let sp = s.pointee.codecpar!.pointee
            let kind = av_get_media_type_string(sp.codec_type).map { String(cString: $0) } ?? "unknown"
            let codec = avcodec_get_name(sp.codec_id).map { String(cString: $0) } ?? "unknown"
            streams.append((Int32(i), kind, codec, Int32(i) == best))
            if cover == nil, s.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0, let d = s.pointee.attached_pic.data,
               s.pointee.attached_pic.size > 0
            {
                cover = Array(UnsafeBufferPointer(start: d, count: Int(s.pointee.attached_pic.size)))
            }
            if Int32(i) != best { s.pointee.discard = AVDISCARD_ALL }
        }
        coverArt = cover
        self.streams = streams
        packet = av_packet_alloc()
        if p.codecID == AV_CODEC_ID_AAC && p.extradata.isEmpty { try unwrapADTS() }
    }

    /// AAC that comes as whole ADTS frames with no AudioSpecificConfig (AAC in MPEG-TS, and
    /// so in HLS segments): the config from the first frame's header, and every packet
    /// without its header, as Tonearm's ADTS parser hands them (and FFmpeg's aac_adtstoasc
    /// filter makes them). A first frame whose channel configuration is 0 (the channels are
    /// in a program config element) is left as it is.
    private var stripsADTS = false
    private var heldPacket: FFmpegPacket?

    private func unwrapADTS() throws(AudioError) {
        guard let first = try readPacket() else { return }
        heldPacket = first
        let b = first.data
        guard FFmpegDemuxer.adtsHeaderLength(b) != nil else { return }
        let objectType = Int(b[2] >> 6) + 1, frequencyIndex = Int(b[2] >> 2 & 0xF)
        let channelConfiguration = Int(b[2] & 1) << 2 | Int(b[3] >> 6)
        guard channelConfiguration != 0 else { return }
        parameters.extradata = [UInt8(objectType << 3 | frequencyIndex >> 1),
                                UInt8((frequencyIndex & 1) << 7 | channelConfiguration << 3)]
        stripsADTS = true
        heldPacket = FFmpegDemuxer.strippingADTS(first)
    }

    /// The header length of an ADTS frame that fills `b` (7, or 9 with a CRC); nil when `b`
    /// is not one whole frame.
    static func adtsHeaderLength(_ b: [UInt8]) -> Int? {
        guard b.count > 9, b[0] == 0xFF, b[1] & 0xF6 == 0xF0, b[2] >> 2 & 0xF < 13 else { return nil }
        let length = Int(b[3] & 3) << 11 | Int(b[4]) << 3 | Int(b[5] >> 5)
        let header = b[1] & 1 == 1 ? 7 : 9
        return length == b.count && length > header && b[6] & 3 == 0 ? header : nil
    }

    static func strippingADTS(_ p: FFmpegPacket) -> FFmpegPacket {
        guard let header = adtsHeaderLength(p.data) else { return p }
        var q = p
        q.data.removeFirst(header)
        return q
    }

    deinit {
        av_packet_free(&packet)
        FFmpegDemuxer.close(&ctx, &io)
    }

    private static func close(_ ctx: inout UnsafeMutablePointer<AVFormatContext>?, _ io: inout UnsafeMutablePointer<AVIOContext>?) {
        avformat_close_input(&ctx)
        freeIO(&io)
    }

    private static func freeIO(_ io: inout UnsafeMutablePointer<AVIOContext>?) {
        guard let pb = io else { return }
        av_freep(&pb.pointee.buffer)
        avio_context_free(&io)
    }

    private static func tags(_ dict: OpaquePointer?) -> [(key: String, value: String)] {
        var out: [(key: String, value: String)] = []
        var e: UnsafeMutablePointer<AVDictionaryEntry>?
        while true {
            e = av_dict_get(dict, "", e, AV_DICT_IGNORE_SUFFIX)
            guard let entry = e else { break }
            out.append((String(cString: entry.pointee.key), String(cString: entry.pointee.value)))
        }
        return out
    }

    /// The next packet of the audio stream, nil at the end of the data.
    package func readPacket() throws(AudioError) -> FFmpegPacket? {
        if let held = heldPacket {
            heldPacket = nil
            return held
        }
        guard let p = try readContainerPacket() else { return nil }
        return stripsADTS ? FFmpegDemuxer.strippingADTS(p) : p
    }

    private func readContainerPacket() throws(AudioError) -> FFmpegPacket? {
        guard let ctx, let packet else { return nil }
        while true {
            let r = av_read_frame(ctx, packet)
            if r == FFmpegErrors.eof { return nil }
            if r < 0 {
                if let e = state.error { throw e }
                throw AudioError(ffmpeg: r, "libavformat could not read a packet", fallback: .invalidFile)
            }
            defer { av_packet_unref(packet) }
            let p = packet.pointee
            guard p.stream_index == streamIndex, p.size > 0, let data = p.data else { continue }
            return FFmpegPacket(data: Array(UnsafeBufferPointer(start: data, count: Int(p.size))),
                                pts: p.pts == tonearm_nopts() ? nil : p.pts, duration: p.duration,
                                position: p.pos >= 0 ? p.pos : nil, isKeyFrame: p.flags & AV_PKT_FLAG_KEY != 0)
        }
    }

    /// Goes back to the keyframe at or before `pts` (the stream's time base), or to the
    /// start when `pts` is nil; the next packets read follow from there.
    package func seek(toPTS pts: Int64?) throws(AudioError) {
        guard let ctx else { return }
        var r: Int32
        if let pts {
            r = av_seek_frame(ctx, streamIndex, pts, AVSEEK_FLAG_BACKWARD)
        } else {
            r = avformat_seek_file(ctx, streamIndex, Int64.min, startTime ?? 0, startTime ?? 0, 0)
            if r < 0 { r = av_seek_frame(ctx, -1, 0, AVSEEK_FLAG_BYTE) }
        }
        if r < 0 { throw state.error ?? AudioError(ffmpeg: r, "libavformat could not seek", fallback: .position) }
        avformat_flush(ctx)
        heldPacket = nil
    }

    // MARK: AVIO callbacks

    private static let readCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
        opaque, buf, size in
        let s = Unmanaged<IOState>.fromOpaque(opaque!).takeUnretainedValue()
        guard let buf, size > 0, let source = s.source else { return 0 }
        if source.isAborted { return FFmpegErrors.exit }
        do throws(AudioError) {
            let n = try source.read(at: s.position, into: UnsafeMutableRawBufferPointer(start: buf, count: Int(size)))
            if n == 0 { return FFmpegErrors.eof }
            s.position += Int64(n)
            return Int32(n)
        } catch {
            s.error = error
            return FFmpegErrors.exit
        }
    }

    private static let seekCallback: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        let s = Unmanaged<IOState>.fromOpaque(opaque!).takeUnretainedValue()
        let size = s.source?.size
        switch whence & ~AVSEEK_FORCE {
        case AVSEEK_SIZE: return size ?? -1
        case SEEK_SET: s.position = offset
        case SEEK_CUR: s.position += offset
        case SEEK_END:
            guard let size else { return -1 }
            s.position = size + offset
        default: return -1
        }
        return s.position
    }

    private static let interruptCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
        Unmanaged<IOState>.fromOpaque(opaque!).takeUnretainedValue().aborted() ? 1 : 0
    }

    /// libavformat's best guess at the container of the first bytes of a file: its short
    /// name and score (100 is certain), nil when no demuxer recognises them.
    package static func probe(_ head: [UInt8], pathExtension: String?) -> (name: String, score: Int32)? {
        FFmpegLog.prepare()
        let padding = Int(AVPROBE_PADDING_SIZE)
        var padded = head + [UInt8](repeating: 0, count: padding)
        var score: Int32 = 0
        let name = "probe." + (pathExtension ?? "")
        let found: UnsafePointer<AVInputFormat>? = padded.withUnsafeMutableBufferPointer { b in
            name.withCString { n in
                var pd = AVProbeData(filename: n, buf: b.baseAddress, buf_size: Int32(head.count), mime_type: nil)
                return av_probe_input_format3(&pd, 1, &score)
            }
        }
        guard let f = found else { return nil }
        return (String(cString: f.pointee.name), score)
    }
}
#endif

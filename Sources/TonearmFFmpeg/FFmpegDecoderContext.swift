#if FFmpeg
import CFFmpeg
import TonearmCore

/// One libavcodec audio decoder: packets in, frames out, in the decoder's own sample format
/// and channel order.
package final class FFmpegDecoderContext {
    /// The sample types FFmpeg's decoders produce.
    package enum SampleType: Sendable { case u8, s16, s32, s64, float, double }

    /// One decoded frame, valid only inside the closure it is passed to.
    package struct Frame {
        package let frames: Int
        package let channels: Int
        package let type: SampleType
        package let isPlanar: Bool
        /// Each channel's samples when planar; one interleaved plane otherwise.
        package let planes: [UnsafeRawPointer]
    }

    private var ctx: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    /// The packet's bytes with the zero padding FFmpeg's bit readers may read past the end.
    private var padded: [UInt8] = []
    /// libavcodec's name for the decoder ("wmav2").
    package let decoderName: String
    package let parameters: FFmpegCodecParameters

    package init(_ parameters: FFmpegCodecParameters) throws(AudioError) {
        FFmpegLog.prepare()
        self.parameters = parameters
        guard let codec = avcodec_find_decoder(parameters.codecID) else {
            let name = avcodec_descriptor_get(parameters.codecID).map { String(cString: $0.pointee.name) } ?? "codec \(parameters.codecID.rawValue)"
            throw AudioError(.unsupportedDataFormat, "this FFmpeg has no \(name) decoder")
        }
        decoderName = String(cString: codec.pointee.name)
        guard let c = avcodec_alloc_context3(codec), let p = av_packet_alloc(), let f = av_frame_alloc() else {
            throw AudioError.limit("no memory for an FFmpeg decoder")
        }
        ctx = c; packet = p; frame = f
        try parameters.apply(to: c)
        // One thread: Tonearm decodes a stream on the caller's thread, as its native decoders do.
        c.pointee.thread_count = 1
        // The same output on every machine: DTS, for one, takes its fixed-point path.
        c.pointee.flags |= Int32(AV_CODEC_FLAG_BITEXACT)
        let r = avcodec_open2(c, codec, nil)
        if r < 0 { throw AudioError(ffmpeg: r, "opening FFmpeg's \(decoderName) decoder", fallback: .unsupportedDataFormat) }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&ctx)
    }

    /// The channel count the decoder reports (it may learn it from the first packet).
    package var channels: Int { Int(ctx!.pointee.ch_layout.nb_channels) }
    /// The sample rate the decoder reports.
    package var sampleRate: Int { Int(ctx!.pointee.sample_rate) }
    /// The decoder's channel mask in FFmpeg's native order (WAV's), 0 when it has none.
    package var channelMask: UInt64 {
        let l = ctx!.pointee.ch_layout
        return l.order == AV_CHANNEL_ORDER_NATIVE ? l.u.mask : 0
    }
    /// The frames per packet the codec context declares, 0 when they vary.
    package var frameSize: Int { Int(ctx!.pointee.frame_size) }

    /// Decodes one packet (nil drains the decoder at the end of the stream) and passes each
    /// frame it gives to `body`. Damaged data throws 'bada'.
    package func decode(_ bytes: UnsafeRawBufferPointer?, _ body: (Frame) throws(AudioError) -> Void) throws(AudioError) {
        guard let ctx, let packet, let frame else { return }
        var r: Int32
        if let bytes {
            let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
            if padded.count < bytes.count + padding { padded = [UInt8](repeating: 0, count: bytes.count + padding) }
            r = padded.withUnsafeMutableBytes { raw -> Int32 in
                if let base = bytes.baseAddress { raw.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
                memset(raw.baseAddress! + bytes.count, 0, padding)
                packet.pointee.data = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                packet.pointee.size = Int32(bytes.count)
                defer { packet.pointee.data = nil; packet.pointee.size = 0 }
                return avcodec_send_packet(ctx, packet)
            }
        } else {
            r = avcodec_send_packet(ctx, nil)
        }
        if r < 0 && r != FFmpegErrors.eof && r != FFmpegErrors.again {
            throw AudioError(ffmpeg: r, "FFmpeg's \(decoderName) decoder refused a packet", fallback: .codecBadData)
        }
        while true {
            r = avcodec_receive_frame(ctx, frame)
            if r == FFmpegErrors.again || r == FFmpegErrors.eof { break }
            if r < 0 { throw AudioError(ffmpeg: r, "FFmpeg's \(decoderName) decoder", fallback: .codecBadData) }
            defer { av_frame_unref(frame) }
            let f = frame.pointee
            let format = AVSampleFormat(rawValue: f.format)
            let type: SampleType
            switch av_get_packed_sample_fmt(format) {
            case AV_SAMPLE_FMT_U8: type = .u8
            case AV_SAMPLE_FMT_S16: type = .s16
            case AV_SAMPLE_FMT_S32: type = .s32
            case AV_SAMPLE_FMT_S64: type = .s64
            case AV_SAMPLE_FMT_FLT: type = .float
            case AV_SAMPLE_FMT_DBL: type = .double
            default: throw AudioError(.codecBadData, "FFmpeg's \(decoderName) decoder gave samples of an unknown format (\(f.format))")
            }
            let planar = av_sample_fmt_is_planar(format) != 0
            let channels = Int(f.ch_layout.nb_channels)
            guard channels > 0, f.nb_samples >= 0 else { continue }
            var planes: [UnsafeRawPointer] = []
            let count = planar ? channels : 1
            planes.reserveCapacity(count)
            for c in 0..<count {
                guard let p = f.extended_data[c] else {
                    throw AudioError(.codecBadData, "FFmpeg's \(decoderName) decoder gave a frame without channel \(c)")
                }
                planes.append(UnsafeRawPointer(p))
            }
            try body(Frame(frames: Int(f.nb_samples), channels: channels, type: type, isPlanar: planar, planes: planes))
        }
    }

    /// Forgets the state between packets (after a seek).
    package func flush() {
        if let ctx { avcodec_flush_buffers(ctx) }
    }
}
#endif

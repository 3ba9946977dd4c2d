import TonearmCore

/// One elementary Opus stream (mono or stereo; RFC 6716): its frames through SILK, CELT or
/// both, with the mode transitions and redundant CELT frames of §4.5 and concealment of
/// lost frames.
final class OpusStreamDecoder {
    let channels: Int
    private let celt: CELTDecoder
    private let silk: SILKDecoder
    private var previousMode: OpusMode?
    private var previousRedundancy = false
    private var lastBandwidth: OpusBandwidth = .full
    /// Scratch: a transition's concealed 5 ms, a redundant frame's 5 ms, SILK's output.
    private let transition: UnsafeMutablePointer<Float>
    private let redundant: UnsafeMutablePointer<Float>
    private let silkOutput: UnsafeMutablePointer<Float>
    /// CELT's concealment, up to 20 ms, before it is added where it goes.
    private let redundantLarge: UnsafeMutablePointer<Float>
    private let frameOutput: UnsafeMutablePointer<Float>

    init(channels: Int) {
        self.channels = channels
        celt = CELTDecoder(channels: channels)
        silk = SILKDecoder(channels: channels)
        // A mono frame in a stereo stream: both channels as libopus fills them (not a copy in
        // the first mono frame after stereo ones).
        silk.fillsBothChannelsOfMonoFrames = channels == 2
        transition = .allocate(capacity: 2 * 240)
        redundant = .allocate(capacity: 2 * 240)
        silkOutput = .allocate(capacity: 2 * 2880)
        redundantLarge = .allocate(capacity: 2 * 960)
        frameOutput = .allocate(capacity: 2 * 2880)
    }

    deinit {
        transition.deallocate()
        redundant.deallocate()
        silkOutput.deallocate()
        redundantLarge.deallocate()
        frameOutput.deallocate()
    }

    var celtStatistics: CELTDecoder.Statistics { celt.statistics }

    func reset() {
        celt.reset()
        silk.reset()
        previousMode = nil
        previousRedundancy = false
    }

    /// Decodes the frames of `packet` (whose bytes are `bytes`) into `output`, planar with
    /// `stride` samples per channel, starting at sample `offset`; returns the samples written.
    func decode(_ packet: OpusPacket, _ bytes: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<Float>,
                stride: Int, offset: Int) throws(AudioError) -> Int
    {
        var at = offset
        for k in packet.frames.indices {  // an index loop: a debug build's iterator allocates
            let frame = UnsafeRawBufferPointer(rebasing: bytes[packet.frames[k]])
            try decodeFrame(frame, mode: packet.mode, bandwidth: packet.bandwidth, frameSize: packet.frameSize,
                            stereo: packet.stereo)
            for c in 0..<channels {
                (output + c * stride + at).update(from: frameOutput + c * packet.frameSize, count: packet.frameSize)
            }
            at += packet.frameSize
        }
        return at - offset
    }

    /// Conceals `count` lost samples into `output` (planar, `stride` per channel, from `offset`).
    func conceal(_ count: Int, into output: UnsafeMutablePointer<Float>, stride: Int, offset: Int) throws(AudioError) {
        var done = 0
        while done < count {
            var n = min(count - done, 960)
            // Packets last a multiple of 2.5 ms; anything shorter is left silent.
            if n < 120 {
                for c in 0..<channels { (output + c * stride + offset + done).update(repeating: 0, count: n) }
                break
            }
            if previousMode == .celt || previousRedundancy || previousMode == nil {
                // CELT conceals 2.5, 5, 10 or 20 ms at a time.
                n = n >= 960 ? 960 : n >= 480 ? 480 : n >= 240 ? 240 : 120
            } else {
                n = n >= 960 ? 960 : 480
                if count - done < 480 { n = count - done }
            }
            try lostFrame(n)
            for c in 0..<channels {
                (output + c * stride + offset + done).update(from: frameOutput + c * n, count: n)
            }
            done += n
        }
    }

    /// A lost frame of `n` samples (PLC) into `frameOutput`.
    private func lostFrame(_ n: Int) throws(AudioError) {
        try conceal(n, into: frameOutput)
        // As the reference decoder: the concealment's mode becomes the previous one.
        if previousRedundancy { previousMode = .celt }
        previousRedundancy = false
    }

    /// `n` samples (planar, `n` per channel) of concealment in the previous frame's mode:
    /// SILK's for SILK and hybrid frames (at least 10 ms; a shorter request takes the start
    /// of 10 ms), CELT's for CELT and the high band of hybrid frames.
    private func conceal(_ n: Int, into out: UnsafeMutablePointer<Float>) throws(AudioError) {
        let mode: OpusMode? = previousRedundancy ? .celt : previousMode
        out.update(repeating: 0, count: channels * n)
        guard let mode else { return }
        if mode != .celt {
            let silkSize = max(480, n)
            var rd = OpusRangeDecoder(UnsafeRawBufferPointer(start: nil, count: 0))
            silkOutput.update(repeating: 0, count: channels * silkSize)
            do {
                try silk.decode(&rd, frameSize: silkSize, bandwidth: lastBandwidth, streamChannels: channels, lost: true,
                                output: silkOutput)
                for c in 0..<channels { (out + c * n).update(from: silkOutput + c * silkSize, count: n) }
            } catch {
                // SILK's concealment failing is not fatal (the reference gives silence).
            }
        }
        if mode != .silk {
            var done = 0
            while done < n {
                let size = min(960, n - done) >= 960 ? 960 : n - done >= 480 ? 480 : n - done >= 240 ? 240 : 120
                if n - done < 120 { break }
                celt.conceal(frameSize: size, output: redundantLarge, accumulate: false)
                for c in 0..<channels {
                    let o = out + c * n + done
                    for i in 0..<size { o[i] += redundantLarge[c * size + i] }
                }
                done += size
            }
        }
    }

    /// opus_decode_frame for a received frame.
    private func decodeFrame(_ data: UnsafeRawBufferPointer, mode: OpusMode, bandwidth: OpusBandwidth, frameSize: Int,
                             stereo: Bool) throws(AudioError)
    {
        let f20 = 960, f5 = 240, f2_5 = 120
        let streamChannels = stereo ? 2 : 1
        // A frame of 0 or 1 byte is lost (DTX): conceal it.
        if data.count <= 1 {
            try lostFrame(frameSize)
            return
        }
        guard let base = data.baseAddress else { throw OpusPacket.bad("no data") }
        var len = data.count
        var rd = OpusRangeDecoder(data)
        let out = frameOutput
        out.update(repeating: 0, count: channels * frameSize)
        var transitionNeeded = false
        if let previous = previousMode,
           (mode == .celt && previous != .celt && !previousRedundancy) || (mode != .celt && previous == .celt)
        {
            transitionNeeded = true
        }
        // The previous mode's concealment of the first 5 ms, cross-faded into the frame (§4.5).
        if transitionNeeded && mode == .celt {
            transitionStride = min(f5, frameSize)
            try conceal(transitionStride, into: transition)
        }
        if mode != .celt {
            if previousMode == .celt { silk.reset() }
            silkOutput.update(repeating: 0, count: channels * frameSize)
            try silk.decode(&rd, frameSize: frameSize, bandwidth: bandwidth, streamChannels: streamChannels, lost: false,
                            output: silkOutput)
            // SILK fills both channels of a stereo decoder, and gives a mono decoder the mid
            // channel of a stereo frame first (as libopus does).
            out.update(from: silkOutput, count: channels * frameSize)
        }
        var redundancy = false
        var celtToSilk = false
        var redundancyBytes = 0
        if mode != .celt && rd.tell() + 17 + (mode == .hybrid ? 20 : 0) <= 8 * len {
            redundancy = mode == .hybrid ? rd.decodeBit(logp: 12) : true
            if redundancy {
                celtToSilk = rd.decodeBit(logp: 1)
                redundancyBytes = mode == .hybrid ? Int(rd.decodeUInt(256)) + 2 : len - ((rd.tell() + 7) >> 3)
                len -= redundancyBytes
                if len * 8 < rd.tell() {
                    len = 0
                    redundancyBytes = 0
                    redundancy = false
                }
                rd.limit(toBytes: len)
            }
        }
        let startBand = mode != .celt ? 17 : 0
        if redundancy { transitionNeeded = false }
        if transitionNeeded && mode != .celt {
            transitionStride = min(f5, frameSize)
            try conceal(transitionStride, into: transition)
        }
        switch bandwidth {
        case .narrow: celt.endBand = 13
        case .medium, .wide: celt.endBand = 17
        case .superWide: celt.endBand = 19
        case .full: celt.endBand = 21
        }
        let redundantData = UnsafeRawBufferPointer(start: base + max(0, len), count: max(0, redundancyBytes))
        if redundancy && celtToSilk {
            celt.startBand = 0
            var rrd = OpusRangeDecoder(redundantData)
            redundant.update(repeating: 0, count: channels * f5)
            celt.decode(&rrd, length: redundancyBytes, frameSize: f5, streamChannels: streamChannels, output: redundant,
                        accumulate: false)
        }
        celt.startBand = startBand
        if mode != .silk {
            if let previous = previousMode, mode != previous, !previousRedundancy { celt.reset() }
            celt.decode(&rd, length: len, frameSize: min(f20, frameSize), streamChannels: streamChannels, output: out,
                        accumulate: mode != .celt)
        } else if previousMode == .hybrid && !(redundancy && celtToSilk && previousRedundancy) {
            // Hybrid to SILK: let CELT's MDCT fade out with a silence frame.
            celt.startBand = 0
            let silence: [UInt8] = [0xFF, 0xFF]
            silence.withUnsafeBytes { b in
                var srd = OpusRangeDecoder(b)
                celt.decode(&srd, length: 2, frameSize: f2_5, streamChannels: streamChannels, output: out, stride: frameSize,
                            accumulate: true)
            }
        }
        CELTTables.window.withUnsafeBufferPointer { w in
            if redundancy && !celtToSilk {
                celt.reset()
                celt.startBand = 0
                var rrd = OpusRangeDecoder(redundantData)
                redundant.update(repeating: 0, count: channels * f5)
                celt.decode(&rrd, length: redundancyBytes, frameSize: f5, streamChannels: streamChannels, output: redundant,
                            accumulate: false)
                for c in 0..<channels {
                    let o = out + c * frameSize + frameSize - f2_5
                    Self.smoothFade(o, redundant + c * f5 + f2_5, into: o, count: f2_5, window: w.baseAddress!)
                }
            }
            if redundancy && celtToSilk && (previousMode != .silk || previousRedundancy) {
                for c in 0..<channels {
                    let o = out + c * frameSize
                    o.update(from: redundant + c * f5, count: f2_5)
                    Self.smoothFade(redundant + c * f5 + f2_5, o + f2_5, into: o + f2_5, count: f2_5, window: w.baseAddress!)
                }
            }
            if transitionNeeded {
                let ts = transitionStride
                for c in 0..<channels {
                    let o = out + c * frameSize, t = transition + c * ts
                    if frameSize >= f5 {
                        o.update(from: t, count: f2_5)
                        Self.smoothFade(t + f2_5, o + f2_5, into: o + f2_5, count: f2_5, window: w.baseAddress!)
                    } else {
                        Self.smoothFade(t, o, into: o, count: f2_5, window: w.baseAddress!)
                    }
                }
            }
        }
        previousMode = mode
        previousRedundancy = redundancy && !celtToSilk
        lastBandwidth = bandwidth
    }

    private var transitionStride = 240

    /// A cross-fade from `a` to `b` with the squared CELT window.
    private static func smoothFade(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>,
                                   count: Int, window: UnsafePointer<Float>)
    {
        for i in 0..<count {
            let w = window[i] * window[i]
            out[i] = w * b[i] + (1 - w) * a[i]
        }
    }
}

import TonearmCore

/// The SILK layer of Opus (RFC 6716 §4.2): linear-prediction speech coding at 8, 12 or
/// 16 kHz, resampled to 48 kHz.
///
/// Decoding is bit-exact with libopus's (fixed-point) SILK decoder, resampler included:
/// the 48 kHz samples are libopus's 16-bit values / 32768.
///
/// ## What the Opus layer must do
/// - **Delay:** nothing. The resampler's own delay (it starts each call with 0, 4 or 7
///   input samples held back for 8, 12 and 16 kHz, plus one sample of the stereo
///   unmixing) is the same in libopus, whose Opus decoder adds no further alignment for
///   SILK; the encoder accounts for it, so the output lines up with CELT's and with the
///   stream's pre-skip as it is. Pass the output on unshifted.
/// - **Resets:** call ``reset()`` when a SILK or hybrid frame follows a CELT-only one
///   (libopus re-initialises SILK then), and after a seek.
/// - **Loss:** `lost: true` with the frame size of the missing audio and the last
///   bandwidth and channels conceals it (10 ms for 480, 20 ms frames otherwise). Other
///   sizes throw: like libopus, split a longer gap into 20 ms chunks and a 10 ms rest.
///   ``decodeFEC(_:frameSize:bandwidth:streamChannels:output:)`` decodes the next
///   packet's redundant copy of a lost frame instead, as libopus's `decode_fec` does.
/// - **Channels:** `output` holds `streamChannels` channels. A stereo stream decoded
///   with `init(channels: 1)` gets the mid channel in both; a mono frame in a stereo
///   stream fills one channel, which the Opus layer copies to the other, unless it sets
///   ``fillsBothChannelsOfMonoFrames`` (and gives room for two channels), which matches
///   libopus exactly: in the first mono frame after stereo ones libopus runs the right
///   channel's own resampler over the mid (a copy differs in that frame's first
///   millisecond or so).
final class SILKDecoder {
    private let apiChannels: Int
    /// Concealment as libopus 1.3 rather than 1.4 and later does it (the two differ in
    /// small details of the noise's fading; decoding proper is the same). For tests
    /// against an older libopus.
    var libopus13Concealment = false {
        didSet { for state in channelState { state.libopus13Concealment = libopus13Concealment } }
    }

    /// When set, a mono frame decoded by a stereo decoder (`init(channels: 2)`) fills two
    /// channels of `output`, as libopus does: both the mid, except that the first mono frame
    /// after stereo ones runs the right channel's own resampler (whose history is the
    /// right channel's), for a smooth switch. Off, such frames fill one channel, as
    /// `streamChannels` says.
    var fillsBothChannelsOfMonoFrames = false

    /// Stereo frames decoded so far that coded only the mid channel (for tests that check
    /// a stream exercises them).
    private(set) var midOnlyFrameCount = 0
    /// Frames decoded from LBRR copies by ``decodeFEC(_:frameSize:bandwidth:streamChannels:output:)``.
    private(set) var redundantFrameCount = 0
    private let channelState = [SILKChannelState(), SILKChannelState()]
    private var stereo = SILKStereoState()
    private var previousInternalChannels = 0
    private var previousAPIChannels = 0
    private var previousMidOnly = false
    /// One frame at the internal rate per channel, with two samples of history in front.
    private let frameBuffer = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * (SILKChannelState.maxFrameLength + 2))
    /// One frame at 48 kHz.
    private let resampled = UnsafeMutablePointer<Int16>.allocate(capacity: 960)

    /// `channels`: the Opus stream's channel count (1 or 2); SILK keeps state for both, since
    /// packets may switch between mono and stereo.
    init(channels: Int) {
        SILKTables.prepare()
        apiChannels = channels == 2 ? 2 : 1
        frameBuffer.initialize(repeating: 0, count: 2 * (SILKChannelState.maxFrameLength + 2))
        resampled.initialize(repeating: 0, count: 960)
    }

    deinit {
        frameBuffer.deallocate()
        resampled.deallocate()
    }

    /// Forgets all state between frames (after a seek, or a switch from CELT-only frames).
    func reset() {
        for state in channelState { state.reset() }
        stereo = SILKStereoState()
        previousInternalChannels = 0
        previousAPIChannels = 0
        previousMidOnly = false
    }

    /// Decodes the SILK layer of one Opus frame from `decoder`, which stands at the frame's
    /// first bit, and leaves it after SILK's last symbol (where CELT starts in a hybrid frame).
    ///
    /// - Parameters:
    ///   - frameSize: samples per channel at 48 kHz: 480, 960, 1920 or 2880 (10, 20, 40, 60 ms).
    ///   - bandwidth: the TOC's; hybrid frames (super-wide, full) decode SILK at wideband.
    ///   - streamChannels: 1 or 2, the TOC's stereo flag.
    ///   - lost: conceal a lost frame instead (the decoder is not read).
    ///   - output: `frameSize` samples of each of the `streamChannels` channels at 48 kHz,
    ///     planar (`output[c * frameSize + i]`), scaled to ±1.0.
    func decode(_ decoder: inout OpusRangeDecoder, frameSize: Int, bandwidth: OpusBandwidth, streamChannels: Int,
                lost: Bool, output: UnsafeMutablePointer<Float>) throws(AudioError)
    {
        try decode(&decoder, frameSize: frameSize, bandwidth: bandwidth, streamChannels: streamChannels,
                   mode: lost ? .lost : .normal, output: output)
    }

    /// Forward error correction (RFC 6716 §4.2.4, libopus's `decode_fec`): decodes, in
    /// place of a lost frame, the low-bitrate redundant (LBRR) copy of it that the next
    /// packet carries. `decoder` stands at the start of the next packet's first frame;
    /// `frameSize`, `bandwidth` and `streamChannels` are that packet's. Frames without an
    /// LBRR copy are concealed. The Opus layer conceals any part of the gap before the
    /// next packet's duration first, as libopus does, and decodes the next packet
    /// normally afterwards (from a fresh range decoder).
    func decodeFEC(_ decoder: inout OpusRangeDecoder, frameSize: Int, bandwidth: OpusBandwidth, streamChannels: Int,
                   output: UnsafeMutablePointer<Float>) throws(AudioError)
    {
        try decode(&decoder, frameSize: frameSize, bandwidth: bandwidth, streamChannels: streamChannels,
                   mode: .redundancy, output: output)
    }

    private enum Mode { case normal, lost, redundancy }

    private func decode(_ decoder: inout OpusRangeDecoder, frameSize: Int, bandwidth: OpusBandwidth, streamChannels: Int,
                        mode: Mode, output: UnsafeMutablePointer<Float>) throws(AudioError)
    {
        let lost = mode == .lost
        let framesPerPacket: Int
        let subframes: Int
        switch frameSize {
        case 480: (framesPerPacket, subframes) = (1, 2)
        case 960: (framesPerPacket, subframes) = (1, 4)
        case 1920: (framesPerPacket, subframes) = (2, 4)
        case 2880: (framesPerPacket, subframes) = (3, 4)
        default: throw AudioError(.unsupportedDataFormat, "Opus SILK frame of \(frameSize) samples at 48 kHz")
        }
        guard streamChannels == 1 || streamChannels == 2 else {
            throw AudioError(.unsupportedDataFormat, "Opus SILK frame with \(streamChannels) channels")
        }
        let internalChannels = streamChannels
        let fsKHz = bandwidth.silkSampleRate / 1000
        let mid = channelState[0]
        let side = channelState[1]

        // The first mono frame after stereo ones, at the same rate, resamples its right
        // channel with the right channel's resampler.
        let stereoToMono = internalChannels == 1 && previousInternalChannels == 2 && mid.fsKHz == fsKHz
        // A mono → stereo switch starts the side channel from nothing.
        if internalChannels > previousInternalChannels && previousInternalChannels > 0 {
            side.reset()
        }
        for n in 0..<internalChannels {
            let state = channelState[n]
            state.framesDecoded = 0
            state.framesPerPacket = framesPerPacket
            state.setSampleRate(fsKHz, subframes: subframes)
        }
        if apiChannels == 2 && internalChannels == 2 && (previousAPIChannels == 1 || previousInternalChannels == 1) {
            stereo.predPrevQ13 = (0, 0)
            stereo.side = (0, 0)
            side.resampler = mid.resampler
        }
        previousAPIChannels = apiChannels
        previousInternalChannels = internalChannels

        if !lost {
            readHeader(&decoder, channels: internalChannels, skipRedundancy: mode == .normal)
        }

        let frameLength = mid.frameLength
        let outLength = frameLength * SILKResampler.outputKHz / fsKHz
        let x1 = frameBuffer
        let x2 = frameBuffer + SILKChannelState.maxFrameLength + 2
        for f in 0..<framesPerPacket {
            var prediction: (Int32, Int32) = (0, 0)
            var midOnly = false
            if internalChannels == 2 {
                if mode == .normal || (mode == .redundancy && mid.lbrrFlags[f]) {
                    prediction = SILKStereoState.decodePrediction(&decoder)
                    let sideCoded = mode == .normal ? side.vadFlags[f] : side.lbrrFlags[f]
                    midOnly = sideCoded ? false : SILKStereoState.decodeMidOnly(&decoder)
                } else {
                    prediction = stereo.predPrevQ13
                }
            }
            // The first frame with a side after mid-only frames starts the side afresh.
            if internalChannels == 2 && !midOnly && previousMidOnly {
                side.resetSidePrediction()
            }
            let hasSide: Bool
            switch mode {
            case .normal: hasSide = !midOnly
            case .lost: hasSide = !previousMidOnly
            case .redundancy: hasSide = !previousMidOnly || (internalChannels == 2 && side.lbrrFlags[f])
            }
            for n in 0..<internalChannels {
                let state = channelState[n]
                let out = n == 0 ? x1 + 2 : x2 + 2
                if n == 0 || hasSide {
                    // libopus counts the mid's frames before the side's here, so both
                    // channels code their first frame of the packet independently.
                    let coding: SILKConditionalCoding
                    if f == 0 {
                        coding = .independently
                    } else if mode == .redundancy {
                        coding = state.lbrrFlags[f - 1] ? .conditionally : .independently
                    } else if n > 0 && previousMidOnly {
                        coding = .independentlyNoLTPScaling
                    } else {
                        coding = .conditionally
                    }
                    let coded = mode == .normal || (mode == .redundancy && state.lbrrFlags[f])
                    if mode == .redundancy && coded { redundantFrameCount += 1 }
                    state.decodeFrame(&decoder, lost: !coded, redundant: mode == .redundancy, coding: coding, out: out)
                } else {
                    out.update(repeating: 0, count: frameLength)
                }
                state.framesDecoded += 1
            }
            if apiChannels == 2 && internalChannels == 2 {
                stereo.unmix(x1, x2, prediction: prediction, fsKHz: fsKHz, length: frameLength)
            } else {
                x1[0] = stereo.mid.0
                x1[1] = stereo.mid.1
                stereo.mid = (x1[frameLength], x1[frameLength + 1])
            }
            // Resample each decoded channel (from its second sample: the unmixing's delay).
            let channelsOut = min(apiChannels, internalChannels)
            for n in 0..<channelsOut {
                let source = n == 0 ? x1 : x2
                channelState[n].resampler.process(source + 1, count: frameLength, into: resampled)
                let destination = output + n * frameSize + f * outLength
                for i in 0..<outLength { destination[i] = Float(resampled[i]) * (1 / 32768) }
            }
            if channelsOut < streamChannels {
                // A stereo stream decoded to mono: the mid channel in both.
                let first = output + f * outLength
                (output + frameSize + f * outLength).update(from: first, count: outLength)
            } else if apiChannels == 2 && internalChannels == 1 && fillsBothChannelsOfMonoFrames {
                let right = output + frameSize + f * outLength
                if stereoToMono && f == 0 {
                    side.resampler.process(x1 + 1, count: frameLength, into: resampled)
                    for i in 0..<outLength { right[i] = Float(resampled[i]) * (1 / 32768) }
                } else {
                    right.update(from: output + f * outLength, count: outLength)
                }
            }
            if midOnly { midOnlyFrameCount += 1 }
            if lost {
                // After a loss the gain is free to restart low (no "bounce back").
                for n in 0..<internalChannels { channelState[n].lastGainIndex = 10 }
            } else {
                previousMidOnly = midOnly
            }
        }
    }

    /// §4.2.3 – §4.2.4: the VAD and LBRR flags of every channel, then the LBRR frames,
    /// which normal decoding reads past.
    private func readHeader(_ rd: inout OpusRangeDecoder, channels: Int, skipRedundancy: Bool) {
        for n in 0..<channels {
            let state = channelState[n]
            for i in 0..<state.framesPerPacket { state.vadFlags[i] = rd.decodeBit(logp: 1) }
            state.lbrrFlag = rd.decodeBit(logp: 1)
        }
        for n in 0..<channels {
            let state = channelState[n]
            for i in 0..<3 { state.lbrrFlags[i] = false }
            guard state.lbrrFlag else { continue }
            if state.framesPerPacket == 1 {
                state.lbrrFlags[0] = true
            } else {
                let table = state.framesPerPacket == 2 ? SILKTables.lbrrFlags2ICDF : SILKTables.lbrrFlags3ICDF
                let symbol = rd.decodeICDF(table, bits: 8) + 1
                for i in 0..<state.framesPerPacket { state.lbrrFlags[i] = (symbol >> i) & 1 == 1 }
            }
        }
        guard skipRedundancy else { return }
        let side = channelState[1]
        for i in 0..<channelState[0].framesPerPacket {
            for n in 0..<channels where channelState[n].lbrrFlags[i] {
                if channels == 2 && n == 0 {
                    _ = SILKStereoState.decodePrediction(&rd)
                    if !side.lbrrFlags[i] { _ = SILKStereoState.decodeMidOnly(&rd) }
                }
                let coding: SILKConditionalCoding = i > 0 && channelState[n].lbrrFlags[i - 1] ? .conditionally : .independently
                channelState[n].skipLBRRFrame(&rd, frameIndex: i, coding: coding)
            }
        }
    }
}

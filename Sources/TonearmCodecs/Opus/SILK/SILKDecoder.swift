import TonearmCore

/// The SILK layer of Opus (RFC 6716 §4.2): linear-prediction speech coding at 8, 12 or
/// 16 kHz, resampled to 48 kHz.
///
/// The interface the Opus decoder calls; its body is being written.
final class SILKDecoder {
    /// `channels`: the Opus stream's channel count (1 or 2); SILK keeps state for both, since
    /// packets may switch between mono and stereo.
    init(channels: Int) {}

    /// Forgets all state between frames (after a seek, or a switch from CELT-only frames).
    func reset() {}

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
        throw AudioError(.unsupportedDataFormat, "Opus SILK frames are not decoded yet")
    }
}

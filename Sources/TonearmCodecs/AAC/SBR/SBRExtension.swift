/// HE-AAC's SBR, plugged into ``AACDecoder/extensionDecoder`` for a stream of one channel
/// element (channel configuration 1 or 2: the mono and stereo HE-AAC of nearly every file
/// and station): the fill elements' SBR payloads go to one ``SBRDecoder``, and each core
/// frame comes out as 2048 samples per channel at the output rate in ``output``.
///
/// The AAC decoder is to read ``output`` (planar, channel c at c × 2048) after each frame in
/// place of its core PCM, and report the output rate and 2048 frames per packet.
final class SBRExtension: AACExtensionDecoder {
    let decoder: SBRDecoder
    let channels: Int
    /// The last frame's output, planar, channel c at c × 2048.
    let output: UnsafeMutablePointer<Float>
    /// Payloads read and refused so far (a refused one turns SBR off until the next header).
    private(set) var payloads = 0
    private(set) var refusedPayloads = 0

    /// - Parameters:
    ///   - outputSampleRate: the extension sampling frequency (twice the core's).
    ///   - channels: the core's, 1 or 2.
    init(outputSampleRate: Int, channels: Int) {
        precondition(channels == 1 || channels == 2)
        decoder = SBRDecoder(outputSampleRate: outputSampleRate, channels: channels)
        self.channels = channels
        output = .allocate(capacity: channels * 2048)
        output.initialize(repeating: 0, count: channels * 2048)
    }

    deinit { output.deallocate() }

    func payload(type: Int, bits: AACBits, bitCount: Int, after: (kind: Int, tag: Int)?) {
        // EXT_SBR_DATA and EXT_SBR_DATA_CRC of the SCE or CPE just read.
        guard type == 13 || type == 14, let after, after.kind == 0 || after.kind == 1 else { return }
        payloads += 1
        if !decoder.parse(bits.base, bitPosition: bits.position, bitCount: min(bitCount, max(0, bits.bitsLeft)),
                          crc: type == 14, elementIsPair: after.kind == 1) {
            refusedPayloads += 1
        }
    }

    func process(core: UnsafeMutablePointer<Float>, channels coreChannels: Int, frameLength: Int) {
        precondition(frameLength == 1024)
        for c in 0..<min(channels, coreChannels) {
            decoder.process(channel: c, core: core + c * frameLength, output: output + c * 2048)
        }
    }

    /// After a seek: the filter banks and the SBR state start afresh.
    func reset() { decoder.resetState() }
}

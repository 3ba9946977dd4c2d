/// HE-AAC's SBR and PS, plugged into ``AACDecoder/extensionDecoder``: one ``SBRDecoder`` per
/// channel element (SCE, CPE and LFE, in the channel configuration's order), so that every
/// core channel comes out as 2048 samples at twice the rate, in ``output``.
///
/// A fill element's EXT_SBR_DATA or EXT_SBR_DATA_CRC payload goes to the decoder of the
/// element it follows. An LFE never carries SBR: its decoder only upsamples it through the
/// QMF banks, as every element without SBR data is upsampled, so that all channels have the
/// same rate and delay. With parametric stereo (a stream of one SCE), the mono element's
/// decoder runs PS and fills two output channels.
final class HEAACExtension: AACExtensionDecoder {
    struct Element {
        let decoder: SBRDecoder
        /// The element's first channel, in the core and in the output (PS adds its second
        /// output channel after the only element).
        let channel: Int
    }
    let elements: [Element]
    /// The output channels: the core's, or 2 for parametric stereo.
    let channels: Int
    let parametricStereo: Bool
    /// The last frame's output, planar, channel c at c × 2048.
    let output: UnsafeMutablePointer<Float>
    /// SBR payloads refused so far (a refused one turns SBR off until the next header).
    private(set) var refusedPayloads = 0
    /// PS payloads refused so far (PS keeps its last parameters over their frames).
    var refusedPSPayloads: Int { elements.reduce(0) { $0 + ($1.decoder.stereo?.refusedPayloads ?? 0) } }

    /// - Parameters:
    ///   - outputSampleRate: the extension sampling frequency (twice the core's).
    ///   - map: the core's channel elements.
    ///   - parametricStereo: PS on a single SCE: the output is stereo.
    init(outputSampleRate: Int, map: AACChannelMap, parametricStereo: Bool) {
        let ps = parametricStereo && map.slots.count == 1 && map.slots[0].kind == .single
        elements = map.slots.map { slot in
            Element(decoder: SBRDecoder(outputSampleRate: outputSampleRate, channels: slot.kind == .pair ? 2 : 1,
                                        parametricStereo: ps),
                    channel: slot.channel)
        }
        self.parametricStereo = ps
        channels = ps ? 2 : map.channels
        output = .allocate(capacity: channels * 2048)
        output.initialize(repeating: 0, count: channels * 2048)
    }

    deinit { output.deallocate() }

    func payload(type: Int, bits: AACBits, bitCount: Int, after: AACElementReference?) {
        // EXT_SBR_DATA and EXT_SBR_DATA_CRC of the SCE or CPE just read.
        guard type == 13 || type == 14, let after, after.kind == 0 || after.kind == 1,
              let element = elements.first(where: { $0.channel == after.channel }),
              element.decoder.channels.count == (after.kind == 1 ? 2 : 1) else { return }
        if !element.decoder.parse(bits.base, bitPosition: bits.position, bitCount: min(bitCount, max(0, bits.bitsLeft)),
                                  crc: type == 14, elementIsPair: after.kind == 1) {
            refusedPayloads += 1
        }
    }

    func process(core: UnsafeMutablePointer<Float>, channels coreChannels: Int, frameLength: Int) {
        precondition(frameLength == 1024)
        for e in elements {
            let out = output + e.channel * 2048
            e.decoder.process(channel: 0, core: core + e.channel * frameLength, output: out,
                              right: parametricStereo ? out + 2048 : nil)
            if e.decoder.channels.count == 2 {
                e.decoder.process(channel: 1, core: core + (e.channel + 1) * frameLength, output: out + 2048)
            }
        }
    }

    /// After a seek or a discontinuity: the filter banks, the SBR and PS state start afresh.
    func reset() { for e in elements { e.decoder.resetState() } }
}

/// The MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1): the AAC magic cookie.
///
/// Read far enough to name Apple's format: the audio object type, the core and extension
/// sampling rates, the channel configuration (from a program_config_element when it is 0),
/// the frame length, and SBR and PS signalling, both explicit (object type 5 or 29 first)
/// and backward-compatible (the 0x2B7 and 0x548 sync extensions after the GASpecificConfig).
package struct AudioSpecificConfig: Equatable, Sendable {
    package var objectType: Int
    package var sampleRate: Double
    package var channels: Int
    /// 1024 or 960 for AAC, 512 or 480 for AAC-LD and ELD.
    package var frameLength: Int
    /// SBR is present (HE-AAC), with the output rate it gives.
    package var sbr = false
    package var extensionSampleRate: Double?
    /// Parametric stereo is present (HE-AAC v2).
    package var ps = false
    /// The config says whether PS is there (object type 29, or the 0x548 sync extension);
    /// when it does not, a mono SBR stream may still carry it.
    package var psSignalled = false
    /// The config says whether SBR is there (explicitly, or with a sync extension); when it
    /// does not, SBR may still hide in the bitstream (implicit signalling).
    package var sbrSignalled = false
    /// The channel configuration (Table 1.19): 1–7 name a layout, 0 leaves it to `program`.
    package var channelConfiguration = 0
    /// The program_config_element of a channel configuration 0.
    package var program: AACProgramConfig?
    /// GASpecificConfig's dependsOnCoreCoder: the stream is a layer over another coder.
    package var dependsOnCoreCoder = false

    package static let rates: [Double] = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    package enum Failure: Error { case short, invalid(String) }

    package static func parse(_ bytes: [UInt8]) throws(AudioError) -> AudioSpecificConfig {
        var r = BitReader(bytes)
        do throws(Failure) {
            return try parse(&r, probingExtension: true)
        } catch {
            switch error {
            case .short: throw AudioError(.unsupportedDataFormat, "the AudioSpecificConfig (\(bytes.count) bytes) ends early")
            case .invalid(let why): throw AudioError(.unsupportedDataFormat, "AudioSpecificConfig: \(why)")
            }
        }
    }

    /// Reads a config from `r`, leaving it after the config. `syncExtension`: look for the
    /// backward-compatible extension after the core config (only where the config's length
    /// is known, so that the bits after it are the config's).
    package static func parse(_ r: inout BitReader, syncExtension: Bool) throws(Failure) -> AudioSpecificConfig {
        try parse(&r, probingExtension: syncExtension)
    }

    private static func bits(_ r: inout BitReader, _ n: Int) throws(Failure) -> Int {
        guard let v = r.read(n) else { throw .short }
        return Int(v)
    }

    private static func objectType(_ r: inout BitReader) throws(Failure) -> Int {
        let t = try bits(&r, 5)
        return t == 31 ? 32 + (try bits(&r, 6)) : t
    }

    private static func rate(_ r: inout BitReader) throws(Failure) -> Double {
        let index = try bits(&r, 4)
        if index == 15 { return Double(try bits(&r, 24)) }
        guard index < rates.count else { throw .invalid("sampling frequency index \(index) is reserved") }
        return rates[index]
    }

    private static func parse(_ r: inout BitReader, probingExtension: Bool) throws(Failure) -> AudioSpecificConfig {
        var type = try objectType(&r)
        let coreRate = try rate(&r)
        var channelConfiguration = try bits(&r, 4)
        var config = AudioSpecificConfig(objectType: type, sampleRate: coreRate, channels: 0, frameLength: 1024)
        var explicitExtension = false
        if type == 5 || type == 29 {
            // Explicit hierarchical signalling: the extension rate, then the core's object type.
            explicitExtension = true
            config.sbrSignalled = true
            config.sbr = true
            config.ps = type == 29
            config.psSignalled = type == 29
            config.extensionSampleRate = try rate(&r)
            type = try objectType(&r)
            if type == 22 { channelConfiguration = try bits(&r, 4) }
            config.objectType = type
        }
        var channels = channelConfigurationChannels(channelConfiguration)
        var parsedGA = false
        switch type {
        case 1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23:
            // GASpecificConfig (§4.4.1).
            let frameLengthFlag = try bits(&r, 1)
            if type == 23 { config.frameLength = frameLengthFlag == 1 ? 480 : 512 }
            else { config.frameLength = frameLengthFlag == 1 ? 960 : 1024 }
            config.dependsOnCoreCoder = try bits(&r, 1) == 1
            if config.dependsOnCoreCoder { _ = try bits(&r, 14) }  // coreCoderDelay
            let extensionFlag = try bits(&r, 1)
            if channelConfiguration == 0 {
                let pce = try AACProgramConfig.parse(&r)
                config.program = pce
                channels = pce.channels
            }
            if type == 6 || type == 20 { _ = try bits(&r, 3) }  // layerNr
            if extensionFlag == 1 {
                if type == 22 { _ = try bits(&r, 5); _ = try bits(&r, 11) }
                if type == 17 || type == 19 || type == 20 || type == 23 { _ = try bits(&r, 3) }
                _ = try bits(&r, 1)  // extensionFlag3
            }
            parsedGA = true
            // The error-resilient types end with an epConfig.
            if type >= 17 { _ = try bits(&r, 2) }
        case 39:
            // ELD: frameLengthFlag first (§4.6.20.3); the rest is not needed to name the format.
            config.frameLength = try bits(&r, 1) == 1 ? 480 : 512
        default:
            break
        }
        config.channels = channels
        config.channelConfiguration = channelConfiguration
        // Backward-compatible signalling (§1.6.5.2): a sync extension after the core config.
        if probingExtension && parsedGA && !explicitExtension && r.bitsRemaining >= 16 {
            if try bits(&r, 11) == 0x2B7 {
                let extensionType = try objectType(&r)
                if extensionType == 5 {
                    config.sbrSignalled = true
                    if try bits(&r, 1) == 1 {
                        config.sbr = true
                        config.extensionSampleRate = try rate(&r)
                        if r.bitsRemaining >= 12, try bits(&r, 11) == 0x548 {
                            config.ps = try bits(&r, 1) == 1
                            config.psSignalled = true
                        }
                    }
                }
            }
        }
        guard config.channels > 0 else { throw .invalid("channel configuration \(channelConfiguration) gives no channels") }
        return config
    }

    /// Channels of a channelConfiguration (Table 1.19); 0 when a PCE must say.
    package static func channelConfigurationChannels(_ c: Int) -> Int {
        switch c {
        case 1...6: return c
        case 7: return 8
        case 11: return 7
        case 12, 14: return 8
        default: return 0
        }
    }

    /// Apple's format ID for this configuration.
    package var formatID: AudioFormatID {
        if ps { return .mpeg4AAC_HE_V2 }
        if sbr { return .mpeg4AAC_HE }
        switch objectType {
        case 23: return .mpeg4AAC_LD
        case 39: return .mpeg4AAC_ELD
        default: return .mpeg4AAC
        }
    }

    /// The stream description Apple gives: the output rate and channels, and the frames one
    /// packet decodes to (doubled by SBR).
    package var streamDescription: StreamDescription {
        let outRate = sbr ? (extensionSampleRate ?? sampleRate * 2) : sampleRate
        let outChannels = ps ? 2 : channels
        let frames = sbr ? frameLength * 2 : frameLength
        return StreamDescription(sampleRate: outRate, formatID: formatID, bytesPerPacket: 0, framesPerPacket: UInt32(frames),
                                 bytesPerFrame: 0, channelsPerFrame: UInt32(outChannels), bitsPerChannel: 0)
    }

}

/// A program_config_element (ISO/IEC 14496-3 §4.4.1.1, Table 4.2; semantics §4.5.1.2): the
/// channel elements of a program, in the order their channels are output (front, side and
/// back speakers, from the centre outwards, then the LFEs), and the coupling channels.
package struct AACProgramConfig: Equatable, Sendable {
    /// One speaker element: a channel pair (CPE) or a single channel (SCE or LFE), by tag.
    package struct Element: Equatable, Sendable {
        package var isPair: Bool
        package var tag: Int
    }
    package var instanceTag = 0
    package var objectType = 0
    package var samplingFrequencyIndex = 0
    package var front: [Element] = []
    package var side: [Element] = []
    package var back: [Element] = []
    /// LFE elements (never pairs).
    package var lfe: [Element] = []
    /// Coupling channel elements by tag, with whether they are independently switched.
    package var coupling: [(independent: Bool, tag: Int)] = []

    /// The output channels, in order.
    package var channels: Int {
        (front + side + back).reduce(0) { $0 + ($1.isPair ? 2 : 1) } + lfe.count
    }

    package static func == (a: AACProgramConfig, b: AACProgramConfig) -> Bool {
        a.instanceTag == b.instanceTag && a.objectType == b.objectType && a.samplingFrequencyIndex == b.samplingFrequencyIndex
            && a.front == b.front && a.side == b.side && a.back == b.back && a.lfe == b.lfe
            && a.coupling.map(\.independent) == b.coupling.map(\.independent) && a.coupling.map(\.tag) == b.coupling.map(\.tag)
    }

    /// Reads one element from `r`, which is left after it. The comment field's byte
    /// alignment is counted from the start of `r`'s bytes: the config's, or the raw data
    /// block's when the element comes in the bitstream.
    package static func parse(_ r: inout BitReader) throws(AudioSpecificConfig.Failure) -> AACProgramConfig {
        func bits(_ n: Int) throws(AudioSpecificConfig.Failure) -> Int {
            guard let v = r.read(n) else { throw .short }
            return Int(v)
        }
        var p = AACProgramConfig()
        p.instanceTag = try bits(4)
        p.objectType = try bits(2)
        p.samplingFrequencyIndex = try bits(4)
        let front = try bits(4), side = try bits(4), back = try bits(4)
        let lfe = try bits(2), assoc = try bits(3), cc = try bits(4)
        if try bits(1) == 1 { _ = try bits(4) }  // mono_mixdown
        if try bits(1) == 1 { _ = try bits(4) }  // stereo_mixdown
        if try bits(1) == 1 { _ = try bits(3) }  // matrix_mixdown
        for _ in 0..<front { p.front.append(Element(isPair: try bits(1) == 1, tag: try bits(4))) }
        for _ in 0..<side { p.side.append(Element(isPair: try bits(1) == 1, tag: try bits(4))) }
        for _ in 0..<back { p.back.append(Element(isPair: try bits(1) == 1, tag: try bits(4))) }
        for _ in 0..<lfe { p.lfe.append(Element(isPair: false, tag: try bits(4))) }
        for _ in 0..<assoc { _ = try bits(4) }
        for _ in 0..<cc { p.coupling.append((independent: try bits(1) == 1, tag: try bits(4))) }
        r.alignToByte()
        let comment = try bits(8)
        guard r.skip(comment * 8) else { throw .short }
        return p
    }

    /// Writes the element as `parse` reads it: no mixdowns, associated data or comment
    /// (which decoding does not use), its byte alignment counted from the start of `w`.
    package func write(to w: inout BitWriter) {
        w.write(UInt32(instanceTag), bits: 4)
        w.write(UInt32(objectType), bits: 2)
        w.write(UInt32(samplingFrequencyIndex), bits: 4)
        for (list, width) in [(front, 4), (side, 4), (back, 4), (lfe, 2)] { w.write(UInt32(list.count), bits: width) }
        w.write(0, bits: 3)  // associated data elements
        w.write(UInt32(coupling.count), bits: 4)
        w.write(0, bits: 3)  // no mono, stereo or matrix mixdown
        for e in front + side + back {
            w.write(e.isPair ? 1 : 0, bits: 1)
            w.write(UInt32(e.tag), bits: 4)
        }
        for e in lfe { w.write(UInt32(e.tag), bits: 4) }
        for c in coupling {
            w.write(c.independent ? 1 : 0, bits: 1)
            w.write(UInt32(c.tag), bits: 4)
        }
        w.alignToByte()
        w.write(0, bits: 8)  // comment_field_bytes
    }
}

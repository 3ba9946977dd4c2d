/// The 32-bit header of an MPEG audio frame (ISO/IEC 11172-3 and 13818-3, and the
/// unofficial MPEG-2.5 extension to 8–12 kHz).
///
/// | bits | field |
/// |---|---|
/// | 11 | sync, all ones |
/// | 2 | version: 00 MPEG-2.5, 01 reserved, 10 MPEG-2, 11 MPEG-1 |
/// | 2 | layer: 01 III, 10 II, 11 I, 00 reserved |
/// | 1 | protection: 0 when a 16-bit CRC follows the header |
/// | 4 | bit rate index (0 free format, 15 invalid) |
/// | 2 | sample rate index (3 reserved) |
/// | 1 | padding: one slot more (4 bytes in layer I, 1 byte otherwise) |
/// | 1 | private |
/// | 2 | channel mode: 00 stereo, 01 joint stereo, 10 dual channel, 11 mono |
/// | 2 | mode extension · 1 copyright · 1 original · 2 emphasis |
public struct MPEGAudioHeader: Sendable, Equatable {
    public enum Version: Int, Sendable { case mpeg1 = 1, mpeg2 = 2, mpeg25 = 25 }

    public var version: Version
    /// 1, 2 or 3.
    public var layer: Int
    public var hasCRC: Bool
    /// Bits per second.
    public var bitRate: Int
    public var sampleRate: Int
    public var padding: Bool
    /// 0 stereo, 1 joint stereo, 2 dual channel, 3 mono.
    public var channelMode: Int
    /// Layer III: bit 1 mid/side, bit 0 intensity stereo. Layers I and II: the first
    /// subband coded as intensity stereo is 4 × (1 + this).
    public var modeExtension: Int
    /// 0 none, 1 50/15 µs, 3 CCITT J.17.
    public var emphasis: Int
    /// The bit rate index (1–14, or 0 for free format), which layer II's allocation tables
    /// depend on.
    public var bitRateIndex: Int
    /// Free format: bytes of a frame without its padding slot; 0 otherwise.
    public private(set) var freeFormatLength: Int
    public var isFreeFormat: Bool { freeFormatLength > 0 }
    let versionBits: UInt32
    let rateIndex: UInt32

    /// Bit rates in kbit/s by index 1–14: MPEG-1 layers I, II, III, then MPEG-2/2.5 layer I,
    /// and MPEG-2/2.5 layers II and III.
    static let bitRates: [[Int]] = [
        [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
        [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
        [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
        [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
        [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    ]
    /// Sample rates of MPEG-1 by index; MPEG-2 halves and MPEG-2.5 quarters them.
    static let mpeg1Rates = [44100, 48000, 32000]

    /// Every sample rate, MPEG-1's, MPEG-2's, then MPEG-2.5's, in the order of
    /// ``sampleRateIndex`` (the order of the standards' per-rate tables).
    public static let sampleRates = [44100, 48000, 32000, 22050, 24000, 16000, 11025, 12000, 8000]

    /// This header's rate in ``sampleRates``: 0–2 MPEG-1, 3–5 MPEG-2, 6–8 MPEG-2.5.
    public var sampleRateIndex: Int { (version == .mpeg1 ? 0 : version == .mpeg2 ? 3 : 6) + Int(rateIndex) }

    /// The header of the smallest layer III frame at `sampleRate` (bit rate index 1, with a
    /// CRC), mono or stereo; nil for a rate MPEG audio does not have.
    public static func smallestLayer3Frame(sampleRate: Int, channels: Int) -> MPEGAudioHeader? {
        guard let i = sampleRates.firstIndex(of: sampleRate) else { return nil }
        let version: UInt32 = i < 3 ? 3 : i < 6 ? 2 : 0
        return MPEGAudioHeader(0xFFE0_0000 | version << 19 | 1 << 17 | 1 << 12 | UInt32(i % 3) << 10
            | (channels == 1 ? 3 : 0) << 6)
    }

    /// Reads a header word; nil when it is not a valid header (free format included).
    public init?(_ word: UInt32) { self.init(word, freeFormatLength: 0) }

    /// Reads a header word, free format included when `freeFormatLength` (the stream's frame
    /// length in bytes without the padding slot, which only the distance between two frames
    /// tells) is above 0: the bit rate is then the one that length implies.
    public init?(_ word: UInt32, freeFormatLength: Int) {
        guard word & 0xFFE0_0000 == 0xFFE0_0000 else { return nil }
        let v = word >> 19 & 3, l = word >> 17 & 3, b = word >> 12 & 0xF, r = word >> 10 & 3
        guard v != 1, l != 0, b != 0 || freeFormatLength > 0, b != 15, r != 3 else { return nil }
        versionBits = v
        rateIndex = r
        version = v == 3 ? .mpeg1 : v == 2 ? .mpeg2 : .mpeg25
        layer = 4 - Int(l)
        hasCRC = word >> 16 & 1 == 0
        sampleRate = MPEGAudioHeader.mpeg1Rates[Int(r)] >> (version == .mpeg1 ? 0 : version == .mpeg2 ? 1 : 2)
        if b == 0 {
            // Layer I counts 4-byte slots; a frame holds samplesPerFrame / 8 bits per bit/s.
            let slots = layer == 1 ? freeFormatLength / 4 * 4 : freeFormatLength
            let perFrame = layer == 1 ? 384 : layer == 2 || version == .mpeg1 ? 1152 : 576
            guard slots > 0 else { return nil }
            self.freeFormatLength = slots
            bitRate = slots * 8 * sampleRate / perFrame
        } else {
            let table = version == .mpeg1 ? layer - 1 : (layer == 1 ? 3 : 4)
            bitRate = MPEGAudioHeader.bitRates[table][Int(b) - 1] * 1000
            self.freeFormatLength = 0
        }
        padding = word >> 9 & 1 == 1
        channelMode = Int(word >> 6 & 3)
        modeExtension = Int(word >> 4 & 3)
        emphasis = Int(word & 3)
        bitRateIndex = Int(b)
    }

    /// True when the word is a valid header except that its bit rate index is 0 (free format).
    public static func isFreeFormat(_ word: UInt32) -> Bool {
        word & 0xFFE0_0000 == 0xFFE0_0000 && word >> 19 & 3 != 1 && word >> 17 & 3 != 0
            && word >> 12 & 0xF == 0 && word >> 10 & 3 != 3
    }

    public var channels: Int { channelMode == 3 ? 1 : 2 }

    /// Bytes before the audio data: the header and, when present, the CRC.
    public var headerLength: Int { hasCRC ? 6 : 4 }

    /// PCM frames per audio frame: 384 for layer I, 1152 for layer II and MPEG-1 layer III,
    /// 576 for MPEG-2/2.5 layer III.
    public var samplesPerFrame: Int {
        switch layer {
        case 1: return 384
        case 2: return 1152
        default: return version == .mpeg1 ? 1152 : 576
        }
    }

    /// Bytes of the whole frame, header included.
    public var frameLength: Int {
        if freeFormatLength > 0 { return freeFormatLength + (padding ? (layer == 1 ? 4 : 1) : 0) }
        if layer == 1 { return (12 * bitRate / sampleRate + (padding ? 1 : 0)) * 4 }
        // A slot is one byte; a frame holds samplesPerFrame / 8 bits per bit/s of rate.
        return samplesPerFrame / 8 * bitRate / sampleRate + (padding ? 1 : 0)
    }

    /// Bytes of the layer III side information after the header (and CRC).
    public var sideInfoSize: Int {
        if version == .mpeg1 { return channels == 1 ? 17 : 32 }
        return channels == 1 ? 9 : 17
    }

    /// What consecutive frames of one stream share: version, layer and sample rate. The
    /// channel mode may change from frame to frame (ISO/IEC 11172-4's `he_mode` switches
    /// between mono and stereo), so it is not part of it.
    public var streamKey: UInt32 { versionBits << 8 | UInt32(layer) << 4 | rateIndex << 1 }

    /// The largest frame this stream's version, layer and rate allow.
    public var largestFrameLength: Int {
        if freeFormatLength > 0 { return freeFormatLength + (layer == 1 ? 4 : 1) }
        var h = self
        let table = version == .mpeg1 ? layer - 1 : (layer == 1 ? 3 : 4)
        h.bitRate = MPEGAudioHeader.bitRates[table][13] * 1000
        h.padding = true
        return h.frameLength
    }

    public var formatID: AudioFormatID { layer == 1 ? .mpegLayer1 : layer == 2 ? .mpegLayer2 : .mpegLayer3 }
    public var fileType: AudioFileTypeID { layer == 1 ? .mp1 : layer == 2 ? .mp2 : .mp3 }
    public var versionName: String { version == .mpeg1 ? "MPEG-1" : version == .mpeg2 ? "MPEG-2" : "MPEG-2.5" }
}

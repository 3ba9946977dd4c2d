import TonearmCore
import TonearmFormats

/// The 7-byte ADTS header (ISO/IEC 13818-7 §6.2, no CRC) that makes a raw AAC access unit a
/// frame of an `.aac` file: what ``StreamDecoder`` puts before each AAC packet it records from
/// an HLS transport stream or packed-audio segment.
package struct ADTSHeaderWriter {
    private let profile: Int
    private let frequencyIndex: Int
    private let channelConfiguration: Int

    /// From an AudioSpecificConfig: the core object type (LC for HE-AAC, whose SBR and PS the
    /// decoder finds in the frames) at the core rate. nil for what ADTS cannot carry.
    package init?(magicCookie: [UInt8]?) {
        guard let cookie = magicCookie, !cookie.isEmpty else { return nil }
        var r = BitReader(cookie)
        guard let config = try? AACAudioConfig.read(&r) else { return nil }
        let objectType = config.coreObjectType ?? config.objectType
        guard (1...4).contains(objectType), (1...7).contains(config.channelConfiguration),
              let index = AACAudioConfig.sampleRates.firstIndex(of: config.sampleRate) else { return nil }
        profile = objectType - 1
        frequencyIndex = index
        channelConfiguration = config.channelConfiguration
    }

    /// The header of a frame whose payload is `payloadLength` bytes.
    package func header(payloadLength: Int) -> [UInt8] {
        let length = min(payloadLength + 7, 0x1FFF)
        return [
            0xFF, 0xF1,  // sync, MPEG-4, layer 0, no CRC
            UInt8(profile << 6 | frequencyIndex << 2 | (channelConfiguration >> 2) & 1),
            UInt8((channelConfiguration & 3) << 6 | (length >> 11) & 3),
            UInt8((length >> 3) & 0xFF),
            UInt8((length & 7) << 5 | 0x1F),  // buffer fullness 0x7FF: variable rate
            0xFC,  // …and one raw data block
        ]
    }
}

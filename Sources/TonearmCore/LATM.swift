/// LATM's AudioMuxElement with its configuration in band (ISO/IEC 14496-3 §1.7.3, Tables
/// 1.41–1.44), as LOAS carries it: shared by the LOAS parser, which takes the
/// AudioSpecificConfig from it, and the AAC decoder, which takes the payload.
///
/// Read: audioMuxVersion 0 and 1 with audioMuxVersionA 0, one program, one layer, all
/// streams with the same time framing, one subframe, and frameLengthType 0 (payload
/// lengths in bytes).
package enum LATM {
    package enum Failure: Error {
        case short
        case unsupported(String)
        case invalid(String)
    }

    /// A StreamMuxConfig: the AudioSpecificConfig and where its bits lie in the element.
    package struct MuxConfig {
        package var config: AudioSpecificConfig
        package var ascStart: Int
        package var ascEnd: Int
    }

    /// Reads `useSameStreamMux` and, when it is 0, the StreamMuxConfig after it (nil when
    /// the element reuses an earlier one). `r` is left at the PayloadLengthInfo.
    package static func readMuxConfig(_ r: inout BitReader) throws(Failure) -> MuxConfig? {
        func bits(_ n: Int) throws(Failure) -> Int {
            guard let v = r.read(n) else { throw .short }
            return Int(v)
        }
        /// LatmGetValue: 2 bits giving 1–4 more bytes.
        func latmValue() throws(Failure) -> Int {
            let count = try bits(2)
            var v = 0
            for _ in 0...count { v = v << 8 | (try bits(8)) }
            return v
        }
        if try bits(1) == 1 { return nil }  // useSameStreamMux
        let version = try bits(1)
        let versionA = version == 1 ? try bits(1) : 0
        guard versionA == 0 else { throw .unsupported("audioMuxVersionA 1") }
        if version == 1 { _ = try latmValue() }  // taraBufferFullness
        guard try bits(1) == 1 else { throw .unsupported("streams of different time framing") }
        guard try bits(6) == 0 else { throw .unsupported("several subframes per element") }
        guard try bits(4) == 0 else { throw .unsupported("several programs") }
        guard try bits(3) == 0 else { throw .unsupported("several layers") }
        var ascLength: Int?
        if version == 1 { ascLength = try latmValue() }
        let ascStart = r.bitPosition
        let config: AudioSpecificConfig
        do throws(AudioSpecificConfig.Failure) {
            config = try AudioSpecificConfig.parse(&r, syncExtension: false)
        } catch {
            switch error {
            case .short: throw .short
            case .invalid(let why): throw .invalid(why)
            }
        }
        var ascEnd = r.bitPosition
        if let ascLength {
            // The length covers the config and any extension after it.
            guard ascLength >= ascEnd - ascStart else { throw .invalid("the LATM config length is too short") }
            ascEnd = ascStart + ascLength
            guard r.skip(ascEnd - r.bitPosition) else { throw .short }
        }
        guard try bits(3) == 0 else { throw .unsupported("a frame length type other than 0") }
        _ = try bits(8)  // latmBufferFullness
        if try bits(1) == 1 {  // otherDataPresent
            if version == 1 {
                _ = try latmValue()
            } else {
                var escape = true
                while escape {
                    escape = try bits(1) == 1
                    _ = try bits(8)
                }
            }
        }
        if try bits(1) == 1 { _ = try bits(8) }  // crcCheckPresent, crcCheckSum
        return MuxConfig(config: config, ascStart: ascStart, ascEnd: ascEnd)
    }

    /// PayloadLengthInfo for frameLengthType 0: bytes of 255 add up until a smaller one.
    package static func readPayloadLength(_ r: inout BitReader) throws(Failure) -> Int {
        var length = 0
        while true {
            guard let v = r.read(8) else { throw .short }
            length += Int(v)
            if v != 255 { return length }
        }
    }

    /// Whether a packet is a whole LOAS frame (the LOAS parser hands them so, since the
    /// payload inside is not byte-aligned): the AudioSyncStream's sync word, and a length
    /// that is the packet's.
    package static func isLOASFrame(_ b: UnsafeRawBufferPointer) -> Bool {
        b.count > 3 && b[0] == 0x56 && b[1] & 0xE0 == 0xE0 && (Int(b[1] & 0x1F) << 8 | Int(b[2])) + 3 == b.count
    }

    /// The raw_data_block inside a whole LOAS frame's AudioMuxElement, realigned to bytes
    /// into `out` (room for `frame.count` bytes): its byte count; nil when the element cannot
    /// be read or its payload is cut short.
    package static func loasPayload(_ frame: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) -> Int? {
        var r = BitReader([UInt8](frame), byteOffset: 3)
        let length: Int
        do throws(Failure) {
            _ = try readMuxConfig(&r)
            length = try readPayloadLength(&r)
        } catch {
            return nil
        }
        guard length > 0, length * 8 <= r.bitsRemaining else { return nil }
        let start = r.bitPosition >> 3, shift = r.bitPosition & 7
        for i in 0..<length {
            let high = frame[start + i], low = start + i + 1 < frame.count ? frame[start + i + 1] : 0
            out[i] = shift == 0 ? high : high << shift | low >> (8 - shift)
        }
        return length
    }
}

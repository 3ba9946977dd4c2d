import TonearmCore

/// The OpusHead packet (RFC 7845 §5.1), Opus's magic cookie in Ogg and Matroska: the
/// channel count, the output gain and the channel mapping.
struct OpusHead: Sendable {
    var channels: Int
    var preSkip: Int
    /// Q7.8 dB, applied to the output.
    var outputGain: Int
    var mappingFamily: Int
    /// Elementary streams, and how many of them (the first) are stereo.
    var streams: Int
    var coupledStreams: Int
    /// Per output channel, the decoded channel it takes (255: silence).
    var mapping: [Int]

    static func parse(_ p: [UInt8]) throws(AudioError) -> OpusHead {
        guard p.count >= 19, Array(p[0..<8]) == Array("OpusHead".utf8) else {
            throw AudioError(.unsupportedDataFormat, "the Opus magic cookie is not an OpusHead packet")
        }
        guard p[8] >> 4 == 0 else { throw AudioError(.unsupportedDataFormat, "OpusHead version \(p[8])") }
        let channels = Int(p[9])
        guard channels > 0 else { throw AudioError(.unsupportedDataFormat, "OpusHead gives 0 channels") }
        let preSkip = Int(p[10]) | Int(p[11]) << 8
        let gain = Int(Int16(bitPattern: UInt16(p[16]) | UInt16(p[17]) << 8))
        let family = Int(p[18])
        if family == 0 {
            guard channels <= 2 else { throw AudioError(.unsupportedDataFormat, "Opus mapping family 0 with \(channels) channels") }
            return OpusHead(channels: channels, preSkip: preSkip, outputGain: gain, mappingFamily: 0, streams: 1,
                            coupledStreams: channels - 1, mapping: Array(0..<channels))
        }
        guard p.count >= 21 + channels else { throw AudioError(.unsupportedDataFormat, "OpusHead's channel mapping is cut short") }
        let streams = Int(p[19]), coupled = Int(p[20])
        guard streams >= 1, coupled <= streams, streams + coupled <= 255 else {
            throw AudioError(.unsupportedDataFormat, "OpusHead gives \(streams) streams, \(coupled) coupled")
        }
        if family == 1 {
            guard channels <= 8 else { throw AudioError(.unsupportedDataFormat, "Opus mapping family 1 with \(channels) channels") }
        } else if family != 255 {
            throw AudioError(.unsupportedDataFormat, "Opus channel mapping family \(family)")
        }
        var mapping: [Int] = []
        for i in 0..<channels {
            let m = Int(p[21 + i])
            guard m == 255 || m < streams + coupled else {
                throw AudioError(.unsupportedDataFormat, "OpusHead maps channel \(i) to stream channel \(m)")
            }
            mapping.append(m)
        }
        return OpusHead(channels: channels, preSkip: preSkip, outputGain: gain, mappingFamily: family, streams: streams,
                        coupledStreams: coupled, mapping: mapping)
    }
}

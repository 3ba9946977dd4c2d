/// The three header packets of a Vorbis stream (identification, comment, setup) as one block
/// of bytes: the form Matroska's CodecPrivate, an MP4 esds and Tonearm's magic cookie hold.
public enum VorbisHeaderPackets {
    /// Splits the block. Xiph lacing: a byte (count − 1, so 2), the sizes of all but the last
    /// packet as runs of 255 ended by a byte below 255, then the packets. Also the form
    /// FFmpeg's extradata takes (and its demuxers may hand over): each packet after its size
    /// in 16 bits, big-endian, which begins 00 1E since the identification header is 30 bytes.
    /// - Throws: 'fmt?' when the block is neither, or is cut short.
    public static func split(_ c: [UInt8]) throws(AudioError) -> [[UInt8]] {
        if c.count >= 2, c[0] == 0, c[1] == 30 {
            var packets: [[UInt8]] = []
            var at = 0
            for _ in 0..<3 {
                guard at + 2 <= c.count else { break }
                let size = Int(c[at]) << 8 | Int(c[at + 1])
                at += 2
                guard size <= c.count - at else { break }
                packets.append(Array(c[at..<at + size]))
                at += size
            }
            guard packets.count == 3 else {
                throw AudioError(.unsupportedDataFormat, "the Vorbis headers' length-prefixed packets are cut short")
            }
            return packets
        }
        guard c.count >= 3, c[0] == 2 else {
            throw AudioError(.unsupportedDataFormat, "the Vorbis headers are not three packets in Xiph lacing")
        }
        var at = 1
        var sizes: [Int] = []
        for _ in 0..<2 {
            var size = 0
            while true {
                guard at < c.count else { throw AudioError(.unsupportedDataFormat, "the Vorbis headers' lacing is cut short") }
                let b = Int(c[at])
                at += 1
                size += b
                if b < 255 { break }
            }
            sizes.append(size)
        }
        guard sizes[0] + sizes[1] <= c.count - at else {
            throw AudioError(.unsupportedDataFormat, "the Vorbis header packets are cut short")
        }
        let b = at + sizes[0], e = b + sizes[1]
        return [Array(c[at..<b]), Array(c[b..<e]), Array(c[e...])]
    }
}

/// The TOC byte that begins every Opus packet (RFC 6716 §3.1): what a container needs to time
/// a packet, and what the decoder reads its frame size from.
public enum OpusTOC {
    /// Samples per frame at 48 kHz for the TOC's configuration (Table 2): 480 to 2880 for
    /// SILK (10 to 60 ms), 480 or 960 for hybrid, 120 to 960 for CELT (2.5 to 20 ms).
    public static func frameSize(_ toc: UInt8) -> Int {
        let config = Int(toc >> 3)
        switch config {
        case 0..<12: return config & 3 == 3 ? 2880 : 480 << (config & 3)  // 10, 20, 40, 60 ms
        case 12..<16: return config & 1 == 0 ? 480 : 960
        default: return 120 << (config & 3)
        }
    }

    /// Samples at 48 kHz the packet decodes to: the frame size times the frame count (§3.2:
    /// 1 for code 0, 2 for codes 1 and 2, the count byte's for code 3). 0 when the packet is
    /// empty, a code-3 packet has no count byte, or the total passes 120 ms (§3.4 [R5]).
    public static func packetFrames(_ p: UnsafeRawBufferPointer) -> Int {
        guard let toc = p.first else { return 0 }
        let count: Int
        switch toc & 3 {
        case 0: count = 1
        case 1, 2: count = 2
        default:
            guard p.count >= 2 else { return 0 }
            count = Int(p[1] & 0x3F)
        }
        let total = count * frameSize(toc)
        return total <= 5760 ? total : 0
    }
}

/// G.711 expansion tables, computed at start-up from the Recommendation's definitions and
/// scaled to 16 bits as FFmpeg's `pcm_mulaw` / `pcm_alaw` decoders and Apple's produce.
enum G711Tables {
    /// μ-law (ITU-T G.711 §3, Table 2a). The code is sent with every bit inverted; after
    /// inverting, bit 7 is the sign (set: negative), bits 6–4 the segment `e` and bits 3–0
    /// the step `m`. The decoded magnitude in the 14-bit domain is (2m + 33)·2^e − 33, and
    /// 16-bit output is four times that.
    static let uLaw: [Int16] = (0..<256).map { code in
        let u = ~UInt8(code)
        let e = Int(u >> 4 & 7), m = Int(u & 0x0F)
        let magnitude = ((2 * m + 33) << e - 33) * 4
        return Int16(u & 0x80 != 0 ? -magnitude : magnitude)
    }

    /// A-law (ITU-T G.711 §2, Table 1a). The even bits are inverted on the line (XOR 0x55);
    /// after that, bit 7 set means positive, bits 6–4 are the segment `e` and bits 3–0 the
    /// step `m`. The decoded magnitude in the 13-bit domain is 2m + 1 in segment 0 and
    /// (2m + 33)·2^(e−1) above it, and 16-bit output is eight times that.
    static let aLaw: [Int16] = (0..<256).map { code in
        let a = UInt8(code) ^ 0x55
        let e = Int(a >> 4 & 7), m = Int(a & 0x0F)
        let magnitude = (e == 0 ? 2 * m + 1 : (2 * m + 33) << (e - 1)) * 8
        return Int16(a & 0x80 != 0 ? magnitude : -magnitude)
    }
}

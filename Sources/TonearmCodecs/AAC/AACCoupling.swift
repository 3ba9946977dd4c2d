/// coupling_channel_element (§4.4.2.1, Table 4.8; §4.6.12).
enum AACCoupling {
    /// Reads a CCE so that the elements after it can be decoded, and leaves its channel
    /// out: its individual_channel_stream decodes into `stream` (whose content the caller
    /// does not use), then the gain element lists are read and dropped.
    static func skip(_ r: inout AACBits, _ t: AACStreamTables, stream s: AACChannelStream, random: inout UInt32) throws(AACDamage) {
        _ = r.read(4)  // element_instance_tag
        let independentlySwitched = r.bit()
        let coupled = r.read(3) + 1
        var gainLists = 0
        for _ in 0..<coupled {
            gainLists += 1
            if r.bit() {  // cc_target_is_cpe
                _ = r.read(4)
                let left = r.bit(), right = r.bit()
                if left && right { gainLists += 1 }
            } else {
                _ = r.read(4)
            }
        }
        _ = r.read(1 + 1 + 2)  // cc_domain, gain_element_sign, gain_element_scale
        let gain = r.read(8)
        try AACChannelStream.readInfo(&r, t, into: &s.info)
        try s.read(&r, t, globalGain: gain, random: &random)
        let book = AACHuffman.scaleFactors
        for _ in 1..<max(gainLists, 1) {
            let common = independentlySwitched ? true : r.bit()
            if common {
                _ = book.decode(&r)
            } else {
                for g in 0..<s.info.groupCount {
                    for b in 0..<s.info.maxSFB where s.bandTypes[g * 64 + b] != AACBandType.zero {
                        _ = book.decode(&r)
                    }
                }
            }
            guard !r.overrun else { throw .truncated }
        }
    }
}

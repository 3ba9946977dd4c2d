import TonearmCore

/// One granule of one channel in layer III's side information.
struct Layer3GranuleInfo {
    var part23Length = 0
    var bigValues = 0
    var globalGain = 0
    var scalefacCompress = 0
    var blockType = 0
    var mixed = false
    var tableSelect = (0, 0, 0)
    var subblockGain = (0, 0, 0)
    var region0Count = 0
    var region1Count = 0
    var preflag = false
    var scalefacScale = false
    var count1TableB = false
    var windowSwitching = false

    var isShort: Bool { blockType == 2 }
}

/// Layer III side information (ISO/IEC 11172-3 2.4.1.7; 13818-3 2.4.1.7 for LSF).
struct Layer3SideInfo {
    var mainDataBegin = 0
    /// MPEG-1: scale factor selection, 4 bits per channel.
    var scfsi = (0, 0)
    /// [granule × 2 + channel]
    var granules = [Layer3GranuleInfo](repeating: Layer3GranuleInfo(), count: 4)

    /// Parses the side information after the header (and CRC); false when it is not valid
    /// (a big_values beyond 288, or a window switch to block type 0).
    mutating func parse(_ frame: UnsafeRawBufferPointer, header h: MPEGAudioHeader) -> Bool {
        let mpeg1 = h.version == .mpeg1
        let channels = h.channels
        var r = MPEGBits(frame, bitPosition: h.headerLength * 8)
        if mpeg1 {
            mainDataBegin = r.read(9)
            _ = r.read(channels == 1 ? 5 : 3)
            scfsi.0 = r.read(4)
            scfsi.1 = channels == 2 ? r.read(4) : 0
        } else {
            mainDataBegin = r.read(8)
            _ = r.read(channels == 1 ? 1 : 2)
            scfsi = (0, 0)
        }
        for gr in 0..<(mpeg1 ? 2 : 1) {
            for ch in 0..<channels {
                var g = Layer3GranuleInfo()
                g.part23Length = r.read(12)
                g.bigValues = r.read(9)
                g.globalGain = r.read(8)
                g.scalefacCompress = r.read(mpeg1 ? 4 : 9)
                g.windowSwitching = r.read(1) == 1
                if g.windowSwitching {
                    g.blockType = r.read(2)
                    g.mixed = r.read(1) == 1
                    g.tableSelect = (r.read(5), r.read(5), 0)
                    g.subblockGain = (r.read(3), r.read(3), r.read(3))
                    // The regions are implicit: region 1 starts at 36 lines (short: 3
                    // short bands) and runs to the end.
                    if g.blockType == 0 { return false }
                    g.region0Count = g.blockType == 2 && !g.mixed ? 8 : 7
                    g.region1Count = 36
                } else {
                    g.tableSelect = (r.read(5), r.read(5), r.read(5))
                    g.region0Count = r.read(4)
                    g.region1Count = r.read(3)
                }
                if mpeg1 { g.preflag = r.read(1) == 1 }
                g.scalefacScale = r.read(1) == 1
                g.count1TableB = r.read(1) == 1
                if g.bigValues > 288 { return false }
                granules[gr * 2 + ch] = g
            }
        }
        return true
    }
}

/// An Opus frame's audio bandwidth (RFC 6716 §2, Table 1), from its TOC byte: what SILK and
/// CELT decode up to.
enum OpusBandwidth: Int, Comparable, Sendable {
    /// 4 kHz, SILK's 8 kHz internal rate.
    case narrow = 0
    /// 6 kHz, SILK's 12 kHz.
    case medium
    /// 8 kHz, SILK's 16 kHz.
    case wide
    /// 12 kHz (hybrid or CELT).
    case superWide
    /// 20 kHz (hybrid or CELT).
    case full

    /// SILK's internal sample rate for this bandwidth (16 kHz for the hybrid ones, whose
    /// SILK part is wideband).
    var silkSampleRate: Int {
        switch self {
        case .narrow: 8000
        case .medium: 12000
        case .wide, .superWide, .full: 16000
        }
    }

    static func < (a: OpusBandwidth, b: OpusBandwidth) -> Bool { a.rawValue < b.rawValue }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The tables of AAC's general audio coder that depend on the sampling rate (ISO/IEC
/// 14496-3: the scale factor band tables, swb_offset_long_window and
/// swb_offset_short_window; TNS_MAX_BANDS and TNS_MAX_ORDER), as data of the
/// standard.
enum AACTables {
    /// The sampling frequency index a rate decodes with: the table's own for its 13 rates,
    /// else the nearest by the standard's ranges for explicit rates.
    static func samplingIndex(_ rate: Double) -> Int {
        let floors: [Double] = [92017, 75132, 55426, 46009, 37566, 27713, 23004, 18783, 13856, 11502, 9391]
        return floors.firstIndex { rate >= $0 } ?? 11
    }

    // Band edges, in spectral lines; each ends with the frame's line count.
    static let long96: [Int] = [
        0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 64, 72, 80, 88, 96, 108, 120, 132, 144, 156, 172, 188,
        212, 240, 276, 320, 384, 448, 512, 576, 640, 704, 768, 832, 896, 960, 1024,
    ]
    static let long64: [Int] = [
        0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 64, 72, 80, 88, 100, 112, 124, 140, 156, 172, 192, 216,
        240, 268, 304, 344, 384, 424, 464, 504, 544, 584, 624, 664, 704, 744, 784, 824, 864, 904, 944, 984, 1024,
    ]
    /// 48 and 44.1 kHz.
    static let long48: [Int] = [
        0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64, 72, 80, 88, 96, 108, 120, 132, 144, 160, 176, 196, 216, 240,
        264, 292, 320, 352, 384, 416, 448, 480, 512, 544, 576, 608, 640, 672, 704, 736, 768, 800, 832, 864, 896, 928, 1024,
    ]
    /// 32 kHz: 48 kHz's bands, with 928…1024 split in three.
    static let long32: [Int] = Array(long48.dropLast()) + [960, 992, 1024]
    /// 24 and 22.05 kHz.
    static let long24: [Int] = [
        0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 52, 60, 68, 76, 84, 92, 100, 108, 116, 124, 136, 148, 160, 172, 188,
        204, 220, 240, 260, 284, 308, 336, 364, 396, 432, 468, 508, 552, 600, 652, 704, 768, 832, 896, 960, 1024,
    ]
    /// 16, 12 and 11.025 kHz.
    static let long16: [Int] = [
        0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 100, 112, 124, 136, 148, 160, 172, 184, 196, 212, 228, 244, 260,
        280, 300, 320, 344, 368, 396, 424, 456, 492, 532, 572, 616, 664, 716, 772, 832, 896, 960, 1024,
    ]
    static let long8: [Int] = [
        0, 12, 24, 36, 48, 60, 72, 84, 96, 108, 120, 132, 144, 156, 172, 188, 204, 220, 236, 252, 268, 288, 308, 328,
        348, 372, 396, 420, 448, 476, 508, 544, 580, 620, 664, 712, 764, 820, 880, 944, 1024,
    ]
    /// 96, 88.2 and 64 kHz.
    static let short64: [Int] = [0, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 92, 128]
    /// 48, 44.1 and 32 kHz.
    static let short48: [Int] = [0, 4, 8, 12, 16, 20, 28, 36, 44, 56, 68, 80, 96, 112, 128]
    /// 24 and 22.05 kHz.
    static let short24: [Int] = [0, 4, 8, 12, 16, 20, 24, 28, 36, 44, 52, 64, 76, 92, 108, 128]
    /// 16, 12 and 11.025 kHz.
    static let short16: [Int] = [0, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 60, 72, 88, 108, 128]
    static let short8: [Int] = [0, 4, 8, 12, 16, 20, 24, 28, 36, 44, 52, 60, 72, 88, 108, 128]

    /// Long and short band edges by sampling frequency index (0 = 96 kHz … 11 = 8 kHz, 12 = 7.35 kHz).
    static func bands(_ index: Int) -> (long: [Int], short: [Int]) {
        switch index {
        case 0, 1: (long96, short64)
        case 2: (long64, short64)
        case 3, 4: (long48, short48)
        case 5: (long32, short48)
        case 6, 7: (long24, short24)
        case 8, 9, 10: (long16, short16)
        default: (long8, short8)
        }
    }

    /// TNS_MAX_BANDS for Main and LC, long and short windows, by sampling index.
    static let tnsMaxBandsLong: [Int] = [31, 31, 34, 40, 42, 51, 46, 46, 42, 42, 42, 39, 39]
    static let tnsMaxBandsShort: [Int] = [9, 9, 10, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14]

    /// PRED_SFB_MAX: the bands AAC Main's predictor covers.
    static let predictionMaxBands: [Int] = [33, 33, 38, 40, 40, 40, 41, 41, 37, 37, 37, 34, 34]
}

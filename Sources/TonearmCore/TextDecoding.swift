/// The 8-bit encodings tried for text that is not valid UTF-8: tags and stream titles written
/// by old tools. Cyrillic titles from Windows-era radio software come in Windows-1251.
public enum LegacyTextEncoding: Sendable, Hashable {
    /// ISO 8859-1: each byte is the code point of the same number.
    case latin1
    /// Windows-1251 (Cyrillic).
    case windows1251
    /// Windows-1251 when the high bytes look like Cyrillic words, otherwise Latin-1.
    case automatic
}

/// Text as UTF-8 when the bytes are valid UTF-8, otherwise in `fallback`.
public func decodeText<C: Collection>(_ bytes: C, fallback: LegacyTextEncoding) -> String where C.Element == UInt8 {
    if let s = String(validating: bytes, as: UTF8.self) { return s }
    var encoding = fallback
    if encoding == .automatic { encoding = looksLikeWindows1251(bytes) ? .windows1251 : .latin1 }
    var s = String.UnicodeScalarView()
    for b in bytes {
        switch encoding {
        case .windows1251 where b >= 0xC0:
            s.append(Unicode.Scalar(0x410 + UInt32(b) - 0xC0)!)
        case .windows1251 where b >= 0x80:
            s.append(Unicode.Scalar(windows1251High[Int(b) - 0x80])!)
        default:
            s.append(Unicode.Scalar(b))
        }
    }
    return String(s)
}

/// Cyrillic text in Windows-1251 is mostly letters from 0xC0 to 0xFF, in runs (words); Latin-1
/// text has its accented letters alone among ASCII ones. True when at least half of the
/// letters are high bytes and most high bytes have a high neighbour.
func looksLikeWindows1251<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
    var high = 0, ascii = 0, paired = 0
    var previousHigh = false
    for b in bytes {
        let isHigh = b >= 0xC0 || b == 0xA8 || b == 0xB8       // А–я, Ё, ё
        if isHigh {
            high += 1
            if previousHigh { paired += 2 }
        } else if (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A {
            ascii += 1
        }
        previousHigh = isHigh
    }
    return high >= 2 && high >= ascii && paired >= high
}

/// Windows-1251 from 0x80 to 0xBF (0x98 is undefined: U+FFFD).
private let windows1251High: [UInt32] = [
    0x0402, 0x0403, 0x201A, 0x0453, 0x201E, 0x2026, 0x2020, 0x2021, 0x20AC, 0x2030, 0x0409, 0x2039, 0x040A, 0x040C, 0x040B, 0x040F,
    0x0452, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0xFFFD, 0x2122, 0x0459, 0x203A, 0x045A, 0x045C, 0x045B, 0x045F,
    0x00A0, 0x040E, 0x045E, 0x0408, 0x00A4, 0x0490, 0x00A6, 0x00A7, 0x0401, 0x00A9, 0x0404, 0x00AB, 0x00AC, 0x00AD, 0x00AE, 0x0407,
    0x00B0, 0x00B1, 0x0406, 0x0456, 0x0491, 0x00B5, 0x00B6, 0x00B7, 0x0451, 0x2116, 0x0454, 0x00BB, 0x0458, 0x0405, 0x0455, 0x0457,
]

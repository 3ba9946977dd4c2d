/// A four-character code, as Apple uses for types, formats, properties and errors.
///
/// The value is the big-endian reading of the four ASCII bytes, so `FourCC("WAVE").rawValue`
/// is computed from the characters and never typed in as a number.
public struct FourCC: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public var rawValue: UInt32

    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Builds a code from exactly four bytes of ASCII (or Latin-1) text.
    /// Fewer characters are padded with spaces, as `'aac '` is.
    public init(_ string: String) {
        var value: UInt32 = 0
        var count = 0
        for byte in string.utf8.prefix(4) {
            value = value << 8 | UInt32(byte)
            count += 1
        }
        while count < 4 {
            value = value << 8 | 0x20
            count += 1
        }
        self.rawValue = value
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// Builds a code from four bytes in file order.
    @inlinable
    public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        rawValue = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
    }

    /// The four bytes in file order.
    public var bytes: [UInt8] {
        [UInt8(rawValue >> 24), UInt8(truncatingIfNeeded: rawValue >> 16),
         UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)]
    }

    /// True when all four bytes are printable ASCII, so that the code reads as text.
    public var isPrintable: Bool { bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }

    /// The four characters, e.g. `WAVE` or `typ?`. Bytes that are not printable show as `\xNN`.
    public var string: String {
        var s = ""
        for b in bytes {
            if b >= 0x20 && b < 0x7F { s.unicodeScalars.append(Unicode.Scalar(b)) }
            else { s += "\\x" + hex2(b) }
        }
        return s
    }

    /// `'WAVE'` when printable, otherwise the hexadecimal value such as `0x6D730011`.
    public var description: String {
        isPrintable ? "'\(string)'" : "0x" + hex8(rawValue)
    }

    public static func < (lhs: FourCC, rhs: FourCC) -> Bool { lhs.rawValue < rhs.rawValue }
}

@usableFromInline
func hex2(_ b: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
}

/// Eight uppercase hexadecimal digits, as afinfo prints format flags.
public func hex8(_ v: UInt32) -> String {
    hex2(UInt8(v >> 24)) + hex2(UInt8(truncatingIfNeeded: v >> 16))
        + hex2(UInt8(truncatingIfNeeded: v >> 8)) + hex2(UInt8(truncatingIfNeeded: v))
}

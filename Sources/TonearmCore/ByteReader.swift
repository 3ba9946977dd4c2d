/// Byte order of a multi-byte field.
public enum Endianness: Sendable, Hashable {
    case big, little
}

/// A cursor over bytes for header parsing.
///
/// The verbs follow swift-nio's: `read…` moves the reader index, `get…(at:)` does not,
/// `peek…` looks at the next bytes without moving. Running out of bytes returns nil;
/// the parser decides whether that means "need more data" or "malformed".
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    /// Index of the next byte to read, in `bytes`.
    public var readerIndex: Int
    /// One past the last byte this reader may read.
    public let endIndex: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        readerIndex = 0
        endIndex = bytes.count
    }

    public init(_ slice: ArraySlice<UInt8>) { self.init(Array(slice)) }

    /// A reader over `bytes[range]`, without copying.
    public init(_ bytes: [UInt8], range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        self.bytes = bytes
        readerIndex = range.lowerBound
        endIndex = range.upperBound
    }

    public var readableBytes: Int { endIndex - readerIndex }
    public var isAtEnd: Bool { readerIndex >= endIndex }

    @inlinable
    public func getInteger<T: FixedWidthInteger>(at index: Int, endianness: Endianness = .big, as: T.Type = T.self) -> T? {
        let size = MemoryLayout<T>.size
        guard index >= 0, index <= endIndex - size else { return nil }
        var v: T = 0
        if endianness == .big {
            for i in 0..<size { v = v << 8 | T(truncatingIfNeeded: bytes[index + i]) }
        } else {
            for i in stride(from: size - 1, through: 0, by: -1) { v = v << 8 | T(truncatingIfNeeded: bytes[index + i]) }
        }
        return v
    }

    @inlinable
    public mutating func readInteger<T: FixedWidthInteger>(endianness: Endianness = .big, as: T.Type = T.self) -> T? {
        guard let v: T = getInteger(at: readerIndex, endianness: endianness) else { return nil }
        readerIndex += MemoryLayout<T>.size
        return v
    }

    public func peekInteger<T: FixedWidthInteger>(endianness: Endianness = .big, as: T.Type = T.self) -> T? {
        getInteger(at: readerIndex, endianness: endianness)
    }

    public mutating func readUInt8() -> UInt8? { readInteger() }
    public mutating func readUInt16(_ e: Endianness = .big) -> UInt16? { readInteger(endianness: e) }
    public mutating func readUInt32(_ e: Endianness = .big) -> UInt32? { readInteger(endianness: e) }
    public mutating func readUInt64(_ e: Endianness = .big) -> UInt64? { readInteger(endianness: e) }
    public mutating func readInt16(_ e: Endianness = .big) -> Int16? { readInteger(endianness: e) }
    public mutating func readInt32(_ e: Endianness = .big) -> Int32? { readInteger(endianness: e) }
    public mutating func readInt64(_ e: Endianness = .big) -> Int64? { readInteger(endianness: e) }

    /// A 24-bit unsigned integer.
    public mutating func readUInt24(_ e: Endianness = .big) -> UInt32? {
        guard readableBytes >= 3 else { return nil }
        let a = UInt32(bytes[readerIndex]), b = UInt32(bytes[readerIndex + 1]), c = UInt32(bytes[readerIndex + 2])
        readerIndex += 3
        return e == .big ? a << 16 | b << 8 | c : c << 16 | b << 8 | a
    }

    public mutating func readFourCC() -> FourCC? { readUInt32().map(FourCC.init(rawValue:)) }

    public mutating func readFloat32(_ e: Endianness = .big) -> Float? { readUInt32(e).map(Float.init(bitPattern:)) }
    public mutating func readFloat64(_ e: Endianness = .big) -> Double? { readUInt64(e).map(Double.init(bitPattern:)) }

    /// An IEEE 754 80-bit extended float, big-endian, as AIFF stores its sample rate.
    public mutating func readFloat80() -> Double? {
        guard let se = readUInt16(), let mantissa = readUInt64() else { return nil }
        return ByteReader.decodeExtended(signExponent: se, mantissa: mantissa)
    }

    /// Decodes an 80-bit extended float. Infinities and NaNs come back as such;
    /// the value is rounded to Double.
    public static func decodeExtended(signExponent: UInt16, mantissa: UInt64) -> Double {
        let sign: Double = signExponent & 0x8000 != 0 ? -1 : 1
        let exponent = Int(signExponent & 0x7FFF)
        if exponent == 0 && mantissa == 0 { return 0 * sign }
        if exponent == 0x7FFF { return mantissa << 1 == 0 ? sign * .infinity : .nan }
        // value = mantissa × 2^(exponent − 16383 − 63)
        return sign * Double(sign: .plus, exponent: exponent - 16383 - 63, significand: Double(mantissa))
    }

    /// Encodes a Double as an 80-bit extended float (10 bytes, big-endian).
    public static func encodeExtended(_ value: Double) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 10)
        guard value != 0, value.isFinite else { return out }
        let sign: UInt16 = value < 0 ? 0x8000 : 0
        let m = abs(value)
        let e = Int(m.exponent)  // m = significand × 2^e, significand in [1, 2)
        let mantissa = UInt64(m.significand * 9_223_372_036_854_775_808.0)  // × 2^63
        let se = sign | UInt16(e + 16383)
        out[0] = UInt8(se >> 8); out[1] = UInt8(se & 0xFF)
        for i in 0..<8 { out[2 + i] = UInt8(truncatingIfNeeded: mantissa >> (56 - 8 * UInt64(i))) }
        return out
    }

    /// Reads `count` bytes, or returns nil when fewer remain.
    public mutating func readBytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, count <= readableBytes else { return nil }
        defer { readerIndex += count }
        return Array(bytes[readerIndex..<readerIndex + count])
    }

    public func getBytes(at index: Int, count: Int) -> [UInt8]? {
        guard index >= 0, count >= 0, index <= endIndex - count else { return nil }
        return Array(bytes[index..<index + count])
    }

    /// Moves the reader index forward; false when fewer bytes remain.
    @discardableResult
    public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= readableBytes else { return false }
        readerIndex += count
        return true
    }

    /// Text of `count` bytes, up to the first NUL, decoded as UTF-8 with a Latin-1 fallback.
    public mutating func readString(_ count: Int) -> String? {
        guard let raw = readBytes(count) else { return nil }
        return decodeText(raw)
    }
}

/// Text from a tag: up to the first NUL, UTF-8 when valid, otherwise Latin-1.
public func decodeText(_ raw: [UInt8]) -> String {
    let end = raw.firstIndex(of: 0) ?? raw.count
    return decodeText(raw[..<end], fallback: .latin1)
}

/// Appends fixed-width integers to a byte array, for writers.
public struct ByteWriter: Sendable {
    public var bytes: [UInt8] = []
    public init() {}

    public mutating func write<T: FixedWidthInteger>(_ value: T, _ endianness: Endianness = .big) {
        let size = MemoryLayout<T>.size
        if endianness == .big {
            for i in stride(from: size - 1, through: 0, by: -1) { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
        } else {
            for i in 0..<size { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
        }
    }
    public mutating func write(_ fourCC: FourCC) { write(fourCC.rawValue) }
    public mutating func write(_ raw: [UInt8]) { bytes.append(contentsOf: raw) }
    public mutating func writeFloat64(_ v: Double, _ e: Endianness = .big) { write(v.bitPattern, e) }
    public mutating func writeFloat32(_ v: Float, _ e: Endianness = .big) { write(v.bitPattern, e) }

    /// Overwrites a value already written, e.g. a chunk size once it is known.
    public mutating func set<T: FixedWidthInteger>(_ value: T, at index: Int, _ endianness: Endianness = .big) {
        let size = MemoryLayout<T>.size
        for i in 0..<size {
            let shift = endianness == .big ? 8 * (size - 1 - i) : 8 * i
            bytes[index + i] = UInt8(truncatingIfNeeded: value >> shift)
        }
    }
}

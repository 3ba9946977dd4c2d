import TonearmCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One spectrum codebook as the fused decoder reads it: the Huffman table, and per codebook
/// index its values already raised to the power 4/3.
struct AACSpectralBook: @unchecked Sendable {
    /// ``AACHuffman``'s two-level table.
    let entries: UnsafePointer<UInt32>
    let rootBits: UInt32
    /// Per index × dimension: sign · |v|^(4/3) for the signed books (1, 2, 5, 6), |v|^(4/3)
    /// for the unsigned ones; 0 for book 11's escape (16), whose value follows in the bitstream.
    let values: UnsafePointer<Float>
    /// Per index: bits 0–3, the values that are nonzero (each has a sign bit in an unsigned
    /// book); bits 4–6, how many; bits 2–3 in book 11, the values that are escapes.
    let flags: UnsafePointer<UInt8>
    /// The unsigned pair books (7–11): per index × the next two bits after the codeword ×
    /// 2, the values with their signs applied (the first nonzero value takes the first bit).
    /// An escape is a signed zero here: its sign, for the magnitude that follows.
    let signedPairs: UnsafePointer<Float>
}

/// The tables of the fused spectrum decoding, built once and never freed.
struct AACSpectralTables: @unchecked Sendable {
    /// Codebooks 1…11 at their number (0 is a placeholder).
    let books: UnsafePointer<AACSpectralBook>
    /// |q|^(4/3) for 0…8191, the range an escape can reach.
    let powerFourThirds: UnsafePointer<Float>
    /// 2^(x/4) for x = −100…155 at x + 100: every gain a scale factor, an intensity
    /// position or a noise energy can give (each is clamped or checked into that range).
    /// Built with exp2f, so that the gains are those the per-band exp2f calls gave.
    let quarterPowers: UnsafePointer<Float>
    /// The scale factor codebook (its values and flags unused): index = difference + 60.
    let scaleFactors: AACSpectralBook
    /// The unsigned quad books' sign masks, at `nonzero << 4 | bits`: `nonzero` says which
    /// of the four values are nonzero (bit j for value j), `bits` are the next four bits
    /// after the codeword, the first nonzero value taking the first. Lane j is value j's
    /// sign bit.
    let quadSigns: UnsafePointer<SIMD4<UInt32>>

    static let shared = AACSpectralTables()

    private init() {
        let pow43 = UnsafeMutablePointer<Float>.allocate(capacity: 8192)
        for i in 0..<8192 { pow43[i] = Float(pow(Double(i), 4.0 / 3.0)) }
        powerFourThirds = UnsafePointer(pow43)
        let quarter = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        for i in 0..<256 { quarter[i] = exp2f(Float(i - 100) / 4) }
        quarterPowers = UnsafePointer(quarter)
        // (values per codeword, modulus, offset of the signed books)
        let shapes: [(Int, Int, Int)] = [(4, 3, 1), (4, 3, 1), (4, 3, 0), (4, 3, 0), (2, 9, 4), (2, 9, 4),
                                         (2, 8, 0), (2, 8, 0), (2, 13, 0), (2, 13, 0), (2, 17, 0)]
        let all = UnsafeMutablePointer<AACSpectralBook>.allocate(capacity: 12)
        for book in 0...11 {
            let huffman = AACHuffman.spectrum[book]
            let entries = UnsafeMutablePointer<UInt32>.allocate(capacity: huffman.entries.count)
            for (i, e) in huffman.entries.enumerated() { entries[i] = e }
            let (count, modulus, offset) = book == 0 ? (4, 1, 0) : shapes[book - 1]
            let indices = Int(pow(Double(modulus), Double(count)))
            let values = UnsafeMutablePointer<Float>.allocate(capacity: indices * count)
            let flags = UnsafeMutablePointer<UInt8>.allocate(capacity: indices)
            for index in 0..<indices {
                // The first value is the most significant digit of the index.
                var rest = index, nonzero = 0, escapes = 0
                for j in stride(from: count - 1, through: 0, by: -1) {
                    let v = rest % modulus - offset
                    rest /= modulus
                    let magnitude = pow43[min(abs(v), 15)]
                    values[index * count + j] = book == 11 && v == 16 ? 0 : v < 0 ? -magnitude : magnitude
                    if v != 0 { nonzero |= 1 << j }
                    if book == 11 && v == 16 { escapes |= 1 << j }
                }
                flags[index] = UInt8(nonzero | escapes << 2 | nonzero.nonzeroBitCount << 4)
            }
            let pairs = book >= 7 ? indices * 8 : 1
            let signedPairs = UnsafeMutablePointer<Float>.allocate(capacity: pairs)
            signedPairs.initialize(repeating: 0, count: pairs)
            if book >= 7 {
                for index in 0..<indices {
                    for bits in 0..<4 {
                        var next = 1  // the bit (1 = the first, 0 = the second) the next nonzero value takes
                        for j in 0..<2 {
                            var v = values[index * 2 + j]
                            let escape = book == 11 && flags[index] & UInt8(4 << j) != 0
                            if v != 0 || escape {
                                if bits >> next & 1 == 1 { v = -v }
                                next -= 1
                            }
                            signedPairs[(index * 4 + bits) * 2 + j] = v
                        }
                    }
                }
            }
            all[book] = AACSpectralBook(entries: entries, rootBits: UInt32(huffman.rootBits), values: values, flags: flags,
                                        signedPairs: signedPairs)
        }
        books = UnsafePointer(all)
        let signs = UnsafeMutablePointer<SIMD4<UInt32>>.allocate(capacity: 256)
        for nonzero in 0..<16 {
            for bits in 0..<16 {
                var lanes = SIMD4<UInt32>(repeating: 0), next = 3
                for j in 0..<4 where nonzero >> j & 1 == 1 {
                    if bits >> next & 1 == 1 { lanes[j] = 0x8000_0000 }
                    next -= 1
                }
                signs[nonzero << 4 | bits] = lanes
            }
        }
        quadSigns = UnsafePointer(signs)
        let huffman = AACHuffman.scaleFactors
        let entries = UnsafeMutablePointer<UInt32>.allocate(capacity: huffman.entries.count)
        for (i, e) in huffman.entries.enumerated() { entries[i] = e }
        scaleFactors = AACSpectralBook(entries: entries, rootBits: UInt32(huffman.rootBits), values: all[0].values, flags: all[0].flags,
                                       signedPairs: all[0].signedPairs)
    }
}

/// spectral_data decoded straight to dequantised values: each codeword's values come out
/// as sign · |q|^(4/3) · gain, one loop per kind of codebook so that the loop has no
/// branch on the book's properties. The Huffman tables are complete and the value tables
/// cover every index, so every table read is in bounds by construction; escapes stop at
/// 8191. Reading past the packet reads padding (``AACBits``); the caller checks for an
/// overrun after each band.
enum AACSpectralDecoder {
    /// The codeword at the top of `w`: the table entry, `index << 8 | length`.
    @inline(__always)
    static func codeword(_ w: UInt32, _ book: AACSpectralBook) -> UInt32 {
        var e = book.entries[Int(w &>> (32 &- book.rootBits))]
        if e & 0x8000_0000 != 0 {
            e = book.entries[Int((e &>> 8) & 0x7F_FFFF) &+ Int((w &<< book.rootBits) &>> (32 &- (e & 0xFF)))]
        }
        return e
    }

    /// Decodes `count` (a multiple of 4) values of codebook `book` (1…11) into `out`, scaled by `gain`.
    static func decode(_ r: inout AACBits, book: Int, gain: Float, into out: UnsafeMutablePointer<Float>, count: Int,
                       tables: AACSpectralTables) throws(AACDamage)
    {
        let b = tables.books[book]
        var bits = AACBitWindow(r)
        defer { r.position = bits.position }
        switch book {
        case 1, 2: signedQuads(&bits, b, gain: gain, into: out, count: count)
        case 3, 4: unsignedQuads(&bits, b, gain: gain, into: out, count: count, signs: tables.quadSigns)
        case 5, 6: signedPairs(&bits, b, gain: gain, into: out, count: count)
        case 7, 8, 9, 10: unsignedPairs(&bits, b, gain: gain, into: out, count: count)
        case 11: try escapePairs(&bits, b, gain: gain, into: out, count: count, pow43: tables.powerFourThirds)
        default: out.update(repeating: 0, count: count)
        }
    }

    private static func signedQuads(_ r: inout AACBitWindow, _ b: AACSpectralBook, gain: Float,
                                    into out: UnsafeMutablePointer<Float>, count: Int)
    {
        var k = 0
        while k < count {
            let e = codeword(r.peek32, b)
            r.skip(Int(e & 0xFF))
            let v = loadFloat4(b.values + Int(e &>> 8) &* 4)
            storeFloats(v * gain, out + k)
            k &+= 4
        }
    }

    private static func signedPairs(_ r: inout AACBitWindow, _ b: AACSpectralBook, gain: Float,
                                    into out: UnsafeMutablePointer<Float>, count: Int)
    {
        var k = 0
        while k < count {
            let e = codeword(r.peek32, b)
            r.skip(Int(e & 0xFF))
            let v = b.values + Int(e &>> 8) &* 2
            out[k] = v[0] * gain
            out[k &+ 1] = v[1] * gain
            k &+= 2
        }
    }

    private static func unsignedQuads(_ r: inout AACBitWindow, _ b: AACSpectralBook, gain: Float,
                                      into out: UnsafeMutablePointer<Float>, count: Int, signs: UnsafePointer<SIMD4<UInt32>>)
    {
        var k = 0
        while k < count {
            let w = r.peek32
            let e = codeword(w, b)
            let length = e & 0xFF, index = Int(e &>> 8)
            let f = UInt32(b.flags[index])
            // The sign bits follow the codeword (at most 4 after at most 16 bits: within w).
            let next = (w &<< length) &>> 28
            r.skip(Int(length &+ f &>> 4))
            let v = loadFloat4(b.values + index &* 4) * gain
            let signed = unsafeBitCast(v, to: SIMD4<UInt32>.self) | signs[Int((f & 0xF) &<< 4 | next)]
            UnsafeMutableRawPointer(out + k).storeBytes(of: signed, as: SIMD4<UInt32>.self)
            k &+= 4
        }
    }

    private static func unsignedPairs(_ r: inout AACBitWindow, _ b: AACSpectralBook, gain: Float,
                                      into out: UnsafeMutablePointer<Float>, count: Int)
    {
        var k = 0
        while k < count {
            let w = r.peek32
            let e = codeword(w, b)
            let length = e & 0xFF, index = Int(e &>> 8)
            // The sign bits follow the codeword (at most 2 after at most 15 bits: within w);
            // the next two bits pick the signed values.
            let signs = Int((w &<< length) &>> 30)
            r.skip(Int(length &+ UInt32(b.flags[index]) &>> 4))
            let v = b.signedPairs + (index &<< 3 | signs &<< 1)
            out[k] = v[0] * gain
            out[k &+ 1] = v[1] * gain
            k &+= 2
        }
    }

    private static func escapePairs(_ r: inout AACBitWindow, _ b: AACSpectralBook, gain: Float,
                                    into out: UnsafeMutablePointer<Float>, count: Int, pow43: UnsafePointer<Float>)
    throws(AACDamage)
    {
        var k = 0
        while k < count {
            let w = r.peek32
            let e = codeword(w, b)
            let length = e & 0xFF, index = Int(e &>> 8)
            let f = UInt32(b.flags[index])
            let signs = Int((w &<< length) &>> 30)
            r.skip(Int(length &+ f &>> 4))
            let v = b.signedPairs + (index &<< 3 | signs &<< 1)
            var m0 = v[0], m1 = v[1]
            if f & 0xC != 0 {
                // The escapes follow both sign bits, first value first; the table gave their signs.
                if f & 4 != 0 { m0 = Float(bitPattern: try escape(&r, pow43).bitPattern | m0.bitPattern & 0x8000_0000) }
                if f & 8 != 0 { m1 = Float(bitPattern: try escape(&r, pow43).bitPattern | m1.bitPattern & 0x8000_0000) }
            }
            out[k] = m0 * gain
            out[k &+ 1] = m1 * gain
            k &+= 2
        }
    }

    /// escape_sequence: N ones, a zero, then an (N + 4)-bit word, for 2^(N+4) + word; N is at
    /// most 8, so the value is at most 8191. Its |value|^(4/3).
    private static func escape(_ r: inout AACBitWindow, _ pow43: UnsafePointer<Float>) throws(AACDamage) -> Float {
        let ones = (~r.peek32).leadingZeroBitCount
        guard ones <= 8 else { throw .invalid("an escape beyond 8191") }
        r.skip(ones &+ 1)
        return pow43[1 &<< (ones &+ 4) &+ r.read(ones &+ 4)]
    }
}

/// ALAC's adaptive Golomb coder (Apple's ALAC reference, `ag_dec.c`, as ffmpeg decodes it):
/// a Rice-like code whose parameter follows a running mean of the magnitudes, with an
/// escape to a raw value and runs of zeros when the mean falls low.
enum ALACGolomb {
    /// The bits from bit `pos` on, the first in the top bit; the top 57 are data. The
    /// caller keeps 16 readable bytes after the last one it may start a code in.
    @inline(__always)
    static func window(_ b: UnsafePointer<UInt8>, _ pos: Int) -> UInt64 {
        UInt64(bigEndian: UnsafeRawPointer(b).loadUnaligned(fromByteOffset: pos &>> 3, as: UInt64.self)) &<< UInt64(pos & 7)
    }

    /// ⌊log2 x⌋, and 0 for 0.
    @inline(__always)
    static func log2(_ x: UInt32) -> Int { 31 &- (x | 1).leadingZeroBitCount }

    /// One code of parameter `k` (≥ 1) from window `w`: up to nine 1 bits ended by a 0;
    /// nine 1s escape to a raw `escapeBits`-bit value. Otherwise the value is
    /// q·(2^k − 1) plus the k bits after the 0 less one when they exceed 1, and only k − 1
    /// of those bits are used when they do not. Returns the value and the bits used (≤ 41).
    @inline(__always)
    static func code(_ w: UInt64, k: Int, escapeBits: Int) -> (value: UInt32, used: Int) {
        let ones = (~w).leadingZeroBitCount
        if ones >= 9 {
            return (UInt32(truncatingIfNeeded: (w &<< 9) &>> UInt64(64 &- escapeBits)), 9 &+ escapeBits)
        }
        var x = UInt32(truncatingIfNeeded: ones)
        var used = ones &+ 1
        if k != 1 {
            let extra = UInt32(truncatingIfNeeded: (w &<< UInt64(used)) &>> UInt64(64 &- k))
            x = (x &<< UInt32(k)) &- x
            if extra > 1 {
                x &+= extra &- 1
                used &+= k
            } else {
                used &+= k &- 1
            }
        }
        return (x, used)
    }

    /// Decodes `count` residuals into `out` from bit `pos` of `bytes`, whose data ends at bit
    /// `end`. `bits` is the width of an escaped value (the channel's bits), `multiplier`
    /// the history multiplier (pb × the channel's factor / 4), `initial` and `limit` the
    /// cookie's mb and kb (kb ≥ 1). Returns false when the bits run out.
    static func decode(_ bytes: UnsafePointer<UInt8>, position pos: inout Int, end: Int, into out: UnsafeMutablePointer<Int32>,
                       count: Int, bits: Int, multiplier: UInt32, initial: UInt32, limit: Int) -> Bool
    {
        var p = pos
        var history = initial
        var signModifier: UInt32 = 0
        var i = 0
        while i < count {
            // A code may start only while bits remain; each uses at most 41, which the
            // caller's padding covers.
            guard p < end else { return false }
            let k = min(log2((history &>> 9) &+ 3), limit)
            let (value, used) = code(window(bytes, p), k: k, escapeBits: bits)
            p &+= used
            let x = value &+ signModifier
            signModifier = 0
            out[i] = Int32(bitPattern: (x &>> 1) ^ (0 &- (x & 1)))
            if x > 0xFFFF {
                history = 0xFFFF
            } else {
                history = history &+ x &* multiplier &- ((history &* multiplier) &>> 9)
            }
            // A low mean announces a run of zeros, its length coded with a parameter of its own.
            if history < 128 && i &+ 1 < count {
                guard p < end else { return false }
                let kz = min(7 &- log2(history) &+ Int((history &+ 16) &>> 6), limit)
                let (run, usedZ) = code(window(bytes, p), k: kz, escapeBits: 16)
                p &+= usedZ
                if run > 0 {
                    let n = min(Int(run), count &- i &- 1)
                    (out + (i &+ 1)).update(repeating: 0, count: n)
                    i &+= n
                }
                // A run is at most 16 bits, so the next value is always one more than coded.
                signModifier = 1
                history = 0
            }
            i &+= 1
        }
        guard p <= end else { return false }
        pos = p
        return true
    }
}

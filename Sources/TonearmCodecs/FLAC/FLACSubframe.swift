import TonearmCore

/// One channel of a FLAC frame (RFC 9639 §9.2).
enum FLACSubframe {
    @inline(__always)
    private static func bad(_ what: String) -> AudioError { AudioError(.codecBadData, "FLAC subframe: \(what)") }

    /// Decodes a subframe of `count` samples of `bits` bits (33 for a side channel of
    /// 32-bit audio) into `out`. `residual` has room for `count` values.
    static func decode(_ r: inout BitReader, into out: UnsafeMutablePointer<Int64>, count n: Int, bits sampleBits: Int,
                       residual: UnsafeMutablePointer<Int32>) throws(AudioError)
    {
        // §9.2.1: a zero bit, six type bits, the wasted-bits flag.
        guard let head = r.read(8), head & 0x80 == 0 else { throw bad("a header is cut short or its first bit is set") }
        let type = Int(head >> 1) & 0x3F
        var wasted = 0
        if head & 1 == 1 {
            guard let k = r.readUnary(limit: 32) else { throw bad("wasted bits are cut short") }
            wasted = k + 1
        }
        let bits = sampleBits - wasted
        guard bits >= 1 else { throw bad("\(wasted) wasted bits of \(sampleBits)") }

        switch type {
        case 0:  // §9.2.3 constant
            guard let v = r.readSigned(bits) else { throw bad("a constant is cut short") }
            for i in 0..<n { out[i] = v }
        case 1:  // §9.2.4 verbatim
            for i in 0..<n {
                guard let v = r.readSigned(bits) else { throw bad("verbatim samples are cut short") }
                out[i] = v
            }
        case 8...12:  // §9.2.5 fixed predictor, order 0–4
            let order = type - 8
            try warmUp(&r, out, order: order, count: n, bits: bits)
            try readResidual(&r, residual, count: n, order: order)
            fixedPredict(out, residual, count: n, order: order)
        case 32...63:  // §9.2.6 linear predictor, order 1–32
            let order = type - 31
            try warmUp(&r, out, order: order, count: n, bits: bits)
            guard let p = r.read(4), p != 15, let s = r.readSigned(5) else { throw bad("an LPC header is cut short or invalid") }
            guard s >= 0 else { throw bad("a negative LPC shift (\(s))") }
            let precision = Int(p) + 1
            var coefficients: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                                Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                                Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                                Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64)
                = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            try withUnsafeMutableBytes(of: &coefficients) { (raw) throws(AudioError) in
                let c = raw.baseAddress!.assumingMemoryBound(to: Int64.self)
                for j in 0..<order {
                    guard let v = r.readSigned(precision) else { throw bad("LPC coefficients are cut short") }
                    c[j] = v
                }
                try readResidual(&r, residual, count: n, order: order)
                lpcPredict(out, residual, count: n, order: order, coefficients: c, shift: Int64(s))
            }
        default:
            throw bad("reserved subframe type \(type)")
        }
        if wasted > 0 {
            let w = Int64(wasted)
            for i in 0..<n { out[i] = out[i] &<< w }
        }
    }

    private static func warmUp(_ r: inout BitReader, _ out: UnsafeMutablePointer<Int64>, order: Int, count: Int,
                               bits: Int) throws(AudioError)
    {
        guard order <= count else { throw bad("predictor order \(order) exceeds the block of \(count)") }
        for i in 0..<order {
            guard let v = r.readSigned(bits) else { throw bad("warm-up samples are cut short") }
            out[i] = v
        }
    }

    /// §9.2.7: the residual of samples `order..<count`, into `res[order...]`.
    private static func readResidual(_ r: inout BitReader, _ res: UnsafeMutablePointer<Int32>, count n: Int,
                                     order: Int) throws(AudioError)
    {
        guard let method = r.read(2), method < 2, let po = r.read(4) else { throw bad("a residual header is cut short or reserved") }
        let paramBits = method == 0 ? 4 : 5, escape: UInt64 = method == 0 ? 15 : 31
        let partitions = 1 << Int(po)
        let size = n >> Int(po)
        guard size << Int(po) == n, size >= order else {
            throw bad("\(partitions) partitions do not divide a block of \(n) with predictor order \(order)")
        }
        var i = order
        for part in 0..<partitions {
            let end = (part + 1) * size
            guard let k = r.read(paramBits) else { throw bad("a Rice parameter is cut short") }
            if k == escape {
                guard let width = r.read(5) else { throw bad("an escape width is cut short") }
                if width == 0 {
                    while i < end { res[i] = 0; i += 1 }
                } else {
                    while i < end {
                        guard let v = r.readSigned(Int(width)) else { throw bad("escaped residuals are cut short") }
                        res[i] = Int32(truncatingIfNeeded: v)
                        i += 1
                    }
                }
            } else {
                guard r.readRiceSigned(into: res + i, count: end - i, parameter: Int(k)) else {
                    throw bad("Rice codes are cut short or too large")
                }
                i = end
            }
        }
    }

    /// §9.2.5: the fixed predictors.
    @inline(__always)
    private static func fixedPredict(_ s: UnsafeMutablePointer<Int64>, _ res: UnsafePointer<Int32>, count n: Int, order: Int) {
        var i = order
        switch order {
        case 0:
            while i < n { s[i] = Int64(res[i]); i &+= 1 }
        case 1:
            while i < n { s[i] = s[i &- 1] &+ Int64(res[i]); i &+= 1 }
        case 2:
            while i < n { s[i] = 2 &* s[i &- 1] &- s[i &- 2] &+ Int64(res[i]); i &+= 1 }
        case 3:
            while i < n { s[i] = 3 &* (s[i &- 1] &- s[i &- 2]) &+ s[i &- 3] &+ Int64(res[i]); i &+= 1 }
        default:
            while i < n {
                s[i] = 4 &* (s[i &- 1] &+ s[i &- 3]) &- 6 &* s[i &- 2] &- s[i &- 4] &+ Int64(res[i])
                i &+= 1
            }
        }
    }

    /// §9.2.6: sample = residual + (Σ coefficient_j · sample_{i−1−j}) >> shift, in 64 bits,
    /// which no valid stream overflows (33-bit samples, 15-bit coefficients, 32 terms).
    /// `c` holds 32 coefficients, zero past `order`.
    @inline(__always)
    private static func lpcPredict(_ s: UnsafeMutablePointer<Int64>, _ res: UnsafePointer<Int32>, count n: Int, order: Int,
                                   coefficients c: UnsafePointer<Int64>, shift: Int64)
    {
        var i = order
        if order <= 8 {
            // The usual orders keep the last eight samples in registers, so a sample
            // waits for the one before it without a store and a load between. Terms
            // past `order` have zero coefficients, and their history stays zero.
            let c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5], c6 = c[6], c7 = c[7]
            func past(_ j: Int) -> Int64 { j < order ? s[order &- 1 &- j] : 0 }
            var h0 = past(0), h1 = past(1), h2 = past(2), h3 = past(3)
            var h4 = past(4), h5 = past(5), h6 = past(6), h7 = past(7)
            while i < n {
                let older = c7 &* h7 &+ c6 &* h6 &+ c5 &* h5 &+ c4 &* h4 &+ c3 &* h3 &+ c2 &* h2 &+ c1 &* h1
                let v = ((older &+ c0 &* h0) &>> shift) &+ Int64(res[i])
                s[i] = v
                h7 = h6; h6 = h5; h5 = h4; h4 = h3; h3 = h2; h2 = h1; h1 = h0; h0 = v
                i &+= 1
            }
            return
        }
        if order <= 12 {
            // The common orders as scalar code with the coefficients in registers: the
            // compiler's vectorised loop over j emulates 64-bit multiplies and is slower.
            let c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5]
            let c6 = c[6], c7 = c[7], c8 = c[8], c9 = c[9], c10 = c[10], c11 = c[11]
            while i < n {
                let h = s + (i &- 1)
                var sum: Int64 = 0
                switch order {
                case 12: sum &+= c11 &* h[-11]; fallthrough
                case 11: sum &+= c10 &* h[-10]; fallthrough
                case 10: sum &+= c9 &* h[-9]; fallthrough
                case 9: sum &+= c8 &* h[-8]; fallthrough
                case 8: sum &+= c7 &* h[-7]; fallthrough
                case 7: sum &+= c6 &* h[-6]; fallthrough
                case 6: sum &+= c5 &* h[-5]; fallthrough
                case 5: sum &+= c4 &* h[-4]; fallthrough
                case 4: sum &+= c3 &* h[-3]; fallthrough
                case 3: sum &+= c2 &* h[-2]; fallthrough
                case 2: sum &+= c1 &* h[-1]; fallthrough
                default: sum &+= c0 &* h[0]
                }
                s[i] = (sum &>> shift) &+ Int64(res[i])
                i &+= 1
            }
            return
        }
        while i < n {
            var sum: Int64 = 0
            var j = 0
            let h = s + (i &- 1)
            while j < order {
                sum = sum &+ c[j] &* h[-j]
                j &+= 1
            }
            s[i] = (sum &>> shift) &+ Int64(res[i])
            i &+= 1
        }
    }
}

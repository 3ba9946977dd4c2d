import TonearmCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How one subframe will be coded (RFC 9639 §9.2), and what it costs.
struct FLACSubframePlan {
    enum Kind { case constant, verbatim, fixed, lpc }
    var kind: Kind
    /// Bits of the subframe, header included.
    var bits: Int
    /// Zero bits at the bottom of every sample, left out (§9.2.2).
    var wasted = 0
    var order = 0
    var coefficients: [Int32] = []
    var precision = 0
    var shift = 0
    var rice = FLACRicePlan()
}

/// A residual's coding (§9.2.7): the partition order and, per partition, a Rice parameter
/// (≥ 0) or an escape to plain `-(p + 1)`-bit values (p < 0).
struct FLACRicePlan {
    var partitionOrder = 0
    /// 5-bit parameters (Rice2), for parameters above 14.
    var rice2 = false
    var parameters: [Int] = []
    /// Per partition, the width of its plain values should it be escaped (−1: it cannot be).
    var escapeWidths: [Int] = []
}

/// The search settings of one compression level.
struct FLACSearch {
    var maxLPCOrder: Int
    var maxPartitionOrder: Int
    var windows: [FLACLPC.Window]
    /// LPC orders tried exactly per window, best estimates first.
    var orderCandidates: Int
    /// Fixed predictor orders tried exactly, best estimates first.
    var fixedCandidates: Int
}

/// Chooses and writes subframes. Holds the working buffers of one block so that encoding
/// allocates nothing per sample.
///
/// Each channel the frame may code (for stereo: left, right, mid, side) has a slot that
/// keeps the residual of the subframe ``plan(_:count:bits:slot:)`` chose, so that
/// ``write(_:_:count:bits:slot:to:)`` codes it without computing it again.
final class FLACSubframeEncoder {
    let search: FLACSearch
    let blockSize: Int
    /// The samples without their wasted bits.
    private var shifted: [Int64]
    /// The same samples as Int32, when they fit (``plan(_:count:bits:slot:)``'s fast paths).
    private var narrow: [Int32]
    /// The residual of the candidate being tried.
    private var residual: [Int32]
    /// Per slot, the residual of the best candidate so far (swapped with ``residual``).
    private var kept: [[Int32]]
    private var windowed: [Double]
    /// Each window's weights for a whole block, and their sum of squares.
    private var windows: [FLACLPC.Window: (weights: [Double], energy: Double)] = [:]
    private var autocorrelation: [Double] = []

    init(blockSize: Int, search: FLACSearch, slots: Int) {
        self.blockSize = blockSize
        self.search = search
        shifted = [Int64](repeating: 0, count: blockSize)
        narrow = [Int32](repeating: 0, count: blockSize)
        residual = [Int32](repeating: 0, count: blockSize)
        kept = [[Int32]](repeating: [Int32](repeating: 0, count: blockSize), count: slots)
        windowed = [Double](repeating: 0, count: blockSize)
    }

    private func weights(_ w: FLACLPC.Window, _ n: Int) -> (weights: [Double], energy: Double) {
        if n == blockSize, let cached = windows[w] { return cached }
        let made = w.weights(n)
        let result = (made, made.reduce(0.0) { $0 + $1 * $1 })
        if n == blockSize { windows[w] = result }
        return result
    }

    // MARK: Choosing

    /// The cheapest coding this encoder finds for `n` samples of `bits` bits at `x`; a
    /// predicted coding's residual is kept in `slot` for ``write(_:_:count:bits:slot:to:)``.
    func plan(_ x: UnsafePointer<Int64>, count n: Int, bits: Int, slot: Int) -> FLACSubframePlan {
        let verbatim = FLACSubframePlan(kind: .verbatim, bits: 8 + n * bits)
        guard n > 0 else { return verbatim }
        var or: Int64 = 0, differs: Int64 = 0
        let first = x[0]
        for i in 0..<n {
            or |= x[i]
            differs |= x[i] ^ first
        }
        if differs == 0 { return FLACSubframePlan(kind: .constant, bits: 8 + bits) }
        let wasted = or == 0 ? 0 : or.trailingZeroBitCount
        let b = bits - wasted
        let plain = FLACSubframePlan(kind: .verbatim, bits: 8 + wasted + n * b, wasted: wasted)
        var best = plain
        var bestRiceBits = 0
        // Samples of up to 32 bits are also kept as Int32 for the 32-bit paths; `largest`
        // bounds their magnitudes (all bits below the highest set one).
        let fits32 = b <= 32
        var largest: Int64 = 0
        return shifted.withUnsafeMutableBufferPointer { sp in
          narrow.withUnsafeMutableBufferPointer { np in
            let s = sp.baseAddress!, s32 = np.baseAddress!
            if fits32 {
                var ored: Int64 = 0
                for i in 0..<n {
                    let v = x[i] &>> Int64(wasted)
                    s[i] = v
                    s32[i] = Int32(truncatingIfNeeded: v)
                    ored |= v ^ (v &>> 63)
                }
                // |v| ≤ (v ^ sign) + 1, and every (v ^ sign) ≤ ored.
                largest = ored &+ 1
            } else {
                for i in 0..<n { s[i] = x[i] &>> Int64(wasted) }
            }
            let header = 8 + wasted
            // Fixed predictors, the orders with the smallest sum of absolute residuals.
            if n > 4 {
                let orders = b <= 19 ? fixedOrdersByEstimate32(s32, n) : fixedOrdersByEstimate(s, n)
                for order in orders.prefix(search.fixedCandidates) {
                    if b <= 27 {
                        // |residual| ≤ 16 · 2^(b − 1) < 2^31.
                        fixedResidual32(s32, n, order: order)
                    } else {
                        guard fixedResidual(s, n, order: order) else { continue }
                    }
                    let (riceBits, rice) = bestRice(n, order: order, bits: b)
                    let total = header + order * b + riceBits
                    if total < best.bits {
                        best = FLACSubframePlan(kind: .fixed, bits: total, wasted: wasted, order: order, rice: rice)
                        bestRiceBits = riceBits
                        swap(&residual, &kept[slot])
                    }
                }
            }
            // Linear prediction from each window's autocorrelation.
            let maxOrder = min(search.maxLPCOrder, n - 1)
            if maxOrder > 0 {
                let precision = FLACSubframeEncoder.precision(bits: b, blockSize: n)
                for window in search.windows {
                    let (w, energy) = weights(window, n)
                    w.withUnsafeBufferPointer { wp in
                        windowed.withUnsafeMutableBufferPointer { dp in
                            FLACLPC.autocorrelation(s, count: n, window: wp.baseAddress!, lags: maxOrder,
                                                    scratch: dp.baseAddress!, into: &autocorrelation)
                        }
                    }
                    // A touch of extra energy at lag 0 keeps the recursion stable.
                    autocorrelation[0] *= 1 + 1e-10
                    let (sets, errors) = FLACLPC.levinson(autocorrelation, maxOrder: maxOrder)
                    guard !sets.isEmpty else { continue }
                    // Estimated bits per order: a Laplacian residual of variance σ² Rice-codes
                    // in about log2(σ) + 1 bits a sample; plus warm-up and coefficients.
                    // Once a residual is down to its last bits, the prediction error of the
                    // windowed block no longer tells the orders apart (a pure tone's rounding
                    // is not white noise) and fewer coefficients often code smaller, so the
                    // order that wins when only the bits above 1.5 a sample count is tried too.
                    var estimates: [(order: Int, bits: Double)] = []
                    var floored: (order: Int, bits: Double) = (0, .infinity)
                    for (m, e) in errors.enumerated() {
                        let order = m + 1
                        let log2Sigma = 0.5 * log2(max(e / max(energy, 1e-9), 1e-30))
                        let overhead = Double(order * (b + precision))
                        estimates.append((order, max(0, log2Sigma + 1) * Double(n - order) + overhead))
                        let above = max(0, log2Sigma - 0.5) * Double(n - order) + overhead
                        if above < floored.bits { floored = (order, above) }
                    }
                    estimates.sort { $0.bits < $1.bits }
                    var orders = estimates.prefix(search.orderCandidates).map(\.order)
                    if floored.order > 0 && !orders.contains(floored.order) { orders.append(floored.order) }
                    for order in orders {
                        let (q, shift) = FLACLPC.quantize(sets[order - 1], precision: precision)
                        // |prediction| ≤ largest · Σ|q| (before the shift), so with the sample
                        // itself every value stays below 2^31 when largest · (1 + Σ|q|) does.
                        let weight = q.reduce(Int64(1)) { $0 + Int64($1.magnitude) }
                        if fits32 && order <= 8 && largest.multipliedReportingOverflow(by: weight).partialValue < Int64(Int32.max)
                            && largest < Int64(1) << 31 && weight < Int64(1) << 31 {
                            lpcResidual32(s32, n, coefficients: q, shift: shift)
                        } else {
                            guard lpcResidual(s, n, coefficients: q, shift: shift) else { continue }
                        }
                        let (riceBits, rice) = bestRice(n, order: order, bits: b)
                        let total = header + order * b + 4 + 5 + order * precision + riceBits
                        if total < best.bits {
                            best = FLACSubframePlan(kind: .lpc, bits: total, wasted: wasted, order: order, coefficients: q,
                                                    precision: precision, shift: shift, rice: rice)
                            bestRiceBits = riceBits
                            swap(&residual, &kept[slot])
                        }
                    }
                }
            }
            if best.kind == .fixed || best.kind == .lpc {
                let (riceBits, rice) = refine(n, order: best.order, plan: best.rice, slot: slot)
                best.rice = rice
                best.bits += riceBits - bestRiceBits
                if best.bits >= plain.bits { best = plain }
            }
            return best
          }
        }
    }

    /// Coefficient precision by sample size and block size: finer coefficients pay off
    /// over longer blocks.
    static func precision(bits: Int, blockSize n: Int) -> Int {
        if bits < 16 { return max(5, 2 + bits / 2) }
        var p: Int
        switch n {
        case ...192: p = 7
        case ...384: p = 8
        case ...576: p = 9
        case ...1152: p = 10
        case ...2304: p = 11
        case ...4608: p = 12
        default: p = 13
        }
        if bits > 16 { p = n <= 384 ? 13 : n <= 1152 ? 14 : 15 }
        return min(p, FLACLPC.maximumPrecision)
    }

    /// |v| without the overflow trap of `abs` (so without a branch); the values here are
    /// at most 37 bits.
    @inline(__always)
    private func magnitude(_ v: Int64) -> Int64 {
        let sign = v &>> 63
        return (v ^ sign) &- sign
    }

    /// Fixed orders 0–4 by the sum of their absolute residuals over the block, smallest first.
    private func fixedOrdersByEstimate(_ s: UnsafePointer<Int64>, _ n: Int) -> [Int] {
        var sums: (Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0)
        var p1 = s[3], p2 = s[2], p3 = s[1], p4 = s[0]
        for i in 4..<n {
            let x = s[i]
            let e1 = x &- p1
            let e2 = e1 &- (p1 &- p2)
            let e3 = e2 &- (p1 &- 2 &* p2 &+ p3)
            let e4 = e3 &- (p1 &- 3 &* p2 &+ 3 &* p3 &- p4)
            sums.0 &+= magnitude(x); sums.1 &+= magnitude(e1); sums.2 &+= magnitude(e2)
            sums.3 &+= magnitude(e3); sums.4 &+= magnitude(e4)
            p4 = p3; p3 = p2; p2 = p1; p1 = x
        }
        let all = [sums.0, sums.1, sums.2, sums.3, sums.4]
        return (0...4).sorted { all[$0] < all[$1] || (all[$0] == all[$1] && $0 < $1) }
    }

    /// ``fixedOrdersByEstimate(_:_:)`` for samples of at most 19 bits, four samples at a
    /// time: |e4| ≤ 2^22, so 256 of them per lane stay below 2^31 before they are added up
    /// in Int64.
    private func fixedOrdersByEstimate32(_ s: UnsafePointer<Int32>, _ n: Int) -> [Int] {
        var t0: Int64 = 0, t1: Int64 = 0, t2: Int64 = 0, t3: Int64 = 0, t4: Int64 = 0
        @inline(__always) func mag(_ v: SIMD4<Int32>) -> SIMD4<Int32> {
            let sign = v &>> 31
            return (v ^ sign) &- sign
        }
        @inline(__always) func total(_ v: SIMD4<Int32>) -> Int64 {
            Int64(v[0]) &+ Int64(v[1]) &+ Int64(v[2]) &+ Int64(v[3])
        }
        let raw = UnsafeRawPointer(s)
        @inline(__always) func load(_ i: Int) -> SIMD4<Int32> {
            raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
        }
        var i = 4
        while i &+ 4 <= n {
            let end = min(n, i &+ 1024)
            var m0 = SIMD4<Int32>(), m1 = SIMD4<Int32>(), m2 = SIMD4<Int32>(), m3 = SIMD4<Int32>(), m4 = SIMD4<Int32>()
            while i &+ 4 <= end {
                let a0 = load(i), a1 = load(i &- 1), a2 = load(i &- 2), a3 = load(i &- 3), a4 = load(i &- 4)
                let e1 = a0 &- a1, f1 = a1 &- a2, g1 = a2 &- a3, h1 = a3 &- a4
                let e2 = e1 &- f1, f2 = f1 &- g1, g2 = g1 &- h1
                let e3 = e2 &- f2, f3 = f2 &- g2
                let e4 = e3 &- f3
                m0 &+= mag(a0); m1 &+= mag(e1); m2 &+= mag(e2); m3 &+= mag(e3); m4 &+= mag(e4)
                i &+= 4
            }
            t0 &+= total(m0); t1 &+= total(m1); t2 &+= total(m2); t3 &+= total(m3); t4 &+= total(m4)
        }
        while i < n {
            let x = Int64(s[i]), p1 = Int64(s[i - 1]), p2 = Int64(s[i - 2]), p3 = Int64(s[i - 3]), p4 = Int64(s[i - 4])
            let e1 = x &- p1
            let e2 = e1 &- (p1 &- p2)
            let e3 = e2 &- (p1 &- 2 &* p2 &+ p3)
            let e4 = e3 &- (p1 &- 3 &* p2 &+ 3 &* p3 &- p4)
            t0 &+= magnitude(x); t1 &+= magnitude(e1); t2 &+= magnitude(e2); t3 &+= magnitude(e3); t4 &+= magnitude(e4)
            i += 1
        }
        let all = [t0, t1, t2, t3, t4]
        return (0...4).sorted { all[$0] < all[$1] || (all[$0] == all[$1] && $0 < $1) }
    }

    // MARK: Residuals

    /// The fixed predictor's residual into ``residual`` for samples of at most 27 bits,
    /// whose residuals all fit 32 bits; four samples at a time.
    private func fixedResidual32(_ s: UnsafePointer<Int32>, _ n: Int, order: Int) {
        residual.withUnsafeMutableBufferPointer { rp in
            let r = UnsafeMutableRawPointer(rp.baseAddress!)
            let raw = UnsafeRawPointer(s)
            @inline(__always) func load(_ i: Int) -> SIMD4<Int32> {
                raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
            }
            @inline(__always) func put(_ i: Int, _ v: SIMD4<Int32>) {
                r.storeBytes(of: v, toByteOffset: i &* 4, as: SIMD4<Int32>.self)
            }
            var i = order
            switch order {
            case 0:
                while i &+ 4 <= n { put(i, load(i)); i &+= 4 }
            case 1:
                while i &+ 4 <= n { put(i, load(i) &- load(i &- 1)); i &+= 4 }
            case 2:
                while i &+ 4 <= n { put(i, load(i) &- (load(i &- 1) &<< 1) &+ load(i &- 2)); i &+= 4 }
            case 3:
                while i &+ 4 <= n {
                    let d = load(i &- 2) &- load(i &- 1)
                    put(i, load(i) &- load(i &- 3) &+ (d &<< 1) &+ d)
                    i &+= 4
                }
            default:
                while i &+ 4 <= n {
                    let a2 = load(i &- 2)
                    put(i, load(i) &+ load(i &- 4) &- ((load(i &- 1) &+ load(i &- 3)) &<< 2) &+ (a2 &<< 2) &+ (a2 &<< 1))
                    i &+= 4
                }
            }
            let out = rp.baseAddress!
            while i < n {
                let v: Int32
                switch order {
                case 0: v = s[i]
                case 1: v = s[i] &- s[i - 1]
                case 2: v = s[i] &- 2 &* s[i - 1] &+ s[i - 2]
                case 3: v = s[i] &- 3 &* s[i - 1] &+ 3 &* s[i - 2] &- s[i - 3]
                default: v = s[i] &- 4 &* s[i - 1] &+ 6 &* s[i - 2] &- 4 &* s[i - 3] &+ s[i - 4]
                }
                out[i] = v
                i += 1
            }
        }
    }

    /// The linear predictor's residual into ``residual`` in 32-bit arithmetic, eight samples
    /// at a time, for order ≤ 8 when every sum of products and residual fits 32 bits (the
    /// caller checks largest · (1 + Σ|q|) < 2^31).
    private func lpcResidual32(_ s: UnsafePointer<Int32>, _ n: Int, coefficients q: [Int32], shift: Int) {
        let order = q.count
        var c = (Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0), Int32(0))
        withUnsafeMutableBytes(of: &c) { cp in
            for j in 0..<order { cp.storeBytes(of: q[j], toByteOffset: 4 * j, as: Int32.self) }
        }
        residual.withUnsafeMutableBufferPointer { rp in
            let out = rp.baseAddress!
            let r = UnsafeMutableRawPointer(out)
            let raw = UnsafeRawPointer(s)
            @inline(__always) func load(_ i: Int) -> SIMD4<Int32> {
                raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
            }
            // The first samples with the order's own terms, up to sample 8, from where the
            // history of eight terms (zero coefficients past the order) is inside the block.
            var i = order
            while i < min(8, n) {
                var sum: Int32 = 0
                for j in 0..<order { sum &+= q[j] &* s[i - 1 - j] }
                out[i] = s[i] &- (sum &>> Int32(shift))
                i += 1
            }
            let k0 = SIMD4<Int32>(repeating: c.0), k1 = SIMD4<Int32>(repeating: c.1)
            let k2 = SIMD4<Int32>(repeating: c.2), k3 = SIMD4<Int32>(repeating: c.3)
            let k4 = SIMD4<Int32>(repeating: c.4), k5 = SIMD4<Int32>(repeating: c.5)
            let k6 = SIMD4<Int32>(repeating: c.6), k7 = SIMD4<Int32>(repeating: c.7)
            let sh = SIMD4<Int32>(repeating: Int32(shift))
            if order <= 4 {
                while i &+ 8 <= n {
                    let a = k0 &* load(i &- 1) &+ k1 &* load(i &- 2) &+ k2 &* load(i &- 3) &+ k3 &* load(i &- 4)
                    let b = k0 &* load(i &+ 3) &+ k1 &* load(i &+ 2) &+ k2 &* load(i &+ 1) &+ k3 &* load(i)
                    r.storeBytes(of: load(i) &- (a &>> sh), toByteOffset: i &* 4, as: SIMD4<Int32>.self)
                    r.storeBytes(of: load(i &+ 4) &- (b &>> sh), toByteOffset: (i &+ 4) &* 4, as: SIMD4<Int32>.self)
                    i &+= 8
                }
            } else {
                while i &+ 8 <= n {
                    var a = k0 &* load(i &- 1) &+ k1 &* load(i &- 2) &+ k2 &* load(i &- 3) &+ k3 &* load(i &- 4)
                    a &+= k4 &* load(i &- 5) &+ k5 &* load(i &- 6) &+ k6 &* load(i &- 7) &+ k7 &* load(i &- 8)
                    var b = k0 &* load(i &+ 3) &+ k1 &* load(i &+ 2) &+ k2 &* load(i &+ 1) &+ k3 &* load(i)
                    b &+= k4 &* load(i &- 1) &+ k5 &* load(i &- 2) &+ k6 &* load(i &- 3) &+ k7 &* load(i &- 4)
                    r.storeBytes(of: load(i) &- (a &>> sh), toByteOffset: i &* 4, as: SIMD4<Int32>.self)
                    r.storeBytes(of: load(i &+ 4) &- (b &>> sh), toByteOffset: (i &+ 4) &* 4, as: SIMD4<Int32>.self)
                    i &+= 8
                }
            }
            while i < n {
                var sum: Int32 = 0
                for j in 0..<order { sum &+= q[j] &* s[i - 1 - j] }
                out[i] = s[i] &- (sum &>> Int32(shift))
                i += 1
            }
        }
    }

    /// The fixed predictor's residual of samples order..<n into ``residual``; false when a
    /// value does not fit 32 bits (RFC 9639 §9.2.7 requires that it does).
    private func fixedResidual(_ s: UnsafePointer<Int64>, _ n: Int, order: Int) -> Bool {
        residual.withUnsafeMutableBufferPointer { rp in
            let r = rp.baseAddress!
            var outside = 0
            @inline(__always) func put(_ i: Int, _ v: Int64) {
                outside &+= FLACSubframeEncoder.outside32(v)
                r[i] = Int32(truncatingIfNeeded: v)
            }
            switch order {
            case 0: for i in 0..<n { put(i, s[i]) }
            case 1: for i in 1..<n { put(i, s[i] &- s[i - 1]) }
            case 2: for i in 2..<n { put(i, s[i] &- 2 &* s[i - 1] &+ s[i - 2]) }
            case 3: for i in 3..<n { put(i, s[i] &- 3 &* s[i - 1] &+ 3 &* s[i - 2] &- s[i - 3]) }
            default: for i in 4..<n { put(i, s[i] &- 4 &* s[i - 1] &+ 6 &* s[i - 2] &- 4 &* s[i - 3] &+ s[i - 4]) }
            }
            return outside == 0
        }
    }

    /// The linear predictor's residual (§9.2.6) into ``residual``; false when a value does
    /// not fit 32 bits.
    private func lpcResidual(_ s: UnsafePointer<Int64>, _ n: Int, coefficients q: [Int32], shift: Int) -> Bool {
        let order = q.count
        var c = [Int64](repeating: 0, count: 32)
        for j in 0..<order { c[j] = Int64(q[j]) }
        return residual.withUnsafeMutableBufferPointer { rp in
            c.withUnsafeBufferPointer { cp in
                let r = rp.baseAddress!, k = cp.baseAddress!
                let sh = Int64(shift)
                var outside = 0
                if order <= 8 {
                    // Terms past the order have zero coefficients; the history before the
                    // block start is never read because i − 1 − j ≥ 0 for j < order ≤ i.
                    // The first samples with the order's own terms; from sample 8 on all
                    // eight terms, those past the order with zero coefficients, so the loop
                    // has no branches.
                    var i = order
                    while i < min(8, n) {
                        var sum: Int64 = 0
                        for j in 0..<order { sum &+= k[j] &* s[i - 1 - j] }
                        let v = s[i] &- (sum &>> sh)
                        outside &+= FLACSubframeEncoder.outside32(v)
                        r[i] = Int32(truncatingIfNeeded: v)
                        i += 1
                    }
                    let c0 = k[0], c1 = k[1], c2 = k[2], c3 = k[3], c4 = k[4], c5 = k[5], c6 = k[6], c7 = k[7]
                    while i < n {
                        let h = s + (i &- 8)
                        let sum = c7 &* h[0] &+ c6 &* h[1] &+ c5 &* h[2] &+ c4 &* h[3]
                            &+ c3 &* h[4] &+ c2 &* h[5] &+ c1 &* h[6] &+ c0 &* h[7]
                        let v = s[i] &- (sum &>> sh)
                        outside &+= FLACSubframeEncoder.outside32(v)
                        r[i] = Int32(truncatingIfNeeded: v)
                        i &+= 1
                    }
                } else if order <= 12 {
                    // As above with twelve terms.
                    var i = order
                    while i < min(12, n) {
                        var sum: Int64 = 0
                        for j in 0..<order { sum &+= k[j] &* s[i - 1 - j] }
                        let v = s[i] &- (sum &>> sh)
                        outside &+= FLACSubframeEncoder.outside32(v)
                        r[i] = Int32(truncatingIfNeeded: v)
                        i += 1
                    }
                    let c0 = k[0], c1 = k[1], c2 = k[2], c3 = k[3], c4 = k[4], c5 = k[5]
                    let c6 = k[6], c7 = k[7], c8 = k[8], c9 = k[9], c10 = k[10], c11 = k[11]
                    while i < n {
                        let h = s + (i &- 12)
                        let older = c11 &* h[0] &+ c10 &* h[1] &+ c9 &* h[2] &+ c8 &* h[3] &+ c7 &* h[4] &+ c6 &* h[5]
                        let sum = older &+ c5 &* h[6] &+ c4 &* h[7] &+ c3 &* h[8] &+ c2 &* h[9] &+ c1 &* h[10] &+ c0 &* h[11]
                        let v = s[i] &- (sum &>> sh)
                        outside &+= FLACSubframeEncoder.outside32(v)
                        r[i] = Int32(truncatingIfNeeded: v)
                        i &+= 1
                    }
                } else {
                    for i in order..<n {
                        let h = s + (i - 1)
                        var sum: Int64 = 0
                        for j in 0..<order { sum &+= k[j] &* h[-j] }
                        let v = s[i] &- (sum &>> sh)
                        outside &+= FLACSubframeEncoder.outside32(v)
                        r[i] = Int32(truncatingIfNeeded: v)
                    }
                }
                return outside == 0
            }
        }
    }

    /// 1 when a residual lies outside −(2^31 − 1)...2^31 − 1, the values a 32-bit decoder
    /// holds and negates safely; else 0. No branch.
    @inline(__always)
    static func outside32(_ v: Int64) -> Int {
        UInt64(bitPattern: v &+ 0x7FFF_FFFF) > 0xFFFF_FFFE ? 1 : 0
    }

    // MARK: Rice coding

    /// The cheapest partitioned Rice coding of ``residual``[order..<n] (§9.2.7) by estimate:
    /// partition orders from the largest that divides the block down to 0, each partition
    /// with its estimated best parameter or an escape; returns its estimated bits (method and
    /// order fields included). ``refine(_:order:plan:slot:)`` makes the winner's exact.
    private func bestRice(_ n: Int, order: Int, bits: Int) -> (Int, FLACRicePlan) {
        var top = min(search.maxPartitionOrder, 15)
        while top > 0 && (n & ((1 << top) - 1) != 0 || (n >> top) <= order) { top -= 1 }
        var sums = [UInt64](repeating: 0, count: 1 << top)
        // Per partition the OR of its folded values, which has the largest one's width.
        var maxima = [UInt32](repeating: 0, count: 1 << top)
        residual.withUnsafeBufferPointer { rp in
            let size = n >> top
            let raw = UnsafeRawPointer(rp.baseAddress!)
            for part in 0..<(1 << top) {
                // Folded values u (0, −1, 1, … → 0, 1, 2, …), four at a time, their low and
                // high 16 bits summed apart so that no lane overflows; their OR has the
                // width of the largest.
                var low = SIMD4<UInt32>(), high = SIMD4<UInt32>(), ored = SIMD4<UInt32>()
                var i = max(order, part * size)
                let end = (part + 1) * size
                var sum: UInt64 = 0, most: UInt32 = 0
                while i &+ 4 <= end {
                    let lanes = end &- i >= 4 << 16 ? 1 << 16 : (end &- i) >> 2
                    for _ in 0..<lanes {
                        let v = raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
                        let u = SIMD4<UInt32>(truncatingIfNeeded: (v &<< 1) ^ (v &>> 31))
                        ored |= u
                        low &+= u & 0xFFFF
                        high &+= u &>> 16
                        i &+= 4
                    }
                    sum &+= UInt64(low[0]) &+ UInt64(low[1]) &+ UInt64(low[2]) &+ UInt64(low[3])
                    sum &+= (UInt64(high[0]) &+ UInt64(high[1]) &+ UInt64(high[2]) &+ UInt64(high[3])) << 16
                    most = ored[0] | ored[1] | ored[2] | ored[3]
                    low = SIMD4<UInt32>(); high = SIMD4<UInt32>()
                }
                while i < end {
                    let v = rp[i]
                    let u = UInt32(bitPattern: (v &<< 1) ^ (v &>> 31))
                    sum &+= UInt64(u)
                    most |= u
                    i += 1
                }
                sums[part] = sum
                maxima[part] = most
            }
        }
        let maxParameter = FLACSubframeEncoder.maxParameter
        var bestBits = Int.max
        var best = FLACRicePlan()
        var po = top
        // One pair of working arrays for every order; the best order's part is copied out.
        var parameters = [Int](repeating: 0, count: 1 << top)
        var widths = [Int](repeating: 0, count: 1 << top)
        while true {
            let parts = 1 << po, size = n >> po
            var total = 6
            var rice2 = false
            for part in 0..<parts {
                let count = size - (part == 0 ? order : 0)
                let (k, cost, width) = FLACSubframeEncoder.partitionCost(count: count, sum: sums[part], maximum: maxima[part],
                                                                         maxParameter: maxParameter)
                parameters[part] = k
                widths[part] = width
                if width >= 0 && 5 + count * width < cost {
                    total += 5 + count * width
                } else {
                    if k > 14 { rice2 = true }
                    total += cost
                }
            }
            total += parts * (rice2 ? 5 : 4)
            if total < bestBits {
                bestBits = total
                best = FLACRicePlan(partitionOrder: po, rice2: rice2, parameters: Array(parameters[0..<parts]),
                                    escapeWidths: Array(widths[0..<parts]))
            }
            if po == 0 { break }
            // Pairs of partitions make the next order's.
            for part in 0..<(parts / 2) {
                sums[part] = sums[2 * part] &+ sums[2 * part + 1]
                maxima[part] = maxima[2 * part] | maxima[2 * part + 1]
            }
            po -= 1
        }
        return (bestBits, best)
    }

    static let maxParameter = 30

    /// Estimated Rice bits of one partition of `count` folded residuals summing to `sum`:
    /// the parameter k near log2 of their mean with the least estimate, counting
    /// Σ⌊u/2^k⌋ as (sum >> k) less half a unit a value (what the floors drop on average);
    /// and the width of plain values for an escape (−1 when none fits). Returns (k, bits, width).
    static func partitionCost(count: Int, sum: UInt64, maximum: UInt32, maxParameter: Int) -> (Int, Int, Int) {
        guard count > 0 else { return (0, 0, -1) }
        let mean = sum / UInt64(count)
        let guess = mean == 0 ? 0 : 63 - mean.leadingZeroBitCount
        var bestK = 0, bestCost = Int.max
        for k in max(0, guess - 1)...min(maxParameter, guess + 1) {
            var cost = count * (k + 1) + Int(min(sum >> UInt64(k), UInt64(Int.max / 2)))
            if k > 0 { cost -= count / 2 }
            if cost < bestCost { bestCost = cost; bestK = k }
        }
        let width = 32 - maximum.leadingZeroBitCount
        return (bestK, bestCost, width <= 31 ? width : -1)
    }

    /// The plan's partitioning with each Rice parameter checked exactly against its
    /// neighbours and against an escape (the estimates can be off), for the residual kept
    /// in `slot`; returns the exact bits of the residual coding.
    private func refine(_ n: Int, order: Int, plan: FLACRicePlan, slot: Int) -> (Int, FLACRicePlan) {
        var p = plan
        let maxParameter = FLACSubframeEncoder.maxParameter
        let parts = 1 << p.partitionOrder, size = n >> p.partitionOrder
        var total = 6
        kept[slot].withUnsafeBufferPointer { rp in
            for part in 0..<parts {
                let start = max(order, part * size), end = (part + 1) * size, count = end - start
                let k0 = p.parameters[part]
                // Σ⌊u/2^k⌋ for the three parameters around the estimate, in one pass.
                let low = max(0, min(k0 - 1, maxParameter - 2))
                var q0: UInt64 = 0, q1: UInt64 = 0, q2: UInt64 = 0
                let k = UInt32(low)
                var i = start
                // Four at a time in 32-bit lanes when they cannot overflow: every u >> low is
                // below 2^(width − low), and there are fewer than 2^(bit length of count) of them.
                let width = p.escapeWidths[part]
                if width >= 0 && width - low + (Int.bitWidth - count.leadingZeroBitCount) <= 32 {
                    let raw = UnsafeRawPointer(rp.baseAddress!)
                    let kv = SIMD4<UInt32>(repeating: k)
                    var v0 = SIMD4<UInt32>(), v1 = SIMD4<UInt32>(), v2 = SIMD4<UInt32>()
                    while i &+ 4 <= end {
                        let v = raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
                        let u = SIMD4<UInt32>(truncatingIfNeeded: (v &<< 1) ^ (v &>> 31)) &>> kv
                        v0 &+= u
                        v1 &+= u &>> 1
                        v2 &+= u &>> 2
                        i &+= 4
                    }
                    for lane in 0..<4 {
                        q0 &+= UInt64(v0[lane])
                        q1 &+= UInt64(v1[lane])
                        q2 &+= UInt64(v2[lane])
                    }
                }
                while i < end {
                    let v = rp[i]
                    let u = UInt32(bitPattern: (v &<< 1) ^ (v &>> 31)) >> k
                    q0 &+= UInt64(u)
                    q1 &+= UInt64(u >> 1)
                    q2 &+= UInt64(u >> 2)
                    i += 1
                }
                var bestK = k0, bestCost = Int.max
                for (j, q) in [(0, q0), (1, q1), (2, q2)] {
                    let cost = Int(q) + count * (low + j + 1)
                    if cost < bestCost { bestCost = cost; bestK = low + j }
                }
                if width >= 0 && 5 + count * width < bestCost {
                    bestK = -(width + 1)
                    bestCost = 5 + count * width
                }
                p.parameters[part] = bestK
                total += bestCost
            }
        }
        p.rice2 = p.parameters.contains { $0 > 14 }
        total += parts * (p.rice2 ? 5 : 4)
        return (total, p)
    }

    // MARK: Writing

    /// Writes the subframe `plan` chose for the samples at `x`, the last plan made for `slot`.
    func write(_ plan: FLACSubframePlan, _ x: UnsafePointer<Int64>, count n: Int, bits: Int, slot: Int, to w: inout BitWriter) {
        let type: UInt32
        switch plan.kind {
        case .constant: type = 0
        case .verbatim: type = 1
        case .fixed: type = 8 + UInt32(plan.order)
        case .lpc: type = 32 + UInt32(plan.order - 1)
        }
        // §9.2.1: a zero bit, the type, the wasted-bits flag and (unary) count.
        w.write(type << 1 | (plan.wasted > 0 ? 1 : 0), bits: 8)
        if plan.wasted > 0 { w.writeUnary(plan.wasted - 1) }
        let b = bits - plan.wasted
        switch plan.kind {
        case .constant:
            w.writeSigned(x[0] >> Int64(plan.wasted), bits: b)
            return
        case .verbatim:
            for i in 0..<n { w.writeSigned(x[i] >> Int64(plan.wasted), bits: b) }
            return
        case .fixed, .lpc:
            break
        }
        for i in 0..<plan.order { w.writeSigned(x[i] &>> Int64(plan.wasted), bits: b) }
        if plan.kind == .lpc {
            w.write(UInt32(plan.precision - 1), bits: 4)
            w.writeSigned(Int64(plan.shift), bits: 5)
            for c in plan.coefficients { w.writeSigned(Int64(c), bits: plan.precision) }
        }
        writeResidual(plan.rice, n, order: plan.order, slot: slot, to: &w)
    }

    private func writeResidual(_ rice: FLACRicePlan, _ n: Int, order: Int, slot: Int, to w: inout BitWriter) {
        w.write(rice.rice2 ? 1 : 0, bits: 2)
        w.write(UInt32(rice.partitionOrder), bits: 4)
        let parts = 1 << rice.partitionOrder, size = n >> rice.partitionOrder
        let parameterBits = rice.rice2 ? 5 : 4
        let escape: UInt32 = rice.rice2 ? 31 : 15
        kept[slot].withUnsafeBufferPointer { rp in
            for part in 0..<parts {
                let start = max(order, part * size), end = (part + 1) * size
                let k = rice.parameters[part]
                if k < 0 {
                    let width = -k - 1
                    w.write(escape, bits: parameterBits)
                    w.write(UInt32(width), bits: 5)
                    if width > 0 { for i in start..<end { w.writeSigned(Int64(rp[i]), bits: width) } }
                } else {
                    w.write(UInt32(k), bits: parameterBits)
                    w.writeRiceSignedBlock(rp.baseAddress! + start, count: end - start, parameter: k)
                }
            }
        }
    }
}

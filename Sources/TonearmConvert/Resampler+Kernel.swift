import TonearmCore

/// A sample type the polyphase engine runs in: Float (SIMD8, the default) or Double
/// (the mastering filters, whose −140 dB and beyond need Double coefficients).
protocol ResamplerSample: BinaryFloatingPoint {
    init(_ value: Float)
    init(_ value: Double)
    /// This value in the output's type: Float, or Double between two Double stages.
    func output<O: ResamplerSample>() -> O
    /// Σ c[i]·x[i] for i < n, n a multiple of 8 (Float: or of 4, at least 8).
    static func dot(_ c: UnsafePointer<Self>, _ x: UnsafePointer<Self>, _ n: Int) -> Self
    /// (Σ c[i]·x[i], Σ c[i]·y[i]): two channels through the same taps, each summed exactly
    /// as ``dot(_:_:_:)`` sums it, loading the taps once.
    static func dotPair(_ c: UnsafePointer<Self>, _ x: UnsafePointer<Self>, _ y: UnsafePointer<Self>, _ n: Int) -> (Self, Self)
    /// (Σ c[i]·x[i], Σ d[i]·x[i]) in one pass, n a multiple of 8.
    static func dot2(_ c: UnsafePointer<Self>, _ d: UnsafePointer<Self>, _ x: UnsafePointer<Self>, _ n: Int) -> (Self, Self)
    /// ``dot2(_:_:_:_:)`` for two channels, loading the taps once; each channel summed as
    /// ``dot2(_:_:_:_:)`` sums it.
    static func dot2Pair(_ c: UnsafePointer<Self>, _ d: UnsafePointer<Self>, _ x: UnsafePointer<Self>, _ y: UnsafePointer<Self>,
                         _ n: Int) -> (Self, Self, Self, Self)
}

// The summation order depends only on the tap index, never on where a chunk boundary or an
// alignment falls, so that any chunking gives bit-identical output.

extension Float: ResamplerSample {
    @inline(__always) func output<O: ResamplerSample>() -> O { O(self) }

    /// The lanes' sum as a tree (four vector adds and shuffles; `sum()` adds the eight lanes
    /// one after another), with `tail`'s four lanes when there is one.
    @inline(__always)
    static func lanesSum(_ a: SIMD8<Float>, _ tail: SIMD4<Float>?) -> Float {
        var h = a.lowHalf + a.highHalf
        if let tail { h += tail }
        let q = h.lowHalf + h.highHalf
        return q[0] + q[1]
    }

    /// Both vectors' lane sums at once, as ``lanesSum(_:_:)`` sums each.
    @inline(__always)
    static func lanesSums(_ a: SIMD8<Float>, _ b: SIMD8<Float>, _ tails: (SIMD4<Float>, SIMD4<Float>)?) -> (Float, Float) {
        var ha = a.lowHalf + a.highHalf, hb = b.lowHalf + b.highHalf
        if let tails {
            ha += tails.0
            hb += tails.1
        }
        let q = SIMD4(lowHalf: ha.lowHalf, highHalf: hb.lowHalf) + SIMD4(lowHalf: ha.highHalf, highHalf: hb.highHalf)
        let r = q.evenHalf + q.oddHalf
        return (r[0], r[1])
    }

    // The accumulators start from the first products, not from zero: x + 0 is not x for
    // x = −0, so the compiler keeps every add of a zero start. Float's dot and dotPair also
    // take n = 4 mod 8 (at least 8): the last four taps go into a tail of four lanes.

    @inline(__always)
    static func dot(_ c: UnsafePointer<Float>, _ x: UnsafePointer<Float>, _ n: Int) -> Float {
        let cr = UnsafeRawPointer(c), xr = UnsafeRawPointer(x)
        @inline(__always) func product(_ o: Int) -> SIMD8<Float> {
            cr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self) * xr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
        }
        let end = n &* 4, whole = end & ~31
        let tail = whole == end ? nil
            : cr.loadUnaligned(fromByteOffset: whole, as: SIMD4<Float>.self) * xr.loadUnaligned(fromByteOffset: whole, as: SIMD4<Float>.self)
        var a0 = product(0)
        guard whole > 32 else { return lanesSum(a0, tail) }
        // Two accumulators so that consecutive adds do not wait on each other.
        var a1 = product(32)
        var o = 64
        while o &+ 64 <= whole {
            a0 += product(o)
            a1 += product(o &+ 32)
            o &+= 64
        }
        if o < whole { a0 += product(o) }
        return lanesSum(a0 + a1, tail)
    }

    @inline(__always)
    static func dotPair(_ c: UnsafePointer<Float>, _ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, _ n: Int) -> (Float, Float) {
        let cr = UnsafeRawPointer(c), xr = UnsafeRawPointer(x), yr = UnsafeRawPointer(y)
        @inline(__always) func products(_ o: Int) -> (SIMD8<Float>, SIMD8<Float>) {
            let t = cr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            return (t * xr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self),
                    t * yr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
        }
        let end = n &* 4, whole = end & ~31
        var tails: (SIMD4<Float>, SIMD4<Float>)?
        if whole < end {
            let t = cr.loadUnaligned(fromByteOffset: whole, as: SIMD4<Float>.self)
            tails = (t * xr.loadUnaligned(fromByteOffset: whole, as: SIMD4<Float>.self),
                     t * yr.loadUnaligned(fromByteOffset: whole, as: SIMD4<Float>.self))
        }
        var (a0, b0) = products(0)
        guard whole > 32 else { return lanesSums(a0, b0, tails) }
        var (a1, b1) = products(32)
        var o = 64
        while o &+ 64 <= whole {
            let (p, q) = products(o), (r, t) = products(o &+ 32)
            a0 += p
            b0 += q
            a1 += r
            b1 += t
            o &+= 64
        }
        if o < whole {
            let (p, q) = products(o)
            a0 += p
            b0 += q
        }
        return lanesSums(a0 + a1, b0 + b1, tails)
    }

    @inline(__always)
    static func dot2(_ c: UnsafePointer<Float>, _ d: UnsafePointer<Float>, _ x: UnsafePointer<Float>, _ n: Int) -> (Float, Float) {
        let cr = UnsafeRawPointer(c), dr = UnsafeRawPointer(d), xr = UnsafeRawPointer(x)
        var a = SIMD8<Float>(), b = SIMD8<Float>()
        var i = 0
        while i < n {
            let v = xr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            a += cr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) * v
            b += dr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) * v
            i += 8
        }
        return lanesSums(a, b, nil)
    }
}

extension Float {
    @inline(__always)
    static func dot2Pair(_ c: UnsafePointer<Float>, _ d: UnsafePointer<Float>, _ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>,
                         _ n: Int) -> (Float, Float, Float, Float)
    {
        let cr = UnsafeRawPointer(c), dr = UnsafeRawPointer(d), xr = UnsafeRawPointer(x), yr = UnsafeRawPointer(y)
        var a = SIMD8<Float>(), b = SIMD8<Float>(), e = SIMD8<Float>(), f = SIMD8<Float>()
        var i = 0
        while i < n {
            let cv = cr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            let dv = dr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            let v = xr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            let w = yr.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            a += cv * v
            b += dv * v
            e += cv * w
            f += dv * w
            i += 8
        }
        let (p, q) = lanesSums(a, b, nil), (r, t) = lanesSums(e, f, nil)
        return (p, q, r, t)
    }
}

extension Double: ResamplerSample {
    @inline(__always)
    static func dot2Pair(_ c: UnsafePointer<Double>, _ d: UnsafePointer<Double>, _ x: UnsafePointer<Double>, _ y: UnsafePointer<Double>,
                         _ n: Int) -> (Double, Double, Double, Double)
    {
        let (a, b) = dot2(c, d, x, n), (e, f) = dot2(c, d, y, n)
        return (a, b, e, f)
    }

    @inline(__always) func output<O: ResamplerSample>() -> O { O(self) }

    @inline(__always)
    static func dot(_ c: UnsafePointer<Double>, _ x: UnsafePointer<Double>, _ n: Int) -> Double {
        let cr = UnsafeRawPointer(c), xr = UnsafeRawPointer(x)
        var a0 = SIMD4<Double>(), a1 = SIMD4<Double>()
        var i = 0
        while i < n {
            a0 += cr.loadUnaligned(fromByteOffset: i * 8, as: SIMD4<Double>.self)
                * xr.loadUnaligned(fromByteOffset: i * 8, as: SIMD4<Double>.self)
            a1 += cr.loadUnaligned(fromByteOffset: i * 8 + 32, as: SIMD4<Double>.self)
                * xr.loadUnaligned(fromByteOffset: i * 8 + 32, as: SIMD4<Double>.self)
            i += 8
        }
        let v = a0 + a1, h = v.lowHalf + v.highHalf
        return h[0] + h[1]
    }

    /// In SIMD2, the register width of SSE2 and NEON, with four accumulators per channel
    /// (one per load of the taps, so no sum waits on another): SIMD4 of Double came out as
    /// twice the instructions, and two accumulators per channel let the compiler shuffle
    /// lanes between them (74 instructions per 8 taps instead of 31).
    @inline(__always)
    static func dotPair(_ c: UnsafePointer<Double>, _ x: UnsafePointer<Double>, _ y: UnsafePointer<Double>, _ n: Int) -> (Double, Double) {
        let cr = UnsafeRawPointer(c), xr = UnsafeRawPointer(x), yr = UnsafeRawPointer(y)
        @inline(__always) func load(_ p: UnsafeRawPointer, _ o: Int) -> SIMD2<Double> {
            p.loadUnaligned(fromByteOffset: o, as: SIMD2<Double>.self)
        }
        // The accumulators start from the first eight taps' products (see Float's).
        let c0 = load(cr, 0), c1 = load(cr, 16), c2 = load(cr, 32), c3 = load(cr, 48)
        var a0 = c0 * load(xr, 0), a1 = c1 * load(xr, 16), a2 = c2 * load(xr, 32), a3 = c3 * load(xr, 48)
        var b0 = c0 * load(yr, 0), b1 = c1 * load(yr, 16), b2 = c2 * load(yr, 32), b3 = c3 * load(yr, 48)
        var o = 64
        let end = n &* 8
        while o < end {
            let c0 = load(cr, o), c1 = load(cr, o &+ 16), c2 = load(cr, o &+ 32), c3 = load(cr, o &+ 48)
            a0 += c0 * load(xr, o)
            a1 += c1 * load(xr, o &+ 16)
            a2 += c2 * load(xr, o &+ 32)
            a3 += c3 * load(xr, o &+ 48)
            b0 += c0 * load(yr, o)
            b1 += c1 * load(yr, o &+ 16)
            b2 += c2 * load(yr, o &+ 32)
            b3 += c3 * load(yr, o &+ 48)
            o &+= 64
        }
        let a = (a0 + a1) + (a2 + a3), b = (b0 + b1) + (b2 + b3)
        return (a[0] + a[1], b[0] + b[1])
    }

    @inline(__always)
    static func dot2(_ c: UnsafePointer<Double>, _ d: UnsafePointer<Double>, _ x: UnsafePointer<Double>, _ n: Int) -> (Double, Double) {
        let cr = UnsafeRawPointer(c), dr = UnsafeRawPointer(d), xr = UnsafeRawPointer(x)
        var a = SIMD4<Double>(), b = SIMD4<Double>()
        var i = 0
        while i < n {
            let v = xr.loadUnaligned(fromByteOffset: i * 8, as: SIMD4<Double>.self)
            a += cr.loadUnaligned(fromByteOffset: i * 8, as: SIMD4<Double>.self) * v
            b += dr.loadUnaligned(fromByteOffset: i * 8, as: SIMD4<Double>.self) * v
            i += 4
        }
        let p = a.lowHalf + a.highHalf, q = b.lowHalf + b.highHalf
        return (p[0] + p[1], q[0] + q[1])
    }
}

/// ceil(n · L / M) without overflow (Int.max when it does not fit): the frames a stream of
/// `n` input frames gives when the output rate is L/M times the input rate.
func resampledLength(_ n: Int, l: Int, m: Int) -> Int {
    let (high, low) = UInt(n).multipliedFullWidth(by: UInt(l))
    guard high < UInt(m) else { return Int.max }
    let (q, r) = UInt(m).dividingFullWidth((high, low))
    let total = q + (r > 0 ? 1 : 0)
    return total > UInt(Int.max) ? Int.max : Int(total)
}

/// The stream state and history of the polyphase and linear modes, for one sample type.
///
/// Output frame k sits at input time k·M/L. The state keeps that time as a history index
/// (`start`, the first input frame of the next output's window) and a phase in 0..<L, so
/// that every step is integer additions and one compare.
final class ResamplerEngine<T: ResamplerSample> {
    enum Mode {
        /// Linear interpolation between two frames.
        case linear
        /// One row of taps per phase (L rows).
        case exact
        /// `finePhases` rows of taps and of differences to the next row, interpolated.
        case interpolated
    }

    let mode: Mode
    let channels: Int
    let taps: Int
    /// Output rate and input rate, reduced: the step between outputs is M/L input frames.
    let l: Int, m: Int
    let stepWhole: Int, stepPhase: Int
    /// Frames of silence that precede input frame 0 in the history.
    let lead: Int
    /// Exact: L × taps. Interpolated: finePhases × (taps of the phase, then the difference
    /// to the next phase's taps). Shared with other engines of the same design: never written.
    let table: UnsafePointer<T>
    private let coefficients: ResamplerTable<T>
    let tableCount: Int
    let finePhases: Int
    /// finePhases / L, for the fine-table position of a phase.
    let phaseScale: Double
    /// 1 / L, for linear interpolation.
    let inverseL: Double

    /// Per channel, `capacity` history frames.
    let history: UnsafeMutablePointer<T>
    let capacity: Int
    var filled = 0
    var start = 0
    var phase = 0
    /// Frames of input taken since the stream began, and output frames given.
    var inputFrames = 0
    var outputFrames = 0

    /// Input frames copied into the history per round.
    static var block: Int { 4096 }

    init(mode: Mode, channels: Int, l: Int, m: Int, filter: KaiserSinc?, finePhases: Int) {
        self.mode = mode
        self.channels = channels
        self.l = l
        self.m = m
        stepWhole = m / l
        stepPhase = m % l
        inverseL = 1 / Double(l)
        switch mode {
        case .linear:
            taps = 2
            lead = 0
            tableCount = 0
            self.finePhases = 0
        case .exact:
            let f = filter!
            taps = f.taps
            lead = f.half - 1
            tableCount = l * taps
            self.finePhases = 0
        case .interpolated:
            let f = filter!
            taps = f.taps
            lead = f.half - 1
            tableCount = finePhases * taps * 2
            self.finePhases = finePhases
        }
        phaseScale = Double(finePhases) / Double(l)
        if let f = filter, mode != .linear {
            let key = ResamplerTableCache.Key(
                sample: ObjectIdentifier(T.self), exact: mode == .exact, l: mode == .exact ? l : 0,
                finePhases: finePhases, cutoff: f.cutoff, beta: f.beta, taps: f.taps, normalized: f.normalizesPhases)
            let (taps, count) = (self.taps, tableCount)
            let exact = mode == .exact
            coefficients = ResamplerTableCache.table(key, count: count) { table in
                if exact {
                    for p in 0..<l {
                        let row = f.phaseTaps(Double(p) / Double(l))
                        for j in 0..<taps { table[p * taps + j] = T(row[j]) }
                    }
                } else {
                    var row = f.phaseTaps(0)
                    for p in 0..<finePhases {
                        let next = f.phaseTaps(Double(p + 1) / Double(finePhases))
                        for j in 0..<taps {
                            table[p * 2 * taps + j] = T(row[j])
                            table[p * 2 * taps + taps + j] = T(next[j] - row[j])
                        }
                        row = next
                    }
                }
            }
        } else {
            coefficients = ResamplerTable(count: 1) { $0[0] = 0 }
        }
        table = coefficients.pointer
        capacity = taps + ResamplerEngine.block + 8
        history = .allocate(capacity: capacity * channels)
        history.initialize(repeating: 0, count: capacity * channels)
        reset()
    }

    deinit {
        history.deallocate()
    }

    func reset() {
        for c in 0..<channels { (history + c * capacity).update(repeating: 0, count: lead) }
        filled = lead
        start = 0
        phase = 0
        inputFrames = 0
        outputFrames = 0
    }

    /// A bound on the outputs `n` more input frames (and a flush) can give.
    func maximumOutputFrames(forInputFrames n: Int) -> Int {
        // Outputs fall at most one per M/L input frames over the new frames and the
        // filter's reach into the silence after the end; Double's rounding is far inside the
        // slack of 3.
        let bound = (Double(n) + Double(taps + 2)) * Double(l) / Double(m)
        return bound < 1e18 ? Int(bound.rounded(.up)) + 3 : Int.max
    }

    /// Outputs a whole stream of `inputFrames` frames gives: ceil(inputFrames · L / M).
    func totalOutputFrames() -> Int { resampledLength(inputFrames, l: l, m: m) }

    /// Takes `frames` frames of each input channel and writes the outputs they complete, at
    /// `offset` in each output channel, at most `limit` of them (a flush's limit: once it is
    /// reached, the rest of the input is dropped). The caller has checked that the outputs have room for
    /// ``maximumOutputFrames(forInputFrames:)``. Float input, or Double from the FFT stage.
    func process<S: BinaryFloatingPoint, O: ResamplerSample>(_ inputs: UnsafePointer<UnsafePointer<S>>, frames: Int,
                                         _ outputs: UnsafePointer<UnsafeMutablePointer<O>>, at offset: Int = 0,
                                         limit: Int = Int.max) -> Int
    {
        var consumed = 0, produced = 0
        while consumed < frames {
            compact()
            if start > 0 {
                // Downsampling with a short window can step past whole frames unread.
                let skip = min(start, frames - consumed)
                consumed += skip
                start -= skip
                if consumed == frames { break }
            }
            let count = min(capacity - filled, frames - consumed)
            for c in 0..<channels {
                let src = inputs[c] + consumed, dst = history + c * capacity + filled
                for i in 0..<count { dst[i] = T(src[i]) }
            }
            filled += count
            consumed += count
            produced += produce(outputs, at: offset + produced, limit: limit - produced)
            // At the limit the history can hold the next window and still give nothing:
            // the rest of the input is past the outputs wanted.
            if produced == limit { break }
        }
        inputFrames += frames
        outputFrames += produced
        return produced
    }

    /// Writes the rest of the stream: the outputs whose time is before the end of the input,
    /// with silence after it. Then the engine starts a new stream.
    func flush<O: ResamplerSample>(_ outputs: UnsafePointer<UnsafeMutablePointer<O>>, at offset: Int = 0, remaining: Int) {
        var produced = 0
        while produced < remaining {
            compact()
            if start + taps > filled {
                // Silence after the end; when `start` is past the history, the frames up to
                // it are silence too.
                let need = min(capacity, start + taps) - filled
                for c in 0..<channels { (history + c * capacity + filled).update(repeating: 0, count: need) }
                filled += need
            }
            produced += produce(outputs, at: offset + produced, limit: remaining - produced)
        }
        reset()
    }

    /// Drops history frames before the next output's window.
    private func compact() {
        let drop = min(start, filled)
        guard drop > 0 else { return }
        let keep = filled - drop
        for c in 0..<channels {
            let h = history + c * capacity
            h.update(from: h + drop, count: keep)
        }
        filled = keep
        start -= drop
    }

    /// Writes every output whose window lies in the history (at most `limit`), at `offset`
    /// in each output channel, and advances the state past them.
    private func produce<O: ResamplerSample>(_ outputs: UnsafePointer<UnsafeMutablePointer<O>>, at offset: Int, limit: Int) -> Int {
        // Count first, in phase units (frame · L + phase; each output steps M): output i's
        // window fits while its frame + taps ≤ filled, that is while its position is under
        // (filled − taps + 1) · L. Then each channel runs the same steps.
        let position = start * l + phase, bound = (filled - taps + 1) * l
        guard bound > position && limit > 0 else { return 0 }
        let k = min(limit, (bound - position + m - 1) / m)
        let end = position + k * m
        let s = end / l, p = end % l
        var c = 0
        if mode != .linear {
            // Pairs of channels share each load of the taps.
            while c + 2 <= channels {
                let h0 = UnsafePointer(history + c * capacity), h1 = UnsafePointer(history + (c + 1) * capacity)
                if mode == .exact {
                    // The short filters of the two-stage designs, with their length known to
                    // the compiler: the dot products unroll completely.
                    switch taps {
                    case 12: runExactPair(h0, h1, outputs[c] + offset, outputs[c + 1] + offset, k, taps: 12)
                    case 16: runExactPair(h0, h1, outputs[c] + offset, outputs[c + 1] + offset, k, taps: 16)
                    case 24: runExactPair(h0, h1, outputs[c] + offset, outputs[c + 1] + offset, k, taps: 24)
                    case 32: runExactPair(h0, h1, outputs[c] + offset, outputs[c + 1] + offset, k, taps: 32)
                    default: runExactPair(h0, h1, outputs[c] + offset, outputs[c + 1] + offset, k, taps: taps)
                    }
                } else {
                    runInterpolatedPair(h0, h1, outputs[c] + offset, outputs[c + 1] + offset, k)
                }
                c += 2
            }
        }
        for c in c..<channels {
            let h = UnsafePointer(history + c * capacity)
            let out = outputs[c] + offset
            switch mode {
            case .exact: runExact(h, out, k)
            case .interpolated: runInterpolated(h, out, k)
            case .linear: runLinear(h, out, k)
            }
        }
        start = s
        phase = p
        return k
    }

    private func runExact<O: ResamplerSample>(_ h: UnsafePointer<T>, _ out: UnsafeMutablePointer<O>, _ k: Int) {
        var s = start, p = phase
        let n = taps, t = table
        for i in 0..<k {
            out[i] = T.dot(t + p * n, h + s, n).output()
            s += stepWhole
            p += stepPhase
            if p >= l { p -= l; s += 1 }
        }
    }

    @inline(__always)
    private func runExactPair<O: ResamplerSample>(_ h0: UnsafePointer<T>, _ h1: UnsafePointer<T>,
                              _ out0: UnsafeMutablePointer<O>, _ out1: UnsafeMutablePointer<O>, _ k: Int, taps n: Int)
    {
        var s = start, p = phase
        let t = table
        for i in 0..<k {
            let (a, b) = T.dotPair(t + p * n, h0 + s, h1 + s, n)
            out0[i] = a.output()
            out1[i] = b.output()
            s += stepWhole
            p += stepPhase
            if p >= l { p -= l; s += 1 }
        }
    }

    private func runInterpolated<O: ResamplerSample>(_ h: UnsafePointer<T>, _ out: UnsafeMutablePointer<O>, _ k: Int) {
        var s = start, p = phase
        let n = taps, t = table, last = finePhases - 1
        for i in 0..<k {
            let x = Double(p) * phaseScale
            var row = Int(x)
            var frac = x - Double(row)
            if row > last { row = last; frac = 1 }
            let base = t + row * 2 * n
            let (a, b) = T.dot2(base, base + n, h + s, n)
            out[i] = (a + T(frac) * b).output()
            s += stepWhole
            p += stepPhase
            if p >= l { p -= l; s += 1 }
        }
    }

    private func runInterpolatedPair<O: ResamplerSample>(_ h0: UnsafePointer<T>, _ h1: UnsafePointer<T>,
                                     _ out0: UnsafeMutablePointer<O>, _ out1: UnsafeMutablePointer<O>, _ k: Int)
    {
        var s = start, p = phase
        let n = taps, t = table, last = finePhases - 1
        for i in 0..<k {
            let x = Double(p) * phaseScale
            var row = Int(x)
            var frac = x - Double(row)
            if row > last { row = last; frac = 1 }
            let base = t + row * 2 * n
            let (a, b, e, f) = T.dot2Pair(base, base + n, h0 + s, h1 + s, n)
            out0[i] = (a + T(frac) * b).output()
            out1[i] = (e + T(frac) * f).output()
            s += stepWhole
            p += stepPhase
            if p >= l { p -= l; s += 1 }
        }
    }

    private func runLinear<O: ResamplerSample>(_ h: UnsafePointer<T>, _ out: UnsafeMutablePointer<O>, _ k: Int) {
        var s = start, p = phase
        for i in 0..<k {
            let a = Double(h[s]), b = Double(h[s + 1])
            out[i] = O(a + Double(p) * inverseL * (b - a))
            s += stepWhole
            p += stepPhase
            if p >= l { p -= l; s += 1 }
        }
    }
}

/// A table of filter coefficients, written once when it is made and only read after, so
/// that engines on several threads can share it.
final class ResamplerTable<T: ResamplerSample>: @unchecked Sendable {
    let pointer: UnsafePointer<T>
    let count: Int

    init(count: Int, fill: (UnsafeMutablePointer<T>) -> Void) {
        let p = UnsafeMutablePointer<T>.allocate(capacity: count)
        p.initialize(repeating: 0, count: count)
        fill(p)
        pointer = UnsafePointer(p)
        self.count = count
    }

    deinit { UnsafeMutablePointer(mutating: pointer).deallocate() }
}

/// The tables designed last, kept for the next converter of the same design. A player that
/// seeks, ExtAudioFile making its converter again after a client format change, and a stream
/// whose format changes all ask for the same filter again, and designing it (a Bessel
/// series per tap, L or finePhases rows of taps) costs more than converting a short buffer.
/// Bounded by the bytes the tables hold; a table larger than the whole budget is made for
/// its engine alone.
enum ResamplerTableCache {
    struct Key: Hashable {
        let sample: ObjectIdentifier
        let exact: Bool
        let l: Int
        let finePhases: Int
        let cutoff: Double
        let beta: Double
        let taps: Int
        let normalized: Bool
    }

    /// 32 MiB: the default quality's 44.1 → 48 kHz table is about 0.1 MB, the highest
    /// quality's up to a few MB.
    static let budget = 32 << 20
    private static let lock = Lock()
    /// Least recently used first.
    nonisolated(unsafe) private static var entries: [(key: Key, table: AnyObject, bytes: Int)] = []

    static func table<T>(_ key: Key, count: Int, fill: (UnsafeMutablePointer<T>) -> Void) -> ResamplerTable<T> {
        let bytes = count * MemoryLayout<T>.stride
        if let hit = lock.withLock({ () -> ResamplerTable<T>? in
            guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = entries.remove(at: i)
            entries.append(entry)
            return entry.table as? ResamplerTable<T>
        }) {
            return hit
        }
        // Designed outside the lock: two threads may both design the same table, and the
        // second one's is the one kept.
        let made = ResamplerTable<T>(count: max(1, count), fill: fill)
        guard bytes <= budget else { return made }
        lock.withLock {
            entries.removeAll { $0.key == key }
            var total = entries.reduce(0) { $0 + $1.bytes } + bytes
            while total > budget, !entries.isEmpty { total -= entries.removeFirst().bytes }
            entries.append((key, made, bytes))
        }
        return made
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// A floor configuration of the setup header: the spectral envelope the residue is
/// multiplied by.
enum VorbisFloor {
    case zero(VorbisFloor0)
    case one(VorbisFloor1)
}

/// Floor type 1 (Vorbis I §7): a piecewise-linear curve in the dB domain.
struct VorbisFloor1 {
    let partitionClasses: [Int]
    let classDimensions: [Int]
    let classSubclasses: [Int]
    let classMasterbooks: [Int]
    /// Per class, `1 << subclasses` books, −1 for none.
    let subclassBooks: [[Int]]
    let multiplier: Int
    let xList: [Int]
    /// Indices into `xList` in ascending X order.
    let sortedOrder: [Int]
    let lowNeighbor: [Int]
    let highNeighbor: [Int]
    let range: Int
    let yBits: Int

    /// The most X values a floor 1 has (§7.2.2).
    static let maximumValues = 65

    /// §7.2.2.
    init(_ r: inout VorbisBits, codebooks: [VorbisCodebook]) throws(AudioError) {
        func need(_ n: Int) throws(AudioError) -> Int {
            let v = r.readInt(n)
            guard !r.isExhausted else { throw VorbisSetupHeader.fail("it ends inside a floor") }
            return v
        }
        let partitions = try need(5)
        var classes: [Int] = []
        for _ in 0..<partitions { classes.append(try need(4)) }
        let classCount = (classes.max() ?? -1) + 1
        var dimensions: [Int] = [], subclasses: [Int] = [], masterbooks: [Int] = [], books: [[Int]] = []
        for _ in 0..<classCount {
            dimensions.append(try need(3) + 1)
            let s = try need(2)
            subclasses.append(s)
            var master = -1
            if s > 0 {
                master = try need(8)
                guard master < codebooks.count else { throw VorbisSetupHeader.fail("a floor names a missing codebook") }
            }
            masterbooks.append(master)
            var list: [Int] = []
            for _ in 0..<(1 << s) {
                let b = try need(8) - 1
                guard b < codebooks.count else { throw VorbisSetupHeader.fail("a floor names a missing codebook") }
                list.append(b)
            }
            books.append(list)
        }
        multiplier = try need(2) + 1
        let rangeBits = try need(4)
        var x = [0, 1 << rangeBits]
        for c in classes {
            guard x.count + dimensions[c] <= VorbisFloor1.maximumValues else { throw VorbisSetupHeader.fail("a floor 1 has more than 65 points") }
            for _ in 0..<dimensions[c] { x.append(try need(rangeBits)) }
        }
        guard Set(x).count == x.count else { throw VorbisSetupHeader.fail("a floor 1 repeats an X value") }
        partitionClasses = classes
        classDimensions = dimensions
        classSubclasses = subclasses
        classMasterbooks = masterbooks
        subclassBooks = books
        xList = x
        sortedOrder = x.indices.sorted { x[$0] < x[$1] }
        // §9.2.4, §9.2.5: the nearest earlier point below and above in X.
        var low = [Int](repeating: 0, count: x.count), high = [Int](repeating: 1, count: x.count)
        for i in 2..<x.count {
            var lo = -1, hi = -1
            for j in 0..<i {
                if x[j] < x[i] && (lo < 0 || x[j] > x[lo]) { lo = j }
                if x[j] > x[i] && (hi < 0 || x[j] < x[hi]) { hi = j }
            }
            low[i] = max(lo, 0)
            high[i] = max(hi, 0)
        }
        lowNeighbor = low
        highNeighbor = high
        range = [256, 128, 86, 64][multiplier - 1]
        yBits = vorbisILog(range - 1)
    }

    /// Packet decode and amplitude synthesis (§7.2.3, §7.2.4 step 1): the final Y values and
    /// step-2 flags, per point in header order. False when the floor is unused this packet,
    /// also at the end of the packet.
    func decode(_ r: inout VorbisBits, codebooks: [VorbisCodebook], y: UnsafeMutablePointer<Int32>,
                used: UnsafeMutablePointer<Bool>) -> Bool
    {
        guard r.readFlag(), !r.isExhausted else { return false }
        y[0] = Int32(r.read(yBits))
        y[1] = Int32(r.read(yBits))
        var offset = 2
        for k in partitionClasses.indices {  // an index loop: a debug build's iterator allocates
            let c = partitionClasses[k]
            let dims = classDimensions[c], bits = classSubclasses[c]
            let mask = (1 << bits) - 1
            var cval = 0
            if bits > 0 {
                cval = codebooks[classMasterbooks[c]].decode(&r)
                if cval < 0 { return false }
            }
            let books = subclassBooks[c]
            for j in 0..<dims {
                let book = books[cval & mask]
                cval >>= bits
                if book >= 0 {
                    let v = codebooks[book].decode(&r)
                    if v < 0 { return false }
                    y[offset + j] = Int32(v)
                } else {
                    y[offset + j] = 0
                }
            }
            offset += dims
        }
        if r.isExhausted { return false }

        // Step 1: unwrap the differences against the line through each point's neighbours.
        let range = Int32(range)
        y[0] = min(max(y[0], 0), range - 1)
        y[1] = min(max(y[1], 0), range - 1)
        used[0] = true
        used[1] = true
        for i in 2..<xList.count {
            let lo = lowNeighbor[i], hi = highNeighbor[i]
            let predicted = Int32(VorbisFloor1.renderPoint(xList[lo], Int(y[lo]), xList[hi], Int(y[hi]), xList[i]))
            let val = y[i]
            let highRoom = range - predicted, lowRoom = predicted
            let room = highRoom < lowRoom ? highRoom * 2 : lowRoom * 2
            var final: Int32
            if val != 0 {
                used[lo] = true
                used[hi] = true
                used[i] = true
                if val >= room {
                    final = highRoom > lowRoom ? val - lowRoom + predicted : predicted - val + highRoom - 1
                } else {
                    final = val & 1 == 1 ? predicted - (val + 1) / 2 : predicted + val / 2
                }
            } else {
                used[i] = false
                final = predicted
            }
            // A valid setup cannot leave [0, range); a forged one is clamped (§7.2.4).
            y[i] = min(max(final, 0), range - 1)
        }
        return true
    }

    /// §9.2.6.
    @inline(__always)
    static func renderPoint(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ x: Int) -> Int {
        let dy = y1 - y0, adx = x1 - x0
        guard adx != 0 else { return y0 }
        let off = abs(dy) * (x - x0) / adx
        return dy < 0 ? y0 - off : y0 + off
    }

    /// Curve synthesis (§7.2.4 step 2) multiplied into the `n` values of `v`: the lines
    /// between the used points, in the dB domain, looked up in the inverse dB table.
    func apply(y: UnsafePointer<Int32>, used: UnsafePointer<Bool>, to v: UnsafeMutablePointer<Float>, n: Int) {
        VorbisFloor1.inverseDB.withUnsafeBufferPointer { table in
            let db = table.baseAddress!
            var lx = 0, ly = Int(y[sortedOrder[0]]) * multiplier
            for i in 1..<sortedOrder.count {
                let k = sortedOrder[i]
                guard used[k] else { continue }
                let hx = xList[k], hy = Int(y[k]) * multiplier
                if lx < n { VorbisFloor1.renderLine(lx, ly, hx, hy, db, v, n) }
                lx = hx
                ly = hy
            }
            if lx < n {
                let f = db[ly]
                for x in lx..<n { v[x] *= f }
            }
        }
    }

    /// §9.2.7's line from (x0, y0) up to x1 (excluded), each point's value multiplying
    /// `v` at that X below `n`.
    @inline(__always)
    private static func renderLine(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ db: UnsafePointer<Float>,
                                   _ v: UnsafeMutablePointer<Float>, _ n: Int)
    {
        let dy = y1 - y0, adx = x1 - x0
        guard adx > 0 else { return }
        let base = dy / adx
        let sy = dy < 0 ? base - 1 : base + 1
        let ady = abs(dy) - abs(base) * adx
        let end = min(x1, n)
        var y = y0, err = 0
        v[x0] *= db[y]
        var x = x0 + 1
        while x < end {
            err += ady
            if err >= adx {
                err -= adx
                y += sy
            } else {
                y += base
            }
            v[x] *= db[y]
            x += 1
        }
    }
}

/// Floor type 0 (Vorbis I §6): an LSP filter's response. No encoder in use writes it;
/// the curve is computed from the spec's formulas in Double.
struct VorbisFloor0 {
    let order: Int
    let rate: Int
    let barkMapSize: Int
    let amplitudeBits: Int
    let amplitudeOffset: Int
    let books: [Int]
    /// §6.2.3's map for the short and the long block's half size.
    let maps: ([Int32], [Int32])

    /// §6.2.1.
    init(_ r: inout VorbisBits, codebooks: [VorbisCodebook], blockSizes: (Int, Int)) throws(AudioError) {
        func need(_ n: Int) throws(AudioError) -> Int {
            let v = r.readInt(n)
            guard !r.isExhausted else { throw VorbisSetupHeader.fail("it ends inside a floor") }
            return v
        }
        order = try need(8)
        rate = try need(16)
        barkMapSize = try need(16)
        amplitudeBits = try need(6)
        amplitudeOffset = try need(8)
        var list: [Int] = []
        for _ in 0..<(try need(4) + 1) {
            let b = try need(8)
            guard b < codebooks.count else { throw VorbisSetupHeader.fail("a floor 0 names a missing codebook") }
            guard codebooks[b].values != nil else { throw VorbisSetupHeader.fail("a floor 0 codebook has no vector table") }
            list.append(b)
        }
        books = list
        guard order > 0, rate > 0, barkMapSize > 0 else {
            throw VorbisSetupHeader.fail("a floor 0 of order \(order), rate \(rate), bark map size \(barkMapSize)")
        }
        maps = (VorbisFloor0.map(n: blockSizes.0 / 2, rate: rate, barkMapSize: barkMapSize),
                VorbisFloor0.map(n: blockSizes.1 / 2, rate: rate, barkMapSize: barkMapSize))
    }

    /// §6.2.3: bark(x) = 13.1·atan(.00074x) + 2.24·atan(.0000000185x²) + .0001x (errata 20150227).
    static func bark(_ x: Double) -> Double { 13.1 * atan(0.00074 * x) + 2.24 * atan(0.0000000185 * x * x) + 0.0001 * x }

    static func map(n: Int, rate: Int, barkMapSize: Int) -> [Int32] {
        let scale = Double(barkMapSize) / bark(0.5 * Double(rate))
        return (0..<n).map { i in
            Int32(min(Double(barkMapSize - 1), (bark(Double(rate) * Double(i) / Double(2 * n)) * scale).rounded(.down)))
        }
    }

    /// Packet decode (§6.2.2): the amplitude and at least `order` LSP coefficients into
    /// `coefficients` (room for `order`); false when unused or at the end of the packet.
    func decode(_ r: inout VorbisBits, codebooks: [VorbisCodebook], amplitude: inout Int,
                coefficients: UnsafeMutablePointer<Float>) -> Bool
    {
        amplitude = r.readInt(amplitudeBits)
        guard amplitude > 0, !r.isExhausted else { return false }
        let number = r.readInt(vorbisILog(books.count))
        guard !r.isExhausted, number < books.count else { return false }
        let book = codebooks[books[number]]
        guard let values = book.values else { return false }
        var count = 0
        var last: Float = 0
        while count < order {
            let e = book.decode(&r)
            guard e >= 0 else { return false }
            let vector = values + e * book.dimensions
            for j in 0..<min(book.dimensions, order - count) { coefficients[count + j] = vector[j] + last }
            last += vector[book.dimensions - 1]
            count += book.dimensions
        }
        return true
    }

    /// Curve computation (§6.2.3) multiplied into the `n` values of `v`.
    func apply(amplitude: Int, coefficients: UnsafePointer<Float>, to v: UnsafeMutablePointer<Float>, n: Int, isLong: Bool) {
        let map = isLong ? maps.1 : maps.0
        guard map.count == n else { return }
        let cosines = (0..<order).map { cos(Double(coefficients[$0])) }
        let denominator = Double((1 << amplitudeBits) - 1)
        var i = 0
        while i < n {
            let m = map[i]
            let w = Double.pi * Double(m) / Double(barkMapSize)
            let cw = cos(w)
            var p: Double, q: Double
            if order & 1 == 1 {
                p = 1 - cw * cw
                q = 0.25
                for j in stride(from: 1, to: order, by: 2) { p *= 4 * (cosines[j] - cw) * (cosines[j] - cw) }
                for j in stride(from: 0, to: order, by: 2) { q *= 4 * (cosines[j] - cw) * (cosines[j] - cw) }
            } else {
                p = (1 - cw) / 2
                q = (1 + cw) / 2
                for j in stride(from: 1, to: order, by: 2) { p *= 4 * (cosines[j] - cw) * (cosines[j] - cw) }
                for j in stride(from: 0, to: order, by: 2) { q *= 4 * (cosines[j] - cw) * (cosines[j] - cw) }
            }
            let value = Float(exp(0.11512925 * (Double(amplitude * amplitudeOffset) / (denominator * (p + q).squareRoot())
                    - Double(amplitudeOffset))))
            repeat {
                v[i] *= value
                i += 1
            } while i < n && map[i] == m
        }
    }
}

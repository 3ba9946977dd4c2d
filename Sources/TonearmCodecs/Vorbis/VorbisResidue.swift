import TonearmCore

/// A residue configuration (Vorbis I §8): the fine spectral structure, vector-quantised
/// in partitions, classified, and coded in up to eight cascaded passes.
struct VorbisResidue {
    /// 0 (interleaved within a partition), 1 (in order) or 2 (channels interleaved, then 1).
    let type: Int
    let begin: Int
    let end: Int
    let partitionSize: Int
    let classifications: Int
    let classbook: Int
    /// `classifications × 8` book numbers, −1 where a pass codes nothing.
    let books: [Int]

    /// §8.6.1.
    init(_ r: inout VorbisBits, codebooks: [VorbisCodebook]) throws(AudioError) {
        func need(_ n: Int) throws(AudioError) -> Int {
            let v = r.readInt(n)
            guard !r.isExhausted else { throw VorbisSetupHeader.fail("it ends inside a residue") }
            return v
        }
        type = try need(16)
        guard type <= 2 else { throw VorbisSetupHeader.fail("residue type \(type)") }
        begin = try need(24)
        end = try need(24)
        partitionSize = try need(24) + 1
        classifications = try need(6) + 1
        classbook = try need(8)
        guard classbook < codebooks.count, codebooks[classbook].dimensions > 0 else {
            throw VorbisSetupHeader.fail("a residue's classbook is missing or has no dimensions")
        }
        var cascade: [Int] = []
        for _ in 0..<classifications {
            var c = try need(3)
            if try need(1) == 1 { c |= try need(5) << 3 }
            cascade.append(c)
        }
        var list = [Int](repeating: -1, count: classifications * 8)
        for i in 0..<classifications {
            for j in 0..<8 where cascade[i] & (1 << j) != 0 {
                let b = try need(8)
                guard b < codebooks.count, codebooks[b].values != nil else {
                    throw VorbisSetupHeader.fail("a residue names a missing codebook or one without vectors")
                }
                list[i * 8 + j] = b
            }
        }
        books = list
    }

    /// Decodes `count` vectors of `n` values each into `vectors` (which the caller has
    /// zeroed), skipping those marked in `doNotDecode` (§8.6.2). The end of the packet
    /// stops decoding with what was read so far, as the spec says.
    func decode(_ r: inout VorbisBits, codebooks: [VorbisCodebook], vectors: UnsafePointer<UnsafeMutablePointer<Float>>,
                doNotDecode: UnsafePointer<Bool>, count: Int, n: Int, scratch: VorbisResidueScratch)
    {
        if type == 2 {
            guard (0..<count).contains(where: { !doNotDecode[$0] }) else { return }
            let total = n * count
            let v = scratch.interleaved(total)
            var one = v, decode = false
            partitions(&r, codebooks: codebooks, vectors: &one, doNotDecode: &decode, count: 1, actualSize: total, scratch: scratch)
            if count == 1 {
                vectors[0].update(from: v, count: n)
            } else if count == 2 {
                let a = vectors[0], b = vectors[1]
                for i in 0..<n {
                    a[i] = v[2 &* i]
                    b[i] = v[2 &* i &+ 1]
                }
            } else {
                for j in 0..<count {
                    let out = vectors[j]
                    for i in 0..<n { out[i] = v[i &* count &+ j] }
                }
            }
        } else {
            partitions(&r, codebooks: codebooks, vectors: vectors, doNotDecode: doNotDecode, count: count, actualSize: n, scratch: scratch)
        }
    }

    /// The format 0/1 decode loop of §8.6.2 (format 2 runs it on one vector).
    private func partitions(_ r: inout VorbisBits, codebooks: [VorbisCodebook], vectors: UnsafePointer<UnsafeMutablePointer<Float>>,
                            doNotDecode: UnsafePointer<Bool>, count: Int, actualSize: Int, scratch: VorbisResidueScratch)
    {
        let limitBegin = min(begin, actualSize), limitEnd = min(end, actualSize)
        let toRead = limitEnd - limitBegin
        guard toRead > 0 else { return }
        let partitionCount = toRead / partitionSize
        guard partitionCount > 0 else { return }
        let classbook = codebooks[self.classbook]
        let perCodeword = classbook.dimensions
        let classes = scratch.classifications(count * partitionCount)
        let interleave = type == 0
        for pass in 0..<8 {
            var partition = 0
            while partition < partitionCount {
                if pass == 0 {
                    for j in 0..<count where !doNotDecode[j] {
                        var temp = classbook.decode(&r)
                        if temp < 0 { return }
                        let row = classes + j * partitionCount
                        var i = perCodeword - 1
                        while i >= 0 {
                            if partition + i < partitionCount { row[partition + i] = Int32(temp % classifications) }
                            temp /= classifications
                            i -= 1
                        }
                    }
                }
                var i = 0
                while i < perCodeword && partition < partitionCount {
                    for j in 0..<count where !doNotDecode[j] {
                        let book = books[Int(classes[j * partitionCount + partition]) * 8 + pass]
                        guard book >= 0 else { continue }
                        let offset = limitBegin + partition * partitionSize
                        let ok = interleave
                            ? VorbisResidue.partition0(&r, codebooks[book], vectors[j] + offset, partitionSize)
                            : VorbisResidue.partition1(&r, codebooks[book], vectors[j] + offset, partitionSize)
                        if !ok { return }
                    }
                    i += 1
                    partition += 1
                }
            }
        }
    }

    /// Format 1 (§8.6.4): vectors one after another.
    @inline(__always)
    private static func partition1(_ r: inout VorbisBits, _ book: VorbisCodebook, _ v: UnsafeMutablePointer<Float>, _ size: Int) -> Bool {
        guard let values = book.values else { return false }
        let dims = book.dimensions
        var i = 0
        switch dims {
        case 2 where size & 1 == 0:
            while i < size {
                let e = book.decode(&r)
                if e < 0 { return false }
                let t = values + e &* 2
                v[i] += t[0]
                v[i &+ 1] += t[1]
                i &+= 2
            }
        case 4 where size & 3 == 0:
            while i < size {
                let e = book.decode(&r)
                if e < 0 { return false }
                let t = values + e &* 4
                v[i] += t[0]
                v[i &+ 1] += t[1]
                v[i &+ 2] += t[2]
                v[i &+ 3] += t[3]
                i &+= 4
            }
        default:
            while i < size {
                let e = book.decode(&r)
                if e < 0 { return false }
                let t = values + e &* dims
                var j = 0
                while j < dims && i < size {
                    v[i] += t[j]
                    i &+= 1
                    j &+= 1
                }
            }
        }
        return true
    }

    /// Format 0 (§8.6.3): each vector's values spread `size / dims` apart.
    private static func partition0(_ r: inout VorbisBits, _ book: VorbisCodebook, _ v: UnsafeMutablePointer<Float>, _ size: Int) -> Bool {
        guard let values = book.values else { return false }
        let dims = book.dimensions
        let step = size / dims
        for i in 0..<step {
            let e = book.decode(&r)
            if e < 0 { return false }
            let t = values + e &* dims
            for j in 0..<dims { v[i &+ j &* step] += t[j] }
        }
        return true
    }
}

/// Work buffers for residue decode, grown as needed and kept by the decoder.
final class VorbisResidueScratch {
    private var classes: UnsafeMutablePointer<Int32>
    private var classCapacity = 0
    private var vector: UnsafeMutablePointer<Float>
    private var vectorCapacity = 0

    init() {
        classes = .allocate(capacity: 1)
        vector = .allocate(capacity: 1)
    }

    deinit {
        classes.deallocate()
        vector.deallocate()
    }

    func classifications(_ count: Int) -> UnsafeMutablePointer<Int32> {
        if count > classCapacity {
            classes.deallocate()
            classCapacity = count
            classes = .allocate(capacity: count)
        }
        return classes
    }

    /// A zeroed vector of `count` floats.
    func interleaved(_ count: Int) -> UnsafeMutablePointer<Float> {
        if count > vectorCapacity {
            vector.deallocate()
            vectorCapacity = count
            vector = .allocate(capacity: count)
        }
        vector.initialize(repeating: 0, count: count)
        return vector
    }
}

import TonearmCore

/// A track's samples in decode order.
///
/// While the parser collects them, `startOffset` is the absolute file offset and
/// `variableFramesInPacket` holds the sample's duration in the media timescale; the parser
/// turns both into Apple's meaning (offsets from the data offset, frames or 0) when it
/// publishes the table.
struct MP4SampleList: Sendable {
    var descriptions: [PacketDescription] = []
    /// Composition times in the media timescale, parallel to `descriptions`.
    var timestamps: [Int64] = []
    /// Indices of sync samples, sorted; nil when every sample is one.
    var syncSamples: [Int64]?
    /// The sum of the durations: where the media ends, in the media timescale.
    var totalDuration: Int64 = 0

    var count: Int { descriptions.count }
    var isEmpty: Bool { descriptions.isEmpty }

    /// Appends another list (the next fragment).
    mutating func append(_ other: MP4SampleList) {
        let base = Int64(descriptions.count)
        if other.syncSamples != nil || syncSamples != nil {
            var sync = syncSamples ?? Array(0..<base)
            sync += other.syncSamples.map { $0.map { $0 + base } } ?? Array(base..<base + Int64(other.count))
            syncSamples = sync
        }
        descriptions += other.descriptions
        timestamps += other.timestamps
        totalDuration += other.totalDuration
    }
}

/// Builds a track's sample list from its tables (ISO/IEC 14496-12 §8.6–8.7): sizes from
/// `stsz`/`stz2`, chunks from `stco`/`co64`, samples per chunk from `stsc`, durations from
/// `stts`, composition offsets from `ctts`, sync samples from `stss`.
///
/// Every count is checked against its box before anything is allocated, and the samples are
/// written straight into the two result arrays, with no allocation per sample.
enum MP4SampleTable {
    /// - Parameter sourceSize: the file's size when known: samples of one constant size must fit it.
    static func build(_ p: UnsafeRawBufferPointer, track t: MP4Track, sourceSize: Int64? = nil) throws(AudioError) -> MP4SampleList {
        var list = MP4SampleList()
        // Sample sizes.
        var count = 0
        var constantSize: UInt32 = 0
        var sizesAt = 0
        var fieldBits = 32
        if let s = t.stsz {
            guard s.count >= 12 else { throw AudioError(.invalidChunk, "an stsz of \(s.count) bytes") }
            constantSize = mp4be32(p, s.lowerBound + 4)
            let n = Int(mp4be32(p, s.lowerBound + 8))
            if constantSize == 0 {
                guard n <= (s.count - 12) / 4 else { throw AudioError(.invalidChunk, "stsz claims \(n) sizes in \(s.count) bytes") }
            } else if n > MP4.maximumConstantSizeSamples {
                throw AudioError.limit("stsz claims \(n) samples of \(constantSize) bytes; at most \(MP4.maximumConstantSizeSamples) are read")
            } else if let size = sourceSize, Int64(n) * Int64(constantSize) > size {
                throw AudioError(.invalidChunk, "stsz claims \(n) samples of \(constantSize) bytes in a file of \(size) bytes")
            }
            count = n
            sizesAt = s.lowerBound + 12
        } else if let s = t.stz2 {
            guard s.count >= 12 else { throw AudioError(.invalidChunk, "an stz2 of \(s.count) bytes") }
            fieldBits = Int(p[s.lowerBound + 7])
            guard fieldBits == 4 || fieldBits == 8 || fieldBits == 16 else {
                throw AudioError(.invalidChunk, "stz2 with \(fieldBits)-bit sizes")
            }
            let n = Int(mp4be32(p, s.lowerBound + 8))
            guard (Int64(n) * Int64(fieldBits) + 7) / 8 <= Int64(s.count - 12) else {
                throw AudioError(.invalidChunk, "stz2 claims \(n) sizes in \(s.count) bytes")
            }
            count = n
            sizesAt = s.lowerBound + 12
        }
        guard count > 0 else { return list }

        // Chunk offsets and the sample-to-chunk runs.
        let chunkCount: Int, offsetsAt: Int, wide: Bool
        if let c = t.stco {
            guard c.count >= 8 else { throw AudioError(.invalidChunk, "an stco of \(c.count) bytes") }
            let n = Int(mp4be32(p, c.lowerBound + 4))
            guard n <= (c.count - 8) / 4 else { throw AudioError(.invalidChunk, "stco claims \(n) chunks in \(c.count) bytes") }
            (chunkCount, offsetsAt, wide) = (n, c.lowerBound + 8, false)
        } else if let c = t.co64 {
            guard c.count >= 8 else { throw AudioError(.invalidChunk, "a co64 of \(c.count) bytes") }
            let n = Int(mp4be32(p, c.lowerBound + 4))
            guard n <= (c.count - 8) / 8 else { throw AudioError(.invalidChunk, "co64 claims \(n) chunks in \(c.count) bytes") }
            (chunkCount, offsetsAt, wide) = (n, c.lowerBound + 8, true)
        } else {
            throw AudioError(.invalidChunk, "a track with samples but no chunk offsets (stco or co64)")
        }
        guard let c = t.stsc, c.count >= 8 else { throw AudioError(.invalidChunk, "a track with samples but no stsc") }
        let runCount = Int(mp4be32(p, c.lowerBound + 4))
        guard runCount <= (c.count - 8) / 12 else { throw AudioError(.invalidChunk, "stsc claims \(runCount) entries in \(c.count) bytes") }
        guard runCount > 0 else { throw AudioError(.invalidChunk, "an empty stsc for \(count) samples") }
        let runsAt = c.lowerBound + 8

        // The samples the chunks can place: no more are allocated than both tables allow.
        var placeable = 0
        do {
            var run = 0
            var nextFirst: UInt32 = runCount > 1 ? mp4be32(p, runsAt + 12) : UInt32.max
            var perChunk = Int(mp4be32(p, runsAt + 4))
            for chunk in 0..<chunkCount where placeable < count {
                let number = UInt32(truncatingIfNeeded: chunk + 1)
                while number >= nextFirst {
                    run += 1
                    perChunk = Int(mp4be32(p, runsAt + run * 12 + 4))
                    nextFirst = run + 1 < runCount ? mp4be32(p, runsAt + (run + 1) * 12) : UInt32.max
                }
                placeable += perChunk
            }
        }
        count = min(count, placeable)
        guard count > 0 else { return list }

        var badOffset = false
        let descriptions = [PacketDescription](unsafeUninitializedCapacity: count) { buffer, initialized in
            var sample = 0
            var run = 0
            var perChunk = Int(mp4be32(p, runsAt + 4))
            var nextFirst: UInt32 = runCount > 1 ? mp4be32(p, runsAt + 12) : UInt32.max
            var chunk = 0
            while chunk < chunkCount && sample < count {
                let number = UInt32(truncatingIfNeeded: chunk + 1)
                while number >= nextFirst {
                    run += 1
                    perChunk = Int(mp4be32(p, runsAt + run * 12 + 4))
                    nextFirst = run + 1 < runCount ? mp4be32(p, runsAt + (run + 1) * 12) : UInt32.max
                }
                var offset: Int64
                if wide {
                    let o = mp4be64(p, offsetsAt + chunk * 8)
                    guard o <= UInt64(MP4.maximumBoxSize) else { badOffset = true; break }
                    offset = Int64(o)
                } else {
                    offset = Int64(mp4be32(p, offsetsAt + chunk * 4))
                }
                let end = min(count, sample + perChunk)
                while sample < end {
                    let size: UInt32
                    if constantSize != 0 {
                        size = constantSize
                    } else if fieldBits == 32 {
                        size = mp4be32(p, sizesAt + sample * 4)
                    } else if fieldBits == 16 {
                        size = UInt32(mp4be16(p, sizesAt + sample * 2))
                    } else if fieldBits == 8 {
                        size = UInt32(p[sizesAt + sample])
                    } else {
                        let byte = p[sizesAt + sample / 2]
                        size = UInt32(sample & 1 == 0 ? byte >> 4 : byte & 15)
                    }
                    (buffer.baseAddress! + sample).initialize(to: PacketDescription(startOffset: offset, variableFramesInPacket: 0, dataByteSize: size))
                    offset += Int64(size)
                    sample += 1
                }
                chunk += 1
            }
            initialized = sample
        }
        if badOffset { throw AudioError(.invalidChunk, "co64 gives a chunk offset beyond 2^60") }
        // A table whose chunks hold fewer samples than stsz lists keeps the samples it places.
        count = descriptions.count
        list.descriptions = descriptions

        // Durations and decode times.
        var total: Int64 = 0
        var timestamps = [Int64](repeating: 0, count: count)
        if let s = t.stts {
            guard s.count >= 8 else { throw AudioError(.invalidChunk, "an stts of \(s.count) bytes") }
            let entries = Int(mp4be32(p, s.lowerBound + 4))
            guard entries <= (s.count - 8) / 8 else { throw AudioError(.invalidChunk, "stts claims \(entries) entries in \(s.count) bytes") }
            list.descriptions.withUnsafeMutableBufferPointer { d in
                timestamps.withUnsafeMutableBufferPointer { ts in
                    var sample = 0
                    var e = 0
                    while e < entries && sample < count {
                        let n = Int(mp4be32(p, s.lowerBound + 8 + e * 8))
                        let delta = mp4be32(p, s.lowerBound + 12 + e * 8)
                        let end = min(count, sample + n)
                        while sample < end {
                            d[sample].variableFramesInPacket = delta
                            ts[sample] = total
                            total += Int64(delta)
                            sample += 1
                        }
                        e += 1
                    }
                    while sample < count { ts[sample] = total; sample += 1 }
                }
            }
        }
        list.totalDuration = total

        // Composition offsets: signed in version 1, and in practice in version 0 too.
        if let s = t.ctts, s.count >= 8 {
            let entries = Int(mp4be32(p, s.lowerBound + 4))
            guard entries <= (s.count - 8) / 8 else { throw AudioError(.invalidChunk, "ctts claims \(entries) entries in \(s.count) bytes") }
            var sample = 0
            for e in 0..<entries where sample < count {
                let n = Int(mp4be32(p, s.lowerBound + 8 + e * 8))
                let offset = Int64(Int32(bitPattern: mp4be32(p, s.lowerBound + 12 + e * 8)))
                let end = min(count, sample + n)
                while sample < end { timestamps[sample] += offset; sample += 1 }
            }
        }
        list.timestamps = timestamps

        // Sync samples (1-based numbers).
        if let s = t.stss, s.count >= 8 {
            let entries = Int(mp4be32(p, s.lowerBound + 4))
            guard entries <= (s.count - 8) / 4 else { throw AudioError(.invalidChunk, "stss claims \(entries) entries in \(s.count) bytes") }
            var sync: [Int64] = []
            sync.reserveCapacity(entries)
            var last: Int64 = -1
            for e in 0..<entries {
                let n = Int64(mp4be32(p, s.lowerBound + 8 + e * 4)) - 1
                if n > last && n < Int64(count) { sync.append(n); last = n }
            }
            list.syncSamples = sync.count == count ? nil : sync
        }
        return list
    }

    /// The pre-roll that the first `roll` sample group gives, in samples (ISO/IEC 14496-12
    /// §10.1: a negative roll_distance counts the samples to decode before this one).
    static func rollDistance(_ p: UnsafeRawBufferPointer, track t: MP4Track) -> Int64? {
        guard let s = t.rollDescriptions, s.count >= 12 else { return nil }
        let version = p[s.lowerBound]
        var i = s.lowerBound + 8
        var defaultLength: UInt32 = 0
        if version == 1 { guard i + 4 <= s.upperBound else { return nil }; defaultLength = mp4be32(p, i); i += 4 }
        if version >= 2 { i += 4 }
        guard i + 4 <= s.upperBound, mp4be32(p, i) > 0 else { return nil }
        i += 4
        if version == 1 && defaultLength == 0 { i += 4 }
        guard i + 2 <= s.upperBound else { return nil }
        let roll = Int16(bitPattern: mp4be16(p, i))
        return roll < 0 ? Int64(-Int(roll)) : 0
    }
}

import TonearmCore

/// Reads one movie fragment (`moof`, ISO/IEC 14496-12 §8.8): the samples that its track
/// fragment runs give one track, with absolute offsets.
enum MP4Fragment {
    /// tfhd flags (§8.8.7).
    static let baseDataOffsetPresent: UInt32 = 0x1
    static let sampleDescriptionIndexPresent: UInt32 = 0x2
    static let defaultDurationPresent: UInt32 = 0x8
    static let defaultSizePresent: UInt32 = 0x10
    static let defaultFlagsPresent: UInt32 = 0x20
    static let defaultBaseIsMoof: UInt32 = 0x20000
    /// trun flags (§8.8.8).
    static let dataOffsetPresent: UInt32 = 0x1
    static let firstSampleFlagsPresent: UInt32 = 0x4
    static let durationPresent: UInt32 = 0x100
    static let sizePresent: UInt32 = 0x200
    static let flagsPresent: UInt32 = 0x400
    static let compositionOffsetPresent: UInt32 = 0x800
    /// sample_is_non_sync_sample in the sample flags (§8.8.3.1).
    static let nonSync: UInt32 = 0x10000

    /// The samples of `trackID` in a `moof` body held in `p`, which began (its header) at
    /// absolute offset `moofStart`. `decodeTime` is where the previous fragment ended; it
    /// comes back advanced past these samples.
    static func samples(_ p: UnsafeRawBufferPointer, moofStart: Int64, trackID: UInt32, defaults: MP4TrackExtends,
                        decodeTime: inout Int64, maximumSamples: Int) throws(AudioError) -> MP4SampleList
    {
        var list = MP4SampleList()
        var sync: [Int64] = []
        var anyNonSync = false
        var previousDataEnd = moofStart
        var firstTraf = true
        for traf in try MP4Boxes.children(p, 0..<p.count) where traf.type == "traf" {
            let children = try MP4Boxes.children(p, traf.body)
            guard let tfhd = children.first(where: { $0.type == "tfhd" }), tfhd.body.count >= 8 else {
                throw AudioError(.invalidChunk, "a traf without a tfhd")
            }
            var i = tfhd.body.lowerBound
            let flags = mp4be32(p, i) & 0xFF_FFFF
            let id = mp4be32(p, i + 4)
            i += 8
            func field(_ size: Int) throws(AudioError) -> Int {
                guard i + size <= tfhd.body.upperBound else { throw AudioError(.invalidChunk, "a tfhd of \(tfhd.body.count) bytes for flags 0x\(String(flags, radix: 16))") }
                defer { i += size }
                return i
            }
            // The base of this track fragment's data offsets.
            var base: Int64
            if flags & baseDataOffsetPresent != 0 {
                let o = mp4be64(p, try field(8))
                guard o <= UInt64(MP4.maximumBoxSize) else { throw AudioError(.invalidChunk, "tfhd base data offset \(o)") }
                base = Int64(o)
            } else if flags & defaultBaseIsMoof != 0 || firstTraf {
                base = moofStart
            } else {
                base = previousDataEnd
            }
            firstTraf = false
            if flags & sampleDescriptionIndexPresent != 0 { _ = try field(4) }
            let defaultDuration = flags & defaultDurationPresent != 0 ? mp4be32(p, try field(4)) : defaults.defaultDuration
            let defaultSize = flags & defaultSizePresent != 0 ? mp4be32(p, try field(4)) : defaults.defaultSize
            let defaultFlags = flags & defaultFlagsPresent != 0 ? mp4be32(p, try field(4)) : defaults.defaultFlags

            var trafDataEnd = base
            guard id == trackID else {
                // Another track's data still moves the implicit base of the next traf.
                previousDataEnd = try dataEnd(p, children, base: base, defaultSize: defaultSize)
                continue
            }
            if let tfdt = children.first(where: { $0.type == "tfdt" }), tfdt.body.count >= 8 {
                if p[tfdt.body.lowerBound] == 1 {
                    guard tfdt.body.count >= 12 else { throw AudioError(.invalidChunk, "a version 1 tfdt of \(tfdt.body.count) bytes") }
                    decodeTime = Int64(clamping: mp4be64(p, tfdt.body.lowerBound + 4))
                    guard decodeTime <= MP4.maximumBoxSize else { throw AudioError(.invalidChunk, "tfdt gives a decode time of \(decodeTime)") }
                } else {
                    decodeTime = Int64(mp4be32(p, tfdt.body.lowerBound + 4))
                }
            }
            var position = base
            for trun in children where trun.type == "trun" {
                let b = trun.body
                guard b.count >= 8 else { throw AudioError(.invalidChunk, "a trun of \(b.count) bytes") }
                let runFlags = mp4be32(p, b.lowerBound) & 0xFF_FFFF
                let sampleCount = Int(mp4be32(p, b.lowerBound + 4))
                var j = b.lowerBound + 8
                if runFlags & dataOffsetPresent != 0 {
                    guard j + 4 <= b.upperBound else { throw AudioError(.invalidChunk, "a trun without its data offset") }
                    position = base + Int64(Int32(bitPattern: mp4be32(p, j)))
                    j += 4
                }
                var firstFlags: UInt32?
                if runFlags & firstSampleFlagsPresent != 0 {
                    guard j + 4 <= b.upperBound else { throw AudioError(.invalidChunk, "a trun without its first sample flags") }
                    firstFlags = mp4be32(p, j)
                    j += 4
                }
                let perSample = [durationPresent, sizePresent, flagsPresent, compositionOffsetPresent]
                    .reduce(0) { $0 + (runFlags & $1 != 0 ? 4 : 0) }
                if perSample > 0 {
                    guard sampleCount <= (b.upperBound - j) / perSample else {
                        throw AudioError(.invalidChunk, "trun claims \(sampleCount) samples in \(b.count) bytes")
                    }
                } else if sampleCount > MP4.maximumRunWithoutFields {
                    throw AudioError.limit("trun claims \(sampleCount) samples without per-sample fields")
                }
                guard list.count + sampleCount <= maximumSamples else {
                    throw AudioError.limit("fragments give more than \(MP4.maximumSampleCount) samples")
                }
                guard position >= 0, position <= MP4.maximumBoxSize else { throw AudioError(.invalidChunk, "trun data at offset \(position)") }
                // Times and offsets stay far from overflow: each sample adds less than 2^32.
                guard decodeTime <= MP4.maximumBoxSize else { throw AudioError(.invalidChunk, "fragment decode times run past 2^60") }
                list.descriptions.reserveCapacity(list.count + sampleCount)
                list.timestamps.reserveCapacity(list.count + sampleCount)
                for k in 0..<sampleCount {
                    var duration = defaultDuration, size = defaultSize, sampleFlags = k == 0 ? (firstFlags ?? defaultFlags) : defaultFlags
                    var composition: Int64 = 0
                    if runFlags & durationPresent != 0 { duration = mp4be32(p, j); j += 4 }
                    if runFlags & sizePresent != 0 { size = mp4be32(p, j); j += 4 }
                    if runFlags & flagsPresent != 0 { sampleFlags = mp4be32(p, j); j += 4 }
                    if runFlags & compositionOffsetPresent != 0 { composition = Int64(Int32(bitPattern: mp4be32(p, j))); j += 4 }
                    if sampleFlags & nonSync != 0 { anyNonSync = true } else { sync.append(Int64(list.count)) }
                    list.descriptions.append(PacketDescription(startOffset: position, variableFramesInPacket: duration, dataByteSize: size))
                    list.timestamps.append(decodeTime + composition)
                    decodeTime += Int64(duration)
                    list.totalDuration += Int64(duration)
                    position += Int64(size)
                }
                trafDataEnd = max(trafDataEnd, position)
            }
            previousDataEnd = trafDataEnd
        }
        if anyNonSync { list.syncSamples = sync }
        return list
    }

    /// Where the data of a track fragment that is not ours ends, for the implicit base of
    /// the next one.
    private static func dataEnd(_ p: UnsafeRawBufferPointer, _ children: [MP4Box], base: Int64, defaultSize: UInt32) throws(AudioError) -> Int64 {
        var position = base
        for trun in children where trun.type == "trun" {
            let b = trun.body
            guard b.count >= 8 else { continue }
            let runFlags = mp4be32(p, b.lowerBound) & 0xFF_FFFF
            let sampleCount = Int(mp4be32(p, b.lowerBound + 4))
            var j = b.lowerBound + 8
            if runFlags & dataOffsetPresent != 0, j + 4 <= b.upperBound {
                position = base + Int64(Int32(bitPattern: mp4be32(p, j)))
                j += 4
            }
            if runFlags & firstSampleFlagsPresent != 0 { j += 4 }
            let fields = [durationPresent, sizePresent, flagsPresent, compositionOffsetPresent].map { runFlags & $0 != 0 }
            let perSample = fields.filter { $0 }.count * 4
            if perSample == 0 || !fields[1] {
                guard sampleCount <= MP4.maximumRunWithoutFields else { continue }
                position += Int64(sampleCount) * Int64(defaultSize)
                continue
            }
            guard sampleCount <= (b.upperBound - j) / perSample else { continue }
            let sizeAt = fields[0] ? 4 : 0
            for k in 0..<sampleCount { position += Int64(mp4be32(p, j + k * perSample + sizeAt)) }
        }
        return position
    }
}

/// The movie fragment random access box (`mfra`, ISO/IEC 14496-12 §8.8.9–8.8.11) at the end
/// of a fragmented file: for one track, the decode time at which each listed fragment
/// begins and the offset of its `moof`.
enum MP4FragmentIndex {
    /// The most entries read from a `tfra`.
    static let maximumEntries = 1 << 20
    /// The largest `mfra` read.
    static let maximumSize = 16 << 20

    /// Reads the `mfra` of a file of `size` bytes through the fetcher, by way of the `mfro`
    /// in its last 16 bytes. Nil when the file has none or it does not hold `trackID`.
    static func read(fileSize size: Int64, trackID: UInt32, fetch: ByteRangeFetcher) throws(AudioError)
        -> [(time: Int64, moof: Int64)]?
    {
        guard size >= 16 else { return nil }
        let tail = try fetch(size - 16, 16)
        guard tail.count == 16, Array(tail[4..<8]) == Array("mfro".utf8) else { return nil }
        let mfraSize = Int64(tail[12]) << 24 | Int64(tail[13]) << 16 | Int64(tail[14]) << 8 | Int64(tail[15])
        guard mfraSize >= 16 + 8, mfraSize <= Int64(maximumSize), mfraSize <= size else { return nil }
        let mfra = try fetch(size - mfraSize, Int(mfraSize))
        guard mfra.count == Int(mfraSize), Array(mfra[4..<8]) == Array("mfra".utf8) else { return nil }
        return try mfra.withBytes { p throws(AudioError) in try entries(p, 8..<p.count, trackID: trackID) }
    }

    /// The entries of the `tfra` of `trackID` among the children in `range` of `p`.
    static func entries(_ p: UnsafeRawBufferPointer, _ range: Range<Int>, trackID: UInt32) throws(AudioError)
        -> [(time: Int64, moof: Int64)]?
    {
        for box in try MP4Boxes.children(p, range) where box.type == "tfra" {
            let b = box.body
            guard b.count >= 16 else { throw AudioError(.invalidChunk, "a tfra of \(b.count) bytes") }
            guard mp4be32(p, b.lowerBound + 4) == trackID else { continue }
            let version = p[b.lowerBound]
            let sizes = mp4be32(p, b.lowerBound + 8)
            let skip = Int((sizes >> 4) & 3) + Int((sizes >> 2) & 3) + Int(sizes & 3) + 3
            let entrySize = (version == 1 ? 16 : 8) + skip
            let count = Int(mp4be32(p, b.lowerBound + 12))
            guard count <= maximumEntries, count <= (b.count - 16) / entrySize else {
                throw AudioError(.invalidChunk, "a tfra claims \(count) entries in \(b.count) bytes")
            }
            var result: [(time: Int64, moof: Int64)] = []
            result.reserveCapacity(count)
            var i = b.lowerBound + 16
            for _ in 0..<count {
                let time: UInt64, moof: UInt64
                if version == 1 {
                    time = mp4be64(p, i)
                    moof = mp4be64(p, i + 8)
                } else {
                    time = UInt64(mp4be32(p, i))
                    moof = UInt64(mp4be32(p, i + 4))
                }
                i += entrySize
                guard time <= UInt64(MP4.maximumBoxSize), moof <= UInt64(MP4.maximumBoxSize) else {
                    throw AudioError(.invalidChunk, "a tfra entry at time \(time), offset \(moof)")
                }
                result.append((Int64(time), Int64(moof)))
            }
            return result
        }
        return nil
    }
}

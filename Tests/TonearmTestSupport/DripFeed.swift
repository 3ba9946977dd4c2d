import Tonearm

/// What an ``AudioFileStream`` reported while parsing a file: the property notifications
/// in order, and every packet.
public struct StreamRecord: Equatable, CustomStringConvertible {
    public var notifications: [AudioFilePropertyID] = []
    /// All packet bytes, concatenated.
    public var packetData: [UInt8] = []
    /// Each packet's size in bytes.
    public var packetSizes: [Int] = []
    /// Each packet's variable frame count (0 for constant-frame formats).
    public var packetFrames: [UInt32] = []
    public var dataFormat: StreamDescription?
    public var dataOffset: Int64?
    public var audioDataByteCount: Int64?
    public var audioDataPacketCount: Int64?
    public var info: InfoDictionary?
    public var error: AudioError?

    public var description: String {
        "\(notifications.map(\.fourCC.string)) \(packetSizes.count) packets, \(packetData.count) bytes, format \(dataFormat.map { "\($0)" } ?? "-"), error \(error.map { "\($0)" } ?? "none")"
    }
}

/// How the bytes of a file are handed to the stream.
public enum FeedPattern: CustomStringConvertible, Sendable {
    case allAtOnce
    case oneByteAtATime
    /// Random chunk sizes from 1 to `maximum`, from a fixed seed so that a failure repeats.
    case randomChunks(seed: UInt64, maximum: Int)

    public var description: String {
        switch self {
        case .allAtOnce: "all at once"
        case .oneByteAtATime: "one byte at a time"
        case .randomChunks(let seed, let maximum): "random chunks (seed \(seed), ≤ \(maximum) bytes)"
        }
    }

    /// The patterns every format is tested with.
    public static let standard: [FeedPattern] = [
        .allAtOnce, .oneByteAtATime, .randomChunks(seed: 1, maximum: 7), .randomChunks(seed: 2, maximum: 1000),
        .randomChunks(seed: 3, maximum: 65536),
    ]
}

/// A small deterministic generator (SplitMix64) so that tests repeat exactly.
public struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Feeds `bytes` to a new ``AudioFileStream`` in the given pattern and records what it reports.
/// Errors are recorded, not thrown, so that they too can be compared across patterns.
public func feed(_ bytes: [UInt8], pattern: FeedPattern, hint: AudioFileTypeID? = nil) -> StreamRecord {
    var record = StreamRecord()
    let stream = AudioFileStream(fileTypeHint: hint, propertyListener: { _, id, _ in
        record.notifications.append(id)
    }, packets: { numberBytes, numberPackets, data, descriptions in
        record.packetData.append(contentsOf: data)
        if let descriptions {
            for d in descriptions {
                record.packetSizes.append(Int(d.dataByteSize))
                record.packetFrames.append(d.variableFramesInPacket)
            }
        } else {
            let size = numberPackets > 0 ? numberBytes / numberPackets : 0
            record.packetSizes.append(contentsOf: repeatElement(size, count: numberPackets))
            record.packetFrames.append(contentsOf: repeatElement(0, count: numberPackets))
        }
    })
    do {
        switch pattern {
        case .allAtOnce:
            try stream.parse(bytes)
        case .oneByteAtATime:
            for i in bytes.indices { try stream.parse(bytes[i..<i + 1]) }
        case .randomChunks(let seed, let maximum):
            var g = SeededGenerator(seed: seed)
            var i = 0
            while i < bytes.count {
                let n = min(bytes.count - i, Int.random(in: 1...maximum, using: &g))
                try stream.parse(bytes[i..<i + n])
                i += n
            }
        }
        try stream.parse(nil)
    } catch {
        record.error = error
    }
    record.dataFormat = try? stream.dataFormat
    record.dataOffset = try? stream.dataOffset
    record.audioDataByteCount = try? stream.audioDataByteCount
    record.audioDataPacketCount = try? stream.audioDataPacketCount
    record.info = try? stream.infoDictionary
    return record
}

/// Feeds a file in every standard pattern and returns the records; the first is "all at once".
/// Callers assert that all are equal (see `assertDripFeedEquality` in the test targets).
public func dripFeedRecords(_ bytes: [UInt8], hint: AudioFileTypeID? = nil,
                            patterns: [FeedPattern] = FeedPattern.standard) -> [(FeedPattern, StreamRecord)]
{
    patterns.map { ($0, feed(bytes, pattern: $0, hint: hint)) }
}

/// The first difference between the records of all patterns, or nil when they agree.
public func dripFeedMismatch(_ bytes: [UInt8], hint: AudioFileTypeID? = nil,
                             patterns: [FeedPattern] = FeedPattern.standard) -> String?
{
    let records = dripFeedRecords(bytes, hint: hint, patterns: patterns)
    let (_, reference) = records[0]
    for (pattern, r) in records.dropFirst() where r != reference {
        return "\(pattern) gave \(r), but all at once gave \(reference)"
    }
    return nil
}

/// Damaged copies of a file: truncated at several points, with flipped bits at seeded
/// places, and with each 32-bit field of the first 128 bytes set to huge values.
public func damagedVariants(_ bytes: [UInt8], seed: UInt64 = 7) -> [(String, [UInt8])] {
    var out: [(String, [UInt8])] = []
    for cut in [0, 1, 3, 4, 8, 11, 12, 13, 20, 35, 36, 43, 44, 45, 60, 100, bytes.count / 2, bytes.count - 1] where cut < bytes.count {
        out.append(("truncated at \(cut)", Array(bytes[..<max(0, cut)])))
    }
    var g = SeededGenerator(seed: seed)
    for i in 0..<24 {
        var b = bytes
        let limit = min(b.count, i < 16 ? 200 : b.count)
        guard limit > 0 else { break }
        let at = Int.random(in: 0..<limit, using: &g)
        b[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &g))
        out.append(("bit flipped at \(at)", b))
    }
    for at in stride(from: 4, to: min(bytes.count - 4, 128), by: 4) {
        for value: UInt32 in [0xFFFF_FFFF, 0x7FFF_FFF0, 0] {
            var b = bytes
            b[at] = UInt8(value >> 24); b[at + 1] = UInt8(value >> 16 & 0xFF)
            b[at + 2] = UInt8(value >> 8 & 0xFF); b[at + 3] = UInt8(value & 0xFF)
            out.append(("0x\(String(value, radix: 16)) at \(at)", b))
        }
    }
    return out
}

/// Opens and reads every damaged variant through both paths. Returns the errors seen; a
/// crash would stop the test run, and any error that is not an AudioError is reported.
public func exerciseDamaged(_ bytes: [UInt8], hint: AudioFileTypeID? = nil) -> (errors: [AudioError.Code: Int], problems: [String]) {
    var errors: [AudioError.Code: Int] = [:]
    var problems: [String] = []
    for (name, b) in damagedVariants(bytes) {
        let r = feed(b, pattern: .randomChunks(seed: 5, maximum: 512), hint: hint)
        if let e = r.error { errors[e.code, default: 0] += 1 }
        do {
            let file = try AudioFile(source: MemorySource(b), fileTypeHint: hint)
            let p = try file.properties
            if let total = p.audioDataPacketCount, total > 0 {
                _ = try? file.readPacketData(startingAt: 0, count: 16)
                _ = try? file.readPacketData(startingAt: max(0, total - 3), count: 16)
                if let size = p.audioDataByteCount, let off = p.dataOffset, off + size > Int64(b.count) + 1 {
                    problems.append("\(name): data \(off)+\(size) runs past the file's \(b.count) bytes")
                }
            }
        } catch let e as AudioError {
            errors[e.code, default: 0] += 1
        } catch {
            problems.append("\(name): \(error) is not an AudioError")
        }
    }
    return (errors, problems)
}

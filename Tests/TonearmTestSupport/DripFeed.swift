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

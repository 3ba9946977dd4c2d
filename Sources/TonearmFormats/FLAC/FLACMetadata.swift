import TonearmCore

/// The kinds of FLAC metadata block (RFC 9639, section 8).
public enum FLACBlockType: UInt8, Sendable {
    case streamInfo = 0, padding, application, seekTable, vorbisComment, cueSheet, picture
    /// 127 is forbidden: it would make a block header look like a frame's sync code.
    static let forbidden: UInt8 = 127

    static func name(_ raw: UInt8) -> String {
        switch FLACBlockType(rawValue: raw) {
        case .streamInfo: "STREAMINFO"
        case .padding: "PADDING"
        case .application: "APPLICATION"
        case .seekTable: "SEEKTABLE"
        case .vorbisComment: "VORBIS_COMMENT"
        case .cueSheet: "CUESHEET"
        case .picture: "PICTURE"
        case nil: "type \(raw)"
        }
    }
}

/// The STREAMINFO block: 34 bytes that every FLAC stream begins with.
///
/// | bits | field |
/// |---|---|
/// | 16, 16 | minimum and maximum block size (samples; 16 to 65535) |
/// | 24, 24 | minimum and maximum frame size (bytes; 0 when unknown) |
/// | 20 | sample rate |
/// | 3  | channels − 1 |
/// | 5  | bits per sample − 1 |
/// | 36 | total samples per channel (0 when unknown) |
/// | 128 | MD5 of the decoded samples |
public struct FLACStreamInfo: Hashable, Sendable {
    public static let size = 34

    public var minimumBlockSize: Int
    public var maximumBlockSize: Int
    /// 0 when unknown.
    public var minimumFrameSize: Int
    /// 0 when unknown.
    public var maximumFrameSize: Int
    public var sampleRate: Int
    public var channels: Int
    public var bitsPerSample: Int
    /// Samples per channel; 0 when unknown.
    public var totalSamples: Int64
    public var md5: [UInt8]

    public init(minimumBlockSize: Int, maximumBlockSize: Int, minimumFrameSize: Int = 0, maximumFrameSize: Int = 0,
                sampleRate: Int, channels: Int, bitsPerSample: Int, totalSamples: Int64 = 0,
                md5: [UInt8] = [UInt8](repeating: 0, count: 16))
    {
        self.minimumBlockSize = minimumBlockSize
        self.maximumBlockSize = maximumBlockSize
        self.minimumFrameSize = minimumFrameSize
        self.maximumFrameSize = maximumFrameSize
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitsPerSample = bitsPerSample
        self.totalSamples = totalSamples
        self.md5 = md5
    }

    /// True when every frame but the last has the same block size.
    public var isFixedBlockSize: Bool { minimumBlockSize == maximumBlockSize }

    /// Reads the 34 bytes and checks them against RFC 9639's rules.
    public static func read(_ b: [UInt8]) throws(AudioError) -> FLACStreamInfo {
        guard b.count >= size else { throw AudioError(.invalidFile, "STREAMINFO has \(b.count) bytes, not \(size)") }
        func int(_ at: Int, _ n: Int) -> Int { (at..<at + n).reduce(0) { $0 << 8 | Int(b[$1]) } }
        let packed = (10..<18).reduce(UInt64(0)) { $0 << 8 | UInt64(b[$1]) }  // rate 20, channels 3, bits 5, total 36
        let info = FLACStreamInfo(
            minimumBlockSize: int(0, 2), maximumBlockSize: int(2, 2), minimumFrameSize: int(4, 3),
            maximumFrameSize: int(7, 3), sampleRate: Int(packed >> 44), channels: Int((packed >> 41) & 7) + 1,
            bitsPerSample: Int((packed >> 36) & 31) + 1, totalSamples: Int64(packed & 0xF_FFFF_FFFF),
            md5: Array(b[18..<34]))
        // RFC 9639 8.2: block sizes lie in 16...65535, the minimum no larger than the maximum.
        guard info.maximumBlockSize >= 16 else {
            throw AudioError(.invalidFile, "STREAMINFO gives a maximum block size of \(info.maximumBlockSize) samples; at least 16 are required")
        }
        guard info.minimumBlockSize <= info.maximumBlockSize else {
            throw AudioError(.invalidFile, "STREAMINFO's minimum block size \(info.minimumBlockSize) exceeds its maximum \(info.maximumBlockSize)")
        }
        guard info.sampleRate > 0 else {
            throw AudioError(.unsupportedDataFormat, "STREAMINFO gives a sample rate of 0 (a stream without audio)")
        }
        guard info.bitsPerSample >= 4 else {
            throw AudioError(.invalidFile, "STREAMINFO gives \(info.bitsPerSample) bits per sample; at least 4 are required")
        }
        return info
    }

    /// The 34 bytes.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        w.write(UInt16(truncatingIfNeeded: minimumBlockSize))
        w.write(UInt16(truncatingIfNeeded: maximumBlockSize))
        for v in [minimumFrameSize, maximumFrameSize] {
            w.write(UInt8(truncatingIfNeeded: v >> 16)); w.write(UInt16(truncatingIfNeeded: v))
        }
        var packed = UInt64(sampleRate & 0xF_FFFF) << 44
        packed |= UInt64((channels - 1) & 7) << 41 | UInt64((bitsPerSample - 1) & 31) << 36
        packed |= UInt64(totalSamples) & 0xF_FFFF_FFFF
        w.write(packed)
        w.write(md5.count == 16 ? md5 : [UInt8](repeating: 0, count: 16))
        return w.bytes
    }

    /// Apple's magic cookie for FLAC: the body of an MP4 `dfLa` box. A version and flags
    /// word of 0, then the STREAMINFO block with its header, marked as the last block.
    public var magicCookie: [UInt8] {
        [0, 0, 0, 0, 0x80 | FLACBlockType.streamInfo.rawValue, 0, 0, UInt8(FLACStreamInfo.size)] + bytes
    }

    /// Apple's format flags for FLAC: the source bit depth as for Apple Lossless
    /// (kAppleLosslessFormatFlag_16BitSourceData = 1, 20-bit 2, 24-bit 3, 32-bit 4), 0 otherwise.
    public var appleFormatFlags: UInt32 {
        switch bitsPerSample {
        case 16: 1
        case 20: 2
        case 24: 3
        case 32: 4
        default: 0
        }
    }
}

/// One point of a SEEKTABLE: a frame's first sample and its offset from the first frame.
public struct FLACSeekPoint: Hashable, Sendable {
    public var sampleNumber: UInt64
    /// Bytes from the first frame's header to this frame's.
    public var offset: UInt64
    public var samples: UInt16

    /// Reads the 18-byte points of a SEEKTABLE body; placeholders (sample number all ones)
    /// are left out. A trailing part of a point is ignored.
    static func readTable(_ r: inout ByteReader) -> [FLACSeekPoint] {
        var points: [FLACSeekPoint] = []
        points.reserveCapacity(r.readableBytes / 18)
        while r.readableBytes >= 18 {
            let sample = r.readUInt64()!, offset = r.readUInt64()!, samples = r.readUInt16()!
            if sample != UInt64.max { points.append(FLACSeekPoint(sampleNumber: sample, offset: offset, samples: samples)) }
        }
        return points
    }
}

/// A CUESHEET block: the tracks and index points of a CD image, in samples.
public struct FLACCueSheet: Hashable, Sendable {
    public struct Index: Hashable, Sendable {
        /// Samples from the track's offset.
        public var offset: UInt64
        public var number: UInt8
    }
    public struct Track: Hashable, Sendable {
        /// Samples from the start of the audio.
        public var offset: UInt64
        public var number: UInt8
        public var isrc: String
        public var isAudio: Bool
        public var indices: [Index]
    }
    public var catalogNumber: String
    public var leadInSamples: UInt64
    public var isCD: Bool
    /// The tracks, the lead-out (number 170 on a CD, 255 otherwise) last.
    public var tracks: [Track]

    /// Reads a CUESHEET body; nil when it runs past its end.
    static func read(_ r: inout ByteReader) -> FLACCueSheet? {
        guard let catalog = r.readBytes(128), let leadIn = r.readUInt64(), let flags = r.readUInt8(),
              r.skip(258), let trackCount = r.readUInt8() else { return nil }
        var tracks: [Track] = []
        for _ in 0..<trackCount {
            guard let offset = r.readUInt64(), let number = r.readUInt8(), let isrc = r.readBytes(12),
                  let trackFlags = r.readUInt8(), r.skip(13), let indexCount = r.readUInt8() else { return nil }
            var indices: [Index] = []
            for _ in 0..<indexCount {
                guard let o = r.readUInt64(), let n = r.readUInt8(), r.skip(3) else { return nil }
                indices.append(Index(offset: o, number: n))
            }
            tracks.append(Track(offset: offset, number: number, isrc: decodeText(isrc), isAudio: trackFlags & 0x80 == 0,
                                indices: indices))
        }
        return FLACCueSheet(catalogNumber: decodeText(catalog), leadInSamples: leadIn, isCD: flags & 0x80 != 0, tracks: tracks)
    }

    /// The tracks without the lead-out.
    public var playableTracks: [Track] { tracks.filter { $0.number != 170 && $0.number != 255 } }

    /// A chapter per track, at index 1 (or the track's first index), titled "Track NN".
    public func chapters(sampleRate: Int) -> [Chapter] {
        guard sampleRate > 0 else { return [] }
        return playableTracks.map { t in
            let index = t.indices.first(where: { $0.number == 1 }) ?? t.indices.first
            let start = t.offset &+ (index?.offset ?? 0)
            return Chapter(start: Double(start) / Double(sampleRate), title: FLACCueSheet.title(t.number))
        }
    }

    /// A marker per index point: "Track NN" at index 1, "Track NN index MM" at the others.
    public var markers: [AudioFileMarker] {
        playableTracks.flatMap { t in
            t.indices.map { i in
                AudioFileMarker(framePosition: Double(t.offset &+ i.offset),
                                name: i.number == 1 ? FLACCueSheet.title(t.number)
                                    : FLACCueSheet.title(t.number) + " index " + FLACCueSheet.twoDigits(i.number),
                                markerID: Int32(t.number))
            }
        }
    }

    static func twoDigits(_ n: UInt8) -> String { n < 10 ? "0\(n)" : "\(n)" }
    static func title(_ n: UInt8) -> String { "Track " + twoDigits(n) }
}

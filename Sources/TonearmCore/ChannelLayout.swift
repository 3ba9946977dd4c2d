/// Where each channel plays, as Apple's `AudioChannelLayout`: a layout tag, or a bitmap,
/// or one description per channel.
public struct ChannelLayout: Hashable, Sendable, CustomStringConvertible {
    public var tag: Tag
    public var bitmap: ChannelBitmap
    public var descriptions: [ChannelDescription]

    public init(tag: Tag, bitmap: ChannelBitmap = [], descriptions: [ChannelDescription] = []) {
        self.tag = tag
        self.bitmap = bitmap
        self.descriptions = descriptions
    }

    /// A layout given by its channels' labels, in stream order.
    public init(labels: [ChannelLabel]) {
        self.init(tag: .useChannelDescriptions, descriptions: labels.map { ChannelDescription(label: $0) })
    }

    /// A layout given by a bitmap, as WAVE_FORMAT_EXTENSIBLE does.
    public init(bitmap: ChannelBitmap) { self.init(tag: .useChannelBitmap, bitmap: bitmap) }

    /// Apple's layout tag: the high 16 bits name the layout, the low 16 give the channel count.
    public struct Tag: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        init(_ index: UInt32, _ channels: UInt32) { rawValue = index << 16 | channels }

        /// Channels this tag stands for (its low 16 bits).
        public var numberOfChannels: UInt32 { rawValue & 0xFFFF }

        /// kAudioChannelLayoutTag_UseChannelDescriptions.
        public static let useChannelDescriptions = Tag(0, 0)
        /// kAudioChannelLayoutTag_UseChannelBitmap.
        public static let useChannelBitmap = Tag(1, 0)
        /// kAudioChannelLayoutTag_Mono.
        public static let mono = Tag(100, 1)
        /// kAudioChannelLayoutTag_Stereo.
        public static let stereo = Tag(101, 2)
        /// kAudioChannelLayoutTag_Quadraphonic: L R Ls Rs.
        public static let quadraphonic = Tag(108, 4)
        /// kAudioChannelLayoutTag_MPEG_3_0_A: L R C.
        public static let mpeg3_0_A = Tag(113, 3)
        /// kAudioChannelLayoutTag_MPEG_3_0_B: C L R.
        public static let mpeg3_0_B = Tag(114, 3)
        /// kAudioChannelLayoutTag_MPEG_4_0_A: L R C Cs.
        public static let mpeg4_0_A = Tag(115, 4)
        /// kAudioChannelLayoutTag_MPEG_4_0_B: C L R Cs.
        public static let mpeg4_0_B = Tag(116, 4)
        /// kAudioChannelLayoutTag_MPEG_5_0_A: L R C Ls Rs.
        public static let mpeg5_0_A = Tag(117, 5)
        /// kAudioChannelLayoutTag_MPEG_5_0_B: L R Ls Rs C.
        public static let mpeg5_0_B = Tag(118, 5)
        /// kAudioChannelLayoutTag_MPEG_5_0_C: L C R Ls Rs.
        public static let mpeg5_0_C = Tag(119, 5)
        /// kAudioChannelLayoutTag_MPEG_5_0_D: C L R Ls Rs.
        public static let mpeg5_0_D = Tag(120, 5)
        /// kAudioChannelLayoutTag_MPEG_5_1_A: L R C LFE Ls Rs (WAV order).
        public static let mpeg5_1_A = Tag(121, 6)
        /// kAudioChannelLayoutTag_MPEG_5_1_B: L R Ls Rs C LFE.
        public static let mpeg5_1_B = Tag(122, 6)
        /// kAudioChannelLayoutTag_MPEG_5_1_C: L C R Ls Rs LFE (AIFF order).
        public static let mpeg5_1_C = Tag(123, 6)
        /// kAudioChannelLayoutTag_MPEG_5_1_D: C L R Ls Rs LFE (AAC order).
        public static let mpeg5_1_D = Tag(124, 6)
        /// kAudioChannelLayoutTag_MPEG_6_1_A: L R C LFE Ls Rs Cs.
        public static let mpeg6_1_A = Tag(125, 7)
        /// kAudioChannelLayoutTag_MPEG_7_1_A: L R C LFE Ls Rs Lc Rc.
        public static let mpeg7_1_A = Tag(126, 8)
        /// kAudioChannelLayoutTag_MPEG_7_1_B, also kAudioChannelLayoutTag_AAC_7_1:
        /// C Lc Rc L R Ls Rs LFE (AAC's channel configuration 7).
        public static let mpeg7_1_B = Tag(127, 8)
        /// kAudioChannelLayoutTag_AAC_7_1, the same tag as ``mpeg7_1_B``.
        public static let aac7_1 = mpeg7_1_B
        /// kAudioChannelLayoutTag_MPEG_7_1_C: L R C LFE Ls Rs Rls Rrs.
        public static let mpeg7_1_C = Tag(128, 8)
        /// kAudioChannelLayoutTag_ITU_2_1: L R Cs.
        public static let itu2_1 = Tag(131, 3)
        /// kAudioChannelLayoutTag_ITU_2_2: L R Ls Rs.
        public static let itu2_2 = Tag(132, 4)
        /// kAudioChannelLayoutTag_DiscreteInOrder: channels with no position, in order.
        public static let discreteInOrder = Tag(147, 0)
        /// kAudioChannelLayoutTag_Unknown.
        public static let unknown = Tag(rawValue: 0xFFFF_0000)
    }

    /// The labels of the channels in stream order, when the layout says them.
    public var channelLabels: [ChannelLabel]? {
        switch tag {
        case .useChannelDescriptions:
            return descriptions.isEmpty ? nil : descriptions.map(\.label)
        case .useChannelBitmap:
            return bitmap.labels
        default:
            return ChannelLayout.labelsByTag[tag.rawValue]?.labels
        }
    }

    /// Channels the layout describes, or nil when it does not say.
    public var numberOfChannels: Int? {
        switch tag {
        case .useChannelDescriptions: return descriptions.isEmpty ? nil : descriptions.count
        case .useChannelBitmap: return bitmap.labels.count
        default:
            let n = Int(tag.numberOfChannels)
            return n > 0 ? n : nil
        }
    }

    /// The WAVE_FORMAT_EXTENSIBLE `dwChannelMask` for this layout, when every channel
    /// has a speaker bit and the channels are in WAV's (ascending bit) order.
    public var waveChannelMask: UInt32? {
        guard let labels = channelLabels else { return nil }
        var mask: UInt32 = 0
        var last: UInt32 = 0
        for label in labels {
            guard let bit = label.bitmapBit else { return nil }
            guard bit > last else { return nil }  // WAV order is ascending bit order
            mask |= bit
            last = bit
        }
        return mask
    }

    /// The same channels in WAV's order (ascending channel-mask bits), as a WAVE file must
    /// store them; nil when a channel has no mask bit or appears twice.
    public var waveOrdered: ChannelLayout? {
        guard let labels = channelLabels else { return nil }
        var mask: UInt32 = 0
        for label in labels {
            guard let bit = label.bitmapBit, mask & bit == 0 else { return nil }
            mask |= bit
        }
        return ChannelLayout(waveChannelMask: mask)
    }

    /// The layout that a WAVE_FORMAT_EXTENSIBLE channel mask gives: a named tag where one
    /// matches exactly, otherwise the bitmap. Returns nil for a mask of 0 (no positions).
    public init?(waveChannelMask mask: UInt32) {
        guard mask != 0 else { return nil }
        let bitmap = ChannelBitmap(rawValue: mask & ChannelBitmap.known.rawValue)
        guard bitmap.rawValue == mask else { return nil }
        let labels = bitmap.labels
        if let tag = ChannelLayout.labelsByTag.first(where: { $0.value.labels == labels && $0.value.preferred })?.key {
            self.init(tag: Tag(rawValue: tag))
        } else {
            self.init(bitmap: bitmap)
        }
    }

    /// The layout Tonearm assumes when a file gives none: mono, stereo, or WAV's order
    /// for 3 to 8 channels.
    public static func defaultLayout(channels: Int) -> ChannelLayout? {
        switch channels {
        case 1: return ChannelLayout(tag: .mono)
        case 2: return ChannelLayout(tag: .stereo)
        case 3: return ChannelLayout(tag: .mpeg3_0_A)
        case 4: return ChannelLayout(tag: .quadraphonic)
        case 5: return ChannelLayout(tag: .mpeg5_0_A)
        case 6: return ChannelLayout(tag: .mpeg5_1_A)
        case 7: return ChannelLayout(tag: .mpeg6_1_A)
        case 8: return ChannelLayout(tag: .mpeg7_1_C)
        default: return nil
        }
    }

    /// Vorbis I §4.3.9's channel order, which Opus mapping family 1 and FLAC-in-Ogg's
    /// Vorbis-order streams share, as descriptions; nil for mono, stereo and more than eight
    /// channels (the first two need no layout, the order beyond eight is the application's).
    public static func vorbisOrder(channels: Int) -> ChannelLayout? {
        let l: [ChannelLabel]
        switch channels {
        case 3: l = [.left, .center, .right]
        case 4: l = [.left, .right, .leftSurround, .rightSurround]
        case 5: l = [.left, .center, .right, .leftSurround, .rightSurround]
        case 6: l = [.left, .center, .right, .leftSurround, .rightSurround, .lfeScreen]
        case 7: l = [.left, .center, .right, .leftSurroundDirect, .rightSurroundDirect, .centerSurround, .lfeScreen]
        case 8: l = [.left, .center, .right, .leftSurroundDirect, .rightSurroundDirect, .rearSurroundLeft, .rearSurroundRight, .lfeScreen]
        default: return nil
        }
        return ChannelLayout(labels: l)
    }

    /// A name such as `Stereo (L R)`, as afinfo prints it.
    public var description: String {
        let name = ChannelLayout.labelsByTag[tag.rawValue]?.name
            ?? (tag == .useChannelBitmap ? "Bitmap 0x\(hex8(bitmap.rawValue))"
                : tag == .useChannelDescriptions ? "Channel descriptions"
                : tag == .discreteInOrder ? "Discrete in order" : "Tag 0x\(hex8(tag.rawValue))")
        guard let labels = channelLabels else { return name }
        return name + " (" + labels.map(\.abbreviation).joined(separator: " ") + ")"
    }

    static let labelsByTag: [UInt32: (name: String, labels: [ChannelLabel], preferred: Bool)] = {
        typealias L = ChannelLabel
        var t: [UInt32: (String, [ChannelLabel], Bool)] = [:]
        t[Tag.mono.rawValue] = ("Mono", [.mono], false)
        t[Tag.stereo.rawValue] = ("Stereo", [.left, .right], true)
        t[Tag.quadraphonic.rawValue] = ("Quadraphonic", [.left, .right, .leftSurround, .rightSurround], true)
        t[Tag.mpeg3_0_A.rawValue] = ("MPEG 3.0 A", [.left, .right, .center], true)
        t[Tag.mpeg3_0_B.rawValue] = ("MPEG 3.0 B", [.center, .left, .right], false)
        t[Tag.mpeg4_0_A.rawValue] = ("MPEG 4.0 A", [.left, .right, .center, .centerSurround], true)
        t[Tag.mpeg4_0_B.rawValue] = ("MPEG 4.0 B", [.center, .left, .right, .centerSurround], false)
        t[Tag.mpeg5_0_A.rawValue] = ("MPEG 5.0 A", [.left, .right, .center, .leftSurround, .rightSurround], true)
        t[Tag.mpeg5_0_B.rawValue] = ("MPEG 5.0 B", [.left, .right, .leftSurround, .rightSurround, .center], false)
        t[Tag.mpeg5_0_C.rawValue] = ("MPEG 5.0 C", [.left, .center, .right, .leftSurround, .rightSurround], false)
        t[Tag.mpeg5_0_D.rawValue] = ("MPEG 5.0 D", [.center, .left, .right, .leftSurround, .rightSurround], false)
        t[Tag.mpeg5_1_A.rawValue] = ("MPEG 5.1 A", [.left, .right, .center, .lfeScreen, .leftSurround, .rightSurround], true)
        t[Tag.mpeg5_1_B.rawValue] = ("MPEG 5.1 B", [.left, .right, .leftSurround, .rightSurround, .center, .lfeScreen], false)
        t[Tag.mpeg5_1_C.rawValue] = ("MPEG 5.1 C", [.left, .center, .right, .leftSurround, .rightSurround, .lfeScreen], false)
        t[Tag.mpeg5_1_D.rawValue] = ("MPEG 5.1 D", [.center, .left, .right, .leftSurround, .rightSurround, .lfeScreen], false)
        t[Tag.mpeg6_1_A.rawValue] = ("MPEG 6.1 A", [.left, .right, .center, .lfeScreen, .leftSurround, .rightSurround, .centerSurround], false)
        t[Tag.mpeg7_1_B.rawValue] = ("MPEG 7.1 B", [.center, .leftCenter, .rightCenter, .left, .right, .leftSurround, .rightSurround, .lfeScreen], false)
        t[Tag.mpeg7_1_A.rawValue] = ("MPEG 7.1 A", [.left, .right, .center, .lfeScreen, .leftSurround, .rightSurround, .leftCenter, .rightCenter], true)
        t[Tag.mpeg7_1_C.rawValue] = ("MPEG 7.1 C", [.left, .right, .center, .lfeScreen, .leftSurround, .rightSurround, .rearSurroundLeft, .rearSurroundRight], false)
        t[Tag.itu2_1.rawValue] = ("ITU 2.1", [.left, .right, .centerSurround], false)
        t[Tag.itu2_2.rawValue] = ("ITU 2.2", [.left, .right, .leftSurround, .rightSurround], false)
        return t.mapValues { (name: $0.0, labels: $0.1, preferred: $0.2) }
    }()
}

/// One channel's role, as Apple's `AudioChannelDescription` (without coordinates, which
/// Tonearm keeps but does not interpret).
public struct ChannelDescription: Hashable, Sendable {
    public var label: ChannelLabel
    public var flags: UInt32
    public var coordinates: [Float32]

    public init(label: ChannelLabel, flags: UInt32 = 0, coordinates: [Float32] = [0, 0, 0]) {
        self.label = label
        self.flags = flags
        self.coordinates = coordinates
    }
}

/// A channel's label, as Apple's `AudioChannelLabel`.
public struct ChannelLabel: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unknown = Self(rawValue: 0xFFFF_FFFF)
    public static let unused = Self(rawValue: 0)
    public static let left = Self(rawValue: 1)
    public static let right = Self(rawValue: 2)
    public static let center = Self(rawValue: 3)
    public static let lfeScreen = Self(rawValue: 4)
    public static let leftSurround = Self(rawValue: 5)
    public static let rightSurround = Self(rawValue: 6)
    public static let leftCenter = Self(rawValue: 7)
    public static let rightCenter = Self(rawValue: 8)
    public static let centerSurround = Self(rawValue: 9)
    public static let leftSurroundDirect = Self(rawValue: 10)
    public static let rightSurroundDirect = Self(rawValue: 11)
    public static let topCenterSurround = Self(rawValue: 12)
    public static let verticalHeightLeft = Self(rawValue: 13)
    public static let verticalHeightCenter = Self(rawValue: 14)
    public static let verticalHeightRight = Self(rawValue: 15)
    public static let topBackLeft = Self(rawValue: 16)
    public static let topBackCenter = Self(rawValue: 17)
    public static let topBackRight = Self(rawValue: 18)
    public static let rearSurroundLeft = Self(rawValue: 33)
    public static let rearSurroundRight = Self(rawValue: 34)
    public static let mono = Self(rawValue: 42)

    /// The speaker bit this label has in a WAVE channel mask and in Apple's bitmap (the
    /// two share bit positions).
    public var bitmapBit: UInt32? {
        switch rawValue {
        case 1...18: return 1 << (rawValue - 1)
        case 42: return 1 << 2  // a mono channel plays at the centre
        default: return nil
        }
    }

    public var abbreviation: String {
        switch self {
        case .left: "L"
        case .right: "R"
        case .center: "C"
        case .lfeScreen: "LFE"
        case .leftSurround: "Ls"
        case .rightSurround: "Rs"
        case .leftCenter: "Lc"
        case .rightCenter: "Rc"
        case .centerSurround: "Cs"
        case .leftSurroundDirect: "Lsd"
        case .rightSurroundDirect: "Rsd"
        case .topCenterSurround: "Ts"
        case .verticalHeightLeft: "Vhl"
        case .verticalHeightCenter: "Vhc"
        case .verticalHeightRight: "Vhr"
        case .topBackLeft: "Ltr"
        case .topBackCenter: "Ctr"
        case .topBackRight: "Rtr"
        case .rearSurroundLeft: "Rls"
        case .rearSurroundRight: "Rrs"
        case .mono: "M"
        case .unused: "-"
        default: "?\(rawValue)"
        }
    }
}

/// Apple's `AudioChannelBitmap`; the bits are those of WAVE_FORMAT_EXTENSIBLE's mask.
public struct ChannelBitmap: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let left = Self(rawValue: 1 << 0)
    public static let right = Self(rawValue: 1 << 1)
    public static let center = Self(rawValue: 1 << 2)
    public static let lfeScreen = Self(rawValue: 1 << 3)
    public static let leftSurround = Self(rawValue: 1 << 4)
    public static let rightSurround = Self(rawValue: 1 << 5)
    public static let leftCenter = Self(rawValue: 1 << 6)
    public static let rightCenter = Self(rawValue: 1 << 7)
    public static let centerSurround = Self(rawValue: 1 << 8)
    public static let leftSurroundDirect = Self(rawValue: 1 << 9)
    public static let rightSurroundDirect = Self(rawValue: 1 << 10)
    public static let topCenterSurround = Self(rawValue: 1 << 11)
    public static let verticalHeightLeft = Self(rawValue: 1 << 12)
    public static let verticalHeightCenter = Self(rawValue: 1 << 13)
    public static let verticalHeightRight = Self(rawValue: 1 << 14)
    public static let topBackLeft = Self(rawValue: 1 << 15)
    public static let topBackCenter = Self(rawValue: 1 << 16)
    public static let topBackRight = Self(rawValue: 1 << 17)
    /// All bits that name a speaker.
    public static let known = Self(rawValue: (1 << 18) - 1)

    /// The labels of the set bits, in ascending bit order (WAV's channel order).
    public var labels: [ChannelLabel] {
        (0..<18).compactMap { bit in rawValue & (1 << bit) != 0 ? ChannelLabel(rawValue: UInt32(bit) + 1) : nil }
    }
}

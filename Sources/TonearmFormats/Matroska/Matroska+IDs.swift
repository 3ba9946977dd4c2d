/// Element IDs of EBML (RFC 8794 §11.2) and Matroska (RFC 9559 §5.1), with their marker
/// bits, as they appear in the file.
enum MKV {
    // EBML header (RFC 8794 §11.2)
    static let ebml: UInt32 = 0x1A45_DFA3
    static let ebmlVersion: UInt32 = 0x4286
    static let ebmlReadVersion: UInt32 = 0x42F7
    static let ebmlMaxIDLength: UInt32 = 0x42F2
    static let ebmlMaxSizeLength: UInt32 = 0x42F3
    static let docType: UInt32 = 0x4282
    static let docTypeVersion: UInt32 = 0x4287
    static let docTypeReadVersion: UInt32 = 0x4285
    // Global elements (RFC 8794 §11.3)
    static let void: UInt32 = 0xEC
    static let crc32: UInt32 = 0xBF

    // Segment and its top-level children (RFC 9559 §5.1)
    static let segment: UInt32 = 0x1853_8067
    static let seekHead: UInt32 = 0x114D_9B74
    static let info: UInt32 = 0x1549_A966
    static let tracks: UInt32 = 0x1654_AE6B
    static let cluster: UInt32 = 0x1F43_B675
    static let cues: UInt32 = 0x1C53_BB6B
    static let attachments: UInt32 = 0x1941_A469
    static let chapters: UInt32 = 0x1043_A770
    static let tags: UInt32 = 0x1254_C367

    // SeekHead (§5.1.1)
    static let seek: UInt32 = 0x4DBB
    static let seekID: UInt32 = 0x53AB
    static let seekPosition: UInt32 = 0x53AC

    // Info (§5.1.2)
    static let timestampScale: UInt32 = 0x2A_D7B1
    static let duration: UInt32 = 0x4489
    static let title: UInt32 = 0x7BA9
    static let muxingApp: UInt32 = 0x4D80
    static let writingApp: UInt32 = 0x5741

    // Cluster (§5.1.3)
    static let timestamp: UInt32 = 0xE7
    static let position: UInt32 = 0xA7
    static let prevSize: UInt32 = 0xAB
    static let simpleBlock: UInt32 = 0xA3
    static let blockGroup: UInt32 = 0xA0
    static let block: UInt32 = 0xA1
    static let blockDuration: UInt32 = 0x9B
    static let referenceBlock: UInt32 = 0xFB
    static let discardPadding: UInt32 = 0x75A2
    static let silentTracks: UInt32 = 0x5854
    static let encryptedBlock: UInt32 = 0xAF
    static let blockAdditions: UInt32 = 0x75A1
    static let referencePriority: UInt32 = 0xFA
    static let codecState: UInt32 = 0xA4
    static let slices: UInt32 = 0x8E

    /// The children a Cluster may have: any other ID ends an unknown-size Cluster (RFC 8794 §6.2).
    static let clusterChildren: Set<UInt32> = [
        timestamp, position, prevSize, simpleBlock, blockGroup, silentTracks, encryptedBlock, void, crc32,
    ]

    // Tracks (§5.1.4)
    static let trackEntry: UInt32 = 0xAE
    static let trackNumber: UInt32 = 0xD7
    static let trackUID: UInt32 = 0x73C5
    static let trackType: UInt32 = 0x83
    static let flagEnabled: UInt32 = 0xB9
    static let flagDefault: UInt32 = 0x88
    static let flagLacing: UInt32 = 0x9C
    static let defaultDuration: UInt32 = 0x23_E383
    static let name: UInt32 = 0x536E
    static let language: UInt32 = 0x22_B59C
    static let codecID: UInt32 = 0x86
    static let codecPrivate: UInt32 = 0x63A2
    static let codecName: UInt32 = 0x25_8688
    static let codecDelay: UInt32 = 0x56AA
    static let seekPreRoll: UInt32 = 0x56BB
    static let audio: UInt32 = 0xE1
    static let samplingFrequency: UInt32 = 0xB5
    static let outputSamplingFrequency: UInt32 = 0x78B5
    static let channels: UInt32 = 0x9F
    static let bitDepth: UInt32 = 0x6264
    static let contentEncodings: UInt32 = 0x6D80
    static let contentEncoding: UInt32 = 0x6240
    static let contentEncodingScope: UInt32 = 0x5032
    static let contentEncodingType: UInt32 = 0x5033
    static let contentCompression: UInt32 = 0x5034
    static let contentCompAlgo: UInt32 = 0x4254
    static let contentCompSettings: UInt32 = 0x4255

    // Cues (§5.1.5)
    static let cuePoint: UInt32 = 0xBB
    static let cueTime: UInt32 = 0xB3
    static let cueTrackPositions: UInt32 = 0xB7
    static let cueTrack: UInt32 = 0xF7
    static let cueClusterPosition: UInt32 = 0xF1
    static let cueRelativePosition: UInt32 = 0xF0

    // Attachments (§5.1.6)
    static let attachedFile: UInt32 = 0x61A7
    static let fileName: UInt32 = 0x466E
    static let fileMediaType: UInt32 = 0x4660
    static let fileData: UInt32 = 0x465C

    // Chapters (§5.1.7)
    static let editionEntry: UInt32 = 0x45B9
    static let editionFlagDefault: UInt32 = 0x45DB
    static let chapterAtom: UInt32 = 0xB6
    static let chapterTimeStart: UInt32 = 0x91
    static let chapterFlagHidden: UInt32 = 0x98
    static let chapterDisplay: UInt32 = 0x80
    static let chapString: UInt32 = 0x85

    // Tags (§5.1.8)
    static let tag: UInt32 = 0x7373
    static let targets: UInt32 = 0x63C0
    static let targetTypeValue: UInt32 = 0x68CA
    static let tagTrackUID: UInt32 = 0x63C5
    static let tagEditionUID: UInt32 = 0x63C9
    static let tagChapterUID: UInt32 = 0x63C4
    static let tagAttachmentUID: UInt32 = 0x63C6
    static let simpleTag: UInt32 = 0x67C8
    static let tagName: UInt32 = 0x45A3
    static let tagString: UInt32 = 0x4487
}

import TonearmCore

/// Apple's `AudioFileGetGlobalInfo` (seed 003): which types Tonearm reads and writes, and
/// their names, extensions and MIME types.
extension AudioFile {
    /// The IDs of the global info queries, as `kAudioFileGlobalInfo_…`.
    public enum GlobalInfo: String, Sendable, CaseIterable {
        /// 'afrf', ReadableTypes.
        case readableTypes = "afrf"
        /// 'afwf', WritableTypes.
        case writableTypes = "afwf"
        /// 'ftnm', FileTypeName.
        case fileTypeName = "ftnm"
        /// 'fmid', AvailableFormatIDs.
        case availableFormatIDs = "fmid"
        /// 'sdid', AvailableStreamDescriptionsForFormat.
        case availableStreamDescriptionsForFormat = "sdid"
        /// 'alxt', AllExtensions.
        case allExtensions = "alxt"
        /// 'amim', AllMIMETypes.
        case allMIMETypes = "amim"
        /// 'auti', AllUTIs.
        case allUTIs = "auti"
        /// 'ahfs', AllHFSTypeCodes.
        case allHFSTypeCodes = "ahfs"
        /// 'fext', ExtensionsForType.
        case extensionsForType = "fext"
        /// 'fmim', MIMETypesForType.
        case mimeTypesForType = "fmim"
        /// 'futi', UTIsForType.
        case utisForType = "futi"
        /// 'fhfs', HFSTypeCodesForType.
        case hfsTypeCodesForType = "fhfs"
        /// 'tmim', TypesForMIMEType.
        case typesForMIMEType = "tmim"
        /// 'tuti', TypesForUTI.
        case typesForUTI = "tuti"
        /// 'thfs', TypesForHFSTypeCode.
        case typesForHFSTypeCode = "thfs"
        /// 'text', TypesForExtension.
        case typesForExtension = "text"

        public var fourCC: FourCC { FourCC(rawValue) }
    }

    /// 'afrf': every type Tonearm can read.
    public static var readableTypes: [AudioFileTypeID] { FormatRegistry.readableTypes }
    /// 'afwf': every type Tonearm can write.
    public static var writableTypes: [AudioFileTypeID] { FormatRegistry.writableTypes }

    /// 'ftnm': a type's name, e.g. `WAVE` or `AIFF`. Throws 'typ?' for an unknown type.
    public static func fileTypeName(_ type: AudioFileTypeID) throws(AudioError) -> String {
        try info(type).name
    }
    /// 'fext': a type's file name extensions.
    public static func extensions(for type: AudioFileTypeID) throws(AudioError) -> [String] { try info(type).extensions }
    /// 'fmim': a type's MIME types.
    public static func mimeTypes(for type: AudioFileTypeID) throws(AudioError) -> [String] { try info(type).mimeTypes }
    /// 'futi': a type's UTIs.
    public static func utis(for type: AudioFileTypeID) throws(AudioError) -> [String] { try info(type).utis }
    /// 'fhfs': a type's HFS type codes.
    public static func hfsTypeCodes(for type: AudioFileTypeID) throws(AudioError) -> [FourCC] { try info(type).hfsTypeCodes }
    /// 'fmid': the data formats a writer of this type accepts.
    public static func availableFormatIDs(for type: AudioFileTypeID) throws(AudioError) -> [AudioFormatID] {
        try info(type).writableFormats
    }

    /// 'sdid': the stream descriptions a type can hold for a format ID (sample rate and
    /// channels left 0, meaning any), as afconvert -hf lists them.
    public static func availableStreamDescriptions(for type: AudioFileTypeID, formatID: AudioFormatID) throws(AudioError)
        -> [StreamDescription]
    {
        let i = try info(type)
        guard i.writableFormats.contains(formatID) else { return [] }
        guard formatID == .linearPCM else {
            return [StreamDescription(sampleRate: 0, formatID: formatID, bytesPerPacket: 0, framesPerPacket: 0,
                                      bytesPerFrame: 0, channelsPerFrame: 0, bitsPerChannel: 0)]
        }
        var out: [StreamDescription] = []
        for bits: UInt32 in [8, 16, 24, 32] {
            for bigEndian in [false, true] {
                let d = StreamDescription.pcm(sampleRate: 44100, channels: 1, bits: bits, isBigEndian: bigEndian, isSigned: bits > 8 || type != .wave)
                if (try? i.makeWriter?(d)) != nil { out.append(d) }
            }
        }
        for bits: UInt32 in [32, 64] {
            for bigEndian in [false, true] {
                let d = StreamDescription.pcm(sampleRate: 44100, channels: 1, bits: bits, isFloat: true, isBigEndian: bigEndian)
                if (try? i.makeWriter?(d)) != nil { out.append(d) }
            }
        }
        return out.map { var d = $0; d.sampleRate = 0; d.channelsPerFrame = 0; d.bytesPerFrame = 0; d.bytesPerPacket = 0; return d }
    }

    /// 'alxt': every extension Tonearm knows.
    public static var allExtensions: [String] { unique(FormatRegistry.all.flatMap(\.extensions)) }
    /// 'amim': every MIME type Tonearm knows.
    public static var allMIMETypes: [String] { unique(FormatRegistry.all.flatMap(\.mimeTypes)) }
    /// 'auti': every UTI.
    public static var allUTIs: [String] { unique(FormatRegistry.all.flatMap(\.utis)) }
    /// 'ahfs': every HFS type code.
    public static var allHFSTypeCodes: [FourCC] { unique(FormatRegistry.all.flatMap(\.hfsTypeCodes)) }

    /// 'text': the types that use an extension.
    public static func types(forExtension ext: String) -> [AudioFileTypeID] { FormatRegistry.types(forExtension: ext) }
    /// 'tmim': the types that use a MIME type.
    public static func types(forMIMEType mime: String) -> [AudioFileTypeID] { FormatRegistry.types(forMIMEType: mime) }
    /// 'tuti': the types for a UTI.
    public static func types(forUTI uti: String) -> [AudioFileTypeID] { FormatRegistry.types(forUTI: uti) }
    /// 'thfs': the types for an HFS type code.
    public static func types(forHFSTypeCode code: FourCC) -> [AudioFileTypeID] { FormatRegistry.types(forHFSTypeCode: code) }

    private static func info(_ type: AudioFileTypeID) throws(AudioError) -> FileTypeInfo {
        guard let i = FormatRegistry.info(for: type) else { throw AudioError(.unsupportedFileType, "unknown file type \(type)") }
        return i
    }

    private static func unique<T: Hashable>(_ items: [T]) -> [T] {
        var seen = Set<T>()
        return items.filter { seen.insert($0).inserted }
    }
}

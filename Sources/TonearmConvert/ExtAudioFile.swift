import TonearmCore
import TonearmCodecs
import TonearmFormats

/// Apple's `ExtAudioFile`: an ``AudioFile`` with an ``AudioConverter`` in front, so a
/// program reads and writes frames in the format it wants (its *client format*) whatever the
/// file holds.
///
/// Reading: open any file Tonearm parses and decodes, set ``clientDataFormat`` (say Float32,
/// 16 kHz, mono, as a speech pipeline wants), and ``read(frames:into:)`` gives frames decoded,
/// converted, resampled and trimmed of the encoder's priming and remainder. ``seek(toFrame:)``
/// is sample-accurate wherever the file maps frames to packets (a packet table or constant
/// packets): the frames read after a seek are exactly those a read from the start gives at
/// that place, resampled or not.
///
/// Writing: ``create(path:type:format:channelLayout:flags:encoderSettings:)`` makes a file of
/// a data format, and frames written in the client format are converted to it (and encoded,
/// for compressed formats with an encoder) before they reach the file; a WAVE or FLAC file's
/// channels are put in the channel mask's order. ``close()`` finishes it.
public final class ExtAudioFile {
    /// The file underneath.
    public let file: AudioFile
    /// The file's data format (`kExtAudioFileProperty_FileDataFormat`): the format the file
    /// decodes to. Where only the packets tell (HE-AAC signalled implicitly, or PS in a mono
    /// HE-AAC stream), it is what the first packets show (``DecodedFormatProbe``): an ADTS
    /// file whose header says AAC LC at 22.05 kHz and whose frames carry SBR and PS is 'aacp',
    /// stereo, at 44.1 kHz, the first layer of the file's format list that the frames carry.
    public let fileDataFormat: StreamDescription
    /// Decoded frames per frame the container counts: 2 when the container counts at the
    /// core rate of an HE-AAC stream it names as AAC LC (ADTS, LATM, an LC cookie), else 1.
    private let frameScale: Int64
    /// The order of the file's channels, when known: reading, the order they decode in (the
    /// codec's own, for ALAC, else the file's layout); writing, the order they are stored in.
    public var fileChannelLayout: ChannelLayout? {
        isWriting ? storedLayout : converter?.sourceChannelLayout ?? storedLayout
    }
    /// Reading, the file's own layout ('chan'); writing, the layout the file stores.
    private let storedLayout: ChannelLayout?
    /// The format frames are read or written in. Defaults to the file's format when that is
    /// PCM, else native-endian Float32 (reading) or 16- or 32-bit integers (writing).
    public private(set) var clientDataFormat: StreamDescription
    /// The bytes ``read(frames:into:)`` gives and ``write(_:frames:)`` takes: the client
    /// format, interleaved (a planar client format is for the ``PCMBuffer`` calls).
    public var clientBytesFormat: StreamDescription {
        guard !clientDataFormat.isInterleaved, clientDataFormat.isPCM else { return clientDataFormat }
        var f = clientDataFormat
        f.formatFlags.remove(.isNonInterleaved)
        f.bytesPerFrame = clientDataFormat.bytesPerSample * f.channelsPerFrame
        f.bytesPerPacket = f.bytesPerFrame
        return f
    }
    /// The layout of the client's channels, when set with the client format.
    public private(set) var clientChannelLayout: ChannelLayout?

    /// Apple's ChannelMap between the file's channels and the client's (reading) or the
    /// client's and the file's (writing): for each output channel, the input channel it
    /// takes, or -1 for silence. Set it with ``setChannelMap(_:)``, which checks it.
    public var channelMap: [Int]? {
        get { settings.channelMap }
        @available(*, deprecated, message: "use setChannelMap(_:), which throws for a map that does not fit; this setter keeps the old map then")
        set { try? setChannelMap(newValue) }
    }
    /// The resampler's complexity: 'line', 'norm' or 'bats'. Set it with
    /// ``setSampleRateConverterComplexity(_:)``.
    public var sampleRateConverterComplexity: SampleRateConverterComplexity {
        get { settings.complexity }
        @available(*, deprecated, message: "use setSampleRateConverterComplexity(_:), which throws when the converter cannot be rebuilt")
        set { try? setSampleRateConverterComplexity(newValue) }
    }
    /// The resampler's quality, 0 to 127 (High, 0x60, by default). Set it with
    /// ``setSampleRateConverterQuality(_:)``.
    public var sampleRateConverterQuality: Int {
        get { settings.quality }
        @available(*, deprecated, message: "use setSampleRateConverterQuality(_:), which throws for a quality outside 0...127; this setter keeps the old quality then")
        set { try? setSampleRateConverterQuality(newValue) }
    }
    /// TPDF dither when integer output keeps fewer bits than the source. Set it with ``setDither(_:)``.
    public var dither: DitherAlgorithm {
        get { settings.dither }
        @available(*, deprecated, message: "use setDither(_:), which throws when the converter cannot be rebuilt")
        set { try? setDither(newValue) }
    }

    /// What the converter is built from; changed as a whole so that a refused change leaves
    /// every setting, and the converter, as they were.
    private struct Settings {
        var channelMap: [Int]?
        var complexity: SampleRateConverterComplexity = .normal
        var quality = 0x60
        var dither: DitherAlgorithm = .none
    }
    private var settings = Settings()

    private let properties: FileProperties?
    private var converter: AudioConverter?
    // Reading state.
    /// The next packet to hand the converter.
    private var nextPacket: Int64 = 0
    /// Client frames still to drop after a seek (resampled output before the wanted frame).
    private var clientFramesToSkip: Int64 = 0
    /// The client frame the next read returns.
    private var clientPosition: Int64 = 0
    // Writing state.
    private let isWriting: Bool
    private var encoder: AudioEncoder?
    private var packetsWritten: Int64 = 0
    private var pendingBytes: [UInt8] = []
    /// The packets last read for the converter, kept for their storage.
    private var readData: [UInt8] = []
    private var readDescriptions: [PacketDescription] = []
    /// The encoder's input, written by the converter, and its output: kept from write to write.
    private var encoderInput: PCMBuffer?
    private var encodedPackets: [UInt8] = []
    private var encodedDescriptions: [PacketDescription] = []
    private var closed = false

    // MARK: Opening

    /// Opens a file for reading (`ExtAudioFileOpenURL`). An initializer, as
    /// ``AudioFile``'s `init(path:)`: opening an existing file makes an object; making a new
    /// file is the static `create`, on both classes.
    public convenience init(path: String) throws(AudioError) {
        try self.init(reading: AudioFile(path: path))
    }

    /// Opens a file for reading.
    @available(*, deprecated, renamed: "init(path:)")
    public static func open(path: String) throws(AudioError) -> ExtAudioFile {
        try ExtAudioFile(path: path)
    }

    /// Reads through an open ``AudioFile`` (`ExtAudioFileWrapAudioFileID`).
    public init(reading file: AudioFile) throws(AudioError) {
        let p = try file.properties
        guard let format = p.dataFormat else { throw AudioError(.unsupportedDataFormat, "the file has no audio format") }
        guard CodecRegistry.canDecode(format.formatID) else {
            throw AudioError(.unsupportedDataFormat, "Tonearm cannot decode \(format.formatID) data yet")
        }
        self.file = file
        properties = p
        let decoded = ExtAudioFile.decodedFormat(of: file, format: format, properties: p)
        fileDataFormat = decoded
        frameScale = decoded.framesPerPacket > format.framesPerPacket && format.framesPerPacket > 0
            ? Int64(decoded.framesPerPacket / format.framesPerPacket) : 1
        storedLayout = decoded.channelsPerFrame == format.channelsPerFrame ? p.channelLayout : nil
        isWriting = false
        clientDataFormat = format.isPCM && PCMEncoder.canEncode(format) ? format
            : .pcm(sampleRate: decoded.sampleRate, channels: decoded.channelsPerFrame, bits: 32, isFloat: true,
                   isBigEndian: 1.bigEndian == 1)
        try makeReadConverter()
    }

    /// Sets the client format, and optionally the client's channel layout
    /// (`kExtAudioFileProperty_ClientDataFormat` and `ClientChannelLayout`; without one, the
    /// layout set before stays while the channel count does). The sample rate and channel
    /// count may differ from the file's. Reading, the position is kept.
    public func setClientDataFormat(_ format: StreamDescription, channelLayout: ChannelLayout? = nil) throws(AudioError) {
        guard !closed else { throw AudioError(.notOpen, "the file is closed") }
        guard format.isPCM, PCMEncoder.canEncode(format) || PCMBuffer.commonFormat(of: format) != nil else {
            throw AudioError(.unsupportedDataFormat, "a client format must be linear PCM, not \(format)")
        }
        if isWriting && packetsWritten > 0 {
            throw AudioError(.illegalOperation, "the client format cannot change once frames are written")
        }
        var f = format
        if f.sampleRate == 0 { f.sampleRate = fileDataFormat.sampleRate }
        // Without a layout, the client's channels keep the one they had while their count stays.
        let layout = channelLayout ?? (f.channelsPerFrame == clientDataFormat.channelsPerFrame ? clientChannelLayout : nil)
        if let map = settings.channelMap { try checkChannelMap(map, clientChannels: Int(f.channelsPerFrame)) }
        try reconfigure { file, _ in
            file.clientDataFormat = f
            file.clientChannelLayout = layout
        }
    }

    /// Sets the client format and the channel map together, for a map whose channel count
    /// is the new client format's (reading: `format`'s channels entries; writing: the
    /// file's). Changing one and then the other would pass through a state that does not fit.
    /// - Throws: -66564 (`kExtAudioFileError_InvalidChannelMap`) for a map that does not
    ///   fit; what ``setClientDataFormat(_:channelLayout:)`` throws. Nothing changes then.
    public func setClientDataFormat(_ format: StreamDescription, channelMap map: [Int]?) throws(AudioError) {
        guard !closed else { throw AudioError(.notOpen, "the file is closed") }
        guard format.isPCM, PCMEncoder.canEncode(format) || PCMBuffer.commonFormat(of: format) != nil else {
            throw AudioError(.unsupportedDataFormat, "a client format must be linear PCM, not \(format)")
        }
        var f = format
        if f.sampleRate == 0 { f.sampleRate = fileDataFormat.sampleRate }
        if let map { try checkChannelMap(map, clientChannels: Int(f.channelsPerFrame)) }
        try reconfigure { file, settings in
            file.clientDataFormat = f
            file.clientChannelLayout = nil
            settings.channelMap = map
        }
    }

    /// Sets the channel map (Apple's `kAudioConverterChannelMap` on the file's converter):
    /// reading, one entry per client channel naming the file channel it takes; writing, one
    /// entry per file channel naming the client channel; -1 is silence. Nil goes back to the
    /// default (the channel layouts, or the standard mix).
    /// - Throws: -66564 (`kExtAudioFileError_InvalidChannelMap`) when the entry count is not
    ///   the output's channel count or an entry names no input channel; 'nope' once frames
    ///   are written. The map in force stays then.
    public func setChannelMap(_ map: [Int]?) throws(AudioError) {
        if let map { try checkChannelMap(map, clientChannels: Int(clientDataFormat.channelsPerFrame)) }
        try reconfigure { _, settings in settings.channelMap = map }
    }

    /// Sets the resampler's complexity ('line', 'norm' or 'bats').
    /// - Throws: 'nope' once frames are written; what rebuilding the converter throws.
    public func setSampleRateConverterComplexity(_ complexity: SampleRateConverterComplexity) throws(AudioError) {
        try reconfigure { _, settings in settings.complexity = complexity }
    }

    /// Sets the resampler's quality, Apple's kAudioConverterSampleRateConverterQuality:
    /// 0…127 (Min 0, Low 0x20, Medium 0x40, High 0x60, Max 0x7F).
    /// - Throws: -50 (`kAudio_ParamError`, a value out of range) for a quality outside 0…127,
    ///   even when the rates are equal and no resampler runs; 'nope' once frames are written.
    ///   The quality in force stays then.
    public func setSampleRateConverterQuality(_ quality: Int) throws(AudioError) {
        guard (0...0x7F).contains(quality) else {
            throw AudioError(.parameter, "a sample rate converter quality is 0...127, not \(quality)")
        }
        try reconfigure { _, settings in settings.quality = quality }
    }

    /// Sets the dither applied when integer output keeps fewer bits than the source.
    /// - Throws: 'nope' once frames are written; what rebuilding the converter throws.
    public func setDither(_ dither: DitherAlgorithm) throws(AudioError) {
        try reconfigure { _, settings in settings.dither = dither }
    }

    /// A map's entry count must be the converter's output channels, and each entry -1 or an
    /// input channel: reading, the file's channels in, the client's out; writing, the reverse.
    private func checkChannelMap(_ map: [Int], clientChannels: Int) throws(AudioError) {
        let fileChannels = Int(fileDataFormat.channelsPerFrame)
        let (inputs, outputs) = isWriting ? (clientChannels, fileChannels) : (fileChannels, clientChannels)
        guard map.count == outputs else {
            throw AudioError(.invalidChannelMap, "the channel map has \(map.count) entries for \(outputs) output channels")
        }
        if let bad = map.first(where: { $0 < -1 || $0 >= inputs }) {
            throw AudioError(.invalidChannelMap, "channel map entry \(bad) names no input channel (0..<\(inputs), or -1)")
        }
    }

    /// Applies a change to the client format or the converter settings and rebuilds the
    /// converter (reading, at the same position). When the rebuild fails, every setting and
    /// the converter go back to what they were, and the error is thrown.
    private func reconfigure(_ change: (ExtAudioFile, inout Settings) -> Void) throws(AudioError) {
        guard !closed else { throw AudioError(.notOpen, "the file is closed") }
        if isWriting && packetsWritten > 0 {
            // The converter holds the resampler's and dither's state for frames written.
            throw AudioError(.illegalOperation, "the client format and converter settings cannot change once frames are written")
        }
        let old = (clientDataFormat, clientChannelLayout, settings)
        change(self, &settings)
        do throws(AudioError) {
            try rebuildConverter()
        } catch {
            (clientDataFormat, clientChannelLayout, settings) = old
            try? rebuildConverter()
            throw error
        }
    }

    private func rebuildConverter() throws(AudioError) {
        if isWriting {
            try makeWriteConverter()
        } else {
            let frame = tell()
            try makeReadConverter()
            try seek(toFrame: frame)
        }
    }

    private func configure(_ c: AudioConverter) throws(AudioError) {
        c.channelMap = settings.channelMap
        c.sampleRateConverterComplexity = settings.complexity
        c.sampleRateConverterQuality = settings.quality
        c.dither = settings.dither
        try c.prepare()
    }

    // MARK: Reading

    /// The format the file's packets decode to, looking into its first packets when its
    /// format and cookie leave that open (``DecodedFormatProbe``).
    private static func decodedFormat(of file: AudioFile, format: StreamDescription, properties p: FileProperties)
        -> StreamDescription
    {
        guard let probe = DecodedFormatProbe(format: format, magicCookie: p.magicCookie) else { return format }
        let count = Int(min(Int64(DecodedFormatProbe.packetLimit), p.audioDataPacketCount ?? 0))
        if count > 0, let (data, descriptions) = try? file.readPacketData(startingAt: 0, count: count) {
            data.withUnsafeBytes { probe.examine($0, descriptions: descriptions ?? []) }
        }
        return probe.format
    }

    /// The packet table in decoded frames.
    private var packetTable: PacketTableInfo? { properties?.packetTableInfo?.scaled(by: frameScale) }
    private var priming: Int64 { Int64(max(0, packetTable?.primingFrames ?? 0)) }

    /// Frames in the file at its own rate, after trimming: `kExtAudioFileProperty_FileLengthFrames`.
    public var fileLengthFrames: Int64 {
        if let t = packetTable, t.numberValidFrames > 0 { return t.numberValidFrames }
        return max(0, (properties?.totalFrames ?? 0) * frameScale - priming - Int64(max(0, packetTable?.remainderFrames ?? 0)))
    }

    /// Frames a full read gives in the client format: ⌈file frames × client rate / file rate⌉.
    public var clientLengthFrames: Int64 { clientFrames(fileFrames: fileLengthFrames) }

    /// Damaged packets the decoder concealed (with silence) instead of failing, since the
    /// file was opened: MPEG audio goes on past a corrupt frame and counts it here.
    public var concealedPackets: Int { concealedEarlier + (converter?.concealedPackets ?? 0) }
    private var concealedEarlier = 0

    private func makeReadConverter() throws(AudioError) {
        let c = try AudioConverter(from: fileDataFormat, to: clientDataFormat, magicCookie: properties?.magicCookie)
        // The converter prefers the codec's own channel order (ALAC) to the file's.
        c.inputChannelLayout = storedLayout
        c.outputChannelLayout = clientChannelLayout
        try configure(c)
        // Counted only once the new converter replaces the old, so a refused change counts nothing twice.
        concealedEarlier += converter?.concealedPackets ?? 0
        converter = c
        try startReading(atFileFrame: 0, clientSkip: 0)
        clientPosition = 0
    }

    /// Reads up to `frames` frames in the client format and appends their bytes to `out`
    /// (`ExtAudioFileRead`). Returns the frames read: fewer only at the end of the file, 0 after it.
    public func read(frames: Int, into out: inout [UInt8]) throws(AudioError) -> Int {
        let converter = try readingConverter()
        let got = try converter.fillComplexBuffer(frames: frames, into: &out, input: nextPackets)
        clientPosition += Int64(got)
        return got
    }

    /// Reads into a PCM buffer of the client format (a native Float32, Int16 or Int32
    /// format, interleaved or planar), from its `frameLength` up to its capacity, writing
    /// straight into its storage. Returns the frames read.
    public func read(into buffer: PCMBuffer) throws(AudioError) -> Int {
        let converter = try readingConverter()
        guard PCMBuffer.commonFormat(of: clientDataFormat) == buffer.commonFormat,
              buffer.channelCount == Int(clientDataFormat.channelsPerFrame)
        else {
            throw AudioError(.unsupportedDataFormat, "the buffer does not hold the client format \(clientDataFormat)")
        }
        let got = try converter.fillComplexBuffer(buffer, input: nextPackets)
        clientPosition += Int64(got)
        return got
    }

    /// Reads up to `frames` frames in the client format into the caller's memory, as Apple's
    /// `ExtAudioFileRead` with an `AudioBufferList`: one buffer for an interleaved client
    /// format, one per channel for a non-interleaved one, each with room for `frames` frames.
    /// The converter's last stage writes there directly. Returns the frames read.
    public func read(frames: Int, into list: AudioBufferList) throws(AudioError) -> Int {
        let converter = try readingConverter()
        let got = try converter.fillComplexBuffer(frames: frames, into: list, input: nextPackets)
        clientPosition += Int64(got)
        return got
    }

    /// The converter, once the frames before a seek target (made by the resampler's run-up)
    /// have been read and dropped.
    private func readingConverter() throws(AudioError) -> AudioConverter {
        guard !isWriting, !closed, let converter else { throw AudioError(.permissions, "the file is not open for reading") }
        while clientFramesToSkip > 0 {
            var scratch: [UInt8] = []
            let n = try converter.fillComplexBuffer(frames: Int(min(clientFramesToSkip, 65536)), into: &scratch, input: nextPackets)
            guard n > 0 else { clientFramesToSkip = 0; break }
            clientFramesToSkip -= Int64(n)
        }
        return converter
    }

    /// The converter's input callback: the next packets of the file.
    private func nextPackets(_ wanted: Int) throws(AudioError) -> AudioConverter.InputPackets? {
        let total = properties?.audioDataPacketCount ?? 0
        guard nextPacket < total else { return nil }
        let n = Int(min(Int64(max(1, wanted)), total - nextPacket))
        // Into the same two arrays each time: the converter lets go of them before the next
        // call, so their storage is reused and a steady read allocates nothing here.
        let count = try file.readPacketData(startingAt: nextPacket, count: n, into: &readData, descriptions: &readDescriptions)
        guard count > 0 else { return nil }
        nextPacket += Int64(count)
        return AudioConverter.InputPackets(data: readData, packetCount: count, descriptions: readDescriptions.isEmpty ? nil : readDescriptions)
    }

    /// Seeks so that the next read starts at `frame` (`ExtAudioFileSeek`), counted in the
    /// client format's sample rate (equal to the file's frames when the rates are equal) and
    /// after the priming. Exact for every file that maps frames to packets; others are
    /// decoded from the start up to the frame.
    public func seek(toFrame frame: Int64) throws(AudioError) {
        guard !isWriting, !closed else { throw AudioError(.permissions, "the file is not open for reading") }
        guard frame >= 0 else { throw AudioError(.position, "frame \(frame) is negative") }
        let inRate = fileDataFormat.sampleRate, outRate = clientDataFormat.sampleRate
        if inRate == outRate {
            try startReading(atFileFrame: frame, clientSkip: 0)
        } else if let (inStep, outStep) = ExtAudioFile.rateSteps(inRate, outRate) {
            // Start the resampler at a file frame where the two sample grids meet, far
            // enough before the target that its filter has run up on real input, so the
            // frames from the target on are those a read from the start gives.
            let target = Double(frame) * inRate / outRate
            let runUp = 16384 * max(1, inRate / outRate)
            let steps = max(0, Int64(((target - runUp) / Double(inStep)).rounded(.down)))
            let fileStart = steps * inStep
            try startReading(atFileFrame: fileStart, clientSkip: frame - steps * outStep)
        } else {
            try startReading(atFileFrame: 0, clientSkip: frame)
        }
        clientPosition = frame
    }

    /// The client frame the next read returns (`ExtAudioFileTell`).
    public func tell() -> Int64 { clientPosition }

    /// Input and output frames after which integer rates line up again, when they are
    /// integers small enough to step by.
    static func rateSteps(_ inRate: Double, _ outRate: Double) -> (Int64, Int64)? {
        guard inRate == inRate.rounded(), outRate == outRate.rounded(), inRate >= 1, outRate >= 1,
              inRate < 1e9, outRate < 1e9 else { return nil }
        var a = Int64(inRate), b = Int64(outRate)
        while b != 0 { (a, b) = (b, a % b) }
        return (Int64(inRate) / a, Int64(outRate) / a)
    }

    private func clientFrames(fileFrames: Int64) -> Int64 {
        let inRate = fileDataFormat.sampleRate, outRate = clientDataFormat.sampleRate
        if inRate == outRate { return fileFrames }
        if let (i, o) = ExtAudioFile.rateSteps(inRate, outRate) {
            let (q, r) = fileFrames.quotientAndRemainder(dividingBy: i)
            return q * o + (r * o + i - 1) / i
        }
        return Int64((Double(fileFrames) * outRate / inRate).rounded(.up))
    }

    /// Points the converter at file frame `fileFrame` (after the priming): the packet that
    /// holds it (less the codec's roll distance), the frames to drop inside it, and the
    /// valid frames left.
    private func startReading(atFileFrame fileFrame: Int64, clientSkip: Int64) throws(AudioError) {
        guard let converter else { return }
        converter.reset(resamplerOrigin: Int(clamping: fileFrame))
        let decoded = priming + fileFrame
        var packet: Int64 = 0, skip = decoded
        if decoded > 0, let (p, _) = try? file.packet(forFrame: decoded / frameScale) {
            let roll = max((try? file.rollDistance(forPacket: p)) ?? 0, Int64(converter.decoderPrerollPackets))
            packet = max(0, p - roll)
            skip = decoded - (try file.frame(forPacket: packet)) * frameScale
        }
        nextPacket = packet
        converter.framesToSkip = skip
        let valid = packetTable.flatMap { $0.numberValidFrames > 0 ? $0.numberValidFrames : nil }
        converter.framesToKeep = valid.map { max(0, $0 - fileFrame) }
        clientFramesToSkip = clientSkip
    }

    // MARK: Writing

    /// Creates a file to write (`ExtAudioFileCreateWithURL`) holding `format`: linear PCM,
    /// G.711, or a compressed format Tonearm encodes (FLAC, with `encoderSettings`). Set ``clientDataFormat`` to
    /// write in another format; it starts as `format` for PCM, or native 16-bit (or 32-bit
    /// for deeper sources) integers.
    ///
    /// `flags` are ``AudioFile/create(path:type:format:flags:)``'s, with its default: an
    /// existing file is an error ('prm?') unless `flags` has `.eraseFile`, as
    /// `ExtAudioFileCreateWithURL` does. (This replaced existing files by default before.)
    public static func create(path: String, type: AudioFileTypeID, format: StreamDescription,
                              channelLayout: ChannelLayout? = nil, flags: AudioFile.CreateFlags = [],
                              encoderSettings: EncoderSettings = .init()) throws(AudioError) -> ExtAudioFile
    {
        try ExtAudioFile(path: path, type: type, format: format, channelLayout: channelLayout, flags: flags,
                         settings: encoderSettings)
    }

    private init(path: String, type: AudioFileTypeID, format: StreamDescription, channelLayout: ChannelLayout?,
                 flags: AudioFile.CreateFlags, settings: EncoderSettings) throws(AudioError)
    {
        var encoder: AudioEncoder?
        var fileFormat = format
        if !format.isPCM && format.formatID != .uLaw && format.formatID != .aLaw {
            let e = try CodecRegistry.makeEncoder(for: format, settings: settings)
            encoder = e
            fileFormat = e.outputFormat
        } else if !PCMEncoder.canEncode(format) {
            throw AudioError(.unsupportedDataFormat, "Tonearm cannot write \(format) data")
        }
        file = try AudioFile.create(path: path, type: type, format: fileFormat, flags: flags)
        self.encoder = encoder
        fileDataFormat = fileFormat
        frameScale = 1
        // WAVE and FLAC files keep their channels in the channel mask's order: frames
        // written in another order (ALAC's C L R…, AIFF's) are reordered on the way in.
        var fileLayout = channelLayout
        if [.wave, .rf64, .bw64, .wave64, .flac].contains(type), let l = channelLayout, let ordered = l.waveOrdered,
           ordered.channelLabels != l.channelLabels
        {
            fileLayout = ordered
        }
        storedLayout = fileLayout
        clientChannelLayout = channelLayout
        properties = nil
        isWriting = true
        let bits: UInt32 = format.bitsPerChannel > 16 ? 32 : 16
        clientDataFormat = format.isPCM ? format
            : .pcm(sampleRate: format.sampleRate, channels: format.channelsPerFrame, bits: bits, isBigEndian: 1.bigEndian == 1)
        if let fileLayout { try file.setProperty(.channelLayout, .channelLayout(fileLayout)) }
        if let encoder { try file.setProperty(.magicCookieData, .data(encoder.magicCookie)) }
        try makeWriteConverter()
    }

    /// The PCM the converter makes for the file: the file's format, or the encoder's input.
    private var writeTarget: StreamDescription {
        guard let encoder else { return fileDataFormat }
        let bits = UInt32(encoder.inputCommonFormat.bytesPerSample * 8)
        return .pcm(sampleRate: fileDataFormat.sampleRate, channels: fileDataFormat.channelsPerFrame, bits: bits,
                    isFloat: encoder.inputCommonFormat == .float32, isBigEndian: 1.bigEndian == 1)
    }

    private func makeWriteConverter() throws(AudioError) {
        let c = try AudioConverter(from: clientBytesFormat, to: writeTarget)
        c.inputChannelLayout = clientChannelLayout
        c.outputChannelLayout = storedLayout
        try configure(c)
        converter = c
    }

    /// Writes frames given as bytes in the client format (`ExtAudioFileWrite`).
    public func write(_ bytes: UnsafeRawBufferPointer, frames: Int) throws(AudioError) {
        guard isWriting, !closed, let converter else { throw AudioError(.permissions, "the file is not open for writing") }
        let bytesPerFrame = Int(clientBytesFormat.bytesPerFrame)
        guard frames >= 0, bytes.count >= frames * bytesPerFrame else {
            throw AudioError(.invalidInputSize, "\(frames) frames need \(frames * bytesPerFrame) bytes, not \(bytes.count)")
        }
        let client = UnsafeRawBufferPointer(rebasing: bytes[0..<frames * bytesPerFrame])
        try converter.prepare()
        if encoder == nil, converter.isPassthrough {
            // The client's format is the file's: its bytes go to the file as they are.
            guard frames > 0 else { return }
            try file.writePackets(client, count: frames, startingAt: packetsWritten)
            packetsWritten += Int64(frames)
            return
        }
        try convertAndStore(.packets(client, count: frames), frames: frames)
    }

    /// Writes frames given as bytes in the client format, from an array.
    public func write(_ bytes: [UInt8], frames: Int) throws(AudioError) {
        try bytes.withBytes { raw throws(AudioError) in try write(raw, frames: frames) }
    }

    /// Writes the valid frames of a PCM buffer whose format matches the client format's
    /// channels and rate (any common sample type or layout).
    public func write(_ buffer: PCMBuffer) throws(AudioError) {
        guard isWriting, !closed, converter != nil else { throw AudioError(.permissions, "the file is not open for writing") }
        try convertAndStore(.buffer(buffer), frames: buffer.frameLength)
    }

    /// Converts `frames` client frames (or the end of the stream) for the file. With an
    /// encoder, the converter writes straight into the encoder's input buffer, kept from
    /// write to write; without one, its bytes go to the file.
    private func convertAndStore(_ input: AudioConverter.PushInput, frames: Int) throws(AudioError) {
        let converter = converter!
        pendingBytes.removeAll(keepingCapacity: true)
        guard let encoder else {
            switch input {
            case .packets(let data, let count): try converter.convert(packets: data, count: count, descriptions: nil, into: &pendingBytes)
            case .buffer(let pcm): try converter.convert(pcm, into: &pendingBytes)
            case .end: try converter.finish(into: &pendingBytes)
            }
            guard !pendingBytes.isEmpty else { return }
            let n = pendingBytes.count / Int(writeTarget.bytesPerFrame)
            try file.writePackets(pendingBytes, count: n, startingAt: packetsWritten)
            packetsWritten += Int64(n)
            return
        }
        let capacity = try converter.maximumOutputFrames(forInputFrames: frames)
        if encoderInput == nil || encoderInput!.frameCapacity < capacity {
            let target = writeTarget
            encoderInput = PCMBuffer(commonFormat: encoder.inputCommonFormat, sampleRate: target.sampleRate,
                                     channels: Int(target.channelsPerFrame), interleaved: true, frameCapacity: max(capacity, 1))
        }
        let buffer = encoderInput!
        buffer.frameLength = 0
        try converter.push(input, into: buffer, overflow: &pendingBytes)
        try encode(buffer, with: encoder)
        // The buffer holds the most frames a conversion makes, so nothing should be left
        // over; if something is, it is encoded after, through a buffer of its own.
        if !pendingBytes.isEmpty {
            let n = pendingBytes.count / Int(writeTarget.bytesPerFrame)
            let rest = PCMBuffer(commonFormat: buffer.commonFormat, sampleRate: buffer.format.sampleRate, channels: buffer.channelCount,
                                 interleaved: true, frameCapacity: n)
            rest.append(interleavedBytes: pendingBytes, frames: n)
            try encode(rest, with: encoder)
        }
    }

    private func encode(_ buffer: PCMBuffer, with encoder: AudioEncoder) throws(AudioError) {
        guard buffer.frameLength > 0 else { return }
        encodedPackets.removeAll(keepingCapacity: true)
        encodedDescriptions.removeAll(keepingCapacity: true)
        try encoder.encode(buffer, into: &encodedPackets, descriptions: &encodedDescriptions)
        try writeEncoded(encodedPackets, encodedDescriptions)
    }

    private func writeEncoded(_ packets: [UInt8], _ descriptions: [PacketDescription]) throws(AudioError) {
        guard !descriptions.isEmpty else { return }
        try file.writePackets(packets, count: descriptions.count, descriptions: descriptions, startingAt: packetsWritten)
        packetsWritten += Int64(descriptions.count)
    }

    /// Sets the file's info dictionary (titles, artist…) before closing; written where the
    /// file type holds metadata.
    public func setInfo(_ info: InfoDictionary) throws(AudioError) {
        guard isWriting else { throw AudioError(.permissions, "the file is not open for writing") }
        try file.setProperty(.infoDictionary, .info(info))
    }

    /// Finishes the file (`ExtAudioFileDispose`): the resampler's last frames, the
    /// encoder's last packet and final cookie, then the file's sizes and metadata.
    public func close() throws(AudioError) {
        guard !closed else { return }
        closed = true
        defer { converter = nil }
        if isWriting, converter != nil {
            try convertAndStore(.end, frames: 0)
            if let encoder {
                var packets: [UInt8] = []
                var descriptions: [PacketDescription] = []
                try encoder.finish(into: &packets, descriptions: &descriptions)
                try writeEncoded(packets, descriptions)
                try file.setProperty(.magicCookieData, .data(encoder.magicCookie))
            }
        }
        try file.close()
    }

    deinit { if !closed { try? close() } }
}

extension PCMBuffer {
    /// Appends `frames` frames given as interleaved native-endian bytes of this buffer's
    /// sample type, after `frameLength` (de-interleaving into a planar buffer).
    func append(interleavedBytes bytes: [UInt8], frames: Int) {
        let packed = PCMBuffer(commonFormat: commonFormat, sampleRate: format.sampleRate, channels: channelCount,
                               interleaved: true, frameCapacity: frames)
        packed.withUnsafeMutableRawBytes { dst in
            bytes.withUnsafeBytes { src in
                dst.baseAddress!.copyMemory(from: src.baseAddress!, byteCount: min(src.count, dst.count))
            }
        }
        packed.frameLength = frames
        packed.copyFrames(from: 0, count: frames, into: self, at: frameLength)
    }
}

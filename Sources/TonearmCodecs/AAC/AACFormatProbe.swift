import TonearmCore

/// What a stream decodes to, when its format and cookie leave it open and only the first
/// packets tell: HE-AAC's implicit signalling (ISO/IEC 14496-3 §1.6.5.2), where an AAC LC
/// cookie says nothing of SBR and the first frames carry it, and a mono HE-AAC stream whose
/// cookie does not say whether PS follows (object type 5, or a sync extension without the
/// 0x548 flag).
///
/// The output rate and channel count must be known before the first buffer is handed out,
/// so a reader (``ExtAudioFile``, a stream decoder) makes a probe for the file's format and
/// cookie, hands it packets from the first until ``examine(_:)`` returns true or
/// ``packetLimit`` packets went by, then asks for ``format``: 'aach' at twice
/// the rate with 2048 frames a packet when SBR is there, 'aacp' with two channels when PS is
/// too, else the format it was made with. The decoder made for that format decodes SBR and
/// PS (see ``AACDecoder``).
///
/// The probe decodes the packets with an AAC decoder of its own; a packet it cannot decode
/// tells nothing.
public final class DecodedFormatProbe {
    /// The format to decode to: the one given, until a packet shows SBR or PS.
    public private(set) var format: StreamDescription
    private let decoder: AACDecoder
    private let hook: Hook
    private let coreRate: Double

    /// A probe, or nil when the format and cookie already decide the output (every format
    /// but AAC LC without SBR signalled, and mono SBR without PS signalled).
    public init?(format: StreamDescription, magicCookie: [UInt8]?) {
        guard AACDecoder.formatIDs.contains(format.formatID), format.formatID != .mpeg4AAC_HE_V2,
              let cookie = magicCookie, let asc = try? AudioSpecificConfig.parse(cookie), asc.objectType == 2,
              asc.frameLength == 1024, asc.sampleRate <= 48000 else { return nil }
        let implicitSBR = format.formatID == .mpeg4AAC && !asc.sbrSignalled && format.sampleRate == asc.sampleRate
        let sbr = asc.sbr || format.formatID == .mpeg4AAC_HE
        let implicitPS = sbr && asc.channels == 1 && !asc.psSignalled
        guard implicitSBR || implicitPS else { return nil }
        var core = format
        core.formatID = .mpeg4AAC
        core.sampleRate = asc.sampleRate
        core.channelsPerFrame = UInt32(asc.channels)
        guard let d = try? AACDecoder(format: core, magicCookie: cookie, output: .float32) else { return nil }
        self.format = format
        decoder = d
        coreRate = asc.sampleRate
        hook = Hook(outputRate: Int(2 * asc.sampleRate), mono: asc.channels == 1)
        d.extensionDecoder = hook
        if sbr { hook.sbrFound = true }
    }

    /// The packets worth examining: the probe decides by then (SBR from the first packet that
    /// has no SBR payload or one whose header it reads; PS from that header's frame).
    public static let packetLimit = 8

    /// Looks into the packets `descriptions` place in `data`, from the first, until the
    /// format is decided; true once it is. A description outside `data` ends the look.
    @discardableResult
    public func examine(_ data: UnsafeRawBufferPointer, descriptions: [PacketDescription]) -> Bool {
        for d in descriptions.prefix(Self.packetLimit) {
            let start = Int(d.startOffset), end = start + Int(d.dataByteSize)
            guard start >= 0, start <= end, end <= data.count else { break }
            if examine(UnsafeRawBufferPointer(rebasing: data[start..<end])) { return true }
        }
        return hook.decided
    }

    /// Looks into one packet; true once the format is decided (more packets change nothing).
    @discardableResult
    public func examine(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard !hook.decided else { return true }
        let buffer = PCMBuffer(commonFormat: .float32, sampleRate: coreRate, channels: decoder.channels, interleaved: true,
                               frameCapacity: 1024)
        let concealed = decoder.concealedPackets
        try? decoder.decode(packet, packetCount: 1, descriptions: nil, into: buffer)
        guard decoder.concealedPackets == concealed else { return false }
        hook.endPacket()
        if hook.sbrFound {
            format.formatID = hook.psFound ? .mpeg4AAC_HE_V2 : .mpeg4AAC_HE
            format.sampleRate = 2 * coreRate
            format.framesPerPacket = 2048
            format.channelsPerFrame = hook.psFound ? 2 : UInt32(decoder.channels)
        }
        return hook.decided
    }

    /// Watches the fill elements: SBR payloads, and whether a mono one carries PS (which
    /// needs the payload read, from a header on).
    private final class Hook: AACExtensionDecoder {
        let sbr: SBRDecoder?
        var sbrFound = false
        var psFound = false
        var decided = false
        private var payloadInPacket = false
        private var packets = 0

        init(outputRate: Int, mono: Bool) { sbr = mono ? SBRDecoder(outputSampleRate: outputRate, channels: 1) : nil }

        func payload(type: Int, bits: AACBits, bitCount: Int, after: AACElementReference?) {
            guard type == 13 || type == 14, let after, after.kind == 0 || after.kind == 1 else { return }
            sbrFound = true
            payloadInPacket = true
            guard let sbr, after.kind == 0, !decided else {
                decided = true
                return
            }
            if sbr.parse(bits.base, bitPosition: bits.position, bitCount: min(bitCount, max(0, bits.bitsLeft)),
                         crc: type == 14, elementIsPair: false) {
                psFound = sbr.psBitCount > 0
                decided = true
            }
        }

        func process(core: UnsafeMutablePointer<Float>, channels: Int, frameLength: Int) {}

        /// A packet without SBR decides for an implicit stream (SBR starts in the first
        /// frame); a payload without a header waits for the next packet, up to 8.
        func endPacket() {
            packets += 1
            if !payloadInPacket && !sbrFound { decided = true }
            payloadInPacket = false
            if packets >= DecodedFormatProbe.packetLimit { decided = true }
        }
    }
}

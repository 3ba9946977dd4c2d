import TonearmCore

/// A property's value, typed. `byteSize` is the size Apple's C API would report for it.
public enum PropertyValue: Sendable {
    case uint32(UInt32)
    case int64(Int64)
    case double(Double)
    case fileType(AudioFileTypeID)
    case streamDescription(StreamDescription)
    case formatList([AudioFormatListItem])
    case data([UInt8])
    case channelLayout(ChannelLayout)
    case packetTableInfo(PacketTableInfo)
    case info(InfoDictionary)
    case markers([AudioFileMarker])
    case fourCCs([FourCC])
    case string(String)

    /// Size in bytes of the C value, as `GetPropertyInfo` gives it.
    public var byteSize: Int {
        switch self {
        case .uint32, .fileType: 4
        case .int64, .double: 8
        case .streamDescription: 40
        case .formatList(let l): 48 * l.count
        case .data(let d): d.count
        case .channelLayout(let l): 12 + 20 * l.descriptions.count
        case .packetTableInfo: 16
        case .info, .string: 8  // a CFDictionaryRef or CFStringRef
        case .markers(let m): 8 + 28 * m.count
        case .fourCCs(let f): 4 * f.count
        }
    }

    func mismatch(_ want: String) -> AudioError { AudioError(.badPropertySize, "the property is not \(want)") }
    public func uint32() throws(AudioError) -> UInt32 { if case .uint32(let v) = self { return v }; throw mismatch("a UInt32") }
    public func int64() throws(AudioError) -> Int64 { if case .int64(let v) = self { return v }; throw mismatch("an Int64") }
    public func double() throws(AudioError) -> Double { if case .double(let v) = self { return v }; throw mismatch("a Double") }
    public func fileType() throws(AudioError) -> AudioFileTypeID { if case .fileType(let v) = self { return v }; throw mismatch("a file type") }
    public func streamDescription() throws(AudioError) -> StreamDescription {
        if case .streamDescription(let v) = self { return v }; throw mismatch("a stream description")
    }
    public func data() throws(AudioError) -> [UInt8] { if case .data(let v) = self { return v }; throw mismatch("data") }
    public func channelLayout() throws(AudioError) -> ChannelLayout {
        if case .channelLayout(let v) = self { return v }; throw mismatch("a channel layout")
    }
    public func packetTableInfo() throws(AudioError) -> PacketTableInfo {
        if case .packetTableInfo(let v) = self { return v }; throw mismatch("packet table info")
    }
    public func info() throws(AudioError) -> InfoDictionary { if case .info(let v) = self { return v }; throw mismatch("a dictionary") }
    public func formatList() throws(AudioError) -> [AudioFormatListItem] {
        if case .formatList(let v) = self { return v }; throw mismatch("a format list")
    }

    /// Answers a property from what a parser knows: 'unk?' when not known yet, 'pty?' when
    /// it does not apply.
    static func lookup(_ id: AudioFilePropertyID, properties p: FileProperties, isReady: Bool,
                       parser: FormatParser?) throws(AudioError) -> PropertyValue
    {
        func unknown() -> AudioError { AudioError(.valueUnknown, "\(id) is not known yet") }
        func needsInput() -> AudioError {
            AudioError(.badPropertySize, "\(id) takes an input value; use its typed method")
        }
        switch id {
        case .readyToProducePackets: return .uint32(isReady ? 1 : 0)
        case .fileFormat:
            guard isReady || p.dataFormat != nil else { throw unknown() }
            return .fileType(p.fileType)
        case .dataFormat:
            guard let f = p.dataFormat else { throw unknown() }
            return .streamDescription(f)
        case .formatList:
            if let l = p.formatList { return .formatList(l) }
            guard let f = p.dataFormat else { throw unknown() }
            let tag = p.channelLayout?.tag ?? ChannelLayout.defaultLayout(channels: Int(f.channelsPerFrame))?.tag ?? .unknown
            return .formatList([AudioFormatListItem(format: f, channelLayoutTag: tag)])
        case .magicCookieData:
            guard let c = p.magicCookie else {
                if isReady { throw AudioError(.unsupportedProperty, "this file has no magic cookie") }
                throw unknown()
            }
            return .data(c)
        case .audioDataByteCount:
            guard let v = p.audioDataByteCount else { throw unknown() }
            return .int64(v)
        case .audioDataPacketCount:
            guard let v = p.audioDataPacketCount else { throw unknown() }
            return .int64(v)
        case .maximumPacketSize, .packetSizeUpperBound:
            guard let v = p.maximumPacketSize else { throw unknown() }
            return .uint32(v)
        case .dataOffset:
            guard let v = p.dataOffset else { throw unknown() }
            return .int64(v)
        case .channelLayout:
            guard let l = p.channelLayout else {
                if isReady { throw AudioError(.unsupportedProperty, "this file gives no channel layout") }
                throw unknown()
            }
            return .channelLayout(l)
        case .packetTableInfo:
            guard let t = p.packetTableInfo else {
                if isReady { throw AudioError(.unsupportedProperty, "this file has no packet table info") }
                throw unknown()
            }
            return .packetTableInfo(t)
        case .restrictsRandomAccess:
            guard isReady else { throw unknown() }
            return .uint32(p.independentPackets == nil ? 0 : 1)
        case .averageBytesPerPacket:
            guard let f = p.dataFormat else { throw unknown() }
            if f.bytesPerPacket > 0 { return .double(Double(f.bytesPerPacket)) }
            guard let b = p.audioDataByteCount, let n = p.audioDataPacketCount, n > 0 else { throw unknown() }
            return .double(Double(b) / Double(n))
        case .bitRate:
            guard let b = p.bitRate else { throw unknown() }
            return .uint32(b)
        case .infoDictionary:
            guard isReady || !p.info.isEmpty else { throw unknown() }
            return .info(p.info)
        case .packetToFrame, .frameToPacket, .packetToByte, .byteToPacket, .packetToRollDistance,
             .previousIndependentPacket, .nextIndependentPacket, .packetToDependencyInfo:
            guard isReady else { throw unknown() }
            throw needsInput()
        // AudioFile's own
        case .isOptimized: return .uint32(p.isOptimized ? 1 : 0)
        case .dataFormatName:
            guard let n = p.dataFormatName else { throw unknown() }
            return .string(n)
        case .markerList: return .markers(p.markers)
        case .chunkIDs: return .fourCCs(p.chunkIDs)
        case .estimatedDuration:
            guard let f = p.dataFormat, f.sampleRate > 0, let frames = p.validFrames else { throw unknown() }
            return .double(Double(frames) / f.sampleRate)
        case .sourceBitDepth:
            if let b = p.sourceBitDepth { return .uint32(UInt32(bitPattern: b)) }
            guard let f = p.dataFormat else { throw unknown() }
            return .uint32(f.bitsPerChannel)
        case .id3Tag:
            guard let t = p.id3Tag else { throw AudioError(.unsupportedProperty, "this file has no ID3 tag") }
            return .data(t)
        case .albumArtwork:
            guard let a = p.albumArtwork else { throw AudioError(.unsupportedProperty, "this file has no artwork") }
            return .data(a)
        default:
            throw AudioError(.unsupportedProperty, "property \(id) is not supported")
        }
    }

    static func packetToFrame(_ packet: Int64, properties p: FileProperties) throws(AudioError) -> Int64 {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        if let fpp = p.framesPerPacket { return packet * fpp }
        if let table = p.packetTable, packet <= table.count {
            return table[..<Int(packet)].reduce(0) { $0 + Int64($1.variableFramesInPacket) }
        }
        throw AudioError(.valueUnknown, "frames per packet are not known")
    }

    static func frameToPacket(_ frame: Int64, properties p: FileProperties) throws(AudioError) -> (packet: Int64, frameOffsetInPacket: Int64) {
        guard frame >= 0 else { throw AudioError(.invalidPacketOffset, "frame \(frame) is negative") }
        if let fpp = p.framesPerPacket { return (frame / fpp, frame % fpp) }
        if let table = p.packetTable {
            var start: Int64 = 0
            for (i, d) in table.enumerated() {
                let n = Int64(d.variableFramesInPacket)
                if frame < start + n { return (Int64(i), frame - start) }
                start += n
            }
            throw AudioError(.invalidPacketOffset, "frame \(frame) is past the end")
        }
        throw AudioError(.valueUnknown, "frames per packet are not known")
    }

    /// 'pind' and 'nind': the nearest independent packet before (or at) and after a packet.
    static func independentPacket(_ packet: Int64, next: Bool, properties p: FileProperties) throws(AudioError) -> Int64 {
        guard packet >= 0 else { throw AudioError(.invalidPacketOffset, "packet \(packet) is negative") }
        guard let sync = p.independentPackets else { return next ? packet + 1 : packet }
        if next {
            guard let n = sync.first(where: { $0 > packet }) else { throw AudioError(.invalidPacketOffset, "no independent packet after \(packet)") }
            return n
        }
        guard let prev = sync.last(where: { $0 <= packet }) else { throw AudioError(.invalidPacketOffset, "no independent packet before \(packet)") }
        return prev
    }

    static func byteToPacket(_ byte: Int64, properties p: FileProperties) throws(AudioError) -> (packet: Int64, byteOffsetInPacket: Int64, isEstimated: Bool) {
        guard byte >= 0 else { throw AudioError(.invalidPacketOffset, "byte \(byte) is negative") }
        if let f = p.dataFormat, f.bytesPerPacket > 0 {
            return (byte / Int64(f.bytesPerPacket), byte % Int64(f.bytesPerPacket), false)
        }
        if let table = p.packetTable, !table.isEmpty {
            var lo = 0, hi = table.count - 1
            while lo < hi { let mid = (lo + hi + 1) / 2; if table[mid].startOffset <= byte { lo = mid } else { hi = mid - 1 } }
            return (Int64(lo), byte - table[lo].startOffset, false)
        }
        if let b = p.audioDataByteCount, let n = p.audioDataPacketCount, n > 0, b > 0 {
            let avg = Double(b) / Double(n)
            let packet = Int64(saturating: Double(byte) / avg)
            return (packet, byte - Int64(saturating: Double(packet) * avg), true)
        }
        throw AudioError(.valueUnknown, "packet sizes are not known")
    }
}

import TonearmCore

/// What an elementary stream of a PMT carries, as far as the demuxer is concerned.
enum TSStreamKind: Sendable, Equatable {
    case adts, latm, mpegAudio, ac3, eac3, opus(channelConfig: UInt8)
    /// Private data (0x06) that no descriptor names: its first bytes tell (M2TS writes AAC so).
    case sniffed
    /// Timed ID3 metadata (stream type 0x15).
    case id3
    case video
    case other

    var isAudio: Bool {
        switch self {
        case .adts, .latm, .mpegAudio, .ac3, .eac3, .opus, .sniffed: true
        default: false
        }
    }

    var name: String {
        switch self {
        case .adts: "AAC (ADTS)"
        case .latm: "AAC (LATM)"
        case .mpegAudio: "MPEG audio"
        case .ac3: "AC-3"
        case .eac3: "E-AC-3"
        case .opus: "Opus"
        case .sniffed: "private data"
        case .id3: "timed ID3"
        case .video: "video"
        case .other: "other"
        }
    }
}

/// One elementary stream of a program map table.
struct TSStream: Sendable, Equatable {
    var pid: UInt16
    var streamType: UInt8
    var kind: TSStreamKind
    /// The ISO 639 language code of descriptor 0x0A, lowercased; nil when there is none.
    var language: String?
}

/// PAT and PMT sections (ISO/IEC 13818-1 §2.4.4).
enum TSTables {
    /// The section's version and table ID, with the payload between the 8-byte long header
    /// and the CRC; nil for a section too short to be one.
    static func body(_ s: [UInt8], tableID: UInt8) -> (version: UInt8, body: ArraySlice<UInt8>)? {
        guard s.count >= 12, s[0] == tableID, s[1] & 0x80 != 0 else { return nil }
        // current_next_indicator 0: a table that does not apply yet.
        guard s[5] & 1 == 1 else { return nil }
        return (s[5] >> 1 & 0x1F, s[8..<s.count - 4])
    }

    /// The PMT PIDs of a PAT, by program number (program 0, the network PID, left out).
    static func programs(_ s: [UInt8]) -> (version: UInt8, pmtPIDs: [UInt16])? {
        guard let (version, body) = body(s, tableID: 0x00) else { return nil }
        var pids: [UInt16] = []
        var i = body.startIndex
        while i + 4 <= body.endIndex {
            let program = UInt16(body[i]) << 8 | UInt16(body[i + 1])
            let pid = UInt16(body[i + 2] & 0x1F) << 8 | UInt16(body[i + 3])
            if program != 0 { pids.append(pid) }
            i += 4
        }
        return (version, pids)
    }

    /// The streams of a PMT, in its order.
    static func streams(_ s: [UInt8]) -> (version: UInt8, streams: [TSStream])? {
        guard let (version, body) = body(s, tableID: 0x02), body.count >= 4 else { return nil }
        let b = Array(body)
        let programInfoLength = Int(b[2] & 0x0F) << 8 | Int(b[3])
        let programDescriptors = descriptors(b, from: 4, count: programInfoLength)
        var streams: [TSStream] = []
        var i = 4 + programInfoLength
        while i + 5 <= b.count {
            let type = b[i]
            let pid = UInt16(b[i + 1] & 0x1F) << 8 | UInt16(b[i + 2])
            let infoLength = Int(b[i + 3] & 0x0F) << 8 | Int(b[i + 4])
            let ds = descriptors(b, from: i + 5, count: infoLength)
            var language: String?
            if let d = ds.first(where: { $0.tag == 0x0A }), d.data.count >= 3 {
                let code = d.data.prefix(3)
                if code.allSatisfy({ (0x41...0x7A).contains($0) }) { language = String(decoding: code, as: UTF8.self).lowercased() }
            }
            streams.append(TSStream(pid: pid, streamType: type, kind: kind(type, ds, program: programDescriptors), language: language))
            i += 5 + infoLength
        }
        return (version, streams)
    }

    typealias Descriptor = (tag: UInt8, data: ArraySlice<UInt8>)

    static func descriptors(_ b: [UInt8], from: Int, count: Int) -> [Descriptor] {
        var out: [Descriptor] = []
        var i = from
        let end = min(b.count, from + count)
        while i + 2 <= end {
            let length = Int(b[i + 1])
            guard i + 2 + length <= end else { break }
            out.append((b[i], b[(i + 2)..<(i + 2 + length)]))
            i += 2 + length
        }
        return out
    }

    /// A stream's kind from its type and descriptors (ISO/IEC 13818-1 Table 2-34; ATSC A/52
    /// for 0x81 and 0x87; ETSI EN 300 468 for the DVB AC-3 and E-AC-3 descriptors 0x6A and
    /// 0x7A; the Opus-in-TS mapping for registration 'Opus' with the extension descriptor
    /// 0x7F, tag 0x80).
    static func kind(_ type: UInt8, _ ds: [Descriptor], program: [Descriptor]) -> TSStreamKind {
        func registration(_ name: String) -> Bool {
            (ds + program).contains { $0.tag == 0x05 && $0.data.prefix(4).elementsEqual(name.utf8) }
        }
        switch type {
        case 0x03, 0x04: return .mpegAudio
        case 0x0F: return .adts
        case 0x11: return .latm
        case 0x81: return .ac3
        case 0x87: return .eac3
        case 0x15: return .id3
        case 0x01, 0x02, 0x10, 0x1B, 0x24, 0x42, 0xEA: return .video
        case 0x06:
            if ds.contains(where: { $0.tag == 0x6A }) || registration("AC-3") { return .ac3 }
            if ds.contains(where: { $0.tag == 0x7A }) || registration("EAC3") { return .eac3 }
            if registration("Opus") {
                let ext = ds.first { $0.tag == 0x7F && $0.data.first == 0x80 && $0.data.count >= 2 }
                return .opus(channelConfig: ext.map { $0.data[$0.data.startIndex + 1] } ?? 0xFF)
            }
            // Subtitles, teletext and the like say so with a descriptor of their own.
            if ds.contains(where: { [0x56, 0x59, 0x45, 0x46].contains($0.tag) }) { return .other }
            return .sniffed
        default:
            return .other
        }
    }

    /// What the first bytes of a private stream's payload look like: an ADTS header, an
    /// AC-3/E-AC-3 sync frame, or an MPEG audio header; nil when none.
    static func sniff(_ b: UnsafeRawBufferPointer) -> TSStreamKind? {
        guard b.count >= 4 else { return nil }
        if b[0] == 0xFF && b[1] & 0xF6 == 0xF0 { return .adts }
        if b[0] == 0x0B && b[1] == 0x77 {
            return b.count >= 6 && b[5] >> 3 > 10 ? .eac3 : .ac3
        }
        if b[0] == 0xFF && b[1] & 0xE0 == 0xE0 && b[1] & 0x06 != 0 { return .mpegAudio }
        return nil
    }
}

/// Which audio stream an ``MPEGTSParser`` reports.
public enum MPEGTSTrackSelection: Sendable, Equatable {
    /// The first audio stream of the first program that has one (the default).
    case first
    /// The stream on this PID; the first audio stream when no audio stream has it.
    case pid(UInt16)
    /// The first audio stream whose ISO 639 language descriptor (0x0A) says this code
    /// ("eng", "fra", case-insensitive); the first audio stream when none does.
    case language(String)

    /// The stream chosen among a program's streams, or nil when it has no audio stream.
    func choose(_ streams: [TSStream]) -> TSStream? {
        let audio = streams.filter { $0.kind.isAudio && $0.kind != .sniffed }
        let candidates = audio.isEmpty ? streams.filter { $0.kind == .sniffed }.prefix(1).map { $0 } : audio
        switch self {
        case .first: break
        case .pid(let pid):
            if let s = candidates.first(where: { $0.pid == pid }) { return s }
        case .language(let code):
            if let s = candidates.first(where: { $0.language == code.lowercased() }) { return s }
        }
        return candidates.first
    }
}

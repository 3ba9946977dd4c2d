import TonearmCore

/// Sony Wave64: RIFF WAVE with 16-byte GUIDs for chunk names and 64-bit little-endian
/// sizes that count the 24-byte chunk header; bodies are padded to 8 bytes.
///
/// The chunks' contents are WAVE's, so the 'fmt ', 'fact', 'list' and 'bext' chunks are
/// handed to a ``WAVEFormat`` under their RIFF names: one reader for both containers.
public struct Wave64Format: ChunkedFormat {
    public var fileHeaderSize: Int { 40 }
    public var chunkHeaderSize: Int { 24 }
    public var alignment: Int { 8 }

    /// Reads the chunks that Wave64 shares with WAVE.
    private var wave = WAVEFormat()

    public init() {}

    /// The last 12 bytes of the GUIDs of the chunks that come from RIFF WAVE
    /// (`xxxxxxxx-ACF3-11D3-8CD1-00C04F8EDB8A`).
    static let waveTail: [UInt8] = [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A]
    /// The last 11 bytes of the 'riff' and 'list' GUIDs (`xxxxxxxx-912E-11CF-A5D6-28DB04C10000`
    /// and `…-912F-…`).
    static let riffTail: [UInt8] = [0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]

    /// The 16-byte GUID of a chunk named by its RIFF four-char code.
    static func guid(_ name: FourCC) -> [UInt8] {
        switch name {
        case "riff": return name.bytes + [0x2E] + riffTail
        case "list": return name.bytes + [0x2F] + riffTail
        default: return name.bytes + waveTail
        }
    }

    /// The RIFF name of a chunk's GUID, or nil for a GUID of another family.
    static func name(ofGUID g: ArraySlice<UInt8>) -> FourCC? {
        let b = Array(g)
        guard b.count == 16 else { return nil }
        let name = FourCC(b[0], b[1], b[2], b[3])
        if Array(b[4...]) == waveTail { return name }
        if (b[4] == 0x2E || b[4] == 0x2F) && Array(b[5...]) == riffTail { return name }
        return nil
    }

    public mutating func parseFileHeader(_ r: inout ByteReader, properties: inout FileProperties) throws(AudioError) {
        let riff = r.readBytes(16)!
        _ = r.readUInt64(.little)  // file size
        let wave = r.readBytes(16)!
        guard riff == Wave64Format.guid("riff") else { throw AudioError(.unsupportedFileType, "not a Wave64 file") }
        guard wave == Wave64Format.guid("wave") else { throw AudioError(.unsupportedFileType, "a Wave64 file that is not WAVE") }
        properties.fileType = .wave64
    }

    public mutating func parseChunkHeader(_ r: inout ByteReader) throws(AudioError) -> ChunkHeader {
        let g = r.readBytes(16)!
        let size = r.readUInt64(.little)!
        // GUIDs of other families get a name that no role matches.
        let id = Wave64Format.name(ofGUID: g[...]) ?? FourCC(rawValue: 0)
        if id == "data" && (size == UInt64(Int64.max) || size == UInt64.max) {
            // Written while streaming (ffmpeg to a pipe leaves INT64_MAX): the data runs to the end.
            return ChunkHeader(id: id, bodySize: nil, headerSize: 24)
        }
        guard size >= 24 else { throw AudioError(.invalidChunk, "Wave64 chunk \(id) of \(size) bytes is smaller than its header") }
        // The parser bounds sizes further (ChunkedParser.maximumChunkSize).
        guard size <= UInt64(Int64.max) else { throw AudioError(.invalidChunk, "Wave64 chunk \(id) claims \(size) bytes") }
        return ChunkHeader(id: id, bodySize: Int64(size) - 24, headerSize: 24)
    }

    /// The chunk as WAVE names it, for the chunks whose bodies are WAVE's.
    private static func waveChunk(_ chunk: ChunkHeader) -> ChunkHeader? {
        let id: FourCC
        switch chunk.id {
        case "fmt ": id = "fmt "
        case "fact": id = "fact"
        case "data": id = "data"
        case "list": id = "LIST"
        case "bext": id = "bext"
        default: return nil
        }
        return ChunkHeader(id: id, bodySize: chunk.bodySize, headerSize: chunk.headerSize)
    }

    public func role(of chunk: ChunkHeader) -> ChunkRole {
        guard let c = Wave64Format.waveChunk(chunk) else { return .skip }
        return wave.role(of: c)
    }

    public func canReadAudio(_ p: FileProperties) -> Bool { wave.canReadAudio(p) }

    public mutating func handle(_ chunk: ChunkHeader, body r: inout ByteReader, properties p: inout FileProperties) throws(AudioError) {
        guard let c = Wave64Format.waveChunk(chunk) else { return }
        try wave.handle(c, body: &r, properties: &p)
    }

    public mutating func audioData(_ chunk: ChunkHeader, prefix: inout ByteReader, dataStart: Int64,
                                   properties p: inout FileProperties) throws(AudioError) -> (start: Int64, layout: DataLayout)
    {
        let c = Wave64Format.waveChunk(chunk) ?? chunk
        return try wave.audioData(c, prefix: &prefix, dataStart: dataStart, properties: &p)
    }
}

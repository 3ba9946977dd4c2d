import TonearmCore

/// Writes Sony Wave64: the WAVE chunks under GUID names with 64-bit sizes, so there is no
/// 4 GiB limit and no RF64 switch. The 'fmt ' body is WAVE's own (``WAVEWriter``), and the
/// formats are those WAVE takes: little-endian PCM (8-bit unsigned), float, µ-law and A-law.
final class Wave64Writer: FormatWriter {
    private var riffSizeOffset: Int64 = 16
    private var dataSizeOffset: Int64 = 0
    private var factOffset: Int64?

    init(format: StreamDescription) throws(AudioError) {
        // WAVE's rules (byte order, signedness) are Wave64's.
        _ = try WAVEWriter(fileType: .wave, format: format)
    }

    func header(_ s: WriterState) throws(AudioError) -> [UInt8] {
        let f = s.format
        var w = ByteWriter()
        w.write(Wave64Format.guid("riff"))
        w.write(UInt64(0), .little)  // the file size, patched at close
        w.write(Wave64Format.guid("wave"))
        Wave64Writer.chunk(&w, "fmt ", WAVEWriter.formatChunkBody(f, layout: s.channelLayout))
        if !f.isPCM || f.isFloat {
            // The frame count, patched at close.
            w.write(Wave64Format.guid("fact"))
            w.write(UInt64(24 + 8), .little)
            factOffset = Int64(w.bytes.count)
            w.write(UInt64(0), .little)
        }
        w.write(Wave64Format.guid("data"))
        dataSizeOffset = Int64(w.bytes.count)
        w.write(UInt64(Int64.max), .little)  // "to the end" until close, as a streaming writer leaves it
        return w.bytes
    }

    func finish(_ s: WriterState, handle: POSIXFile) throws(AudioError) {
        var end = s.dataOffset + s.dataByteCount
        let pad = Int((8 - end % 8) % 8)
        if pad > 0 {
            try handle.write([UInt8](repeating: 0, count: pad), at: end)
            end += Int64(pad)
        }
        try handle.truncate(to: end)
        var w = ByteWriter()
        w.write(UInt64(end), .little)
        try handle.write(w.bytes, at: riffSizeOffset)
        w = ByteWriter()
        w.write(UInt64(24 + s.dataByteCount), .little)
        try handle.write(w.bytes, at: dataSizeOffset)
        if let factOffset {
            w = ByteWriter()
            w.write(UInt64(s.frameCount), .little)
            try handle.write(w.bytes, at: factOffset)
        }
    }

    /// A chunk: its GUID, its size counting the 24-byte header, the body and zeros to 8 bytes.
    static func chunk(_ w: inout ByteWriter, _ name: FourCC, _ body: [UInt8]) {
        w.write(Wave64Format.guid(name))
        w.write(UInt64(24 + body.count), .little)
        w.write(body)
        let pad = (8 - body.count % 8) % 8
        w.write([UInt8](repeating: 0, count: pad))
    }
}

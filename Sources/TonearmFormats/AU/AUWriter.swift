import TonearmCore

/// Writes AU files: µ-law, A-law, signed 8/16/24/32-bit and 32/64-bit float, all big-endian.
///
/// The header goes out with the first packet; the info dictionary's comments, when set by
/// then, become its annotation. `finish` patches the real data size into the header.
final class AUWriter: FormatWriter {
    private let encoding: UInt32

    init(format f: StreamDescription) throws(AudioError) {
        try requireWritable(f, fileType: .next, allowed: [.linearPCM, .uLaw, .aLaw])
        guard let encoding = AU.encoding(for: f) else {
            throw AudioError(.unsupportedDataFormat, "AU files cannot hold \(f)")
        }
        if !f.isPCM {
            guard f.bytesPerPacket == f.channelsPerFrame, f.framesPerPacket == 1 else {
                throw AudioError(.unsupportedDataFormat, "G.711 in packets of \(f.bytesPerPacket) bytes")
            }
        }
        guard f.sampleRate == f.sampleRate.rounded(), f.sampleRate >= 1, f.sampleRate <= Double(UInt32.max) else {
            throw AudioError(.unsupportedDataFormat, "AU files hold whole sample rates only, not \(f.sampleRate)")
        }
        guard f.channelsPerFrame <= 1024 else {
            throw AudioError(.unsupportedDataFormat, "AU files cannot hold \(f.channelsPerFrame) channels")
        }
        self.encoding = encoding
    }

    func header(_ s: WriterState) throws(AudioError) -> [UInt8] {
        // The annotation: the comments and a NUL, padded to a multiple of 8 (at least 8 bytes).
        var annotation = Array((s.info[InfoDictionary.comments] ?? "").utf8.prefix(AU.maximumAnnotationSize - 8))
        annotation.append(0)
        while annotation.count % 8 != 0 { annotation.append(0) }
        var w = ByteWriter()
        w.write(FourCC(".snd"))
        w.write(UInt32(AU.headerSize + annotation.count))
        w.write(AU.unknownSize)  // until finish patches it: a file cut short still reads to its end
        w.write(encoding)
        w.write(UInt32(s.format.sampleRate))
        w.write(s.format.channelsPerFrame)
        w.write(annotation)
        return w.bytes
    }

    func finish(_ s: WriterState, handle: POSIXFile) throws(AudioError) {
        guard s.dataByteCount < Int64(AU.unknownSize) else {
            throw AudioError(.doesNotAllow64BitDataSize, "AU data ends at 4 GiB; this file has \(s.dataByteCount) bytes")
        }
        try handle.truncate(to: s.dataOffset + s.dataByteCount)
        let v = UInt32(s.dataByteCount)
        try handle.write([UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)], at: 8)
    }
}

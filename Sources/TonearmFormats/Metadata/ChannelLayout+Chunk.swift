import TonearmCore

extension ChannelLayout {
    /// Reads Apple's AudioChannelLayout as CAF's `chan` and AIFF's `CHAN` chunks store it:
    /// big-endian tag, bitmap and count, then per channel a label, flags and three Float32
    /// coordinates. The count is checked against the body before anything is allocated.
    static func readChunk(_ r: inout ByteReader) throws(AudioError) -> ChannelLayout {
        guard r.readableBytes >= 12 else { throw AudioError(.invalidChunk, "a channel layout chunk of \(r.readableBytes) bytes") }
        let tag = Tag(rawValue: r.readUInt32()!)
        let bitmap = ChannelBitmap(rawValue: r.readUInt32()!)
        let count = r.readUInt32()!
        guard Int64(count) * 20 <= Int64(r.readableBytes) else {
            throw AudioError(.invalidChunk, "a channel layout chunk claims \(count) channel descriptions in \(r.readableBytes) bytes")
        }
        var descriptions: [ChannelDescription] = []
        descriptions.reserveCapacity(Int(count))
        for _ in 0..<count {
            let label = ChannelLabel(rawValue: r.readUInt32()!)
            let flags = r.readUInt32()!
            let coordinates = [r.readFloat32()!, r.readFloat32()!, r.readFloat32()!]
            descriptions.append(ChannelDescription(label: label, flags: flags, coordinates: coordinates))
        }
        return ChannelLayout(tag: tag, bitmap: bitmap, descriptions: descriptions)
    }

    /// The body of a `chan` / `CHAN` chunk for this layout.
    var chunkBody: [UInt8] {
        var w = ByteWriter()
        w.write(tag.rawValue)
        w.write(bitmap.rawValue)
        w.write(UInt32(descriptions.count))
        for d in descriptions {
            w.write(d.label.rawValue)
            w.write(d.flags)
            for i in 0..<3 { w.writeFloat32(i < d.coordinates.count ? d.coordinates[i] : 0) }
        }
        return w.bytes
    }
}

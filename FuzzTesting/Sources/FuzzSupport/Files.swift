import Tonearm

// The file targets come in pairs per family: a parse target (both parser paths and their
// seeks, no decoding) and a decode target (the file decoded through ExtAudioFile, or its
// stream's packets through an AudioConverter). One target doing both decoded every input in
// three client formats; FuzzSync ran 25 inputs a second on a loaded machine, and its parse
// half alone 137 on the same fixtures.

/// The longest input the parse targets take (.ci/run passes the same -max_len). The parsers'
/// cost grows with the input, most of which is audio data they only delimit: at 32 KiB
/// FuzzSync ran about 500 inputs per CPU-second, at 8 KiB about 1,100 (FuzzFLAC at 16 KiB
/// 840). 8 KiB holds many frames of the framed formats and of FLAC (five FLAC fixtures of
/// sixteen pad their metadata to 8 KiB: those seed the metadata parsers only) and a WAVE,
/// AIFF or CAF header; Ogg (Vorbis's setup header, a chain's second link) and MP4 (a moov
/// after a small mdat) need 16 KiB to reach past their headers.
public enum InputLimit {
    public static let framed = 8 << 10
    public static let chunked = 8 << 10
    public static let flac = 8 << 10
    public static let mp4 = 16 << 10
    public static let ogg = 16 << 10
    /// Matroska's header elements (EBML header, SeekHead, Info, Tracks with a Vorbis or Opus
    /// CodecPrivate) take a few KB before the first Cluster.
    public static let matroska = 16 << 10
    /// MPEG-TS: tables, then PES packets spread over 188-byte packets; 16 KiB holds some 80
    /// of them, a few dozen audio frames.
    public static let mpegTS = 16 << 10
    /// FuzzParsers', after its first byte.
    public static let anyType = 8 << 10
    /// FuzzDecoders': its ALAC seeds hold four packets of up to 4096 24-bit stereo frames.
    public static let decoders = 48 << 10
    /// FuzzStreaming's: ICY blocks, playlists and HTTP heads are short.
    public static let streaming = 4 << 10
    /// FuzzHLS's: a master playlist, or a media playlist of a few dozen segments.
    public static let hls = 8 << 10
    /// The decode targets': a few dozen packets of any codec.
    public static let decode = 16 << 10
}

/// One input through both paths of the parsers: pushed to an AudioFileStream in chunks of
/// `chunk` bytes (with a byte-range fetcher and the size over the same bytes when
/// `fetcher` is set, as an HTTP stream has), seeking by packet and by frame and reading on
/// from there; then opened with AudioFile, read and sought. Checks that every packet
/// description lies in the bytes handed over.
public func fuzzParser(_ input: [UInt8], hint: AudioFileTypeID?, chunk: Int, fetcher: Bool) {
    let stream = AudioFileStream(fileTypeHint: hint, propertyListener: { s, id, _ in
        _ = try? s.property(id)
    }, packets: { bytes, packets, data, descriptions in
        precondition(bytes == data.count)
        if let descriptions {
            precondition(descriptions.count == packets)
            for d in descriptions { precondition(d.startOffset >= 0 && d.startOffset + Int64(d.dataByteSize) <= Int64(bytes)) }
        }
    })
    if fetcher {
        stream.byteRangeFetcher = { offset, count throws(AudioError) in
            guard offset >= 0, offset <= Int64(input.count), count >= 0 else { throw AudioError(.endOfFile, "out of range") }
            return Array(input[Int(offset)..<Int(min(Int64(input.count), offset + Int64(count)))])
        }
        stream.sourceSize = Int64(input.count)
    }
    var i = 0
    do {
        while i < input.count {
            let n = min(max(1, chunk), input.count - i)
            try stream.parse(input[i..<i + n])
            i += n
        }
        try stream.parse(nil)
        if stream.isReadyToProducePackets {
            if let count = try? stream.audioDataPacketCount, count > 0 { _ = try? stream.seek(toPacket: count / 2) }
            _ = try? stream.seek(toPacket: 3)
            if let (offset, _) = try? stream.seek(toFrame: 4096), let base = try? stream.dataOffset,
               base + offset >= 0, base + offset < Int64(input.count)
            {
                // Read on from there, as a player would after the seek.
                try stream.parse(input[Int(base + offset)...], flags: .discontinuity)
                try stream.parse(nil)
            }
            for id in AudioFilePropertyID.streamProperties { _ = try? stream.property(id) }
        }
    } catch {}

    if let file = try? AudioFile(source: MemorySource(input), fileTypeHint: hint),
       let p = try? file.properties, let total = p.audioDataPacketCount, total > 0
    {
        _ = try? file.readPacketData(startingAt: 0, count: 64)
        _ = try? file.readPacketData(startingAt: total - 1, count: 64)
        _ = try? file.readBytes(startingAt: 0, count: 100)
        _ = try? file.property(.estimatedDuration)
        _ = try? file.packet(forFrame: 1000)
        _ = try? file.byte(forPacket: total / 2)
        _ = try? file.packet(forByte: Int64(input.count / 2))
        _ = try? file.previousIndependentPacket(total / 2)
        _ = try? file.nextIndependentPacket(total / 2)
    }
}

/// What a player does with a file or a stream: decodes it into a client format. `selector`
/// picks the path and the format. Its bit 2 picks the path: the file opened with AudioFile
/// and read through ExtAudioFile (as `tonearm convert` and AudioPlayer do), with a seek; or
/// the bytes pushed to an AudioFileStream in chunks and its packets converted by an
/// AudioConverter made (again) whenever the stream's data format or cookie changes (as
/// StreamDecoder does with internet radio). Its bits 0-1 pick the client format: the
/// file's own or Float32 at the file's rate and channels, Float32 mono or Int16 stereo at
/// the file's rate (the decoder and the channel mixer), or a resampled format at a resampler
/// quality from bits 3-9: Float32 mono at 16 kHz, or (bit 10) Int16 at 4/3 of the file's
/// rate at 'bats', which runs the two-stage resampler. One input in four resamples, whose
/// filter design costs more than decoding a short input. Checks that the bytes out are whole frames.
public func fuzzDecode(_ input: [UInt8], hint: AudioFileTypeID?, selector: Int) {
    if selector & 4 == 0 {
        decodeFile(input, hint: hint, selector: selector)
    } else {
        decodeStream(input, hint: hint, selector: selector)
    }
}

/// The client format `selector` picks for a file of `format` (nil: the file's own).
private func clientFormat(_ format: StreamDescription, selector: Int) -> StreamDescription? {
    let rate = format.sampleRate
    switch selector & 3 {
    case 1: return .pcm(sampleRate: rate, channels: 1, bits: 32, isFloat: true)
    case 2: return .pcm(sampleRate: rate, channels: 2, bits: 16)
    // Bit 10: up by 4/3 (the two-stage resampler, 'bats' or 'norm') instead of down to 16 kHz.
    case 3 where selector & 0x400 != 0:
        return .pcm(sampleRate: rate * 4 / 3, channels: format.channelsPerFrame, bits: 16)
    // Bit 12: down by 3/4 ('norm''s two stages down).
    case 3 where selector & 0x1000 != 0:
        return .pcm(sampleRate: rate * 3 / 4, channels: format.channelsPerFrame, bits: 16)
    case 3: return .pcm(sampleRate: 16000, channels: 1, bits: 32, isFloat: true)
    default: return nil
    }
}

/// 'bats' with the 4/3 client rate unless bit 11 is set (Double and Float two stages),
/// 'norm' otherwise.
private func complexity(_ selector: Int) -> SampleRateConverterComplexity {
    selector & 0xC03 == 0x403 ? .mastering : .normal
}

private func decodeFile(_ input: [UInt8], hint: AudioFileTypeID?, selector: Int) {
    guard let file = try? AudioFile(source: MemorySource(input), fileTypeHint: hint),
          let ext = try? ExtAudioFile(reading: file)
    else { return }
    ext.sampleRateConverterQuality = (selector >> 3) & 0x7F
    ext.sampleRateConverterComplexity = complexity(selector)
    if let client = clientFormat(ext.fileDataFormat, selector: selector) { _ = try? ext.setClientDataFormat(client) }
    let bytesPerFrame = Int(ext.clientDataFormat.bytesPerFrame)
    var out: [UInt8] = []
    if let n = try? ext.read(frames: 5000, into: &out) { precondition(out.count == n * bytesPerFrame) }
    if (try? ext.seek(toFrame: Int64(selector % 50_000))) != nil {
        out.removeAll(keepingCapacity: true)
        if let n = try? ext.read(frames: 3000, into: &out) { precondition(out.count == n * bytesPerFrame) }
    }
}

private func decodeStream(_ input: [UInt8], hint: AudioFileTypeID?, selector: Int) {
    var converter: AudioConverter?
    // The first packets make the first converter; a new format within the stream (a chain's
    // next link, a change of MPEG mode) makes the next.
    var formatChanged = true
    var out: [UInt8] = []
    var decoded = 0
    // Weak: the stream holds the closure that reads it (LeakSanitizer would report a cycle).
    weak var current: AudioFileStream?
    func checkOutput(_ c: AudioConverter) {
        let bytesPerFrame = Int(c.outputFormat.bytesPerFrame)
        precondition(bytesPerFrame > 0 && out.count % bytesPerFrame == 0, "a partial frame out")
        out.removeAll(keepingCapacity: true)
    }
    let stream = AudioFileStream(fileTypeHint: hint, propertyListener: { s, id, _ in
        if s.isReadyToProducePackets && (id == .dataFormat || id == .magicCookieData) { formatChanged = true }
    }, packets: { _, count, data, descriptions in
        if formatChanged {
            formatChanged = false
            converter = nil
            guard let p = current?.properties, let format = p.dataFormat else { return }
            let client = clientFormat(format, selector: selector)
                ?? .pcm(sampleRate: format.sampleRate, channels: format.channelsPerFrame, bits: 32, isFloat: true)
            guard let c = try? AudioConverter(from: format, to: client, magicCookie: p.magicCookie) else { return }
            c.sampleRateConverterQuality = (selector >> 3) & 0x7F
            c.sampleRateConverterComplexity = complexity(selector)
            c.packetTableInfo = p.packetTableInfo
            converter = c
        }
        // About as many frames as the file path decodes; the rest is only parsed (a whole
        // 16 KiB MP3 is five times as many frames).
        guard let c = converter, decoded < 8192 else { return }
        if (try? c.convert(packets: data, count: count, descriptions: descriptions, into: &out)) == nil { converter = nil }
        decoded += out.count / max(1, Int(c.outputFormat.bytesPerFrame))
        checkOutput(c)
    })
    current = stream
    let chunk = 1 + (selector >> 3) % 509
    var i = 0
    while i < input.count {
        // As StreamDecoder does, a chunk the parser refuses is reported and the next one parsed.
        let n = min(chunk, input.count - i)
        _ = try? stream.parse(input[i..<i + n])
        i += n
    }
    guard (try? stream.parse(nil)) != nil, let c = converter else { return }
    _ = try? c.finish(into: &out)
    checkOutput(c)
}

/// A family's parse target: the seeds are that family's files as they are, so the input's
/// length picks the push chunk size and whether the stream has a byte-range fetcher. One
/// input in three is pushed in chunks of 1 to 97 bytes, so that a boundary falls inside
/// every header; the others in chunks of 256 to 4351 bytes, as a network delivers them
/// (tiny chunks for all inputs made the push path half of the target's time).
public func fuzzFamilyParse(_ data: UnsafePointer<UInt8>?, _ size: Int, hint: AudioFileTypeID, limit: Int) -> Int32 {
    guard size <= limit else { return 0 }
    let chunk = size % 3 == 0 ? 1 + size / 3 % 97 : 256 + size % 4096
    fuzzParser(bytes(data, size), hint: hint, chunk: chunk, fetcher: size % 2 == 0)
    return 0
}

/// A family's decode target: the seeds are that family's files as they are, so the input's
/// length picks the path, the client format and the seek.
public func fuzzFamilyDecode(_ data: UnsafePointer<UInt8>?, _ size: Int, hint: AudioFileTypeID) -> Int32 {
    guard size <= InputLimit.decode else { return 0 }
    fuzzDecode(bytes(data, size), hint: hint, selector: size)
    return 0
}

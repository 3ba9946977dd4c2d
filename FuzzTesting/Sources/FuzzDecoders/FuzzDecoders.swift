import FuzzSupport
import Tonearm

// The built-in decoders on arbitrary bytes: PCM, G.711, IMA4, IMA and MS ADPCM, FLAC, ALAC,
// MPEG audio (see fuzzMPEG), AAC (see fuzzAAC), and any decoder by its format ID and cookie
// (see fuzzByFormatID: Opus, Vorbis, and with the FFmpeg trait FFmpeg's). The first bytes
// choose a codec and its stream description (channels 1–8, sizes, bits, flags, a magic
// cookie), the output type and layout and how packets are handed over; the rest is packet
// data.
//
// Besides "never crash", two properties are checked: a decode that succeeds wrote exactly
// the frames its packets hold and no more than the buffer has room for, and decoding into
// an interleaved and a planar buffer gives the same samples.

private struct Input {
    var bytes: [UInt8]
    var position = 0
    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }
    mutating func u16() -> Int { Int(byte()) | Int(byte()) << 8 }
    mutating func take(_ n: Int) -> [UInt8] {
        let end = min(bytes.count, position + n)
        defer { position = end }
        return Array(bytes[position..<end])
    }
    var rest: [UInt8] { position < bytes.count ? Array(bytes[position...]) : [] }
}

private func description(_ input: inout Input, codec: UInt8, channels: UInt32) -> StreamDescription {
    switch codec % 7 {
    case 6 where codec & 0x40 != 0:
        // ALAC: one frame a packet, described; the cookie comes from the input or is built
        // from the next bytes (a sane frame length and depth, the rest as given).
        return StreamDescription(sampleRate: 44100, formatID: .appleLossless, bytesPerPacket: 0, framesPerPacket: 0,
                                 bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
    case 6:
        // FLAC: one frame a packet, described; the cookie comes from the input (or none).
        return StreamDescription(sampleRate: 44100, formatID: .flac, bytesPerPacket: 0, framesPerPacket: 0, bytesPerFrame: 0,
                                 channelsPerFrame: channels, bitsPerChannel: UInt32(input.byte() % 29) + 4)
    case 0, 1:
        // Linear PCM: any bits and container, any flags; many are refused, which is fine.
        let bits = UInt32(input.byte() & 63) + 1
        let container = UInt32(input.byte() & 7) + 1
        let flags = AudioFormatFlags(rawValue: UInt32(input.byte()) & 0x7F)
        let perFrame = flags.contains(.isNonInterleaved) ? container : container * channels
        return StreamDescription(sampleRate: 44100, formatID: .linearPCM, formatFlags: flags, bytesPerPacket: perFrame,
                                 framesPerPacket: 1, bytesPerFrame: perFrame, channelsPerFrame: channels, bitsPerChannel: bits)
    case 2:
        let flags = AudioFormatFlags(rawValue: UInt32(input.byte() & 0x20))
        let perFrame = flags.contains(.isNonInterleaved) ? 1 : channels
        return StreamDescription(sampleRate: 8000, formatID: input.byte() & 1 == 0 ? .uLaw : .aLaw, formatFlags: flags,
                                 bytesPerPacket: perFrame, framesPerPacket: 1, bytesPerFrame: perFrame,
                                 channelsPerFrame: channels, bitsPerChannel: 8)
    case 3:
        let zero = input.byte() & 1 == 0
        return StreamDescription(sampleRate: 22050, formatID: .appleIMA4, bytesPerPacket: zero ? 0 : 34 * channels,
                                 framesPerPacket: zero ? 0 : 64, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
    default:
        let block = UInt32(input.u16() % 4097)
        let frames = UInt32(input.u16() % 8200)
        return StreamDescription(sampleRate: 22050, formatID: codec % 7 == 4 ? .dviIntelIMA : .microsoftADPCM,
                                 bytesPerPacket: block, framesPerPacket: frames, bytesPerFrame: 0, channelsPerFrame: channels,
                                 bitsPerChannel: input.byte() & 1 == 0 ? 4 : 0)
    }
}

/// Decodes `data` in calls of up to `perCall` packets and returns the interleaved bytes,
/// or nil when a call throws.
/// Decodes the packets with `decoder` into interleaved buffers and with its twin into
/// planar ones; the two outputs must agree.
private func decodeBothWays(_ decoder: AudioDecoder, _ twin: AudioDecoder, _ payload: [UInt8], packets: Int, bytesPerPacket: Int,
                            perCall: Int, descriptions: [PacketDescription]?, output: PCMBuffer.CommonFormat) -> Int32
{
    let a = decodeAll(decoder, payload, packets: packets, bytesPerPacket: bytesPerPacket, perCall: perCall,
                      descriptions: descriptions, output: output, interleaved: true)
    let b = decodeAll(twin, payload, packets: packets, bytesPerPacket: bytesPerPacket, perCall: perCall,
                      descriptions: descriptions, output: output, interleaved: false)
    precondition(a == b, "interleaved and planar output differ")
    return 0
}

private func decodeAll(_ decoder: AudioDecoder, _ data: [UInt8], packets: Int, bytesPerPacket: Int, perCall: Int,
                       descriptions: [PacketDescription]?, output: PCMBuffer.CommonFormat, interleaved: Bool) -> [UInt8]?
{
    let channels = Int(decoder.inputFormat.channelsPerFrame)
    let capacity = perCall * decoder.maximumFramesPerPacket
    let buffer = PCMBuffer(commonFormat: output, sampleRate: 8000, channels: channels, interleaved: interleaved,
                           frameCapacity: capacity)
    var out: [UInt8] = []
    var first = 0
    while first < packets {
        let count = min(perCall, packets - first)
        buffer.frameLength = 0
        do {
            if let descriptions {
                // Described packets index the whole data.
                let slice = Array(descriptions[first..<first + count])
                try data.withBytes { (raw) throws(AudioError) in
                    try decoder.decode(raw, packetCount: count, descriptions: slice, into: buffer)
                }
            } else {
                let start = min(first * bytesPerPacket, data.count)
                let end = min((first + count) * bytesPerPacket, data.count)
                try Array(data[start..<end]).withBytes { (raw) throws(AudioError) in
                    try decoder.decode(raw, packetCount: count, descriptions: nil, into: buffer)
                }
            }
        } catch {
            precondition(buffer.frameLength == 0, "a failed decode wrote frames")
            return nil
        }
        precondition(buffer.frameLength <= count * decoder.maximumFramesPerPacket, "more frames than maximumFramesPerPacket allows")
        out += buffer.interleavedBytes()
        first += count
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size <= InputLimit.decoders else { return 0 }
    var input = Input(bytes: bytes(data, size))
    let codec = input.byte()
    let mode = input.byte()
    let channels = UInt32(mode & 7) + 1
    let output: PCMBuffer.CommonFormat = [.int16, .float32, .int32][Int(mode >> 3) % 3]
    let useDescriptions = mode & 0x40 != 0
    let perCall = Int(input.byte() & 31) + 1
    if codec % 7 == 6 && codec & 0xC0 == 0x80 {
        return fuzzMPEG(input.rest, mode: mode, perCall: perCall, output: output)
    }
    if codec % 7 == 5 && codec & 0xC0 == 0xC0 {
        return fuzzAAC(input.rest, mode: mode, perCall: perCall, output: output)
    }
    if codec % 7 == 5 && codec & 0xC0 == 0x40 {
        return fuzzByFormatID(input.rest, channels: channels, perCall: perCall, output: output, ffmpeg: mode & 0x80 == 0)
    }
    let format = description(&input, codec: codec, channels: channels)
    let cookieLength = Int(input.byte())
    var cookie: [UInt8]? = cookieLength < 200 ? nil : input.take(cookieLength - 200)
    if format.formatID == .appleLossless && cookie == nil {
        // An ALACSpecificConfig: frame length 1...4096, depth 16/20/24/32, pb, mb, kb as given.
        let length = input.u16() % 4096 + 1
        let depth = UInt8([16, 20, 24, 32][Int(input.byte() & 3)])
        let pb = input.byte(), mb = input.byte(), kb = input.byte()
        cookie = [0, 0, UInt8(length >> 8), UInt8(length & 0xFF), 0, depth, pb, mb, kb, UInt8(channels), 0, 255]
            + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xAC, 0x44]
    }
    let payload = input.rest

    guard let decoder = try? CodecRegistry.makeDecoder(for: format, magicCookie: cookie, output: output),
          let twin = try? CodecRegistry.makeDecoder(for: format, magicCookie: cookie, output: output)
    else { return 0 }
    let f = decoder.inputFormat
    precondition(decoder.maximumFramesPerPacket > 0 && decoder.maximumFramesPerPacket <= 1 << 24)
    // Keep the buffers small: libFuzzer's inputs are short anyway.
    guard perCall * decoder.maximumFramesPerPacket * Int(channels) <= 1 << 22 else { return 0 }

    var bytesPerPacket = Int(f.bytesPerPacket)
    if f.formatID == .linearPCM || f.formatID == .uLaw || f.formatID == .aLaw {
        if !f.isInterleaved { bytesPerPacket *= Int(channels) }  // a frame across the planes
    }
    if f.formatID == .appleLossless {
        // Frames of varying size: a count (at most 16), that many 16-bit sizes, then the
        // frames (the .ci/run seeds are real ALAC packets in this form).
        var d: [PacketDescription] = []
        var sizes = payload.makeIterator()
        let count = Int(sizes.next() ?? 0) % 16 + 1
        var offset = 1 + 2 * count
        let most = max(1, min(16, (1 << 22) / (decoder.maximumFramesPerPacket * Int(channels))))
        for _ in 0..<min(count, most) {
            let n = Int(sizes.next() ?? 0) | Int(sizes.next() ?? 0) << 8
            guard offset < payload.count else { break }
            let size = min(n, payload.count - offset)
            d.append(PacketDescription(startOffset: Int64(offset), dataByteSize: UInt32(size)))
            offset += size
        }
        guard !d.isEmpty else { return 0 }
        let calls = min(d.count, perCall)
        return decodeBothWays(decoder, twin, payload, packets: d.count, bytesPerPacket: 0, perCall: calls,
                              descriptions: d, output: output)
    }
    if f.formatID == .flac {
        // Frames of varying size: take a size from the first two bytes, at most 64 frames.
        var d: [PacketDescription] = []
        var offset = 0
        var sizes = cookie?.makeIterator()
        let most = max(1, min(64, (1 << 22) / (decoder.maximumFramesPerPacket * Int(channels))))
        while offset < payload.count && d.count < most {
            let n = min(payload.count - offset, 16 + Int(sizes?.next() ?? 255) * 8)
            d.append(PacketDescription(startOffset: Int64(offset), dataByteSize: UInt32(n)))
            offset += n
        }
        guard !d.isEmpty else { return 0 }
        return decodeBothWays(decoder, twin, payload, packets: d.count, bytesPerPacket: 0, perCall: d.count,
                              descriptions: d, output: output)
    }
    guard bytesPerPacket > 0 else { return 0 }
    var packets = (payload.count + bytesPerPacket - 1) / bytesPerPacket
    if mode & 0x80 != 0 { packets += 1 }  // one packet too many now and then

    var descriptions: [PacketDescription]?
    if useDescriptions {
        // Mostly sane descriptions with the odd one out of range or too short.
        var d: [PacketDescription] = []
        var offset = 0
        var noise = payload.makeIterator()
        for _ in 0..<packets {
            let n = noise.next() ?? 0
            var size = bytesPerPacket
            var start = offset
            if n < 8 { size = Int(n) }
            if n > 250 { start = payload.count - Int(n & 3) }
            d.append(PacketDescription(startOffset: Int64(start), dataByteSize: UInt32(size)))
            offset += bytesPerPacket
        }
        descriptions = d
    }
    // Non-interleaved PCM is decoded in one call: its planes span the whole data.
    let calls = f.isInterleaved || !(f.formatID == .linearPCM || f.formatID == .uLaw || f.formatID == .aLaw) ? perCall : packets
    guard calls > 0 else { return 0 }
    return decodeBothWays(decoder, twin, payload, packets: packets, bytesPerPacket: bytesPerPacket, perCall: calls,
                          descriptions: descriptions, output: output)
}

/// Packets in ALAC's form: a count (at most 16), that many 16-bit sizes, then the packets;
/// sizes past the data are cut to it.
private func describedPackets(_ data: [UInt8]) -> [PacketDescription] {
    var sizes = data.makeIterator()
    let count = Int(sizes.next() ?? 0) % 16 + 1
    var offset = 1 + 2 * count
    var d: [PacketDescription] = []
    for _ in 0..<count {
        let n = Int(sizes.next() ?? 0) | Int(sizes.next() ?? 0) << 8
        guard offset <= data.count else { break }
        let size = min(n, data.count - offset)
        d.append(PacketDescription(startOffset: Int64(offset), dataByteSize: UInt32(size)))
        offset += size
    }
    return d
}

/// MPEG audio, Layers I, II and III (codec byte 0x84: `codec % 7 == 6`, bit 7 set, bit 6
/// clear): the rest is a stream of frames as the MPEG parser hands them over, one whole
/// frame (header included) a packet. The description comes from the first frame header, as
/// the container gives it; with bit 7 of the mode the channel count is the other one, so
/// frames disagree with it. The data is cut at every valid header by its frame length;
/// bytes that hold no header become a junk packet of 1–256 bytes. At most 16 packets: more
/// than Layer III's bit reservoir reaches back over, and with 64 the synthesis of concealed
/// junk packets, twice, held the target at 75 inputs per CPU-second.
private func fuzzMPEG(_ payload: [UInt8], mode: UInt8, perCall: Int, output: PCMBuffer.CommonFormat) -> Int32 {
    func header(at i: Int) -> MPEGAudioHeader? {
        guard i + 4 <= payload.count else { return nil }
        let word = UInt32(payload[i]) << 24 | UInt32(payload[i + 1]) << 16 | UInt32(payload[i + 2]) << 8 | UInt32(payload[i + 3])
        guard let h = MPEGAudioHeader(word), h.frameLength >= h.headerLength else { return nil }
        return h
    }
    guard let first = (0..<min(payload.count, 64)).lazy.compactMap(header(at:)).first else { return 0 }
    var channels = UInt32(first.channels)
    if mode & 0x80 != 0 { channels = 3 - channels }
    let format = StreamDescription(sampleRate: Double(first.sampleRate), formatID: first.formatID, bytesPerPacket: 0,
                                   framesPerPacket: UInt32(first.samplesPerFrame), bytesPerFrame: 0,
                                   channelsPerFrame: channels, bitsPerChannel: 0)
    guard let decoder = try? CodecRegistry.makeDecoder(for: format, magicCookie: nil, output: output),
          let twin = try? CodecRegistry.makeDecoder(for: format, magicCookie: nil, output: output)
    else { return 0 }
    precondition(decoder.maximumFramesPerPacket > 0 && decoder.maximumFramesPerPacket <= 1 << 16)
    var d: [PacketDescription] = []
    var offset = 0
    while offset < payload.count && d.count < 16 {
        let n = header(at: offset)?.frameLength ?? Int(payload[offset]) + 1
        let size = min(n, payload.count - offset)
        d.append(PacketDescription(startOffset: Int64(offset), dataByteSize: UInt32(size)))
        offset += size
    }
    let calls = min(d.count, perCall)
    return decodeBothWays(decoder, twin, payload, packets: d.count, bytesPerPacket: 0, perCall: calls,
                          descriptions: d, output: output)
}

/// AAC (codec byte 0xC2: `codec % 7 == 5`, bits 6 and 7 set): a cookie length (0–63) and
/// the AudioSpecificConfig, then the packets in ALAC's form: a count (at most 16), that many
/// 16-bit sizes, then the packets (raw data blocks or whole LOAS frames). The stream
/// description comes from the cookie, as a container gives it. Bits 6 and 7 of the mode
/// pick the format asked for: 'aac ', 'aach' (SBR), 'aacp' (SBR and PS), or the one
/// ``DecodedFormatProbe`` finds in the first packets (HE-AAC's implicit signalling).
private func fuzzAAC(_ payload: [UInt8], mode: UInt8, perCall: Int, output: PCMBuffer.CommonFormat) -> Int32 {
    var input = Input(bytes: payload)
    let cookie = input.take(Int(input.byte() & 63))
    let data = input.rest
    let kind = Int(mode >> 6)
    let format = StreamDescription(sampleRate: 44100, formatID: [.mpeg4AAC, .mpeg4AAC_HE, .mpeg4AAC_HE_V2, .mpeg4AAC][kind],
                                   bytesPerPacket: 0, framesPerPacket: 1024, bytesPerFrame: 0, channelsPerFrame: 2,
                                   bitsPerChannel: 0)
    guard let probe = try? CodecRegistry.makeDecoder(for: format, magicCookie: cookie, output: output) else { return 0 }
    // The container gives the cookie's rate and channels.
    var f = probe.inputFormat
    let d = describedPackets(data)
    guard !d.isEmpty else { return 0 }
    if kind == 3, let formatProbe = DecodedFormatProbe(format: f, magicCookie: cookie) {
        data.withUnsafeBytes { formatProbe.examine($0, descriptions: d) }
        f = formatProbe.format
    }
    guard f.channelsPerFrame <= 16,
          let decoder = try? CodecRegistry.makeDecoder(for: f, magicCookie: cookie, output: output),
          let twin = try? CodecRegistry.makeDecoder(for: f, magicCookie: cookie, output: output)
    else { return 0 }
    precondition(decoder.maximumFramesPerPacket == Int(f.framesPerPacket))
    precondition(decoder.maximumFramesPerPacket == 1024 || decoder.maximumFramesPerPacket == 2048)
    return decodeBothWays(decoder, twin, data, packets: d.count, bytesPerPacket: 0, perCall: min(d.count, perCall),
                          descriptions: d, output: output)
}

/// Any decoder by its format ID (codec byte 0x44: `codec % 7 == 5`, bit 6 set, bit 7 clear):
/// the stream description as a container gives it (a format ID; the sample rate; bytes and
/// frames per packet; channels from the mode), the magic cookie (a 16-bit length, at most
/// 4 KB), then the packets in ALAC's form (a count of at most 16, that many 16-bit sizes, the
/// packets). It reaches the decoders that have no form of their own (Vorbis, Opus) through
/// the cookies their containers give. With the FFmpeg trait (FuzzDecoders-FFmpeg) the
/// decoders come from the registry under the `.ffmpeg` preference unless bit 7 of the mode
/// is set, so the cookie goes through the same mapping to FFmpeg's extradata as a file's, and
/// any of FFmpeg's codecs can be named (by Tonearm's name or 'FF' and its number). Each
/// decoder is drained at the end. `--write-seeds` writes inputs in this form from real files
/// (see ``writeSeeds(_:)``).
private func fuzzByFormatID(_ payload: [UInt8], channels: UInt32, perCall: Int, output: PCMBuffer.CommonFormat,
                            ffmpeg: Bool) -> Int32
{
    var input = Input(bytes: payload)
    let id = input.take(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    let rate = Double(input.u16() | Int(input.byte()) << 16).clamped(1000, 384_000)
    let bytesPerPacket = UInt32(input.u16()), framesPerPacket = UInt32(input.u16())
    let cookieLength = input.u16()
    let cookie = cookieLength == 0 ? nil : input.take(min(cookieLength, 4096))
    let data = input.rest
    let format = StreamDescription(sampleRate: rate, formatID: AudioFormatID(rawValue: id), bytesPerPacket: bytesPerPacket,
                                   framesPerPacket: framesPerPacket, bytesPerFrame: 0, channelsPerFrame: channels,
                                   bitsPerChannel: 0)
    #if FFmpeg
    CodecRegistry.preference = ffmpeg ? .ffmpeg : .automatic
    defer { CodecRegistry.preference = .automatic }
    #endif
    guard let decoder = try? CodecRegistry.makeDecoder(for: format, magicCookie: cookie, output: output),
          let twin = try? CodecRegistry.makeDecoder(for: format, magicCookie: cookie, output: output)
    else { return 0 }
    let perPacket = decoder.maximumFramesPerPacket * Int(channels)
    precondition(decoder.maximumFramesPerPacket > 0 && perPacket <= 1 << 24)
    let d = describedPackets(data)
    // Keep the buffers under 4 M samples: fewer packets a call for the codecs with long ones.
    let calls = min(d.count, perCall, (1 << 22) / perPacket)
    guard !d.isEmpty, calls > 0 else { return 0 }
    let a = decodeAll(decoder, data, packets: d.count, bytesPerPacket: 0, perCall: calls, descriptions: d, output: output,
                      interleaved: true)
    let b = decodeAll(twin, data, packets: d.count, bytesPerPacket: 0, perCall: calls, descriptions: d, output: output,
                      interleaved: false)
    precondition(a == b, "interleaved and planar output differ")
    guard a != nil else { return 0 }
    // What the decoders held back, the same both ways.
    let tails = [(decoder, true), (twin, false)].map { decoder, interleaved -> [UInt8]? in
        let buffer = PCMBuffer(commonFormat: output, sampleRate: rate, channels: Int(channels), interleaved: interleaved,
                               frameCapacity: decoder.maximumFramesPerPacket)
        guard (try? decoder.drain(into: buffer)) != nil else { return nil }
        return buffer.interleavedBytes()
    }
    precondition(tails[0] == tails[1], "interleaved and planar drains differ")
    return 0
}

private extension Double {
    func clamped(_ low: Double, _ high: Double) -> Double { Swift.min(Swift.max(self, low), high) }
}

/// Writes seeds in ``fuzzByFormatID(_:channels:perCall:output:ffmpeg:)``'s form: for each
/// file Tonearm opens, an input with its format, its cookie and its first packets (up to 16,
/// within 40 KB, or the start of a longer first one). Arguments: the corpus folder, then the
/// files.
private func writeSeeds(_ arguments: [String]) -> Int32 {
    guard let folder = arguments.first else { return 2 }
    for (n, path) in arguments.dropFirst().enumerated() {
        guard let file = try? AudioFile(path: path), let f = try? file.dataFormat,
              (1...8).contains(f.channelsPerFrame) else { continue }
        let cookie = (try? file.magicCookie) ?? nil
        guard (cookie?.count ?? 0) <= 4096, let (data, descriptions) = try? file.readPacketData(startingAt: 0, count: 16) else { continue }
        var packets: [[UInt8]] = []
        var total = 0
        if let descriptions {
            for p in descriptions where total + Int(p.dataByteSize) <= 40_000 {
                packets.append(Array(data[Int(p.startOffset)..<Int(p.startOffset) + Int(p.dataByteSize)]))
                total += Int(p.dataByteSize)
            }
            if packets.isEmpty, let p = descriptions.first {
                // A packet longer than an input (TTA's second of audio): its start.
                packets.append(Array(data[Int(p.startOffset)..<Int(p.startOffset) + min(Int(p.dataByteSize), 40_000)]))
            }
        } else if f.bytesPerPacket > 0 {
            var at = 0
            while at + Int(f.bytesPerPacket) <= data.count && total + Int(f.bytesPerPacket) <= 40_000 {
                packets.append(Array(data[at..<at + Int(f.bytesPerPacket)]))
                at += Int(f.bytesPerPacket)
                total += Int(f.bytesPerPacket)
            }
        }
        guard !packets.isEmpty else { continue }
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        let rate = Int(f.sampleRate)
        // Float32 output (mode bits 3-4 = 1), two packets a call.
        var seed: [UInt8] = [0x44, UInt8(f.channelsPerFrame - 1) | 0x08, 1]
        let id = f.formatID.rawValue
        seed += [UInt8(id >> 24), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF), UInt8(id & 0xFF)]
        seed += u16(rate & 0xFFFF) + [UInt8(rate >> 16 & 0xFF)]
        seed += u16(Int(min(f.bytesPerPacket, 0xFFFF))) + u16(Int(min(f.framesPerPacket, 0xFFFF)))
        seed += u16(cookie?.count ?? 0) + (cookie ?? [])
        seed += [UInt8(packets.count - 1)] + packets.flatMap { u16($0.count) } + packets.flatMap { $0 }
        let name = "format-\(n)-" + (path.split(separator: "/").last.map(String.init) ?? "file")
        do { try POSIXFile(path: folder + "/" + name, mode: .create).write(seed, at: 0) } catch { print(error); return 1 }
    }
    return 0
}

@_cdecl("FuzzDecoders_main")
public func fuzzDecodersMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "--write-seeds" {
        return writeSeeds(Array(CommandLine.arguments.dropFirst(2)))
    }
    return runFuzzer(fuzzDecoders)
}

import TonearmConvert
import TonearmCore
#if canImport(Glibc)
import Glibc
#endif

// The read paths measured: ExtAudioFile reads in steady state, counted on the reading thread
// itself. Each opens a file, reads 160 blocks of 128 client frames to warm up (first-call
// lazy set-up, buffers growing to their size, over several of the converter's refills), then
// counts up to 200 more blocks, stopping well before the end of the file (the end flushes the
// decoder and the resampler once, which is not the steady state). RenderAllocationTests
// asserts zero allocations and frees for each.

/// How many blocks a read scenario counted; the harness reports it as "reads".
nonisolated(unsafe) var measuredReads = 0

/// The repository's test fixtures, found from this file's place.
let fixtures: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(2)    // RenderAllocCheck/ReadScenarios.swift
    return parts.joined(separator: "/") + "/Fixtures"
}()

var readScenarios: [Scenario] { [
    Scenario("extaudiofile-read-wav-to-float32-planar", kind: .reads) { _ in
        // The default client format of a 16-bit WAV: decode to Float32, de-interleave.
        let path = try scratchWAV("read-wav")
        defer { unlink(path) }
        try measureReads(path, client: .float32(sampleRate: 44100, channels: 2), into: .pcmBuffer)
    },
    Scenario("extaudiofile-read-wav-resampled-48k", kind: .reads) { _ in
        // The resampler and the Float32 → Int16 encoder writing into the caller's buffer list.
        let path = try scratchWAV("read-wav-48k")
        defer { unlink(path) }
        try measureReads(path, client: .int16(sampleRate: 48000, channels: 2), into: .bufferList)
    },
    Scenario("extaudiofile-read-flac-to-int16", kind: .reads) { _ in
        let path = try scratchWAV("read-flac", type: .flac)
        defer { unlink(path) }
        try measureReads(path, client: .int16(sampleRate: 44100, channels: 2), into: .pcmBuffer)
    },
    Scenario("extaudiofile-read-mp3-to-float32-planar", kind: .reads) { _ in
        try measureReads(fixtures + "/mp3dec/lame_cbr320_stereo.mp3", client: .float32(sampleRate: 44100, channels: 2),
                         into: .bufferList)
    },
    Scenario("extaudiofile-read-aac-to-float32-planar", kind: .reads) { _ in
        try measureReads(fixtures + "/mp4/aac_faststart.m4a", client: .float32(sampleRate: 44100, channels: 2), into: .pcmBuffer)
    },
    Scenario("extaudiofile-read-fragmented-aac-to-int16", kind: .reads) { _ in
        try measureReads(fixtures + "/mp4/aac_frag.mp4", client: .int16(sampleRate: 44100, channels: 2), into: .bufferList)
    },
    Scenario("extaudiofile-read-vorbis-to-int16", kind: .reads) { _ in
        try measureReads(fixtures + "/ogg/vorbis_ffmpeg_mono.ogg", client: .int16(sampleRate: 22050, channels: 1), into: .bufferList)
    },
    Scenario("extaudiofile-read-opus-to-float32", kind: .reads) { _ in
        try measureReads(fixtures + "/ogg/opus_ffmpeg_mono.opus", client: .float32(sampleRate: 48000, channels: 1), into: .pcmBuffer)
    },
    Scenario("extaudiofile-read-opus-stereo-to-int16", kind: .reads) { _ in
        // opusenc's stereo at its default rate: CELT, where the mono file above is SILK.
        try measureReads(fixtures + "/ogg/opus_opusenc_stereo.opus", client: .int16(sampleRate: 48000, channels: 2), into: .bufferList)
    },
    // The ALAC fixtures hold 6001 and 4501 frames, two packets of 4096: reads of 16 frames
    // reach the second packet's decode after the warm-up.
    Scenario("extaudiofile-read-alac-to-float32-planar", kind: .reads) { _ in
        try measureReads(fixtures + "/alac/alac_16_stereo.m4a", client: .float32(sampleRate: 22050, channels: 2), into: .pcmBuffer,
                         block: 16)
    },
    Scenario("extaudiofile-read-alac-24-to-int16", kind: .reads) { _ in
        try measureReads(fixtures + "/alac/alac_24_stereo.m4a", client: .int16(sampleRate: 22050, channels: 2), into: .bufferList,
                         block: 16)
    },
] }

enum ReadTarget { case pcmBuffer, bufferList }

/// Reads `path` in the client format in blocks of `block` frames, counting the heap calls of
/// the blocks after the warm-up.
func measureReads(_ path: String, client: StreamDescription, into target: ReadTarget, block: Int = 128) throws {
    let file = try ExtAudioFile(path: path)
    try file.setClientDataFormat(client)
    let warmUp = 160
    let blocks = min(200, Int(file.clientLengthFrames) / block - warmUp - 16)
    guard blocks >= 50 else { throw AudioError(.parameter, "\(path) is too short for a read scenario") }
    let channels = Int(client.channelsPerFrame), bytesPerSample = Int(client.bytesPerFrame) / (client.isInterleaved ? channels : 1)
    let buffer = PCMBuffer(commonFormat: PCMBuffer.commonFormat(of: client)!, sampleRate: client.sampleRate, channels: channels,
                           interleaved: client.isInterleaved, frameCapacity: block)
    // The caller's own memory for the buffer-list reads: one buffer per channel when planar.
    let lists = client.isInterleaved ? 1 : channels
    let bytesPerBuffer = block * bytesPerSample * (client.isInterleaved ? channels : 1)
    let memory = UnsafeMutableRawPointer.allocate(byteCount: lists * bytesPerBuffer, alignment: 16)
    let list = UnsafeMutablePointer<UnsafeMutableRawBufferPointer>.allocate(capacity: lists)
    defer { memory.deallocate(); list.deallocate() }
    for i in 0..<lists { list[i] = UnsafeMutableRawBufferPointer(start: memory + i * bytesPerBuffer, count: bytesPerBuffer) }
    func readBlock() throws(AudioError) -> Int {
        switch target {
        case .pcmBuffer:
            buffer.frameLength = 0
            return try file.read(into: buffer)
        case .bufferList:
            return try file.read(frames: block, into: AudioBufferList(list, count: lists))
        }
    }
    for _ in 0..<warmUp { guard try readBlock() == block else { throw AudioError(.endOfFile, "short read") } }
    AllocationCounter.resume()
    var short = false
    for _ in 0..<blocks where try readBlock() != block { short = true }
    AllocationCounter.pause()
    if short { throw AudioError(.endOfFile, "a measured read gave fewer than \(block) frames") }
    measuredReads = blocks
}

/// Writes 3 s of Int16 stereo sine at 44.1 kHz to a scratch file, for the caller to delete.
func scratchWAV(_ name: String, type: AudioFileTypeID = .wave) throws -> String {
    let path = "/tmp/RenderAllocCheck-\(getpid())-\(name)." + (type == .flac ? "flac" : "wav")
    let format = StreamDescription.int16(sampleRate: 44100, channels: 2)
    let frames = 3 * 44100
    let fileFormat = type == .flac
        ? StreamDescription(sampleRate: 44100, formatID: .flac, bytesPerPacket: 0, framesPerPacket: 0, bytesPerFrame: 0,
                            channelsPerFrame: 2, bitsPerChannel: 16)
        : format
    let file = try ExtAudioFile.create(path: path, type: type, format: fileFormat)
    try file.setClientDataFormat(format)
    let buffer = PCMBuffer(commonFormat: .int16, sampleRate: 44100, channels: 2, interleaved: true, frameCapacity: frames)
    buffer.withUnsafeMutableSamples(Int16.self) { fillInt16Sine($0.baseAddress!, frames: frames, channels: 2, Sine(sampleRate: 44100)) }
    buffer.frameLength = frames
    try file.write(buffer)
    try file.close()
    return path
}

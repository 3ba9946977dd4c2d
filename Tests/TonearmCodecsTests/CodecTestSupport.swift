import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore
import TonearmFormats
import TonearmTestSupport

// Test-only helpers of the codec tests: running ffmpeg, reading a file's packets through
// AudioFile, and decoding whole streams.

/// ffmpeg's path, or nil when it is not installed (oracle tests then skip).
let ffmpegPath: String? = {
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") { return "/usr/bin/ffmpeg" }
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let candidate = "\(dir)/ffmpeg"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}()

func requireFFmpeg() throws -> String {
    guard let ffmpegPath else { throw skipOrFail("ffmpeg is not installed: the oracle tests need /usr/bin/ffmpeg or ffmpeg on PATH") }
    return ffmpegPath
}

struct ToolFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs ffmpeg with `args` (after `-v error -nostdin`) and returns its stdout.
@discardableResult
func ffmpeg(_ args: [String]) throws -> [UInt8] {
    let tool = try requireFFmpeg()
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = ["-v", "error", "-nostdin", "-y"] + args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    // Read stderr on the side so that neither pipe fills up.
    nonisolated(unsafe) var errorBytes = Data()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errorBytes = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
        throw ToolFailure(description: "ffmpeg \(args.joined(separator: " ")) failed: \(String(decoding: errorBytes, as: UTF8.self))")
    }
    return [UInt8](data)
}

func temporaryDirectory() throws -> String { makeTemporaryDirectory() }
func readFile(_ path: String) throws -> [UInt8] { try readWholeFile(path) }
func writeFile(_ path: String, _ bytes: [UInt8]) throws { try writeWholeFile(path, bytes) }

// MARK: Little containers

/// What a decoder needs from a file: the description, the cookie and the audio bytes.
struct AudioPayload {
    var format: StreamDescription
    var cookie: [UInt8]?
    var data: [UInt8]
}

/// The format, cookie and every packet of a file, read through the library's own parsers
/// (AudioFile), so that the decoders are tested on what the containers really hand over.
func readPayload(_ path: String) throws -> AudioPayload {
    let file = try AudioFile(path: path)
    let p = try file.properties
    let n = Int(p.audioDataPacketCount ?? 0)
    let data = n > 0 ? try file.readPacketData(startingAt: 0, count: n).data : []
    return AudioPayload(format: p.dataFormat!, cookie: p.magicCookie, data: data)
}
func readWAV(_ path: String) throws -> AudioPayload { try readPayload(path) }
func readCAF(_ path: String) throws -> AudioPayload { try readPayload(path) }
func readAIFF(_ path: String) throws -> AudioPayload { try readPayload(path) }

func makeWAV(fmt: [UInt8], data: [UInt8]) -> [UInt8] {
    var out: [UInt8] = Array("RIFF".utf8)
    out += le32(4 + 8 + fmt.count + 8 + data.count + (data.count & 1))
    out += Array("WAVE".utf8) + Array("fmt ".utf8) + le32(fmt.count) + fmt
    out += Array("data".utf8) + le32(data.count) + data
    if data.count & 1 == 1 { out.append(0) }
    return out
}

func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
func le32(_ v: Int) -> [UInt8] { le16(v) + le16(v >> 16) }
func be16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v) }
func be64(_ v: UInt64) -> [UInt8] { be32(Int(v >> 32)) + be32(Int(v & 0xFFFF_FFFF)) }

/// A CAF file holding `data` described by `format` (no packet table: constant packets).
func makeCAF(format f: StreamDescription, data: [UInt8]) -> [UInt8] {
    var out: [UInt8] = Array("caff".utf8) + be16(1) + be16(0)
    out += Array("desc".utf8) + be64(32) + be64(f.sampleRate.bitPattern)
    out += be32(Int(f.formatID.rawValue)) + be32(Int(f.formatFlags.rawValue)) + be32(Int(f.bytesPerPacket))
    out += be32(Int(f.framesPerPacket)) + be32(Int(f.channelsPerFrame)) + be32(Int(f.bitsPerChannel))
    out += Array("data".utf8) + be64(UInt64(data.count + 4)) + be32(0) + data
    return out
}

typealias SplitMix64 = SeededGenerator

extension SeededGenerator {
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &self) } }
}

// MARK: Decoding whole streams

/// Decodes `data` in calls of `packetsPerCall` packets of `bytesPerPacket` bytes (the last
/// packet may be short) and returns the output as interleaved little-endian bytes, which
/// is what `ffmpeg -f s16le` (or f32le, s32le) writes.
func decodeStream(_ decoder: AudioDecoder, _ data: [UInt8], bytesPerPacket: Int, sampleFormat: PCMBuffer.CommonFormat,
                  interleaved: Bool = true, packetsPerCall: Int = 50, useDescriptions: Bool = false) throws -> [UInt8]
{
    let channels = Int(decoder.inputFormat.channelsPerFrame)
    let packetsPerCall = max(1, min(packetsPerCall, (data.count + bytesPerPacket - 1) / bytesPerPacket))
    let buffer = PCMBuffer(commonFormat: sampleFormat, sampleRate: decoder.inputFormat.sampleRate, channels: channels,
                           interleaved: interleaved, frameCapacity: packetsPerCall * decoder.maximumFramesPerPacket)
    var out: [UInt8] = []
    var offset = 0
    while offset < data.count {
        let chunk = Array(data[offset..<min(offset + packetsPerCall * bytesPerPacket, data.count)])
        let packets = (chunk.count + bytesPerPacket - 1) / bytesPerPacket
        var descriptions: [PacketDescription]?
        if useDescriptions {
            descriptions = (0..<packets).map { i in
                PacketDescription(startOffset: Int64(i * bytesPerPacket),
                                  dataByteSize: UInt32(min(bytesPerPacket, chunk.count - i * bytesPerPacket)))
            }
        }
        buffer.frameLength = 0
        try chunk.withBytes { (raw) throws(AudioError) in
            try decoder.decode(raw, packetCount: packets, descriptions: descriptions, into: buffer)
        }
        out += buffer.interleavedBytes()
        offset += chunk.count
    }
    return out
}

/// Decodes a file's packets as AudioFile hands them over (with their descriptions),
/// `perCall` packets a call, at most `maximumPackets`; returns the output as interleaved
/// little-endian bytes (unless `keepPCM` is off) and the frame count.
func decodePackets(of file: AudioFile, with decoder: AudioDecoder, as common: PCMBuffer.CommonFormat, interleaved: Bool = true,
                   perCall: Int, maximumPackets: Int = .max, keepPCM: Bool = true) throws -> (pcm: [UInt8], frames: Int)
{
    let p = try file.properties
    let total = min(Int(p.audioDataPacketCount ?? 0), maximumPackets)
    let buffer = PCMBuffer(commonFormat: common, sampleRate: decoder.inputFormat.sampleRate,
                           channels: Int(decoder.inputFormat.channelsPerFrame), interleaved: interleaved,
                           frameCapacity: perCall * decoder.maximumFramesPerPacket)
    var pcm: [UInt8] = []
    var frames = 0
    var first = 0
    while first < total {
        let count = min(perCall, total - first)
        let (data, descriptions) = try file.readPacketData(startingAt: Int64(first), count: count)
        buffer.frameLength = 0
        try data.withBytes { (raw) throws(AudioError) in
            try decoder.decode(raw, packetCount: count, descriptions: descriptions, into: buffer)
        }
        frames += buffer.frameLength
        if keepPCM { pcm += buffer.interleavedBytes() }
        first += count
    }
    return (pcm, frames)
}

/// Asserts two byte strings are equal, reporting the first difference rather than both.
func assertSameBytes(_ ours: [UInt8], _ reference: [UInt8], bytesPerSample: Int = 2, _ what: String,
                     file: StaticString = #filePath, line: UInt = #line)
{
    if ours == reference { return }
    let common = min(ours.count, reference.count)
    var first = common
    for i in 0..<common where ours[i] != reference[i] { first = i; break }
    let sample = first / bytesPerSample
    func around(_ b: [UInt8]) -> String {
        let s = sample * bytesPerSample
        return b[min(s, b.count)..<min(s + 4 * bytesPerSample, b.count)].map { String($0, radix: 16) }.joined(separator: " ")
    }
    XCTFail("\(what): \(ours.count) bytes vs ffmpeg's \(reference.count); first difference at sample \(sample): "
            + "ours [\(around(ours))] ffmpeg [\(around(reference))]", file: file, line: line)
}

extension PCMBuffer.CommonFormat {
    /// The ffmpeg output format that matches this sample type.
    var ffmpegFormat: String {
        switch self {
        case .int16: "s16le"
        case .int32: "s32le"
        case .float32: "f32le"
        }
    }
}

import Foundation
import XCTest
@testable import TonearmCodecs
import TonearmCore

// Test-only helpers of the codec tests: running ffmpeg, reading the audio data out of WAV,
// CAF and AIFC files without the library's parsers, and decoding whole streams.

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
    guard let ffmpegPath else { throw XCTSkip("ffmpeg is not installed: the oracle tests need /usr/bin/ffmpeg or ffmpeg on PATH") }
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

/// A fresh directory under /tmp for one test.
func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "tonearm-codecs-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func readFile(_ path: String) throws -> [UInt8] {
    guard let d = FileManager.default.contents(atPath: path) else { throw ToolFailure(description: "cannot read \(path)") }
    return [UInt8](d)
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
        throw ToolFailure(description: "cannot write \(path)")
    }
}

// MARK: Little containers

/// What a decoder needs from a file: the description, the cookie and the audio bytes.
struct AudioPayload {
    var format: StreamDescription
    var cookie: [UInt8]?
    var data: [UInt8]
}

private func u16le(_ b: [UInt8], _ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
private func u32le(_ b: [UInt8], _ o: Int) -> Int { u16le(b, o) | u16le(b, o + 2) << 16 }
private func u16be(_ b: [UInt8], _ o: Int) -> Int { Int(b[o]) << 8 | Int(b[o + 1]) }
private func u32be(_ b: [UInt8], _ o: Int) -> Int { u16be(b, o) << 16 | u16be(b, o + 2) }
private func u64be(_ b: [UInt8], _ o: Int) -> UInt64 { UInt64(u32be(b, o)) << 32 | UInt64(u32be(b, o + 4)) }
private func id(_ b: [UInt8], _ o: Int) -> String { String(decoding: b[o..<o + 4], as: UTF8.self) }

/// The `fmt ` and `data` chunks of a RIFF WAVE file, described as a container parser would.
func readWAV(_ path: String) throws -> AudioPayload {
    let b = try readFile(path)
    guard b.count >= 12, id(b, 0) == "RIFF", id(b, 8) == "WAVE" else { throw ToolFailure(description: "\(path) is not a WAV file") }
    var fmt: [UInt8]?, data: [UInt8]?
    var o = 12
    while o + 8 <= b.count {
        let size = u32le(b, o + 4)
        let end = min(o + 8 + size, b.count)
        if id(b, o) == "fmt " { fmt = Array(b[o + 8..<end]) }
        if id(b, o) == "data" { data = Array(b[o + 8..<end]) }
        o += 8 + size + (size & 1)
    }
    guard let fmt, let data, fmt.count >= 16 else { throw ToolFailure(description: "\(path) lacks fmt or data") }
    var tag = u16le(fmt, 0)
    let ch = UInt32(u16le(fmt, 2)), rate = Double(u32le(fmt, 4)), align = UInt32(u16le(fmt, 12))
    let bits = UInt32(u16le(fmt, 14))
    var valid = bits
    if tag == 0xFFFE, fmt.count >= 40 {
        if u16le(fmt, 18) > 0 { valid = UInt32(u16le(fmt, 18)) }
        tag = u16le(fmt, 24)
    }
    let container = align / ch
    switch tag {
    case 1:
        return AudioPayload(format: .pcm(sampleRate: rate, channels: ch, bits: valid, isSigned: bits > 8, bytesPerSample: container),
                            cookie: nil, data: data)
    case 3:
        return AudioPayload(format: .pcm(sampleRate: rate, channels: ch, bits: bits, isFloat: true), cookie: nil, data: data)
    case 6, 7:
        let f = StreamDescription(sampleRate: rate, formatID: tag == 7 ? .uLaw : .aLaw, bytesPerPacket: ch, framesPerPacket: 1,
                                  bytesPerFrame: ch, channelsPerFrame: ch, bitsPerChannel: 8)
        return AudioPayload(format: f, cookie: nil, data: data)
    case 0x11, 0x02:
        let spb = fmt.count >= 20 ? UInt32(u16le(fmt, 18)) : 0
        // Beyond stereo, MS ADPCM's nBlockAlign counts one channel's run (FFmpeg's riff reader
        // multiplies it by the channels); the decoder takes the whole block.
        let block = tag == 0x02 && ch > 2 ? align * ch : align
        let f = StreamDescription(sampleRate: rate, formatID: tag == 0x11 ? .dviIntelIMA : .microsoftADPCM, bytesPerPacket: block,
                                  framesPerPacket: spb, bytesPerFrame: 0, channelsPerFrame: ch, bitsPerChannel: 4)
        return AudioPayload(format: f, cookie: fmt, data: data)
    default:
        throw ToolFailure(description: "WAV format tag \(tag) in \(path)")
    }
}

/// The `desc` and `data` chunks of a CAF file.
func readCAF(_ path: String) throws -> AudioPayload {
    let b = try readFile(path)
    guard b.count >= 8, id(b, 0) == "caff" else { throw ToolFailure(description: "\(path) is not a CAF file") }
    var format: StreamDescription?, data: [UInt8]?
    var o = 8
    while o + 12 <= b.count {
        let size = Int(truncatingIfNeeded: u64be(b, o + 4))
        let body = o + 12
        let end = size < 0 ? b.count : min(body + size, b.count)
        switch id(b, o) {
        case "desc":
            format = StreamDescription(sampleRate: Double(bitPattern: u64be(b, body)),
                                       formatID: AudioFormatID(rawValue: UInt32(u32be(b, body + 8))),
                                       formatFlags: AudioFormatFlags(rawValue: UInt32(u32be(b, body + 12))),
                                       bytesPerPacket: UInt32(u32be(b, body + 16)), framesPerPacket: UInt32(u32be(b, body + 20)),
                                       bytesPerFrame: 0, channelsPerFrame: UInt32(u32be(b, body + 24)),
                                       bitsPerChannel: UInt32(u32be(b, body + 28)))
        case "data":
            data = Array(b[body + 4..<end])  // after the edit count
        default: break
        }
        if size < 0 { break }
        o = body + size
    }
    guard var format, let data else { throw ToolFailure(description: "\(path) lacks desc or data") }
    if format.formatID == .linearPCM {
        // CAF's LPCM flags are not the ASBD's: 1 is float, 2 is little-endian (CAF spec, desc chunk).
        let cafFlags = format.formatFlags.rawValue
        let bits = format.bitsPerChannel
        format = .pcm(sampleRate: format.sampleRate, channels: format.channelsPerFrame, bits: bits, isFloat: cafFlags & 1 != 0,
                      isBigEndian: cafFlags & 2 == 0, bytesPerSample: format.bytesPerPacket / format.channelsPerFrame)
    }
    return AudioPayload(format: format, cookie: nil, data: data)
}

/// The `COMM` and `SSND` chunks of an AIFF or AIFC file: big-endian PCM, or IMA4.
func readAIFF(_ path: String) throws -> AudioPayload {
    let b = try readFile(path)
    guard b.count >= 12, id(b, 0) == "FORM", id(b, 8) == "AIFF" || id(b, 8) == "AIFC" else {
        throw ToolFailure(description: "\(path) is not an AIFF file")
    }
    var comm: Int?, ssnd: [UInt8]?
    var o = 12
    while o + 8 <= b.count {
        let size = u32be(b, o + 4)
        let body = o + 8
        if id(b, o) == "COMM" { comm = body }
        if id(b, o) == "SSND" {
            let offset = u32be(b, body)
            ssnd = Array(b[min(body + 8 + offset, b.count)..<min(body + size, b.count)])
        }
        o = body + size + (size & 1)
    }
    guard let c = comm, let ssnd else { throw ToolFailure(description: "\(path) lacks COMM or SSND") }
    let ch = UInt32(u16be(b, c)), bits = UInt32(u16be(b, c + 6))
    // 80-bit extended sample rate: exponent, then a 64-bit mantissa with explicit integer bit.
    let exponent = u16be(b, c + 8) & 0x7FFF, mantissa = u64be(b, c + 10)
    let rate = Double(mantissa) * pow(2, Double(exponent - 16383 - 63))
    let compression = id(b, 8) == "AIFC" ? id(b, c + 18) : "NONE"
    switch compression {
    case "ima4":
        let f = StreamDescription(sampleRate: rate, formatID: .appleIMA4, bytesPerPacket: 34 * ch, framesPerPacket: 64,
                                  bytesPerFrame: 0, channelsPerFrame: ch, bitsPerChannel: 0)
        return AudioPayload(format: f, cookie: nil, data: ssnd)
    case "NONE", "twos":
        return AudioPayload(format: .pcm(sampleRate: rate, channels: ch, bits: bits, isBigEndian: true), cookie: nil, data: ssnd)
    case "sowt":
        return AudioPayload(format: .pcm(sampleRate: rate, channels: ch, bits: bits), cookie: nil, data: ssnd)
    case "fl32", "FL32":
        return AudioPayload(format: .pcm(sampleRate: rate, channels: ch, bits: 32, isFloat: true, isBigEndian: true), cookie: nil, data: ssnd)
    case "fl64", "FL64":
        return AudioPayload(format: .pcm(sampleRate: rate, channels: ch, bits: 64, isFloat: true, isBigEndian: true), cookie: nil, data: ssnd)
    case "ulaw", "alaw":
        let f = StreamDescription(sampleRate: rate, formatID: compression == "ulaw" ? .uLaw : .aLaw, bytesPerPacket: ch,
                                  framesPerPacket: 1, bytesPerFrame: ch, channelsPerFrame: ch, bitsPerChannel: 8)
        return AudioPayload(format: f, cookie: nil, data: ssnd)
    default:
        throw ToolFailure(description: "AIFC compression \(compression)")
    }
}

// MARK: WAV writing, for hand-made streams

/// A WAV file around a fmt chunk body and data.
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

/// A deterministic generator, so that a failing random test fails the same way again.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
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

import Foundation
import Tonearm

/// `tonearm-bench encode-flac IN OUT [LEVEL]`: encodes any PCM file Tonearm reads to a FLAC
/// file with the native encoder and writer, in this process, so that the encoder's
/// whole-process time can be set beside `flac -LEVEL -f`. Prints the output size.
func encodeFLACMain(_ arguments: [String]) -> Int32 {
    guard arguments.count >= 2 else {
        print("usage: tonearm-bench encode-flac IN OUT [LEVEL]")
        return 2
    }
    do {
        let level = arguments.count > 2 ? Int(arguments[2]) : nil
        let input = try AudioFile(path: arguments[0])
        let format = try input.dataFormat
        let decoder = try CodecRegistry.makeDecoder(for: format, magicCookie: try input.magicCookie, output: .int32)
        let channels = Int(format.channelsPerFrame)
        var target = StreamDescription(sampleRate: format.sampleRate, formatID: .flac, bytesPerPacket: 0, framesPerPacket: 0,
                                       bytesPerFrame: 0, channelsPerFrame: format.channelsPerFrame,
                                       bitsPerChannel: format.bitsPerChannel)
        if format.formatID == .flac, let bits = try input.properties.sourceBitDepth { target.bitsPerChannel = UInt32(bits) }
        let encoder = try CodecRegistry.makeEncoder(for: target, settings: EncoderSettings(level: level))
        let output = try AudioFile.create(path: arguments[1], type: .flac, format: encoder.outputFormat, flags: .eraseFile)
        try output.setProperty(.magicCookieData, .data(encoder.magicCookie))
        let total = try input.audioDataPacketCount
        let perRead = max(1, 65536 / max(1, decoder.maximumFramesPerPacket))
        let pcm = PCMBuffer(commonFormat: .int32, sampleRate: format.sampleRate, channels: channels, interleaved: true,
                            frameCapacity: perRead * decoder.maximumFramesPerPacket)
        var packets: [UInt8] = []
        var descriptions: [PacketDescription] = []
        var written: Int64 = 0
        func flush() throws(AudioError) {
            guard !descriptions.isEmpty else { return }
            try output.writePackets(packets, count: descriptions.count, descriptions: descriptions, startingAt: written)
            written += Int64(descriptions.count)
            packets.removeAll(keepingCapacity: true)
            descriptions.removeAll(keepingCapacity: true)
        }
        var at: Int64 = 0
        while at < total {
            let count = Int(min(Int64(perRead), total - at))
            let (data, packetDescriptions) = try input.readPacketData(startingAt: at, count: count)
            pcm.frameLength = 0
            try data.withBytes { (raw) throws(AudioError) in
                try decoder.decode(raw, packetCount: count, descriptions: packetDescriptions, into: pcm)
            }
            try encoder.encode(pcm, into: &packets, descriptions: &descriptions)
            try flush()
            at += Int64(count)
        }
        try encoder.finish(into: &packets, descriptions: &descriptions)
        try flush()
        try output.setProperty(.magicCookieData, .data(encoder.magicCookie))
        try output.close()
        let size = (try? FileManager.default.attributesOfItem(atPath: arguments[1])[.size] as? Int) ?? 0
        print(size)
        return 0
    } catch {
        print("tonearm-bench encode-flac: \(error)")
        return 1
    }
}

import XCTest
import TonearmCore
import TonearmConvert
import TonearmTestSupport

/// The channel stage of the converter: Apple's channel map, reorders between layouts, and
/// the standard mixes, the 5.1 downmix checked against ffmpeg's.
final class ChannelMixerTests: XCTestCase {
    /// Mixes interleaved Float32 frames through a mixer, planar output, and reads them back interleaved.
    func mix(_ mixer: ChannelMixer, _ frames: [[Float]]) throws -> [[Float]] {
        let input = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: mixer.inputChannels, interleaved: true,
                              frameCapacity: frames.count)
        input.withUnsafeMutableSamples(Float.self) { p in
            for (f, frame) in frames.enumerated() { for (c, x) in frame.enumerated() { p[f * mixer.inputChannels + c] = x } }
        }
        input.frameLength = frames.count
        let output = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: mixer.outputChannels, interleaved: false,
                               frameCapacity: frames.count)
        try mixer.mix(input, into: output)
        XCTAssertEqual(output.frameLength, frames.count)
        let channels = (0..<mixer.outputChannels).map { output.floatSamples(channel: $0) }
        return (0..<frames.count).map { f in channels.map { $0[f] } }
    }

    func testChannelMap() throws {
        let m = try ChannelMixer(channelMap: [2, -1, 0], inputChannels: 3)
        XCTAssertEqual(try mix(m, [[1, 2, 3], [4, 5, 6]]), [[3, 0, 1], [6, 0, 4]])
        XCTAssertThrowsError(try ChannelMixer(channelMap: [3], inputChannels: 3)) { e in
            XCTAssertEqual((e as? AudioError)?.code, .propertyNotSupported)
        }
        XCTAssertTrue(try ChannelMixer(channelMap: [0, 1], inputChannels: 2).isIdentity)
    }

    /// WAV's 5.1 order (L R C LFE Ls Rs) to the AAC/MPEG order that puts the centre first.
    func testReorderBetweenLayouts() throws {
        let wav = ChannelLayout(tag: .mpeg5_1_A), other = ChannelLayout(tag: .mpeg5_1_D)
        let wavLabels = try XCTUnwrap(wav.channelLabels), otherLabels = try XCTUnwrap(other.channelLabels)
        XCTAssertEqual(Set(wavLabels), Set(otherLabels))
        XCTAssertNotEqual(wavLabels, otherLabels)
        let m = try ChannelMixer(from: wav, to: other)
        let frame: [Float] = [1, 2, 3, 4, 5, 6]
        let out = try mix(m, [frame])[0]
        // Each output channel carries the input channel of the same label.
        for (o, label) in otherLabels.enumerated() { XCTAssertEqual(out[o], frame[wavLabels.firstIndex(of: label)!], "\(label)") }
        // And back again.
        XCTAssertEqual(try mix(try ChannelMixer(from: other, to: wav), [out])[0], frame)
    }

    func testMonoAndStereo() throws {
        let up = try ChannelMixer(from: ChannelLayout(tag: .mono), to: ChannelLayout(tag: .stereo))
        XCTAssertEqual(try mix(up, [[0.25], [-1]]), [[0.25, 0.25], [-1, -1]])
        let down = try ChannelMixer(from: ChannelLayout(tag: .stereo), to: ChannelLayout(tag: .mono))
        XCTAssertEqual(try mix(down, [[1, 0], [0.5, -0.5], [1, 1]]), [[0.5], [0], [1]])
        XCTAssertThrowsError(try ChannelMixer(from: ChannelLayout(tag: .stereo), to: ChannelLayout(tag: .discreteInOrder))) { e in
            XCTAssertEqual((e as? AudioError)?.code, .unsupportedDataFormat)
        }
    }

    /// ITU 5.1 to stereo: L + 0.707 C + 0.707 Ls, LFE dropped, scaled by 1 / 2.414 so that
    /// nothing clips. ffmpeg's default downmix to 16-bit output is the same matrix, so the
    /// two agree within one LSB on the 5.1 fixture.
    func testFiveOneToStereoMatchesFFmpeg() throws {
        let m = try ChannelMixer(from: ChannelLayout(tag: .mpeg5_1_A), to: ChannelLayout(tag: .stereo))
        let scale: Float = 1 / (1 + 2 * ChannelMixer.foldGain)
        XCTAssertEqual(m.gains[0][0], scale, accuracy: 1e-7)
        XCTAssertEqual(m.gains[0][2], ChannelMixer.foldGain * scale, accuracy: 1e-7)
        XCTAssertEqual(m.gains[0][3], 0, "LFE")
        XCTAssertEqual(m.gains[0][4], ChannelMixer.foldGain * scale, accuracy: 1e-7)
        XCTAssertEqual(m.gains[0][5], 0)
        XCTAssertEqual(m.gains[1][5], ChannelMixer.foldGain * scale, accuracy: 1e-7)

        let path = fixturesDirectory + "/pcm/wav_s16le_5.1.wav"
        let layout = try XCTUnwrap(ChannelLayout(waveChannelMask: 0x3F))
        let fromFile = try ChannelMixer(from: layout, to: ChannelLayout(tag: .stereo))
        XCTAssertEqual(fromFile, m, "the WAVE mask 0x3F is WAV's 5.1 order")
        let source = try ffmpeg(["-i", path, "-f", "f32le", "-"])
        let expected = try ffmpeg(["-i", path, "-ac", "2", "-f", "s16le", "-"])
        let frames = source.count / 24
        XCTAssertEqual(expected.count, frames * 4)
        var input: [[Float]] = []
        source.withUnsafeBytes { raw in
            for f in 0..<frames { input.append((0..<6).map { raw.loadUnaligned(fromByteOffset: (f * 6 + $0) * 4, as: Float.self) }) }
        }
        let out = try mix(m, input)
        var worst = 0
        expected.withUnsafeBytes { raw in
            for f in 0..<frames {
                for c in 0..<2 {
                    let theirs = Int(raw.loadUnaligned(fromByteOffset: (f * 2 + c) * 2, as: Int16.self))
                    let ours = Int(max(-32768, min(32767, (out[f][c] * 32768).rounded())))
                    worst = max(worst, abs(ours - theirs))
                }
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "largest difference from ffmpeg's downmix, in 16-bit steps")
    }
}

import Foundation
import Tonearm
import TonearmTestSupport
import XCTest
@testable import TonearmPlayback

/// The bundled sample the backend tests play: 0.5 s of two-tone stereo s16 at 44.1 kHz.
let toneStereoPath = packageRoot + "/Samples/tone-stereo.wav"

/// The whole file decoded by ExtAudioFile into one buffer of `format` (a client format).
func decodeWhole(_ path: String, as format: StreamDescription) throws -> PCMBuffer {
    let file = try ExtAudioFile(path: path)
    try file.setClientDataFormat(format)
    let frames = Int(file.clientLengthFrames)
    let buffer = try XCTUnwrap(PCMBuffer(format: format, frameCapacity: frames))
    while buffer.frameLength < frames, try file.read(into: buffer) > 0 {}
    XCTAssertEqual(buffer.frameLength, frames)
    return buffer
}

/// Plays `source` through `unit` (whose stream format is the buffer's) from start to end: the
/// callback copies whole frames and stops the unit in the call that delivers the last one, so
/// the device gets `ceil(frames / framesPerCall)` periods, the last padded with silence.
/// Returns once the device has drained; the unit stays initialized.
func playToEnd(_ unit: OutputUnit, _ source: PCMBuffer) throws {
    final class Position: @unchecked Sendable { var frame = 0 }
    let position = Position()
    let total = source.frameLength
    let channels = source.channelCount
    let interleaved = source.isInterleaved
    let bytesPerSample = source.commonFormat.bytesPerSample
    let capacity = source.frameCapacity
    let base = source.withUnsafeMutableRawBytes { UnsafeRawPointer($0.baseAddress!) }
    try unit.setRenderCallback { [unowned unit] _, _, frameCount, data in
        let n = min(frameCount, total - position.frame)
        if n > 0 {
            if interleaved {
                let stride = channels * bytesPerSample
                data[0].baseAddress!.copyMemory(from: base + position.frame * stride, byteCount: n * stride)
            } else {
                for c in 0..<channels {
                    data[c].baseAddress!.copyMemory(from: base + (c * capacity + position.frame) * bytesPerSample,
                                                    byteCount: n * bytesPerSample)
                }
            }
            position.frame += n
        }
        if position.frame >= total { unit.stop(drain: true) }
    }
    try unit.start()
    let giveUp = Date().addingTimeInterval(60)
    while unit.isRunning && Date() < giveUp { Thread.sleep(forTimeInterval: 0.005) }
    XCTAssertFalse(unit.isRunning, "the unit did not reach the end of the source")
    // Joins the device thread after its drain (a plain uninitialize() would ask it to discard).
    unit.stop(drain: true)
    withExtendedLifetime(source) {}
}

/// Asserts that `file` holds `expected` followed by silence up to a whole number of periods of
/// `period` frames: what a unit that renders whole periods writes.
func assertWholePeriods(_ file: [UInt8], _ expected: [UInt8], bytesPerFrame: Int, period: Int,
                        file path: StaticString = #filePath, line: UInt = #line)
{
    let frames = expected.count / bytesPerFrame
    let padded = (frames + period - 1) / period * period
    XCTAssertEqual(file.count, padded * bytesPerFrame, "not a whole number of periods", file: path, line: line)
    XCTAssertTrue(file.count >= expected.count && file[..<expected.count].elementsEqual(expected),
                  "the device did not get the source's samples exactly", file: path, line: line)
    XCTAssertTrue(file.dropFirst(expected.count).allSatisfy { $0 == 0 }, "the padding is not silence", file: path, line: line)
}

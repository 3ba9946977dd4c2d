import XCTest
import Tonearm
import TonearmTestSupport

/// `AudioQueue.currentFrame` counts frames (AudioQueueGetCurrentTime's mSampleTime); the
/// `…Time` names are seconds (AudioPlayer.currentTime). The queue's frame count was called
/// `currentTime`.
final class AudioQueueCurrentFrameTests: XCTestCase {
    func testCurrentFrameCountsTheFramesPlayed() throws {
        let format = StreamDescription.int16(sampleRate: 8000, channels: 1)
        let queue = try AudioQueue.newOutput(format: format, backend: NullOutputBackend()) { queue, _ in
            queue.stop(immediately: false)
        }
        XCTAssertEqual(queue.currentFrame, 0)
        let stopped = expectation(description: "stopped")
        queue.isRunningListener = { running in if !running { stopped.fulfill() } }
        let buffer = try queue.allocateBuffer(byteSize: 1234 * 2)
        let samples = buffer.audioData.assumingMemoryBound(to: Int16.self)
        for i in 0..<1234 { samples[i] = Int16(i) }
        buffer.audioDataByteSize = 1234 * 2
        try queue.enqueue(buffer)
        try queue.start()
        wait(for: [stopped], timeout: 30)
        XCTAssertEqual(queue.currentFrame, 1234)
    }
}

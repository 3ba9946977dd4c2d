import XCTest
import Tonearm
import TonearmTestSupport
@testable import TonearmPlayback

final class AudioQueueTests: XCTestCase {
    /// Seed 002's shape: three buffers, refilled from the callback, Int16 stereo. Each block
    /// holds one constant value, so the rendered output shows which blocks played, in order.
    func testCallbacksFireInOrderAndStopPlaysOutWhatWasQueued() throws {
        let capture = Capture()
        let format = StreamDescription.int16(sampleRate: 8000, channels: 2)
        let blocks = 12, framesPerBlock = 1000
        let order = Recorder()
        let next = Counter()
        let queue = try AudioQueue.newOutput(format: format, backend: NullOutputBackend(tap: capture.tap)) { queue, buffer in
            order.add(buffer.userData)
            let n = next.take()
            guard n < blocks else {
                if n == blocks { queue.stop(immediately: false) }
                return
            }
            Self.fill(buffer, block: n, frames: framesPerBlock)
            try? queue.enqueue(buffer)
        }
        let stopped = expectation(description: "stopped")
        queue.isRunningListener = { running in if !running { stopped.fulfill() } }
        for _ in 0..<3 {
            let buffer = try queue.allocateBuffer(byteSize: framesPerBlock * 4)
            Self.fill(buffer, block: next.take(), frames: framesPerBlock)
            try queue.enqueue(buffer)
        }
        try queue.start()
        wait(for: [stopped], timeout: 30)
        // Every block was played, whole and in order, then the queue stopped by itself.
        let played = capture.all
        XCTAssertGreaterThanOrEqual(played.count, blocks * framesPerBlock * 2)
        for b in 0..<blocks {
            let value = Float(Int16(b + 1) * 1000) / 32768
            let slice = played[(b * framesPerBlock * 2)..<((b + 1) * framesPerBlock * 2)]
            XCTAssertTrue(slice.allSatisfy { $0 == value }, "block \(b)")
        }
        XCTAssertTrue(played.dropFirst(blocks * framesPerBlock * 2).allSatisfy { $0 == 0 })
        XCTAssertEqual(order.all, Array(0..<blocks))
        XCTAssertFalse(queue.isRunning)
        XCTAssertEqual(queue.underruns, 0)
    }

    /// An immediate stop cuts playback off and hands every queued buffer back through the
    /// callback, each once and in order, as AudioQueueStop does: an app that refills in the
    /// callback (seed 002) gets all its buffers back.
    func testStopImmediatelyCallsBackEveryBufferOnce() throws {
        let capture = Capture()
        let format = StreamDescription.int16(sampleRate: 8000, channels: 1)
        let calls = Recorder()
        // A real-time null sink: the device takes audio at 8000 frames per second.
        let queue = try AudioQueue.newOutput(format: format, backend: NullOutputBackend(realtime: true, tap: capture.tap),
                                             options: AudioOutputOptions(latency: 0.05)) { _, buffer in calls.add(buffer.userData) }
        for b in 0..<3 {
            let buffer = try queue.allocateBuffer(byteSize: 8000 * 2)     // a second each
            Self.fill(buffer, block: b, frames: 8000, channels: 1)
            try queue.enqueue(buffer)
        }
        try queue.start()
        Clock.sleep(seconds: 0.2)
        queue.stop(immediately: true)
        XCTAssertFalse(queue.isRunning)
        let heard = capture.all.filter { $0 != 0 }.count
        XCTAssertGreaterThan(heard, 0)
        XCTAssertLessThan(heard, 8000, "three seconds were queued; the stop must cut them off")
        XCTAssertTrue(waitUntil(timeout: 2, { calls.all.count >= 3 }))
        Clock.sleep(seconds: 0.1)
        XCTAssertEqual(calls.all, [0, 1, 2], "each buffer comes back once, in the order enqueued")
    }

    /// AudioQueueReset hands back every buffer it flushes, in order, and the queue plays on:
    /// buffers enqueued after it play.
    func testResetCallsBackEveryBufferOnceAndPlaysOn() throws {
        let capture = Capture()
        let format = StreamDescription.int16(sampleRate: 8000, channels: 1)
        let calls = Recorder()
        let queue = try AudioQueue.newOutput(format: format, backend: NullOutputBackend(realtime: true, tap: capture.tap),
                                             options: AudioOutputOptions(latency: 0.05)) { _, buffer in calls.add(buffer.userData) }
        var buffers: [AudioQueueBuffer] = []
        for b in 0..<4 {
            let buffer = try queue.allocateBuffer(byteSize: 8000 * 2)
            Self.fill(buffer, block: b, frames: 8000, channels: 1)
            try queue.enqueue(buffer)
            buffers.append(buffer)
        }
        try queue.start()
        Clock.sleep(seconds: 0.2)
        queue.reset()
        XCTAssertTrue(queue.isRunning)
        XCTAssertTrue(waitUntil(timeout: 2, { calls.all.count >= 4 }))
        XCTAssertEqual(calls.all, [0, 1, 2, 3])
        // The queue goes on with what comes next.
        Self.fill(buffers[0], block: 9, frames: 800, channels: 1)
        try queue.enqueue(buffers[0])
        XCTAssertTrue(waitUntil(timeout: 5, { calls.all.count >= 5 }))
        queue.dispose()
        XCTAssertEqual(calls.all, [0, 1, 2, 3, 9])
        XCTAssertTrue(capture.all.contains(Float(10 * 1000) / 32768), "the buffer enqueued after the reset played")
    }

    /// The queue decodes outside its lock: while a buffer takes half a second to decode,
    /// enqueue and the time answer at once.
    func testEnqueueDoesNotWaitForADecode() throws {
        let format = StreamDescription.int16(sampleRate: 8000, channels: 1)
        let queue = try AudioQueue.newOutput(format: format, backend: NullOutputBackend()) { _, _ in }
        queue.decodeDelayForTesting = 0.5
        let first = try queue.allocateBuffer(byteSize: 2000)
        Self.fill(first, block: 0, frames: 1000, channels: 1)
        try queue.enqueue(first)
        Clock.sleep(seconds: 0.1)     // the queue's thread is decoding it now
        var longest = 0.0
        for b in 1..<4 {
            let buffer = try queue.allocateBuffer(byteSize: 2000)
            Self.fill(buffer, block: b, frames: 1000, channels: 1)
            let t0 = Clock.nanoseconds
            try queue.enqueue(buffer)
            _ = queue.currentFrame
            longest = max(longest, Double(Clock.nanoseconds - t0) / 1e9)
        }
        XCTAssertLessThan(longest, 0.1, "enqueue waited for the decode")
        queue.dispose()
    }


    func testDecodesACompressedFormat() throws {
        // The IMA4 sample through the queue equals ExtAudioFile's decode of it.
        let path = packageRoot + "/Samples/tone-ima4.caf"
        let file = try AudioFile(path: path)
        let format = try file.dataFormat
        let count = Int(try file.audioDataPacketCount)
        let (bytes, _) = try file.readPacketData(startingAt: 0, count: count)
        let capture = Capture()
        let queue = try AudioQueue.newOutput(format: format, backend: NullOutputBackend(tap: capture.tap)) { _, _ in }
        let stopped = expectation(description: "stopped")
        queue.isRunningListener = { if !$0 { stopped.fulfill() } }
        let buffer = try queue.allocateBuffer(byteSize: bytes.count)
        bytes.withUnsafeBytes { buffer.audioData.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        buffer.audioDataByteSize = bytes.count
        try queue.enqueue(buffer)
        try queue.start()
        queue.stop(immediately: false)
        wait(for: [stopped], timeout: 30)
        let expected = try decodedFloats(path)
        assertSamples(Array(capture.all.prefix(expected.count)), expected, "IMA4")
    }

    /// Seed 002's radio player: bytes arrive in chunks, AudioFileStream finds MP3 packets, they
    /// are copied with their descriptions into three rotating queue buffers, and the queue
    /// decodes. The output equals the converter's decode of the same packets.
    func testStreamedMP3PacketsThroughThreeBuffers() throws {
        let path = packageRoot + "/Samples/tone-stereo.mp3"
        let bytes = try readWholeFile(path)
        let capture = Capture()
        let free = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var queue: AudioQueue?
        nonisolated(unsafe) var buffers: [AudioQueueBuffer] = []
        nonisolated(unsafe) var current: AudioQueueBuffer?
        let freeList = NSLock()
        nonisolated(unsafe) var available: [AudioQueueBuffer] = []
        let stopped = expectation(description: "stopped")
        func takeBuffer() -> AudioQueueBuffer {
            free.wait()
            freeList.lock(); defer { freeList.unlock() }
            return available.removeFirst()
        }
        func enqueueCurrent() throws {
            guard let b = current, b.audioDataByteSize > 0 else { return }
            try queue!.enqueue(b)
            current = nil
        }
        let stream = AudioFileStream(fileTypeHint: nil, propertyListener: { stream, property, _ in
            guard property == .readyToProducePackets, queue == nil else { return }
            queue = try? AudioQueue.newOutput(format: try! stream.dataFormat, backend: NullOutputBackend(tap: capture.tap)) { _, buffer in
                buffer.audioDataByteSize = 0
                buffer.packetDescriptions = []
                freeList.lock(); available.append(buffer); freeList.unlock()
                free.signal()
            }
            queue!.isRunningListener = { if !$0 { stopped.fulfill() } }
            for _ in 0..<3 {
                let b = try! queue!.allocateBuffer(byteSize: 4096, packetDescriptionCapacity: 16)
                buffers.append(b)
                available.append(b)
                free.signal()
            }
        }, packets: { _, count, data, descriptions in
            for i in 0..<count {
                let d = descriptions![i]
                if current == nil { current = takeBuffer() }
                if current!.audioDataByteSize + Int(d.dataByteSize) > current!.audioDataBytesCapacity
                    || current!.packetDescriptions.count == current!.packetDescriptionCapacity
                {
                    try! enqueueCurrent()
                    if !queue!.isRunning { try! queue!.start() }
                    current = takeBuffer()
                }
                let b = current!
                (b.audioData + b.audioDataByteSize).copyMemory(from: data.baseAddress! + Int(d.startOffset), byteCount: Int(d.dataByteSize))
                b.packetDescriptions.append(PacketDescription(startOffset: Int64(b.audioDataByteSize),
                                                              variableFramesInPacket: d.variableFramesInPacket,
                                                              dataByteSize: d.dataByteSize))
                b.audioDataByteSize += Int(d.dataByteSize)
            }
        })
        var at = 0
        while at < bytes.count {
            let n = min(1500, bytes.count - at)     // network-sized pieces
            try stream.parse(bytes[at..<(at + n)])
            at += n
        }
        try stream.parse(nil)
        try enqueueCurrent()
        queue!.stop(immediately: false)
        wait(for: [stopped], timeout: 30)
        XCTAssertEqual(buffers.count, 3)
        XCTAssertEqual(queue!.underruns, 0)

        // The same packets through one converter.
        let file = try AudioFile(path: path)
        let format = try file.dataFormat
        let (data, descriptions) = try file.readPacketData(startingAt: 0, count: Int(try file.audioDataPacketCount))
        let converter = try AudioConverter(from: format, to: .float32(sampleRate: format.sampleRate,
                                                                      channels: format.channelsPerFrame, interleaved: true))
        var out: [UInt8] = []
        try converter.convert(packets: data, count: descriptions!.count, descriptions: descriptions, into: &out)
        try converter.finish(into: &out)
        let expected = out.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertGreaterThan(expected.count, 40000)
        assertSamples(Array(capture.all.prefix(expected.count)), expected, "MP3 through the queue")
    }

    /// reset() forgets what was queued (and decoded ahead); what is enqueued after plays.
    func testResetForgetsQueuedBuffers() throws {
        let capture = Capture()
        let format = StreamDescription.int16(sampleRate: 8000, channels: 1)
        let calls = Recorder()
        let queue = try AudioQueue.newOutput(format: format, backend: NullOutputBackend(tap: capture.tap)) { _, buffer in
            calls.add(buffer.userData)
        }
        let stopped = expectation(description: "stopped")
        queue.isRunningListener = { if !$0 { stopped.fulfill() } }
        let a = try queue.allocateBuffer(byteSize: 2000), b = try queue.allocateBuffer(byteSize: 2000)
        Self.fill(a, block: 0, frames: 1000, channels: 1)
        try queue.enqueue(a)
        Clock.sleep(seconds: 0.05)      // the queue's thread decodes it into the ring meanwhile
        queue.reset()
        Self.fill(b, block: 1, frames: 1000, channels: 1)
        try queue.enqueue(b)
        try queue.start()
        queue.stop(immediately: false)
        wait(for: [stopped], timeout: 10)
        let heard = capture.all.filter { $0 != 0 }
        XCTAssertEqual(heard.count, 1000)
        XCTAssertTrue(heard.allSatisfy { $0 == Float(2000) / 32768 }, "only the buffer enqueued after the reset plays")
        // a came back when the reset flushed it (before the queue started), b once it played;
        // and the file sink's trimming leaves exactly b's 1000 frames.
        XCTAssertTrue(waitUntil(timeout: 2, { calls.all.count >= 2 }))
        XCTAssertEqual(calls.all, [0, 1])
        XCTAssertEqual(capture.all.count, 1000)
    }

    /// A buffer whose descriptions point outside it plays as nothing, is reported with its
    /// code, and still comes back to be refilled.
    func testUndecodableBufferIsReportedAndReturned() throws {
        let file = try AudioFile(path: packageRoot + "/Samples/tone-stereo.mp3")
        let errors = Recorder(), returned = Recorder()
        let queue = try AudioQueue.newOutput(format: try file.dataFormat, backend: NullOutputBackend()) { _, buffer in
            returned.add(buffer.userData)
        }
        queue.onDecodeError = { errors.add(Int($0.code.rawValue)) }
        let buffer = try queue.allocateBuffer(byteSize: 1000, packetDescriptionCapacity: 1)
        buffer.audioDataByteSize = 1000
        buffer.userData = 7
        try queue.enqueue(buffer, packetDescriptions: [PacketDescription(startOffset: 900, variableFramesInPacket: 0,
                                                                            dataByteSize: 417)])
        try queue.start()
        let deadline = Date().addingTimeInterval(10)
        while returned.all.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        queue.dispose()
        XCTAssertEqual(errors.all, [Int(AudioError.Code.invalidPacketOffset.rawValue)])
        XCTAssertEqual(returned.all, [7])
    }

    func testRejectsForeignAndEmptyBuffers() throws {
        let format = StreamDescription.int16(sampleRate: 8000, channels: 1)
        let a = try AudioQueue.newOutput(format: format, backend: NullOutputBackend()) { _, _ in }
        let b = try AudioQueue.newOutput(format: format, backend: NullOutputBackend()) { _, _ in }
        let buffer = try a.allocateBuffer(byteSize: 64)
        XCTAssertThrowsError(try a.enqueue(buffer)) { XCTAssertEqual(($0 as? AudioError)?.code, .bufferEmpty) }
        buffer.audioDataByteSize = 64
        XCTAssertThrowsError(try b.enqueue(buffer)) { XCTAssertEqual(($0 as? AudioError)?.code, .invalidBuffer) }
        XCTAssertThrowsError(try AudioQueue.newOutput(format: StreamDescription(sampleRate: 44100, formatID: "zzzz", bytesPerPacket: 0,
                                                                               framesPerPacket: 1024, bytesPerFrame: 0,
                                                                               channelsPerFrame: 2, bitsPerChannel: 0), callback: { _, _ in }))
    }

    static func fill(_ buffer: AudioQueueBuffer, block: Int, frames: Int, channels: Int = 2) {
        let samples = buffer.audioData.assumingMemoryBound(to: Int16.self)
        for i in 0..<(frames * channels) { samples[i] = Int16(block + 1) * 1000 }
        buffer.audioDataByteSize = frames * channels * 2
        buffer.userData = block
    }
}

final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []
    func add(_ v: Int) { lock.lock(); values.append(v); lock.unlock() }
    var all: [Int] { lock.lock(); defer { lock.unlock() }; return values }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func take() -> Int { lock.lock(); defer { n += 1; lock.unlock() }; return n }
}

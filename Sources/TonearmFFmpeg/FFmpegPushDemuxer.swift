#if FFmpeg
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// libavformat fed by pushes, for ``AudioFileStream``: libavformat pulls its bytes, so it
/// runs on a thread of its own that waits for them. Each ``feed(_:)`` hands over bytes and
/// returns once the demuxer has used them all and waits for more (or has stopped), so that
/// the caller's thread sees every packet those bytes completed, and nothing is buffered
/// beyond one push.
package final class FFmpegPushDemuxer: @unchecked Sendable {
    /// What the demuxer thread reports.
    package enum Event {
        /// The container is open: its facts (read only its `let` properties).
        case opened(FFmpegDemuxer)
        case packet(FFmpegPacket)
        case failed(AudioError)
    }

    private let feedState: Feed
    private var thread: pthread_t?
    private let formatName: String?

    /// The bytes between the two threads, behind a mutex and a condition variable.
    final class Feed: FFmpegByteSource, @unchecked Sendable {
        let condition = Condition()
        // Guarded by `condition`:
        var bytes: [UInt8] = []
        var head = 0
        var ended = false
        var aborted = false
        var starving = false
        var finished = false
        var events: [Event] = []

        var size: Int64? { nil }
        var isSeekable: Bool { false }
        var isAborted: Bool { condition.withLock { aborted } }

        /// On the demuxer thread: waits for bytes, and says it waits.
        func read(at _: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
            try condition.withLock { () throws(AudioError) -> Int in
                while head == bytes.count && !ended && !aborted {
                    starving = true
                    condition.broadcast()
                    condition.wait()
                }
                starving = false
                if aborted { throw AudioError(.illegalOperation, "the stream was closed") }
                let n = min(buffer.count, bytes.count - head)
                if n > 0 {
                    bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + head, byteCount: n) }
                    head += n
                }
                return n
            }
        }

        func post(_ e: Event) { condition.withLock { events.append(e) } }
    }

    package init(formatName: String?) {
        feedState = Feed()
        self.formatName = formatName
    }

    deinit {
        let f = feedState
        f.condition.withLock {
            f.aborted = true
            f.condition.broadcast()
        }
        if let thread { pthread_join(thread, nil) }
    }

    /// Hands bytes to the demuxer and waits until it has used them all (or stopped).
    package func feed(_ input: UnsafeRawBufferPointer) {
        startIfNeeded()
        let f = feedState
        f.condition.withLock {
            if f.head == f.bytes.count {
                f.bytes.removeAll(keepingCapacity: true)
                f.head = 0
            }
            f.bytes.append(contentsOf: input)
            f.condition.broadcast()
            while !f.finished && !(f.starving && f.head == f.bytes.count) { f.condition.wait() }
        }
    }

    /// The end of the data: waits until the demuxer has read its last packet.
    package func finish() {
        startIfNeeded()
        let f = feedState
        f.condition.withLock {
            f.ended = true
            f.condition.broadcast()
            while !f.finished { f.condition.wait() }
        }
    }

    /// What happened since the last call, in order; and whether the demuxer has stopped.
    package func takeEvents() -> (events: [Event], finished: Bool) {
        let f = feedState
        return f.condition.withLock {
            let e = f.events
            f.events.removeAll()
            return (e, f.finished)
        }
    }

    private final class Start {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    private func startIfNeeded() {
        guard thread == nil else { return }
        let f = feedState, name = formatName
        let start = Start {
            FFmpegPushDemuxer.run(f, formatName: name)
            f.condition.withLock {
                f.finished = true
                f.condition.broadcast()
            }
        }
        var t = pthread_t()
        let box = Unmanaged.passRetained(start).toOpaque()
        #if canImport(Darwin)
        let r = pthread_create(&t, nil, { raw in
            Unmanaged<Start>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, box)
        #else
        let r = pthread_create(&t, nil, { raw in
            Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
        #endif
        if r == 0 {
            thread = t
        } else {
            Unmanaged<Start>.fromOpaque(box).release()
            f.condition.withLock {
                f.events.append(.failed(AudioError.limit("no thread for the FFmpeg demuxer (error \(r))")))
                f.finished = true
            }
        }
    }

    /// The demuxer thread: open, then read packets until the end, an error or an abort.
    private static func run(_ f: Feed, formatName: String?) {
        do throws(AudioError) {
            let demuxer = try FFmpegDemuxer(source: f, formatName: formatName)
            f.post(.opened(demuxer))
            while let p = try demuxer.readPacket() { f.post(.packet(p)) }
        } catch {
            if !f.isAborted { f.post(.failed(error)) }
        }
    }
}
#endif

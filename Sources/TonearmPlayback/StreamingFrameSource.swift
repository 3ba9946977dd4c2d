import TonearmCore

/// Audio that arrives over time (a network stream being decoded), scheduled on an
/// ``AudioPlayerNode`` with ``AudioPlayerNode/scheduleStream(_:completion:)``.
///
/// The node calls these on its own thread and expects none of them to wait for the network:
/// a source decodes on a thread of its own and hands over what is ready.
public protocol StreamingFrameSource: AnyObject {
    /// The format the node reads: interleaved Float32 at the engine's rate and channel count.
    func setClientFormat(_ format: StreamDescription) throws(AudioError)
    /// Frames in the client format, when the length is known; nil for a live stream.
    var clientLengthFrames: Int64? { get }
    /// Replaces `bytes` with up to `frames` frames. Returns how many, 0 at the end of the
    /// stream, or nil when none are ready yet.
    func readAvailable(frames: Int, into bytes: inout [UInt8]) throws(AudioError) -> Int?
    /// Goes to a client-format frame; reads after it return frames from there once ready.
    func seek(toFrame frame: Int64) throws(AudioError)
}

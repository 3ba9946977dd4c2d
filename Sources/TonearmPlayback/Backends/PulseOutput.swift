import TonearmCore

// Placeholder until the dlopen backend lands (issue 6).
public struct PulseOutputBackend: AudioOutputBackend {
    public let name = "pulse"
    public init() {}
    public func devices() throws(AudioError) -> [AudioOutputDevice] {
        throw AudioError(.badDevice, "the pulse backend is not written yet")
    }
    public func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        throw AudioError(.badDevice, "the pulse backend is not written yet")
    }
}

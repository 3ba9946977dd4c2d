import TonearmCore

// Placeholder until the dlopen backend lands (issue 6).
public struct ALSAOutputBackend: AudioOutputBackend {
    public let name = "alsa"
    public init() {}
    public func devices() throws(AudioError) -> [AudioOutputDevice] {
        throw AudioError(.badDevice, "the alsa backend is not written yet")
    }
    public func open(format: StreamDescription, options: AudioOutputOptions) throws(AudioError) -> any AudioOutputStream {
        throw AudioError(.badDevice, "the alsa backend is not written yet")
    }
}

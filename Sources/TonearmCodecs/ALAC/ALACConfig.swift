import TonearmCore

/// The ALACSpecificConfig, Apple's ALAC magic cookie (Apple's ALAC reference,
/// `ALACMagicCookieDescription.txt`): 24 big-endian bytes, frameLength (32),
/// compatibleVersion (8), bitDepth (8), pb (8), mb (8), kb (8), numChannels (8),
/// maxRun (16), maxFrameBytes (32), avgBitRate (32), sampleRate (32).
struct ALACConfig: Sendable, Equatable {
    /// Samples per channel in a full frame; a partial frame ("has size") says fewer.
    var frameLength: Int
    var bitDepth: Int
    /// The rice history multiplier (pb), its initial value (mb) and the largest Rice
    /// parameter (kb) of the adaptive Golomb coder.
    var historyMultiplier: UInt32
    var initialHistory: UInt32
    var riceLimit: Int
    var channels: Int
    var sampleRate: UInt32

    /// The longest frame the decoder accepts. Apple's encoder writes 4096 (352 for AirPlay);
    /// the bound keeps the sample buffers of a hostile cookie within 8 × 64 Ki samples.
    static let maximumFrameLength = 1 << 16

    /// Reads the config from a cookie in any of its forms: the 24 bytes alone, behind an
    /// 'alac' atom header (size, type, version and flags: 12 bytes), or behind a 'frma'
    /// atom and that header (the older QuickTime form ffmpeg writes in CAF). Whatever
    /// follows the 24 bytes (an ALACChannelLayoutInfo 'chan' atom, a terminator) is ignored.
    /// Throws 'fmt?' for a cookie that is too short or whose values the decoder refuses.
    init(cookie c: [UInt8]) throws(AudioError) {
        func isType(_ at: Int, _ name: String) -> Bool {
            c.count >= at + 8 && c[at + 4..<at + 8].elementsEqual(name.utf8)
        }
        var at = 0
        if isType(0, "frma") { at += 12 }
        if isType(at, "alac") { at += 12 }
        guard c.count >= at + 24 else {
            throw AudioError(.unsupportedDataFormat, "an ALAC magic cookie of \(c.count) bytes holds no ALACSpecificConfig")
        }
        func be32(_ i: Int) -> UInt32 {
            UInt32(c[at + i]) << 24 | UInt32(c[at + i + 1]) << 16 | UInt32(c[at + i + 2]) << 8 | UInt32(c[at + i + 3])
        }
        let length = be32(0)
        guard length >= 1, length <= UInt32(ALACConfig.maximumFrameLength) else {
            throw AudioError(.unsupportedDataFormat, "an ALAC frame length of \(length) samples (at most \(ALACConfig.maximumFrameLength))")
        }
        frameLength = Int(length)
        bitDepth = Int(c[at + 5])
        guard [16, 20, 24, 32].contains(bitDepth) else {
            throw AudioError(.unsupportedDataFormat, "ALAC with \(bitDepth) bits per sample")
        }
        historyMultiplier = UInt32(c[at + 6])
        initialHistory = UInt32(c[at + 7])
        riceLimit = Int(c[at + 8])
        channels = Int(c[at + 9])
        guard channels >= 1, channels <= 8 else {
            throw AudioError(.unsupportedDataFormat, "ALAC with \(channels) channels")
        }
        sampleRate = be32(20)
    }
}

import TonearmCore

/// How an Opus frame is coded (RFC 6716 §3.1): SILK only, hybrid or CELT only.
enum OpusMode: Sendable {
    case silk, hybrid, celt
}

/// One Opus packet split into its frames (RFC 6716 §3): the TOC byte's configuration and
/// the frames' byte ranges, with every rule of §3.4 checked.
struct OpusPacket {
    var mode: OpusMode
    var bandwidth: OpusBandwidth
    /// Samples per frame at 48 kHz: 120 (2.5 ms) … 2880 (60 ms).
    var frameSize: Int
    var stereo: Bool
    /// Byte ranges of the frames within the packet (a 0-length frame is a lost one, DTX).
    var frames: [Range<Int>]
    /// Bytes of the packet it used (less than its length only in self-delimited framing).
    var consumed: Int

    /// The TOC's configuration (§3.1, Table 2): mode, bandwidth and frame size.
    static func configuration(_ toc: UInt8) -> (OpusMode, OpusBandwidth, Int) {
        let config = Int(toc >> 3)
        let size = OpusTOC.frameSize(toc)
        switch config {
        case 0..<12:
            return (.silk, config < 4 ? .narrow : config < 8 ? .medium : .wide, size)
        case 12..<16:
            return (.hybrid, config < 14 ? .superWide : .full, size)
        default:
            let bandwidth: OpusBandwidth = switch (config - 16) >> 2 {
            case 0: .narrow
            case 1: .wide
            case 2: .superWide
            default: .full
            }
            return (.celt, bandwidth, size)
        }
    }

    /// §3.2.1: a frame length of one or two bytes.
    private static func readLength(_ b: UnsafeRawBufferPointer, _ at: inout Int, end: Int) throws(AudioError) -> Int {
        guard at < end else { throw bad("a frame length runs past the packet") }
        let first = Int(b[at])
        if first < 252 {
            at += 1
            return first
        }
        guard at + 1 < end else { throw bad("a frame length runs past the packet") }
        let length = first + 4 * Int(b[at + 1])
        at += 2
        return length
    }

    static func bad(_ why: String) -> AudioError { AudioError(.codecBadData, "Opus packet: \(why)") }

    /// An empty packet, for ``parse(_:selfDelimited:)`` to fill.
    init() {
        (mode, bandwidth, frameSize, stereo, frames, consumed) = (.celt, .full, 960, false, [], 0)
        frames.reserveCapacity(48)
    }

    /// Parses `bytes`; with `selfDelimited`, the last frame's length is coded too (Appendix B),
    /// and `consumed` says where the next stream's packet starts.
    init(_ bytes: UnsafeRawBufferPointer, selfDelimited: Bool = false) throws(AudioError) {
        self.init()
        try parse(bytes, selfDelimited: selfDelimited)
    }

    /// Parses `bytes` into this packet, reusing its frame list's storage: a decoder that keeps
    /// its packets parses without allocating.
    mutating func parse(_ bytes: UnsafeRawBufferPointer, selfDelimited: Bool = false) throws(AudioError) {
        guard bytes.count >= 1 else { throw Self.bad("empty packet") }
        let toc = bytes[0]
        (mode, bandwidth, frameSize) = Self.configuration(toc)
        stereo = toc & 4 != 0
        let end = bytes.count
        var at = 1
        frames.removeAll(keepingCapacity: true)
        switch toc & 3 {
        case 0:
            var length = end - at
            if selfDelimited { length = try Self.readLength(bytes, &at, end: end) }
            guard length <= 1275, at + length <= end else { throw Self.bad("a frame of \(length) bytes") }
            frames.append(at..<(at + length))
            at += length
        case 1:
            var length: Int
            if selfDelimited {
                length = try Self.readLength(bytes, &at, end: end)
                guard at + 2 * length <= end else { throw Self.bad("two frames run past the packet") }
            } else {
                // §3.4 [R3]: the two frames have the same length, so the rest is even.
                guard (end - at) & 1 == 0 else { throw Self.bad("code 1 with an odd payload") }
                length = (end - at) / 2
            }
            guard length <= 1275 else { throw Self.bad("a frame of \(length) bytes") }
            frames.append(at..<(at + length))
            frames.append((at + length)..<(at + 2 * length))
            at += 2 * length
        case 2:
            let first = try Self.readLength(bytes, &at, end: end)
            var second = end - at - first
            if selfDelimited { second = try Self.readLength(bytes, &at, end: end) }
            guard first <= 1275, second >= 0, second <= 1275, at + first + second <= end else {
                throw Self.bad("code 2 frame lengths \(first) and \(second) do not fit")
            }
            frames.append(at..<(at + first))
            frames.append((at + first)..<(at + first + second))
            at += first + second
        default:
            guard at < end else { throw Self.bad("code 3 without a frame count") }
            let header = bytes[at]
            at += 1
            let count = Int(header & 0x3F)
            let vbr = header & 0x80 != 0
            // §3.4 [R5]: 1 … 48 frames, at most 120 ms.
            guard count >= 1, count * frameSize <= 5760 else { throw Self.bad("code 3 with \(count) frames") }
            var padding = 0
            if header & 0x40 != 0 {
                while true {
                    guard at < end else { throw Self.bad("padding length runs past the packet") }
                    let p = Int(bytes[at])
                    at += 1
                    padding += p == 255 ? 254 : p
                    if p != 255 { break }
                }
            }
            var payloadEnd = end - padding
            guard payloadEnd >= at else { throw Self.bad("padding longer than the packet") }
            // The lengths first, each kept as an empty range at it (a length read from the
            // packet may be negative until checked), then made the frames' ranges.
            if vbr {
                var used = 0
                for _ in 0..<(count - 1) {
                    let l = try Self.readLength(bytes, &at, end: payloadEnd)
                    frames.append(l..<l)
                    used += l
                }
                let l = selfDelimited ? try Self.readLength(bytes, &at, end: payloadEnd) : payloadEnd - at - used
                frames.append(l..<l)
            } else if selfDelimited {
                let l = try Self.readLength(bytes, &at, end: payloadEnd)
                for _ in 0..<count { frames.append(l..<l) }
            } else {
                let total = payloadEnd - at
                // [R6]: CBR frames share the payload exactly.
                guard total % count == 0 else { throw Self.bad("code 3 CBR payload of \(total) bytes for \(count) frames") }
                for _ in 0..<count { frames.append(total / count..<total / count) }
            }
            for i in 0..<frames.count {
                let l = frames[i].lowerBound
                guard l >= 0, l <= 1275, at + l <= payloadEnd else { throw Self.bad("code 3 frames run past the packet") }
                frames[i] = at..<(at + l)
                at += l
            }
            if selfDelimited {
                // The padding follows the frames.
                payloadEnd = at + padding
                guard payloadEnd <= end else { throw Self.bad("padding runs past the packet") }
                at = payloadEnd
            } else {
                at = end
            }
        }
        consumed = selfDelimited ? at : end
    }
}

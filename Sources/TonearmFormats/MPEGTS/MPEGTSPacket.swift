import TonearmCore

/// How the 188-byte transport packets lie in the file: plain (188), behind a 4-byte M2TS
/// arrival timestamp (192), or followed by 16 bytes of Reed-Solomon parity (204).
struct TSLayout: Sendable, Equatable {
    /// Bytes from one packet's first byte (its prefix, for M2TS) to the next one's.
    var stride: Int
    /// Bytes before the sync byte 0x47 in each unit (4 for M2TS).
    var syncOffset: Int

    static let plain = TSLayout(stride: 188, syncOffset: 0)
    static let m2ts = TSLayout(stride: 192, syncOffset: 4)
    static let parity = TSLayout(stride: 204, syncOffset: 0)
    static let all: [TSLayout] = [.plain, .m2ts, .parity]

    /// Sync bytes that must line up at the stride before a layout is taken.
    static let confirmations = 4

    /// The first unit start at or after `from` where sync bytes line up at one of the
    /// strides: `confirmations` of them, or every one there is when the data ends sooner
    /// (at least two, or one when the data is a single packet). Nil while more bytes are
    /// needed or when none lines up before the last `stride × confirmations` bytes.
    static func find(in b: UnsafeRawBufferPointer, from: Int, isEndOfStream: Bool) -> (start: Int, layout: TSLayout)? {
        let n = b.count
        var i = from
        while i < n {
            if b[i] == 0x47 {
                for layout in all {
                    let start = i - layout.syncOffset
                    guard start >= 0 else { continue }
                    var seen = 1
                    var k = i + layout.stride
                    while seen < confirmations, k < n, b[k] == 0x47 {
                        seen += 1
                        k += layout.stride
                    }
                    let whole = seen == confirmations
                    let toEnd = isEndOfStream && k >= n && start + layout.stride * seen <= n + layout.stride - 188
                        && (seen >= 2 || start == 0)
                    if whole || toEnd { return (start, layout) }
                }
            }
            i += 1
        }
        return nil
    }
}

/// The 4-byte header of a transport packet and its adaptation field (ISO/IEC 13818-1 §2.4.3).
struct TSPacketHeader: Sendable, Equatable {
    var pid: UInt16
    var payloadUnitStart: Bool
    var continuityCounter: UInt8
    var hasPayload: Bool
    /// The adaptation field's discontinuity_indicator: the counter (and the time base) may jump.
    var discontinuity = false
    /// The program clock reference, in 27 MHz ticks, when the adaptation field has one.
    var pcr: Int64?
    /// Where the payload begins in the 188 bytes.
    var payloadStart = 4
    var transportError = false

    /// Reads the header of the 188 bytes at `p`; nil when the adaptation field is longer
    /// than the packet (a damaged packet).
    init?(_ p: UnsafeRawBufferPointer) {
        let b1 = p[1], b3 = p[3]
        transportError = b1 & 0x80 != 0
        payloadUnitStart = b1 & 0x40 != 0
        pid = UInt16(b1 & 0x1F) << 8 | UInt16(p[2])
        continuityCounter = b3 & 0x0F
        let control = b3 >> 4 & 3
        hasPayload = control & 1 != 0
        if control & 2 != 0 {
            let length = Int(p[4])
            guard 5 + length <= 188 else { return nil }
            if length > 0 {
                let flags = p[5]
                discontinuity = flags & 0x80 != 0
                if flags & 0x10 != 0, length >= 7 {
                    let base = Int64(p[6]) << 25 | Int64(p[7]) << 17 | Int64(p[8]) << 9 | Int64(p[9]) << 1 | Int64(p[10] >> 7)
                    let ext = Int64(p[10] & 1) << 8 | Int64(p[11])
                    pcr = base * 300 + ext
                }
            }
            payloadStart = 5 + length
        }
        if payloadStart >= 188 { hasPayload = false }
    }
}

/// Reassembles PSI sections (PAT, PMT) of one PID across packets, bounded by the section
/// size limit (1021 bytes for PAT and PMT, ISO/IEC 13818-1 §2.4.4.3).
struct TSSectionAssembler: Sendable {
    private var buffer: [UInt8] = []
    private var collecting = false
    private var expectedCounter: UInt8?

    /// Takes a packet's payload; returns the sections completed in it whose CRC is right.
    mutating func take(_ payload: UnsafeRawBufferPointer, header: TSPacketHeader) -> [[UInt8]] {
        if let e = expectedCounter, e != header.continuityCounter, !header.discontinuity {
            if e == (header.continuityCounter &+ 1) & 0xF { return [] }  // a duplicate
            buffer.removeAll()
            collecting = false
        }
        expectedCounter = (header.continuityCounter &+ 1) & 0xF
        var sections: [[UInt8]] = []
        var data = payload[...]
        if header.payloadUnitStart {
            guard let pointer = data.first else { return [] }
            data = data.dropFirst()
            if collecting {
                buffer += data.prefix(Int(pointer))
                drain(into: &sections)
            }
            buffer.removeAll(keepingCapacity: true)
            collecting = true
            data = data.dropFirst(Int(pointer))
        } else if !collecting {
            return []
        }
        buffer += data
        drain(into: &sections)
        if buffer.count > TSSectionAssembler.maximumSize {
            buffer.removeAll()
            collecting = false
        }
        return sections
    }

    /// The largest section held (a private section's limit, 4096 bytes).
    static let maximumSize = 4096

    /// Takes the whole sections at the start of the buffer; 0xFF where a section would
    /// begin is stuffing, which ends the packet's sections.
    private mutating func drain(into sections: inout [[UInt8]]) {
        while collecting, let first = buffer.first {
            if first == 0xFF {
                buffer.removeAll(keepingCapacity: true)
                collecting = false
                return
            }
            guard buffer.count >= 3 else { return }
            let length = Int(buffer[1] & 0x0F) << 8 | Int(buffer[2])
            guard buffer.count >= 3 + length else { return }
            let section = Array(buffer[0..<3 + length])
            buffer.removeFirst(3 + length)
            // The section syntax indicator says a CRC-32 ends it (always, for PAT and PMT).
            let ok = section[1] & 0x80 == 0 || section.withUnsafeBytes { OggCRC.update(0xFFFF_FFFF, $0) } == 0
            if ok { sections.append(section) }
        }
    }
}

/// The fields of a PES header that the demuxer uses (ISO/IEC 13818-1 §2.4.3.6).
struct PESHeader: Sendable, Equatable {
    var streamID: UInt8
    /// PES_packet_length: bytes after the length field; 0 when unbounded.
    var packetLength: Int
    /// Bytes of the whole header (up to the first payload byte).
    var headerLength: Int
    /// 33-bit presentation and decoding times, in 90 kHz ticks.
    var pts: Int64?
    var dts: Int64?

    /// Bytes needed to know the header's length.
    static let fixedSize = 9

    /// Reads the header at the start of `b`; `.needMore` when it is not all there.
    enum Result { case header(PESHeader), needMore, invalid }

    static func read(_ b: UnsafeRawBufferPointer) -> Result {
        guard b.count >= 6 else { return .needMore }
        guard b[0] == 0, b[1] == 0, b[2] == 1 else { return .invalid }
        let id = b[3]
        let length = Int(b[4]) << 8 | Int(b[5])
        // Stream IDs without the optional header (ISO/IEC 13818-1 Table 2-21).
        if [0xBC, 0xBE, 0xBF, 0xF0, 0xF1, 0xFF, 0xF2, 0xF8].contains(id) {
            return .header(PESHeader(streamID: id, packetLength: length, headerLength: 6))
        }
        guard b.count >= fixedSize else { return .needMore }
        guard b[6] & 0xC0 == 0x80 else { return .invalid }
        let total = 9 + Int(b[8])
        guard b.count >= total else { return .needMore }
        var h = PESHeader(streamID: id, packetLength: length, headerLength: total)
        let flags = b[7] >> 6
        if flags & 2 != 0, total >= 14 { h.pts = timestamp(b, at: 9) }
        if flags == 3, total >= 19 { h.dts = timestamp(b, at: 14) }
        if length != 0 && length + 6 < total { return .invalid }
        return .header(h)
    }

    /// A 33-bit timestamp in its five bytes, marker bits between.
    static func timestamp(_ b: UnsafeRawBufferPointer, at i: Int) -> Int64 {
        Int64(b[i] >> 1 & 7) << 30 | Int64(b[i + 1]) << 22 | Int64(b[i + 2] >> 1) << 15 | Int64(b[i + 3]) << 7 | Int64(b[i + 4] >> 1)
    }
}

/// Unwraps 33-bit timestamps into a monotonic 64-bit count: each new value is placed in
/// the 2^33 period nearest the previous one.
struct TimestampUnwrapper: Sendable {
    private var last: Int64?
    static let period: Int64 = 1 << 33

    mutating func unwrap(_ value: Int64) -> Int64 {
        guard let last else {
            self.last = value
            return value
        }
        let base = last - (last & (TimestampUnwrapper.period - 1))
        var best = base + value
        for candidate in [base - TimestampUnwrapper.period + value, base + TimestampUnwrapper.period + value]
            where abs(candidate - last) < abs(best - last)
        {
            best = candidate
        }
        self.last = best
        return best
    }

    /// A new time base (a discontinuity): the next value starts afresh.
    mutating func reset() { last = nil }
}

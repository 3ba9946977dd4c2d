/// The parametric stereo parameters of one frame, and what the next frame's deltas and
/// headers build on (ISO/IEC 14496-3 §8.4, ps_data; §8.6.4, their decoding).
///
/// The values are indices as coded: IID −7…7 (default quantisation) or −15…15 (fine), ICC
/// 0…7, IPD and OPD 0…7. Envelope e covers QMF slots borders[e] + 1 … borders[e + 1]
/// (borders[0] = −1), and the last border is always slot 31: a frame whose last envelope ends
/// earlier, or that has none, gets one more envelope that repeats the last values (§8.6.4).
struct PSParameters: Equatable, Sendable {
    /// The most envelopes a frame has, the one added to reach the frame's end included.
    static let maximumEnvelopes = 5
    static let bands = 34

    /// A header was read (PS starts with the first one).
    var headerSeen = false
    var enableIID = false
    var enableICC = false
    var enableExtension = false
    /// IPD/OPD from the last ps_extension that said; as FFmpeg's decoder does, a header that
    /// turns the extension off leaves it as it was.
    var enableIPDOPD = false
    /// iid_mode and icc_mode of the last header that enabled them (they stay when a header
    /// disables them: icc_mode still picks the mixing procedure).
    var iidMode = 0
    var iccMode = 0

    var frameClass = 0
    /// Envelopes of this frame (with the added one) and of the last frame.
    var envelopeCount = 0
    var previousEnvelopeCount = 0
    var borders = [Int](repeating: -1, count: maximumEnvelopes + 1)
    /// num_env as coded (0…4), before the envelope that reaches the frame's end is added.
    var codedEnvelopeCount = 0
    /// Per parameter (IID, ICC, IPD, OPD), bit e set when envelope e was coded in time direction.
    var timeCoded = SIMD4<UInt8>()
    /// [envelope × 34 + band].
    var iid = [Int8](repeating: 0, count: maximumEnvelopes * bands)
    var icc = [Int8](repeating: 0, count: maximumEnvelopes * bands)
    var ipd = [Int8](repeating: 0, count: maximumEnvelopes * bands)
    var opd = [Int8](repeating: 0, count: maximumEnvelopes * bands)
    /// The hybrid configuration of this frame and the last (34 bands or 10/20).
    var is34 = false
    var was34 = false

    static let bandCounts = [10, 20, 34, 10, 20, 34]
    static let phaseBandCounts = [5, 11, 17, 5, 11, 17]

    var iidBands: Int { Self.bandCounts[iidMode] }
    var iccBands: Int { Self.bandCounts[iccMode] }
    var ipdBands: Int { Self.phaseBandCounts[iidMode] }
    var fineIID: Bool { iidMode >= 3 }
    /// Mixing procedure R_b (icc_mode 3–5) rather than R_a.
    var procedureB: Bool { iccMode >= 3 }

    /// Why a payload was refused.
    enum Failure: Error, Equatable {
        case reservedMode
        case bordersNotIncreasing
        case invalidCode
        case indexOutOfRange
        case truncated
    }

    /// Takes `other`'s values into this value's own arrays, so that a decoder can read a
    /// payload into a spare copy of its parameters (and drop it if the payload is refused)
    /// without allocating.
    mutating func assign(_ other: PSParameters) {
        var (iid, icc, ipd, opd, borders) = (self.iid, self.icc, self.ipd, self.opd, self.borders)
        self = other
        // The old arrays are now only the locals': overwritten in place, then taken back.
        func take<T>(_ mine: inout [T], _ theirs: [T]) -> [T] {
            for i in mine.indices { mine[i] = theirs[i] }
            return mine
        }
        self.iid = take(&iid, other.iid)
        self.icc = take(&icc, other.icc)
        self.ipd = take(&ipd, other.ipd)
        self.opd = take(&opd, other.opd)
        self.borders = take(&borders, other.borders)
    }

    /// Reads one ps_data() into these parameters. When it throws, they are left part read:
    /// read into a copy (see ``assign(_:)``).
    mutating func read(_ r: inout PSBits) throws(Failure) {
        if r.bit() == 1 {
            enableIID = r.bit() == 1
            if enableIID {
                let mode = r.read(3)
                guard mode <= 5 else { throw .reservedMode }
                iidMode = mode
            }
            enableICC = r.bit() == 1
            if enableICC {
                let mode = r.read(3)
                guard mode <= 5 else { throw .reservedMode }
                iccMode = mode
            }
            enableExtension = r.bit() == 1
            headerSeen = true
        }
        frameClass = r.bit()
        previousEnvelopeCount = envelopeCount
        envelopeCount = [[0, 1, 2, 4], [1, 2, 3, 4]][frameClass][r.read(2)]
        codedEnvelopeCount = envelopeCount
        timeCoded = .zero
        borders[0] = -1
        for e in stride(from: 1, through: envelopeCount, by: 1) {
            if frameClass == 1 {
                borders[e] = r.read(5)
                guard borders[e] >= borders[e - 1] else { throw .bordersNotIncreasing }
            } else {
                // FIX_BORDERS: the frame split evenly, 32·e/num_env − 1.
                borders[e] = 32 * e / envelopeCount - 1
            }
        }

        if enableIID {
            let fine = fineIID, limit = fine ? 15 : 7
            for e in 0..<envelopeCount {
                let dt = r.bit() == 1
                if dt { timeCoded[0] |= 1 << UInt8(e) }
                let code = fine ? (dt ? PSHuffman.iidFineTime : PSHuffman.iidFineFrequency)
                    : (dt ? PSHuffman.iidDefaultTime : PSHuffman.iidDefaultFrequency)
                try readDeltas(&r, &iid, e, iidBands, dt, code, modulo: false) { abs($0) <= limit }
            }
        } else {
            for i in iid.indices { iid[i] = 0 }
        }
        if enableICC {
            for e in 0..<envelopeCount {
                let dt = r.bit() == 1
                if dt { timeCoded[1] |= 1 << UInt8(e) }
                try readDeltas(&r, &icc, e, iccBands, dt, dt ? PSHuffman.iccTime : PSHuffman.iccFrequency, modulo: false) {
                    $0 >= 0 && $0 <= 7
                }
            }
        } else {
            for i in icc.indices { icc[i] = 0 }
        }
        if enableExtension {
            var size = r.read(4)
            if size == 15 { size += r.read(8) }
            var left = size * 8
            while left > 7 {
                let id = r.read(2)
                left -= 2
                let start = r.position
                if id == 0 {
                    try readPhases(&r)
                }
                // Other extension ids (reserved) are skipped whole.
                let used = id == 0 ? r.position - start : left
                guard used <= left else { throw .truncated }
                r.position = start + used
                left -= used
            }
            r.skip(left)
        }
        guard !r.overrun else { throw .truncated }

        completeEnvelopes()
        // The added envelope may repeat a last frame quantised otherwise.
        if enableIID {
            let limit: Int8 = fineIID ? 15 : 7
            let last = (envelopeCount - 1) * Self.bands
            guard iid[last..<last + Self.bands].allSatisfy({ abs($0) <= limit }) else { throw .indexOutOfRange }
        }
        was34 = is34
        if enableIID || enableICC {
            is34 = (enableIID && iidBands == 34) || (enableICC && iccBands == 34)
        }
        if !enableIPDOPD {
            for i in ipd.indices { ipd[i] = 0; opd[i] = 0 }
        }
    }

    /// What a frame without valid parameters does: no new envelope, so the last values hold
    /// over the whole frame (num_env 0 of §8.6.4).
    mutating func keep() {
        previousEnvelopeCount = envelopeCount
        envelopeCount = 0
        codedEnvelopeCount = 0
        timeCoded = .zero
        was34 = is34
        completeEnvelopes()
    }

    /// ps_extension() with ps_extension_id 0: IPD and OPD per envelope.
    private mutating func readPhases(_ r: inout PSBits) throws(Failure) {
        enableIPDOPD = r.bit() == 1
        if enableIPDOPD {
            for e in 0..<envelopeCount {
                var dt = r.bit() == 1
                if dt { timeCoded[2] |= 1 << UInt8(e) }
                try readDeltas(&r, &ipd, e, ipdBands, dt, dt ? PSHuffman.ipdTime : PSHuffman.ipdFrequency, modulo: true) { _ in true }
                dt = r.bit() == 1
                if dt { timeCoded[3] |= 1 << UInt8(e) }
                try readDeltas(&r, &opd, e, ipdBands, dt, dt ? PSHuffman.opdTime : PSHuffman.opdFrequency, modulo: true) { _ in true }
            }
        }
        _ = r.bit()  // reserved_ps
    }

    /// One envelope's values: in time direction each band's delta is from the same band of
    /// the previous envelope (the last frame's last one for the first), in frequency direction
    /// from the band below (0 for the first). IPD and OPD wrap modulo 8 (§8.6.4).
    private func readDeltas(_ r: inout PSBits, _ values: inout [Int8], _ e: Int, _ count: Int, _ dt: Bool,
                            _ code: PSHuffman, modulo: Bool, valid: (Int) -> Bool) throws(Failure) {
        let previous = max(e > 0 ? e - 1 : previousEnvelopeCount - 1, 0)
        var v = 0
        for b in 0..<count {
            guard let d = code.decode(&r) else { throw r.overrun ? .truncated : .invalidCode }
            v = (dt ? Int(values[previous * Self.bands + b]) : v) + d
            if modulo { v &= 7 }
            guard valid(v) else { throw .indexOutOfRange }
            values[e * Self.bands + b] = Int8(v)
        }
    }

    /// Adds the envelope that reaches the frame's end when the last border is before slot 31
    /// or no envelope was sent, with the values of the last envelope (of this frame, or of the
    /// last frame).
    private mutating func completeEnvelopes() {
        guard envelopeCount == 0 || borders[envelopeCount] < 31 else { return }
        let source = envelopeCount > 0 ? envelopeCount - 1 : previousEnvelopeCount - 1
        if source >= 0 && source != envelopeCount {
            let to = envelopeCount * Self.bands, from = source * Self.bands
            for b in 0..<Self.bands {
                if enableIID { iid[to + b] = iid[from + b] }
                if enableICC { icc[to + b] = icc[from + b] }
                if enableIPDOPD {
                    ipd[to + b] = ipd[from + b]
                    opd[to + b] = opd[from + b]
                }
            }
        }
        envelopeCount += 1
        borders[envelopeCount] = 31
    }
}

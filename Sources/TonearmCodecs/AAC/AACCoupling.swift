#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A coupling_channel_element (Table 4.8): one more channel's spectrum,
/// added with its own gains to target channels, either to their spectra (dependent
/// coupling, before or after their TNS) or to their output (independently switched,
/// after the IMDCT). The targets are named by element type and tag; a CCE may come before
/// or after them in the frame, so coupling waits for the frame's end.
final class AACCouplingElement {
    enum Point { case beforeTNS, betweenTNSAndIMDCT, afterIMDCT }
    struct Target {
        var isPair: Bool
        var tag: Int
        /// cc_l, cc_r of a pair (a single channel counts as left only).
        var left: Bool
        var right: Bool
    }

    let stream = AACChannelStream()
    /// The overlap of an independently switched element, which is synthesised itself.
    let state = AACChannelState(objectType: 2)
    let output: UnsafeMutablePointer<Float> = .allocate(capacity: 1024)
    var point = Point.beforeTNS
    var targets: [Target] = []
    /// Per gain element list: per group × 64 bands (dependent), or one gain (independent).
    var gains: [[Float]] = []

    deinit { output.deallocate() }

    /// The gain_element_scale steps, 2^(2^(s−3)).
    static let scales: [Float] = [1.0905077326652577, 1.189207115002721, 1.4142135623730951, 2]

    /// Reads the element after its tag; its individual_channel_stream decodes into `stream`.
    /// The targets are set last, with their gains: an element that fails to read couples
    /// nothing (its targets from an earlier frame would name lists it no longer has).
    func read(_ r: inout AACBits, _ t: AACStreamTables, random: inout UInt32) throws(AACDamage) {
        targets.removeAll(keepingCapacity: true)
        gains.removeAll(keepingCapacity: true)
        let independent = r.bit()
        let coupled = r.read(3) + 1
        var targets: [Target] = []
        var lists = 0
        for _ in 0..<coupled {
            lists += 1
            let isPair = r.bit()
            let tag = r.read(4)
            var left = true, right = false
            if isPair {
                left = r.bit()
                right = r.bit()
                if left && right { lists += 1 }
            }
            targets.append(Target(isPair: isPair, tag: tag, left: left, right: right))
        }
        let domain = r.bit()
        point = independent ? .afterIMDCT : domain ? .betweenTNSAndIMDCT : .beforeTNS
        let signed = r.bit()
        let scale = Self.scales[r.read(2)]
        let globalGain = r.read(8)
        try AACChannelStream.readInfo(&r, t, into: &stream.info)
        try stream.read(&r, t, globalGain: globalGain, random: &random)
        let book = AACHuffman.scaleFactors
        let info = stream.info
        gains = Array(repeating: [Float](repeating: 1, count: independent ? 1 : 8 * 64), count: lists)
        // The first list's gain is 1; each further list has a common gain or one per band
        // (differences along the bands; with gain_element_sign, the lowest bit is the sign).
        for c in 1..<lists {
            let common = independent ? true : r.bit()
            if common {
                let g = Float(book.decode(&r) - 60)
                let gain = powf(scale, -g)
                for i in 0..<gains[c].count { gains[c][i] = gain }
            } else {
                var sum = 0
                var gain: Float = 1
                for g in 0..<info.groupCount {
                    for b in 0..<info.maxSFB where stream.bandTypes[g * 64 + b] != AACBandType.zero {
                        let d = book.decode(&r) - 60
                        if d != 0 {
                            sum += d
                            var v = sum, sign: Float = 1
                            if signed {
                                if v & 1 == 1 { sign = -1 }
                                v >>= 1
                            }
                            gain = powf(scale, -Float(v)) * sign
                        }
                        gains[c][g * 64 + b] = gain
                    }
                }
            }
            guard !r.overrun else { throw .truncated }
        }
        if independent {
            gains = gains.map { [$0[0]] }
        }
        self.targets = targets
    }

    /// The gain lists of the targets, in order: for each target element of type `isPair`
    /// and `tag`, the lists its left and right channels take (nil where not coupled).
    func lists(forPair isPair: Bool, tag: Int) -> [(left: Int?, right: Int?)] {
        var index = 0
        var found: [(left: Int?, right: Int?)] = []
        for target in targets {
            let first = index
            // A pair with cc_l and cc_r both clear couples both channels with one list.
            let both = target.isPair && !target.left && !target.right
            let count = target.isPair && target.left && target.right ? 2 : 1
            if target.isPair == isPair && target.tag == tag {
                if !target.isPair {
                    found.append((first, nil))
                } else if both {
                    found.append((first, first))
                } else {
                    found.append((target.left ? first : nil, target.right ? (target.left ? first + 1 : first) : nil))
                }
            }
            index += count
        }
        return found
    }

    /// Adds the element's spectrum, with a gain list, to a target's (dependent coupling).
    func addSpectrum(to s: AACChannelStream, list: Int, tables t: AACStreamTables) {
        let info = stream.info
        let bands = t.bands(info)
        let gain = gains[list]
        var window = 0
        for g in 0..<info.groupCount {
            let length = info.groupLength(g)
            for b in 0..<info.maxSFB where stream.bandTypes[g * 64 + b] != AACBandType.zero {
                let k = gain[g * 64 + b]
                for w in window..<window + length {
                    for i in bands[b]..<bands[b + 1] { s.spectrum[w * 128 + i] += k * stream.spectrum[w * 128 + i] }
                }
            }
            window += length
        }
    }

    /// Adds the element's output, with a gain list's gain, to a target's (independent coupling).
    func addOutput(to out: UnsafeMutablePointer<Float>, list: Int) {
        let k = gains[list][0]
        for i in 0..<1024 { out[i] += k * output[i] }
    }
}

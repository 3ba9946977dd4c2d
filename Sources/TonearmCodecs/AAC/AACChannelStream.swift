#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a syntax element could not be decoded; the frame is then concealed.
enum AACDamage: Error {
    case invalid(String)
    case truncated
}

/// The window sequences (window_sequence).
enum AACWindowSequence: Int {
    case onlyLong = 0, longStart = 1, eightShort = 2, longStop = 3
}

/// Band types beyond the 11 spectrum codebooks.
enum AACBandType {
    static let zero: UInt8 = 0
    static let reserved: UInt8 = 12
    static let noise: UInt8 = 13
    static let intensityOutOfPhase: UInt8 = 14
    static let intensityInPhase: UInt8 = 15
}

/// ics_info (Table 4.6): the window sequence and shape, the bands coded, the
/// grouping of short windows and AAC Main's prediction flags.
struct AACICSInfo {
    var windowSequence: AACWindowSequence = .onlyLong
    var windowShape = 0
    var maxSFB = 0
    /// 1 for long windows; up to 8 groups of short windows.
    var groupCount = 1
    var groupLengths: (Int, Int, Int, Int, Int, Int, Int, Int) = (1, 0, 0, 0, 0, 0, 0, 0)
    /// predictor_data_present: AAC Main's prediction (the reset group and
    /// prediction_used follow), or AAC LTP's ltp_data_present.
    var predictionPresent = false
    var predictorReset = 0
    /// prediction_used, bit b for band b (41 bands at most). A bit set rather than an array
    /// keeps the struct plain data, so that copying it costs no reference counting.
    var predictionUsed: UInt64 = 0
    // AAC LTP: ltp_data_present for the first channel (the second's is in the CPE).
    var ltp = AACLTPData()

    var isShort: Bool { windowSequence == .eightShort }
    var windowCount: Int { isShort ? 8 : 1 }

    func groupLength(_ g: Int) -> Int {
        withUnsafeBytes(of: groupLengths) { $0.load(fromByteOffset: g * MemoryLayout<Int>.stride, as: Int.self) }
    }

    mutating func setGroupLength(_ g: Int, _ v: Int) {
        withUnsafeMutableBytes(of: &groupLengths) { $0.storeBytes(of: v, toByteOffset: g * MemoryLayout<Int>.stride, as: Int.self) }
    }
}

/// ltp_data: the lag, the gain and which bands use the prediction.
struct AACLTPData {
    var present = false
    var lag = 0
    var coefficient: Float = 0
    /// ltp_long_used, bit b for band b below ``AACLTP/maximumBands``.
    var used: UInt64 = 0
}

/// The tns_data of one channel: per window up to three filters,
/// each with its range, direction and LPC coefficients (already converted).
struct AACTNSData {
    var present = false
    /// Per window: filter count.
    var filterCount = [Int](repeating: 0, count: 8)
    /// Per window × 4 filters: length in bands, order, direction (1 = downward).
    var length = [Int](repeating: 0, count: 32)
    var order = [Int](repeating: 0, count: 32)
    var downward = [Bool](repeating: false, count: 32)
    /// Per window × 4 filters × 20: the LPC coefficients a₁…a_order.
    var lpc = [Float](repeating: 0, count: 32 * 20)
}

/// What the decoder knows of the stream while parsing: the band tables and the object type.
struct AACStreamTables {
    let samplingIndex: Int
    let longBands: [Int]
    let shortBands: [Int]
    let objectType: Int
    let tnsMaxBandsLong: Int
    let tnsMaxBandsShort: Int
    let tnsMaxOrderLong: Int
    let predictionMaxBands: Int

    init(samplingIndex: Int, objectType: Int) {
        self.samplingIndex = samplingIndex
        self.objectType = objectType
        (longBands, shortBands) = AACTables.bands(samplingIndex)
        tnsMaxBandsLong = AACTables.tnsMaxBandsLong[samplingIndex]
        tnsMaxBandsShort = AACTables.tnsMaxBandsShort[samplingIndex]
        tnsMaxOrderLong = objectType == 1 ? 20 : 12
        predictionMaxBands = AACTables.predictionMaxBands[samplingIndex]
    }

    func bands(_ info: AACICSInfo) -> [Int] { info.isShort ? shortBands : longBands }
}

/// One channel's individual_channel_stream: the parsed side
/// information and the dequantised spectrum, window after window (window w's lines at
/// 128·w for short windows), before the stereo tools, TNS and the filter bank.
final class AACChannelStream {
    var info = AACICSInfo()
    /// Per group × 64 bands. (Pointers, not arrays: the hot loops read them without the
    /// exclusivity checks a class's stored arrays cost.)
    let bandTypes: UnsafeMutablePointer<UInt8>
    /// Per group × 64 bands: the gain of the band (2^((sf − 100)/4) for coded bands, the
    /// intensity scale 2^(−position/4), or the noise energy 2^(energy/4)).
    let gains: UnsafeMutablePointer<Float>
    var tns = AACTNSData()
    /// The last stream read had pulse data.
    private(set) var hadPulses = false
    /// The noise and intensity bands of the last stream read (all groups).
    private(set) var noiseBands = 0
    private(set) var intensityBands = 0
    let spectrum: UnsafeMutablePointer<Float>
    /// The quantised values, before dequantisation.
    private let quantised: UnsafeMutablePointer<Int32>

    init() {
        spectrum = .allocate(capacity: 1024)
        spectrum.initialize(repeating: 0, count: 1024)
        quantised = .allocate(capacity: 1024)
        quantised.initialize(repeating: 0, count: 1024)
        bandTypes = .allocate(capacity: 8 * 64)
        bandTypes.initialize(repeating: 0, count: 8 * 64)
        gains = .allocate(capacity: 8 * 64)
        gains.initialize(repeating: 0, count: 8 * 64)
    }

    deinit {
        spectrum.deallocate()
        quantised.deallocate()
        bandTypes.deallocate()
        gains.deallocate()
    }

    /// ics_info.
    static func readInfo(_ r: inout AACBits, _ t: AACStreamTables, into info: inout AACICSInfo) throws(AACDamage) {
        _ = r.read(1)  // ics_reserved_bit: ffmpeg and the reference decoders ignore it
        info.windowSequence = AACWindowSequence(rawValue: r.read(2))!
        info.windowShape = r.read(1)
        info.predictionPresent = false
        info.predictorReset = 0
        info.ltp.present = false
        if info.isShort {
            info.maxSFB = r.read(4)
            let grouping = r.read(7)
            info.groupCount = 1
            info.groupLengths = (1, 0, 0, 0, 0, 0, 0, 0)
            // scale_factor_grouping: bit 6 − (w − 1) set puts window w in the previous group.
            for w in 1..<8 {
                if grouping >> (7 - w) & 1 == 1 {
                    info.setGroupLength(info.groupCount - 1, info.groupLength(info.groupCount - 1) + 1)
                } else {
                    info.setGroupLength(info.groupCount, 1)
                    info.groupCount += 1
                }
            }
            guard info.maxSFB <= t.shortBands.count - 1 else {
                throw .invalid("max_sfb \(info.maxSFB) beyond the \(t.shortBands.count - 1) short-window bands")
            }
        } else {
            info.maxSFB = r.read(6)
            info.groupCount = 1
            info.groupLengths = (1, 0, 0, 0, 0, 0, 0, 0)
            guard info.maxSFB <= t.longBands.count - 1 else {
                throw .invalid("max_sfb \(info.maxSFB) beyond the \(t.longBands.count - 1) long-window bands")
            }
            if r.bit() {
                switch t.objectType {
                case 1:
                    // AAC Main: prediction.
                    info.predictionPresent = true
                    if r.bit() {
                        info.predictorReset = r.read(5)
                        guard info.predictorReset >= 1 && info.predictorReset <= 30 else {
                            throw .invalid("predictor reset group \(info.predictorReset)")
                        }
                    }
                    let n = min(info.maxSFB, t.predictionMaxBands)
                    info.predictionUsed = 0
                    for b in 0..<n where r.bit() { info.predictionUsed |= 1 << UInt64(b) }
                case 4:
                    // AAC LTP: predictor_data_present announces ltp_data_present.
                    info.predictionPresent = true
                    if r.bit() { readLTP(&r, info, into: &info.ltp) }
                default:
                    throw .invalid("predictor_data_present in an object type \(t.objectType) stream")
                }
            }
        }
    }

    /// ltp_data of a long-window frame (ics_info carries no
    /// predictor data in eight-short frames). The caller has read ltp_data_present.
    static func readLTP(_ r: inout AACBits, _ info: AACICSInfo, into ltp: inout AACLTPData) {
        ltp.present = true
        ltp.lag = r.read(11)
        ltp.coefficient = AACLTP.coefficients[r.read(3)]
        let n = min(info.maxSFB, AACLTP.maximumBands)
        ltp.used = 0
        for b in 0..<n where r.bit() { ltp.used |= 1 << UInt64(b) }
    }

    /// The rest of an individual_channel_stream after ics_info: section data, scale factors,
    /// pulses, TNS and the spectrum, dequantised. `random` is the PNS generator's state.
    func read(_ r: inout AACBits, _ t: AACStreamTables, globalGain: Int, random: inout UInt32) throws(AACDamage) {
        // One copy of the side information for the whole stream: reading the class's
        // property in the loops would check exclusive access every time.
        let info = self.info
        let bands = t.bands(info)
        try readSections(&r, info)
        try readScaleFactors(&r, info, globalGain: globalGain)
        // pulse_data (Table 4.7): long windows only.
        var pulses: [(offset: Int, amplitude: Int)] = []
        if r.bit() {
            guard !info.isShort else { throw .invalid("pulse data in a short-window frame") }
            let count = r.read(2) + 1
            let startBand = r.read(6)
            guard startBand < bands.count - 1 else { throw .invalid("pulse start band \(startBand)") }
            var offset = bands[startBand]
            for _ in 0..<count {
                offset += r.read(5)
                guard offset < 1024 else { throw .invalid("pulse offset \(offset)") }
                pulses.append((offset, r.read(4)))
            }
        }
        hadPulses = !pulses.isEmpty
        tns.present = r.bit()
        if tns.present { try readTNS(&r, t) }
        if r.bit() { throw .invalid("gain control data (AAC SSR) in a general audio stream") }
        guard !r.overrun else { throw .truncated }
        try bands.withUnsafeBufferPointer { (bands) throws(AACDamage) in
            try readSpectrum(&r, info, bands: bands, pulses: pulses)
            if noiseBands > 0 { addNoise(info, bands: bands, random: &random) }
        }
    }

    /// section_data.
    private func readSections(_ r: inout AACBits, _ info: AACICSInfo) throws(AACDamage) {
        let lengthBits = info.isShort ? 3 : 5
        let escape = (1 << lengthBits) - 1
        let bandTypes = self.bandTypes
        for g in 0..<info.groupCount {
            var k = 0
            while k < info.maxSFB {
                let book = UInt8(r.read(4))
                guard book != AACBandType.reserved else { throw .invalid("reserved codebook 12") }
                var length = 0
                while true {
                    let increment = r.read(lengthBits)
                    length += increment
                    if increment != escape { break }
                    guard !r.overrun, length <= 64 else { throw .truncated }
                }
                guard !r.overrun else { throw .truncated }
                guard length > 0 else { throw .invalid("an empty section") }
                guard k + length <= info.maxSFB else {
                    throw .invalid("a section ends at band \(k + length), beyond max_sfb \(info.maxSFB)")
                }
                (bandTypes + g * 64 + k).update(repeating: book, count: length)
                k += length
            }
        }
    }

    /// scale_factor_data: differences from the global gain, the
    /// intensity positions and the noise energies, each its own chain. Counts the noise
    /// and intensity bands.
    private func readScaleFactors(_ r: inout AACBits, _ info: AACICSInfo, globalGain: Int) throws(AACDamage) {
        var scale = globalGain, position = 0, noise = globalGain - 90
        var noiseCount = 0, intensityCount = 0
        let tables = AACSpectralTables.shared
        let book = tables.scaleFactors
        let bandTypes = self.bandTypes, gains = self.gains
        // 2^(x/4) at x + 100, for x = −100…155: the ranges below keep every index in it.
        let quarterPowers = tables.quarterPowers
        var bits = AACBitWindow(r)
        for g in 0..<info.groupCount {
            for b in 0..<info.maxSFB {
                let i = g * 64 + b
                let type = bandTypes[i]
                if type == AACBandType.zero {
                    gains[i] = 0
                    continue
                }
                let e = AACSpectralDecoder.codeword(bits.peek32, book)
                let difference = Int(e &>> 8) - 60
                switch type {
                case AACBandType.intensityInPhase, AACBandType.intensityOutOfPhase:
                    bits.skip(Int(e & 0xFF))
                    position += difference
                    intensityCount += 1
                    // 2^(−position/4)
                    gains[i] = quarterPowers[100 - min(max(position, -155), 100)]
                case AACBandType.noise:
                    // The first noise energy is a 9-bit word, the others codewords.
                    if noiseCount == 0 {
                        noise += bits.read(9) - 256
                    } else {
                        bits.skip(Int(e & 0xFF))
                        noise += difference
                    }
                    noiseCount += 1
                    gains[i] = quarterPowers[min(max(noise, -100), 155) + 100]
                default:
                    bits.skip(Int(e & 0xFF))
                    scale += difference
                    guard scale >= 0 && scale <= 255 else { throw .invalid("scale factor \(scale) out of range") }
                    // 2^((scale − 100)/4)
                    gains[i] = quarterPowers[scale]
                }
            }
        }
        r.position = bits.position
        guard !r.overrun else { throw .truncated }
        noiseBands = noiseCount
        intensityBands = intensityCount
    }

    /// tns_data, with the coefficients turned into LPC form.
    private func readTNS(_ r: inout AACBits, _ t: AACStreamTables) throws(AACDamage) {
        let short = info.isShort
        let maxOrder = short ? 7 : t.tnsMaxOrderLong
        var parcor = [Float](repeating: 0, count: 20)
        for w in 0..<info.windowCount {
            let n = r.read(short ? 1 : 2)
            tns.filterCount[w] = n
            guard n > 0 else { continue }
            let resolution = r.read(1) + 3
            for f in 0..<n {
                let k = w * 4 + f
                tns.length[k] = r.read(short ? 4 : 6)
                let order = r.read(short ? 3 : 5)
                guard order <= maxOrder else { throw .invalid("TNS order \(order) beyond \(maxOrder)") }
                tns.order[k] = order
                guard order > 0 else { continue }
                tns.downward[k] = r.bit()
                let compress = r.read(1)
                let width = resolution - compress
                // Inverse quantisation: arcsine-spaced reflection coefficients.
                let half = Float(1 << (resolution - 1))
                let iqfac = (half - 0.5) / (Float.pi / 2), iqfacNegative = (half + 0.5) / (Float.pi / 2)
                for i in 0..<order {
                    let raw = r.read(width)
                    let q = raw >= 1 << (width - 1) ? raw - (1 << width) : raw
                    parcor[i] = sinf(Float(q) / (q >= 0 ? iqfac : iqfacNegative))
                }
                // Reflection coefficients to the direct-form a₁…a_order (step-up recursion).
                var a = [Float](repeating: 0, count: 21)
                for m in 1...order {
                    let km = parcor[m - 1]
                    var b = a
                    for i in 1..<m { b[i] = a[i] + km * a[m - i] }
                    a = b
                    a[m] = km
                }
                for i in 0..<order { tns.lpc[k * 20 + i] = a[i + 1] }
            }
        }
        guard !r.overrun else { throw .truncated }
    }

    /// spectral_data, dequantised as it is decoded (``AACSpectralDecoder``): sign · |q|^(4/3)
    /// · gain into `spectrum`, window after window; bands that are not coded are zero
    /// (noise bands are filled later). A band that pulses add to goes the long way: its
    /// integer values, the pulses, then dequantisation.
    private func readSpectrum(_ r: inout AACBits, _ info: AACICSInfo, bands: UnsafeBufferPointer<Int>,
                              pulses: [(offset: Int, amplitude: Int)]) throws(AACDamage)
    {
        let windows = info.windowCount
        let top = bands[info.maxSFB]
        let spectrum = self.spectrum, bandTypes = self.bandTypes, gains = self.gains
        for w in 0..<windows {
            (spectrum + w * 128 + top).update(repeating: 0, count: (windows == 1 ? 1024 : 128) - top)
        }
        let tables = AACSpectralTables.shared
        // Bands holding a pulse (long windows only, so one group of one window).
        var pulseBands: UInt64 = 0
        for p in pulses {
            for b in 0..<info.maxSFB where bands[b] <= p.offset && p.offset < bands[b + 1] { pulseBands |= 1 << UInt64(b) }
        }
        var window = 0
        for g in 0..<info.groupCount {
            let length = info.groupLength(g)
            for b in 0..<info.maxSFB {
                let book = Int(bandTypes[g * 64 + b]), gain = gains[g * 64 + b]
                let start = bands[b], width = bands[b + 1] - start
                if book == 0 || book > 11 {
                    for w in window..<window + length { (spectrum + w * 128 + start).update(repeating: 0, count: width) }
                    continue
                }
                if pulseBands >> UInt64(b) & 1 != 0 {
                    try readPulseBand(&r, book: book, gain: gain, start: start, width: width, pulses: pulses,
                                      pow43: tables.powerFourThirds)
                } else {
                    for w in window..<window + length {
                        try AACSpectralDecoder.decode(&r, book: book, gain: gain, into: spectrum + w * 128 + start,
                                                      count: width, tables: tables)
                    }
                }
                guard !r.overrun else { throw .truncated }
            }
            window += length
        }
    }

    /// A long window's band with pulses: its quantised values, the pulses added to their
    /// magnitudes (ISO/IEC 14496-3 4.6.3.3: pulses apply before the inverse quantisation),
    /// then sign · |q|^(4/3) · gain.
    private func readPulseBand(_ r: inout AACBits, book: Int, gain: Float, start: Int, width: Int,
                               pulses: [(offset: Int, amplitude: Int)], pow43: UnsafePointer<Float>) throws(AACDamage)
    {
        let q = quantised + start
        try AACSpectrum.decode(&r, book: book, into: q, count: width)
        for p in pulses where p.offset >= start && p.offset < start + width {
            let v = q[p.offset - start]
            q[p.offset - start] = v > 0 ? v + Int32(p.amplitude) : v - Int32(p.amplitude)
        }
        let out = spectrum + start
        for k in 0..<width {
            let v = q[k]
            let m = pow43[Int(min(v.magnitude, 8191))] * gain
            out[k] = Float(bitPattern: m.bitPattern | UInt32(bitPattern: v) & 0x8000_0000)
        }
    }

    /// PNS: noise bands get pseudo-random values scaled to the band's energy. The generator
    /// and its order (band after band, window after window, channel after channel) are
    /// FFmpeg's, so that a decode matches its noise exactly: the standard leaves the
    /// generator free. It runs once the whole spectrum has decoded, so that a damaged
    /// stream leaves the generator where it was.
    private func addNoise(_ info: AACICSInfo, bands: UnsafeBufferPointer<Int>, random: inout UInt32) {
        let spectrum = self.spectrum, bandTypes = self.bandTypes, gains = self.gains
        var window = 0
        for g in 0..<info.groupCount {
            let length = info.groupLength(g)
            for b in 0..<info.maxSFB where bandTypes[g * 64 + b] == AACBandType.noise {
                let gain = gains[g * 64 + b]
                let start = bands[b], width = bands[b + 1] - bands[b]
                for w in window..<window + length {
                    let out = spectrum + w * 128 + start
                    var energy: Float = 0
                    for k in 0..<width {
                        random = random &* 1664525 &+ 1013904223
                        let v = Float(Int32(bitPattern: random))
                        out[k] = v
                        energy += v * v
                    }
                    let scale = gain / energy.squareRoot()
                    for k in 0..<width { out[k] *= scale }
                }
            }
            window += length
        }
    }
}

/// Spectrum codeword decoding: the values a codebook index stands for.
enum AACSpectrum {
    /// Per codebook 1…11, per index: the values, one byte each (as Int8), first value lowest.
    static let values: [[UInt32]] = {
        var all: [[UInt32]] = [[]]
        // (values per codeword, modulus, signed offset)
        let shapes: [(Int, Int, Int)] = [(4, 3, 1), (4, 3, 1), (4, 3, 0), (4, 3, 0), (2, 9, 4), (2, 9, 4),
                                         (2, 8, 0), (2, 8, 0), (2, 13, 0), (2, 13, 0), (2, 17, 0)]
        for (count, modulus, offset) in shapes {
            let entries = Int(pow(Double(modulus), Double(count)))
            all.append((0..<entries).map { index in
                var packed: UInt32 = 0
                var rest = index
                for j in stride(from: count - 1, through: 0, by: -1) {
                    let v = rest % modulus - offset
                    rest /= modulus
                    packed |= UInt32(UInt8(bitPattern: Int8(v))) << UInt32(8 * j)
                }
                return packed
            })
        }
        return all
    }()

    /// Decodes `count` (a multiple of 4) values of `book` into `out`.
    static func decode(_ r: inout AACBits, book: Int, into out: UnsafeMutablePointer<Int32>, count: Int) throws(AACDamage) {
        let huffman = AACHuffman.spectrum[book]
        let perCodeword = book <= 4 ? 4 : 2
        let unsigned = book == 3 || book == 4 || book >= 7
        let escapes = book == 11
        let ok: Bool = huffman.entries.withUnsafeBufferPointer { entries in
            values[book].withUnsafeBufferPointer { table in
                let root = UInt32(huffman.rootBits)
                var k = 0
                while k < count {
                    // The codeword (AACHuffman.decode, inlined over the table).
                    let w = r.peek32()
                    var e = entries[Int(w &>> (32 &- root))]
                    if e & 0x8000_0000 != 0 {
                        e = entries[Int((e &>> 8) & 0x7F_FFFF) &+ Int((w &<< root) &>> (32 &- (e & 0xFF)))]
                    }
                    r.position &+= Int(e & 0xFF)
                    let packed = table[Int(e &>> 8)]
                    var nonzero = 0
                    for j in 0..<perCodeword {
                        let v = Int32(Int8(bitPattern: UInt8(truncatingIfNeeded: packed &>> UInt32(8 &* j))))
                        out[k &+ j] = v
                        nonzero &+= v != 0 ? 1 : 0
                    }
                    if unsigned && nonzero > 0 {
                        // The sign bits, in order, one per nonzero value.
                        var signs = UInt32(r.read(nonzero)) &<< UInt32(32 &- nonzero)
                        for j in 0..<perCodeword where out[k &+ j] != 0 {
                            if signs & 0x8000_0000 != 0 { out[k &+ j] = -out[k &+ j] }
                            signs &<<= 1
                        }
                        if escapes {
                            for j in 0..<2 where out[k &+ j].magnitude == 16 {
                                // escape_sequence: N ones, a zero, then an (N + 4)-bit word: 2^(N+4) + word.
                                let ones = (~r.peek32()).leadingZeroBitCount
                                guard ones <= 8 else { return false }
                                r.skip(ones &+ 1)
                                let v = Int32(1 &<< (ones &+ 4) &+ r.read(ones &+ 4))
                                out[k &+ j] = out[k &+ j] < 0 ? -v : v
                            }
                        }
                    }
                    k &+= perCodeword
                    if r.overrun { return false }
                }
                return true
            }
        }
        guard ok else { throw r.overrun ? .truncated : .invalid("an escape beyond 8191") }
    }
}

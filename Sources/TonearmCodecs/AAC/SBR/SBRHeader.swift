/// sbr_header (ISO/IEC 14496-3 §4.4.2.8, Table 4.63): the parameters of the frequency band
/// tables and of the HF adjustment. Fields absent from a header (bs_header_extra_1 or
/// bs_header_extra_2 clear) take the standard's defaults.
struct SBRHeader: Equatable, Sendable {
    var ampRes = 1
    var startFrequency = 0
    var stopFrequency = 0
    var crossoverBand = 0
    var frequencyScale = 2
    var alterScale = 1
    var noiseBands = 2
    var limiterBands = 2
    var limiterGains = 2
    var interpolateFrequency = 1
    var smoothingMode = 1
    /// Whether the header sent the optional groups (bs_header_extra_1, bs_header_extra_2).
    var extra1 = false
    var extra2 = false

    init() {}

    init(startFrequency: Int, stopFrequency: Int, crossoverBand: Int = 0, frequencyScale: Int = 2,
         alterScale: Int = 1, noiseBands: Int = 2, limiterBands: Int = 2) {
        self.startFrequency = startFrequency
        self.stopFrequency = stopFrequency
        self.crossoverBand = crossoverBand
        self.frequencyScale = frequencyScale
        self.alterScale = alterScale
        self.noiseBands = noiseBands
        self.limiterBands = limiterBands
    }

    /// Reads the fields after bs_header_flag.
    init(_ r: inout SBRBits) {
        ampRes = r.read(1)
        startFrequency = r.read(4)
        stopFrequency = r.read(4)
        crossoverBand = r.read(3)
        r.skip(2)  // bs_reserved
        extra1 = r.bit()
        extra2 = r.bit()
        if extra1 {
            frequencyScale = r.read(2)
            alterScale = r.read(1)
            noiseBands = r.read(2)
        }
        if extra2 {
            limiterBands = r.read(2)
            limiterGains = r.read(2)
            interpolateFrequency = r.read(1)
            smoothingMode = r.read(1)
        }
    }

    /// Whether going from `self` to `other` resets the SBR tool (§4.6.18.3.1: a change of
    /// any field the master frequency table depends on). The limiter, interpolation,
    /// smoothing and amplitude resolution change without a reset.
    func needsReset(to other: SBRHeader) -> Bool {
        startFrequency != other.startFrequency || stopFrequency != other.stopFrequency
            || frequencyScale != other.frequencyScale || alterScale != other.alterScale
            || crossoverBand != other.crossoverBand || noiseBands != other.noiseBands
    }
}

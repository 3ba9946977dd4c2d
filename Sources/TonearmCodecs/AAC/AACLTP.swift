/// AAC LTP's long-term prediction (ISO/IEC 14496-3 §4.6.8 of the LTP tool).
enum AACLTP {
    /// The eight LTP gains of ltp_coef (Table 4.147).
    static let coefficients: [Float] = [0.570829, 0.696616, 0.813004, 0.911304, 0.984900, 1.067894, 1.194601, 1.369533]
}

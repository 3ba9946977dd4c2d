extension Int64 {
    /// A Double from untrusted numbers (a file's tables, sizes and rates) as an Int64,
    /// truncated toward zero and held within ±2^62 so that sums of a few stay in range;
    /// NaN gives 0. Never traps, unlike `Int64(_:)`.
    @inlinable
    public init(saturating x: Double) {
        guard x.isFinite else {
            self = x.isNaN ? 0 : (x > 0 ? 1 << 62 : -(1 << 62))
            return
        }
        self = Int64(Swift.max(-4.6e18, Swift.min(4.6e18, x)))
    }
}

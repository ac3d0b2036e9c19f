/// A token bucket of docs/protocol.md §10's limits, kept as one number per bucket: the time at which it
/// would be full again, in milliseconds (the generic cell rate algorithm). Taking a token moves that time
/// one interval later; the bucket is empty when it would move past `burst` intervals ahead of now. A
/// bucket never stored reads as full (time 0), and one full long ago stays full: the time only matters
/// when it is ahead of now.
package struct SendBucket: Sendable, Hashable {
    /// Milliseconds between two tokens.
    package let interval: Int64
    /// Tokens a full bucket holds.
    package let burst: Int64

    /// nil when either number is 0: the limit is off (CLI.md `limits.*`).
    package init?(perHour: Int64, burst: Int64) {
        guard perHour > 0, burst > 0 else { return nil }
        // Settings are bounded where they are read; the clamps keep the arithmetic in range whatever.
        interval = max(1, 3_600_000 / min(perHour, 3_600_000))
        self.burst = min(burst, 1_000_000_000)
    }

    /// The bucket's new time after one token is taken at `now` (ms), or nil when it is empty.
    package func take(fullAt: Int64, now: Int64) -> Int64? {
        let next = max(fullAt, now) + interval
        return next - now <= burst * interval ? next : nil
    }

    /// Whole seconds until a token can be taken (at least 1), for `Retry-After`.
    package func secondsUntilToken(fullAt: Int64, now: Int64) -> Int64 {
        let wait = max(fullAt, now) + interval - now - burst * interval
        return max(1, (wait + 999) / 1000)
    }
}

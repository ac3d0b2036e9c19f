import Synchronization

/// Each installation's pushes per second on this node (docs/protocol.md §7): a token bucket of `rate` tokens a
/// second holding at most ten seconds' worth. A request takes what fits; the rest is told to retry.
final class RelayRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var at: Int64
    }
    private let buckets = Mutex<[String: Bucket]>([:])

    /// How many of `wanted` pushes fit now, and, when not all do, the whole seconds until the rest would.
    func take(_ wanted: Int, installation: String, rate: Int, nowMilliseconds: Int64) -> (granted: Int, retryAfter: Int)
    {
        let rate = Double(max(rate, 1))
        let burst = rate * 10
        return buckets.withLock { buckets in
            var bucket = buckets[installation] ?? Bucket(tokens: burst, at: nowMilliseconds)
            let elapsed = Double(max(0, nowMilliseconds - bucket.at)) / 1000
            bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
            bucket.at = nowMilliseconds
            let granted = min(wanted, Int(bucket.tokens.rounded(.down)))
            bucket.tokens -= Double(granted)
            buckets[installation] = bucket
            let missing = Double(wanted - granted)
            let retryAfter = missing > 0 ? max(1, Int((missing / rate).rounded(.up))) : 0
            return (granted, retryAfter)
        }
    }
}

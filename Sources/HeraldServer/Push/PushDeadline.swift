import HeraldCore
import HeraldStore

/// docs/protocol.md §11.4: a push's deadline is its queue time plus the smaller of its message's `ttl` and
/// `push.maxAgeSeconds` (without `ttl`, the max age, as §4.3 always had it). Past the deadline a push fails
/// unsent and its retries stop, except that a `ttl` of 0 asks for exactly one attempt, however late.
extension QueuedPush {
    func deadline(maxAgeSeconds: Int64) -> Int64 {
        guard let timeToLive = options.timeToLive else { return queuedAt.addingSaturated(maxAgeSeconds) }
        return queuedAt.addingSaturated(min(timeToLive, maxAgeSeconds))
    }

    /// `ttl` 0: one attempt, never a retry.
    var attemptsOnce: Bool { options.timeToLive == 0 }

    /// Whether it is too late to send it at all: past its deadline, unless it asked for one attempt.
    func isPastDeadline(now: Int64, maxAgeSeconds: Int64) -> Bool {
        !attemptsOnce && now > deadline(maxAgeSeconds: maxAgeSeconds)
    }
}

import Synchronization

/// Sends in flight per Web Push origin, at most `limit` each (`webpush.originConcurrency`). Whoever
/// registers an endpoint chooses its origin: one that accepts connections and never answers would
/// otherwise hold every slot of the Web Push lane until its sends time out, and everyone's browser
/// and UnifiedPush notifications would wait behind it. A send that finds its origin full is not sent
/// but deferred (``PushDelivery/deferred(reason:)``), so it holds no slot of the lane while it waits.
final class OriginGate: Sendable {
    let limit: Int
    private let inFlight = Mutex<[String: Int]>([:])

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a slot of `origin`'s, or returns false when all are taken.
    func enter(_ origin: String) -> Bool {
        inFlight.withLock { counts in
            let current = counts[origin, default: 0]
            guard current < limit else { return false }
            counts[origin] = current + 1
            return true
        }
    }

    /// Gives back a slot taken by `enter`; an origin with none in flight is forgotten.
    func leave(_ origin: String) {
        inFlight.withLock { counts in
            let current = counts[origin, default: 1]
            counts[origin] = current > 1 ? current - 1 : nil
        }
    }

    /// Sends in flight to `origin` (for tests).
    func count(_ origin: String) -> Int { inFlight.withLock { $0[origin, default: 0] } }
}

import Synchronization

/// At most one log line per `interval` for a failure that every request meets alike (storage down):
/// the first says what happened, later ones how many answers went unlogged in between.
final class LogThrottle: Sendable {
    private let interval: Duration
    private let state = Mutex<(last: ContinuousClock.Instant?, suppressed: Int)>((nil, 0))

    init(interval: Duration) { self.interval = interval }

    /// The count suppressed since the last line when a line is due now, else nil (and one more counted).
    func due(now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { state in
            if let last = state.last, now - last < interval {
                state.suppressed += 1
                return nil
            }
            defer { state = (now, 0) }
            return state.suppressed
        }
    }
}

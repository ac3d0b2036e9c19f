import HeraldStore

/// Where a lane's next claim starts in the outbox's order (`OutboxPosition`). Claims under a backlog begin
/// after the last push the lane claimed, so they do not walk again past the pushes it holds in flight, and on
/// PostgreSQL past the dead index entries of those it sent until vacuum removes them (measured
/// 2026-11-30: two thirds of a claim's 2.5 ms, 14 index and heap pages read per push claimed). A claim
/// starts from the beginning again once one came back short (nothing more is due past the position, so
/// whatever is due behind it is found then: a retry, a lapsed lease, a push given back), and at least every
/// `rescanEvery` while claims keep coming back full, so that a push passed over meanwhile (locked by
/// another node's claim that then failed, committed by another node with an earlier time or a smaller id
/// than one claimed already) waits at most that long.
struct ClaimCursor {
    static let defaultRescan = Duration.seconds(1)

    let rescanEvery: Duration
    private var position: OutboxPosition?
    private var nextRescan: ContinuousClock.Instant?
    /// What the claim under way asked for: fewer back means nothing more was due past the position.
    private var asked = 0

    init(rescanEvery: Duration = Self.defaultRescan) {
        self.rescanEvery = rescanEvery
    }

    /// The position the claim of at most `limit` starting `now` begins after; nil: the start of the outbox.
    mutating func start(at now: ContinuousClock.Instant, limit: Int) -> OutboxPosition? {
        asked = limit
        if let nextRescan, now < nextRescan { return position }
        nextRescan = now + rescanEvery
        position = nil
        return nil
    }

    /// The claim started last answered `claimed`.
    mutating func claimed(_ claimed: [QueuedPush]) {
        guard claimed.count >= asked, let last = claimed.lazy.map(\.position).max() else {
            position = nil
            return
        }
        position = last
    }
}

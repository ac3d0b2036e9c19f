import HeraldStore
import Logging
import ServiceLifecycle
import Synchronization

/// Forgets what can no longer matter: every minute, nonces whose operations have expired (plus the
/// clock skew), feed items past retention (older than `retention.feedDays`, or beyond a wallet's
/// newest `retention.feedItemsPerWallet`) with the notifications they leave without items; every hour,
/// bindings not refreshed within the expiry (default 270 days, FCM's own), the keys of wallets left
/// with nothing for as long, outbox rows finished (sent, failed, pruned) more than a week ago, so
/// the outbox keeps a week of delivery history, and per-recipient send buckets full again (§10). Each
/// kind is counted in `herald_pruned_total{kind}`.
/// The binding and key sweeps are full scans by design (an index on last_seen would cost every
/// registration a random write), so they run rarely and in short chunks; every deletion is a batch of
/// its own transaction, so the writer is never held long, and every node may run this at once.
struct PruningService: Service {
    let state: ServerState
    var interval: Duration = .seconds(60)
    var bindingSweepEvery = 60
    static let finishedPushRetention: Int64 = 7 * 86_400
    /// Sids the per-wallet limit looks at per store call, and calls per round: a round after a restart
    /// (which looks at every item once more) is cut into rounds of at most a million items.
    static let feedTrimBatch = 5000
    static let feedTrimBatchesPerRound = 200
    /// Where the per-wallet limit got to: items with a larger sid have not been looked at yet. In
    /// memory: a restart looks at every item once more, a round at a time.
    let feedTrimmedThrough = FeedTrimProgress()

    static let prunedKinds = [
        "nonces", "bindings", "pushes", "feed_items", "notifications", "wallet_keys", "wallet_buckets",
    ]

    func run() async throws {
        var round = 0
        // An hourly sweep that failed (the database down) is tried again the next minute, not an hour on.
        var sweepOwed = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            sweepOwed = sweepOwed || round % bindingSweepEvery == 0
            if await pruneOnce(sweepBindings: sweepOwed) { sweepOwed = false }
            round += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One round; false when storage failed it (logged), so the caller can owe the sweep.
    @discardableResult
    func pruneOnce(sweepBindings: Bool = true) async -> Bool {
        let now = state.clock()
        do {
            let nonces = try await state.store.pruneNonces(expiredBefore: now)
            state.metrics.recordPruned("nonces", count: nonces)
            state.metrics.setQueuedPushes(try await state.store.queuedPushCount())
            state.metrics.setQueuedWebhookEvents(try await state.store.queuedWebhookEventCount())
            try await pruneFeeds(now: now)
            if sweepBindings {
                let cutoff = now - Int64(state.configuration.bindings.expiryDays) * 86_400
                let bindings = try await state.store.pruneBindings(lastSeenBefore: cutoff)
                state.metrics.recordPruned("bindings", count: bindings)
                state.metrics.setBindings(try await state.store.bindingCount())
                let pushes = try await state.store.pruneFinishedPushes(
                    queuedBefore: now - Self.finishedPushRetention)
                state.metrics.recordPruned("pushes", count: pushes)
                let keys = try await state.store.pruneWalletKeys(storedBefore: cutoff)
                state.metrics.recordPruned("wallet_keys", count: keys)
                // A minute's margin: a node whose clock is behind still finds these buckets full.
                let buckets = try await state.store.pruneWalletBuckets(fullBefore: (now - 60) * 1000)
                state.metrics.recordPruned("wallet_buckets", count: buckets)
                if bindings > 0 {
                    state.logger.info(
                        "pruned \(bindings) bindings not seen for \(state.configuration.bindings.expiryDays) days")
                }
            }
        } catch {
            state.logger.error("pruning failed: \(error)")
            return false
        }
        return true
    }

    /// Feed retention: by age, then by count per wallet (0 turns either off).
    private func pruneFeeds(now: Int64) async throws {
        var deleted = RetentionCount()
        let days = Int64(state.configuration.retention.feedDays)
        if days > 0 {
            deleted += try await state.store.pruneFeedItems(sentBefore: (now - days * 86_400) * 1000)
        }
        let keep = state.configuration.retention.feedItemsPerWallet
        if keep > 0 {
            for _ in 0..<Self.feedTrimBatchesPerRound {
                let after = feedTrimmedThrough.sid.load(ordering: .relaxed)
                let trim = try await state.store.pruneFeedItems(
                    beyondNewest: keep, receivedAfter: after, limit: Self.feedTrimBatch)
                deleted += trim.deleted
                feedTrimmedThrough.sid.store(trim.examinedThrough, ordering: .relaxed)
                if trim.examinedThrough == after { break }
            }
        }
        state.metrics.recordPruned("feed_items", count: deleted.feedItems)
        state.metrics.recordPruned("notifications", count: deleted.notifications)
    }
}

/// The last sid the per-wallet limit looked at, shared by the service's rounds.
final class FeedTrimProgress: Sendable {
    let sid = Atomic<Int64>(0)
}

import HeraldStore
import Logging
import ServiceLifecycle

/// Forgets what can no longer matter: every minute, nonces whose operations have expired (plus the
/// clock skew); every hour, bindings not refreshed within the expiry (default 270 days, FCM's own).
/// Each minute it also updates the push queue depth gauge; each hour it deletes outbox rows finished
/// (sent, failed, pruned) more than a week ago, so the outbox keeps a week of delivery history.
/// The binding sweep is a full scan by design (an index on last_seen would cost every registration
/// a random write), so it runs rarely and in short chunks.
struct PruningService: Service {
    let state: ServerState
    var interval: Duration = .seconds(60)
    var bindingSweepEvery = 60
    static let finishedPushRetention: Int64 = 7 * 86_400

    func run() async throws {
        var round = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await pruneOnce(sweepBindings: round % bindingSweepEvery == 0)
            round += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    func pruneOnce(sweepBindings: Bool = true) async {
        let now = state.clock()
        do {
            let nonces = try await state.store.pruneNonces(expiredBefore: now)
            state.metrics.recordPruned("nonces", count: nonces)
            state.metrics.setQueuedPushes(try await state.store.queuedPushCount())
            if sweepBindings {
                let cutoff = now - Int64(state.configuration.bindingExpiryDays) * 86_400
                let bindings = try await state.store.pruneBindings(lastSeenBefore: cutoff)
                state.metrics.recordPruned("bindings", count: bindings)
                state.metrics.setBindings(try await state.store.bindingCount())
                let pushes = try await state.store.pruneFinishedPushes(
                    queuedBefore: now - Self.finishedPushRetention)
                state.metrics.recordPruned("pushes", count: pushes)
                if bindings > 0 {
                    state.logger.info(
                        "pruned \(bindings) bindings not seen for \(state.configuration.bindingExpiryDays) days")
                }
            }
        } catch {
            state.logger.error("pruning failed: \(error)")
        }
    }
}

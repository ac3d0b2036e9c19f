import HeraldStore
import Logging
import ServiceLifecycle

/// Forgets what can no longer matter: nonces whose operations have expired (plus the clock skew),
/// and bindings not refreshed within the expiry (default 270 days, FCM's own). Runs at start and
/// then every `interval`.
struct PruningService: Service {
    let state: ServerState
    var interval: Duration = .seconds(60)

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await pruneOnce()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    func pruneOnce() async {
        let now = state.clock()
        do {
            let nonces = try await state.store.pruneNonces(expiredBefore: now)
            let cutoff = now - Int64(state.configuration.bindingExpiryDays) * 86_400
            let bindings = try await state.store.pruneBindings(lastSeenBefore: cutoff)
            state.metrics.recordPruned("nonces", count: nonces)
            state.metrics.recordPruned("bindings", count: bindings)
            state.metrics.setBindings(try await state.store.bindingCount())
            if bindings > 0 {
                state.logger.info(
                    "pruned \(bindings) bindings not seen for \(state.configuration.bindingExpiryDays) days")
            }
        } catch {
            state.logger.error("pruning failed: \(error)")
        }
    }
}

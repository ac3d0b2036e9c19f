import Foundation
import HeraldCore
public import HeraldRelay
import HeraldStore
import Logging
public import ServiceLifecycle

/// Drains the durable push outbox: takes due pushes, hands each to its platform's provider, and records
/// what happened. The outbox is the source of truth: a push leaves `queued` only once its outcome is
/// committed, so a crash before that sends it again rather than losing it.
public struct PushOutboxService: Service {
    let state: ServerState
    let providers: PushProviders
    /// Pushes fetched (and in flight) per round.
    let batchSize: Int
    /// How long an idle worker sleeps when no signal comes (retries fall due without one).
    let idlePoll: Duration

    public init(
        state: ServerState, providers: PushProviders, batchSize: Int? = nil, idlePoll: Duration = .seconds(1)
    ) {
        self.state = state
        self.providers = providers
        self.batchSize = batchSize ?? state.configuration.pushConcurrency
        self.idlePoll = idlePoll
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let handled: Int
                do {
                    handled = try await drainOnce()
                } catch {
                    state.logger.error("push outbox: \(error)")
                    handled = 0
                }
                if handled == 0 { await state.pushWakeup.wait(upTo: idlePoll) }
            }
        }
    }

    /// One round: every due push of one batch, sent concurrently. Returns how many were handled.
    @discardableResult
    public func drainOnce() async throws -> Int {
        let now = state.clock()
        let due = try await state.store.duePushes(now: now, limit: batchSize)
        guard !due.isEmpty else { return 0 }
        let providers = self.providers
        let deliveries = await withTaskGroup(of: (QueuedPush, String, PushDelivery).self) { group in
            for push in due {
                group.addTask {
                    let provider = providers.provider(for: push.platform)
                    return (push, provider.name, await provider.deliver(push))
                }
            }
            var results: [(QueuedPush, String, PushDelivery)] = []
            for await result in group { results.append(result) }
            return results
        }
        let policy = PushRetryPolicy(
            attempts: state.configuration.pushAttempts, maxAgeSeconds: state.configuration.pushMaxAgeSeconds)
        let results = deliveries.map { push, _, delivery in policy.result(for: push, delivery, now: now) }
        try await state.store.record(results)
        for (provider, group) in Dictionary(grouping: zip(deliveries, results), by: { $0.0.1 }) {
            for (status, members) in Dictionary(grouping: group, by: { $0.1.status }) {
                state.metrics.recordPushes(provider: provider, status: status, count: members.count)
            }
        }
        return due.count
    }
}

/// PROTOCOL §4.3 retries: `min(300 s, base·2^(n−1))·(1 + jitter)`, or `Retry-After` when longer, up to
/// `attempts` sends and `maxAgeSeconds` since queueing; past either the push fails.
struct PushRetryPolicy {
    let attempts: Int
    let maxAgeSeconds: Int64
    var baseSeconds = 1.0

    func result(for push: QueuedPush, _ delivery: PushDelivery, now: Int64) -> PushAttemptResult {
        switch delivery {
        case .sent:
            return PushAttemptResult(id: push.id, disposition: .sent)
        case .failed(let reason):
            return PushAttemptResult(id: push.id, disposition: .failed, error: reason)
        case .deadToken(let reason):
            return PushAttemptResult(id: push.id, disposition: .pruned, error: reason)
        case .retryable(let reason, let retryAfter):
            let made = push.attempts + 1
            let backoff = min(300, baseSeconds * pow(2, Double(made - 1))) * (1 + Double.random(in: 0..<1))
            let at = now + max(Int64(backoff.rounded(.up)), retryAfter ?? 0)
            guard made < attempts, at - push.queuedAt <= maxAgeSeconds else {
                return PushAttemptResult(
                    id: push.id, disposition: .failed, error: "\(reason) (gave up after \(made) attempt(s))")
            }
            return PushAttemptResult(id: push.id, disposition: .retry(at: at), error: reason)
        }
    }
}

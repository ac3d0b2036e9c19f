import Foundation
import HeraldCore
import HeraldRelay
import HeraldStore
import Logging
import NIOCore
import ServiceLifecycle

/// Delivers docs/protocol.md §11.3's webhook events on every node: claims a webhook's oldest events (one
/// request at a time per webhook, leased in the database so that nodes share the queue), posts them
/// signed, and records what the answer did. Events survive a restart and a SIGKILL: they leave the queue
/// only once delivered, dropped or expired; a batch in flight at a crash comes again once its lease passes.
struct WebhookDeliveryService: Service {
    let state: ServerState
    let transport: any WebPushTransport
    /// Webhooks posted to at once.
    var concurrency = 8
    /// How long a claimed batch is this node's: the request's 5 s and room to record its outcome.
    var leaseSeconds: Int64 = 30
    /// How long an idle round waits before looking again.
    var idle: Duration = .seconds(1)
    static let batchLimit = 100
    static let requestTimeout: TimeAmount = .seconds(5)

    /// The transport this service made, shut down when it stops: an HTTP client left open when the
    /// process ends traps in its deinit.
    private let ownTransport: GuardedWebPushTransport?

    init(state: ServerState, transport: (any WebPushTransport)? = nil) throws {
        self.state = state
        let settings = state.configuration.webhooks
        if let transport {
            self.transport = transport
            ownTransport = nil
        } else {
            let made = try GuardedWebPushTransport(
                policy: settings.networkPolicy, caFile: settings.caFile, timeout: Self.requestTimeout)
            self.transport = made
            ownTransport = made
        }
    }

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let delivered = await deliverOnce()
            if delivered == 0 { try? await cancelWhenGracefulShutdown { try await Task.sleep(for: idle) } }
        }
        try? await ownTransport?.shutdown()
    }

    /// One round: up to `concurrency` webhooks' batches, posted at once. Returns how many were claimed.
    @discardableResult
    func deliverOnce() async -> Int {
        var batches: [WebhookBatch] = []
        let now = state.clock()
        do {
            while batches.count < concurrency,
                let batch = try await state.store.claimWebhookBatch(
                    now: now, maxAgeSeconds: state.configuration.webhooks.maxAgeSeconds, owner: state.nodeID,
                    leaseUntil: now.addingSaturated(leaseSeconds), limit: Self.batchLimit)
            {
                batches.append(batch)
            }
        } catch {
            state.logger.warning("webhooks: cannot claim events: \(error)")
        }
        await withTaskGroup(of: Void.self) { group in
            for batch in batches { group.addTask { await deliver(batch) } }
        }
        return batches.count
    }

    private func deliver(_ batch: WebhookBatch) async {
        let body = WebhookRequest.body(batch.events)
        let policy = WebhookRetryPolicy(maxAgeSeconds: state.configuration.webhooks.maxAgeSeconds)
        var status: Int?
        var retryAfter: Int64?
        var problem = ""
        let target = WebPushEndpoint(batch.url, allowingHTTP: true)
        do {
            guard let target else { throw WebPushRefusal("the stored webhook URL does not parse") }
            let request = PushHTTPRequest(
                url: batch.url,
                headers: [
                    ("content-type", "application/json"),
                    ("herald-signature", try WebhookRequest.signature(of: body, with: state.webhookKey)),
                    ("user-agent", "herald/\(state.version)"),
                ], body: body)
            let response = try await transport.send(request, to: target)
            status = response.status
            retryAfter = response.retryAfter
        } catch {
            problem = "\(error)"
        }
        let outcome = policy.outcome(for: batch, status: status, retryAfter: retryAfter, now: state.clock())
        let origin = target?.origin ?? "-"
        switch outcome {
        case .delivered: break
        case .retry(_, let at):
            state.logger.notice(
                "webhook delivery retried",
                metadata: [
                    "channel": "\(batch.channel)", "origin": "\(origin)", "events": "\(batch.events.count)",
                    "status": "\(status.map(String.init) ?? problem)", "at": "\(at)",
                ])
        case .dropped, .removed:
            state.logger.warning(
                "webhook batch \(outcome.isRemoval ? "removed the webhook" : "dropped")",
                metadata: [
                    "channel": "\(batch.channel)", "origin": "\(origin)", "events": "\(batch.events.count)",
                    "status": "\(status.map(String.init) ?? problem)",
                ])
        }
        state.metrics.recordWebhookDelivery(outcome.label, events: batch.events.count)
        do { try await state.store.record(outcome, owner: state.nodeID) } catch {
            // The lease ends by itself; the batch is delivered again (at least once).
            state.logger.warning("webhooks: cannot record a delivery: \(error)")
        }
    }
}

extension WebhookDeliveryOutcome {
    var isRemoval: Bool {
        if case .removed = self { return true }
        return false
    }

    /// Its `outcome` label in `herald_webhook_events_total`.
    var label: String {
        switch self {
        case .delivered: return "delivered"
        case .retry: return "retried"
        case .dropped: return "dropped"
        case .removed: return "removed"
        }
    }
}

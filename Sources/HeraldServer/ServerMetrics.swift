import CoreMetrics
import Foundation
import HeraldCore
public import HeraldStore
public import Prometheus
import Synchronization

/// Herald's metrics, through swift-metrics with an explicit Prometheus factory (no global state,
/// so tests and several servers in one process stay apart). `GET /metrics` renders `registry`.
public final class ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let bindingsGauge: CoreMetrics.Gauge
    private let queuedPushesGauge: CoreMetrics.Gauge
    private let queuedWebhookEventsGauge: CoreMetrics.Gauge
    /// Series made once and kept: making one through the factory validates its name, sorts its labels
    /// and looks it up in the registry under a lock, about 4,000 instructions a time, on every request.
    private let counters = Mutex<[SeriesKey: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[SeriesKey: CoreMetrics.Timer]>([:])

    private struct SeriesKey: Hashable {
        let label: String
        let values: [String]
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Counter {
        Self.cached(in: counters, label, dimensions) {
            CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory)
        }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        Self.cached(in: timers, label, dimensions) {
            CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
        }
    }

    private static func cached<Metric: Sendable>(
        in table: borrowing Mutex<[SeriesKey: Metric]>, _ label: String, _ dimensions: [(String, String)],
        make: () -> Metric
    ) -> Metric {
        let key = SeriesKey(label: label, values: dimensions.map(\.1))
        if let known = table.withLock({ $0[key] }) { return known }
        let made = make()
        table.withLock { $0[key] = made }
        return made
    }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .seconds(1),
        ]
        self.factory = factory
        bindingsGauge = CoreMetrics.Gauge(label: "herald_bindings", dimensions: [], factory: factory)
        queuedPushesGauge = CoreMetrics.Gauge(label: "herald_push_queue_depth", dimensions: [], factory: factory)
        queuedWebhookEventsGauge = CoreMetrics.Gauge(
            label: "herald_webhook_queue_depth", dimensions: [], factory: factory)
        registerKnownSeries()
    }

    /// Series whose label values are known in advance are exported at 0 from start: `rate()` and
    /// `increase()` see their first event (a series born at 1 hides it), and an alert on a code that
    /// has never occurred has a series to compare with.
    private func registerKnownSeries() {
        for code in APIErrorCode.allCases {
            _ = CoreMetrics.Counter(
                label: "herald_rejections_total", dimensions: [("code", code.rawValue)], factory: factory)
        }
        for kind in PruningService.prunedKinds {
            _ = CoreMetrics.Counter(label: "herald_pruned_total", dimensions: [("kind", kind)], factory: factory)
        }
        for outcome in Self.deviceChangeOutcomes {
            _ = CoreMetrics.Counter(
                label: "herald_device_changes_total", dimensions: [("outcome", outcome)], factory: factory)
        }
        for outcome in Self.recipientOutcomes {
            _ = CoreMetrics.Counter(
                label: "herald_recipients_total", dimensions: [("outcome", outcome)], factory: factory)
        }
        _ = CoreMetrics.Counter(label: "herald_read_marks_total", dimensions: [], factory: factory)
        _ = CoreMetrics.Counter(label: "herald_read_sync_pushes_total", dimensions: [], factory: factory)
        _ = CoreMetrics.Counter(label: "herald_broadcasts_limited_total", dimensions: [], factory: factory)
        _ = CoreMetrics.Counter(label: "herald_idempotent_replays_total", dimensions: [], factory: factory)
        for outcome in Self.webhookOutcomes {
            _ = CoreMetrics.Counter(
                label: "herald_webhook_events_total", dimensions: [("outcome", outcome)], factory: factory)
        }
    }

    /// What docs/protocol.md §10 did to a send's recipients: left out by a setting, stored but not pushed
    /// for a mute, refused by an empty bucket.
    static let recipientOutcomes = ["filtered", "muted", "throttled"]

    static let deviceChangeOutcomes = ["created", "refreshed", "unregistered", "absent"]

    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        counter("herald_http_requests_total", [("route", route), ("method", method), ("status", String(status))])
            .increment()
        timer("herald_http_request_duration_seconds", [("route", route)])
            .recordNanoseconds(duration / .nanoseconds(1))
    }

    func recordDeviceChange(_ outcome: String) {
        counter("herald_device_changes_total", [("outcome", outcome)])
            .increment()
    }

    func recordRejection(_ code: APIErrorCode) {
        counter("herald_rejections_total", [("code", code.rawValue)])
            .increment()
    }

    func recordPruned(_ kind: String, count: Int) {
        counter("herald_pruned_total", [("kind", kind)]).increment(
            by: count)
    }

    func recordNotification(type: String, items: Int) {
        counter("herald_notifications_total", [("type", type)])
            .increment()
        counter("herald_feed_items_total", [("type", type)])
            .increment(by: items)
    }

    /// A send's §10 outcomes (only those that happened: the series exist from start).
    func recordRecipients(filtered: Int, muted: Int, throttled: Int) {
        for (outcome, count) in [("filtered", filtered), ("muted", muted), ("throttled", throttled)] where count > 0 {
            counter("herald_recipients_total", [("outcome", outcome)]).increment(by: count)
        }
    }

    /// A read mark applied, and the read-sync pushes it queued.
    func recordReadMark(pushes: Int) {
        counter("herald_read_marks_total", []).increment()
        if pushes > 0 { counter("herald_read_sync_pushes_total", []).increment(by: pushes) }
    }

    /// What webhook deliveries did with their events (docs/protocol.md §11.3).
    static let webhookOutcomes = ["delivered", "retried", "dropped", "removed"]

    func recordWebhookDelivery(_ outcome: String, events: Int) {
        counter("herald_webhook_events_total", [("outcome", outcome)]).increment(by: events)
    }

    /// An operation received again and answered its first answer (docs/protocol.md §11.2).
    func recordIdempotentReplay() {
        counter("herald_idempotent_replays_total", []).increment()
    }

    /// A broadcast refused whole by its channel's bucket (answered 429).
    func recordBroadcastLimited() {
        counter("herald_broadcasts_limited_total", []).increment()
    }

    func recordPushes(provider: String, status: String, count: Int) {
        guard count > 0 else { return }
        counter("herald_pushes_total", [("provider", provider), ("status", status)]).increment(by: count)
    }

    /// docs/protocol.md §7: an upstream's forwarded pushes by installation and outcome.
    func recordRelayPushes(installation: String, status: String, count: Int) {
        guard count > 0 else { return }
        counter("herald_relay_pushes_total", [("installation", installation), ("status", status)]).increment(by: count)
    }

    func recordPushLatencies(provider: String, durations: [Duration]) {
        let series = timer("herald_push_duration_seconds", [("provider", provider)])
        for duration in durations where duration > .zero { series.recordNanoseconds(duration / .nanoseconds(1)) }
    }

    func setQueuedPushes(_ count: Int) { queuedPushesGauge.record(count) }

    /// Webhook events waiting for delivery (docs/protocol.md §11.3), every pruning round.
    func setQueuedWebhookEvents(_ count: Int) { queuedWebhookEventsGauge.record(count) }

    func setBindings(_ count: Int) { bindingsGauge.record(count) }

    /// Prometheus text exposition format, with the process's CPU time and memory where procfs has them,
    /// and the store writer's counters when given.
    public func render(writer: WriterStatistics.Snapshot? = nil) -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        if let writer { buffer.append(contentsOf: StoreWriterMetrics.exposition(writer).utf8) }
        if let sample = ProcessStats.current() { buffer.append(contentsOf: ProcessStats.exposition(sample).utf8) }
        return buffer
    }
}

extension Duration {
    fileprivate static func / (lhs: Duration, rhs: Duration) -> Int64 {
        let (seconds, attoseconds) = lhs.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

import CoreMetrics
import Foundation
import HeraldCore
public import Prometheus
import Synchronization

/// Herald's metrics, through swift-metrics with an explicit Prometheus factory (no global state,
/// so tests and several servers in one process stay apart). `GET /metrics` renders `registry`.
public final class ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let bindingsGauge: CoreMetrics.Gauge
    private let queuedPushesGauge: CoreMetrics.Gauge

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
        for outcome in Self.deviceChangeOutcomes {
            _ = CoreMetrics.Counter(
                label: "herald_device_changes_total", dimensions: [("outcome", outcome)], factory: factory)
        }
    }

    static let deviceChangeOutcomes = ["created", "refreshed", "unregistered", "absent"]

    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        CoreMetrics.Counter(
            label: "herald_http_requests_total",
            dimensions: [("route", route), ("method", method), ("status", String(status))],
            factory: factory
        ).increment()
        CoreMetrics.Timer(
            label: "herald_http_request_duration_seconds", dimensions: [("route", route)], factory: factory
        )
        .recordNanoseconds(duration / .nanoseconds(1))
    }

    func recordDeviceChange(_ outcome: String) {
        CoreMetrics.Counter(label: "herald_device_changes_total", dimensions: [("outcome", outcome)], factory: factory)
            .increment()
    }

    func recordRejection(_ code: APIErrorCode) {
        CoreMetrics.Counter(label: "herald_rejections_total", dimensions: [("code", code.rawValue)], factory: factory)
            .increment()
    }

    func recordPruned(_ kind: String, count: Int) {
        CoreMetrics.Counter(label: "herald_pruned_total", dimensions: [("kind", kind)], factory: factory).increment(
            by: count)
    }

    func recordNotification(type: String, items: Int) {
        CoreMetrics.Counter(label: "herald_notifications_total", dimensions: [("type", type)], factory: factory)
            .increment()
        CoreMetrics.Counter(label: "herald_feed_items_total", dimensions: [("type", type)], factory: factory)
            .increment(by: items)
    }

    func recordPushes(provider: String, status: String, count: Int) {
        guard count > 0 else { return }
        CoreMetrics.Counter(
            label: "herald_pushes_total", dimensions: [("provider", provider), ("status", status)], factory: factory
        ).increment(by: count)
    }

    /// PROTOCOL §7: an upstream's forwarded pushes by installation and outcome.
    func recordRelayPushes(installation: String, status: String, count: Int) {
        guard count > 0 else { return }
        CoreMetrics.Counter(
            label: "herald_relay_pushes_total", dimensions: [("installation", installation), ("status", status)],
            factory: factory
        ).increment(by: count)
    }

    func recordPushLatency(provider: String, duration: Duration) {
        guard duration > .zero else { return }
        CoreMetrics.Timer(
            label: "herald_push_duration_seconds", dimensions: [("provider", provider)], factory: factory
        ).recordNanoseconds(duration / .nanoseconds(1))
    }

    func setQueuedPushes(_ count: Int) { queuedPushesGauge.record(count) }

    func setBindings(_ count: Int) { bindingsGauge.record(count) }

    /// Prometheus text exposition format, with the process's CPU time and memory where procfs has them.
    public func render() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
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

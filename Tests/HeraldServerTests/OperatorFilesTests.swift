import Foundation
import HeraldCore
import HeraldRelay
import HeraldStore
import HummingbirdTesting
import Logging
import Testing

@testable import HeraldServer

/// A provider that answers `sent` after a millisecond, so the send is timed as more than zero.
private struct SlowProvider: PushProvider {
    let name = "apns"

    func deliver(_ message: PushMessage) async -> PushDelivery {
        try? await Task.sleep(for: .milliseconds(1))
        return .sent
    }
}

/// The dashboard and alert rules under ops/ must query what Herald exports: a misspelt or renamed
/// metric would leave a panel empty and an alert silent, with nothing to say so.
@Suite struct OperatorFilesTests {
    typealias F = ServerFixture
    typealias N = NotificationRouteTests
    typealias S = SubscriptionRouteTests

    @Test func everyMetricTheDashboardAndAlertRulesQueryIsExported() async throws {
        let dashboard = try OperatorFiles.dashboardQueries()
        let alerts = try OperatorFiles.alertQueries()
        // Guards against the readers finding nothing (and the check passing on nothing).
        #expect(dashboard.filter { !OperatorFiles.metricNames(in: $0.expression).isEmpty }.count >= 15)
        #expect(alerts.count >= 6)
        let fixture = try F { $0.push.setupConfirmation = true }
        try await fixture.state.store.saveChannel(
            ChannelRecord(address: N.channelKey.address, name: "Trades", icon: "", url: "", createdAt: 1))
        try await fixture.test { client in
            try await Self.oneOfEachEvent(client, state: fixture.state)
            let metrics = try await client.get("/metrics")
            #expect(metrics.status == .ok)
            let exported = OperatorFiles.exportedNames(in: metrics.text)
            let missing = OperatorFiles.unexported(dashboard + alerts, exported: exported)
            #expect(missing.isEmpty, "queried but not exported:\n\(missing.joined(separator: "\n"))")
        }
    }

    @Test func aMisspeltMetricNameIsReported() {
        let exported = OperatorFiles.exportedNames(
            in: """
                # TYPE herald_push_queue_depth gauge
                herald_push_queue_depth 0.0
                herald_push_duration_seconds_bucket{provider="apns",le="0.001"} 1
                """)
        let queries = [
            OperatorFiles.Query(file: "a", expression: "sum(herald_push_queue_dpth)"),
            OperatorFiles.Query(
                file: "b",
                expression: #"histogram_quantile(0.99, rate(herald_push_duration_seconds_bucket{x="herald_y"}[5m]))"#),
            OperatorFiles.Query(file: "c", expression: "rate(herald_push_duration_seconds[5m])"),
        ]
        #expect(
            OperatorFiles.unexported(queries, exported: exported) == [
                "herald_push_queue_dpth (a: sum(herald_push_queue_dpth))",
                "herald_push_duration_seconds (c: rate(herald_push_duration_seconds[5m]))",
            ])
    }

    @Test func quotedLabelValuesAndLabelNamesAreNotMetricNames() {
        #expect(
            OperatorFiles.metricNames(
                in: #"sum by (le) (herald_a_total{route="/herald_b", x='herald_c\'', y=`herald_d`}) / herald_e:f"#)
                == ["herald_a_total", "herald_e:f"])
    }

    /// A subscription, a registration (creating a binding and its confirmation push), the same again (its
    /// answer given again), another with its nonce (a rejection), an unknown path, a notification, one drain of the outbox (push
    /// outcomes and send times) and one pruning round (the gauges and the pruned counters).
    static func oneOfEachEvent(_ client: any TestClientProtocol, state: ServerState) async throws {
        #expect(try await client.post(try S.signed(S.subscription(nonce: 1)), uri: "/v1/subscriptions").status == .ok)
        let binding = try F.signed(F.binding(nonce: 2))
        #expect(try await client.post(binding).status == .ok)
        #expect(try await client.post(binding).headers[.idempotentReplay] == "true")
        #expect(try await client.post(try F.signed(F.binding(nonce: 2), scheme: .eip191)).status == .conflict)
        #expect(try await client.get("/v1/nowhere").status == .notFound)
        let sent = try await client.post(
            try N.notification(N.draft.targetedPayload(to: [F.key.address]), nonce: 3), uri: "/v1/notifications")
        #expect(sent.status == .accepted)
        let outbox = PushOutboxService(
            state: state, providers: PushProviders(apns: SlowProvider(), logger: Logger(label: "test")))
        #expect(try await outbox.drainOnce() == 2)
        await PruningService(state: state).pruneOnce()
    }
}

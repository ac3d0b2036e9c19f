import HTTPTypes
import HeraldCore
import HeraldServer
import HummingbirdTesting
import Testing

@Suite struct InfoRouteTests {
    typealias F = ServerFixture

    @Test func infoDescribesTheServersIdentity() async throws {
        try await F(configure: {
            $0.operations.chainId = UInt256(137); $0.operations.maxValiditySeconds = 300
        }).test { client in
            let response = try await client.get("/v1/info")
            #expect(response.status == .ok)
            let json = try #require(response.json)
            #expect(json["name"] == .string("herald"))
            #expect(json["protocol"] == .string("1"))
            #expect(json["audience"] == .string(F.audience))
            #expect(json["chainId"] == .number("137"))
            #expect(
                json["domain"]
                    == .object([("name", .string("Herald")), ("version", .string("1")), ("chainId", .number("137"))]))
            #expect(json["platforms"] == .array([.string("ios"), .string("ios-sandbox"), .string("android")]))
            #expect(json["maxValiditySeconds"] == .number("300"))
        }
    }

    @Test func healthAndMetrics() async throws {
        try await F().test { client in
            #expect(try await client.get("/healthz").json == .object([("status", .string("ok"))]))
            _ = try await client.post(try F.signed(F.binding()))
            _ = try await client.post(try F.signed(F.binding(), scheme: .eip191))
            let metrics = try await client.get("/metrics")
            #expect(metrics.status == .ok)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(metrics.text.contains(#"herald_device_changes_total{outcome="created"} 1"#))
            #expect(metrics.text.contains(#"herald_rejections_total{code="replayed"} 1"#))
            #expect(metrics.text.contains("\nprocess_cpu_seconds_total "))
            #expect(metrics.text.contains("\nprocess_resident_memory_bytes "))
            #expect(
                metrics.text.contains(#"herald_http_requests_total{route="/v1/devices",method="POST",status="409"} 1"#))
            // The store writer's counters: the binding and its replay were both written (the database
            // judged the replay), in at most two transactions, and took some time.
            let writes = try #require(Self.value("herald_store_writes_total", in: metrics.text))
            let transactions = try #require(Self.value("herald_store_transactions_total", in: metrics.text))
            #expect(writes >= 2)
            #expect(transactions >= 1 && transactions <= writes)
            let busy = try #require(Self.value("herald_store_busy_seconds_total", in: metrics.text))
            let wait = try #require(Self.value("herald_store_wait_seconds_total", in: metrics.text))
            #expect(busy > 0 && busy <= wait)
            #expect(Self.value("herald_store_writer_lanes", in: metrics.text) == 1)
        }
    }

    /// The value of an unlabelled series in Prometheus text format.
    static func value(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").lazy.compactMap { line -> Double? in
            let parts = line.split(separator: " ")
            return parts.count == 2 && parts[0] == name ? Double(parts[1]) : nil
        }.first
    }
}

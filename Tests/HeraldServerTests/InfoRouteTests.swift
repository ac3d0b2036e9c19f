import HTTPTypes
import HeraldCore
import HeraldServer
import HummingbirdTesting
import Testing

@Suite struct InfoRouteTests {
    typealias F = ServerFixture

    @Test func infoDescribesTheServersIdentity() async throws {
        try await F(configure: {
            $0.chainId = UInt256(137); $0.maxValiditySeconds = 300
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
            _ = try await client.post(try F.signed(F.binding()))
            let metrics = try await client.get("/metrics")
            #expect(metrics.status == .ok)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(metrics.text.contains(#"herald_device_changes_total{outcome="created"} 1"#))
            #expect(metrics.text.contains(#"herald_rejections_total{code="replayed"} 1"#))
            #expect(metrics.text.contains("\nprocess_cpu_seconds_total "))
            #expect(metrics.text.contains("\nprocess_resident_memory_bytes "))
            #expect(
                metrics.text.contains(#"herald_http_requests_total{route="/v1/devices",method="POST",status="409"} 1"#))
        }
    }
}

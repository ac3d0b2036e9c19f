import HeraldCore
import HeraldStore
import Hummingbird

/// `GET /v1/info`, `GET /healthz`, `GET /metrics`.
struct InfoController {
    /// `/v1/info`'s body, the same for the server's whole life: written once.
    let info: [UInt8]
    let store: any MaintenanceStore & StoreDiagnostics
    let metrics: ServerMetrics

    init(state: ServerState) {
        info = Self.infoBody(state)
        store = state.store
        metrics = state.metrics
    }

    static func infoBody(_ state: ServerState) -> [UInt8] {
        let chainId = JSONValue.number(state.configuration.operations.chainId.description)
        // `webpush` only when a VAPID key is configured (docs/protocol.md §9), with the key browsers
        // subscribe with.
        let vapidPublicKey = state.configuration.webpush.vapidPublicKey
        let platforms = Platform.allCases.filter { $0 != .webpush || vapidPublicKey != nil }
        var members: [(key: String, value: JSONValue)] = [
            ("name", .string("herald")),
            ("version", .string(state.version)),
            ("protocol", .string("1")),
            ("audience", .string(state.configuration.effectiveAudience)),
            ("chainId", chainId),
            (
                "domain",
                .object([
                    ("name", .string(HeraldDomain.name)), ("version", .string(HeraldDomain.version)),
                    ("chainId", chainId),
                ])
            ),
            ("platforms", .array(platforms.map { .string($0.rawValue) })),
            ("maxValiditySeconds", .number(String(state.configuration.operations.maxValiditySeconds))),
        ]
        if let vapidPublicKey { members.append((key: "vapidPublicKey", value: .string(vapidPublicKey))) }
        members.append((key: "webhookSigner", value: .string(state.webhookKey.address.checksummed)))
        return JSONValue.object(members).jsonBytes
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.info) { [info] _, _ in JSONResponse.make(bytes: info) }
        routes.on(RouteTable.health) { _, context in try await health(context: context) }
        routes.on(RouteTable.metrics) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: .init(bytes: metrics.render(writer: store.writerStatistics))))
        }
        return routes
    }

    private func health(context: HeraldRequestContext) async throws -> Response {
        do {
            try await store.checkHealth()
            return JSONResponse.make(.object([("status", .string("ok"))]))
        } catch {
            // Whatever the failure, the node cannot serve: 503, so a load balancer takes it out.
            context.logger.error("health check failed: storage does not answer: \(error)")
            let refusal = APIError(.unavailable, "storage does not answer", retryAfter: StoreCall.retryAfterSeconds)
            return refusal.response
        }
    }
}

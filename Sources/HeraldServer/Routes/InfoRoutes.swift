import HeraldCore
import Hummingbird

/// `GET /v1/info`, `GET /healthz`, `GET /metrics`.
enum InfoRoutes {
    static func infoBody(_ state: ServerState) -> [UInt8] {
        let chainId = JSONValue.number(state.configuration.chainId.description)
        // `webpush` only when a VAPID key is configured (PROTOCOL §9), with the key browsers subscribe with.
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
            ("maxValiditySeconds", .number(String(state.configuration.maxValiditySeconds))),
        ]
        if let vapidPublicKey { members.append((key: "vapidPublicKey", value: .string(vapidPublicKey))) }
        return JSONValue.object(members).jsonBytes
    }

    static func register(on router: Router<HeraldRequestContext>, state: ServerState) {
        let info = infoBody(state)
        router.on(RouteTable.info) { _, _ in JSONResponse.make(bytes: info) }
        router.on(RouteTable.health) { _, context in
            do {
                try await state.store.checkHealth()
                return JSONResponse.make(.object([("status", .string("ok"))]))
            } catch {
                // Whatever the failure, the node cannot serve: 503, so a load balancer takes it out.
                context.logger.error("health check failed: storage does not answer: \(error)")
                let refusal = APIError(
                    .unavailable, "storage does not answer", retryAfter: StoreCall.retryAfterSeconds)
                return refusal.response
            }
        }
        router.on(RouteTable.metrics) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: .init(bytes: state.metrics.render(writer: state.store.writerStatistics))))
        }
    }
}

extension Router<HeraldRequestContext> {
    /// Adds a handler for a route of ``RouteTable``.
    @discardableResult
    func on(
        _ route: RouteTable.Route,
        use handler: @escaping @Sendable (Request, HeraldRequestContext) async throws -> Response
    ) -> Self {
        on(RouterPath(route.routerPath), method: route.method, use: handler)
    }
}

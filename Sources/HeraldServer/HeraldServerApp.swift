public import HeraldRelay
public import Hummingbird
import Logging
import NIOCore
public import ServiceLifecycle

/// Builds Herald's router, application and service group from a ``ServerState``.
public enum HeraldServerApp {
    /// The `Server` header of every answer.
    static let serverName = "herald"

    /// The router: middleware (outermost first) then every route of ``RouteTable``.
    public static func makeRouter(
        _ state: ServerState, providers: PushProviders? = nil
    ) -> Router<HeraldRequestContext> {
        let router = Router(context: HeraldRequestContext.self)
        router.add(middleware: ObservabilityMiddleware(metrics: state.metrics))
        router.add(middleware: ErrorMiddleware(routes: RouteTable.served(bisqRelay: state.configuration.bisqRelay)))
        router.add(middleware: NULRefusalMiddleware())
        if let limiter = state.rateLimiter {
            router.add(
                middleware: RateLimitMiddleware(limiter: limiter, trustedProxies: state.configuration.trustedProxies))
        }
        InfoRoutes.register(on: router, state: state)
        DeviceRoutes.register(on: router, state: state)
        WebPushRoutes.register(on: router, state: state)
        SubscriptionRoutes.register(on: router, state: state)
        NotificationRoutes.register(on: router, state: state)
        RelayRoutes.register(
            on: router, state: state, providers: providers ?? PushProviders(logger: state.logger),
            authority: RelayAuthority(store: state.store, clock: state.clock))
        if state.configuration.bisqRelay { BisqRelayController(state: state).register(on: router) }
        return router
    }

    /// The HTTP application. `onListening` receives the bound port (useful with port 0).
    public static func makeApplication(
        _ state: ServerState, providers: PushProviders? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let counter = ConnectionGuard.Counter()
        let timeout = TimeAmount.seconds(Int64(state.configuration.requestTimeoutSeconds))
        let limit = state.configuration.maxConnections
        return Application(
            router: makeRouter(state, providers: providers),
            server: .http1(
                configuration: .init(additionalChannelHandlers: [
                    ConnectionGuard(requestTimeout: timeout, limit: limit, counter: counter),
                    DeviceRouteFastPath(state: state),
                ])),
            configuration: .init(
                address: .hostname(state.configuration.host, port: state.configuration.port), serverName: serverName),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? state.configuration.port) },
            logger: state.logger)
    }

    /// Everything `herald serve` runs: the store's lifetime, the HTTP server, the push outbox worker
    /// and the pruning service. On SIGTERM or SIGINT they stop in reverse order: pruning, then the
    /// push worker finishes its round, then the server drains its in-flight requests, then the store
    /// closes cleanly.
    public static func makeServiceGroup(
        _ state: ServerState, providers: PushProviders? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> ServiceGroup {
        ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: state.store),
                    .init(service: makeApplication(state, providers: providers, onListening: onListening)),
                    .init(
                        service: PushOutboxService(
                            state: state, providers: providers ?? PushProviders(logger: state.logger))),
                    .init(service: PruningService(state: state)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: state.logger))
    }
}

public import HeraldRelay
public import Hummingbird
import Logging
import NIOCore
public import ServiceLifecycle

/// Builds Herald's router, application and service group from a ``ServerState``.
public enum HeraldServerApp {
    /// The `Server` header of every answer.
    static let serverName = "herald"

    /// The router: the request policy's middleware (outermost first), then every controller's routes.
    public static func makeRouter(
        _ state: ServerState, providers: PushProviders? = nil
    ) -> Router<HeraldRequestContext> {
        let router = Router(context: HeraldRequestContext.self)
        RequestPolicy(state: state).install(on: router)
        let devices = DeviceController(state: state)
        let feedAccess = FeedAccessCheck(signed: state.signedRequests, keys: state.store)
        router.addRoutes(InfoController(state: state).routes)
        router.addRoutes(devices.routes)
        router.addRoutes(WebPushController(state: state, devices: devices).routes)
        router.addRoutes(SubscriptionController(state: state, feedAccess: feedAccess).routes)
        router.addRoutes(NotificationController(state: state, feedAccess: feedAccess).routes)
        router.addRoutes(SubscriberControlController(state: state).routes)
        router.addRoutes(DelegateController(state: state).routes)
        router.addRoutes(WebhookController(state: state).routes)
        router.addRoutes(
            RelayController(state: state, providers: providers ?? PushProviders(logger: state.logger)).routes)
        if state.configuration.bisq.relay { router.addRoutes(BisqRelayController(state: state).routes) }
        return router
    }

    /// The HTTP application. `onListening` receives the bound port (useful with port 0).
    public static func makeApplication(
        _ state: ServerState, providers: PushProviders? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let counter = ConnectionGuard.Counter()
        let timeout = TimeAmount.seconds(Int64(state.configuration.http.requestTimeoutSeconds))
        let limit = state.configuration.http.maxConnections
        let devices = DeviceController(state: state)
        return Application(
            router: makeRouter(state, providers: providers),
            server: .http1(
                configuration: .init(additionalChannelHandlers: [
                    ConnectionGuard(requestTimeout: timeout, limit: limit, counter: counter),
                    DeviceRouteFastPath(state: state, devices: devices),
                ])),
            configuration: .init(
                address: .hostname(state.configuration.http.host, port: state.configuration.http.port),
                serverName: serverName),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? state.configuration.http.port)
            },
            logger: state.logger)
    }

    /// Everything `herald serve` runs: the store's lifetime, the HTTP server, the push outbox worker
    /// and the pruning service. On SIGTERM or SIGINT they stop in reverse order: pruning, then the
    /// push worker finishes its round, then the server drains its in-flight requests, then the store
    /// closes cleanly.
    /// The webhook deliveries, unless their transport cannot be made (a bad `webhooks.caFile`: logged,
    /// and the events wait in the queue).
    static func webhookService(_ state: ServerState) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        do { return [.init(service: try WebhookDeliveryService(state: state))] } catch {
            state.logger.error("webhooks: no delivery: \(error)")
            return []
        }
    }

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
                ] + webhookService(state),
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: state.logger))
    }
}

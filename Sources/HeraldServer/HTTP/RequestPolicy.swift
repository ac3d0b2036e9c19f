import HTTPTypes
import Hummingbird

/// One check or effect every request goes through, in the order they apply (outermost first).
///
/// Two paths answer requests: Hummingbird's router and, for `POST /v1/devices`, ``DeviceRouteFastPath``
/// below it. Both take their stages from here: the router's middleware is built from
/// ``RequestPolicy/stages``, and the fast path says where it applies each stage in a switch without a
/// default, so a stage added here does not compile until the fast path applies it too.
enum RequestStage: CaseIterable, Sendable {
    /// The connection limit and the whole-request deadline (``ConnectionGuard``, a channel handler
    /// before both paths).
    case connectionGuard
    /// Requests counted and timed per route (``ObservabilityMiddleware``).
    case metrics
    /// docs/protocol.md §3's error body for every failure (``ErrorMiddleware``).
    case errorBody
    /// `%00` in the path or query refused before any route (``NULRefusalMiddleware``).
    case nulRefusal
    /// The per-client token bucket (``RateLimitMiddleware``).
    case rateLimit
    /// The body's size: a declared length over the limit at once, a longer body as it arrives
    /// (``RequestBody``, read by each route with its own limit).
    case bodyLimits
    /// `Content-Type: application/json` (``RequestBody``), checked once the body is whole.
    case mediaType
    /// `Date` and `Server` on every answer (Hummingbird's HTTP server).
    case headers
}

/// The request policy of one server: which stages it applies and the middleware each router stage is.
struct RequestPolicy {
    static let stages = RequestStage.allCases

    let state: ServerState

    typealias Middleware = any MiddlewareProtocol<Request, Response, HeraldRequestContext>

    /// The router middleware of `stage`, or nil for a stage applied elsewhere (the channel pipeline,
    /// the routes' body reading, the HTTP server) or turned off (the rate limit at 0).
    func middleware(for stage: RequestStage) -> Middleware? {
        switch stage {
        case .metrics:
            ObservabilityMiddleware(metrics: state.metrics)
        case .errorBody:
            ErrorMiddleware(routes: RouteTable.served(bisqRelay: state.configuration.bisq.relay))
        case .nulRefusal:
            NULRefusalMiddleware()
        case .rateLimit:
            state.rateLimiter.map {
                RateLimitMiddleware(limiter: $0, trustedProxies: state.configuration.http.trustedProxies)
            }
        case .connectionGuard, .bodyLimits, .mediaType, .headers:
            nil
        }
    }

    /// Every router middleware, outermost first.
    var routerMiddleware: [Middleware] { Self.stages.compactMap(middleware(for:)) }

    /// Adds the policy's middleware to `router`: before any route, so that every route is behind it.
    func install(on router: Router<HeraldRequestContext>) {
        for middleware in routerMiddleware { router.add(middleware: middleware) }
    }
}

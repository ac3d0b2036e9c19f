import HTTPTypes
package import Hummingbird
package import NIOCore

/// A token bucket per client IP (an IPv6 client's per prefix) on POST routes and on the GET routes that
/// take FeedAccess (CLI.md, `--rate-limit`), one bucket for all of them: `rate` tokens a second, up to
/// `burst`. A FeedAccess read costs a signature recovery and, for a wallet never seen, a write, so it is
/// metered like a POST. An empty bucket answers `429 rate_limited` with `Retry-After`. The client IP is
/// the TCP peer, or, when the peer is a trusted proxy, the last `X-Forwarded-For` hop that is not one.
/// Package access for `herald-dev bench limiter`, which times `clientAddress` and the limiter as this does.
package struct RateLimitMiddleware: RouterMiddleware {
    package typealias Context = HeraldRequestContext
    let limiter: RateLimiter
    let trustedProxies: [CIDR]

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // POST routes, Bisq's GET /relay (an open relay that changes state: it queues a push), and the
        // FeedAccess reads.
        let isRelay = request.uri.path == RouteTable.bisqRelay.path
        guard request.method == .post || isRelay || Self.takesFeedAccess(request) else {
            return try await next(request, context)
        }
        let client = Self.clientAddress(
            peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies)
        if let wait = limiter.acquire(address: client) {
            if isRelay { return BisqPlainText.tooManyRequests("too many requests from this address", retryAfter: wait) }
            throw Self.refusal(retryAfter: wait)
        }
        return try await next(request, context)
    }

    /// Whether the request is one of the GET routes that take FeedAccess.
    static func takesFeedAccess(_ request: Request) -> Bool {
        request.method == .get && RouteTable.knowsPath(request.uri.path, among: RouteTable.feedAccessReads)
    }

    /// The client IP a bucket is kept for (also `DeviceRouteFastPath`'s).
    package static func clientAddress(
        peer address: SocketAddress?, forwardedFor: String?, trustedProxies: [CIDR]
    ) -> [UInt8] {
        let peer = address?.ipAddress.flatMap(IPAddress.parse) ?? []
        guard !trustedProxies.isEmpty, trustedProxies.contains(where: { $0.contains(peer) }),
            let forwarded = forwardedFor
        else { return peer }
        let hops = forwarded.split(separator: ",").compactMap { IPAddress.parse(String($0).trimmed) }
        return hops.last { hop in !trustedProxies.contains { $0.contains(hop) } } ?? hops.first ?? peer
    }

    static func refusal(retryAfter wait: Int) -> APIError {
        APIError(.rateLimited, "too many requests from this address; retry later", retryAfter: wait)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}

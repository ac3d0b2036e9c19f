import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// A token bucket per client IP on POST routes: `rate` tokens a second, up to `burst`. An empty
/// bucket answers `429 rate_limited` with `Retry-After`. The client IP is the TCP peer, or, when the
/// peer is a trusted proxy, the last `X-Forwarded-For` hop that is not one.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let limiter: RateLimiter
    let trustedProxies: [CIDR]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // POST routes, and Bisq's GET /relay: an open relay that changes state (it queues a push).
        let isRelay = request.uri.path == RouteTable.bisqRelay.path
        guard request.method == .post || isRelay else { return try await next(request, context) }
        let client = Self.clientAddress(
            peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies)
        if let wait = limiter.acquire(client) {
            if isRelay { return BisqPlainText.tooManyRequests("too many requests from this address", retryAfter: wait) }
            throw Self.refusal(retryAfter: wait)
        }
        return try await next(request, context)
    }

    /// The client IP a bucket is kept for (also `DeviceRouteFastPath`'s).
    static func clientAddress(peer address: SocketAddress?, forwardedFor: String?, trustedProxies: [CIDR]) -> [UInt8] {
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

/// Token buckets keyed by client address, shared by all connections.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    private let buckets = Mutex<[[UInt8]: Bucket]>([:])
    /// Past this many tracked addresses, buckets that have refilled are dropped.
    private let maximumTracked = 100_000

    init(rate: Double, burst: Int) {
        self.rate = rate
        self.burst = Double(burst)
    }

    /// Takes a token. Returns nil when allowed, else the whole seconds until one is available.
    func acquire(_ client: [UInt8], now: ContinuousClock.Instant = .now) -> Int? {
        guard rate > 0 else { return nil }
        return buckets.withLock { buckets in
            if buckets.count >= maximumTracked { prune(&buckets, now: now) }
            var bucket = buckets[client] ?? Bucket(tokens: burst, updated: now)
            let elapsed =
                Double((now - bucket.updated).components.seconds)
                + Double((now - bucket.updated).components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + max(0, elapsed) * rate)
            bucket.updated = now
            defer { buckets[client] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
        }
    }

    private func prune(_ buckets: inout [[UInt8]: Bucket], now: ContinuousClock.Instant) {
        let refill = Duration.seconds(burst / rate)
        buckets = buckets.filter { now - $0.value.updated < refill }
    }
}

import Dispatch
import HeraldServer
import NIOCore

/// The per-IP limiter measured in-process (`herald-dev bench limiter`): what finding a request's client
/// behind a trusted proxy (`X-Forwarded-For`) and taking its token cost, as the middleware does both,
/// with every request from a client never seen, spread over threads that share the limiter.
enum RateLimiterBench {
    struct Figures: Sendable, Encodable {
        let clients: Int
        let threads: Int
        let p50Microseconds: Double
        let p99Microseconds: Double
        let maxMicroseconds: Double
        /// Buckets held at the end, and the table's bound.
        let tracked: Int
        let capacity: Int
        let tableBytes: Int
    }

    /// `clients` requests, each from another address (IPv4, and IPv6 from as many /64s, alternately).
    static func measure(clients: Int, threads: Int, configuration: HeraldSettings) -> Figures {
        let limiter = RateLimiter(
            rate: max(configuration.http.rateLimit, 1), burst: configuration.http.rateBurst,
            ipv6Prefix: configuration.http.rateLimitIpv6Prefix)
        let proxy = [CIDR("10.0.0.0/8")!]
        let peer = try? SocketAddress(ipAddress: "10.0.0.1", port: 40_000)
        let threads = max(1, threads)
        let timings = Timings(count: clients)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for client in stride(from: thread, to: clients, by: threads) {
                let forwarded =
                    client % 2 == 0
                    ? "198.\(client >> 16 & 0xff).\(client >> 8 & 0xff).\(client & 0xff), 10.0.0.2"
                    : "2001:db8:\(String(client >> 16, radix: 16)):\(String(client & 0xffff, radix: 16))::1, 10.0.0.2"
                let started = ContinuousClock.now
                let address = RateLimitMiddleware.clientAddress(
                    peer: peer, forwardedFor: forwarded, trustedProxies: proxy)
                _ = limiter.acquire(address: address)
                timings.set(client, ContinuousClock.now - started)
            }
        }
        let sorted = timings.values.sorted()
        func micros(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
        }
        func percentile(_ share: Double) -> Double {
            sorted.isEmpty ? 0 : micros(sorted[min(sorted.count - 1, Int(Double(sorted.count) * share))])
        }
        return Figures(
            clients: clients, threads: threads, p50Microseconds: percentile(0.5), p99Microseconds: percentile(0.99),
            maxMicroseconds: sorted.last.map(micros) ?? 0, tracked: limiter.trackedCount,
            capacity: limiter.capacity, tableBytes: limiter.tableBytes)
    }

    /// One slot per request, each written by the one thread that made it.
    private final class Timings: @unchecked Sendable {
        private var storage: UnsafeMutableBufferPointer<Duration>

        init(count: Int) {
            storage = .allocate(capacity: count)
            storage.initialize(repeating: .zero)
        }

        deinit { storage.deallocate() }

        func set(_ index: Int, _ value: Duration) { storage[index] = value }

        var values: [Duration] { Array(storage) }
    }
}

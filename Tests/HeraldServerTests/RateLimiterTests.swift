import HeraldTesting
import Testing

@testable import HeraldServer

/// The per-IP limiter's keys (IPv6 prefixes, IPv4-mapped addresses) and its bounded table.
@Suite struct RateLimiterTests {
    static let start = ContinuousClock.now

    /// A limiter whose buckets hold `burst` tokens and refill one in 1,000 s: none comes back in a test.
    static func limiter(
        burst: Int = 2, ipv6Prefix: Int = 64, capacity: Int = RateLimiter.defaultCapacity
    )
        -> RateLimiter
    {
        RateLimiter(rate: 0.001, burst: burst, ipv6Prefix: ipv6Prefix, capacity: capacity, origin: start)
    }

    static func address(_ text: String) -> [UInt8] { IPAddress.parse(text) ?? [] }

    /// Whether `text`'s bucket is empty after the burst was spent from `spender`'s.
    static func sharesABucket(_ spender: String, _ other: String, prefix: Int = 64) -> Bool {
        let limiter = limiter(ipv6Prefix: prefix)
        for _ in 0..<2 { _ = limiter.acquire(address: address(spender), now: start) }
        return limiter.acquire(address: address(other), now: start) != nil
    }

    @Test func ipv6ClientsShareABucketPerPrefix() {
        #expect(Self.sharesABucket("2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"), "one /64")
        #expect(!Self.sharesABucket("2001:db8:1:2::1", "2001:db8:1:3::1"), "the next /64")
        #expect(Self.sharesABucket("2001:db8:1:2::1", "2001:db8:1:3::1", prefix: 48), "one /48")
        #expect(!Self.sharesABucket("2001:db8:1:2::1", "2001:db8:1:2::2", prefix: 128), "one address each")
        #expect(Self.sharesABucket("2001:db8:1:2::1", "2001:db8:1:2::1:0", prefix: 96))
        #expect(!Self.sharesABucket("2001:db8:1:2::1", "2001:db8:1:2:0:1::", prefix: 96))
    }

    @Test func ipv4ClientsHaveOneBucketEachAndMappedIPv6IsIPv4() {
        #expect(!Self.sharesABucket("192.0.2.1", "192.0.2.2"), "IPv4 is never grouped")
        #expect(Self.sharesABucket("192.0.2.1", "::ffff:192.0.2.1"))
        #expect(!Self.sharesABucket("192.0.2.1", "::ffff:192.0.2.2"))
        #expect(!Self.sharesABucket("::ffff:192.0.2.1", "::ffff:192.0.2.2"), "not one /64 for all of IPv4")
    }

    @Test func theTableHoldsAtMostItsCapacityWhateverTheClients() async {
        let limiter = Self.limiter(capacity: 4096)
        #expect(limiter.capacity == 4096)
        // One #expect for the loop, on a thread of its own: on the test runner's two cooperative threads,
        // 150,000 rounds held up the suites beside this one.
        let refused = await onOwnThread {
            var refused = 0
            for client in 0..<150_000 {
                let bytes = [10, UInt8(client >> 16), UInt8((client >> 8) & 0xff), UInt8(client & 0xff)]
                if limiter.acquire(address: bytes, now: Self.start) != nil { refused += 1 }
            }
            return refused
        }
        #expect(refused == 0)
        #expect(limiter.trackedCount == 4096)
        #expect(limiter.tableBytes == 4096 * 32)
    }

    /// A bucket still limiting its client outlives clients whose buckets have refilled: those are
    /// dropped first, and dropping them loses nothing. 150,000 clients pass through a table of 262,144
    /// while one client stays limited.
    @Test func aLimitedClientStaysLimitedWhileOthersComeAndGo() async {
        let limiter = RateLimiter(rate: 1, burst: 200, capacity: RateLimiter.defaultCapacity, origin: Self.start)
        let hot: [UInt8] = [198, 51, 100, 7]
        for _ in 0..<200 { #expect(limiter.acquire(address: hot, now: Self.start) == nil) }
        #expect(limiter.acquire(address: hot, now: Self.start) == 1)
        // One new client every 100 µs for 15 s: each bucket is full again a second after its request.
        await onOwnThread {
            for client in 0..<150_000 {
                let bytes = [10, UInt8(client >> 16), UInt8((client >> 8) & 0xff), UInt8(client & 0xff)]
                _ = limiter.acquire(address: bytes, now: Self.start + .microseconds(100 * client))
            }
        }
        let later = Self.start + .seconds(15)
        // 15 s refilled 15 tokens, not the 200 of a bucket made anew.
        for _ in 0..<15 { #expect(limiter.acquire(address: hot, now: later) == nil) }
        #expect(limiter.acquire(address: hot, now: later) != nil)
        #expect(limiter.forgottenBuckets == 0)
        #expect(limiter.trackedCount <= limiter.capacity)
    }
}

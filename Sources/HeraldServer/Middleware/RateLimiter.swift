import Crypto
import Synchronization

/// Token buckets, `rate` tokens a second up to `burst`, in a table of fixed capacity: memory is
/// bounded however many clients arrive, and a request costs a hash and at most `ways` comparisons.
///
/// The table is set-associative: a key hashes (Swift's per-process seeded hash, so a client cannot aim
/// at a set) to one set of `ways` slots, and a key not found there takes the slot of, in this order, an
/// empty one, a bucket that has refilled to `burst` (dropping it loses nothing: a full bucket is what a
/// new key gets), or the bucket least recently used. Only the last case forgets a bucket that was still
/// limiting someone, and it takes `ways` keys at once still being limited in one set: with the default
/// capacity, hundreds of thousands of clients limited at the same moment. The sets are spread over
/// `shards` locks, so that requests on different cores rarely wait on each other. Package access for
/// `herald-dev bench limiter`, which times it.
package final class RateLimiter: Sendable {
    /// Slots per set: the most comparisons a request makes.
    static let ways = 8
    static let shardCount = 16
    /// 262,144 buckets of 32 bytes: 8 MiB at most, whatever the number of clients.
    static let defaultCapacity = 1 << 18

    let rate: Double
    let burst: Double
    /// IPv6 clients share one bucket per prefix of this many bits (`rateLimitIpv6Prefix`).
    let ipv6Prefix: Int
    /// Slots in all (a multiple of `ways × shardCount`).
    package let capacity: Int
    private let setsPerShard: Int
    private let shards: [Shard]
    /// Times are kept as nanoseconds since this instant, so that a slot is four plain words.
    private let origin: ContinuousClock.Instant
    private let forgotten = Atomic<Int>(0)

    package init(
        rate: Double, burst: Int, ipv6Prefix: Int = 64, capacity: Int = RateLimiter.defaultCapacity,
        origin: ContinuousClock.Instant = .now
    ) {
        self.rate = rate
        self.burst = Double(burst)
        self.ipv6Prefix = ipv6Prefix
        let perSet = Self.ways * Self.shardCount
        setsPerShard = max(1, (capacity + perSet - 1) / perSet)
        self.capacity = setsPerShard * perSet
        shards = (0..<Self.shardCount).map { _ in Shard() }
        self.origin = origin
    }

    /// Takes a token for a client address (4 or 16 bytes, as `IPAddress.parse` gives it). Returns nil
    /// when allowed, else the whole seconds until a token is available.
    package func acquire(address: [UInt8], now: ContinuousClock.Instant = .now) -> Int? {
        acquire(RateLimitKey(address: address, ipv6Prefix: ipv6Prefix), now: now)
    }

    /// Takes a token from `key`'s bucket. Returns nil when allowed, else the whole seconds until one is.
    func acquire(_ key: RateLimitKey, now: ContinuousClock.Instant = .now) -> Int? {
        guard rate > 0 else { return nil }
        let hash = UInt64(bitPattern: Int64(key.hashValue))
        let shard = shards[Int(hash % UInt64(Self.shardCount))]
        let first = Int((hash / UInt64(Self.shardCount)) % UInt64(setsPerShard)) * Self.ways
        let at = Self.nanoseconds(now - origin)
        let slots = setsPerShard * Self.ways
        return shard.table.withLock { table in
            if table.isEmpty { table = Array(repeating: Slot.empty, count: slots) }
            var victim = first
            var victimRank = Int64.max
            for index in first..<(first + Self.ways) {
                let slot = table[index]
                if slot.isOccupied && slot.high == key.high && slot.low == key.low {
                    return take(&table[index], at: at)
                }
                let rank = evictionRank(slot, at: at)
                if rank < victimRank {
                    victim = index
                    victimRank = rank
                }
            }
            if victimRank > Self.refilledRank { forgotten.add(1, ordering: .relaxed) }
            table[victim] = Slot(high: key.high, low: key.low, tokens: burst, updated: at)
            return take(&table[victim], at: at)
        }
    }

    /// Buckets dropped before they had refilled (each gave its client a fresh burst): nonzero only when
    /// more clients than a set holds are limited at once in one set.
    var forgottenBuckets: Int { forgotten.load(ordering: .relaxed) }

    /// Buckets held now (a scan of the whole table: for tests and operators, not the request path).
    package var trackedCount: Int {
        shards.reduce(0) { total, shard in total + shard.table.withLock { $0.count(where: \.isOccupied) } }
    }

    /// The bytes the table takes once every shard is in use.
    package var tableBytes: Int { capacity * MemoryLayout<Slot>.stride }

    private static let emptyRank = Int64.min
    private static let refilledRank = Int64.min + 1

    /// Which slot a new key takes: the lowest rank (empty, then refilled, then least recently used).
    private func evictionRank(_ slot: Slot, at: Int64) -> Int64 {
        guard slot.isOccupied else { return Self.emptyRank }
        return refilled(slot, at: at) >= burst ? Self.refilledRank : slot.updated
    }

    private func refilled(_ slot: Slot, at: Int64) -> Double {
        let elapsed = Double(max(0, at - slot.updated)) / 1e9
        return min(burst, slot.tokens + elapsed * rate)
    }

    private func take(_ slot: inout Slot, at: Int64) -> Int? {
        slot.tokens = refilled(slot, at: at)
        slot.updated = max(slot.updated, at)
        if slot.tokens >= 1 {
            slot.tokens -= 1
            return nil
        }
        return max(1, Int(((1 - slot.tokens) / rate).rounded(.up)))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? Int64.min + 2 : Int64.max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }

    /// One lock's share of the table, allocated on first use (a limiter that is never used, such as a
    /// test's, costs nothing).
    private final class Shard: Sendable {
        let table = Mutex<[Slot]>([])
    }

    private struct Slot {
        var high: UInt64
        var low: UInt64
        var tokens: Double
        /// Nanoseconds since `origin`; `Int64.min`: the slot is empty.
        var updated: Int64

        static let empty = Slot(high: 0, low: 0, tokens: 0, updated: Int64.min)
        var isOccupied: Bool { updated != Int64.min }
    }
}

/// Whose bucket a request takes from: an IPv4 address, an IPv6 prefix, or the digest of anything else
/// (a Bisq device token). Sixteen bytes, so that the table's slots are fixed-size.
struct RateLimitKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    /// An IPv4 address as itself (in its IPv4-mapped IPv6 form, `::ffff:a.b.c.d`); an IPv6 address by
    /// its first `ipv6Prefix` bits, so that a client rotating addresses inside its prefix (a /64 is one
    /// subscriber's) keeps one bucket. Anything else (no peer address) shares one key.
    init(address bytes: [UInt8], ipv6Prefix: Int) {
        switch bytes.count {
        case 4:
            high = 0
            low = bytes.reduce(0x0000_ffff) { $0 << 8 | UInt64($1) }
        case 16:
            let prefix = min(128, max(0, ipv6Prefix))
            let first = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
            let second = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
            high = prefix >= 64 ? first : prefix == 0 ? 0 : first & (UInt64.max << (64 - prefix))
            low = prefix <= 64 ? 0 : prefix == 128 ? second : second & (UInt64.max << (128 - prefix))
        default:
            // Not an address ::ffff:x or any prefix can give (their high word is 0 or a global prefix).
            high = UInt64.max
            low = UInt64.max
        }
    }

    /// The first 16 bytes of the SHA-256 of `bytes`: a fixed-size key for anything.
    init(hashing bytes: [UInt8]) {
        let digest = Array(SHA256.hash(data: bytes))
        high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

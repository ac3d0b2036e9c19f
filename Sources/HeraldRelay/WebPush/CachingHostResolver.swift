import Synchronization

/// A resolver that keeps each name's answer for a few seconds, and lets the sends that ask for the same
/// name at once share one lookup. Without it every Web Push send paid a getaddrinfo(3) on a thread-pool
/// hop; a broadcast sends thousands to one push service's name within those seconds.
///
/// Only the answer is kept, never a verdict: the transport checks every address of each answer, cached
/// or not, against the refused networks on every send (docs/protocol.md §9), and connects to the address it
/// checked. The answer expires after `lifetime` (DNS changes are honoured within it); a failed lookup is
/// not kept, so the next send asks again.
public final class CachingHostResolver: HostResolver {
    let upstream: any HostResolver
    let lifetime: Duration
    let clock: @Sendable () -> ContinuousClock.Instant
    private let entries = Mutex<[String: Entry]>([:])
    /// Names kept at once; past it the cache starts afresh, so a flood of distinct names costs
    /// lookups, not memory.
    static let maximumNames = 10_000

    private enum Entry {
        case resolving(Task<[[UInt8]], any Error>)
        case resolved([[UInt8]], until: ContinuousClock.Instant)
    }

    /// `clock` gives the current instant (tests move it by hand); nil is the continuous clock.
    public init(
        _ upstream: any HostResolver, lifetime: Duration = .seconds(5),
        clock: (@Sendable () -> ContinuousClock.Instant)? = nil
    ) {
        self.upstream = upstream
        self.lifetime = lifetime
        self.clock = clock ?? { ContinuousClock.now }
    }

    public func addresses(of host: String, port: Int) async throws -> [[UInt8]] {
        let name = host.lowercased()
        let now = clock()
        let found = entries.withLock { entries -> Found in
            switch entries[name] {
            case .resolved(let addresses, let until)? where now < until:
                return .cached(addresses)
            case .resolving(let task)?:
                return .pending(task)
            default:
                if entries.count >= Self.maximumNames { entries.removeAll() }
                let task = Task { [upstream] in try await upstream.addresses(of: host, port: port) }
                entries[name] = .resolving(task)
                return .pending(task)
            }
        }
        switch found {
        case .cached(let addresses):
            return addresses
        case .pending(let lookup):
            do {
                let addresses = try await lookup.value
                store(name, addresses, from: lookup)
                return addresses
            } catch {
                forget(name, from: lookup)
                throw error
            }
        }
    }

    /// A cached answer is returned as it is, without a task (the common case: no allocation, no hop).
    private enum Found {
        case cached([[UInt8]])
        case pending(Task<[[UInt8]], any Error>)
    }

    /// Keeps the answer of the lookup that is still the name's entry (not one a newer lookup replaced).
    private func store(_ name: String, _ addresses: [[UInt8]], from lookup: Task<[[UInt8]], any Error>) {
        let until = clock() + lifetime
        entries.withLock { entries in
            if case .resolving(let task)? = entries[name], task == lookup {
                entries[name] = .resolved(addresses, until: until)
            }
        }
    }

    private func forget(_ name: String, from lookup: Task<[[UInt8]], any Error>) {
        entries.withLock { entries in
            if case .resolving(let task)? = entries[name], task == lookup { entries[name] = nil }
        }
    }
}
